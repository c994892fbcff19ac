//! `workflows validate --json`.

use serde::Serialize;

use crate::diagnostic::{Diagnostic, Severity};
use crate::workflow::ResolvedWorkflow;

#[derive(Debug, Serialize)]
pub struct Validation {
    pub version: u32,
    /// No error among the workflows checked (warnings allowed); the exit code says so too.
    pub valid: bool,
    /// The workflows that resolved, each with its warnings.
    pub workflows: Vec<Workflow>,
    /// Every error found, located where it can be.
    pub errors: Vec<Problem>,
}

#[derive(Debug, Serialize)]
pub struct Workflow {
    pub name: String,
    pub source: String,
    pub warnings: Vec<Problem>,
}

/// A located problem: `file:line:column: message`, with the fix when there is one.
#[derive(Debug, Serialize, Clone)]
pub struct Problem {
    /// `error` or `warning`.
    pub severity: &'static str,
    pub file: String,
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
    pub help: Option<String>,
}

impl From<&Diagnostic> for Problem {
    fn from(d: &Diagnostic) -> Problem {
        Problem {
            severity: match d.severity {
                Severity::Warning => "warning",
                Severity::Error => "error",
            },
            file: d.path.display().to_string(),
            line: d.location.map(|l| l.line),
            column: d.location.map(|l| l.column),
            message: d.message.clone(),
            help: d.help.clone(),
        }
    }
}

impl Validation {
    pub fn new(valid: &[ResolvedWorkflow], errors: &[Diagnostic]) -> Validation {
        Validation {
            version: super::VERSION,
            valid: errors.is_empty(),
            workflows: valid
                .iter()
                .map(|r| Workflow {
                    name: r.workflow.name.clone(),
                    source: r.source.display().to_string(),
                    warnings: r.warnings.iter().map(Problem::from).collect(),
                })
                .collect(),
            errors: errors.iter().map(Problem::from).collect(),
        }
    }
}
