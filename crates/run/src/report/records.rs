//! Everything a run directory records, loaded back as plain data for the HTML report: the run's
//! state, its event stream (the timeline), and every turn of every loop with its player,
//! checks, reviewers and gate — plus the tails of the check logs they point at.
//!
//! Diffs come from the records, not from git: each turn's patch is stored with its player
//! record when the turn is checkpointed, and the branch's net diff is stored in `net_diff.json`
//! the first time a report is written for that tip ([`store_net_diff`]). Only records older
//! than that (no stored patch) and a tip not reported yet open the repository, so a report of
//! a run whose worktree, branch or repository is gone still shows its diffs.
//!
//! Loading never fails on a missing or unreadable record: a run in progress, an interrupted
//! run and a run whose branch is gone all still get a report, saying what could not be read.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::engine::closing::{closing, Closing};
use crate::engine::events::{read_events, Event};
use crate::engine::paths::RunPaths;
use crate::engine::records::{load_turns, TurnRecords};
use crate::engine::state::RunState;
use crate::engine::turn::{PlayerRecord, VerifyRecord};
use crate::engine::Outcome;
use model::steps::check::CheckResult;

/// At most this many of a check log's last lines, and bytes, go into the report.
const LOG_LINES: usize = 40;
const LOG_BYTES: usize = 6 * 1024;

/// One run, as its directory records it.
#[derive(Debug)]
pub struct RunRecords {
    pub state: RunState,
    /// One sentence on how the run ended, or that it has not.
    pub outcome: String,
    pub events: Vec<Event>,
    /// Every turn of every loop, the first loop's first.
    pub turns: Vec<TurnData>,
    /// The branch's net change: from the commit the first checkpoint was made on to the run's
    /// last checkpoint (the approved commit, or where the work stands), or why it cannot be
    /// shown; empty when no turn changed a file.
    pub net_diff: String,
    /// The net diff as computed from git this time, to be stored ([`store_net_diff`]); `None`
    /// when it was read from the records or could not be computed.
    pub computed_net_diff: Option<NetDiff>,
    /// How the run ended, for a run that has an outcome (the same value report.md renders).
    pub closing: Option<Closing>,
}

/// One turn of one loop: its records, and what they only point at.
#[derive(Debug, Default)]
pub struct TurnData {
    pub records: TurnRecords,
    /// The turn's unified diff, or why there is none.
    pub diff: String,
    /// The last lines of each check's log, by log path.
    pub log_tails: BTreeMap<String, String>,
}

impl std::ops::Deref for TurnData {
    type Target = TurnRecords;

    fn deref(&self) -> &TurnRecords {
        &self.records
    }
}

impl RunRecords {
    /// Loads the run in `paths` with `state` (the caller's, which may be newer than
    /// `state.json`) and the `outcome` sentence to show.
    /// `ended` is the run's outcome once it has one.
    pub fn load(
        paths: &RunPaths,
        state: RunState,
        outcome: String,
        ended: Option<&Outcome>,
    ) -> RunRecords {
        // Opened only for what the records do not hold.
        let mut repo = Repository::new(&paths.dir);
        let records = load_turns(paths, &state);
        let closing = ended.map(|ended| closing(&state, ended, &records));
        let (net_diff, computed_net_diff) = net_diff(paths, &mut repo, &state, &records);
        let turns = records
            .into_iter()
            .map(|t| with_diff_and_logs(t, &mut repo))
            .collect();
        RunRecords {
            state,
            outcome,
            events: read_events(&paths.events()).unwrap_or_default(),
            turns,
            net_diff,
            computed_net_diff,
            closing,
        }
    }

    /// The run with only its state and its `turns`' records (a pull request's text): no
    /// events, no diffs, no logs.
    pub fn of_turns(
        state: RunState,
        outcome: String,
        ended: Option<&Outcome>,
        turns: Vec<TurnRecords>,
    ) -> RunRecords {
        RunRecords {
            closing: ended.map(|ended| closing(&state, ended, &turns)),
            turns: turns
                .into_iter()
                .map(|records| TurnData {
                    records,
                    ..TurnData::default()
                })
                .collect(),
            state,
            outcome,
            events: Vec::new(),
            net_diff: String::new(),
            computed_net_diff: None,
        }
    }
}

/// The repository the run directory is in, discovered the first time it is needed.
struct Repository<'a> {
    run_dir: &'a Path,
    root: Option<Option<PathBuf>>,
}

impl<'a> Repository<'a> {
    fn new(run_dir: &'a Path) -> Repository<'a> {
        Repository {
            run_dir,
            root: None,
        }
    }

    fn root(&mut self) -> Option<&Path> {
        let run_dir = self.run_dir;
        self.root
            .get_or_insert_with(|| {
                git::Repo::discover(run_dir)
                    .ok()
                    .map(|repo| repo.root().to_path_buf())
            })
            .as_deref()
    }
}

/// The branch's net diff as stored in `net_diff.json`: the patch from `from` to `to`, bounded
/// and redacted like a turn's patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NetDiff {
    pub from: String,
    pub to: String,
    pub patch: String,
}

/// Stores the net diff `records` computed, so that later reports read it instead of diffing.
pub fn store_net_diff(paths: &RunPaths, records: &RunRecords) -> std::io::Result<()> {
    match &records.computed_net_diff {
        Some(net) => base::atomic_file::write_json_atomic(&paths.net_diff(), net),
        None => Ok(()),
    }
}

/// The branch's change from the commit its first checkpoint was made on to its last
/// checkpoint, or why that cannot be shown; empty when no turn changed a file. Read from
/// `net_diff.json` when it holds that range, else computed (and returned to be stored).
fn net_diff(
    paths: &RunPaths,
    repo: &mut Repository<'_>,
    state: &RunState,
    turns: &[TurnRecords],
) -> (String, Option<NetDiff>) {
    let mut checkpoints = turns
        .iter()
        .filter_map(|t| t.player.as_ref())
        .filter(|p| p.checkpoint.changed)
        .map(|p| p.checkpoint.commit.as_str());
    let Some(first) = checkpoints.next() else {
        return (String::new(), None);
    };
    let last = checkpoints.next_back().unwrap_or(first);
    let tip = state.last_checkpoint.as_deref().unwrap_or(last);
    let from = format!("{first}^");
    let stored = base::user_file::read_record_text(&paths.net_diff())
        .ok()
        .and_then(|text| serde_json::from_str::<NetDiff>(&text).ok())
        .filter(|net| net.from == from && net.to == tip);
    if let Some(stored) = stored {
        return (stored.patch, None);
    }
    let Some(root) = repo.root() else {
        return (
            "(the net diff is not available: the run directory is not in a git repository)".into(),
            None,
        );
    };
    match git::diff_text(root, &from, tip, &|_| true, git::PATCH_LIMIT) {
        Ok(patch) => {
            // Records are kept: a diff quoting a secret's value is stored redacted.
            let patch = process::redact(&patch, &[]);
            let net = NetDiff {
                from,
                to: tip.to_string(),
                patch: patch.clone(),
            };
            (patch, Some(net))
        }
        Err(e) => (format!("(the net diff is not available: {e})"), None),
    }
}

/// A turn's records plus what they only point at: the diff and the check logs' tails.
fn with_diff_and_logs(t: TurnRecords, repo: &mut Repository<'_>) -> TurnData {
    let log_tails = all_checks(t.verify.as_ref())
        .map(|c| (c.log_path.display().to_string(), log_tail(&c.log_path)))
        .collect();
    TurnData {
        diff: t
            .player
            .as_ref()
            .map_or_else(String::new, |p| turn_diff(repo, p)),
        log_tails,
        records: t,
    }
}

/// Every check a turn's verification ran: the project's checks, then the executable criteria,
/// then the coverage measurement's.
pub fn all_checks(verify: Option<&VerifyRecord>) -> impl Iterator<Item = &CheckResult> {
    verify.into_iter().flat_map(|v| {
        v.checks
            .iter()
            .chain(&v.criteria)
            .chain(v.coverage.as_ref().map(|c| &c.check))
    })
}

/// What the player's checkpoint commit changed against its parent (the previous checkpoint,
/// or the base for the first), or why that cannot be shown.
fn turn_diff(repo: &mut Repository<'_>, player: &PlayerRecord) -> String {
    if !player.checkpoint.changed {
        return String::new();
    }
    // Stored with the turn's record since issue 24; older records are diffed again.
    if let Some(patch) = &player.patch {
        return patch.clone();
    }
    let Some(repo) = repo.root() else {
        return "(the diff is not available: the run directory is not in a git repository)".into();
    };
    let commit = &player.checkpoint.commit;
    git::diff_text(
        repo,
        &format!("{commit}^"),
        commit,
        &|_| true,
        git::PATCH_LIMIT,
    )
    .unwrap_or_else(|e| format!("(the diff is not available: {e})"))
}

/// The last lines of a log file, bounded, or why it cannot be read.
fn log_tail(path: &Path) -> String {
    match base::user_file::read_record(path) {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes), LOG_LINES, LOG_BYTES),
        Err(e) => format!("(cannot read {}: {e})", path.display()),
    }
}

/// The last `lines` lines of `text`, at most `bytes` long, with a note of what was left out.
fn tail(text: &str, lines: usize, bytes: usize) -> String {
    let all: Vec<&str> = text.trim_end().lines().collect();
    let start = all.len().saturating_sub(lines);
    let mut kept = all[start..].join("\n");
    if kept.len() > bytes {
        let cut = base::text::ceil_char_boundary(&kept, kept.len() - bytes);
        kept = kept[cut..].to_string();
    }
    let left_out = text.trim_end().len() - kept.len();
    if left_out > 0 {
        format!("… ({left_out} earlier bytes left out)\n{kept}")
    } else {
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_tail_keeps_the_last_lines_and_says_what_it_left_out() {
        let text = (1..=50)
            .map(|n| format!("line {n}"))
            .collect::<Vec<_>>()
            .join("\n");
        let kept = tail(&text, 3, 1000);
        assert!(kept.ends_with("line 48\nline 49\nline 50"), "{kept}");
        assert!(kept.starts_with("… ("), "{kept}");
        assert_eq!(tail("short\n", 3, 1000), "short");
        let long = "é".repeat(100);
        let kept = tail(&long, 3, 11);
        assert!(kept.ends_with(&"é".repeat(5)), "{kept}");
    }
}
