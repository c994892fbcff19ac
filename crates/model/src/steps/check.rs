//! The result of one runner-executed check (a project check such as `test`, or an executable
//! acceptance criterion). Shared by the verify step that produces it, the gate that judges it,
//! the feedback the next player turn receives and the turn records on disk.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckResult {
    /// `test`, `lint`, … for project checks; the criterion id (`AC-001`) for criteria.
    pub name: String,
    pub command: String,
    pub status: CheckStatus,
    pub exit_code: Option<i32>,
    pub duration_ms: u64,
    /// The full output, on disk.
    pub log_path: PathBuf,
    /// Bounded: the first error block plus the final summary lines.
    pub summary: String,
    /// Set when the check did not pass.
    pub failure_class: Option<FailureClass>,
    /// What the player should do about the failure.
    pub advice: Option<String>,
    /// Something to know even when it passed: a known test runner said it ran no tests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warning: Option<String>,
    /// The task's profile does not require this check: its failure is reported, labelled
    /// advisory, and does not fail the verification.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub advisory: bool,
}

impl CheckResult {
    pub fn passed(&self) -> bool {
        self.status == CheckStatus::Passed
    }

    /// A failure that counts: the check did not pass and the profile requires it.
    pub fn blocks(&self) -> bool {
        !self.passed() && !self.advisory
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum CheckStatus {
    Passed,
    Failed,
    TimedOut,
    /// The check could not be run at all (spawn failure, cancelled).
    Error,
}

impl CheckStatus {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}

/// Whether a failure is the code's fault or the environment's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    Code,
    Infrastructure,
}

impl FailureClass {
    pub fn as_str(self) -> &'static str {
        self.into()
    }
}
