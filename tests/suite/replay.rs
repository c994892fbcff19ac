//! `autobuild replay` (docs/replay.md): a recorded run judged again under a
//! stricter profile turns its approval into "not approved", with the player provably not
//! called, the recorded run and the repository untouched, and nothing of the replay left.

use std::fs;

use crate::loop_fixture::{assert_exit, Project, TASK};

/// A project whose lint check fails but is advisory (the run is approved); the `strict` profile
/// requires it.
fn project() -> (Project, std::path::PathBuf) {
    let project = Project::new()
        .player("player_counts.sh")
        .coach("coach_counts.sh");
    let calls = project.outside("calls");
    let project = project
        .config(
            "\n[checks.lint]\ncmd = \"echo 'lib/greet.sh:1: line too long' && false\"\nrequired = false\n\n[profiles.strict]\nrequire = [\"checks.test\", \"checks.lint\", \"criteria\", \"coach\", \"changes\"]\n",
        )
        .env("CALLS_LOG", calls.to_str().unwrap())
        .commit();
    (project, calls)
}

fn calls(log: &std::path::Path, who: &str) -> usize {
    fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .filter(|l| *l == who)
        .count()
}

#[test]
fn a_stricter_profile_turns_a_recorded_approval_into_not_approved_without_the_player() {
    let (project, log) = project();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    assert_eq!(calls(&log, "player"), 1);
    assert_eq!(calls(&log, "coach"), 1);
    let state_before = fs::read(project.run_dir().join("state.json")).unwrap();
    let branch_before = project.git(&["rev-parse", "autobuild/TASK-1"]);
    let main_before = project.git(&["rev-parse", "main"]);

    let output = project.run(&["replay", TASK, "--profile", "strict", "--json"]);

    assert_exit(&output, 0);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&output.stdout)));
    assert_eq!(report["profile"], "strict");
    let turn = &report["turns"][0];
    assert_eq!(turn["recorded"]["approved"], true);
    assert_eq!(turn["replayed"]["approved"], false);
    let reasons = turn["replayed"]["reasons"].to_string();
    assert!(reasons.contains("lint"), "{reasons}");
    // The player was not called; the reviewer was asked again.
    assert_eq!(calls(&log, "player"), 1);
    assert_eq!(calls(&log, "coach"), 2);
    // The recorded run and the repository are as they were; nothing of the replay is left.
    assert_eq!(
        fs::read(project.run_dir().join("state.json")).unwrap(),
        state_before
    );
    assert_eq!(
        project.git(&["rev-parse", "autobuild/TASK-1"]),
        branch_before
    );
    assert_eq!(project.git(&["rev-parse", "main"]), main_before);
    assert_eq!(project.git(&["branch", "--list", "autobuild-replay/*"]), "");
    assert!(!project
        .root
        .join(".autobuild/worktrees/TASK-1@replay-1")
        .exists());
    let records = report["records"].as_str().unwrap();
    assert!(
        records.ends_with(".autobuild/runs/.replays/TASK-1/1/TASK-1"),
        "{records}"
    );
    assert!(std::path::Path::new(records)
        .join("gate_turn_1.json")
        .is_file());

    // With the recorded answers, nobody is asked, and under the run's own rules the decision
    // is the recorded one.
    let again = project.run(&["replay", TASK, "--recorded-reviews"]);

    assert_exit(&again, 0);
    let text = String::from_utf8_lossy(&again.stdout);
    assert!(
        text.contains("turn 1: recorded approved, replayed approved"),
        "{text}"
    );
    assert!(!text.contains("differs"), "{text}");
    assert_eq!(calls(&log, "player"), 1);
    assert_eq!(calls(&log, "coach"), 2);
}

#[test]
fn a_run_that_does_not_exist_or_never_checkpointed_is_refused() {
    let (project, _) = project();
    let output = project.run(&["replay", "TASK-NOPE"]);
    assert_exit(&output, 2);
}
