use super::fixtures::*;
use super::*;
use crate::steps::check::FailureClass;
use crate::steps::verdict::{fallback_verdict, CriterionVerdict, Decision, Severity, VerdictError};

#[test]
fn a_turn_meeting_every_requirement_is_approved() {
    let decision = evaluate(&approvable());
    assert!(decision.approved);
    assert!(decision.reasons.is_empty());
    assert!(decision.unmet.is_empty());
}

#[test]
fn a_failed_player_turn_is_never_approved_even_by_an_empty_profile() {
    let mut input = approvable();
    input.requirements = Vec::new();
    input.player.succeeded = false;
    input.player.failure = Some("claude exited with status 1".into());
    let decision = evaluate(&input);
    assert!(!decision.approved);
    assert_eq!(
        decision.unmet,
        vec![UnmetRequirement::PlayerFailed {
            failure: Some("claude exited with status 1".into())
        }]
    );
    assert_eq!(
        decision.reasons,
        vec!["the player's turn failed: claude exited with status 1"]
    );
}

#[test]
fn an_empty_player_turn_is_not_approved_when_changes_are_required() {
    let mut input = approvable();
    input.player.changed = false;
    assert_eq!(evaluate(&input).unmet, vec![UnmetRequirement::NoChanges]);

    input.requirements = requirements(&["checks.test", "criteria", "coach"]);
    assert!(evaluate(&input).approved);
}

#[test]
fn a_scope_violation_always_blocks() {
    let mut input = approvable();
    input.requirements = Vec::new();
    input.scope_violation = Some(vec!["src/utils.py".into()]);
    let decision = evaluate(&input);
    assert!(!decision.approved);
    assert_eq!(
        decision.reasons,
        vec!["an agent changed what its role may not change; the runner reverted src/utils.py"]
    );
}

#[test]
fn an_invalid_coach_verdict_always_blocks_and_is_reported_once() {
    let mut input = approvable();
    input.verdict = Some(fallback_verdict(&VerdictError::Missing));
    let decision = evaluate(&input);
    assert!(!decision.approved);
    assert_eq!(decision.unmet.len(), 1, "{:?}", decision.unmet);
    assert!(matches!(
        decision.unmet[0],
        UnmetRequirement::CoachOutputInvalid { .. }
    ));
    assert!(decision.reasons[0].contains("no JSON verdict"));

    input.requirements = Vec::new();
    assert!(!evaluate(&input).approved);
}

#[test]
fn a_required_check_must_have_run_and_passed() {
    let mut input = approvable();
    input.checks = vec![failed("test", "E   boom", FailureClass::Code)];
    assert_eq!(
        evaluate(&input).unmet,
        vec![UnmetRequirement::CheckFailed {
            name: "test".into(),
            status: CheckStatus::Failed,
            exit_code: Some(1),
            failure_class: Some(FailureClass::Code),
        }]
    );
    assert_eq!(
        evaluate(&input).reasons,
        vec!["required check `test` failed (exit 1, code failure)"]
    );

    input.checks = Vec::new();
    let decision = evaluate(&input);
    assert_eq!(
        decision.unmet,
        vec![UnmetRequirement::CheckNotRun {
            name: "test".into()
        }]
    );
    assert!(decision.reasons[0].contains("[checks.test]"));
    assert!(decision.reasons[0].contains(".autobuild/config.toml"));
}

#[test]
fn a_failing_check_that_is_not_required_does_not_block() {
    let mut input = approvable();
    input
        .checks
        .push(failed("lint", "E501 line too long", FailureClass::Code));
    assert!(evaluate(&input).approved);
}

#[test]
fn criteria_need_passing_commands_and_no_coach_not_met() {
    let mut input = approvable();
    input.criteria[0].result = Some(failed("AC-001", "AssertionError", FailureClass::Code));
    input.verdict = Some(verdict(
        Decision::Feedback,
        Vec::new(),
        &[
            ("AC-001", CriterionStatus::Met),
            ("AC-002", CriterionStatus::NotMet),
        ],
    ));
    input.requirements = requirements(&["criteria"]);
    let decision = evaluate(&input);
    assert_eq!(
        decision.unmet,
        vec![
            UnmetRequirement::Criterion {
                id: "AC-001".into(),
                shortfall: Shortfall::VerifyFailed {
                    status: CheckStatus::Failed,
                    exit_code: Some(1)
                }
            },
            UnmetRequirement::Criterion {
                id: "AC-002".into(),
                shortfall: Shortfall::CoachNotMet {
                    evidence: "evidence for AC-002".into()
                }
            },
        ]
    );
    assert_eq!(
        decision.reasons,
        vec![
            "criterion AC-001 is not met: its verify command failed (exit 1)",
            "criterion AC-002 is not met according to the coach: evidence for AC-002",
        ]
    );
}

#[test]
fn an_executable_criterion_that_did_not_run_is_unmet() {
    let mut input = approvable();
    input.criteria[0].result = None;
    assert_eq!(
        evaluate(&input).unmet,
        vec![UnmetRequirement::Criterion {
            id: "AC-001".into(),
            shortfall: Shortfall::VerifyNotRun
        }]
    );
}

#[test]
fn coach_requirement_needs_an_approving_verdict() {
    let mut input = approvable();
    input.verdict = Some(verdict(
        Decision::Feedback,
        vec![
            issue(Severity::MustFix, "no test"),
            issue(Severity::NiceToHave, "naming"),
        ],
        &[
            ("AC-001", CriterionStatus::Met),
            ("AC-002", CriterionStatus::Met),
        ],
    ));
    let decision = evaluate(&input);
    assert_eq!(
        decision.unmet,
        vec![UnmetRequirement::CoachRequestedChanges {
            must_fix: 1,
            by: Vec::new()
        }]
    );
    assert_eq!(
        decision.reasons,
        vec!["the coach did not approve (1 must-fix issue)"]
    );
    // Reviewers speak as themselves.
    for (by, said) in [
        (
            vec!["coach"],
            "the coach did not approve (1 must-fix issue)",
        ),
        (
            vec!["security"],
            "the security reviewer did not approve (1 must-fix issue)",
        ),
        (
            vec!["security", "coach"],
            "the security and coach reviewers did not approve (1 must-fix issue)",
        ),
    ] {
        input.objecting = by.iter().map(|s| s.to_string()).collect();
        assert_eq!(evaluate(&input).reasons, vec![said]);
    }
    input.objecting = Vec::new();

    input.requirements = requirements(&["checks.test", "criteria", "changes"]);
    assert!(
        evaluate(&input).approved,
        "coach feedback only blocks when required"
    );
}

#[test]
fn coach_requirement_without_a_coach_step_explains_itself() {
    let mut input = approvable();
    input.verdict = None;
    input.coach_ran = false;
    let decision = evaluate(&input);
    assert_eq!(decision.unmet, vec![UnmetRequirement::CoachNotRun]);
    assert!(decision.reasons[0]
        .starts_with("the profile requires a coach verdict but no coach step ran"));

    input.coach_ran = true;
    assert_eq!(
        evaluate(&input).unmet,
        vec![UnmetRequirement::CoachNoVerdict]
    );
}

#[test]
fn every_unmet_requirement_is_listed_once_in_a_stable_order() {
    let mut input = approvable();
    input.requirements = requirements(&["changes", "checks.test", "changes", "coach"]);
    input.player = PlayerFacts {
        succeeded: false,
        changed: false,
        failure: None,
    };
    input.checks = Vec::new();
    input.verdict = None;
    input.coach_ran = false;
    let decision = evaluate(&input);
    assert_eq!(
        decision.unmet,
        vec![
            UnmetRequirement::PlayerFailed { failure: None },
            UnmetRequirement::NoChanges,
            UnmetRequirement::CheckNotRun {
                name: "test".into()
            },
            UnmetRequirement::CoachNotRun,
        ]
    );
    assert_eq!(decision.reasons.len(), 4);
}

#[test]
fn criteria_met_counts_commands_and_coach_judgements() {
    let mut input = approvable();
    assert_eq!(criteria_met(&input), 2);

    input.criteria.push(judged("AC-003"));
    input
        .verdict
        .as_mut()
        .unwrap()
        .criteria
        .push(CriterionVerdict {
            id: "AC-003".into(),
            status: CriterionStatus::NotVerified,
            evidence: String::new(),
        });
    assert_eq!(criteria_met(&input), 2, "not_verified is not met");

    input.verdict.as_mut().unwrap().criteria[0].status = CriterionStatus::NotMet;
    assert_eq!(
        criteria_met(&input),
        1,
        "the coach can veto a passing command"
    );

    input.verdict = None;
    assert_eq!(
        criteria_met(&input),
        1,
        "without a coach only commands count"
    );
}

#[test]
fn unmet_requirements_serialize_with_a_kind_tag() {
    let value = serde_json::to_value(UnmetRequirement::Criterion {
        id: "AC-001".into(),
        shortfall: Shortfall::VerifyNotRun,
    })
    .unwrap();
    assert_eq!(
        value,
        serde_json::json!({"kind": "criterion", "id": "AC-001", "shortfall": {"by": "verify_not_run"}})
    );
}

#[test]
fn coverage_below_the_minimum_blocks_and_names_the_uncovered_changed_lines() {
    // (covered, total, approved)
    for (covered, total, approved) in [(80, 100, true), (95, 100, true), (79, 100, false)] {
        let mut input = approvable();
        input
            .requirements
            .push(Requirement::Coverage { minimum: 80 });
        input.coverage = Some(coverage(80, covered, total));
        let decision = evaluate(&input);
        assert_eq!(decision.approved, approved, "{covered}/{total}");
        if !approved {
            assert_eq!(
                decision.reasons,
                [
                    "line coverage is 79% (79 of 100 lines), below the required 80%; uncovered \
                  lines in the files the branch changed: src/greet.py lines 7-9, 12"
                ]
            );
        }
    }
}

#[test]
fn coverage_that_was_not_measured_is_never_approved() {
    use crate::steps::coverage::Measurement;
    let mut input = approvable();
    input
        .requirements
        .push(Requirement::Coverage { minimum: 50 });
    let decision = evaluate(&input);
    assert!(!decision.approved);
    assert!(decision.reasons[0].contains("the coverage command did not run this turn"));
    let mut measured = coverage(50, 1, 1);
    measured.measurement = Measurement::NotMeasured {
        reason: "the report `coverage.xml` cannot be read: the report is empty".into(),
    };
    input.coverage = Some(measured);
    let decision = evaluate(&input);
    assert!(!decision.approved);
    assert_eq!(
        decision.reasons,
        [
            "line coverage could not be measured: the report `coverage.xml` cannot be read: the \
          report is empty"
        ]
    );
    // Without the requirement, a measurement does not matter.
    input.requirements.pop();
    assert!(evaluate(&input).approved);
}
