//! `autobuild task <ID> --base <BRANCH>`: a task run branched from, and merging into, a branch
//! other than the current one — what a feature's CI jobs use to run a task on the feature branch.

use crate::feature_fixture;

use feature_fixture::{assert_exit, json, stdout, Project};

#[test]
fn a_task_runs_on_the_named_base_and_leaves_the_current_branch_alone() {
    let project = Project::new()
        .task(
            "TASK-A",
            "test -f lib/a.txt && test -f lib/topic.txt",
            "echo a > lib/a.txt",
        )
        .commit();
    project.git(&["branch", "topic"]);
    project.git(&["checkout", "-q", "topic"]);
    project.write("lib/topic.txt", "only on topic\n");
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "topic work"]);
    project.git(&["checkout", "-q", "main"]);
    let dry_run = project.run(&["task", "TASK-A", "--base", "topic", "--dry-run"]);
    assert_exit(&dry_run, 0);
    assert!(
        stdout(&dry_run).contains("branch:     autobuild/TASK-A from topic"),
        "{}",
        stdout(&dry_run)
    );

    let output = project.run(&[
        "task",
        "TASK-A",
        "--base",
        "topic",
        "--no-merge",
        "--max-turns",
        "1",
    ]);

    assert_exit(&output, 0);
    let state = json(&project.run_dir("TASK-A").join("state.json"));
    assert_eq!(state["base_branch"], "topic");
    assert_eq!(state["status"], "approved");
    // The task's branch starts from topic (its criterion needed topic's file) and main is as it was.
    assert!(project.show("autobuild/TASK-A", "lib/topic.txt").is_some());
    assert!(project.show("autobuild/TASK-A", "lib/a.txt").is_some());
    assert!(project.show("main", "lib/a.txt").is_none());
    assert_eq!(project.git(&["branch", "--show-current"]).trim(), "main");
}

#[test]
fn a_missing_base_is_refused_before_anything_is_created() {
    let project = Project::new()
        .task("TASK-A", "true", "echo a > lib/a.txt")
        .commit();

    let output = project.run(&["task", "TASK-A", "--base", "nope", "--max-turns", "1"]);

    assert_exit(&output, 2);
    assert!(!project.run_dir("TASK-A").exists());
    assert!(!project.branch_exists("autobuild/TASK-A"));
}

/// A Conductor workspace is a linked worktree on a branch of its own: a run started there
/// branches from, and lands on, that checkout's branch (docs/config.md's default base, "the branch
/// checked out when the run starts"); its records live in that checkout, and the main checkout
/// and its branch are left alone.
#[test]
fn a_run_started_in_a_linked_worktree_lands_on_that_worktrees_branch() {
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .commit();
    let workspace = project.outside("workspace");
    project.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "conductor/ws",
        workspace.to_str().unwrap(),
    ]);
    let main_before = project.git(&["rev-parse", "main"]);

    let output = project.run_in(
        &workspace,
        &["task", "TASK-A", "--max-turns", "1", "--auto-merge"],
    );

    assert_exit(&output, 0);
    let state = json(&workspace.join(".autobuild/runs/TASK-A/state.json"));
    assert_eq!(state["base_branch"], "conductor/ws");
    assert_eq!(state["status"], "merged");
    assert!(project.show("conductor/ws", "lib/a.txt").is_some());
    assert_eq!(
        std::fs::read_to_string(workspace.join("lib/a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(project.git(&["rev-parse", "main"]), main_before);
    assert!(!project.root.join("lib/a.txt").exists());
    assert!(!project.root.join(".autobuild/runs/TASK-A").exists());
}
