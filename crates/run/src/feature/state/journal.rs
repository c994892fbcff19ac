//! `feature.json`'s journal, so that the feature runner's frequent, small changes cost what
//! they change and not the size of the feature: a task started, finished or landed and the
//! feature branch's recorded tip are appended as one line to `feature.journal.jsonl` beside
//! the snapshot (`feature.json`), fsynced before the runner goes on. Every other change (the
//! feature's status, waves, a conflict, an integration record), and a journal grown as large as
//! the snapshot, rewrite the snapshot atomically and remove the journal (a compaction).
//!
//! The truth is the snapshot plus the journal lines numbered after the snapshot's
//! `journal_seq`, in order: [`FeatureState::load`] replays them, so every reader sees the
//! same state. A kill at any point leaves a state the runner had saved: a line is appended
//! whole or, torn, ignored (only the last line can be); a kill between a compaction's rename
//! and the journal's removal leaves lines the snapshot already holds, skipped by number.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};

use super::{FeatureState, TaskRecord};
use base::atomic_file::write_atomic;

/// The journal is compacted into the snapshot once it is larger than the snapshot (and than
/// this): each compaction's cost is paid by at least as many bytes of appended lines.
const MIN_COMPACTION_BYTES: u64 = 16 * 1024;

/// The journal beside a feature's state file (`feature.journal.jsonl` beside `feature.json`).
pub fn journal_file(state_file: &Path) -> PathBuf {
    state_file.with_extension("journal.jsonl")
}

/// One journal line: what changed since the state the line before it (or the snapshot) left.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(super) struct Change {
    /// 1 + the previous line's (or the snapshot's `journal_seq`).
    seq: u64,
    updated_at: String,
    tip: Option<String>,
    /// The whole list, when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    violations: Option<Vec<String>>,
    /// The records of the tasks that changed, whole.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    tasks: BTreeMap<String, TaskRecord>,
}

impl Change {
    /// Records nothing that `saved` does not hold already (but the time).
    fn is_empty(&self, saved: &FeatureState) -> bool {
        self.violations.is_none() && self.tasks.is_empty() && self.tip == saved.tip
    }

    /// Sets what the line records on `state`.
    fn apply_to(&self, state: &mut FeatureState) {
        state.journal_seq = self.seq;
        state.updated_at.clone_from(&self.updated_at);
        state.tip.clone_from(&self.tip);
        if let Some(violations) = &self.violations {
            state.violations.clone_from(violations);
        }
        for (id, record) in &self.tasks {
            state.tasks.insert(id.clone(), record.clone());
        }
    }
}

/// What changed from `saved` to `now` as a journal line, or `None` when something changed
/// that only a snapshot records. Compares every field by name, so a new field of
/// [`FeatureState`] must say here how it is saved. Of the task records, only those touched
/// since `saver` saved `now` are compared, when it tracks them ([`super::TaskRecords`]); all of
/// them otherwise.
pub(super) fn change_between(
    saved: &FeatureState,
    now: &FeatureState,
    saver: u64,
) -> Option<Change> {
    let FeatureState {
        version,
        feature_id,
        name,
        file,
        status,
        started_at,
        updated_at,
        base_branch,
        branch,
        settings,
        waves,
        tasks,
        conflict,
        message,
        merged_commit,
        tip,
        violations,
        integration,
        journal_seq,
        separated,
        history,
        pr,
        trace_id,
    } = now;
    let snapshot_only = *version == saved.version
        && *feature_id == saved.feature_id
        && *name == saved.name
        && *file == saved.file
        && *status == saved.status
        && *started_at == saved.started_at
        && *base_branch == saved.base_branch
        && *branch == saved.branch
        && *settings == saved.settings
        && *waves == saved.waves
        && *conflict == saved.conflict
        && *message == saved.message
        && *merged_commit == saved.merged_commit
        && *integration == saved.integration
        && *journal_seq == saved.journal_seq
        && *separated == saved.separated
        && *history == saved.history
        && *pr == saved.pr
        && *trace_id == saved.trace_id;
    let touched = tasks.touched_since(saver);
    let same_ids = match touched {
        Some(touched) => !touched.added,
        None => {
            tasks.len() == saved.tasks.len()
                && tasks.keys().zip(saved.tasks.keys()).all(|(a, b)| a == b)
        }
    };
    if !snapshot_only || !same_ids {
        return None;
    }
    let changed = |(id, record): (&String, &TaskRecord)| {
        (saved.tasks.get(id) != Some(record)).then(|| (id.clone(), record.clone()))
    };
    Some(Change {
        seq: journal_seq + 1,
        updated_at: updated_at.clone(),
        tip: tip.clone(),
        violations: (*violations != saved.violations).then(|| violations.clone()),
        tasks: match touched {
            Some(touched) => touched
                .ids
                .iter()
                .filter_map(|id| tasks.get_key_value(id))
                .filter_map(changed)
                .collect(),
            None => tasks.iter().filter_map(changed).collect(),
        },
    })
}

/// Applies the lines of `journal` numbered after `state.journal_seq`, in order. A last line
/// that is not whole (no newline, or not a change) is a kill's torn append and ignored; any
/// other bad line is an error.
pub(super) fn replay(state: &mut FeatureState, journal: &str) -> io::Result<()> {
    let lines: Vec<&str> = journal.split_inclusive('\n').collect();
    for (i, raw) in lines.iter().enumerate() {
        let parsed = serde_json::from_str::<Change>(raw.trim_end_matches('\n'));
        // Only the last piece can lack its newline.
        if i + 1 == lines.len() && (!raw.ends_with('\n') || parsed.is_err()) {
            break;
        }
        let change = parsed.map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("line {} of the journal: {e}", i + 1),
            )
        })?;
        if change.seq > state.journal_seq {
            change.apply_to(state);
        }
    }
    Ok(())
}

/// The feature runner's handle on `feature.json` and its journal: remembers what it last
/// saved, so a save appends only what changed.
#[derive(Debug)]
pub struct FeatureFile {
    path: PathBuf,
    /// The number of this handle's last save, which the task records it saved track their
    /// changes against ([`super::TaskRecords`]): a save of other records through this handle
    /// in between makes the next save of these compare all of them.
    last_save: u64,
    /// The state as saved, once this handle saved it (the first save writes a snapshot).
    saved: Option<FeatureState>,
    snapshot_bytes: u64,
    journal_bytes: u64,
}

impl FeatureFile {
    /// The handle on the state file at `path`; its first save writes the whole snapshot.
    pub fn new(path: PathBuf) -> FeatureFile {
        FeatureFile {
            path,
            last_save: 0,
            saved: None,
            snapshot_bytes: 0,
            journal_bytes: 0,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves `state`: appends what changed since the last save to the journal, or rewrites
    /// the snapshot (see the module's documentation). Durable when it returns.
    pub fn save(&mut self, state: &mut FeatureState) -> io::Result<()> {
        let compact = self.journal_bytes > self.snapshot_bytes.max(MIN_COMPACTION_BYTES);
        let change = match &self.saved {
            Some(saved) if !compact => change_between(saved, state, self.last_save),
            _ => None,
        };
        let Some(change) = change else {
            self.snapshot_bytes = write_snapshot(&self.path, state)?;
            self.journal_bytes = 0;
            self.saved = Some(state.clone());
            self.saved_as(state);
            return Ok(());
        };
        if self
            .saved
            .as_ref()
            .is_some_and(|saved| change.is_empty(saved))
        {
            self.saved_as(state);
            return Ok(());
        }
        let mut line = serde_json::to_vec(&change).map_err(io::Error::other)?;
        line.push(b'\n');
        if let Err(error) = append(&journal_file(&self.path), &line) {
            // The journal may now end in part of this line, or in all of it unsynced under a
            // number the next line would reuse: the next save rewrites the snapshot, which
            // removes the journal, instead of appending after it.
            self.saved = None;
            return Err(error);
        }
        self.journal_bytes += line.len() as u64;
        state.journal_seq = change.seq;
        self.saved_as(state);
        if let Some(saved) = &mut self.saved {
            change.apply_to(saved);
        }
        Ok(())
    }
}

/// Appends `line` to the journal at `path` and syncs it.
fn append(path: &Path, line: &[u8]) -> io::Result<()> {
    // Private like the snapshot, which is written through a temporary file.
    let mut journal = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    journal.write_all(line)?;
    journal.sync_data()
}

impl FeatureFile {
    /// Notes that `state` is what this handle saved last.
    fn saved_as(&mut self, state: &mut FeatureState) {
        static SAVES: AtomicU64 = AtomicU64::new(1);
        self.last_save = SAVES.fetch_add(1, Ordering::Relaxed);
        state.tasks.saved_by(self.last_save);
    }
}

/// Replaces the snapshot with `state` atomically, then removes the journal it holds; the
/// snapshot's size.
pub(super) fn write_snapshot(path: &Path, state: &FeatureState) -> io::Result<u64> {
    let text = serde_json::to_vec_pretty(state).map_err(io::Error::other)?;
    write_atomic(path, &text)?;
    match std::fs::remove_file(journal_file(path)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    Ok(text.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::state::{sample_state, FeatureStatus, TaskStatus};

    /// A feature of `tasks` approved tasks saved once (as a snapshot) in a temporary
    /// directory, which lives as long as the returned guard.
    fn saved_with_approved(
        tasks: usize,
    ) -> (tempfile::TempDir, PathBuf, FeatureFile, FeatureState) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("feature.json");
        let mut file = FeatureFile::new(path.clone());
        let mut state = sample_state(&vec![TaskStatus::Approved; tasks]);
        file.save(&mut state).unwrap();
        (dir, path, file, state)
    }

    fn landed(state: &mut FeatureState, task: &str, tip: &str) {
        let record = state.tasks.get_mut(task).unwrap();
        record.status = TaskStatus::Merged;
        record.merged_commit = Some(tip.into());
        state.tip = Some(tip.into());
    }

    #[test]
    fn only_tasks_the_tip_and_violations_go_to_the_journal() {
        let saved = sample_state(&[TaskStatus::Approved, TaskStatus::Approved]);
        let mut now = saved.clone();
        landed(&mut now, "T1", "c1");
        let change = change_between(&saved, &now, 0).unwrap();
        assert_eq!(change.seq, 1);
        assert_eq!(change.tasks.keys().collect::<Vec<_>>(), ["T1"]);
        assert_eq!(change.tip.as_deref(), Some("c1"));
        assert_eq!(change.violations, None);

        let mut moved = saved.clone();
        moved.violations.push("autobuild/F was moved".into());
        let change = change_between(&saved, &moved, 0).unwrap();
        assert!(change.tasks.is_empty() && change.violations.is_some());
        assert!(change_between(&saved, &saved, 0).unwrap().is_empty(&saved));

        // Everything else is written as a snapshot.
        let changes: [fn(&mut FeatureState); 4] = [
            |s| s.status = FeatureStatus::Approved,
            |s| s.message = Some("done".into()),
            |s| s.waves.push(vec!["T9".into()]),
            |s| {
                s.tasks.insert("T9".into(), TaskRecord::default());
            },
        ];
        for change in changes {
            let mut now = saved.clone();
            change(&mut now);
            assert_eq!(change_between(&saved, &now, 0), None, "{now:?}");
        }
    }

    #[test]
    fn a_save_compares_the_records_touched_since_and_all_of_them_after_another_states_save() {
        let (_dir, path, mut file, mut state) = saved_with_approved(3);
        landed(&mut state, "T0", "c0");
        // Reached to change, left as it was: compared, not journaled.
        state.tasks.get_mut("T2").unwrap().status = TaskStatus::Approved;
        file.save(&mut state).unwrap();
        let journal = std::fs::read_to_string(journal_file(&path)).unwrap();
        let line: Change = serde_json::from_str(journal.trim_end()).unwrap();
        assert_eq!(line.tasks.keys().collect::<Vec<_>>(), ["T0"]);
        assert_eq!(FeatureState::load(&path).unwrap(), state);

        // A copy saved through the same handle: the original's next save does not journal
        // against what the copy saved; the file ends as the original has it, T1 included.
        let mut copy = state.clone();
        landed(&mut copy, "T1", "c1");
        file.save(&mut copy).unwrap();
        assert_eq!(FeatureState::load(&path).unwrap(), copy);
        state.tip = Some("c2".into());
        file.save(&mut state).unwrap();
        assert_eq!(FeatureState::load(&path).unwrap(), state);
        assert_eq!(state.status_of("T1"), TaskStatus::Approved);
    }

    #[test]
    fn after_a_failed_append_the_next_save_rewrites_the_snapshot() {
        let (_dir, path, mut file, mut state) = saved_with_approved(2);
        // The journal cannot be opened for appending.
        std::fs::create_dir(journal_file(&path)).unwrap();
        landed(&mut state, "T0", "c0");
        assert!(file.save(&mut state).is_err());
        std::fs::remove_dir(journal_file(&path)).unwrap();
        landed(&mut state, "T1", "c1");
        file.save(&mut state).unwrap();
        assert!(
            !journal_file(&path).exists(),
            "written as a snapshot, not appended after what the failure may have left"
        );
        assert_eq!(FeatureState::load(&path).unwrap(), state);
    }

    #[test]
    fn a_load_replays_the_journal_after_the_snapshot() {
        let (_dir, path, mut file, mut state) = saved_with_approved(3);
        assert!(
            !journal_file(&path).exists(),
            "the first save is a snapshot"
        );
        landed(&mut state, "T0", "c0");
        file.save(&mut state).unwrap();
        landed(&mut state, "T1", "c1");
        file.save(&mut state).unwrap();
        let journal = std::fs::read_to_string(journal_file(&path)).unwrap();
        assert_eq!(journal.lines().count(), 2, "{journal}");
        assert_eq!(FeatureState::load(&path).unwrap(), state);
        // The snapshot itself was not rewritten.
        let snapshot: FeatureState =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(snapshot.status_of("T1"), TaskStatus::Approved);

        // A change only a snapshot records compacts the journal into it.
        state.status = FeatureStatus::Approved;
        file.save(&mut state).unwrap();
        assert!(!journal_file(&path).exists());
        assert_eq!(FeatureState::load(&path).unwrap(), state);
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_lines_the_snapshot_holds_are_skipped() {
        let (_dir, path, mut file, mut state) = saved_with_approved(2);
        landed(&mut state, "T0", "c0");
        file.save(&mut state).unwrap();
        let after_first = state.clone();
        landed(&mut state, "T1", "c1");
        file.save(&mut state).unwrap();
        let journal = std::fs::read_to_string(journal_file(&path)).unwrap();

        // Killed while appending the second line: the state after the first.
        let torn = &journal[..journal.len() - 10];
        std::fs::write(journal_file(&path), torn).unwrap();
        assert_eq!(FeatureState::load(&path).unwrap(), after_first);
        // A bad line before the last is an error, not a guess.
        std::fs::write(journal_file(&path), format!("{{}}\n{journal}")).unwrap();
        let error = FeatureState::load(&path).unwrap_err();
        assert!(error.to_string().contains("line 1"), "{error}");

        // Killed between a compaction's rename and the journal's removal: the old lines are
        // in the snapshot already, and a line appended after it still counts.
        state.save(&path).unwrap();
        std::fs::write(journal_file(&path), &journal).unwrap();
        assert_eq!(FeatureState::load(&path).unwrap(), state);
        let mut file = FeatureFile::new(path.clone());
        file.save(&mut state).unwrap();
        std::fs::write(journal_file(&path), &journal).unwrap();
        landed(&mut state, "T0", "c2");
        file.saved = Some(FeatureState::load(&path).unwrap());
        file.save(&mut state).unwrap();
        assert_eq!(state.journal_seq, 3);
        assert_eq!(FeatureState::load(&path).unwrap(), state);
    }

    #[test]
    fn the_journal_is_compacted_once_it_outgrows_the_snapshot() {
        let (_dir, path, mut file, mut state) = saved_with_approved(2);
        let mut compactions = 0;
        for n in 0..2000 {
            landed(
                &mut state,
                if n % 2 == 0 { "T0" } else { "T1" },
                &format!("c{n}"),
            );
            file.save(&mut state).unwrap();
            if !journal_file(&path).exists() {
                compactions += 1;
            }
            let journal = std::fs::metadata(journal_file(&path)).map_or(0, |m| m.len());
            assert!(journal <= MIN_COMPACTION_BYTES + 1024, "{journal}");
        }
        assert!(compactions > 0);
        assert_eq!(FeatureState::load(&path).unwrap(), state);
    }
}
