//! The "Fix these" list the player's feedback opens with: one numbered, de-duplicated item per
//! thing the player must change for the next turn to be approved, before any evidence.
//!
//! Only what the player can act on is listed: a failing required check, an unmet criterion, a
//! blocking review issue, an empty branch, its own scope violation. What a reviewer did wrong
//! (an unusable answer, its own edits) is never the player's to fix and is left out; the
//! feedback's summary says so instead.

use crate::steps::gate::{GateDecision, UnmetRequirement};
use crate::workflow::context::{CriterionStatusContext, IssueContext};

/// Severities that block approval.
pub(super) fn is_blocking(severity: &str) -> bool {
    matches!(severity, "critical" | "must_fix")
}

/// The numbered list's items, in the order: runner-observed failures, unmet criteria, blocking
/// issues; the same item (after normalization) only once.
pub(super) fn fix_list(
    decision: &GateDecision,
    issues: &[IssueContext],
    criteria: &[CriterionStatusContext],
) -> Vec<String> {
    let mut items = Vec::new();
    for unmet in &decision.unmet {
        match unmet {
            UnmetRequirement::PlayerFailed { .. } | UnmetRequirement::CheckNotRun { .. } => {
                items.push(capitalize(&unmet.to_string()));
            }
            UnmetRequirement::ScopeViolation { reverted }
                if reverted.iter().any(|r| r.starts_with("the player")) =>
            {
                items.push(capitalize(&unmet.to_string()));
            }
            UnmetRequirement::CheckFailed { name, .. } => items.push(format!(
                "Make the required check `{name}` pass: it {} (its output is below)",
                unmet
                    .to_string()
                    .split_once(&format!("`{name}` "))
                    .map_or("failed", |(_, rest)| rest)
            )),
            UnmetRequirement::NoChanges => items.push(
                "Implement the task: the task branch holds no changes against its base".into(),
            ),
            UnmetRequirement::CoverageBelow { minimum, .. } => items.push(format!(
                "Raise line coverage to at least {minimum}% with tests that run the uncovered \
                 lines: {unmet}"
            )),
            UnmetRequirement::CoverageNotMeasured { .. } => items.push(format!(
                "Make the coverage command write its report: {unmet} (its output is below)"
            )),
            _ => {}
        }
    }
    items.extend(
        criteria
            .iter()
            .map(|criterion| format!("Meet {}: {}", criterion.id, criterion.reason)),
    );
    items.extend(
        issues
            .iter()
            .filter(|issue| is_blocking(&issue.severity))
            .map(issue_item),
    );
    let mut seen = std::collections::HashSet::new();
    items.retain(|item| seen.insert(same_text(item)));
    items
}

/// Case and spacing do not make two items different; ids and numbers do.
fn same_text(item: &str) -> String {
    item.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn issue_item(issue: &IssueContext) -> String {
    let mut text = issue.description.trim().to_string();
    if !issue.location.trim().is_empty() {
        text.push_str(&format!(" ({})", issue.location.trim()));
    }
    if !issue.suggestion.trim().is_empty() {
        text.push_str(&format!(": {}", issue.suggestion.trim()));
    }
    text
}

fn capitalize(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::check::CheckStatus;

    fn issue(severity: &str, description: &str) -> IssueContext {
        IssueContext {
            severity: severity.into(),
            category: "correctness".into(),
            description: description.into(),
            location: String::new(),
            suggestion: String::new(),
        }
    }

    fn decision(unmet: Vec<UnmetRequirement>) -> GateDecision {
        GateDecision {
            approved: unmet.is_empty(),
            reasons: unmet.iter().map(ToString::to_string).collect(),
            unmet,
        }
    }

    #[test]
    fn failures_criteria_and_blocking_issues_in_order_each_once() {
        let unmet = vec![
            UnmetRequirement::CheckFailed {
                name: "test".into(),
                status: CheckStatus::Failed,
                exit_code: Some(1),
                failure_class: None,
            },
            UnmetRequirement::CoachOutputInvalid {
                problem: "not json".into(),
            },
            UnmetRequirement::NoChanges,
        ];
        let criteria = vec![CriterionStatusContext {
            id: "AC-001".into(),
            text: "greets".into(),
            reason: "the coach marked it not met: no test".into(),
        }];
        let issues = vec![
            issue("must_fix", "Add a test for greeting"),
            issue("should_fix", "rename x"),
            issue("must_fix", "add a test for  greeting"),
            issue("critical", "deletes the database"),
        ];

        let items = fix_list(&decision(unmet), &issues, &criteria);

        assert_eq!(
            items,
            [
                "Make the required check `test` pass: it failed (exit 1) (its output is below)",
                "Implement the task: the task branch holds no changes against its base",
                "Meet AC-001: the coach marked it not met: no test",
                "Add a test for greeting",
                "deletes the database",
            ]
        );
    }

    #[test]
    fn a_reviewers_own_failures_are_not_the_players_to_fix() {
        let unmet = vec![
            UnmetRequirement::CoachOutputInvalid {
                problem: "not json".into(),
            },
            UnmetRequirement::ScopeViolation {
                reverted: vec!["the reviewer `review`: (HEAD was moved to evil)".into()],
            },
        ];
        assert!(fix_list(&decision(unmet), &[], &[]).is_empty());
    }
}
