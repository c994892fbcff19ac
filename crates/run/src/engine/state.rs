//! `state.json`: everything needed to resume a run after a crash, kill or Ctrl-C.
//!
//! The file is replaced atomically (write a sibling temp file, fsync, rename) after every step,
//! so it always describes the last completed step. The step's records, written just before
//! without an fsync of their own, are synced beside the temp file before the rename
//! (`RunCx::write_record`). Steps are addressed by path: `worktree` for
//! a top-level step, `cycle/2/implement` for a step of a loop's second iteration.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use model::workflow::kinds::LoopExit;
use serde_json::Value;

use crate::engine::Outcome;
use base::diagnostic::Diagnostic;
use base::error::Error;
use model::steps::stall::TurnFacts;
use model::workflow::context::FeedbackContext;
use model::workflow::overrides::ModelFlag;

pub const STATE_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunState {
    pub version: u32,
    pub task_id: String,
    pub task_path: PathBuf,
    pub title: String,
    pub workflow: String,
    pub workflow_hash: String,
    pub status: RunStatus,
    pub started_at: String,
    pub updated_at: String,
    pub base_branch: String,
    pub branch: String,
    pub worktree: PathBuf,
    pub settings: RunSettings,
    /// The first loop's bound, for "turn N/M" displays.
    #[serde(default)]
    pub max_turns: u32,
    /// Completed steps by path, with their outputs.
    pub completed: BTreeMap<String, StepRecord>,
    /// Per-loop progress, by loop step id.
    pub loops: BTreeMap<String, LoopState>,
    /// The last commit the runner made (or the base at start): what an interrupted step restarts from.
    pub last_checkpoint: Option<String>,
    /// Paths no writer may change for the rest of the run: the tests a red witness accepted
    /// (a gate approved a turn whose `verify` had `expect = "fail"`), so the implementation
    /// makes them pass instead of changing them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locked: Vec<String>,
    /// What git does not track in the worktree right after `[worktree] setup` made it (a
    /// `.venv`, `node_modules`): kept, with the links and copies, when everything else git
    /// does not track is removed before the checks (`exec::agent`). `None` without a setup.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned: Option<Vec<PathBuf>>,
    pub cost_usd: f64,
    /// Some of the cost was estimated from token counts and a price table (codex).
    #[serde(default)]
    pub cost_estimated: bool,
    /// Some agent reported a cost (zero included): without one, `cost_usd` is unknown, not
    /// zero ([`RunState::cost`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_reported: bool,
    pub tokens_in: u64,
    pub tokens_out: u64,
    /// Input the agents read from their prompt caches (beside `tokens_in`), and the part of
    /// `tokens_in` they wrote to them, where their APIs say.
    #[serde(default)]
    pub tokens_cached: u64,
    #[serde(default)]
    pub tokens_cache_written: u64,
    /// How the run ended (`None` while it has not); see [`crate::engine::outcome::record`].
    #[serde(default, with = "crate::engine::outcome::record")]
    pub outcome: Option<Outcome>,
    /// How the approved branch lands, as the workflow's merge step decided (for `complete`).
    #[serde(default)]
    pub merge_strategy: Option<model::workflow::model::MergeStrategy>,
    /// Wall time spent by all sessions of this run, for `limits.max_wall_time` across resumes.
    #[serde(default)]
    pub elapsed_ms: u64,
    /// A change to the repository the runner started and has not finished: saved before the
    /// change begins and cleared once it is done, so a resume after a kill knows what to redo.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<Pending>,
    /// The landing of the approved commit on the base, recorded before the base moves and kept
    /// afterwards: a runner branch (a feature branch) moved by it was moved by a runner
    /// ([`crate::engine::ref_owners`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub landed: Option<git::Landing>,
    /// How the run's agents and checks were confined (absent in records from before it was
    /// kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<sandbox::Record>,
    /// A person's answer to a waiting `approval` step, given with `autobuild approve` or
    /// `autobuild reject`; the step takes it when the run continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    /// Every decision a person made on this run, in order: who, how, when, and the reason of a
    /// rejection; the reports name them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signoffs: Vec<SignOff>,
    /// A run with hidden paths that was approved and left unmerged: its approved commit (in
    /// its task repository) applied onto the commit it started from, in the user's repository
    /// (`git::task_repo::transplant`). What its branch there must be at for a landing from
    /// another checkout (`feature --land` in a CI landing job) to land it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transplanted: Option<String>,
    /// The pull (merge) request the approved run landed as (`--pr`), once opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<crate::forge::PullRequest>,
    /// The OpenTelemetry trace the run's sessions are exported as (hex), once one was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
}

pub use model::workflow::kinds::{Answer, SignOff};

/// The runner's own repository changes that a kill could interrupt half-way (ARCHITECTURE.md,
/// engine: safe to redo). Checkpoints need no entry: resume saves and reverts whatever an
/// interrupted step left, including a checkpoint commit that was made but not recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "snake_case")]
pub enum Pending {
    /// Adding the task worktree: a worktree whose checkout did not finish is never used; resume
    /// removes it (and the branch, when this run created it and it never moved) and adds it
    /// again.
    Worktree {
        created_branch: bool,
        base_commit: String,
    },
    /// Landing the approved commit on the base branch, phase by phase
    /// ([`git::Landing`]).
    Merge {
        landing: git::Landing,
        phase: MergePhase,
        /// When the landing began, in milliseconds since the Unix epoch: a lock file older than
        /// this is not one the landing left.
        since_ms: u64,
    },
}

/// How far a landing got. Each phase is saved before its work starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MergePhase {
    /// The commit to land exists; the base branch may or may not have moved yet.
    Prepared,
    /// The base branch points at the landed commit; checkouts of it may be behind.
    Moved,
    /// The work has landed everywhere; the task worktree and branch may still need removing.
    Landed,
}

/// Where a run stands.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Approved; the merge is waiting for `autobuild complete`.
    Approved,
    Merged,
    Blocked,
    Stalled,
    Cancelled,
    Failed,
    /// Stopped because an agent cannot authenticate, is out of credit or names an unknown
    /// model; resumable once that is fixed.
    Halted,
    /// An `approval` step waits for `autobuild approve` or `autobuild reject`.
    Waiting,
    Discarded,
}

impl RunStatus {
    /// The GuardKit board state a run in this status stands for (docs/guardkit.md, "Keeping a
    /// GuardKit board true"): `status` shows it beside the folder the task file sits in, which
    /// autobuild changes only when the run lands (to `completed/`).
    pub fn guardkit_state(self) -> &'static str {
        match self {
            RunStatus::Running | RunStatus::Cancelled => "in_progress",
            RunStatus::Approved | RunStatus::Waiting => "in_review",
            RunStatus::Merged => "completed",
            RunStatus::Blocked | RunStatus::Stalled | RunStatus::Failed | RunStatus::Halted => {
                "blocked"
            }
            RunStatus::Discarded => "backlog",
        }
    }

    /// Interrupted (crash, kill, Ctrl-C, a run limit, an agent that could not be used):
    /// `autobuild resume <ID>` continues it.
    pub fn is_resumable(self) -> bool {
        matches!(
            self,
            RunStatus::Running | RunStatus::Cancelled | RunStatus::Halted | RunStatus::Waiting
        )
    }
}

/// Command-line choices that must survive a resume.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSettings {
    pub workflow_arg: Option<String>,
    pub auto_merge: bool,
    pub no_merge: bool,
    pub overrides: Vec<String>,
    pub max_turns: Option<u32>,
    /// `--player-model` (the alias of `--model player=…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub player_model: Option<String>,
    /// `--coach-model` (the alias of `--model coach=…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coach_model: Option<String>,
    /// `--model ROLE=MODEL` assignments, in command-line order.
    #[serde(default)]
    pub models: Vec<String>,
    pub agent: Option<String>,
    /// Branch from this base instead of `[project] base_branch` / the current branch
    /// (a feature's tasks branch from the feature branch).
    #[serde(default)]
    pub base_branch: Option<String>,
    /// `--allow-secret-in-diff`: land a diff that holds the value of a secret-named variable.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub allow_secret_in_diff: bool,
    /// `--pr`: land an approved run as a pull request (`[forge]`), not a local merge.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pr: bool,
    /// The quality-gate profile instead of the one the task's type selects (`replay
    /// --profile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
}

impl RunSettings {
    /// Every model choice: the aliases first, then each `--model`.
    pub fn model_flags(&self) -> Vec<ModelFlag> {
        let aliases = [("player", &self.player_model), ("coach", &self.coach_model)];
        aliases
            .into_iter()
            .filter_map(|(role, model)| model.as_deref().map(|m| ModelFlag::alias(role, m)))
            .chain(self.models.iter().cloned().map(ModelFlag::Given))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub ok: bool,
    pub outputs: Value,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct LoopState {
    /// The iteration in progress or last completed (1-based).
    pub iteration: u32,
    /// Facts of finished turns, for stall detection.
    pub history: Vec<TurnFacts>,
    pub nudged: bool,
    /// The notice the next player prompt carries.
    pub stall_notice: Option<String>,
    /// The previous turn's feedback, for the next player prompt. A value that is not one (a
    /// record of another version) is no feedback, as it always was for the prompt.
    #[serde(default, deserialize_with = "feedback_or_none")]
    pub feedback: Option<FeedbackContext>,
    pub exit: Option<LoopExit>,
    /// Turns run before a blocked run was continued (`task --resume`): the loop's bound counts
    /// on from here, so turn numbers go on instead of starting over.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub earlier: u32,
}

fn feedback_or_none<'de, D: serde::Deserializer<'de>>(
    from: D,
) -> Result<Option<FeedbackContext>, D::Error> {
    let value = Option::<Value>::deserialize(from)?;
    Ok(value.and_then(|value| serde_json::from_value(value).ok()))
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

pub use base::atomic_file::{write_atomic, write_json_atomic};

impl RunState {
    /// What the run's agents reported they cost, `None` when none reported a cost (records
    /// written before `cost_reported` count a non-zero cost as reported).
    pub fn cost(&self) -> Option<f64> {
        (self.cost_reported || self.cost_usd > 0.0).then_some(self.cost_usd)
    }

    pub fn load(path: &Path) -> io::Result<RunState> {
        let text = base::user_file::read_record_text(path)?;
        serde_json::from_str(&text).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    /// Journals the repository change in progress (`None`: done); a landing is also kept in
    /// `landed` for good.
    pub fn journal(&mut self, pending: Option<Pending>) {
        if let Some(Pending::Merge { landing, .. }) = &pending {
            self.landed = Some(landing.clone());
        }
        self.pending = pending;
    }

    pub fn save(&self, path: &Path) -> io::Result<()> {
        write_json_atomic(path, self)
    }

    /// [`RunState::save`], making the records in `unsynced` durable first (in parallel with the
    /// state's own sync): a state that says a step is done never outlives its record.
    pub fn save_after(
        &self,
        spares: &mut base::atomic_file::Spares,
        path: &Path,
        unsynced: Vec<std::fs::File>,
    ) -> io::Result<()> {
        let text = serde_json::to_vec_pretty(self).map_err(io::Error::other)?;
        base::atomic_file::write_atomic_after_with(spares, path, &text, unsynced)
    }
}

/// A run record that exists but cannot be used — truncated, corrupt, or not a regular file
/// (a FIFO, a device): a problem in that file (exit 2) naming it, never read as "no run".
pub fn unreadable_record(file: &Path, error: &io::Error, task_id: &str) -> Error {
    let problem = match base::user_file::NotRegular::of(error) {
        Some(special) => special.to_string(),
        None => error.to_string(),
    };
    Error::from(
        Diagnostic::new(file, format!("the run record is unreadable: {problem}")).with_help(
            format!(
                "autobuild does not act on it; look at the file, or start over with `autobuild task {} --fresh` (earlier records are kept)",
                crate::engine::paths::run_owner(task_id)
            ),
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A `state.json` the runner wrote before outcomes, feedback and model choices were kept
    /// typed (a real blocked run of `autobuild init --agents command`'s example task).
    const BEFORE_TYPED_RECORDS: &str =
        include_str!("../../../../tests/fixtures/records/state_before_typed_records.json");

    #[test]
    fn a_record_from_before_typed_records_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        fs::write(&path, BEFORE_TYPED_RECORDS).unwrap();
        let state = RunState::load(&path).unwrap();
        assert_eq!(state.outcome, Some(Outcome::TurnLimit));
        assert_eq!(state.status, RunStatus::Blocked);
        let feedback = state.loops["cycle"].feedback.as_ref().unwrap();
        assert_eq!(feedback.issues[0].severity, "must_fix");
        assert_eq!(feedback.unmet_criteria[0].id, "AC-002");
        assert_eq!(feedback.fix.len(), 2);
        // Saved again, it keeps the outcome typed, with the same words beside it.
        state.save(&path).unwrap();
        let saved: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved["outcome"]["detail"], "turn_limit");
        let old: Value = serde_json::from_str(BEFORE_TYPED_RECORDS).unwrap();
        for key in ["outcome", "exit_code", "message"] {
            assert_eq!(saved["outcome"][key], old["outcome"][key], "{key}");
        }
        assert_eq!(RunState::load(&path).unwrap(), state);
    }

    #[test]
    fn loop_feedback_that_is_not_feedback_is_none() {
        let loop_state: LoopState = serde_json::from_value(serde_json::json!({
            "iteration": 2, "history": [], "nudged": false, "stall_notice": null,
            "feedback": {"summary": "an older shape"}, "exit": null
        }))
        .unwrap();
        assert_eq!(loop_state.feedback, None);
    }

    #[test]
    fn atomic_write_replaces_content() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("state.json");
        write_json_atomic(&path, &serde_json::json!({"a": 1})).unwrap();
        write_json_atomic(&path, &serde_json::json!({"a": 2})).unwrap();
        let back: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(back["a"], 2);
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
