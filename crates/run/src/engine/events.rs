//! The run's event stream. Every step start and finish, every turn summary and the final
//! outcome is an [`Event`]; sinks persist it (`events.jsonl`) and display it (panel, plain
//! lines, NDJSON). Events are facts produced by the runner, never agent free text beyond short
//! bounded summaries.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use model::workflow::kinds::Uses;

/// One event with its time and run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// RFC 3339, UTC.
    pub time: String,
    pub run: String,
    #[serde(flatten)]
    pub kind: EventKind,
}

impl Event {
    pub fn now(run: &str, kind: EventKind) -> Event {
        Event {
            time: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            run: run.to_string(),
            kind,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EventKind {
    RunStarted {
        task: String,
        title: String,
        workflow: String,
        max_turns: u32,
        resumed: bool,
    },
    StepStarted {
        step: String,
        uses: Uses,
        turn: Option<u32>,
    },
    StepFinished {
        step: String,
        uses: Uses,
        turn: Option<u32>,
        ok: bool,
        duration_ms: u64,
        /// One line, runner-produced (e.g. "2 files changed", "test failed", "feedback, 2 issues").
        summary: String,
        /// The step stopped the run to wait for a person (an `approval` step with no answer
        /// yet): not a failure, and shown as waiting.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        waiting: bool,
    },
    StepSkipped {
        step: String,
        reason: String,
    },
    TurnFinished {
        turn: u32,
        max_turns: u32,
        summary: TurnSummary,
    },
    Warning {
        message: String,
    },
    /// The run waits for a person's answer on the terminal (the merge question).
    AwaitingAnswer {
        question: String,
    },
    RunFinished {
        outcome: String,
        exit_code: u8,
        message: String,
        report: Option<PathBuf>,
        worktree: Option<PathBuf>,
        /// The run's task branch (`autobuild/<ID>`).
        #[serde(default)]
        branch: String,
        /// The landing when the run merged: the base branch, the commits it moved from and
        /// to, the strategy; `null` otherwise.
        #[serde(default)]
        landed: Option<git::Landing>,
    },
}

/// What one turn did, for the progress display and `status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnSummary {
    pub player_ok: bool,
    pub files_changed: usize,
    pub checks_passed: usize,
    pub checks_failed: usize,
    /// The turn's verify was a red witness (`expect = "fail"`): a passed check is one that
    /// failed as new tests should.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub red: bool,
    pub criteria_met: usize,
    pub criteria_total: usize,
    /// `approve`, `feedback`, or empty when no coach ran.
    pub decision: String,
    pub issues: usize,
    pub approved: bool,
    /// Why the gate did not approve (empty when it did).
    #[serde(default)]
    pub reasons: Vec<String>,
    pub cost_usd: Option<f64>,
}

/// Something that wants every event.
pub trait EventSink {
    fn emit(&mut self, event: &Event);
}

/// Appends events as JSON lines; the file is never truncated, so a resumed run continues it.
pub struct EventLog {
    path: PathBuf,
    file: File,
}

impl EventLog {
    /// Opens for appending; a line torn by a crash is terminated so the next event stays whole.
    pub fn open(path: &Path) -> io::Result<EventLog> {
        let mut file =
            base::user_file::open_regular_with(path, OpenOptions::new().create(true).append(true))?;
        if ends_without_newline(path)? {
            file.write_all(b"\n")?;
        }
        Ok(EventLog {
            path: path.to_path_buf(),
            file,
        })
    }

    pub fn append(&mut self, event: &Event) -> io::Result<()> {
        let mut line = serde_json::to_string(event).map_err(io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn ends_without_newline(path: &Path) -> io::Result<bool> {
    let mut file = base::user_file::open_regular(path)?;
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(false);
    }
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8];
    file.read_exact(&mut last)?;
    Ok(last[0] != b'\n')
}

/// Reads an `events.jsonl`, skipping a torn last line left by a crash.
pub fn read_events(path: &Path) -> io::Result<Vec<Event>> {
    let text = base::user_file::read_record_text(path)?;
    Ok(text
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_appends_and_reads_back_ignoring_torn_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let mut log = EventLog::open(&path).unwrap();
        let event = Event::now(
            "TASK-1",
            EventKind::Warning {
                message: "hi".into(),
            },
        );
        log.append(&event).unwrap();
        drop(log);
        let mut file = OpenOptions::new().append(true).open(&path).unwrap();
        file.write_all(b"{\"time\": \"torn").unwrap();
        let mut log = EventLog::open(&path).unwrap();
        log.append(&event).unwrap();
        let events = read_events(&path).unwrap();
        assert_eq!(events, vec![event.clone(), event]);
    }
}
