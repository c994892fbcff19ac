//! The verdict rules (issue 21): what a well-formed verdict means for the loop, as one pure
//! function over the verdict and the task's criteria. The runner's own results for executable
//! criteria are the gate's business; here they only decide which criteria the coach must judge.
//!
//! - a `critical` issue stops the loop at once, whatever the decision (a person decides);
//! - `approve` needs no `must_fix` issue, no criterion `not_met`, and every criterion the coach
//!   judges (those without a verify command) `met`; a coach's `not_verified` on an executable
//!   criterion does not block, the runner judges it;
//! - `approve` with its own `must_fix` issues or `not_met` criteria is read as `feedback` that
//!   keeps them: the objection is real, only the decision word is wrong;
//! - `approve` with coach-judged criteria unverified is not an approval: the coach is asked again;
//! - `feedback` with nothing to act on (no issue, no criterion short of `met`) is asked again;
//! - `feedback` whose issues are all `should_fix`/`nice_to_have` with no criterion short of
//!   `met` is asked again: non-blocking findings (the coach prompt's quality rubric) never
//!   block approval on their own, and an approval is never guessed from a `feedback`;
//! - blank texts, unknown or repeated criterion ids are asked again.

use super::{
    CriterionStatus, CriterionVerdict, Decision, Problem, Severity, TaskCriterion, Verdict,
};

/// What a verdict means for the loop.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ruling {
    Approve,
    Feedback,
    /// `approve` that its own issues or criteria contradict: feedback keeping them.
    Downgraded,
    /// A `critical` issue: the loop stops for a person.
    Critical,
    /// Not usable as it stands; the coach is asked again with these problems.
    Inconsistent(Vec<Problem>),
}

/// The ruling on `verdict` for a task with `criteria`.
pub fn rule(verdict: &Verdict, criteria: &[TaskCriterion]) -> Ruling {
    if verdict
        .issues
        .iter()
        .any(|issue| issue.severity == Severity::Critical)
    {
        return Ruling::Critical;
    }
    let problems = form_problems(verdict, criteria);
    if !problems.is_empty() {
        return Ruling::Inconsistent(problems);
    }
    let status = |id: &str| verdict.criterion(id).map(|c| c.status);
    let any_not_met = verdict
        .criteria
        .iter()
        .any(|c| c.status == CriterionStatus::NotMet);
    match verdict.decision {
        Decision::Approve if verdict.must_fix_count() > 0 || any_not_met => Ruling::Downgraded,
        Decision::Approve => {
            let unverified: Vec<String> = criteria
                .iter()
                .filter(|c| !c.runner_verified && status(&c.id) != Some(CriterionStatus::Met))
                .map(|c| c.id.clone())
                .collect();
            if unverified.is_empty() {
                Ruling::Approve
            } else {
                Ruling::Inconsistent(vec![Problem::ApprovedUnverified { ids: unverified }])
            }
        }
        Decision::Feedback => {
            let open_criterion = criteria.iter().any(|c| match status(&c.id) {
                Some(CriterionStatus::NotMet) => true,
                Some(CriterionStatus::NotVerified) => !c.runner_verified,
                _ => false,
            });
            let blocking = verdict
                .issues
                .iter()
                .any(|issue| matches!(issue.severity, Severity::MustFix | Severity::Critical));
            if verdict.issues.is_empty() && !open_criterion {
                Ruling::Inconsistent(vec![Problem::NothingActionable])
            } else if !blocking && !open_criterion {
                Ruling::Inconsistent(vec![Problem::OnlyNonBlocking])
            } else {
                Ruling::Feedback
            }
        }
    }
}

/// `verdict` as the loop reads it under `ruling`: a downgraded or critical verdict becomes
/// `feedback` (its summary says why), and criteria the coach left out are `not_verified`.
pub fn apply(mut verdict: Verdict, ruling: &Ruling, criteria: &[TaskCriterion]) -> Verdict {
    match ruling {
        Ruling::Downgraded => {
            verdict.decision = Decision::Feedback;
            verdict.summary = format!(
                "{} (The coach answered `approve`, but its own must_fix issues or not_met \
                 criteria contradict that; the runner reads it as feedback.)",
                verdict.summary.trim()
            );
        }
        Ruling::Critical => verdict.decision = Decision::Feedback,
        Ruling::Approve | Ruling::Feedback | Ruling::Inconsistent(_) => {}
    }
    for criterion in criteria {
        if verdict.criterion(&criterion.id).is_none() {
            verdict.criteria.push(CriterionVerdict {
                id: criterion.id.clone(),
                status: CriterionStatus::NotVerified,
                evidence: "not judged by the coach".into(),
            });
        }
    }
    verdict
}

/// Blank texts and criterion ids that are not the task's, or repeated.
fn form_problems(verdict: &Verdict, criteria: &[TaskCriterion]) -> Vec<Problem> {
    let mut problems = Vec::new();
    if verdict.summary.trim().is_empty() {
        problems.push(Problem::BlankSummary);
    }
    for (index, issue) in verdict.issues.iter().enumerate() {
        if issue.description.trim().is_empty() {
            problems.push(Problem::BlankIssueDescription { index });
        }
    }
    let known: Vec<String> = criteria.iter().map(|c| c.id.clone()).collect();
    let mut seen: Vec<&str> = Vec::new();
    for criterion in &verdict.criteria {
        if !known.contains(&criterion.id) {
            problems.push(Problem::UnknownCriterion {
                id: criterion.id.clone(),
                known: known.clone(),
            });
        } else if seen.contains(&criterion.id.as_str()) {
            problems.push(Problem::DuplicateCriterion {
                id: criterion.id.clone(),
            });
        }
        seen.push(&criterion.id);
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::verdict::Issue;
    use base::Keyword;

    use CriterionStatus::{Met, NotMet, NotVerified};
    use Decision::{Approve, Feedback};

    /// AC-001 has a verify command (the runner judges it); AC-002 and AC-003 are the coach's.
    fn task() -> Vec<TaskCriterion> {
        vec![
            TaskCriterion::runner("AC-001"),
            TaskCriterion::coach("AC-002"),
            TaskCriterion::coach("AC-003"),
        ]
    }

    fn verdict(
        decision: Decision,
        issues: &[Severity],
        criteria: &[(&str, CriterionStatus)],
    ) -> Verdict {
        Verdict {
            decision,
            summary: "reviewed".into(),
            issues: issues
                .iter()
                .map(|severity| Issue {
                    severity: *severity,
                    category: "correctness".into(),
                    description: format!("{} issue", severity.as_str()),
                    location: String::new(),
                    suggestion: String::new(),
                })
                .collect(),
            criteria: criteria
                .iter()
                .map(|(id, status)| CriterionVerdict {
                    id: id.to_string(),
                    status: *status,
                    evidence: "looked".into(),
                })
                .collect(),
        }
    }

    const ALL_MET: &[(&str, CriterionStatus)] =
        &[("AC-001", Met), ("AC-002", Met), ("AC-003", Met)];

    #[test]
    fn the_rules_table() {
        use Severity::{Critical, MustFix, NiceToHave, ShouldFix};
        let unverified = |ids: &[&str]| {
            Ruling::Inconsistent(vec![Problem::ApprovedUnverified {
                ids: ids.iter().map(|id| id.to_string()).collect(),
            }])
        };
        let cases: Vec<(&str, Verdict, Ruling)> = vec![
            (
                "clean approval",
                verdict(Approve, &[], ALL_MET),
                Ruling::Approve,
            ),
            (
                "approve with minor notes",
                verdict(Approve, &[ShouldFix, NiceToHave], ALL_MET),
                Ruling::Approve,
            ),
            (
                "coach could not verify the executable criterion: the runner does",
                verdict(
                    Approve,
                    &[],
                    &[("AC-001", NotVerified), ("AC-002", Met), ("AC-003", Met)],
                ),
                Ruling::Approve,
            ),
            (
                "the executable criterion left out",
                verdict(Approve, &[], &[("AC-002", Met), ("AC-003", Met)]),
                Ruling::Approve,
            ),
            (
                "approve with everything not_verified",
                verdict(
                    Approve,
                    &[],
                    &[
                        ("AC-001", NotVerified),
                        ("AC-002", NotVerified),
                        ("AC-003", NotVerified),
                    ],
                ),
                unverified(&["AC-002", "AC-003"]),
            ),
            (
                "approve leaving a coach criterion out",
                verdict(Approve, &[], &[("AC-001", Met), ("AC-002", Met)]),
                unverified(&["AC-003"]),
            ),
            (
                "approve with a must_fix",
                verdict(Approve, &[MustFix], ALL_MET),
                Ruling::Downgraded,
            ),
            (
                "approve with a criterion not_met",
                verdict(
                    Approve,
                    &[],
                    &[("AC-001", Met), ("AC-002", NotMet), ("AC-003", Met)],
                ),
                Ruling::Downgraded,
            ),
            (
                "approve with a must_fix and an unverified criterion",
                verdict(Approve, &[MustFix], &[("AC-002", NotVerified)]),
                Ruling::Downgraded,
            ),
            (
                "critical with approve",
                verdict(Approve, &[Critical], ALL_MET),
                Ruling::Critical,
            ),
            (
                "critical with feedback and unknown ids",
                verdict(Feedback, &[Critical], &[("AC-9", NotMet)]),
                Ruling::Critical,
            ),
            (
                "feedback with a must_fix",
                verdict(Feedback, &[MustFix], ALL_MET),
                Ruling::Feedback,
            ),
            (
                "feedback with only rubric findings (should_fix, nice_to_have)",
                verdict(Feedback, &[ShouldFix, NiceToHave], ALL_MET),
                Ruling::Inconsistent(vec![Problem::OnlyNonBlocking]),
            ),
            (
                "feedback with a should_fix and a criterion not_met",
                verdict(
                    Feedback,
                    &[ShouldFix],
                    &[("AC-001", Met), ("AC-002", NotMet), ("AC-003", Met)],
                ),
                Ruling::Feedback,
            ),
            (
                "feedback with a criterion not_met and no issue",
                verdict(Feedback, &[], &[("AC-002", NotMet)]),
                Ruling::Feedback,
            ),
            (
                "feedback with a coach criterion not_verified",
                verdict(Feedback, &[], &[("AC-003", NotVerified)]),
                Ruling::Feedback,
            ),
            (
                "feedback with nothing to act on",
                verdict(Feedback, &[], ALL_MET),
                Ruling::Inconsistent(vec![Problem::NothingActionable]),
            ),
            (
                "feedback with only the runner's criterion unverified",
                verdict(
                    Feedback,
                    &[],
                    &[("AC-001", NotVerified), ("AC-002", Met), ("AC-003", Met)],
                ),
                Ruling::Inconsistent(vec![Problem::NothingActionable]),
            ),
            (
                "feedback with no issue and no criteria",
                verdict(Feedback, &[], &[]),
                Ruling::Inconsistent(vec![Problem::NothingActionable]),
            ),
        ];
        for (name, verdict, expected) in cases {
            assert_eq!(rule(&verdict, &task()), expected, "{name}");
        }
    }

    #[test]
    fn form_problems_come_before_the_decision_rules() {
        let mut v = verdict(
            Approve,
            &[],
            &[("AC-002", Met), ("AC-002", Met), ("AC-7", Met)],
        );
        v.summary = " ".into();
        let Ruling::Inconsistent(problems) = rule(&v, &task()) else {
            panic!("expected problems");
        };
        assert_eq!(
            problems,
            vec![
                Problem::BlankSummary,
                Problem::DuplicateCriterion {
                    id: "AC-002".into()
                },
                Problem::UnknownCriterion {
                    id: "AC-7".into(),
                    known: vec!["AC-001".into(), "AC-002".into(), "AC-003".into()]
                },
            ]
        );
    }

    #[test]
    fn applying_a_downgrade_keeps_the_issues_and_fills_missing_criteria() {
        let v = verdict(Approve, &[Severity::MustFix], &[("AC-002", Met)]);
        let ruling = rule(&v, &task());
        let read = apply(v, &ruling, &task());
        assert_eq!(read.decision, Feedback);
        assert_eq!(read.must_fix_count(), 1);
        assert!(
            read.summary.contains("reads it as feedback"),
            "{}",
            read.summary
        );
        let ids: Vec<(&str, CriterionStatus)> = read
            .criteria
            .iter()
            .map(|c| (c.id.as_str(), c.status))
            .collect();
        assert_eq!(
            ids,
            [
                ("AC-002", Met),
                ("AC-001", NotVerified),
                ("AC-003", NotVerified)
            ]
        );
    }

    #[test]
    fn applying_critical_never_approves() {
        let v = verdict(Approve, &[Severity::Critical], ALL_MET);
        let read = apply(v, &Ruling::Critical, &task());
        assert_eq!(read.decision, Feedback);
        assert!(read.critical().is_some());
    }
}
