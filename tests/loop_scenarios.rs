//! End-to-end scenarios of the Player/Coach loop (DESIGN.md §5): the real binary on a temp
//! project with scripted agents; assertions on exit codes, run records, reports and git state.

mod loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

#[test]
fn approved_on_turn_one_is_merged_and_cleaned_up() {
    let project = Project::new().commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    assert!(project
        .show("main", "tests/test_greet.sh")
        .contains("greeting Ada"));
    assert!(
        !project.worktree().exists(),
        "worktree should be removed after the merge"
    );
    assert!(!project.branch_exists(&project.branch()));
    assert_eq!(project.state()["status"], "merged");
    assert_eq!(project.record("gate", 1)["approved"], true);
    assert!(!project.run_dir().join("player_turn_2.json").exists());
    let report = project.report();
    assert!(report.to_lowercase().contains("approved"), "{report}");
    assert!(report.to_lowercase().contains("merged"), "{report}");
    assert!(!report.contains("## Why it stopped"), "{report}");
}

#[test]
fn feedback_from_turn_one_reaches_the_turn_two_prompt() {
    let project = Project::new().player("player_learns.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    // The runner's failing check summary (the test's own error line) …
    assert!(
        prompt.contains(r#"expected "Hello, Ada!", got "Hello, Ada""#),
        "turn 2 prompt lacks the check summary:\n{prompt}"
    );
    // … and the coach's must_fix issue.
    assert!(
        prompt.contains("COACH-ISSUE-EXCLAMATION"),
        "turn 2 prompt lacks the coach issue:\n{prompt}"
    );
    assert_eq!(project.state()["status"], "approved");
    assert!(project.worktree().exists(), "--no-merge keeps the worktree");
    assert!(project.branch_exists(&project.branch()));
    assert!(!project.show("main", "lib/greet.sh").contains("greeting()"));
}

#[test]
fn a_player_claiming_success_is_not_believed() {
    let project = Project::new().player("player_claims_pass.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "2"]);

    assert_exit(&output, 3);
    for turn in 1..=2 {
        let player = project.record("player", turn);
        assert!(player["agent"]["final_message"]
            .as_str()
            .unwrap()
            .contains("all tests pass"));
        assert_eq!(project.record("verify", turn)["passed"], false);
        assert_eq!(project.record("gate", turn)["approved"], false);
    }
}

#[test]
fn turn_limit_blocks_and_preserves_the_work() {
    let project = Project::new().player("player_claims_pass.sh").commit();

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "2"]);

    assert_exit(&output, 3);
    assert_eq!(project.state()["status"], "blocked");
    assert!(project.worktree().is_dir(), "worktree must be preserved");
    assert!(project.branch_exists(&project.branch()));
    assert!(project
        .show(&project.branch(), "lib/greet.sh")
        .contains("Hello, %s?"));
    assert!(!project.show("main", "lib/greet.sh").contains("greeting()"));
    assert!(!project.run_dir().join("player_turn_3.json").exists());
    let report = project.report();
    for section in [
        "## Why it stopped",
        "## Last feedback",
        "## Suggested actions",
    ] {
        assert!(
            report.contains(section),
            "report lacks {section}:\n{report}"
        );
    }
    let worktree = project.worktree().display().to_string();
    assert!(
        report.contains(&worktree),
        "report lacks {worktree}:\n{report}"
    );
}

#[test]
fn repeated_infrastructure_failure_with_new_test_names_stalls() {
    let project = Project::new().player("player_stall.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "8"]);

    assert_exit(&output, 4);
    assert_eq!(project.state()["status"], "stalled");
    let turns = (1..=8)
        .filter(|n| {
            project
                .run_dir()
                .join(format!("gate_turn_{n}.json"))
                .exists()
        })
        .count();
    assert!(turns <= 5, "stall detected only after {turns} turns");
    // The test names really differed between turns.
    let files = |turn| project.record("player", turn)["files_changed"].to_string();
    assert_ne!(files(1), files(2));
    assert!(project.report().to_lowercase().contains("stall"));
}

const PROJECT_ENV: &str = r#"
[env]
vars = { GREETING_STYLE = "loud" }
path_prepend = ["tools"]
"#;

/// A committed tool and a test that only pass in the declared project environment.
fn env_dependent(project: Project) -> Project {
    project.write(
        "tools/shout",
        "#!/bin/sh\nprintf '%s\\n' \"$1\" | tr '[:lower:]' '[:upper:]'\n",
    );
    std::fs::set_permissions(
        project.root.join("tools/shout"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    project.write(
        "tests/test_env.sh",
        "[ \"$GREETING_STYLE\" = loud ] || { echo \"error: GREETING_STYLE unset\"; exit 1; }\n\
         [ \"$(shout hi)\" = HI ] || { echo \"error: shout not found\"; exit 1; }\n",
    );
    project
}

#[test]
fn project_env_is_shared_by_agents_and_checks() {
    let project = env_dependent(Project::new().player("player_env.sh"))
        .config(PROJECT_ENV)
        .commit();

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(
        project.record("player", 1)["agent"]["status"]["status"],
        "succeeded"
    );
    assert_eq!(project.record("verify", 1)["passed"], true);
}

#[test]
fn without_the_project_env_the_same_check_fails() {
    let project = env_dependent(Project::new()).commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert_eq!(verify["passed"], false);
    let summary = verify["checks"].to_string();
    assert!(summary.contains("GREETING_STYLE unset"), "{summary}");
}

#[test]
fn coach_edits_are_reverted_and_block_approval() {
    let project = Project::new().coach("coach_edits.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    // It edits a tracked file in its run and in the re-run: its approval does not count.
    let coach = project.record("coach", 1);
    assert_eq!(coach["verdict"]["decision"], "feedback");
    assert_eq!(coach["reverted_edits"], serde_json::json!(["lib/greet.sh"]));
    assert_eq!(
        coach["removed_files"],
        serde_json::json!(["coach_note.txt"])
    );
    assert_eq!(project.record("gate", 1)["approved"], false);
    let checkpoint = project.show(&project.branch(), "lib/greet.sh");
    assert!(!checkpoint.contains("coach was here"));
    let in_worktree = std::fs::read_to_string(project.worktree().join("lib/greet.sh")).unwrap();
    assert_eq!(in_worktree, checkpoint, "the coach's edit must be reverted");
    assert!(!project.worktree().join("coach_note.txt").exists());
}

#[test]
fn an_unparseable_coach_answer_is_never_approval() {
    let project = Project::new().coach("coach_garbage.sh").commit();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let coach = project.record("coach", 1);
    assert_eq!(coach["retried"], true);
    assert!(coach["verdict_error"]
        .as_str()
        .is_some_and(|e| !e.is_empty()));
    assert_eq!(coach["verdict"]["decision"], "feedback");
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false);
    let gate_text = format!("{}{}", gate["reasons"], gate["feedback"]);
    assert!(gate_text.contains("coach_output_invalid"), "{gate_text}");
}

#[test]
fn a_hanging_agent_is_killed_with_its_children_and_the_loop_goes_on() {
    let project = Project::new()
        .player("player_hang.sh")
        .player_timeout("2s")
        .commit();
    let started = std::time::Instant::now();

    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "2"]);

    assert_exit(&output, 3);
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
    for turn in 1..=2 {
        let player = project.record("player", turn);
        assert_eq!(player["agent"]["status"]["status"], "timed_out", "{player}");
        assert_eq!(project.record("gate", turn)["approved"], false);
        let scratch = project.run_dir().join("scratch");
        let pgid = loop_fixture::read_pid(&scratch.join(format!("hang_pgid_turn{turn}")));
        let child = loop_fixture::read_pid(&scratch.join(format!("hang_child_turn{turn}.pid")));
        let survivors = loop_fixture::live_group_members(pgid);
        assert!(
            survivors.is_empty(),
            "turn {turn}: group {pgid} still has {survivors:?}"
        );
        assert!(
            !loop_fixture::process_alive(child),
            "turn {turn}: background child {child} survived"
        );
    }
}

#[test]
fn a_reviewer_repeating_one_objection_while_the_checks_pass_stalls_instead_of_spending_every_turn()
{
    let project = Project::new()
        .player("player_polishes.sh")
        .coach("coach_too_strict.sh")
        .commit();

    let output = project.run(&["task", TASK, "--max-turns", "8"]);

    assert_exit(&output, 4);
    assert_eq!(project.state()["status"], "stalled");
    assert!(project.run_dir().join("player_turn_4.json").exists());
    assert!(
        !project.run_dir().join("player_turn_5.json").exists(),
        "nudged after turn 3, stopped after turn 4"
    );
}

#[test]
fn a_command_agent_whose_script_is_missing_fails_preflight_before_anything_is_created() {
    let project = Project::new().commit();
    project.git(&["rm", "-q", ".autobuild/agents/player.sh"]);
    project.git(&["commit", "-q", "-m", "the player script is gone"]);

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "role `player` runs `sh .autobuild/agents/player.sh`: `.autobuild/agents/player.sh` does not exist"
        ),
        "{stderr}"
    );
    assert!(!project.worktree().exists());
    assert!(!project.branch_exists(&project.branch()));
    assert!(!project.run_dir().exists());
}
