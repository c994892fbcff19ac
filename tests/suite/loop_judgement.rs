//! The loop's judgement end to end (issue 21): correct work is never blocked by what a
//! reviewer leaves behind, a player may dispute an objection, `changes` means the branch, and
//! a failure that persists stalls the loop whatever else alternates. The real binary on the
//! sample project with scripted `command` agents from tests/fixtures/loop/.

use crate::loop_fixture;

use loop_fixture::{assert_exit, fixture, Project, TASK};

/// The run's warnings, from its event log.
fn warnings(project: &Project) -> String {
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    events
        .lines()
        .filter(|line| line.contains("\"warning\""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The coach script the fixtures below `exec` into.
fn with_checks(project: Project) -> Project {
    project.write(
        ".autobuild/agents/coach_checks.sh",
        &fixture("coach_checks.sh"),
    );
    project
}

#[test]
fn caches_a_reviewer_leaves_are_removed_with_a_warning_and_correct_work_is_approved() {
    let project = with_checks(Project::new().coach("coach_caches.sh")).commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], true);
    let coach = project.record("coach", 1);
    assert_eq!(coach["scope_violation"], serde_json::json!([]), "{coach}");
    let removed = coach["removed_files"].to_string();
    for file in [
        "lib/__pycache__/greet.cpython-312.pyc",
        ".pytest_cache/v/lastfailed",
        "build/out.txt",
    ] {
        assert!(removed.contains(file), "{removed}");
        assert!(!project.worktree().join(file).exists(), "{file} was left");
    }
    let warnings = warnings(&project);
    assert!(
        warnings.contains("`review` (role `coach`) left 3 new file(s)"),
        "{warnings}"
    );
    let env = std::fs::read_to_string(project.run_dir().join("scratch/coach/env.txt")).unwrap();
    assert!(env.contains("PYTHONDONTWRITEBYTECODE=1"), "{env}");
    assert!(env.contains("AUTOBUILD_SCRATCH=/"), "{env}");
}

#[test]
fn a_reviewer_that_edits_a_tracked_file_is_reverted_and_asked_again() {
    let project = with_checks(Project::new().coach("coach_edits_once.sh")).commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], true);
    let coach = project.record("coach", 1);
    assert_eq!(
        coach["reverted_edits"],
        serde_json::json!(["lib/greet.sh", "tests/test_farewell.sh"]),
        "{coach}"
    );
    assert_eq!(coach["verdict"]["decision"], "approve");
    let again = project.run_dir().join("prompts/turn_1_coach_retry1.md");
    let again = std::fs::read_to_string(again).unwrap();
    assert!(again.contains("Your previous run of this review edited lib/greet.sh"));
    let warnings = warnings(&project);
    assert!(warnings.contains("runs the review once more"), "{warnings}");
    assert_eq!(
        std::fs::read_to_string(project.worktree().join("lib/greet.sh")).unwrap(),
        project.show(&project.branch(), "lib/greet.sh")
    );
    assert!(project.worktree().join("tests/test_farewell.sh").exists());
}

#[test]
fn a_reviewer_that_edits_twice_fails_its_review_and_the_player_is_not_blamed() {
    let project = Project::new().coach("coach_edits.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "2"]);

    assert_exit(&output, 3);
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false);
    let feedback = gate["feedback"].to_string();
    assert!(
        feedback.contains("the reviewer `review` (role `coach`) edited files of the checkpoint"),
        "{feedback}"
    );
    assert!(!feedback.contains("an agent changed"), "{feedback}");
    // Turn 2's player rightly changes nothing: the branch still holds the work.
    let reasons = project.record("gate", 2)["reasons"].to_string();
    assert!(!reasons.contains("changed nothing"), "{reasons}");
    assert!(!reasons.contains("no changes"), "{reasons}");
}

#[test]
fn a_player_disputing_a_wrong_objection_changes_nothing_and_is_approved() {
    let project = with_checks(
        Project::new()
            .player("player_disputes.sh")
            .coach("coach_objects_until_disputed.sh"),
    )
    .commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "3"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("player", 2)["changed"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_coach.md")).unwrap();
    assert!(
        prompt.contains("## The Player disputes these objections"),
        "{prompt}"
    );
    assert!(prompt.contains("# Your previous objections"), "{prompt}");
    let player_prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(
        player_prompt
            .contains("## Fix these\n\n1. Add logging to greeting (lib/greet.sh): log each call"),
        "{player_prompt}"
    );
}

#[test]
fn after_an_unusable_review_a_correct_player_that_changes_nothing_is_approved() {
    let project = with_checks(Project::new().coach("coach_unusable_once.sh")).commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "3"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("player", 2)["changed"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(!prompt.contains("[must_fix]"), "{prompt}");
    assert!(!prompt.contains("## Fix these"), "{prompt}");
    assert!(
        prompt.contains("Nothing of this is yours to fix"),
        "{prompt}"
    );
}

#[test]
fn premature_claims_are_never_approved() {
    let project = Project::new().player("player_claims_pass.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "4"]);

    assert_ne!(output.status.code(), Some(0));
    for turn in 1..=4 {
        let gate = project.run_dir().join(format!("gate_turn_{turn}.json"));
        if gate.exists() {
            assert_eq!(project.record("gate", turn)["approved"], false);
        }
    }
}

#[test]
fn one_failure_persisting_while_another_alternates_stalls_the_loop() {
    let project = Project::new()
        .player("player_alternates.sh")
        .config("\n[checks.lint]\ncmd = \"test ! -e lint.bad\"\ntimeout = \"10s\"\n")
        .commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "18"]);

    assert_exit(&output, 4);
    assert_eq!(project.state()["status"], "stalled");
    let lint_failed = |turn| {
        project.record("verify", turn)["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|check| check["name"] == "lint" && check["status"] == "failed")
    };
    assert_ne!(lint_failed(1), lint_failed(2), "lint flips between turns");
    assert_ne!(lint_failed(2), lint_failed(3), "lint flips between turns");
    assert!(!project.run_dir().join("gate_turn_5.json").exists());
}

/// Issue 43, item 5: an approval whose evidence cites a test the repository does not have is
/// asked again, told the name; a reviewer that keeps citing it does not approve the turn. One
/// that cites a test that exists is approved.
#[test]
fn evidence_citing_a_test_nobody_wrote_is_not_evidence() {
    let coach = |cited: &str| {
        format!(
            "cat > /dev/null\nprintf '```json\\n{{\"decision\": \"approve\", \"summary\": \"done\", \"issues\": [], \"criteria\": [{{\"id\": \"AC-001\", \"status\": \"met\", \"evidence\": \"{cited} passes\"}}]}}\\n```\\n'\n"
        )
    };
    let invented = Project::new();
    invented.write(
        ".autobuild/agents/coach.sh",
        &coach("tests/test_greet.sh::test_greeting_keeps_unicode"),
    );
    let invented = invented.commit();

    let output = invented.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let review = invented.record("coach", 1);
    assert_eq!(review["retried"], true, "{review}");
    let retry =
        std::fs::read_to_string(invented.run_dir().join("prompts/turn_1_coach_retry1.md")).unwrap();
    assert!(
        retry.contains("`test_greeting_keeps_unicode`, which no test file of the repository has"),
        "{retry}"
    );
    assert_eq!(invented.record("gate", 1)["approved"], false);

    let real = Project::new();
    real.write(
        ".autobuild/agents/coach.sh",
        &coach("tests/test_farewell.sh::test_farewell"),
    );
    let real = real.commit();
    assert_exit(
        &real.run(&["task", TASK, "--auto-merge", "--max-turns", "1"]),
        0,
    );
    assert_eq!(real.record("coach", 1)["retried"], false);
}
