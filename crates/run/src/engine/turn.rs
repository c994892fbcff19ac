//! One turn of a loop and the records its steps leave in the run directory
//! (`player_turn_N.json`, `verify_turn_N.json`, `coach_turn_N.json`, `gate_turn_N.json`).
//!
//! The records are what the runner itself observed: the player's claims are never trusted,
//! its changes come from git, its success from the process status.

use std::io;
use std::path::{Path, PathBuf};

use base::Keyword;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::engine::events::TurnSummary;
use crate::engine::paths::RunPaths;
use agents::AgentOutcome;
use git::Checkpoint;
use model::steps::check::CheckResult;
use model::steps::gate::GateDecision;
use model::steps::verdict::Verdict;
use model::task::Task;
use model::workflow::context::FeedbackContext;

/// What a writing agent (the player) did in one turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PlayerRecord {
    pub turn: u32,
    pub step: String,
    pub role: String,
    pub agent: AgentOutcome,
    /// The tree differs from the previous checkpoint's (computed by the runner from git).
    pub changed: bool,
    /// The task branch at this checkpoint differs from the commit it forked from: the
    /// `changes` requirement. `None` in records written before it was recorded.
    #[serde(default)]
    pub branch_changed: Option<bool>,
    pub checkpoint: Checkpoint,
    /// Worktree-relative, sorted, de-duplicated; computed by the runner from git.
    pub files_changed: Vec<String>,
    pub diff_stat: String,
    /// The task branch against the commit it forked from, rendered like `diff_stat` (or why it
    /// could not be computed); the reviewer's prompt shows it. Computed once with the
    /// checkpoint; `None` in records written before it was stored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch_diff_stat: Option<String>,
    /// The diff of test files from the fork point to the checkpoint, bounded (or why there is
    /// none); the reviewer's prompt shows it. `None` in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tests_diff: Option<String>,
    /// The checkpoint commit's own patch, bounded (or why there is none); the report shows it.
    /// `None` in older records, whose report diffs the checkpoint again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<String>,
    /// What the step changed outside its scope (the shared git directory, other branches and
    /// tags) and the runner reverted; the turn cannot be approved when it is not empty.
    #[serde(default)]
    pub scope_violation: Vec<String>,
    pub prompt: PathBuf,
    pub transcript: PathBuf,
}

impl PlayerRecord {
    pub fn succeeded(&self) -> bool {
        self.agent.status.is_success()
    }

    /// What the `changes` requirement asks: the branch holds changes against its base, or
    /// (a task whose result is already in the base, run again) this turn changed something.
    /// A turn that rightly changes nothing on a branch that holds the work passes.
    pub fn branch_changed(&self) -> bool {
        self.changed || self.branch_changed.unwrap_or(false)
    }
}

/// What a read-only agent (the coach) did in one turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CoachRecord {
    pub turn: u32,
    pub step: String,
    pub role: String,
    pub agent: AgentOutcome,
    /// Present for verdict roles: an unusable answer becomes a `feedback` verdict saying why.
    pub verdict: Option<Verdict>,
    /// Why the agent's own output was rejected, if it was.
    pub verdict_error: Option<String>,
    pub retried: bool,
    /// What the read-only agent changed beyond the worktree's files (HEAD, the branch, the
    /// git directory, other refs); the runner put it back and the turn is not approvable.
    pub scope_violation: Vec<String>,
    /// Files the reviewer created (caches, build output) and the runner removed; harmless.
    #[serde(default)]
    pub removed_files: Vec<String>,
    /// Files of the checkpoint the reviewer edited or deleted; the runner reverted them and ran
    /// the review again (a second time, the review did not count).
    #[serde(default)]
    pub reverted_edits: Vec<String>,
    pub prompt: PathBuf,
    pub transcript: PathBuf,
}

/// The runner's own verification in one turn.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct VerifyRecord {
    pub turn: u32,
    pub passed: bool,
    pub checks: Vec<CheckResult>,
    /// Executable criteria, named by criterion id.
    pub criteria: Vec<CheckResult>,
    /// A red witness (`expect = "fail"`): each check's status says whether it failed as new
    /// tests should (passed) or not (failed, with the reason as its advice); no criteria ran.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub expect_fail: bool,
    /// The coverage command's run and its measurement, when the profile sets a minimum.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<model::steps::coverage::CoverageResult>,
}

/// The gate's decision and the feedback the next turn receives.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct GateRecord {
    pub turn: u32,
    /// `approved`, `reasons` and `unmet`, flat in the record as they always were.
    #[serde(flatten)]
    pub decision: GateDecision,
    pub feedback: FeedbackContext,
    /// Normalized feedback signature, for stall detection.
    pub signature: String,
    /// Criteria met this turn: executable ones by the runner, the rest by the coach.
    pub criteria_met: usize,
    pub criteria_total: usize,
}

/// The turn in progress.
#[derive(Debug, Clone)]
pub struct Turn {
    pub loop_id: String,
    /// Empty for the workflow's first loop, `<loop id>_` for the others.
    pub record_prefix: String,
    pub number: u32,
    pub max: u32,
    pub player: Option<PlayerRecord>,
    pub verify: Option<VerifyRecord>,
    /// The turn's first read-only step (`coach_turn_N.json`).
    pub coach: Option<CoachRecord>,
    /// Every further read-only step of the turn, each filed under its step id
    /// (`coach_<step>_turn_N.json`): a second reviewer counts as much as the first.
    pub more_reviews: Vec<CoachRecord>,
    pub gate: Option<GateRecord>,
    pub criteria_total: usize,
}

impl Turn {
    /// A fresh turn, or the records an interrupted run already left for it. `prefix` keeps the
    /// records of a workflow's later loops apart from its first loop's (`review_player_turn_1`).
    pub fn load(
        paths: &RunPaths,
        task: &Task,
        loop_id: &str,
        prefix: &str,
        number: u32,
        max: u32,
    ) -> Turn {
        let record = |kind: &str| paths.turn_record(&format!("{prefix}{kind}"), number);
        Turn {
            loop_id: loop_id.to_string(),
            record_prefix: prefix.to_string(),
            number,
            max,
            player: read_record(&record("player")),
            verify: read_record(&record("verify")),
            coach: read_record(&record("coach")),
            more_reviews: more_reviews(paths, prefix, number),
            gate: read_record(&record("gate")),
            criteria_total: task.criteria.len(),
        }
    }

    /// Criteria met this turn, and all, as the gate counted them.
    pub fn criteria_progress(&self) -> (usize, usize) {
        self.gate.as_ref().map_or((0, self.criteria_total), |g| {
            (g.criteria_met, g.criteria_total)
        })
    }
}

/// The records of a turn's second and later reviewers, in step order of their files' names.
pub fn more_reviews(paths: &RunPaths, prefix: &str, number: u32) -> Vec<CoachRecord> {
    let start = format!("{prefix}coach_");
    let end = format!("_turn_{number}.json");
    let Ok(entries) = std::fs::read_dir(&paths.dir) else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .and_then(|name| name.strip_prefix(&start)?.strip_suffix(&end))
                // `coach_turn_N.json` (the first reviewer's) has no step between the two.
                .is_some_and(|step| !step.is_empty())
        })
        .collect();
    files.sort();
    files.iter().filter_map(|path| read_record(path)).collect()
}

fn read_record<T: DeserializeOwned>(path: &Path) -> Option<T> {
    let text = base::user_file::read_record_text(path).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes a turn record; records are written once and never rewritten.
pub fn write_record<T: Serialize>(path: &Path, record: &T) -> io::Result<()> {
    crate::engine::state::write_json_atomic(path, record)
}

impl Turn {
    /// Every read-only step's record this turn, first reviewer first.
    pub fn reviews(&self) -> impl Iterator<Item = &CoachRecord> {
        self.coach.iter().chain(self.more_reviews.iter())
    }

    /// The turn's verdict: every reviewer's, combined (approve only when all approve).
    pub fn verdict(&self) -> Option<Verdict> {
        combined_verdict(self.reviews())
    }

    /// What the display shows for this turn.
    pub fn summary(&self) -> TurnSummary {
        let reviews: Vec<&CoachRecord> = self.reviews().collect();
        summarize(
            self.player.as_ref(),
            self.verify.as_ref(),
            &reviews,
            self.gate.as_ref(),
        )
    }
}

/// Every reviewer's verdict of a turn combined, each attributed to its step.
pub fn combined_verdict<'a>(reviews: impl IntoIterator<Item = &'a CoachRecord>) -> Option<Verdict> {
    let verdicts: Vec<(&str, &Verdict)> = reviews
        .into_iter()
        .filter_map(|r| r.verdict.as_ref().map(|v| (r.step.as_str(), v)))
        .collect();
    model::steps::verdict::combine(&verdicts)
}

/// A turn's records as the display summarizes them (live, and later from disk).
pub fn summarize(
    player: Option<&PlayerRecord>,
    verify: Option<&VerifyRecord>,
    reviews: &[&CoachRecord],
    gate: Option<&GateRecord>,
) -> TurnSummary {
    let (checks_passed, checks_failed) = verify.map_or((0, 0), |v| {
        let passed = v.checks.iter().filter(|c| c.passed()).count();
        (passed, v.checks.len() - passed)
    });
    let verdict = combined_verdict(reviews.iter().copied());
    let verdict = verdict.as_ref();
    TurnSummary {
        player_ok: player.is_some_and(|p| p.succeeded()),
        files_changed: player.map_or(0, |p| p.files_changed.len()),
        checks_passed,
        checks_failed,
        red: verify.is_some_and(|v| v.expect_fail),
        criteria_met: gate.map_or(0, |g| g.criteria_met),
        criteria_total: gate.map_or(0, |g| g.criteria_total),
        decision: verdict
            .map(|v| v.decision.as_str().to_string())
            .unwrap_or_default(),
        issues: verdict.map_or(0, |v| v.issues.len()),
        approved: gate.is_some_and(|g| g.decision.approved),
        reasons: gate.map(|g| g.decision.reasons.clone()).unwrap_or_default(),
        cost_usd: player
            .and_then(|p| p.agent.cost_usd)
            .into_iter()
            .chain(reviews.iter().filter_map(|r| r.agent.cost_usd))
            .reduce(|a, b| a + b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn more_reviews_are_the_second_and_later_reviewers_only() {
        let dir = tempfile::tempdir().unwrap();
        let paths = RunPaths::new(dir.path(), "T");
        std::fs::create_dir_all(&paths.dir).unwrap();
        let record = |step: &str| {
            serde_json::json!({
                "turn": 1, "step": step, "role": "coach",
                "agent": {"final_message": "", "structured_output": null, "session_id": null,
                    "usage": {"input": 0, "output": 0, "cached": 0}, "cost_usd": null,
                    "duration_ms": 0, "agent_turns": null, "permission_denials": [],
                    "status": {"status": "succeeded"}},
                "verdict": null, "verdict_error": null, "retried": false,
                "scope_violation": [], "prompt": "p", "transcript": "t"
            })
        };
        for (file, step) in [
            ("coach_turn_1.json", "review"),
            ("coach_security_turn_1.json", "security"),
            ("coach_security_turn_11.json", "security"),
        ] {
            write_record(&paths.dir.join(file), &record(step)).unwrap();
        }
        let steps: Vec<String> = more_reviews(&paths, "", 1)
            .into_iter()
            .map(|r| r.step)
            .collect();
        assert_eq!(steps, ["security"]);
    }

    /// A gate record written before the record held the gate's decision (no `unmet`) still
    /// loads, and what derives from the decision reads its `approved` and `reasons`.
    #[test]
    fn an_old_gate_record_still_loads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("gate_turn_2.json");
        let old = serde_json::json!({
            "turn": 2, "approved": false, "reasons": ["check `test` failed"],
            "feedback": {"summary": "1 requirement unmet", "issues": [], "failing_checks": [],
                "unmet_criteria": []},
            "signature": "check test", "criteria_met": 1, "criteria_total": 3
        });
        std::fs::write(&path, old.to_string()).unwrap();
        let record: GateRecord = read_record(&path).expect("the old record loads");
        assert!(!record.decision.approved);
        assert_eq!(record.decision.reasons, ["check `test` failed"]);
        assert!(record.decision.unmet.is_empty());
        let outputs = record.decision.outputs();
        assert!(!outputs.approved);
        assert_eq!(outputs.unmet, 1);
        // Written again, the decision stays flat in the record, where readers look for it.
        let written = serde_json::to_value(&record).unwrap();
        assert_eq!(written["approved"], false);
        assert_eq!(
            written["reasons"],
            serde_json::json!(["check `test` failed"])
        );
        assert_eq!(written["unmet"], serde_json::json!([]));
    }

    /// The decision is the one source of "approved": what the gate publishes says the same.
    #[test]
    fn the_gate_outputs_derive_from_the_decision() {
        use model::steps::gate::UnmetRequirement;
        let approved = GateDecision::new(Vec::new());
        assert!(approved.approved && approved.reasons.is_empty());
        assert!(approved.outputs().approved);
        let unmet = GateDecision::new(vec![UnmetRequirement::CoachOutputInvalid {
            problem: "no JSON".into(),
        }]);
        assert!(!unmet.approved);
        assert_eq!(unmet.reasons.len(), 1);
        assert_eq!(
            (unmet.outputs().approved, unmet.outputs().unmet),
            (false, 1)
        );
    }
}
