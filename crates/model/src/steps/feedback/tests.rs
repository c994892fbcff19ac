use super::*;
use crate::steps::check::FailureClass;
use crate::steps::gate::fixtures::*;
use crate::steps::gate::{criteria_met, evaluate, PlayerFacts};
use crate::steps::stall::{decide, detect_stall, StallAction, StallPolicy, StallReason, TurnFacts};
use crate::steps::verdict::{
    failed_agent_verdict, fallback_verdict, CriterionStatus, Decision, Issue, Severity,
    VerdictError,
};
use crate::workflow::model::StallConfig;

fn feedback_for(input: &GateInput) -> FeedbackContext {
    build_feedback(input, &evaluate(input))
}

#[test]
fn an_approved_turn_says_so_and_still_reports_non_blocking_failures() {
    let mut input = approvable();
    input
        .checks
        .push(failed("lint", "E501 line too long", FailureClass::Code));
    let feedback = feedback_for(&input);
    assert_eq!(
        feedback.summary,
        "Approved: every required gate holds. Failing but not required: lint. Coach: coach says approve"
    );
    assert_eq!(feedback.failing_checks.len(), 1);
    assert_eq!(feedback.failing_checks[0].name, "lint");
    assert!(feedback.unmet_criteria.is_empty());
}

#[test]
fn a_rejected_turn_lists_every_reason_and_the_coach_summary() {
    let mut input = approvable();
    input.player.changed = false;
    input.checks = vec![failed("test", "E   boom", FailureClass::Code)];
    let feedback = feedback_for(&input);
    assert_eq!(
        feedback.summary,
        "Not approved: 2 unmet requirements: required check `test` failed (exit 1, code \
         failure); the task branch holds no changes against its base. Coach: coach says approve"
    );
}

#[test]
fn issues_put_must_fix_first_and_keep_the_coach_order_otherwise() {
    let mut input = approvable();
    input.verdict = Some(verdict(
        Decision::Feedback,
        vec![
            issue(Severity::NiceToHave, "rename x"),
            issue(Severity::MustFix, "crashes on empty name"),
            issue(Severity::ShouldFix, "missing docstring"),
            issue(Severity::MustFix, "no test"),
        ],
        &[],
    ));
    let described: Vec<(String, String)> = feedback_for(&input)
        .issues
        .into_iter()
        .map(|issue| (issue.severity, issue.description))
        .collect();
    assert_eq!(
        described,
        [
            ("must_fix", "crashes on empty name"),
            ("must_fix", "no test"),
            ("should_fix", "missing docstring"),
            ("nice_to_have", "rename x"),
        ]
        .map(|(severity, description)| (severity.to_string(), description.to_string()))
    );
}

#[test]
fn failing_checks_carry_summary_log_class_and_advice_including_criteria() {
    let mut input = approvable();
    input.checks = vec![failed(
        "test",
        "E   ModuleNotFoundError: No module named 'requests'",
        FailureClass::Infrastructure,
    )];
    input.criteria[0].result = Some(failed("AC-001", "AssertionError", FailureClass::Code));
    let checks = feedback_for(&input).failing_checks;
    assert_eq!(checks.len(), 2);
    let test = &checks[0];
    assert_eq!(test.name, "test");
    assert_eq!(test.status, "failed");
    assert_eq!(test.exit_code, Some(1));
    assert_eq!(
        test.summary,
        "E   ModuleNotFoundError: No module named 'requests'"
    );
    assert_eq!(
        test.log_path,
        ".autobuild/runs/TASK-001/logs/turn-1-test.log"
    );
    assert_eq!(test.failure_class.as_deref(), Some("infrastructure"));
    assert_eq!(
        test.advice.as_deref(),
        Some("fix the environment, not the tests")
    );
    assert_eq!(checks[1].name, "AC-001");
    assert_eq!(checks[1].failure_class.as_deref(), Some("code"));
}

#[test]
fn unmet_criteria_combine_the_command_and_the_coach_reasons() {
    let mut input = approvable();
    input.criteria[0].result = Some(failed("AC-001", "AssertionError", FailureClass::Code));
    input.verdict = Some(verdict(
        Decision::Feedback,
        Vec::new(),
        &[
            ("AC-001", CriterionStatus::NotMet),
            ("AC-002", CriterionStatus::NotMet),
        ],
    ));
    let unmet = feedback_for(&input).unmet_criteria;
    assert_eq!(unmet.len(), 2);
    assert_eq!(unmet[0].id, "AC-001");
    assert_eq!(unmet[0].text, "AC-001 holds");
    assert_eq!(
        unmet[0].reason,
        "its verify command `check-AC-001` failed (exit 1); its output is under the failing \
         check `AC-001`; the coach marked it not met: evidence for AC-001"
    );
    assert_eq!(
        unmet[1].reason,
        "the coach marked it not met: evidence for AC-002"
    );
}

#[test]
fn the_signature_ignores_coach_wording_and_test_names_but_not_the_failure() {
    let with = |summary: &str, coach_summary: &str| {
        let mut input = approvable();
        input.checks = vec![failed("test", summary, FailureClass::Infrastructure)];
        let mut coach = verdict(
            Decision::Feedback,
            vec![issue(Severity::MustFix, coach_summary)],
            &[
                ("AC-001", CriterionStatus::Met),
                ("AC-002", CriterionStatus::NotMet),
            ],
        );
        coach.summary = coach_summary.to_string();
        input.verdict = Some(coach);
        feedback_signature(&feedback_for(&input))
    };
    let first = with(
        "FAILED tests/test_a.py::test_one - ModuleNotFoundError: No module named 'requests'\n1 failed in 0.10s",
        "The tests cannot import requests.",
    );
    let second = with(
        "FAILED tests/unit/test_b_v2.py::test_two_v2 - ModuleNotFoundError: No module named 'requests'\n3 failed in 2.31s",
        "Still failing: the requests package seems to be missing from the environment.",
    );
    let different = with(
        "FAILED tests/test_a.py::test_one - AssertionError: assert 'Hi' == 'Hello'\n1 failed in 0.10s",
        "The tests cannot import requests.",
    );
    assert_eq!(first, second);
    assert_ne!(first, different);
    assert!(first.contains("criterion AC-002"), "{first}");
    assert!(
        first.contains("check test failed exit 1 infrastructure"),
        "{first}"
    );
}

#[test]
fn the_signature_is_empty_when_nothing_failed() {
    let mut input = approvable();
    input.verdict = Some(verdict(
        Decision::Feedback,
        vec![issue(Severity::MustFix, "naming")],
        &[
            ("AC-001", CriterionStatus::Met),
            ("AC-002", CriterionStatus::Met),
        ],
    ));
    assert_eq!(feedback_signature(&feedback_for(&input)), "");
}

/// A turn whose checks and executable criterion pass but whose coach never returns a usable
/// verdict, each time with a different complaint about its output.
fn invalid_coach_turn(turn: u32) -> GateInput {
    let mut input = approvable();
    input.verdict = Some(if turn % 2 == 0 {
        fallback_verdict(&VerdictError::Missing)
    } else {
        failed_agent_verdict(&format!(
            "the coach's output ended after {turn}03 bytes inside a string at line {turn}"
        ))
    });
    input
}

#[test]
fn a_coach_that_never_returns_a_verdict_has_a_stable_signature_and_stalls() {
    let policy = StallPolicy::from(StallConfig {
        window: 3,
        nudge: true,
    });
    let mut history = Vec::new();
    let mut nudged_at = None;
    let mut stopped_at = None;
    for turn in 1..=8 {
        let input = invalid_coach_turn(turn);
        let decision = evaluate(&input);
        let feedback = build_feedback(&input, &decision);
        assert_eq!(
            feedback_signature(&feedback),
            "",
            "no check or criterion failed"
        );
        let signature = turn_signature(&decision, &feedback);
        assert_eq!(signature, "coach output invalid");
        history.push(TurnFacts {
            turn,
            tree: format!("tree-{turn}"),
            feedback_signature: signature,
            criteria_met: criteria_met(&input),
            approved: decision.approved,
            infrastructure: Vec::new(),
        });
        match decide(policy, nudged_at.is_some(), detect_stall(&history, 3)) {
            StallAction::Continue => {}
            StallAction::Nudge(_) => nudged_at = Some(turn),
            StallAction::Stop(reason) => {
                assert!(matches!(reason, StallReason::RepeatedFeedback { .. }));
                stopped_at = Some(turn);
                break;
            }
        }
    }
    assert_eq!(nudged_at, Some(3));
    assert_eq!(stopped_at, Some(4));
}

#[test]
fn the_turn_signature_names_the_player_failure_class_not_its_stderr() {
    let signature_of = |failure: &str| {
        let mut input = approvable();
        input.player = PlayerFacts {
            succeeded: false,
            changed: false,
            failure: Some(failure.to_string()),
        };
        let decision = evaluate(&input);
        turn_signature(&decision, &build_feedback(&input, &decision))
    };
    let first = signature_of(
        "exited with code 1; stderr ends with:\nrequest 3f2a9c1d0b failed at 12:00:01",
    );
    let second = signature_of(
        "exited with code 1; stderr ends with:\nrequest 77ab01ff9e failed at 12:31:44",
    );
    let timed_out = signature_of("timed out (the role's `timeout` was reached)");
    assert_eq!(first, second);
    assert_ne!(first, timed_out);
    assert_eq!(
        first,
        "no changes\nplayer failed: exited with code <n>; stderr ends with:"
    );
}

#[test]
fn the_turn_signature_adds_runner_facts_once_and_a_reviewers_blocking_objections() {
    let mut input = approvable();
    input.checks = vec![failed("test", "E   boom", FailureClass::Code)];
    input.scope_violation = Some(vec!["src/utils.py".to_string()]);
    let decision = evaluate(&input);
    let feedback = build_feedback(&input, &decision);
    let signature = turn_signature(&decision, &feedback);
    assert_eq!(
        signature,
        format!("{}\nscope violation", feedback_signature(&feedback))
    );
    assert_eq!(signature.matches("check test").count(), 1, "{signature}");

    let mut disagreeing = approvable();
    disagreeing.verdict = Some(verdict(
        Decision::Feedback,
        vec![issue(Severity::MustFix, "naming")],
        &[],
    ));
    let decision = evaluate(&disagreeing);
    assert!(!decision.approved);
    assert_eq!(
        turn_signature(&decision, &build_feedback(&disagreeing, &decision)),
        "must_fix correctness: naming"
    );
}

#[test]
fn a_reviewer_restating_an_objection_signs_the_same_a_new_objection_does_not() {
    let signature_of = |issues: Vec<Issue>| {
        let mut input = approvable();
        input.verdict = Some(verdict(Decision::Feedback, issues, &[]));
        let decision = evaluate(&input);
        turn_signature(&decision, &build_feedback(&input, &decision))
    };
    let first = signature_of(vec![
        issue(
            Severity::MustFix,
            "greeting() on line 3 of lib/greet.sh ignores its argument",
        ),
        issue(Severity::NiceToHave, "add a docstring"),
    ]);
    let restated = signature_of(vec![issue(
        Severity::MustFix,
        "greeting() on line 12 of src/greet_v2.sh ignores its argument",
    )]);
    let other = signature_of(vec![issue(
        Severity::MustFix,
        "greeting() prints to stderr instead of stdout",
    )]);
    assert_eq!(first, restated);
    assert_ne!(first, other);
    assert!(!first.contains("docstring"), "{first}");
}

#[test]
fn a_reviewer_repeating_one_objection_while_the_checks_pass_stalls_the_loop() {
    let policy = StallPolicy::from(StallConfig {
        window: 3,
        nudge: true,
    });
    let (mut history, mut nudged, mut stopped_at) = (Vec::new(), false, None);
    for turn in 1..=10 {
        let mut input = approvable();
        input.verdict = Some(verdict(
            Decision::Feedback,
            vec![issue(
                Severity::MustFix,
                &format!("turn {turn}: the error message on line {turn} is still not localised"),
            )],
            &[],
        ));
        let decision = evaluate(&input);
        let feedback = build_feedback(&input, &decision);
        history.push(TurnFacts {
            turn,
            tree: format!("tree-{turn}"),
            feedback_signature: turn_signature(&decision, &feedback),
            criteria_met: criteria_met(&input),
            approved: decision.approved,
            infrastructure: Vec::new(),
        });
        match decide(policy, nudged, detect_stall(&history, 3)) {
            StallAction::Continue => {}
            StallAction::Nudge(_) => nudged = true,
            StallAction::Stop(_) => {
                stopped_at = Some(turn);
                break;
            }
        }
    }
    assert_eq!(stopped_at, Some(4), "nudged at turn 3, stopped at turn 4");
}

#[test]
fn a_check_that_ran_no_tests_is_named_in_the_summary_even_when_it_passed() {
    let mut input = approvable();
    input.checks[0].warning = Some("`test`: cargo test ran no tests".into());
    let feedback = feedback_for(&input);
    assert_eq!(
        feedback.summary,
        "Approved: every required gate holds. Warning: `test`: cargo test ran no tests. Coach: coach says approve"
    );
}

#[test]
fn unmet_coverage_is_a_fix_item_naming_the_uncovered_changed_lines() {
    let mut input = approvable();
    input
        .requirements
        .push(crate::profile::Requirement::Coverage { minimum: 90 });
    input.coverage = Some(crate::steps::gate::fixtures::coverage(90, 72, 100));
    let feedback = feedback_for(&input);
    assert_eq!(feedback.fix.len(), 1, "{:?}", feedback.fix);
    assert!(
        feedback.fix[0].starts_with("Raise line coverage to at least 90%"),
        "{}",
        feedback.fix[0]
    );
    assert!(feedback.fix[0].contains("src/greet.py lines 7-9, 12"));
    // A failing coverage command's output reaches the player like a failing check's.
    let mut failing = crate::steps::gate::fixtures::coverage(90, 72, 100);
    failing.check = failed(
        "coverage",
        "ImportError: pytest_cov",
        FailureClass::Infrastructure,
    );
    failing.measurement = crate::steps::coverage::Measurement::NotMeasured {
        reason: "the coverage command `pytest --cov` failed (exit 1)".into(),
    };
    input.coverage = Some(failing);
    let feedback = feedback_for(&input);
    assert!(
        feedback.fix[0].contains("could not be measured"),
        "{:?}",
        feedback.fix
    );
    assert_eq!(feedback.failing_checks.len(), 1);
    assert_eq!(feedback.failing_checks[0].name, "coverage");
}
