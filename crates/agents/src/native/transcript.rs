//! The transcript of a native invocation: one JSON object per line — each model answer (text,
//! tool calls, tokens, cost), each tool result, each retry — with every secret of the
//! environment and the API key replaced before the line reaches disk (module
//! `process::redact`, as for the process adapters).

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use serde_json::Value;

use process::Redactor;

pub struct Transcript {
    file: File,
    redactor: Redactor,
    /// The first write that failed; later lines are still attempted.
    problem: Option<String>,
}

impl Transcript {
    pub fn create(path: &Path, redactor: Redactor) -> io::Result<Transcript> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        Ok(Transcript {
            file: File::create(path)?,
            redactor,
            problem: None,
        })
    }

    pub fn record(&mut self, event: &Value) {
        let line = self.redactor.apply(&event.to_string());
        if let Err(error) = writeln!(self.file, "{line}") {
            self.problem.get_or_insert_with(|| error.to_string());
        }
    }

    /// What went wrong writing, if anything.
    pub fn problem(&self) -> Option<&str> {
        self.problem.as_deref()
    }

    pub fn redact(&self, text: &str) -> String {
        self.redactor.apply(text)
    }
}
