//! The feature's own events: waves starting, tasks finishing, skipped or merged into the
//! feature branch, a conflict, the end. They are appended to `runs/<FEAT-ID>/events.jsonl`
//! and shown next to the tasks' own engine events (each task keeps its full stream in its own
//! run directory). With `--json` both kinds go to stdout as NDJSON: feature events carry a
//! `feature` field, task events a `run` field.

use std::path::PathBuf;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FeatureEvent {
    /// RFC 3339, UTC.
    pub time: String,
    pub feature: String,
    #[serde(flatten)]
    pub kind: FeatureEventKind,
}

impl FeatureEvent {
    pub fn now(feature: &str, kind: FeatureEventKind) -> FeatureEvent {
        FeatureEvent {
            time: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
            feature: feature.to_string(),
            kind,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum FeatureEventKind {
    FeatureStarted {
        name: String,
        branch: String,
        base: String,
        waves: Vec<Vec<String>>,
        /// Each task's status as the run starts (all `pending` unless resumed).
        statuses: std::collections::BTreeMap<String, String>,
        resumed: bool,
    },
    /// `wave` is 1-based; `tasks` are the ones that will run.
    WaveStarted {
        wave: usize,
        tasks: Vec<String>,
        max_parallel: usize,
    },
    TaskStarted {
        task: String,
        wave: usize,
        resumed: bool,
    },
    TaskFinished {
        task: String,
        /// A [`crate::feature::state::TaskStatus`] name.
        status: String,
        message: String,
        /// The task run's `report.md`.
        report: Option<PathBuf>,
    },
    TaskSkipped {
        task: String,
        reason: String,
    },
    TaskMerged {
        task: String,
        commit: String,
        files: usize,
    },
    WaveFinished {
        wave: usize,
        duration_ms: u64,
    },
    Conflict {
        task: String,
        with_tasks: Vec<String>,
        paths: Vec<String>,
    },
    /// An integration check of the feature branch's tip after `wave` (1-based).
    Integration {
        wave: usize,
        commit: String,
        passed: bool,
        /// The checks that did not pass.
        failed: Vec<String>,
        message: String,
    },
    /// `integration = "integrate"`: the integration task `task` starts on the failure.
    IntegrationRepair {
        wave: usize,
        task: String,
    },
    Warning {
        message: String,
    },
    FeatureFinished {
        /// A [`crate::feature::state::FeatureStatus`] name.
        status: String,
        exit_code: u8,
        message: String,
        report: PathBuf,
    },
}

/// Receives the feature's events and every task's engine events (the command line's display:
/// a panel, plain lines or NDJSON).
pub trait FeatureSink {
    fn feature(&mut self, event: &FeatureEvent);
    fn task(&mut self, event: &crate::engine::events::Event);
}

/// What a feature command that ends at once has to show — warnings, then lines — and its exit
/// code; the command line prints it.
#[derive(Debug, Default)]
pub struct Shown {
    pub warnings: Vec<String>,
    pub lines: Vec<String>,
    pub exit_code: u8,
}

/// A feature run's connections to the world: where its progress goes and who answers its
/// questions ("discard these branches?", "merge now?"), so the feature runner never prints.
pub struct FeatureIo {
    pub sink: Box<dyn FeatureSink>,
    pub prompter: Box<dyn crate::engine::io::Prompter>,
    /// Shows what the person should know that is no event of the run (a landing a kill
    /// interrupted, finished before a resume goes on), whichever way progress is shown.
    pub warn: fn(&str),
}

/// Appends feature events as JSON lines to the feature's `events.jsonl`.
pub struct FeatureLog {
    path: PathBuf,
    file: std::fs::File,
}

impl FeatureLog {
    pub fn open(path: &std::path::Path) -> std::io::Result<FeatureLog> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        Ok(FeatureLog {
            path: path.to_path_buf(),
            file,
        })
    }

    /// A failing log is reported, not fatal: `feature.json`, not the log, is what resume uses.
    pub fn append(&mut self, event: &FeatureEvent) {
        use std::io::Write;
        let written = serde_json::to_string(event)
            .map_err(std::io::Error::other)
            .and_then(|line| writeln!(self.file, "{line}"));
        if let Err(e) = written {
            tracing::warn!("cannot append to {}: {e}", self.path.display());
        }
    }
}
