//! The coach's verdict (DESIGN.md §6): its typed form, the schema it must follow, and the strict
//! parser that turns a coach's output into either a valid verdict or a precise error.
//!
//! Approval must never come from a substring in prose. A verdict is taken from the adapter's
//! structured output when there is one, else from the final message (see [`extract`] for the
//! positional rule: the last JSON block or object wins). It is then validated against the
//! schema and against the task: unknown fields and values, criterion ids the task does not have,
//! missing or duplicated criteria, and self-contradicting approvals are all errors. An error is
//! phrased for the coach, so the engine can retry once with [`retry_prompt`]; if the retry also
//! fails, [`fallback_verdict`] is a `feedback` verdict, never an approval.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod combine;
pub mod extract;

pub use combine::combine;
pub use extract::Origin;

/// The JSON Schema (draft 2020-12) a verdict must follow. Also handed to adapters that can
/// enforce it (claude `--json-schema`, codex `--output-schema`), so it stays within the
/// strict-mode subset: every object closed, every property required.
pub const VERDICT_SCHEMA: &str = include_str!("../../schemas/verdict.schema.json");

/// The issue category of [`fallback_verdict`]; the gate treats such a verdict as invalid.
pub const COACH_OUTPUT_INVALID: &str = "coach_output_invalid";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub decision: Decision,
    pub summary: String,
    pub issues: Vec<Issue>,
    pub criteria: Vec<CriterionVerdict>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    Approve,
    Feedback,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Approve => "approve",
            Decision::Feedback => "feedback",
        }
    }
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

/// Ordered from most to least severe, so sorting puts `must_fix` first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    MustFix,
    ShouldFix,
    NiceToHave,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::MustFix => "must_fix",
            Severity::ShouldFix => "should_fix",
            Severity::NiceToHave => "nice_to_have",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CriterionVerdict {
    pub id: String,
    pub status: CriterionStatus,
    pub evidence: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CriterionStatus {
    Met,
    NotMet,
    NotVerified,
}

impl CriterionStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CriterionStatus::Met => "met",
            CriterionStatus::NotMet => "not_met",
            CriterionStatus::NotVerified => "not_verified",
        }
    }
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

/// Why a coach's output is not a usable verdict, phrased so it can be sent back to the coach.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerdictError {
    #[error(
        "the final message contains no JSON verdict: there is neither a ```json block nor a JSON \
         object (a decision stated in prose, such as \"IMPLEMENTATION_APPROVED\", is not a verdict)"
    )]
    Missing,
    #[error("the {origin} is not valid JSON: {message}")]
    Syntax { origin: Origin, message: String },
    #[error("the {origin} must be a JSON object, but it is {found}")]
    NotAnObject { origin: Origin, found: &'static str },
    #[error("the {origin} does not follow the verdict schema at `{path}`: {message}")]
    Schema {
        origin: Origin,
        path: String,
        message: String,
    },
    #[error("the verdict is inconsistent: {}", join_problems(.0))]
    Rejected(Vec<Problem>),
}

/// A rule beyond the schema that a verdict broke.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    BlankSummary,
    BlankIssueDescription { index: usize },
    UnknownCriterion { id: String, known: Vec<String> },
    DuplicateCriterion { id: String },
    MissingCriteria { ids: Vec<String> },
    ApprovedWithMustFix { descriptions: Vec<String> },
    ApprovedWithUnmetCriteria { ids: Vec<String> },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::BlankSummary => f.write_str("`summary` is blank"),
            Problem::BlankIssueDescription { index } => {
                write!(f, "`issues[{index}].description` is blank")
            }
            Problem::UnknownCriterion { id, known } if known.is_empty() => write!(
                f,
                "criterion `{id}` is not a criterion of this task, which has no acceptance \
                 criteria (`criteria` must be empty)"
            ),
            Problem::UnknownCriterion { id, known } => write!(
                f,
                "criterion `{id}` is not a criterion of this task (its criteria are {})",
                quoted_list(known)
            ),
            Problem::DuplicateCriterion { id } => {
                write!(f, "criterion `{id}` is judged more than once")
            }
            Problem::MissingCriteria { ids } => write!(
                f,
                "every acceptance criterion must be judged, but {} missing",
                match ids.as_slice() {
                    [one] => format!("`{one}` is"),
                    _ => format!("{} are", quoted_list(ids)),
                }
            ),
            Problem::ApprovedWithMustFix { descriptions } => write!(
                f,
                "`decision` is `approve` but {} must_fix issue(s) remain ({}); approve only when \
                 no issue is must_fix, otherwise answer `feedback`",
                descriptions.len(),
                descriptions.join("; ")
            ),
            Problem::ApprovedWithUnmetCriteria { ids } => write!(
                f,
                "`decision` is `approve` but criteria {} are `not_met`; approve only when no \
                 criterion is not_met, otherwise answer `feedback`",
                quoted_list(ids)
            ),
        }
    }
}

fn join_problems(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(Problem::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

fn quoted_list(items: &[String]) -> String {
    items
        .iter()
        .map(|item| format!("`{item}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Parses and validates a coach's verdict.
///
/// `structured` is the adapter's structured output (a JSON `null` counts as absent); when
/// present it is the verdict and the message is ignored. Otherwise the verdict is the last
/// fenced JSON block of `final_message`, or else its last top-level JSON object: when a coach
/// writes several verdicts, its last word counts, whichever decision it holds.
/// `criteria_ids` are the task's criteria; the verdict must judge each exactly once.
pub fn parse_verdict(
    structured: Option<&Value>,
    final_message: &str,
    criteria_ids: &[String],
) -> Result<Verdict, VerdictError> {
    let verdict = match structured.filter(|value| !value.is_null()) {
        Some(value) => deserialize(value.clone(), Origin::StructuredOutput)?,
        None => {
            let (text, origin) =
                extract::find_candidate(final_message).ok_or(VerdictError::Missing)?;
            let value = serde_json::from_str::<Value>(text).map_err(|e| VerdictError::Syntax {
                origin,
                message: e.to_string(),
            })?;
            deserialize(value, origin)?
        }
    };
    let problems = problems(&verdict, criteria_ids);
    if problems.is_empty() {
        Ok(verdict)
    } else {
        Err(VerdictError::Rejected(problems))
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

/// Every rule beyond the schema that `verdict` breaks, in a stable order.
fn problems(verdict: &Verdict, criteria_ids: &[String]) -> Vec<Problem> {
    let mut problems = Vec::new();
    if verdict.summary.trim().is_empty() {
        problems.push(Problem::BlankSummary);
    }
    for (index, issue) in verdict.issues.iter().enumerate() {
        if issue.description.trim().is_empty() {
            problems.push(Problem::BlankIssueDescription { index });
        }
    }
    let mut seen: Vec<&str> = Vec::new();
    for criterion in &verdict.criteria {
        if !criteria_ids.contains(&criterion.id) {
            problems.push(Problem::UnknownCriterion {
                id: criterion.id.clone(),
                known: criteria_ids.to_vec(),
            });
        } else if seen.contains(&criterion.id.as_str()) {
            problems.push(Problem::DuplicateCriterion {
                id: criterion.id.clone(),
            });
        }
        seen.push(&criterion.id);
    }
    let missing: Vec<String> = criteria_ids
        .iter()
        .filter(|id| !seen.contains(&id.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        problems.push(Problem::MissingCriteria { ids: missing });
    }
    if verdict.approved() {
        let must_fix: Vec<String> = verdict
            .issues
            .iter()
            .filter(|issue| issue.severity == Severity::MustFix)
            .map(|issue| issue.description.clone())
            .collect();
        if !must_fix.is_empty() {
            problems.push(Problem::ApprovedWithMustFix {
                descriptions: must_fix,
            });
        }
        let not_met: Vec<String> = verdict
            .criteria
            .iter()
            .filter(|criterion| criterion.status == CriterionStatus::NotMet)
            .map(|criterion| criterion.id.clone())
            .collect();
        if !not_met.is_empty() {
            problems.push(Problem::ApprovedWithUnmetCriteria { ids: not_met });
        }
    }
    problems
}

/// The prompt for the one corrective retry: the original prompt, then why the answer was
/// rejected and the schema to follow.
pub fn retry_prompt(original_prompt: &str, error: &VerdictError) -> String {
    format!(
        "{original}\n\n---\n\nYour previous answer could not be used: your verdict was invalid \
         because {error}.\n\nAnswer again. End your answer with exactly one ```json block holding \
         your verdict, following this JSON schema (every field required, no other fields):\n\n\
         ```json\n{schema}\n```\n",
        original = original_prompt.trim_end(),
        schema = VERDICT_SCHEMA.trim_end(),
    )
}

/// The verdict used when the coach's output is still invalid after the retry: `feedback`, with
/// one must_fix issue naming the problem, so the turn cannot be approved.
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
        summary: "The coach did not return a valid verdict, so this turn is not approved."
            .to_string(),
        issues: vec![Issue {
            severity: Severity::MustFix,
            category: COACH_OUTPUT_INVALID.to_string(),
            description,
            location: String::new(),
            suggestion: "No change to the code is needed for this; the next turn's coach is \
                         asked again."
                .to_string(),
        }],
        criteria: Vec::new(),
    }
}

#[cfg(test)]
mod tests;
