//! `feature.json`: where a feature run stands, under `.autobuild/runs/<FEAT-ID>/` — never in the
//! user's feature file. Each task keeps its own run directory (`runs/<TASK-ID>/`) with the
//! engine's `state.json`; this file records only what the feature adds: waves, which tasks were
//! started, merged into the feature branch, skipped or in conflict, and the feature's outcome.
//! Saved after every change, so a killed feature resumes from what it says: the feature
//! runner appends its per-task changes to a journal beside the file and rewrites the file only
//! now and then ([`journal`]); [`FeatureState::load`] reads both.

use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::paths::RunPaths;
use crate::engine::state::RunSettings;
use crate::engine::Outcome;
use crate::feature::integration::IntegrationRecord;
use crate::feature::overlap::Separated;
use base::error::exit;

mod journal;
mod records;

pub use journal::{journal_file, FeatureFile};
pub use records::TaskRecords;

pub const FEATURE_STATE_VERSION: u32 = 1;

/// The file whose presence marks a run directory as a feature's.
pub const FEATURE_STATE_FILE: &str = "feature.json";

/// Where a feature's `feature.json` is, in its run directory.
pub fn state_file(paths: &RunPaths) -> PathBuf {
    paths.dir.join(FEATURE_STATE_FILE)
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureState {
    pub version: u32,
    pub feature_id: String,
    pub name: String,
    /// The feature file, relative to the repository root.
    pub file: PathBuf,
    pub status: FeatureStatus,
    pub started_at: String,
    pub updated_at: String,
    pub base_branch: String,
    /// `autobuild/<FEAT-ID>`.
    pub branch: String,
    pub settings: FeatureSettings,
    /// Task ids per wave, as planned when the run started (or last resumed).
    pub waves: Vec<Vec<String>>,
    pub tasks: TaskRecords,
    /// Set when merging a task into the feature branch conflicted.
    pub conflict: Option<ConflictRecord>,
    /// One sentence on how the run ended, once it has.
    pub message: Option<String>,
    /// The base commit the feature landed as, once merged.
    pub merged_commit: Option<String>,
    /// Where the feature branch must be: its tip as the runner created it or last landed a
    /// task on it, recorded before the branch moves. Every landing first checks the branch
    /// still points there ([`crate::feature::merge`]); the ref guard holds agents to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tip: Option<String>,
    /// Runner branches found moved by someone else (an agent, a push after approval) at a
    /// landing, and put back: one sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub violations: Vec<String>,
    /// Every integration check of the feature branch's tip, in order (`[feature]
    /// integration`, [`crate::feature::integration`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub integration: Vec<IntegrationRecord>,
    /// The number of the last journal line this state holds ([`journal`]): a snapshot holds
    /// every line up to it, a load replays the lines after it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub journal_seq: u64,
    /// Tasks the plan moved a wave later because they write the same files as a task of their
    /// wave, as planned when the run started (or last resumed).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub separated: Vec<Separated>,
    /// What happened on the way that the tasks' records no longer show — each conflict, each
    /// task run discarded and run again — oldest first; kept across resumes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<HistoryEntry>,
    /// The pull (merge) request the approved feature branch landed as (`--pr`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<crate::forge::PullRequest>,
    /// The OpenTelemetry trace the feature is exported as (hex), once it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

/// One thing that happened to a feature run ([`FeatureState::history`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HistoryEntry {
    /// Merging `task` into the feature branch conflicted.
    Conflict {
        /// RFC 3339, UTC.
        at: String,
        #[serde(flatten)]
        conflict: ConflictRecord,
    },
    /// `task`'s earlier run in this feature was discarded (`autobuild discard`); it ran anew.
    RunDiscarded {
        at: String,
        task: String,
        /// The task's status in the feature when its run was discarded.
        status: TaskStatus,
        /// Where that run's records are kept (`runs/<TASK-ID>@<N>`, relative to the runs
        /// folder).
        kept_as: Option<String>,
    },
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Command-line choices that must survive a resume.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeatureSettings {
    /// Applied to every task run (workflow, models, `--set`, …); its `auto_merge`/`no_merge`
    /// decide how the finished feature lands on the base.
    pub run: RunSettings,
    pub max_parallel: Option<u32>,
    pub stop_on_failure: bool,
}

/// Where a feature run stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum FeatureStatus {
    Running,
    /// Every task landed on the feature branch; the merge into the base is pending.
    Approved,
    Merged,
    /// Some task was not approved; its dependants were skipped.
    Blocked,
    /// Merging a task into the feature branch conflicted.
    Conflict,
    /// The checks failed on the feature branch after a wave landed (the last
    /// `integration` record says which).
    IntegrationFailed,
    Cancelled,
    Discarded,
}

/// One task of the feature.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskRecord {
    pub title: String,
    /// 1-based.
    pub wave: usize,
    pub status: TaskStatus,
    /// The outcome's sentence, or why the task was skipped.
    pub message: Option<String>,
    pub started_at: Option<String>,
    pub finished_at: Option<String>,
    /// The feature branch commit the task landed as.
    pub merged_commit: Option<String>,
    /// Files the task changed on the feature branch (for conflict reports).
    #[serde(default)]
    pub changed_paths: Vec<String>,
}

/// Where one task of a feature stands.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TaskStatus {
    #[default]
    Pending,
    Running,
    /// Approved; waiting to be merged into the feature branch after its wave.
    Approved,
    /// On the feature branch.
    Merged,
    /// The turn limit was reached without approval.
    Blocked,
    Stalled,
    Failed,
    Cancelled,
    /// Not run because a dependency did not succeed.
    Skipped,
    /// Approved, but merging it into the feature branch conflicted.
    Conflict,
    /// Its `approval` step waits for `autobuild approve`/`reject`; its dependants wait too.
    Waiting,
    /// Finished before this feature ran (GuardKit moved its file to `completed/`, `archived/`
    /// or `obsolete/`): never run again; its dependants run as if it had landed.
    Done,
}

impl TaskStatus {
    /// The task's status after its run ended with `outcome`.
    pub fn from_outcome(outcome: &Outcome) -> TaskStatus {
        match outcome {
            Outcome::Approved { .. } => TaskStatus::Approved,
            Outcome::TurnLimit => TaskStatus::Blocked,
            Outcome::Stalled { .. } => TaskStatus::Stalled,
            Outcome::Cancelled | Outcome::TimedOut | Outcome::OverBudget { .. } => {
                TaskStatus::Cancelled
            }
            Outcome::Failed { .. } | Outcome::AgentUnusable(_) => TaskStatus::Failed,
            Outcome::Waiting { .. } => TaskStatus::Waiting,
            Outcome::Rejected { .. } | Outcome::NeedsPerson { .. } => TaskStatus::Blocked,
        }
    }

    /// Its work is on the feature branch, or was finished before the feature ran: its
    /// dependants may run.
    pub fn is_landed(self) -> bool {
        matches!(self, TaskStatus::Merged | TaskStatus::Done)
    }

    /// A run ended without approval: its dependants cannot run.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            TaskStatus::Blocked
                | TaskStatus::Stalled
                | TaskStatus::Failed
                | TaskStatus::Cancelled
                | TaskStatus::Skipped
                | TaskStatus::Conflict
        )
    }

    /// The exit code this status contributes to the feature's (docs/features.md).
    pub fn exit_code(self) -> u8 {
        match self {
            TaskStatus::Blocked => exit::TURN_LIMIT,
            TaskStatus::Stalled => exit::STALLED,
            TaskStatus::Cancelled => exit::CANCELLED,
            TaskStatus::Failed | TaskStatus::Conflict => exit::RUNTIME,
            TaskStatus::Waiting => exit::WAITING,
            _ => exit::APPROVED,
        }
    }
}

/// A task that could not be merged into the feature branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ConflictRecord {
    pub task: String,
    /// Files both sides changed.
    pub paths: Vec<String>,
    /// Tasks already on the feature branch that changed those files.
    pub with_tasks: Vec<String>,
}

impl FeatureState {
    /// The state the file at `path` and its journal record together. A read that a
    /// compaction replaced the file under (it may have missed the journal's lines) reads again.
    pub fn load(path: &Path) -> io::Result<FeatureState> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let before = file_id(path)?;
            let text = base::user_file::read_record_text(path)?;
            let mut state: FeatureState = serde_json::from_str(&text)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            let journal = match base::user_file::read_record_text(&journal_file(path)) {
                Ok(journal) => journal,
                Err(e) if e.kind() == io::ErrorKind::NotFound => String::new(),
                Err(e) => return Err(e),
            };
            if file_id(path)? != before && attempts < 5 {
                continue;
            }
            journal::replay(&mut state, &journal)?;
            return Ok(state);
        }
    }

    /// Writes the whole state as the snapshot and removes the journal (which it holds).
    pub fn save(&self, path: &Path) -> io::Result<()> {
        journal::write_snapshot(path, self).map(|_| ())
    }

    /// The last integration check, when it failed.
    pub fn integration_failure(&self) -> Option<&IntegrationRecord> {
        self.integration.last().filter(|r| !r.passed())
    }

    pub fn status_of(&self, task: &str) -> TaskStatus {
        self.tasks.get(task).map(|t| t.status).unwrap_or_default()
    }

    /// The feature's exit code: cancelled beats a runtime failure, which beats a stall, which
    /// beats a turn limit; 0 only when nothing went wrong.
    pub fn exit_code(&self) -> u8 {
        let codes: Vec<u8> = self.tasks.values().map(|t| t.status.exit_code()).collect();
        [
            exit::CANCELLED,
            exit::RUNTIME,
            exit::STALLED,
            exit::TURN_LIMIT,
            exit::WAITING,
        ]
        .into_iter()
        .find(|code| codes.contains(code))
        .unwrap_or(exit::APPROVED)
    }
}

/// Which file `path` is (a compaction's rename replaces it with another).
fn file_id(path: &Path) -> io::Result<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let metadata = std::fs::metadata(path)?;
    Ok((metadata.dev(), metadata.ino()))
}

/// A feature state with tasks `T0`, `T1`, … in one wave, for tests.
#[cfg(test)]
pub(crate) fn sample_state(statuses: &[TaskStatus]) -> FeatureState {
    let ids: Vec<String> = (0..statuses.len()).map(|i| format!("T{i}")).collect();
    FeatureState {
        version: FEATURE_STATE_VERSION,
        feature_id: "F".into(),
        name: "F".into(),
        file: PathBuf::from("f.yaml"),
        status: FeatureStatus::Running,
        started_at: String::new(),
        updated_at: String::new(),
        base_branch: "main".into(),
        branch: "autobuild/F".into(),
        settings: FeatureSettings::default(),
        waves: vec![ids.clone()],
        tasks: ids
            .into_iter()
            .zip(statuses)
            .map(|(id, &status)| {
                (
                    id,
                    TaskRecord {
                        status,
                        ..Default::default()
                    },
                )
            })
            .collect(),
        conflict: None,
        message: None,
        merged_commit: None,
        tip: None,
        violations: Vec::new(),
        integration: Vec::new(),
        journal_seq: 0,
        separated: Vec::new(),
        history: Vec::new(),
        pr: None,
        trace_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_most_serious_task_status_decides_the_exit_code() {
        use TaskStatus::*;
        assert_eq!(sample_state(&[Merged, Merged]).exit_code(), 0);
        assert_eq!(sample_state(&[Merged, Blocked, Skipped]).exit_code(), 3);
        assert_eq!(sample_state(&[Blocked, Stalled]).exit_code(), 4);
        assert_eq!(sample_state(&[Stalled, Conflict]).exit_code(), 1);
        assert_eq!(sample_state(&[Failed, Cancelled]).exit_code(), 5);
    }

    #[test]
    fn state_round_trips_through_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FEATURE_STATE_FILE);
        let mut state = sample_state(&[TaskStatus::Merged, TaskStatus::Running]);
        state.history = vec![
            HistoryEntry::Conflict {
                at: "2026-12-02T10:00:00Z".into(),
                conflict: ConflictRecord {
                    task: "T1".into(),
                    paths: vec!["a".into()],
                    with_tasks: vec!["T0".into()],
                },
            },
            HistoryEntry::RunDiscarded {
                at: "2026-12-02T10:05:00Z".into(),
                task: "T1".into(),
                status: TaskStatus::Conflict,
                kept_as: Some("T1@1".into()),
            },
        ];
        state.separated = vec![Separated {
            task: "T1".into(),
            after: "T0".into(),
            paths: vec!["a".into()],
        }];
        state.save(&path).unwrap();
        assert_eq!(FeatureState::load(&path).unwrap(), state);
    }
}
