use std::path::PathBuf;

use super::*;
use crate::steps::check::{CheckResult, CheckStatus, FailureClass};
use crate::steps::verdict::{CriterionVerdict, Decision, Issue, Severity, Verdict};
use base::Keyword;

pub fn requirements(list: &[&str]) -> Vec<Requirement> {
    list.iter().map(|text| text.parse().unwrap()).collect()
}

pub fn passed(name: &str) -> CheckResult {
    CheckResult {
        name: name.to_string(),
        command: format!("run {name}"),
        status: CheckStatus::Passed,
        exit_code: Some(0),
        duration_ms: 120,
        log_path: PathBuf::from(format!(".autobuild/runs/TASK-001/logs/turn-1-{name}.log")),
        summary: String::new(),
        failure_class: None,
        advice: None,
        warning: None,
        advisory: false,
        tests: None,
        oracle: None,
    }
}

pub fn failed(name: &str, summary: &str, class: FailureClass) -> CheckResult {
    CheckResult {
        status: CheckStatus::Failed,
        exit_code: Some(1),
        summary: summary.to_string(),
        failure_class: Some(class),
        advice: Some(match class {
            FailureClass::Infrastructure => "fix the environment, not the tests".to_string(),
            FailureClass::Code => "fix the code".to_string(),
        }),
        ..passed(name)
    }
}

pub fn executable(id: &str, result: Option<CheckResult>) -> CriterionFacts {
    CriterionFacts {
        id: id.to_string(),
        text: format!("{id} holds"),
        verify: Some(format!("check-{id}")),
        result,
    }
}

pub fn judged(id: &str) -> CriterionFacts {
    CriterionFacts {
        id: id.to_string(),
        text: format!("{id} holds"),
        verify: None,
        result: None,
    }
}

pub fn issue(severity: Severity, description: &str) -> Issue {
    Issue {
        severity,
        category: "correctness".to_string(),
        description: description.to_string(),
        location: "src/utils.py:3".to_string(),
        suggestion: String::new(),
    }
}

pub fn verdict(
    decision: Decision,
    issues: Vec<Issue>,
    criteria: &[(&str, CriterionStatus)],
) -> Verdict {
    Verdict {
        decision,
        summary: format!("coach says {}", decision.as_str()),
        issues,
        criteria: criteria
            .iter()
            .map(|(id, status)| CriterionVerdict {
                id: id.to_string(),
                status: *status,
                evidence: format!("evidence for {id}"),
            })
            .collect(),
    }
}

/// A turn that meets the `feature`-like profile `checks.test, criteria, coach, changes`.
pub fn approvable() -> GateInput {
    GateInput {
        requirements: requirements(&["checks.test", "criteria", "coach", "changes"]),
        player: PlayerFacts {
            succeeded: true,
            changed: true,
            failure: None,
        },
        checks: vec![passed("test")],
        criteria: vec![
            executable("AC-001", Some(passed("AC-001"))),
            judged("AC-002"),
        ],
        verdict: Some(verdict(
            Decision::Approve,
            Vec::new(),
            &[
                ("AC-001", CriterionStatus::Met),
                ("AC-002", CriterionStatus::Met),
            ],
        )),
        coach_ran: true,
        objecting: Vec::new(),
        scope_violation: None,
        coverage: None,
    }
}

/// A coverage measurement of `covered` of `total` lines with a minimum of `minimum`%, where
/// `src/greet.py` lines 7-9 and 12 are uncovered.
pub fn coverage(minimum: u8, covered: u64, total: u64) -> crate::steps::coverage::CoverageResult {
    use crate::steps::coverage::{CoverageResult, Format, Measured, Measurement, UncoveredFile};
    CoverageResult {
        check: passed("coverage"),
        report: "coverage.xml".into(),
        minimum,
        measurement: Measurement::Measured(Measured {
            format: Format::Cobertura,
            covered,
            total,
            uncovered_changed: vec![UncoveredFile {
                path: "src/greet.py".into(),
                lines: vec![(7, 9), (12, 12)],
                more: 0,
            }],
            more_files: 0,
        }),
    }
}
