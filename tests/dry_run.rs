//! `--dry-run` never changes anything, and still shows the whole plan when the run could not
//! start, naming what blocks it.

mod loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

#[test]
fn a_blocked_dry_run_prints_the_plan_and_what_blocks_it() {
    let project = Project::new().commit();
    let before = project.git(&["for-each-ref"]);

    let output = project.run_with_env(
        &["task", TASK, "--dry-run", "--agent", "claude-code"],
        &[("PATH", "/usr/bin:/bin")],
    );

    assert_exit(&output, 2);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Plan for TASK-1"), "{stdout}");
    assert!(stdout.contains("CANNOT START: role `player`"), "{stdout}");
    assert!(
        stdout.contains("npm install -g @anthropic-ai/claude-code"),
        "{stdout}"
    );
    assert!(stdout.contains("rendered prompt: turn 1"), "{stdout}");
    assert!(!project.run_dir().exists());
    assert!(!project.worktree().exists());
    assert_eq!(project.git(&["for-each-ref"]), before);
}

#[test]
fn a_runnable_dry_run_exits_0_and_creates_nothing() {
    let project = Project::new().commit();
    let before = project.git(&["status", "--porcelain", "--ignored"]);

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 0);
    assert!(!project.run_dir().exists());
    assert_eq!(project.git(&["status", "--porcelain", "--ignored"]), before);
}
