use super::*;
use crate::steps::check::FailureClass;
use crate::steps::feedback::{
    build_feedback, feedback_signature, infrastructure_lines, turn_signature,
};
use crate::steps::gate::fixtures::*;
use crate::steps::gate::{criteria_met, evaluate, GateInput};
use crate::steps::verdict::{CriterionStatus, Decision, Severity};

fn facts(turn: u32, tree: &str, signature: &str, criteria_met: usize) -> TurnFacts {
    TurnFacts {
        turn,
        tree: tree.to_string(),
        feedback_signature: signature.to_string(),
        criteria_met,
        approved: false,
        infrastructure: Vec::new(),
    }
}

#[test]
fn nothing_to_detect_in_short_or_empty_histories() {
    assert_eq!(detect_stall(&[], 3), None);
    assert_eq!(detect_stall(&[facts(1, "a", "sig", 0)], 3), None);
    assert_eq!(
        detect_stall(&[facts(1, "a", "sig", 0), facts(2, "a", "sig", 0)], 3),
        None
    );
}

#[test]
fn an_unchanged_tree_across_the_window_is_a_stall() {
    let history = [
        facts(1, "t1", "x", 0),
        facts(2, "t2", "y", 0),
        facts(3, "t2", "z", 0),
        facts(4, "t2", "w", 1),
    ];
    assert_eq!(
        detect_stall(&history, 3),
        Some(StallReason::Unchanged {
            turns: 3,
            tree: "t2".into()
        })
    );
    assert_eq!(detect_stall(&history, 4), None);
}

#[test]
fn repeated_feedback_without_progress_is_a_stall() {
    let history = [
        facts(1, "t1", "check test failed", 1),
        facts(2, "t2", "check test failed", 1),
        facts(3, "t3", "check test failed", 0),
    ];
    let reason = detect_stall(&history, 3).unwrap();
    assert_eq!(
        reason,
        StallReason::RepeatedFeedback {
            turns: 3,
            signature: "check test failed".into()
        }
    );
    assert_eq!(
        reason.to_string(),
        "the same failure repeated for 3 turns with no new criteria met: check test failed"
    );
}

#[test]
fn repeated_feedback_with_new_criteria_met_is_progress() {
    let history = [
        facts(1, "t1", "check test failed", 0),
        facts(2, "t2", "check test failed", 1),
        facts(3, "t3", "check test failed", 1),
    ];
    assert_eq!(detect_stall(&history, 3), None);
}

#[test]
fn an_empty_signature_never_counts_as_repeated() {
    let history = [
        facts(1, "t1", "", 0),
        facts(2, "t2", "", 0),
        facts(3, "t3", "", 0),
    ];
    assert_eq!(detect_stall(&history, 3), None);
}

#[test]
fn an_alternating_tree_is_a_stall_whatever_the_window() {
    let history = [
        facts(1, "t0", "s1", 0),
        facts(2, "A", "s2", 0),
        facts(3, "B", "s3", 0),
        facts(4, "A", "s4", 0),
        facts(5, "B", "s5", 0),
    ];
    let expected = Some(StallReason::Oscillation {
        first: "A".into(),
        second: "B".into(),
    });
    assert_eq!(detect_stall(&history, 2), expected);
    assert_eq!(detect_stall(&history, 6), expected);
    assert_eq!(detect_stall(&history[..4], 2), None);
}

#[test]
fn an_approved_latest_turn_is_never_a_stall() {
    let mut history = vec![
        facts(1, "t", "s", 0),
        facts(2, "t", "s", 0),
        facts(3, "t", "s", 0),
    ];
    history[2].approved = true;
    assert_eq!(detect_stall(&history, 3), None);
}

#[test]
fn a_window_below_two_is_treated_as_two() {
    let history = [facts(1, "t1", "s", 0), facts(2, "t1", "s", 0)];
    assert_eq!(detect_stall(&history[..1], 1), None);
    assert!(matches!(
        detect_stall(&history, 0),
        Some(StallReason::Unchanged { turns: 2, .. })
    ));
}

#[test]
fn the_policy_nudges_once_then_stops() {
    let reason = StallReason::Unchanged {
        turns: 3,
        tree: "0123456789abcdef".into(),
    };
    let nudging = StallPolicy { nudge: true };
    assert_eq!(decide(nudging, false, None), StallAction::Continue);
    assert_eq!(decide(nudging, true, None), StallAction::Continue);
    match decide(nudging, false, Some(reason.clone())) {
        StallAction::Nudge(notice) => {
            assert!(notice.contains("identical after each of the last 3 turns (tree 0123456789…)"))
        }
        other => panic!("expected a nudge, got {other:?}"),
    }
    assert_eq!(
        decide(nudging, true, Some(reason.clone())),
        StallAction::Stop(reason.clone())
    );
    assert_eq!(
        decide(StallPolicy { nudge: false }, false, Some(reason.clone())),
        StallAction::Stop(reason)
    );
}

/// The pytest output of a turn in which the player wrote new tests under new names, which fail
/// for the same reason every time: the environment lacks `requests`.
fn pytest_collection_error(turn: u32) -> String {
    let file = format!("tests/test_greeting_attempt_{turn}.py");
    format!(
        "==================================== ERRORS ====================================\n\
         ______________ ERROR collecting {file} ______________\n\
         ImportError while importing test module '/work/repo/.autobuild/worktrees/TASK-001/{file}'.\n\
         {file}:{line}: in <module>\n\
         \x20   from src.utils import greeting_v{turn}\n\
         src/utils.py:1: in <module>\n\
         \x20   import requests\n\
         E   ModuleNotFoundError: No module named 'requests'\n\
         =========================== short test summary info ============================\n\
         ERROR {file}::test_greeting_returns_hello_{turn} - ModuleNotFoundError: No module named 'requests'\n\
         !!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!\n\
         1 error in {duration}s\n",
        line = turn + 2,
        duration = f64::from(turn) * 0.37,
    )
}

fn verify_command_error(turn: u32) -> String {
    format!(
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \
         \"/work/repo/.autobuild/worktrees/TASK-001/src/utils.py\", line {turn}, in <module>\n    \
         import requests\nModuleNotFoundError: No module named 'requests'\n"
    )
}

/// The turn as the engine would see it: failing tests and criterion, and a coach whose wording
/// differs every turn.
fn infrastructure_turn(turn: u32) -> GateInput {
    let mut input = approvable();
    input.checks = vec![failed(
        "test",
        &pytest_collection_error(turn),
        FailureClass::Infrastructure,
    )];
    input.criteria[0].result = Some(failed(
        "AC-001",
        &verify_command_error(turn),
        FailureClass::Infrastructure,
    ));
    let mut coach = verdict(
        Decision::Feedback,
        vec![issue(
            Severity::MustFix,
            &format!("attempt {turn}: tests in tests/test_greeting_attempt_{turn}.py still do not import"),
        )],
        &[
            ("AC-001", CriterionStatus::NotMet),
            ("AC-002", CriterionStatus::NotVerified),
        ],
    );
    coach.summary = format!("Turn {turn}: the player renamed the tests again; they still fail.");
    input.verdict = Some(coach);
    input
}

#[test]
fn renamed_tests_failing_for_the_same_infrastructure_reason_stop_by_turn_five() {
    let policy = StallPolicy::from(StallConfig {
        window: 3,
        nudge: true,
    });
    let mut history = Vec::new();
    let mut nudged_at = None;
    let mut stopped_at = None;
    for turn in 1..=10 {
        let input = infrastructure_turn(turn);
        let decision = evaluate(&input);
        let feedback = build_feedback(&input, &decision);
        history.push(TurnFacts {
            turn,
            tree: format!("tree-{turn}"),
            feedback_signature: feedback_signature(&feedback),
            criteria_met: criteria_met(&input),
            approved: decision.approved,
            // This test is about the repeated-feedback rule alone; the infrastructure rule
            // (which stops these turns at turn 2) is tested below.
            infrastructure: Vec::new(),
        });
        match decide(policy, nudged_at.is_some(), detect_stall(&history, 3)) {
            StallAction::Continue => {}
            StallAction::Nudge(notice) => {
                assert!(
                    notice.contains("the same failure repeated for 3 turns"),
                    "{notice}"
                );
                nudged_at = Some(turn);
            }
            StallAction::Stop(reason) => {
                assert!(matches!(reason, StallReason::RepeatedFeedback { .. }));
                stopped_at = Some(turn);
                break;
            }
        }
    }
    assert_eq!(nudged_at, Some(3));
    let stopped_at = stopped_at.expect("the loop must stop on the stall");
    assert!(stopped_at <= 5, "stopped at turn {stopped_at}");
}

#[test]
fn turns_failing_for_different_reasons_are_not_a_stall() {
    let reasons = [
        "E   ModuleNotFoundError: No module named 'requests'",
        "E   AssertionError: assert 'Hi, Ada' == 'Hello, Ada!'",
        "E   TypeError: greeting() missing 1 required positional argument: 'name'",
    ];
    let history: Vec<TurnFacts> = reasons
        .iter()
        .zip(1..)
        .map(|(summary, turn)| {
            let mut input = approvable();
            input.checks = vec![failed("test", summary, FailureClass::Code)];
            let decision = evaluate(&input);
            TurnFacts {
                turn,
                tree: format!("tree-{turn}"),
                feedback_signature: feedback_signature(&build_feedback(&input, &decision)),
                criteria_met: criteria_met(&input),
                approved: decision.approved,
                infrastructure: Vec::new(),
            }
        })
        .collect();
    assert_eq!(detect_stall(&history, 3), None);
}

#[test]
fn each_failure_is_judged_on_its_own() {
    // (signatures of the window's turns, criteria met per turn, stalls?)
    let table: &[(&[&str], &[usize], bool)] = &[
        (&["a\nb", "a\nc", "a"], &[0, 0, 0], true),
        (&["a\nb", "b\nc", "a\nc"], &[0, 0, 0], false),
        (&["a\nb", "a\nc", "a"], &[0, 1, 0], false),
        (&["", "", ""], &[0, 0, 0], false),
        (
            &[
                "x\ncriterion AC-001",
                "criterion AC-001",
                "criterion AC-001\ny",
            ],
            &[1, 1, 1],
            true,
        ),
    ];
    for (signatures, met, stalls) in table {
        let history: Vec<TurnFacts> = signatures
            .iter()
            .zip(met.iter())
            .zip(1..)
            .map(|((signature, met), turn)| facts(turn, &format!("t{turn}"), signature, *met))
            .collect();
        assert_eq!(
            detect_stall(&history, 3).is_some(),
            *stalls,
            "{signatures:?} {met:?}"
        );
    }
}

/// Seed 004: the test check fails identically every turn while the lint check flips between
/// passing and failing, and the criterion stays unmet: the whole signature never repeats, but
/// the persistent failure stalls the loop (a nudge at turn 3, the stop at turn 4).
#[test]
fn one_failure_persisting_while_another_alternates_stalls() {
    let policy = StallPolicy::from(StallConfig {
        window: 3,
        nudge: true,
    });
    let mut history = Vec::new();
    let mut nudged = false;
    let mut stopped_at = None;
    for turn in 1..=18 {
        let mut input = approvable();
        input.requirements = requirements(&["checks.test", "checks.lint", "criteria"]);
        input.checks = vec![failed(
            "test",
            "E   AssertionError: assert 'Hi' == 'Hello'",
            FailureClass::Code,
        )];
        input.checks.push(if turn % 2 == 0 {
            failed(
                "lint",
                &format!("E501 line {turn} too long"),
                FailureClass::Code,
            )
        } else {
            passed("lint")
        });
        input.criteria[0].result = Some(failed("AC-001", "exit 1", FailureClass::Code));
        let decision = evaluate(&input);
        let feedback = build_feedback(&input, &decision);
        history.push(TurnFacts {
            turn,
            tree: format!("tree-{turn}"),
            feedback_signature: turn_signature(&decision, &feedback),
            criteria_met: criteria_met(&input),
            approved: decision.approved,
            infrastructure: infrastructure_lines(&feedback),
        });
        match decide(policy, nudged, detect_stall(&history, 3)) {
            StallAction::Continue => {}
            StallAction::Nudge(_) => nudged = true,
            StallAction::Stop(reason) => {
                let StallReason::RepeatedFeedback { signature, .. } = reason else {
                    panic!("{reason}");
                };
                assert!(signature.contains("check test failed"), "{signature}");
                assert!(!signature.contains("lint"), "{signature}");
                stopped_at = Some(turn);
                break;
            }
        }
    }
    assert_eq!(stopped_at, Some(4));
}

#[test]
fn the_same_environment_failure_on_two_consecutive_turns_stops_at_once() {
    let policy = StallPolicy::from(StallConfig {
        window: 3,
        nudge: true,
    });
    let mut history = Vec::new();
    let mut stopped = None;
    for turn in 1..=5 {
        let input = infrastructure_turn(turn);
        let decision = evaluate(&input);
        let feedback = build_feedback(&input, &decision);
        history.push(TurnFacts {
            turn,
            tree: format!("tree-{turn}"),
            feedback_signature: turn_signature(&decision, &feedback),
            criteria_met: criteria_met(&input),
            approved: decision.approved,
            infrastructure: infrastructure_lines(&feedback),
        });
        if let StallAction::Stop(reason) = decide(policy, false, detect_stall(&history, 3)) {
            stopped = Some((turn, reason));
            break;
        }
    }
    let (turn, reason) = stopped.expect("an environment failure twice must stop the loop");
    assert_eq!(turn, 2);
    assert!(matches!(reason, StallReason::Infrastructure { .. }));
    let text = reason.to_string();
    assert!(text.contains("[env]"), "{text}");
    assert!(
        text.contains("ModuleNotFoundError") || text.contains("check test"),
        "{text}"
    );
}

#[test]
fn a_criterion_calling_what_the_player_has_not_written_is_not_an_environment_failure() {
    let mut input = infrastructure_turn(1);
    input.checks = vec![passed("test")];
    let feedback = build_feedback(&input, &evaluate(&input));
    assert_eq!(
        feedback.failing_checks.len(),
        1,
        "the criterion still fails"
    );
    assert!(infrastructure_lines(&feedback).is_empty());
}
