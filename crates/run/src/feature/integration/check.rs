//! Running an integration check: the feature branch's tip is checked out in a worktree of the
//! runner's own (`.autobuild/worktrees/integration-<FEAT-ID>` on a throwaway branch
//! `autobuild/integration-<FEAT-ID>`), given the `[worktree]` links, copies and setup a task's
//! worktree gets, and the checks run there one after another with the project environment,
//! exactly as a task's verify step runs them. The worktree and its branch are removed after
//! the checks, pass or fail; one a killed runner left behind is removed before the next check.
//! Under `[sandbox]` the checks run confined like a task's.
//! Logs go to the feature's run directory (`logs/integration_wave_<N>_check_<name>.log`).

use std::path::{Path, PathBuf};

use base::error::Error;
use git::Repo;
use model::project::{Config, EffectiveCheck, Layout, ProjectEnv};
use model::steps::check::CheckResult;
use model::steps::verify::{run_checks, CheckSpec};
use process::CancelToken;
use sandbox::{Confinement, StepPaths};

/// The bound on `[worktree] setup` in the integration worktree, as for a task's.
const SETUP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// Where and what to check.
pub struct Target<'a> {
    pub repo: &'a Repo,
    pub layout: &'a Layout,
    pub config: &'a Config,
    pub feature_id: &'a str,
    /// The feature branch.
    pub branch: &'a str,
    /// The feature's run directory: logs go to its `logs/`.
    pub run_dir: &'a Path,
    /// 1-based, for the log names.
    pub wave: usize,
    pub cancel: &'a CancelToken,
}

/// The throwaway branch the integration worktree is on.
pub fn integration_branch(feature_id: &str) -> String {
    format!("autobuild/integration-{feature_id}")
}

/// The runner's integration worktree.
pub fn integration_worktree(layout: &Layout, feature_id: &str) -> PathBuf {
    layout.worktrees().join(format!("integration-{feature_id}"))
}

/// Runs `checks` on the tip of the feature branch; returns the commit checked and the results
/// (with `[worktree] setup`, when configured, as a first check named `worktree-setup`).
pub fn run(
    target: &Target<'_>,
    checks: &[EffectiveCheck],
) -> Result<(String, Vec<CheckResult>), Error> {
    let tip = target.repo.resolve_branch(target.branch)?;
    let branch = integration_branch(target.feature_id);
    let worktree = integration_worktree(target.layout, target.feature_id);
    remove(target, &branch, &worktree)?;
    target
        .repo
        .create_worktree(&branch, target.branch, &worktree)?;
    let results = run_in(target, &worktree, checks);
    let removed = remove(target, &branch, &worktree);
    let results = results?;
    removed?;
    Ok((tip, results))
}

fn run_in(
    target: &Target<'_>,
    worktree: &Path,
    checks: &[EffectiveCheck],
) -> Result<Vec<CheckResult>, Error> {
    let root = target.layout.root();
    // The runner's own worktree: it has the hidden files anyway.
    for note in
        model::project::worktree_files::populate(root, worktree, &target.config.worktree, None)?
    {
        tracing::warn!("integration worktree: {note}");
    }
    let logs = target.run_dir.join("logs");
    std::fs::create_dir_all(&logs).map_err(|e| Error::io("cannot create", &logs, e))?;
    let env = ProjectEnv::new(&target.config.env, worktree);
    let mut specs: Vec<CheckSpec> = Vec::new();
    if let Some(setup) = &target.config.worktree.setup {
        specs.push(CheckSpec {
            name: "worktree-setup".into(),
            command: setup.clone(),
            timeout: SETUP_TIMEOUT,
            results: None,
        });
    }
    specs.extend(checks.iter().map(|c| CheckSpec {
        name: c.name.clone(),
        command: c.cmd.clone(),
        timeout: c.timeout,
        results: c.results.clone(),
    }));
    let vars = env.vars();
    let confinement = confine(target, worktree, &vars)?;
    let shell = |cmd: &str| env.shell_command(cmd);
    let group_file = agents::command_group_file(target.run_dir);
    Ok(run_checks(
        &specs,
        &shell,
        &vars,
        worktree,
        &logs,
        &format!("integration_wave_{}_", target.wave),
        target.cancel,
        Some(&group_file),
        confinement.as_ref(),
    ))
}

/// The checks run confined as a task's do when `[sandbox]` confines them: the integration
/// worktree writable, the main checkout read-only, a scratch and object directory of their
/// own under the feature's `integration/`. `mode = "on"` without a working sandbox refuses.
fn confine(
    target: &Target<'_>,
    worktree: &Path,
    vars: &[(String, String)],
) -> Result<Option<Confinement>, Error> {
    let decision = sandbox::decide(&target.config.sandbox);
    if let Some(blocker) = decision.blocker {
        return Err(crate::feature::feature_error::FeatureError::Sandbox(blocker).into());
    }
    let Some(sandbox) = decision.effective.sandbox() else {
        return Ok(None);
    };
    let private = target.run_dir.join("integration");
    let (scratch, objects) = (private.join("scratch"), private.join("objects"));
    let branch = integration_branch(target.feature_id);
    let (confinement, notes) = sandbox.confine(&StepPaths {
        worktree,
        branch: &branch,
        repo_root: target.layout.root(),
        scratch: &scratch,
        objects: &objects,
        agent_state: Vec::new(),
        env: vars,
        // The runner's own checks see the whole tree, hidden paths included.
        hide: None,
        sealed: false,
    });
    for note in notes {
        tracing::warn!("integration check: sandbox: {note}");
    }
    Ok(Some(confinement))
}

/// Removes the integration worktree and its branch, whichever exist: they are the runner's
/// alone and hold nothing to keep.
fn remove(target: &Target<'_>, branch: &str, worktree: &Path) -> Result<(), Error> {
    if worktree.exists() || target.repo.worktree_admin(worktree, branch)?.is_some() {
        target.repo.remove_landed_worktree(worktree, branch)?;
    }
    if target.repo.branch_exists(branch) {
        target.repo.delete_branch(branch, target.branch, true)?;
    }
    Ok(())
}

/// The checks an integration check runs: every check the gate of one of `tasks` (the tasks on
/// the feature branch) requires, once each, in the project's order of checks.
pub fn checks_for(
    root: &Path,
    config: &Config,
    tasks: &[&model::task::Task],
    settings: &crate::engine::state::RunSettings,
) -> Result<Vec<EffectiveCheck>, Error> {
    let mut wanted: Vec<String> = Vec::new();
    for task in tasks {
        for check in crate::engine::plan::gate_checks(root, config, task, settings)? {
            if !wanted.contains(&check.name) {
                wanted.push(check.name);
            }
        }
    }
    Ok(model::project::effective_checks(config, root)
        .into_iter()
        .filter(|check| wanted.contains(&check.name))
        .collect())
}
