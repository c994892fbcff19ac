//! `doctor --json`.

use base::Keyword;
use serde::Serialize;

use crate::cli::doctor::check::Check;

#[derive(Debug, Serialize)]
pub struct Report {
    pub version: u32,
    /// The workflow whose roles decide `ready`, with the repository's own workflows.
    pub workflow: String,
    /// The repository's workflows whose roles were checked too.
    pub also: Vec<String>,
    /// Everything that workflow needs is here (exit code 0).
    pub ready: bool,
    pub checks: Vec<Line>,
}

#[derive(Debug, Serialize)]
pub struct Line {
    /// `ok`, `warn` or `missing`.
    pub level: &'static str,
    pub subject: String,
    pub detail: String,
    /// Who needs it and how to fix it, when the workflow cannot run without it.
    pub need: Option<String>,
}

impl Report {
    pub fn new(checks: &[Check], workflow: &str, also: &[String]) -> Report {
        Report {
            version: super::VERSION,
            workflow: workflow.to_string(),
            also: also.to_vec(),
            ready: checks.iter().all(|c| c.need.is_none()),
            checks: checks
                .iter()
                .map(|c| Line {
                    level: c.level.as_str(),
                    subject: c.subject.clone(),
                    detail: c.detail.clone(),
                    need: c.need.clone(),
                })
                .collect(),
        }
    }
}
