//! A GuardKit board beside autobuild's runs: `autobuild status ID` shows the state folder the
//! task's file sits in now, read at that moment (GuardKit moves files on its own), and a run
//! never moves or rewrites the task file in the user's checkout.

use crate::loop_fixture;

use std::fs;

use loop_fixture::{assert_exit, Project, TASK};

fn stdout(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn status_shows_where_the_task_sits_on_the_board() {
    let project = Project::new();
    let task = project.read(".autobuild/tasks/TASK-1.md");
    fs::remove_file(project.root.join(".autobuild/tasks/TASK-1.md")).unwrap();
    project.write("tasks/in_progress/TASK-1-greeting.md", &task);
    let project = project.commit();

    let output = project.run(&["task", TASK, "--no-merge"]);
    assert_exit(&output, 0);
    // The run left the task file where it was, unchanged.
    assert_eq!(project.read("tasks/in_progress/TASK-1-greeting.md"), task);

    let output = project.run(&["status", TASK]);
    assert_exit(&output, 0);
    let shown = stdout(&output);
    assert!(
        shown.contains("  status:    approved\n  guardkit:  in_progress (tasks/in_progress/TASK-1-greeting.md)\n"),
        "{shown}"
    );

    // GuardKit completes the task: status follows the file.
    fs::create_dir_all(project.root.join("tasks/completed")).unwrap();
    fs::rename(
        project.root.join("tasks/in_progress/TASK-1-greeting.md"),
        project.root.join("tasks/completed/TASK-1-greeting.md"),
    )
    .unwrap();
    let shown = stdout(&project.run(&["status", TASK]));
    assert!(
        shown.contains("  guardkit:  completed (tasks/completed/TASK-1-greeting.md)\n"),
        "{shown}"
    );
}

#[test]
fn a_task_outside_guardkit_folders_shows_no_board_state() {
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    let shown = stdout(&project.run(&["status", TASK]));
    assert!(!shown.contains("guardkit:"), "{shown}");
}
