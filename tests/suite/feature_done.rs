//! A feature whose tasks GuardKit already finished (their files moved to `completed/`,
//! `archived/` or `obsolete/`): the finished task is done, never run again, and its dependants
//! run as if it had landed.

use crate::feature_fixture;

use feature_fixture::{assert_exit, stderr, stdout, Project};

/// TASK-A is finished (only in tasks/completed/, the feature's `file_path` is stale); its
/// Player would write lib/a.txt if it ever ran. TASK-C depends on it.
fn finished_dependency() -> Project {
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo 'from A' > lib/a.txt")
        .task("TASK-C", "test -f lib/c.txt", "echo c > lib/c.txt")
        .feature(
            "FEAT-1",
            "id: FEAT-1\nname: After finished work\ntasks:\n  - id: TASK-A\n    file_path: tasks/backlog/TASK-A.md\n  - id: TASK-C\n    dependencies: [TASK-A]\n",
        )
        .logged();
    let active = project.root.join(".autobuild/tasks/TASK-A.md");
    let finished = project.root.join("tasks/completed/TASK-A/TASK-A.md");
    std::fs::create_dir_all(finished.parent().unwrap()).unwrap();
    std::fs::rename(active, finished).unwrap();
    project.commit()
}

#[test]
fn a_finished_task_is_never_run_again_and_its_dependant_runs_and_lands() {
    let project = finished_dependency();

    let output = project.run(&["feature", "FEAT-1", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    assert_eq!(
        project.starts("TASK-A"),
        0,
        "finished work is not run again"
    );
    assert_eq!(project.starts("TASK-C"), 1);
    let state = project.feature_state("FEAT-1");
    assert_eq!(state["status"], "merged");
    assert_eq!(state["tasks"]["TASK-A"]["status"], "done");
    assert_eq!(state["tasks"]["TASK-C"]["status"], "merged");
    assert!(project.show("main", "lib/c.txt").is_some());
    assert!(project.show("main", "lib/a.txt").is_none());
    let out = stdout(&output);
    assert!(
        out.contains("1 task(s) approved, 1 done before this feature ran (not run again); the feature is merged into main"),
        "{out}"
    );
    let err = stderr(&output);
    assert!(
        err.contains("FEAT-1.yaml:5:16: task file `tasks/backlog/TASK-A.md` does not exist; task `TASK-A` is done (completed: tasks/completed/TASK-A/TASK-A.md)"),
        "{err}"
    );
}

#[test]
fn the_dry_run_shows_the_finished_task_as_done() {
    let project = finished_dependency();

    let output = project.run(&["feature", "FEAT-1", "--dry-run"]);

    assert_exit(&output, 0);
    let out = stdout(&output);
    assert!(
        out.contains("tasks/completed/TASK-A/TASK-A.md · done (completed): not run again"),
        "{out}"
    );
    assert!(out.contains("after TASK-A"), "{out}");
    assert!(
        !project.root.join(".autobuild/runs/FEAT-1").exists(),
        "a dry run creates nothing"
    );

    let json = project.run(&["feature", "FEAT-1", "--dry-run", "--json"]);
    assert_exit(&json, 0);
    let plan: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(plan["tasks"][0]["id"], "TASK-A");
    assert_eq!(plan["tasks"][0]["done"], "completed");
    assert_eq!(plan["tasks"][0]["workflow"], serde_json::Value::Null);
    assert_eq!(plan["tasks"][1]["id"], "TASK-C");
    assert_eq!(plan["tasks"][1]["done"], serde_json::Value::Null);
    assert_eq!(plan["tasks"][1]["workflow"], "player-coach");
}

#[test]
fn a_task_that_exists_nowhere_still_refuses_the_feature_as_guardkit_does() {
    let project = finished_dependency();
    std::fs::remove_dir_all(project.root.join("tasks/completed")).unwrap();

    let output = project.run(&["feature", "FEAT-1", "--dry-run"]);

    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains("FEAT-1.yaml:5:16: task file `tasks/backlog/TASK-A.md` does not exist"),
        "{err}"
    );
    assert!(
        err.contains("no task file declares this id either"),
        "{err}"
    );
}

#[test]
fn a_task_landing_through_the_feature_moves_its_guardkit_file_to_completed() {
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo 'from A' > lib/a.txt")
        .task("TASK-C", "test -f lib/c.txt", "echo c > lib/c.txt")
        .feature(
            "FEAT-1",
            "id: FEAT-1\nname: On the board\ntasks:\n  - id: TASK-A\n    file_path: tasks/backlog/board/TASK-A.md\n  - id: TASK-C\n    dependencies: [TASK-A]\n",
        );
    let board = project.root.join("tasks/backlog/board/TASK-A.md");
    std::fs::create_dir_all(board.parent().unwrap()).unwrap();
    std::fs::rename(project.root.join(".autobuild/tasks/TASK-A.md"), &board).unwrap();
    let project = project.commit();

    let output = project.run(&["feature", "FEAT-1", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-1");
    assert_eq!(state["tasks"]["TASK-A"]["status"], "merged");
    assert_eq!(state["tasks"]["TASK-C"]["status"], "merged");
    // The squashed commit of TASK-A on the feature branch carried the move; main has it.
    assert!(project
        .show("main", "tasks/backlog/board/TASK-A.md")
        .is_none());
    let moved = project
        .show("main", "tasks/completed/board/TASK-A.md")
        .expect("the task file moved to completed/");
    assert!(moved.contains("status: completed"), "{moved}");
    assert!(moved.contains("id: TASK-A"), "{moved}");
    // A task outside GuardKit's folders stays where it is.
    assert!(project.show("main", ".autobuild/tasks/TASK-C.md").is_some());
    // Run again, the feature finds TASK-A finished: done, not run again.
    let again = project.run(&["feature", "FEAT-1", "--dry-run"]);
    let out = stdout(&again);
    assert!(
        out.contains("tasks/completed/board/TASK-A.md · done (completed): not run again"),
        "{out}\n{}",
        stderr(&again)
    );
}
