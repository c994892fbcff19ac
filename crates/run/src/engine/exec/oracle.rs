//! The base oracle's runs (`[tests] oracle = "base"`, the default; the rules are
//! [`model::steps::oracle`]).
//!
//! - **The baseline**, before the first turn (the `worktree` step): every check the gate
//!   requires that is not hidden runs on the base commit's tree, in a copy of the fresh worktree
//!   (`<run dir>/oracle-check/`, with the `[worktree]` links, copies and setup output). What its
//!   test runner said is `baseline.json` in the run directory, and is cached by base tree
//!   (without `.autobuild/`) and check command in `.autobuild/runs/.baselines/`, so the tasks of a feature that start from
//!   the same base, and every resume, pay for it once. A check whose output no reader knows (a
//!   linter) is not judged; one whose tests do not run at the base stops the run before any
//!   agent spends a turn, saying how to go on. A baseline that cannot be used is never cached.
//! - **The oracle run**, each turn: where the change touched test files or test infrastructure
//!   (build files included),
//!   the same checks run again in a copy of the checkpoint with the base's versions of the test
//!   files and of the runner configuration put back (what the player added to the runner
//!   configuration is left out; the player's new test files and build files stay). Where it
//!   touched none, the player's run is the oracle run and nothing runs twice.
//!
//! The copies are runner-only: the run directory is masked in every agent's sandbox, they are
//! removed once the checks are done, and with hidden paths they run sealed like a hidden check.

use std::fs;
use std::path::{Path, PathBuf};

use crate::engine::cx::RunCx;
use crate::engine::Outcome;
use base::error::Error;
use model::project::config::Oracle;
use model::steps::check::CheckResult;
use model::steps::oracle::{self, BaseRun, Baseline, OracleCheck, Usable};
use model::steps::verify::{run_checks, test_results_of, CheckSpec};

/// The baseline of the run, in its run directory.
pub const BASELINE_FILE: &str = "baseline.json";

/// The runner's copy the baseline and the oracle run use, in the run directory.
const COPY_DIR: &str = "oracle-check";

/// The checks the oracle judges: those the gate requires, hidden ones aside (they are an
/// oracle of their own, run with the base's infrastructure).
fn judged<'p>(cx: &RunCx<'p>) -> Vec<&'p model::project::EffectiveCheck> {
    let plan = cx.plan;
    if plan.config.tests.oracle == Oracle::Off {
        return Vec::new();
    }
    let required = plan.gate_requirements();
    plan.checks
        .iter()
        .filter(|c| !(plan.hides() && c.hidden))
        .filter(|c| required.contains(&model::profile::Requirement::Check(c.name.clone())))
        .collect()
}

fn spec(cx: &RunCx, check: &model::project::EffectiveCheck) -> CheckSpec {
    CheckSpec {
        name: check.name.clone(),
        command: check.cmd.clone(),
        timeout: cx.clamp(check.timeout),
        results: check.results.clone(),
    }
}

fn cache_file(cx: &RunCx, tree: &str) -> PathBuf {
    cx.plan
        .layout
        .runs()
        .join(".baselines")
        .join(format!("{tree}.json"))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Option<T> {
    let text = base::user_file::read(path, path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Computes (or finds) the baseline before the first turn; `Some` is the outcome that stops
/// the run when the base's tests do not run.
pub fn prepare(cx: &mut RunCx) -> Result<Option<Outcome>, Error> {
    let checks = judged(cx);
    if checks.is_empty() || cx.paths.dir.join(BASELINE_FILE).is_file() {
        return Ok(None);
    }
    let (base, head) = super::fork_and_checkpoint(cx)?;
    // The project's own directory aside: a task file added to the base changes no test.
    let tree = git::tree_id_without(&cx.state.worktree, &base, ".autobuild")?;
    let cache = cache_file(cx, &tree);
    let cached: Baseline = read_json(&cache).unwrap_or_default();
    let mut runs = Vec::new();
    let mut missing = Vec::new();
    for check in &checks {
        let found = cached.runs.iter().find(|run| {
            run.check == check.name && run.command == check.cmd && run.results == check.results
        });
        match found {
            Some(run) => runs.push(run.clone()),
            None => missing.push(spec(cx, check)),
        }
    }
    if !missing.is_empty() {
        tracing::info!(
            checks = missing.len(),
            "running the base's tests for the base oracle"
        );
        let worktree = cx.state.worktree.clone();
        let changed = git::base_versions(&worktree, &base, &head, &|_| true)?;
        let copy = prepared_copy(cx, &worktree, &changed, Overlay::Everything)?;
        let results = run_in(cx, &copy, &missing, "baseline_")?;
        for (spec, result) in missing.iter().zip(&results) {
            runs.push(BaseRun {
                check: spec.name.clone(),
                command: spec.command.clone(),
                results: spec.results.clone(),
                status: result.status,
                duration_ms: result.duration_ms,
                tests: test_results_of(spec, result, &copy),
            });
        }
        super::hidden_check::remove(&copy)?;
        if cx.cancel.is_cancelled() {
            return Ok(Some(cx.cancel_outcome()));
        }
    }
    let baseline = Baseline { tree, runs };
    let broken: Vec<String> = baseline
        .runs
        .iter()
        .filter_map(|run| match run.usable() {
            Usable::Broken(why) => Some(format!("`{}` ({}) {why}", run.check, run.command)),
            _ => None,
        })
        .collect();
    let path = cx.paths.dir.join(BASELINE_FILE);
    cx.write_record(&path, &baseline)?;
    if !broken.is_empty() {
        let logs = cx.paths.logs();
        return Ok(Some(Outcome::Failed {
            message: format!(
                "infrastructure — the base oracle needs the base's tests to run, and {}; the \
                 output is in {}. Fix the tests at the base, or leave the broken ones out of \
                 the check's command (pytest's `--deselect`/`--ignore`, a name filter), or turn \
                 the oracle off with `[tests] oracle = \"off\"` in .autobuild/config.toml; \
                 then run `autobuild task {} --resume`",
                broken.join("; "),
                logs.join("baseline_check_*.log").display(),
                cx.plan.task.id
            ),
            infrastructure: true,
        }));
    }
    if !missing.is_empty() {
        if let Some(parent) = cache.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
        }
        base::atomic_file::write_json_atomic(&cache, &baseline)
            .map_err(|e| Error::io("cannot write", &cache, e))?;
    }
    Ok(None)
}

/// Judges this turn's `results` of `specs` (the checks that ran in the worktree) by the
/// baseline: runs the oracle run where the change touched the tests, and fails every check
/// that broke a rule, naming the tests.
pub fn judge_turn(
    cx: &mut RunCx,
    specs: &[CheckSpec],
    results: &mut [CheckResult],
) -> Result<(), Error> {
    let judged: Vec<String> = judged(cx).iter().map(|c| c.name.clone()).collect();
    let Some(baseline) = read_json::<Baseline>(&cx.paths.dir.join(BASELINE_FILE)) else {
        return Ok(());
    };
    let worktree = cx.state.worktree.clone();
    let mut pairs: Vec<(&CheckSpec, &BaseRun, usize)> = Vec::new();
    for (at, result) in results.iter().enumerate() {
        let Some(spec) = specs.iter().find(|s| s.name == result.name) else {
            continue;
        };
        let base = baseline
            .runs
            .iter()
            .find(|run| run.check == spec.name && run.command == spec.command);
        if let Some(base) = base.filter(|_| judged.contains(&spec.name)) {
            if matches!(base.usable(), Usable::Judges(_)) {
                pairs.push((spec, base, at));
            }
        }
    }
    if pairs.is_empty() {
        return Ok(());
    }
    let tests = cx.plan.test_paths()?;
    let (base, head) = super::fork_and_checkpoint(cx)?;
    // A build file counts: it may configure the tests (a pytest section, a test target).
    let changed = git::base_versions(&worktree, &base, &head, &|p| tests.contains(p))?;
    let touched = !changed.is_empty();
    let players: Vec<Option<model::steps::test_results::TestResults>> = pairs
        .iter()
        .map(|(spec, _, at)| test_results_of(spec, &results[*at], &worktree))
        .collect();
    let oracle_runs = if touched {
        let copy = prepared_copy(cx, &worktree, &changed, Overlay::Tests(&tests))?;
        let to_run: Vec<CheckSpec> = pairs.iter().map(|(spec, _, _)| (*spec).clone()).collect();
        let prefix = format!("{}turn_{}_oracle_", cx.file_label(""), cx.turn_number());
        let ran = run_in(cx, &copy, &to_run, &prefix)?;
        let read = to_run
            .iter()
            .zip(&ran)
            .map(|(spec, result)| test_results_of(spec, result, &copy))
            .collect();
        super::hidden_check::remove(&copy)?;
        read
    } else {
        // The same tree: the player's run is the oracle run.
        players.clone()
    };
    if cx.cancel.is_cancelled() {
        return Ok(());
    }
    let allowed = cx.plan.task.tests_may_change.clone();
    for (((_, base, at), now), player) in pairs.iter().zip(oracle_runs).zip(players) {
        let Usable::Judges(base_results) = base.usable() else {
            continue;
        };
        let judgement = oracle::judge(base_results, now.as_ref(), player.as_ref(), &|id| {
            oracle::may_change(&allowed, id)
        });
        let record = OracleCheck {
            base: base_results.tally(),
            oracle: now.as_ref().map(|r| r.tally()),
            separate: touched,
            judgement,
        };
        oracle::apply(&mut results[*at], record);
    }
    Ok(())
}

/// What a copy takes from the base.
#[derive(Clone, Copy)]
enum Overlay<'a> {
    /// Every path: the base's tree (the baseline).
    Everything,
    /// The test files and the runner configuration (the oracle run).
    Tests(&'a model::steps::scope::TestPaths),
}

impl Overlay<'_> {
    fn takes(self, path: &str) -> bool {
        match self {
            Overlay::Everything => true,
            Overlay::Tests(tests) => tests.oracle_takes_from_base(path),
        }
    }

    /// Whether a taken path the base does not have is removed: a test file the player added
    /// stays in the oracle run, runner configuration the base lacks does not.
    fn removes_new(self, path: &str) -> bool {
        match self {
            Overlay::Everything => true,
            Overlay::Tests(tests) => tests.runner_config().is_match(path),
        }
    }
}

/// A fresh copy of `worktree` in the run directory where every path of `changed` (the paths
/// that differ from the base, as the base has them) that `overlay` takes is as the base has it.
fn prepared_copy(
    cx: &RunCx,
    worktree: &Path,
    changed: &[git::BaseFile],
    overlay: Overlay<'_>,
) -> Result<PathBuf, Error> {
    let copy = cx.paths.dir.join(COPY_DIR);
    super::hidden_check::remove(&copy)?;
    super::hidden_check::copy_dir(worktree, &copy, &globset::GlobSet::empty())?;
    for file in changed.iter().filter(|f| overlay.takes(&f.path)) {
        let target = copy.join(&file.path);
        match &file.content {
            None if overlay.removes_new(&file.path) => super::hidden_check::remove(&target)?,
            None => {}
            Some(content) => {
                super::hidden_check::remove(&target)?;
                if let Some(parent) = target.parent() {
                    // A directory the player turned into a file (or a link) goes too.
                    if parent.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                        super::hidden_check::remove(parent)?;
                    }
                    fs::create_dir_all(parent)
                        .map_err(|e| Error::io("cannot create", parent, e))?;
                }
                write_base_file(&target, content)?;
            }
        }
    }
    if let Overlay::Tests(_) = overlay {
        pin_pytest_in(changed, &copy)?;
    }
    Ok(copy)
}

fn pytest_files<'a>(
    build_files: &'a [Option<String>],
    tox_ini: Option<&'a str>,
) -> model::steps::pytest_ini::PytestFiles<'a> {
    model::steps::pytest_ini::PytestFiles {
        pyproject: build_files[0].as_deref(),
        setup_cfg: build_files[1].as_deref(),
        tox_ini,
    }
}

/// The build files pytest also reads its configuration from ([`model::steps::pytest_ini`]).
const PYTEST_BUILD_FILES: [&str; 2] = ["pyproject.toml", "setup.cfg"];

/// Gives the runner's `copy` of `worktree` at `head` a `pytest.ini` with the base's pytest
/// configuration when the player changed a build file pytest reads (and the base has no
/// `pytest.ini`, which the copy already holds as the base has it): the player's build files
/// stay in the copy, their pytest section does not decide its run.
pub(super) fn pin_pytest_config(
    worktree: &Path,
    base: &str,
    head: &str,
    copy: &Path,
) -> Result<(), Error> {
    let changed = git::base_versions(worktree, base, head, &|p| PYTEST_BUILD_FILES.contains(&p))?;
    pin_pytest_in(&changed, copy)
}

/// [`pin_pytest_config`] with the paths that differ from the base already read (`changed` may
/// hold other paths too).
fn pin_pytest_in(changed: &[git::BaseFile], copy: &Path) -> Result<(), Error> {
    let ini = copy.join("pytest.ini");
    if ini.symlink_metadata().is_ok()
        || !changed
            .iter()
            .any(|f| PYTEST_BUILD_FILES.contains(&f.path.as_str()))
    {
        return Ok(());
    }
    let read = |name: &str| -> Option<String> {
        let path = copy.join(name);
        base::user_file::read(&path, &path).ok()
    };
    let theirs: Vec<Option<String>> = PYTEST_BUILD_FILES.iter().map(|f| read(f)).collect();
    let at_base: Vec<Option<String>> = PYTEST_BUILD_FILES
        .iter()
        .zip(&theirs)
        .map(
            |(name, now)| match changed.iter().find(|f| f.path == *name) {
                Some(file) => file
                    .content
                    .as_ref()
                    .map(|c| String::from_utf8_lossy(&c.bytes).into_owned()),
                None => now.clone(),
            },
        )
        .collect();
    let tox = read("tox.ini");
    let base_files = pytest_files(&at_base, tox.as_deref());
    let player_files = pytest_files(&theirs, tox.as_deref());
    if base_files.configure_pytest() || player_files.configure_pytest() {
        let text = model::steps::pytest_ini::pytest_ini(&base_files);
        fs::write(&ini, text).map_err(|e| Error::io("cannot write", &ini, e))?;
    }
    Ok(())
}

/// Writes `content` (a file as the base has it) at `target`, which does not exist.
pub(super) fn write_base_file(target: &Path, content: &git::BaseContent) -> Result<(), Error> {
    if content.symlink {
        let link = String::from_utf8_lossy(&content.bytes).into_owned();
        return std::os::unix::fs::symlink(&link, target)
            .map_err(|e| Error::io("cannot create", target, e));
    }
    fs::write(target, &content.bytes).map_err(|e| Error::io("cannot write", target, e))?;
    if content.executable {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(target, fs::Permissions::from_mode(0o755))
            .map_err(|e| Error::io("cannot make executable", target, e))?;
    }
    Ok(())
}

/// Runs `specs` in `copy`, confined like the run's checks (sealed with hidden paths).
fn run_in(
    cx: &mut RunCx,
    copy: &Path,
    specs: &[CheckSpec],
    prefix: &str,
) -> Result<Vec<CheckResult>, Error> {
    let logs = cx.paths.logs();
    fs::create_dir_all(&logs).map_err(|e| Error::io("cannot create", &logs, e))?;
    let env = cx.env_vars();
    let group_file = agents::command_group_file(&cx.paths.dir);
    let confinement = super::sandbox::confine_copy(cx, copy);
    let shell = |cmd: &str| cx.project_env.shell_command(cmd);
    Ok(run_checks(
        specs,
        &shell,
        &env,
        copy,
        &logs,
        prefix,
        &cx.cancel,
        Some(&group_file),
        confinement.as_ref(),
    ))
}
