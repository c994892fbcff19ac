//! Hidden checks (`[checks.<name>] hidden = true` in a run with `[scope] hidden` paths): the
//! runner runs them in a copy of the worktree that the agents cannot reach, with the hidden
//! files brought in from the user's base commit, and tells the agents only what `[scope]
//! reveal` allows ([`model::steps::reveal`]).
//!
//! The copy holds the base's test-runner configuration (`conftest.py`, `pytest.ini`, jest and
//! vitest configs, `[tests] infra`: `model::steps::scope::RUNNER_CONFIG`), never the player's:
//! a conftest hook the player added cannot turn the oracle's failures into passes; nor can a
//! pytest section the player wrote into `pyproject.toml` or `setup.cfg`
//! ([`super::oracle::pin_pytest_config`]).
//!
//! The copy is `<run dir>/hidden-check/`: the run directory is masked in every agent's
//! sandbox (only its `prompts/` and scratch directories are shown), and the copy is removed
//! when the checks are done, before the next agent step. The checks run sealed
//! (`sandbox::StepPaths::sealed`): the copy and a private `/tmp` are all they can write — not
//! the scratch directory the next agent reads, not a cache — and they have no network, so the
//! player's code they run cannot pass the hidden files on. The full output stays in the check's
//! log file for the user; the record, the feedback and every prompt carry the revealed text,
//! and [`HIDDEN_COMMAND`](model::steps::reveal::HIDDEN_COMMAND) in place of the command; the
//! status, exit code and failure class only at `names` ([`conceal`]).

use std::fs;
use std::path::Path;

use crate::engine::cx::RunCx;
use base::error::Error;
use model::steps::check::CheckResult;
use model::steps::reveal::conceal;
use model::steps::verify::{run_checks, CheckSpec};

/// Runs `checks` in a fresh copy of the worktree plus the hidden files; logs go to `logs` with
/// `prefix` like the ordinary checks'.
pub fn run(
    cx: &mut RunCx,
    checks: &[CheckSpec],
    logs: &Path,
    prefix: &str,
) -> Result<Vec<CheckResult>, Error> {
    if checks.is_empty() {
        return Ok(Vec::new());
    }
    let plan = cx.plan;
    let copy = cx.paths.dir.join("hidden-check");
    remove(&copy)?;
    // The player's test-runner configuration stays out; the base's comes in below.
    let tests = plan.test_paths()?;
    let runner_config = tests.runner_config();
    copy_dir(&cx.state.worktree, &copy, runner_config)?;
    let task_repo = plan
        .task_repo()
        .ok_or_else(|| Error::runtime("a hidden check ran without hidden paths"))?;
    let base = git::task_repo::task_base(&task_repo)?;
    let hidden = plan.hidden_set()?.unwrap_or_else(globset::GlobSet::empty);
    let from_base = git::task_repo::hidden_files(&plan.root, base.real, &hidden)?
        .into_iter()
        .chain(git::task_repo::hidden_files(
            &plan.root,
            base.real,
            runner_config,
        )?);
    for (path, content, executable) in from_base {
        let file = copy.join(&path);
        if let Some(parent) = file.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
        }
        // The player may have left a file (or a link) there: the base's version wins.
        if file.symlink_metadata().is_ok() {
            remove(&file)?;
        }
        let content = git::BaseContent {
            bytes: content,
            executable,
            symlink: false,
        };
        super::oracle::write_base_file(&file, &content)?;
    }
    // A pytest section the player put in a build file does not configure the oracle either.
    let (fork, head) = super::fork_and_checkpoint(cx)?;
    super::oracle::pin_pytest_config(&cx.state.worktree, &fork, &head, &copy)?;
    // What a `[worktree] copy` left out of the worktree because it is hidden.
    model::project::worktree_files::copy_hidden(&plan.root, &copy, &plan.config.worktree, &hidden)?;
    let env = cx.env_vars();
    let group_file = agents::command_group_file(&cx.paths.dir);
    let confinement = super::sandbox::confine_sealed(cx, &copy);
    let shell = |cmd: &str| cx.project_env.shell_command(cmd);
    let mut results = run_checks(
        checks,
        &shell,
        &env,
        &copy,
        logs,
        prefix,
        &cx.cancel,
        Some(&group_file),
        confinement.as_ref(),
    );
    let removed = remove(&copy);
    let level = plan.config.scope.reveal;
    for result in &mut results {
        let output = fs::read_to_string(&result.log_path).unwrap_or_default();
        conceal(level, result, &output);
    }
    removed?;
    Ok(results)
}

pub(super) fn remove(path: &Path) -> Result<(), Error> {
    match path.symlink_metadata() {
        Err(_) => Ok(()),
        Ok(meta) if meta.is_dir() => {
            fs::remove_dir_all(path).map_err(|e| Error::io("cannot remove", path, e))
        }
        Ok(_) => fs::remove_file(path).map_err(|e| Error::io("cannot remove", path, e)),
    }
}

/// Copies the tree at `from` to `to` (created), without `.git` and without the paths (relative
/// to the top) that `leave_out` matches ([`base::tree_copy`]).
pub(super) fn copy_dir(from: &Path, to: &Path, leave_out: &globset::GlobSet) -> Result<(), Error> {
    base::tree_copy::copy_tree(from, to, &|relative| {
        relative.file_name().is_some_and(|name| name == ".git") || leave_out.is_match(relative)
    })
}
