//! What happens to each task when its wave starts, and how many run at once — pure decisions
//! over recorded statuses, so a fresh run and a resumed one follow the same rules.
//!
//! A task runs only when every dependency is on the feature branch (or was done before the
//! feature ran: [`TaskStatus::Done`]); a done task itself never runs. A task whose dependency
//! failed, stalled, was cancelled or skipped is skipped itself (not run), and independent tasks
//! still run. On resume, a task already merged is left alone, one whose approved run was not
//! merged yet is merged without running again, and one that was interrupted continues its own
//! run from its last completed step (a blocked one gets a new attempt on the same branch).

use crate::engine::state::RunStatus;
use crate::feature::state::TaskStatus;

/// The default bound on tasks at once when neither the command line nor the feature says.
pub const DEFAULT_MAX_PARALLEL: usize = 4;

/// What a task's earlier run (its `runs/<TASK-ID>/state.json`) says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PriorRun {
    pub status: RunStatus,
    /// The branch that run started from and merges into.
    pub base_branch: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Already on the feature branch.
    Done,
    /// Approved earlier; only the merge into the feature branch is missing.
    Merge,
    /// Run the task's workflow; `resume` continues the task's existing run and branch.
    Run { resume: bool },
    /// Not run: these dependencies are not on the feature branch.
    Skip { blocked_by: Vec<String> },
}

/// The action for one task at the start of its wave.
///
/// `record` is the task's status in this feature run, `dependencies` the statuses of the tasks
/// it depends on, `prior` its latest task run when one exists.
pub fn decide(
    record: TaskStatus,
    dependencies: &[(String, TaskStatus)],
    prior: Option<&PriorRun>,
    feature_branch: &str,
) -> Action {
    if record.is_landed() {
        return Action::Done;
    }
    let blocked_by: Vec<String> = dependencies
        .iter()
        .filter(|(_, status)| !status.is_landed())
        .map(|(id, _)| id.clone())
        .collect();
    if !blocked_by.is_empty() {
        return Action::Skip { blocked_by };
    }
    let started_here = record != TaskStatus::Pending;
    match prior {
        Some(prior) if started_here && prior.base_branch == feature_branch => match prior.status {
            RunStatus::Approved => Action::Merge,
            RunStatus::Merged => Action::Done,
            RunStatus::Discarded => Action::Run { resume: false },
            RunStatus::Running
            | RunStatus::Cancelled
            | RunStatus::Blocked
            | RunStatus::Stalled
            | RunStatus::Failed
            | RunStatus::Halted
            | RunStatus::Waiting => Action::Run { resume: true },
        },
        _ => Action::Run { resume: false },
    }
}

/// How many of a wave's tasks run at once: `--max-parallel`, else the feature's
/// `recommended_parallel`, else the wave size capped at [`DEFAULT_MAX_PARALLEL`]; at least 1.
pub fn parallelism(flag: Option<u32>, recommended: Option<u32>, wave_size: usize) -> usize {
    let chosen = flag
        .or(recommended.filter(|&n| n > 0))
        .map(|n| n as usize)
        .unwrap_or_else(|| wave_size.min(DEFAULT_MAX_PARALLEL));
    chosen.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deps(spec: &[(&str, TaskStatus)]) -> Vec<(String, TaskStatus)> {
        spec.iter().map(|(id, s)| (id.to_string(), *s)).collect()
    }

    fn prior(status: RunStatus, base: &str) -> PriorRun {
        PriorRun {
            status,
            base_branch: base.into(),
        }
    }

    const FEATURE: &str = "autobuild/F";

    #[test]
    fn a_task_runs_when_all_dependencies_are_merged() {
        let merged = deps(&[("A", TaskStatus::Merged), ("B", TaskStatus::Merged)]);
        assert_eq!(
            decide(TaskStatus::Pending, &merged, None, FEATURE),
            Action::Run { resume: false }
        );
    }

    #[test]
    fn a_task_done_before_the_feature_never_runs_and_its_dependants_do() {
        // Even with an earlier run of its own on this branch, a done task is not run again.
        let earlier = prior(RunStatus::Blocked, FEATURE);
        assert_eq!(
            decide(TaskStatus::Done, &[], Some(&earlier), FEATURE),
            Action::Done
        );
        let done = deps(&[("A", TaskStatus::Done), ("B", TaskStatus::Merged)]);
        assert_eq!(
            decide(TaskStatus::Pending, &done, None, FEATURE),
            Action::Run { resume: false }
        );
    }

    #[test]
    fn a_failed_dependency_skips_its_dependants() {
        let mixed = deps(&[("A", TaskStatus::Merged), ("B", TaskStatus::Stalled)]);
        assert_eq!(
            decide(TaskStatus::Pending, &mixed, None, FEATURE),
            Action::Skip {
                blocked_by: vec!["B".into()]
            }
        );
        let skipped = deps(&[("C", TaskStatus::Skipped)]);
        assert_eq!(
            decide(TaskStatus::Pending, &skipped, None, FEATURE),
            Action::Skip {
                blocked_by: vec!["C".into()]
            }
        );
    }

    #[test]
    fn on_resume_earlier_runs_of_this_feature_are_continued_not_restarted() {
        let none = deps(&[]);
        let cases = [
            (TaskStatus::Merged, None, Action::Done),
            (
                TaskStatus::Running,
                Some(prior(RunStatus::Running, FEATURE)),
                Action::Run { resume: true },
            ),
            (
                TaskStatus::Approved,
                Some(prior(RunStatus::Approved, FEATURE)),
                Action::Merge,
            ),
            (
                TaskStatus::Conflict,
                Some(prior(RunStatus::Approved, FEATURE)),
                Action::Merge,
            ),
            (
                TaskStatus::Blocked,
                Some(prior(RunStatus::Blocked, FEATURE)),
                Action::Run { resume: true },
            ),
            (
                TaskStatus::Running,
                Some(prior(RunStatus::Merged, FEATURE)),
                Action::Done,
            ),
            (
                TaskStatus::Failed,
                Some(prior(RunStatus::Discarded, FEATURE)),
                Action::Run { resume: false },
            ),
        ];
        for (record, prior, expected) in cases {
            assert_eq!(
                decide(record, &none, prior.as_ref(), FEATURE),
                expected,
                "{record:?} with {prior:?}"
            );
        }
    }

    #[test]
    fn runs_that_do_not_belong_to_this_feature_are_not_continued() {
        let standalone = prior(RunStatus::Approved, "main");
        assert_eq!(
            decide(TaskStatus::Running, &[], Some(&standalone), FEATURE),
            Action::Run { resume: false }
        );
        let earlier = prior(RunStatus::Running, FEATURE);
        assert_eq!(
            decide(TaskStatus::Pending, &[], Some(&earlier), FEATURE),
            Action::Run { resume: false }
        );
    }

    #[test]
    fn parallelism_prefers_the_flag_then_the_feature_then_the_wave_size() {
        assert_eq!(parallelism(Some(2), Some(3), 5), 2);
        assert_eq!(parallelism(None, Some(3), 5), 3);
        assert_eq!(parallelism(None, Some(0), 2), 2);
        assert_eq!(parallelism(None, None, 9), 4);
        assert_eq!(parallelism(None, None, 0), 1);
    }
}
