//! Several reviewers in one turn (a security reviewer, then a lead): every verdict counts. The
//! gate sees one verdict that approves only when every reviewer approved, carries every
//! reviewer's issues attributed to that reviewer, and marks a criterion met only when no
//! reviewer found it unmet or unverified. Nothing a reviewer said is dropped.

use super::{CriterionStatus, CriterionVerdict, Decision, Verdict};

/// Combines the verdicts of one turn's reviewers, each named by its step id. One verdict is
/// returned unchanged.
pub fn combine(reviews: &[(&str, &Verdict)]) -> Option<Verdict> {
    match reviews {
        [] => return None,
        [(_, only)] => return Some((*only).clone()),
        _ => {}
    }
    let decision = if reviews.iter().all(|(_, v)| v.decision == Decision::Approve) {
        Decision::Approve
    } else {
        Decision::Feedback
    };
    let summary = reviews
        .iter()
        .map(|(step, v)| format!("{step}: {}", v.summary))
        .collect::<Vec<_>>()
        .join("\n");
    let issues = reviews
        .iter()
        .flat_map(|(step, v)| {
            v.issues.iter().map(move |issue| {
                let mut issue = issue.clone();
                issue.description = format!("[{step}] {}", issue.description);
                issue
            })
        })
        .collect();
    let mut criteria: Vec<CriterionVerdict> = Vec::new();
    for (step, verdict) in reviews {
        for criterion in &verdict.criteria {
            let attributed = CriterionVerdict {
                evidence: format!("[{step}] {}", criterion.evidence),
                ..criterion.clone()
            };
            match criteria.iter_mut().find(|c| c.id == criterion.id) {
                None => criteria.push(attributed),
                Some(existing) if rank(criterion.status) > rank(existing.status) => {
                    *existing = attributed
                }
                Some(_) => {}
            }
        }
    }
    Some(Verdict {
        decision,
        summary,
        issues,
        criteria,
    })
}

/// How much a status says against the work: the worst one across reviewers wins.
fn rank(status: CriterionStatus) -> u8 {
    match status {
        CriterionStatus::Met => 0,
        CriterionStatus::NotVerified => 1,
        CriterionStatus::NotMet => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::steps::verdict::{Issue, Severity};

    fn verdict(decision: Decision, issue: Option<&str>, status: CriterionStatus) -> Verdict {
        Verdict {
            decision,
            summary: format!("{decision:?}"),
            issues: issue
                .map(|text| Issue {
                    severity: Severity::MustFix,
                    category: "security".into(),
                    description: text.into(),
                    location: String::new(),
                    suggestion: String::new(),
                })
                .into_iter()
                .collect(),
            criteria: vec![CriterionVerdict {
                id: "AC-001".into(),
                status,
                evidence: "looked".into(),
            }],
        }
    }

    #[test]
    fn one_rejection_rejects_and_its_issue_is_attributed() {
        let security = verdict(
            Decision::Feedback,
            Some("SQL injection"),
            CriterionStatus::NotMet,
        );
        let lead = verdict(Decision::Approve, None, CriterionStatus::Met);
        let combined = combine(&[("security_review", &security), ("review", &lead)]).unwrap();
        assert_eq!(combined.decision, Decision::Feedback);
        assert_eq!(combined.issues.len(), 1);
        assert_eq!(
            combined.issues[0].description,
            "[security_review] SQL injection"
        );
        assert_eq!(combined.criteria[0].status, CriterionStatus::NotMet);
        assert!(combined.summary.contains("security_review:"));
        assert!(combined.summary.contains("review:"));
    }

    #[test]
    fn approval_needs_every_reviewer() {
        let a = verdict(Decision::Approve, None, CriterionStatus::Met);
        let b = verdict(Decision::Approve, None, CriterionStatus::NotVerified);
        let combined = combine(&[("a", &a), ("b", &b)]).unwrap();
        assert_eq!(combined.decision, Decision::Approve);
        assert_eq!(combined.criteria[0].status, CriterionStatus::NotVerified);
    }

    #[test]
    fn a_single_verdict_is_unchanged() {
        let only = verdict(Decision::Approve, None, CriterionStatus::Met);
        assert_eq!(combine(&[("review", &only)]), Some(only.clone()));
        assert_eq!(combine(&[]), None);
    }
}
