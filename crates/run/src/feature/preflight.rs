//! Preflight for a feature: the feature file and every task are checked, each task's run is
//! preflighted by the engine (workflow, config, agents on PATH, locks, branches), the base
//! branch is resolved and the feature branch's state is known — all before any branch,
//! worktree or run directory exists. `--dry-run` prints what this finds.

use std::path::{Path, PathBuf};

use crate::engine::plan::{preflight as task_preflight, preflight_sharing, BranchPolicy, Shared};
use crate::engine::refusal::{Refusal, Subject};
use crate::engine::state::RunSettings;
use crate::feature::feature_error::FeatureError;
use crate::feature::plan::{self, FeaturePlan};
use crate::feature::state::FeatureSettings;
use base::diagnostic::Diagnostic;
use base::error::Error;
use git::Repo;
use model::project::{Config, Layout};
use model::workflow::model::MergeStrategy;

/// What the caller intends, which decides how existing branches are treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// A new feature run: an existing feature branch is an error.
    Start,
    /// Continue the feature's run (`--resume`, `autobuild resume`).
    Resume,
    /// The caller discards the earlier run's branches first (`--fresh`).
    Fresh,
    /// Print the plan; nothing is created.
    DryRun,
}

/// A feature that can start.
pub struct FeatureSetup {
    pub plan: FeaturePlan,
    pub layout: Layout,
    pub base_branch: String,
    /// `autobuild/<FEAT-ID>`.
    pub branch: String,
    pub branch_exists: bool,
    /// Per task (file order): the workflow and its turn bound.
    pub checks: Vec<TaskCheck>,
    pub warnings: Vec<String>,
    pub settings: FeatureSettings,
    /// How the finished feature lands on the base.
    pub strategy: MergeStrategy,
    /// The project config the preflight read (`[feature] integration`, the checks).
    pub config: Config,
}

/// What a task's engine preflight resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCheck {
    pub task: String,
    pub workflow: String,
    pub max_turns: u32,
    /// The workflow's `limits.max_wall_time`.
    pub max_wall_time: Option<std::time::Duration>,
    /// The adapters of the workflow's roles (what a CI job must install).
    pub agents: Vec<model::workflow::model::AgentKind>,
    /// The paths its agents never see (`[scope] hidden` and its own `hidden:`).
    pub hidden: Vec<String>,
}

impl FeatureSetup {
    pub fn check(&self, task: &str) -> Option<&TaskCheck> {
        self.checks.iter().find(|c| c.task == task)
    }

    /// The settings a task of this feature runs with: it branches from the feature branch and
    /// leaves its approved branch for the feature to merge.
    pub fn task_settings(&self) -> RunSettings {
        task_settings(&self.settings.run, &self.branch)
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.layout.runs()
    }
}

/// An invalid config, with the located problems the tasks' preflights find along with it: the
/// config's `[roles]` are checked against each task's workflow (see [`crate::engine::inputs`]),
/// so one run reports them all. Each task preflight stops at the invalid config, before any
/// branch is looked at.
fn with_task_problems(
    root: &Path,
    feature_arg: &str,
    settings: &FeatureSettings,
    config_error: Error,
) -> Error {
    let Ok(plan) = plan::load(root, feature_arg) else {
        return config_error;
    };
    let run_settings = task_settings(&settings.run, &feature_branch(&plan.id));
    // The config is invalid: nothing it gates can be shared between the tasks.
    let later = plan
        .tasks
        .iter()
        .filter(|task| task.done.is_none())
        .filter_map(|task| {
            let task_path = task.task.path.display().to_string();
            task_preflight(root, &task_path, run_settings.clone(), BranchPolicy::Resume).err()
        });
    crate::engine::inputs::together(config_error, later)
}

/// The branch a feature's tasks branch from and merge into.
pub fn feature_branch(feature_id: &str) -> String {
    format!("autobuild/{feature_id}")
}

pub fn task_settings(feature: &RunSettings, feature_branch: &str) -> RunSettings {
    RunSettings {
        base_branch: Some(feature_branch.to_string()),
        auto_merge: false,
        no_merge: true,
        // The feature's `--pr` is the feature branch's: its tasks land on that branch.
        pr: false,
        ..feature.clone()
    }
}

/// Checks everything a feature run needs. `settings.run.base_branch`, when set, is the base
/// the feature started from (a resumed run keeps it).
pub fn preflight(
    root: &Path,
    feature_arg: &str,
    mut settings: FeatureSettings,
    intent: Intent,
) -> Result<FeatureSetup, Error> {
    let repo = Repo::discover(root).map_err(FeatureError::Repository)?;
    let layout = Layout::new(root);
    let config = match Config::load(&layout) {
        Ok(config) => config,
        Err(error) => return Err(with_task_problems(root, feature_arg, &settings, error)),
    };
    let plan = plan::load(root, feature_arg)?;
    let base_branch = match settings
        .run
        .base_branch
        .clone()
        .or(config.project.base_branch.clone())
    {
        Some(base) => base,
        None => repo.current_branch().ok_or(FeatureError::NoBase)?,
    };
    repo.resolve_base(&base_branch)?;
    settings.run.base_branch = Some(base_branch.clone());
    let branch = feature_branch(&plan.id);
    let branch_exists = repo.branch_exists(&branch);
    if let Some(holder) = crate::engine::lock::holder(&layout.runs(), &plan.id) {
        return Err(Refusal::AlreadyRunning {
            subject: Subject::Feature(plan.id.clone()),
            holder,
        }
        .into());
    }
    if branch_exists && intent == Intent::Start {
        return Err(Refusal::BranchExists {
            subject: Subject::Feature(plan.id.clone()),
            branch,
        }
        .into());
    }
    if intent == Intent::Resume && !branch_exists {
        return Err(Refusal::NoBranchToResume {
            subject: Subject::Feature(plan.id.clone()),
            branch,
        }
        .into());
    }

    // Tasks of a running feature branch from the feature branch; before it exists, the base
    // stands in for it (same commit).
    let task_base = if branch_exists && intent != Intent::Fresh {
        branch.clone()
    } else {
        base_branch.clone()
    };
    let policy = match intent {
        Intent::Start => BranchPolicy::New,
        Intent::Fresh => BranchPolicy::Fresh,
        Intent::Resume | Intent::DryRun => BranchPolicy::Resume,
    };
    let run_settings = task_settings(&settings.run, &task_base);
    let mut checks = Vec::new();
    let mut warnings: Vec<String> = Vec::new();
    let mut located: Vec<Diagnostic> = Vec::new();
    let mut other: Vec<String> = Vec::new();
    let mut shared = Shared::default();
    for task in &plan.tasks {
        if task.done.is_some() {
            // Never run again: nothing of it to check, only where it was found to say.
            for warning in task.task.warnings.iter().map(|w| w.headline()) {
                if !warnings.contains(&warning) {
                    warnings.push(warning);
                }
            }
            continue;
        }
        let task_path = task.task.path.display().to_string();
        match preflight_sharing(root, &task_path, run_settings.clone(), policy, &mut shared) {
            Ok(task_plan) => {
                let blockers = crate::engine::plan::blocker_lines(&task_plan.blockers);
                for blocker in &blockers {
                    let message = format!("task {}: {blocker}", task.task.id);
                    let list = if intent == Intent::DryRun {
                        &mut warnings
                    } else {
                        &mut other
                    };
                    if !list.contains(&message) {
                        list.push(message);
                    }
                }
                // The task's own warnings include what the lookup by id found (another copy
                // in a different state folder), which the run by path cannot know.
                let hidden = task_plan.hidden_paths();
                let lookup = task.task.warnings.iter().map(|w| w.headline());
                for warning in task_plan.warnings.into_iter().chain(lookup) {
                    if !warnings.contains(&warning) {
                        warnings.push(warning);
                    }
                }
                checks.push(TaskCheck {
                    task: task.task.id.clone(),
                    workflow: task_plan.resolved.workflow.name.clone(),
                    max_turns: task_plan.max_turns,
                    max_wall_time: task_plan.resolved.workflow.limits.max_wall_time,
                    agents: task_plan
                        .resolved
                        .workflow
                        .roles
                        .values()
                        .map(|role| role.agent)
                        .collect(),
                    hidden,
                });
            }
            Err(Error::Invalid(d)) => located.extend(d.0),
            Err(e) => {
                let mut message = format!("task {}: {e}", task.task.id);
                if let Some(help) = e.help() {
                    message.push_str(&format!("\n  help: {help}"));
                }
                if !other.contains(&message) {
                    other.push(message);
                }
            }
        }
    }
    if !other.is_empty() {
        return Err(FeatureError::TaskProblems(other).into());
    }
    if !located.is_empty() {
        located.dedup();
        return Err(Error::from(located));
    }
    Ok(FeatureSetup {
        plan,
        layout,
        base_branch,
        branch,
        branch_exists,
        checks,
        warnings,
        settings,
        strategy: config.project.merge_strategy.unwrap_or_default(),
        config,
    })
}
