//! The coach's verdict (docs/verdicts.md): its typed form, the schema it must follow, and the
//! parser that turns a coach's answer into either a verdict the loop can act on or a precise
//! error the coach can fix.
//!
//! Approval must never come from a substring in prose, nor from an answer whose meaning is in
//! doubt. Reading goes in four stages, each in its own file: find the verdict JSON
//! ([`read`]: structured output, else the last block with a `decision`, and conflicting blocks
//! are ambiguous), tolerate harmless variants of form ([`lenient`]), deserialize strictly, then
//! apply the verdict rules ([`rules`]). An error is phrased for the coach, so the engine retries
//! once with [`retry_prompt`]; if the retry also fails, [`fallback_verdict`] is a `feedback`
//! verdict that is the reviewer's failure, never an approval and never work for the player.

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod combine;
mod error;
pub mod evidence;
mod example;
pub mod extract;
mod lenient;
mod read;
mod reasoning;
mod retry;
pub mod rules;

pub use combine::combine;
pub use error::{Problem, VerdictError};
pub use extract::Origin;
pub use retry::retry_prompt;
pub use rules::Ruling;

/// The JSON Schema (draft 2020-12) a verdict must follow. Also handed to adapters that can
/// enforce it (claude `--json-schema`, codex `--output-schema`), so it stays within the
/// strict-mode subset: every object closed, every property required.
pub const VERDICT_SCHEMA: &str = include_str!("../../../../schemas/verdict.schema.json");

/// The issue category of [`fallback_verdict`]; the gate treats such a verdict as invalid and the
/// player is not asked to change anything for it.
pub const COACH_OUTPUT_INVALID: &str = "coach_output_invalid";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub decision: Decision,
    pub summary: String,
    pub issues: Vec<Issue>,
    pub criteria: Vec<CriterionVerdict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Feedback,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Issue {
    pub severity: Severity,
    /// May be empty.
    pub category: String,
    pub description: String,
    /// `path:line`, or empty.
    pub location: String,
    /// May be empty.
    pub suggestion: String,
}

/// Ordered from most to least severe, so sorting puts `critical`, then `must_fix` first.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, strum::IntoStaticStr,
)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Stops the loop at once: a person must decide (docs/verdicts.md).
    Critical,
    MustFix,
    ShouldFix,
    NiceToHave,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionVerdict {
    pub id: String,
    pub status: CriterionStatus,
    pub evidence: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum CriterionStatus {
    Met,
    NotMet,
    NotVerified,
}

impl Verdict {
    pub fn approved(&self) -> bool {
        self.decision == Decision::Approve
    }

    pub fn must_fix_count(&self) -> usize {
        self.issues
            .iter()
            .filter(|issue| issue.severity == Severity::MustFix)
            .count()
    }

    /// The first `critical` issue: the loop stops for a person.
    pub fn critical(&self) -> Option<&Issue> {
        self.issues
            .iter()
            .find(|issue| issue.severity == Severity::Critical)
    }

    /// The verdict's judgement of one criterion, if it gave one.
    pub fn criterion(&self, id: &str) -> Option<&CriterionVerdict> {
        self.criteria.iter().find(|criterion| criterion.id == id)
    }

    /// The description of the problem when this is a [`fallback_verdict`] standing in for an
    /// invalid coach output.
    pub fn invalid_output(&self) -> Option<&str> {
        self.issues
            .iter()
            .find(|issue| issue.category == COACH_OUTPUT_INVALID)
            .map(|issue| issue.description.as_str())
    }
}

/// One acceptance criterion of the task, as the verdict rules see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskCriterion {
    pub id: String,
    /// It has a verify command: the runner judges it, and the coach need not.
    pub runner_verified: bool,
}

impl TaskCriterion {
    /// A criterion with a verify command.
    pub fn runner(id: &str) -> TaskCriterion {
        TaskCriterion {
            id: id.to_string(),
            runner_verified: true,
        }
    }

    /// A criterion only the coach judges.
    pub fn coach(id: &str) -> TaskCriterion {
        TaskCriterion {
            id: id.to_string(),
            runner_verified: false,
        }
    }
}

/// What a coach's answer amounts to, for records, the corpus and the docs.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr, strum::EnumIter,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum Reading {
    Approved,
    /// `feedback` (or an `approve` its own issues contradict) with its issues kept.
    Feedback,
    /// A `critical` issue: the run stops for a person.
    BlockedCritical,
    /// Several verdicts that disagree: the coach is asked again.
    RetryAmbiguous,
    /// Not a usable verdict: the coach is asked again.
    RetryInvalid,
}

impl Reading {
    pub fn of(result: &Result<Verdict, VerdictError>) -> Reading {
        match result {
            Ok(verdict) if verdict.critical().is_some() => Reading::BlockedCritical,
            Ok(verdict) if verdict.approved() => Reading::Approved,
            Ok(_) => Reading::Feedback,
            Err(VerdictError::Ambiguous { .. } | VerdictError::DuplicateKey { .. }) => {
                Reading::RetryAmbiguous
            }
            Err(_) => Reading::RetryInvalid,
        }
    }
}

/// Parses a coach's answer and applies the verdict rules.
///
/// `structured` is the adapter's structured output (a JSON `null` counts as absent); when
/// present it is the verdict and the message is ignored. Otherwise the verdict is the last
/// block of `final_message` with a `decision` (see [`read`]). `criteria` are the task's
/// criteria. The verdict returned is the one the loop acts on: an `approve` its own issues
/// contradict comes back as `feedback` keeping them, criteria left out are `not_verified`.
pub fn parse_verdict(
    structured: Option<&Value>,
    final_message: &str,
    criteria: &[TaskCriterion],
) -> Result<Verdict, VerdictError> {
    let (value, origin) = read::read(structured, final_message)?;
    let ids: Vec<String> = criteria.iter().map(|c| c.id.clone()).collect();
    let verdict = deserialize(lenient::normalize(value, &ids), origin)?;
    match rules::rule(&verdict, criteria) {
        Ruling::Inconsistent(problems) => Err(VerdictError::Rejected { origin, problems }),
        ruling => Ok(rules::apply(verdict, &ruling, criteria)),
    }
}

fn deserialize(value: Value, origin: Origin) -> Result<Verdict, VerdictError> {
    let found = match &value {
        Value::Object(_) => None,
        Value::Null => Some("null"),
        Value::Bool(_) => Some("a boolean"),
        Value::Number(_) => Some("a number"),
        Value::String(_) => Some("a string"),
        Value::Array(_) => Some("an array"),
    };
    if let Some(found) = found {
        return Err(VerdictError::NotAnObject { origin, found });
    }
    serde_path_to_error::deserialize(value).map_err(|error| VerdictError::Schema {
        origin,
        path: error.path().to_string(),
        message: error.inner().to_string(),
    })
}

/// The verdict used when the coach's output is still invalid after the retry: `feedback`, so
/// the turn cannot be approved. It is the reviewer's failure, not the player's: its one issue is
/// not `must_fix` and asks the player to change nothing (the gate blocks on its category).
pub fn fallback_verdict(error: &VerdictError) -> Verdict {
    unusable_verdict(format!("the coach's verdict was invalid: {error}"))
}

/// The verdict recorded when the coach agent itself failed (non-zero exit, timeout, API error):
/// whatever it printed is not trusted, and the turn is not approved.
pub fn failed_agent_verdict(reason: &str) -> Verdict {
    unusable_verdict(reason.to_string())
}

fn unusable_verdict(description: String) -> Verdict {
    Verdict {
        decision: Decision::Feedback,
        summary: "The coach did not return a usable verdict, so this turn is not approved; \
                  that is the reviewer's failure, not a problem found in the work."
            .to_string(),
        issues: vec![Issue {
            severity: Severity::ShouldFix,
            category: COACH_OUTPUT_INVALID.to_string(),
            description,
            location: String::new(),
            suggestion: "Nothing to change for this: the reviewer is asked again next turn. Keep \
                         working on anything else this feedback lists."
                .to_string(),
        }],
        criteria: Vec::new(),
    }
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod corpus_tests;
