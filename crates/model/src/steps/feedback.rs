//! What the next player turn learns from this one, and the signature stall detection compares.
//!
//! Feedback is built from the gate's facts, not from the coach's prose alone: every failing
//! check (required or not) with its bounded summary, log path and failure class, every unmet
//! criterion with its reason, and the coach's issues with the blocking ones first. Nothing is cut
//! to "the last three lines"; check summaries are already bounded by the verify step and the full
//! logs are on disk.
//!
//! The signature deliberately ignores the coach's summary, which changes every turn even when
//! the problem does not: it is made of runner-observed failures, normalized
//! ([`crate::steps::normalize`]), plus the ids of unmet criteria. [`turn_signature`] adds the
//! gate's other runner-observed facts (the player failed and how, it changed nothing, a
//! read-only step wrote files, the coach's output was not a verdict) and every reviewer's
//! normalized `must_fix` issues, so a turn that fails the same way every time — or meets the
//! same objection every time — has the same, non-empty signature and stall detection can stop
//! it.

use crate::profile::Requirement;
use crate::steps::check::CheckResult;
use crate::steps::gate::{self, outcome, GateDecision, GateInput, Shortfall, UnmetRequirement};
use crate::steps::normalize::{fingerprint, normalize};
use crate::steps::verdict::COACH_OUTPUT_INVALID;
use crate::workflow::context::{
    CheckContext, CriterionStatusContext, FeedbackContext, IssueContext,
};
use base::Keyword;

mod fix;

/// The feedback for the turn after the one `input` describes.
pub fn build_feedback(input: &GateInput, decision: &GateDecision) -> FeedbackContext {
    let issues = issues(input);
    let unmet_criteria = unmet_criteria(input);
    let mut summary = summary(input, decision);
    let fix = fix::fix_list(decision, &issues, &unmet_criteria);
    if !decision.approved && fix.is_empty() {
        summary.push_str(
            " Nothing of this is yours to fix: the review did not count, and it is repeated. If \
             your work is complete, keep it and say so; do not change correct code.",
        );
    }
    FeedbackContext {
        summary,
        fix,
        issues,
        failing_checks: failing_checks(input),
        unmet_criteria,
    }
}

/// One paragraph: approved or not and why, non-blocking failures, and the coach's summary.
fn summary(input: &GateInput, decision: &GateDecision) -> String {
    let mut text = if decision.approved {
        "Approved: every required gate holds.".to_string()
    } else {
        let count = decision.reasons.len();
        format!(
            "Not approved: {count} unmet requirement{}: {}.",
            if count == 1 { "" } else { "s" },
            decision.reasons.join("; ")
        )
    };
    let non_blocking: Vec<&str> = input
        .checks
        .iter()
        .filter(|check| !check.passed() && !check_required(input, &check.name))
        .map(|check| check.name.as_str())
        .collect();
    if !non_blocking.is_empty() {
        text.push_str(&format!(
            " Failing but not required: {}.",
            non_blocking.join(", ")
        ));
    }
    let criteria_results = input.criteria.iter().filter_map(|c| c.result.as_ref());
    for warning in input
        .checks
        .iter()
        .chain(criteria_results)
        .filter_map(|c| c.warning.as_ref())
    {
        text.push_str(&format!(" Warning: {warning}."));
    }
    if let Some(verdict) = &input.verdict {
        text.push_str(&format!(" Coach: {}", verdict.summary.trim()));
    }
    text
}

fn check_required(input: &GateInput, name: &str) -> bool {
    input
        .requirements
        .iter()
        .any(|requirement| match requirement {
            Requirement::Check(required) => required == name,
            _ => false,
        })
}

/// The coach's issues, must_fix first, otherwise in the coach's order.
fn issues(input: &GateInput) -> Vec<IssueContext> {
    let Some(verdict) = &input.verdict else {
        return Vec::new();
    };
    let mut issues: Vec<_> = verdict.issues.iter().collect();
    issues.sort_by_key(|issue| issue.severity);
    issues
        .into_iter()
        .map(|issue| {
            // The runner's stand-in for an unusable review is a note to the player, never a
            // must_fix that asks for no change.
            let (severity, suggestion) = if issue.category == COACH_OUTPUT_INVALID {
                (
                    "note".to_string(),
                    "Not yours to fix: the review is repeated next turn.".to_string(),
                )
            } else {
                (
                    issue.severity.as_str().to_string(),
                    issue.suggestion.clone(),
                )
            };
            IssueContext {
                severity,
                category: issue.category.clone(),
                description: issue.description.clone(),
                location: issue.location.clone(),
                suggestion,
            }
        })
        .collect()
}

/// Every project check and executable criterion that did not pass, in the order they ran.
fn failing_checks(input: &GateInput) -> Vec<CheckContext> {
    let criteria_results = input
        .criteria
        .iter()
        .filter_map(|criterion| criterion.result.as_ref());
    let coverage = input.coverage.as_ref().map(|c| &c.check);
    input
        .checks
        .iter()
        .chain(criteria_results)
        .chain(coverage)
        .filter(|check| !check.passed())
        .map(check_context)
        .collect()
}

/// The prompt-facing view of a check result.
pub fn check_context(check: &CheckResult) -> CheckContext {
    CheckContext {
        name: check.name.clone(),
        command: check.command.clone(),
        status: check.status.as_str().to_string(),
        exit_code: check.exit_code,
        summary: check.summary.clone(),
        log_path: check.log_path.display().to_string(),
        failure_class: check.failure_class.map(|class| class.as_str().to_string()),
        advice: check.advice.clone(),
        advisory: check.advisory,
        tests: match (&check.tests, &check.oracle) {
            (Some(tally), Some(oracle)) => {
                Some(format!("{tally}; {}", oracle.against_base(Some(tally))))
            }
            (None, Some(oracle)) => Some(oracle.against_base(None)),
            (tally, None) => tally.map(|tally| tally.to_string()),
        },
    }
}

/// One entry per unmet criterion, in task order, with every reason it is unmet.
fn unmet_criteria(input: &GateInput) -> Vec<CriterionStatusContext> {
    let mut entries: Vec<CriterionStatusContext> = Vec::new();
    for (id, shortfall) in gate::unmet_criteria(input) {
        let Some(criterion) = input.criteria.iter().find(|criterion| criterion.id == id) else {
            continue;
        };
        let command = criterion.verify.as_deref().unwrap_or_default();
        let reason = match shortfall {
            Shortfall::VerifyFailed { status, exit_code } => format!(
                "its verify command `{command}` {}; its output is under the failing check `{id}`",
                outcome(status, exit_code)
            ),
            Shortfall::VerifyNotRun => {
                format!("its verify command `{command}` did not run this turn")
            }
            Shortfall::CoachNotMet { evidence } if evidence.trim().is_empty() => {
                "the coach marked it not met".to_string()
            }
            Shortfall::CoachNotMet { evidence } => {
                format!("the coach marked it not met: {}", evidence.trim())
            }
        };
        match entries.iter_mut().find(|entry| entry.id == id) {
            Some(entry) => {
                entry.reason.push_str("; ");
                entry.reason.push_str(&reason);
            }
            None => entries.push(CriterionStatusContext {
                id,
                text: criterion.text.clone(),
                reason,
            }),
        }
    }
    entries
}

/// A normalized signature of what failed: one line per failing check (name, status, exit code,
/// failure class and the fingerprint of its summary) and one per unmet criterion id, sorted.
/// Empty when nothing the runner observed failed; the coach's wording never enters it.
pub fn feedback_signature(feedback: &FeedbackContext) -> String {
    signature(feedback_lines(feedback))
}

/// The signature lines of the infrastructure-class failing project checks, for stall
/// detection's "same environment failure twice" rule. Executable criteria are left out: their
/// commands call what the player has yet to write, so "command not found" there is usually
/// unfinished work, not the environment.
pub fn infrastructure_lines(feedback: &FeedbackContext) -> Vec<String> {
    let is_criterion = |name: &str| feedback.unmet_criteria.iter().any(|c| c.id == name);
    let infrastructure = FeedbackContext {
        failing_checks: feedback
            .failing_checks
            .iter()
            .filter(|check| {
                check.failure_class.as_deref() == Some("infrastructure")
                    && !is_criterion(&check.name)
            })
            .cloned()
            .collect(),
        ..FeedbackContext::default()
    };
    feedback_lines(&infrastructure)
}

/// The signature stall detection compares for a whole turn: [`feedback_signature`]'s lines plus
/// one line per unmet requirement the runner observed itself and the feedback does not already
/// show as a failing check or criterion. Still empty when only the coach disagrees.
pub fn turn_signature(decision: &GateDecision, feedback: &FeedbackContext) -> String {
    let mut lines = feedback_lines(feedback);
    lines.extend(decision.unmet.iter().filter_map(observed_failure));
    lines.extend(blocking_objections(feedback));
    signature(lines)
}

/// A reviewer's `must_fix` issues, normalized: the same objection restated with other line
/// numbers, durations, paths or turn numbers reads the same, so a reviewer that repeats it while
/// everything the runner checks passes (the "coach too strict" case) stalls the loop instead of
/// spending every turn. Softer issues never block approval and are left out, and so is the
/// runner's own stand-in issue for an unusable verdict (`coach output invalid` says it already).
fn blocking_objections(feedback: &FeedbackContext) -> impl Iterator<Item = String> + '_ {
    feedback
        .issues
        .iter()
        .filter(|issue| fix::is_blocking(&issue.severity) && issue.category != COACH_OUTPUT_INVALID)
        .map(|issue| {
            format!(
                "must_fix {}: {}",
                normalize(&issue.category),
                normalize(&issue.description)
            )
        })
}

fn feedback_lines(feedback: &FeedbackContext) -> Vec<String> {
    feedback
        .failing_checks
        .iter()
        .map(|check| {
            format!(
                "check {} {} exit {} {}: {}",
                check.name,
                check.status,
                check
                    .exit_code
                    .map_or_else(|| "none".to_string(), |code| code.to_string()),
                check.failure_class.as_deref().unwrap_or("unclassified"),
                fingerprint(&check.summary).replace('\n', " | ")
            )
        })
        .chain(
            feedback
                .unmet_criteria
                .iter()
                .map(|criterion| format!("criterion {}", criterion.id)),
        )
        .collect()
}

/// The signature line of an unmet requirement the runner observed, or `None` for the coach's
/// own judgement and for what [`feedback_lines`] already covers. Text that comes from an agent
/// (the coach's invalid output, the player's stderr) is reduced to its normalized first line or
/// left out, so it cannot make identical failures look different.
fn observed_failure(unmet: &UnmetRequirement) -> Option<String> {
    match unmet {
        UnmetRequirement::PlayerFailed { failure } => Some(format!(
            "player failed: {}",
            failure
                .as_deref()
                .and_then(|text| text.lines().next())
                .map_or_else(|| "unknown".to_string(), normalize)
        )),
        UnmetRequirement::ScopeViolation { .. } => Some("scope violation".to_string()),
        UnmetRequirement::CoachOutputInvalid { .. } => Some("coach output invalid".to_string()),
        UnmetRequirement::CheckNotRun { name } => Some(format!("check {name} not run")),
        UnmetRequirement::CoachNotRun => Some("coach not run".to_string()),
        UnmetRequirement::CoachNoVerdict => Some("coach returned no verdict".to_string()),
        UnmetRequirement::NoChanges => Some("no changes".to_string()),
        UnmetRequirement::CoverageNotMeasured { .. } => Some("coverage not measured".to_string()),
        UnmetRequirement::CoverageBelow {
            minimum,
            covered,
            total,
            ..
        } => Some(format!("coverage {covered}/{total} below {minimum}%")),
        UnmetRequirement::CheckFailed { .. }
        | UnmetRequirement::Criterion { .. }
        | UnmetRequirement::CoachRequestedChanges { .. } => None,
    }
}

/// Sorted, de-duplicated lines, one per line of text.
fn signature(mut lines: Vec<String>) -> String {
    lines.sort_unstable();
    lines.dedup();
    lines.join("\n")
}

#[cfg(test)]
mod tests;
