//! Landing a feature whose tasks ran elsewhere (`autobuild feature <FEAT> --land`), e.g. as one
//! CI job per task: each task's run record comes from a downloaded artifact directory
//! (`DIR/<TASK-ID>/state.json`), its branch `autobuild/<TASK-ID>` from a remote, and approved
//! tasks are squashed onto the feature branch in dependency order with the same code as a local
//! feature run ([`merge_task`], conflicts reported by [`record_merge`]).
//!
//! Nothing is remembered between landings but the feature branch itself: a task is on it when
//! its squashed commit ("Approved by autobuild on autobuild/<TASK-ID>.") is on the branch's
//! first-parent line, so landing again after a partial landing never lands a task twice, and
//! each landing job can start from a fresh clone. [`super::ready`] answers the same question for
//! a task's own job: run only when the task is not on the branch yet and its dependencies are.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::paths::RunPaths;
use crate::engine::state::{RunState, RunStatus};
use crate::feature::events::Shown;
use crate::feature::events::{FeatureEvent, FeatureEventKind, FeatureLog};
use crate::feature::finish::write_report;
use crate::feature::integration::landing::{check_after_landing, Landed};
use crate::feature::merge::{merge_task, record_merge, task_branch, ApprovedTask};
use crate::feature::plan::{self, FeaturePlan};
use crate::feature::preflight::feature_branch;
use crate::feature::report::outcome_message;
use crate::feature::run::state_for;
use crate::feature::state::{state_file, FeatureSettings, FeatureState, FeatureStatus, TaskStatus};
use base::error::{exit, Error};
use base::Keyword;
use git::short_id as short;
use git::Repo;
use model::project::{Config, Layout};

/// Where the task runs' records and branches come from.
#[derive(Debug, Clone, Default)]
pub struct LandOptions {
    /// Fetch `autobuild/<TASK-ID>` branches from this remote (else they must be local).
    pub remote: Option<String>,
    /// `DIR/<TASK-ID>/state.json` (else the local `.autobuild/runs/`).
    pub artifacts: Option<PathBuf>,
    /// The branch the feature lands on once complete (else `[project] base_branch`, else the
    /// current branch when it is not the feature branch).
    pub into: Option<String>,
    /// Tasks given up (`--abandon`): never landed, whatever their records say (a persistent
    /// run directory may keep an old approved one); their dependants are skipped.
    pub abandon: Vec<String>,
}

/// What landing does with one task, decided before any branch moves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Its squashed commit is on the feature branch already.
    OnBranch,
    /// Approved: squash its branch onto the feature branch.
    Land,
    /// A dependency ended without landing: the task must not run.
    Skip { blocked_by: Vec<String> },
    /// Not decided yet: a dependency is not on the branch yet, or the task has no record.
    Wait,
    /// Its run ended without approval.
    Ended(TaskStatus),
    /// Given up by the person (`--abandon`): not landed, whatever its record says.
    Abandoned,
}

/// The decision for one task from what is known: whether it is on the feature branch, its
/// dependencies' statuses (as decided before it, in dependency order) and its run record.
pub fn decide(
    on_branch: bool,
    abandoned: bool,
    dependencies: &[(String, TaskStatus)],
    record: Option<RunStatus>,
) -> Decision {
    if on_branch {
        return Decision::OnBranch;
    }
    if abandoned {
        return Decision::Abandoned;
    }
    let failed: Vec<String> = dependencies
        .iter()
        .filter(|(_, status)| status.is_failure())
        .map(|(id, _)| id.clone())
        .collect();
    if !failed.is_empty() {
        return Decision::Skip { blocked_by: failed };
    }
    if dependencies.iter().any(|(_, s)| !s.is_landed()) {
        return Decision::Wait;
    }
    match record {
        None => Decision::Wait,
        Some(RunStatus::Approved | RunStatus::Merged) => Decision::Land,
        Some(RunStatus::Blocked) => Decision::Ended(TaskStatus::Blocked),
        Some(RunStatus::Stalled) => Decision::Ended(TaskStatus::Stalled),
        Some(RunStatus::Waiting) => Decision::Ended(TaskStatus::Waiting),
        // A run still "running" in a finished job was killed with it.
        Some(RunStatus::Running | RunStatus::Cancelled) => Decision::Ended(TaskStatus::Cancelled),
        Some(RunStatus::Failed | RunStatus::Halted | RunStatus::Discarded) => {
            Decision::Ended(TaskStatus::Failed)
        }
    }
}

/// Whether `messages` (a branch's history) hold the squashed commit of `task_id`.
pub fn holds_task(messages: &[String], task_id: &str) -> bool {
    let mark = format!("Approved by autobuild on {}.", task_branch(task_id));
    messages.iter().any(|m| m.lines().any(|l| l.trim() == mark))
}

/// `autobuild feature <FEAT> --land`: lands every approved task whose dependencies are on the
/// feature branch, records the outcome in `runs/<FEAT-ID>/`, and returns the exit code: 0 while
/// tasks remain to run, the feature's code once every task is decided, 1 on a conflict.
pub fn land(root: &Path, feature_arg: &str, options: &LandOptions) -> Result<Shown, Error> {
    let plan = plan::load(root, feature_arg)?;
    let layout = Layout::new(root);
    let repo = Repo::discover(root)?;
    let branch = feature_branch(&plan.id);
    if !repo.branch_exists(&branch) {
        let fetched = match &options.remote {
            Some(remote) => repo.fetch_branch(remote, &branch)?,
            None => false,
        };
        if !fetched {
            return Err(
                Error::usage(format!("no feature branch {branch} to land on"))
                    .with_help("create it from the base first (the workflow's `plan` job does)"),
            );
        }
    }
    let config = Config::load(&layout)?;
    let base = match &options.into {
        Some(into) => Some(into.clone()),
        None => config.project.base_branch.clone(),
    }
    .or_else(|| repo.current_branch().filter(|b| *b != branch))
    .unwrap_or_default();
    let settings = FeatureSettings::default();
    let mut state = state_for(&plan, &base, &branch, settings);
    // Each landing starts from the branch as it is: the tip to hold it at while tasks land.
    state.tip = Some(repo.resolve_branch(&branch)?);
    let paths = RunPaths::new(&layout.runs(), &plan.id);
    std::fs::create_dir_all(&paths.dir).map_err(|e| Error::io("cannot create", &paths.dir, e))?;
    layout.ensure_gitignore()?;
    let mut log = FeatureLog::open(&paths.events())
        .map_err(|e| Error::io("cannot open", paths.events(), e))?;
    let records = options.artifacts.clone().unwrap_or_else(|| layout.runs());
    let messages = repo.first_parent_messages(&branch)?;
    let mut landed: Vec<String> = Vec::new();
    for id in plan.waves.iter().flatten() {
        if state.conflict.is_some() {
            break;
        }
        let record = record(&records, id, &branch);
        // The task ran in another job: its record says when (the report's turns and costs
        // are read from it too).
        if let (Some(run), Some(task)) = (&record, state.tasks.get_mut(id)) {
            task.started_at
                .get_or_insert_with(|| run.started_at.clone());
            task.finished_at
                .get_or_insert_with(|| run.updated_at.clone());
        }
        let decision = decide(
            holds_task(&messages, id),
            options.abandon.iter().any(|a| a == id),
            &dependency_statuses(&plan, &state, id),
            record.as_ref().map(|r| r.status),
        );
        let transplanted = record.as_ref().and_then(|r| r.transplanted.clone());
        let approved = record.and_then(|r| r.last_checkpoint);
        let task = Landable {
            id,
            approved: approved.as_deref(),
            transplanted: transplanted.as_deref(),
        };
        let event = apply(&repo, &layout, &plan, &mut state, &task, decision, options)?;
        if let Some(FeatureEventKind::TaskMerged { .. }) = &event {
            landed.push(id.clone());
        }
        if let Some(kind) = event {
            log.append(&FeatureEvent::now(&plan.id, kind));
        }
    }
    let mut lines = Vec::new();
    if state.conflict.is_none() {
        let landing = Landed {
            repo: &repo,
            layout: &layout,
            config: &config,
            plan: &plan,
            run_dir: &paths.dir,
            landed: &landed,
        };
        if let Some(message) = check_after_landing(&landing, &mut state)? {
            lines.push(message);
        }
    }
    state.status = feature_status(&state);
    state.message = Some(outcome_message(&state));
    // The feature ran from its first task's start (the landing itself starts late).
    if let Some(first) = state
        .tasks
        .values()
        .filter_map(|t| t.started_at.clone())
        .min()
    {
        state.started_at = state.started_at.clone().min(first);
    }
    state
        .save(&state_file(&paths))
        .map_err(|e| Error::io("cannot write", state_file(&paths), e))?;
    write_report(&state, &records, &paths)?;
    lines.push(summary(&state));
    let exit_code = match state.status {
        FeatureStatus::Conflict | FeatureStatus::IntegrationFailed => exit::RUNTIME,
        FeatureStatus::Running => exit::APPROVED,
        _ => state.exit_code(),
    };
    Ok(Shown {
        lines,
        exit_code,
        ..Shown::default()
    })
}

fn dependency_statuses(
    plan: &FeaturePlan,
    state: &FeatureState,
    id: &str,
) -> Vec<(String, TaskStatus)> {
    plan.task(id)
        .map(|t| t.dependencies.clone())
        .unwrap_or_default()
        .into_iter()
        .map(|d| {
            let status = state.status_of(&d);
            (d, status)
        })
        .collect()
}

/// The task's run record, when it ran on the feature branch (a record of another run of the
/// same task, on another base, is not this feature's).
fn record(records: &Path, id: &str, feature_branch: &str) -> Option<RunState> {
    let state = RunState::load(&RunPaths::new(records, id).state()).ok()?;
    (state.base_branch == feature_branch).then_some(state)
}

/// A task to decide on, with the commit its run record says its gates approved.
struct Landable<'a> {
    id: &'a str,
    approved: Option<&'a str>,
    /// For a run with hidden paths, the approved change as its run put it on the task branch
    /// of its own checkout ([`RunState::transplanted`]): what a branch from elsewhere must be.
    transplanted: Option<&'a str>,
}

/// Why a task branch that is not exactly the approved commit is not landed, or `None` when it
/// is that commit.
fn not_approved(branch: &str, tip: &str, approved: Option<&str>) -> Option<String> {
    match approved {
        Some(approved) if approved == tip => None,
        Some(approved) => Some(format!(
            "approved, but its branch {branch} is at {}, not at the approved commit {}: \
             work added after approval is never landed",
            short(tip),
            short(approved)
        )),
        None => Some(format!(
            "approved, but its run record names no approved commit, so nothing of {branch} lands"
        )),
    }
}

/// Carries out one decision; returns the event that records it.
fn apply(
    repo: &Repo,
    layout: &Layout,
    plan: &FeaturePlan,
    state: &mut FeatureState,
    task: &Landable<'_>,
    decision: Decision,
    options: &LandOptions,
) -> Result<Option<FeatureEventKind>, Error> {
    let id = task.id;
    let (status, message) = match decision {
        Decision::OnBranch => (TaskStatus::Merged, None),
        Decision::Wait => (TaskStatus::Pending, None),
        Decision::Ended(status) => (status, Some(format!("its run ended {}", status.as_str()))),
        Decision::Abandoned => {
            let reason = "abandoned (--abandon): not landed".to_string();
            set(state, id, TaskStatus::Skipped, Some(reason.clone()));
            return Ok(Some(FeatureEventKind::TaskSkipped {
                task: id.to_string(),
                reason,
            }));
        }
        Decision::Skip { blocked_by } => {
            let causes: Vec<String> = blocked_by
                .iter()
                .map(|d| format!("{d} ({})", state.status_of(d).as_str()))
                .collect();
            let reason = format!("blocked by {}", causes.join(", "));
            set(state, id, TaskStatus::Skipped, Some(reason.clone()));
            return Ok(Some(FeatureEventKind::TaskSkipped {
                task: id.to_string(),
                reason,
            }));
        }
        Decision::Land => {
            let branch = task_branch(id);
            let worktree = layout.worktree(id);
            // A task with hidden paths that ran in this checkout keeps its branch in its task
            // repository; `merge_task` transplants its approved commit (`git::task_repo`).
            let task_repo =
                git::task_repo::of_worktree(&worktree).filter(|_| options.remote.is_none());
            let present = match (&options.remote, &task_repo) {
                (_, Some(_)) => git::branch_tip(&worktree, &branch).is_ok(),
                (Some(remote), None) => repo.fetch_branch(remote, &branch)?,
                (None, None) => repo.branch_exists(&branch),
            };
            if !present {
                let from = options.remote.as_deref().unwrap_or("this repository");
                let message = format!("approved, but its branch {branch} is not in {from}");
                set(state, id, TaskStatus::Failed, Some(message));
                return Ok(None);
            }
            // What was pushed must be what was approved: a commit added after approval is
            // refused, never squashed in.
            let tip = match &task_repo {
                Some(_) => git::branch_tip(&worktree, &branch)?,
                None => repo.resolve_branch(&branch)?,
            };
            // From its task repository, the approved commit itself; from elsewhere (a CI
            // task job's push), what its run transplanted into its user repository.
            let expected = match &task_repo {
                Some(_) => task.approved,
                None => task.transplanted.or(task.approved),
            };
            if let Some(refused) = not_approved(&branch, &tip, expected) {
                state.violations.push(format!("{id}: {refused}"));
                set(state, id, TaskStatus::Failed, Some(refused));
                return Ok(None);
            }
            let title = plan
                .task(id)
                .map(|t| t.task.title.clone())
                .unwrap_or_default();
            let task_file = plan.task(id).and_then(|t| {
                crate::engine::exec::MergeRequest::task_file_of(&plan.root, &t.task.path)
            });
            let approved = ApprovedTask {
                id,
                title: &title,
                worktree: &worktree,
                approved: &tip,
                task_file: task_file.as_deref(),
            };
            // Nothing but the branch itself is remembered between landings: no state to save
            // before it moves.
            let merged = merge_task(
                repo,
                &layout.runs(),
                &approved,
                state,
                &mut |_| Ok(()),
                None,
            )?;
            return Ok(Some(record_merge(state, id, merged)));
        }
    };
    set(state, id, status, message);
    Ok(None)
}

fn set(state: &mut FeatureState, id: &str, status: TaskStatus, message: Option<String>) {
    if let Some(record) = state.tasks.get_mut(id) {
        record.status = status;
        record.message = message;
    }
}

/// Approved when every task is on the branch, running while some task is undecided.
fn feature_status(state: &FeatureState) -> FeatureStatus {
    let statuses: Vec<TaskStatus> = state.tasks.values().map(|t| t.status).collect();
    if state.conflict.is_some() {
        FeatureStatus::Conflict
    } else if state.integration_failure().is_some() {
        FeatureStatus::IntegrationFailed
    } else if statuses.iter().all(|s| s.is_landed()) {
        FeatureStatus::Approved
    } else if statuses.contains(&TaskStatus::Pending) {
        FeatureStatus::Running
    } else {
        FeatureStatus::Blocked
    }
}

/// One line per kind of outcome, tasks in dependency order.
fn summary(state: &FeatureState) -> String {
    let mut groups: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for id in state.waves.iter().flatten() {
        let Some(record) = state.tasks.get(id) else {
            continue;
        };
        let shown = match &record.message {
            Some(message) if record.status != TaskStatus::Merged => format!("{id} ({message})"),
            _ => id.clone(),
        };
        groups
            .entry(record.status.as_str())
            .or_default()
            .push(shown);
    }
    let mut lines = vec![format!(
        "{} on {}: {}",
        state.feature_id,
        state.branch,
        state.status.as_str()
    )];
    for (status, tasks) in groups {
        lines.push(format!("  {status}: {}", tasks.join(", ")));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(spec: &[(&str, TaskStatus)]) -> Vec<(String, TaskStatus)> {
        spec.iter().map(|(id, s)| (id.to_string(), *s)).collect()
    }

    #[test]
    fn an_abandoned_task_is_not_landed_whatever_its_record_says() {
        let merged = deps(&[("A", TaskStatus::Merged)]);
        assert_eq!(
            decide(false, true, &merged, Some(RunStatus::Approved)),
            Decision::Abandoned
        );
        // What is on the branch already stays.
        assert_eq!(
            decide(true, true, &merged, Some(RunStatus::Approved)),
            Decision::OnBranch
        );
    }

    #[test]
    fn a_task_on_the_branch_is_never_landed_again() {
        assert_eq!(
            decide(true, false, &[], Some(RunStatus::Approved)),
            Decision::OnBranch
        );
    }

    #[test]
    fn an_approved_task_lands_once_its_dependencies_are_on_the_branch() {
        let merged = deps(&[("A", TaskStatus::Merged)]);
        assert_eq!(
            decide(false, false, &merged, Some(RunStatus::Approved)),
            Decision::Land
        );
        let waiting = deps(&[("A", TaskStatus::Approved)]);
        assert_eq!(
            decide(false, false, &waiting, Some(RunStatus::Approved)),
            Decision::Wait
        );
        assert_eq!(decide(false, false, &merged, None), Decision::Wait);
    }

    #[test]
    fn a_task_done_before_the_feature_counts_as_landed_for_its_dependants() {
        let done = deps(&[("A", TaskStatus::Done)]);
        assert_eq!(
            decide(false, false, &done, Some(RunStatus::Approved)),
            Decision::Land
        );
    }

    #[test]
    fn a_failed_dependency_skips_the_task_whatever_its_record() {
        let failed = deps(&[("A", TaskStatus::Merged), ("B", TaskStatus::Blocked)]);
        assert_eq!(
            decide(false, false, &failed, Some(RunStatus::Approved)),
            Decision::Skip {
                blocked_by: vec!["B".into()]
            }
        );
    }

    #[test]
    fn runs_that_ended_without_approval_keep_their_status() {
        let cases = [
            (RunStatus::Blocked, TaskStatus::Blocked),
            (RunStatus::Stalled, TaskStatus::Stalled),
            (RunStatus::Running, TaskStatus::Cancelled),
            (RunStatus::Halted, TaskStatus::Failed),
            (RunStatus::Waiting, TaskStatus::Waiting),
        ];
        for (run, task) in cases {
            assert_eq!(
                decide(false, false, &[], Some(run)),
                Decision::Ended(task),
                "{run:?}"
            );
        }
    }

    #[test]
    fn the_branch_holds_a_task_when_its_squashed_commit_is_there() {
        let messages = vec![
            "A: Task A\n\nApproved by autobuild on autobuild/A.\n".to_string(),
            "initial\n".to_string(),
        ];
        assert!(holds_task(&messages, "A"));
        assert!(!holds_task(&messages, "B"));
        assert!(!holds_task(&messages, "A-2"));
    }

    #[test]
    fn only_the_approved_commit_of_a_task_branch_lands() {
        let (a, b) = ("a".repeat(40), "b".repeat(40));
        assert_eq!(not_approved("autobuild/A", &a, Some(&a)), None);
        let refused = not_approved("autobuild/A", &b, Some(&a)).unwrap();
        assert!(
            refused.contains("not at the approved commit aaaaaaaaaa"),
            "{refused}"
        );
        assert!(not_approved("autobuild/A", &a, None).is_some());
    }
}
