//! A GuardKit board beside autobuild's runs: `autobuild status ID` shows the state folder the
//! task's file sits in now, read at that moment (GuardKit moves files on its own); a run never
//! moves or rewrites the task file until its task lands, and the landing moves it to the
//! board's `completed/` folder — never over a file, never through a link.

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
        shown.contains("  status:    approved\n  guardkit:  in_progress (tasks/in_progress/TASK-1-greeting.md); this run: in_review\n"),
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
        shown.contains(
            "  guardkit:  completed (tasks/completed/TASK-1-greeting.md); this run: in_review\n"
        ),
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

/// A project whose task sits on a GuardKit board at `path`, committed.
fn board_project(path: &str, extra: &[(&str, &str)]) -> (Project, String) {
    board_project_with(Project::new(), path, extra)
}

fn board_project_with(project: Project, path: &str, extra: &[(&str, &str)]) -> (Project, String) {
    let task = project.read(".autobuild/tasks/TASK-1.md");
    fs::remove_file(project.root.join(".autobuild/tasks/TASK-1.md")).unwrap();
    let task = task.replacen("---\n", "---\nstatus: in_review\n", 1);
    project.write(path, &task);
    for (file, text) in extra {
        project.write(file, text);
    }
    (project.commit(), task)
}

#[test]
fn a_landed_task_s_file_moves_to_completed_in_the_landing_commit() {
    let (project, task) = board_project("tasks/in_review/TASK-1-greeting.md", &[]);

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    // One squashed commit carries the work and the move; the checkout follows it.
    assert_eq!(project.git(&["rev-list", "--count", "main"]).trim(), "2");
    let files = project.git(&["show", "--no-renames", "--name-status", "--format=", "main"]);
    assert!(
        files.contains("D\ttasks/in_review/TASK-1-greeting.md"),
        "{files}"
    );
    assert!(
        files.contains("A\ttasks/completed/TASK-1-greeting.md"),
        "{files}"
    );
    assert!(files.contains("lib/greet.sh"), "{files}");
    let moved = project.show("main", "tasks/completed/TASK-1-greeting.md");
    assert_eq!(
        moved,
        task.replace("status: in_review", "status: completed")
    );
    assert_eq!(project.read("tasks/completed/TASK-1-greeting.md"), moved);
    assert!(!project
        .root
        .join("tasks/in_review/TASK-1-greeting.md")
        .exists());
    assert_eq!(project.git(&["status", "--porcelain"]).trim(), "");
    // The merge step says what it moved (its summary in the event stream).
    let events = fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    assert!(
        events.lines().any(|line| line.contains(r#""step_finished""#)
            && line.contains("moved the task file tasks/in_review/TASK-1-greeting.md to tasks/completed/TASK-1-greeting.md")),
        "{events}"
    );
}

#[test]
fn a_fast_forward_landing_moves_the_file_in_a_commit_on_top_of_the_approved_one() {
    let (project, task) = board_project_with(
        Project::new().config("\n[project]\nmerge_strategy = \"ff\"\n"),
        "tasks/in_review/auth/TASK-1-greeting.md",
        &[],
    );
    let before = project.git(&["rev-parse", "main"]).trim().to_string();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    // main only moved forward: the approved commits, then one commit with the move on top.
    assert_eq!(
        project
            .git(&["merge-base", "--is-ancestor", &before, "main"])
            .trim(),
        ""
    );
    let top = project.git(&[
        "show",
        "--no-renames",
        "--name-status",
        "--format=%s",
        "main",
    ]);
    assert_eq!(
        top.lines().filter(|l| !l.is_empty()).collect::<Vec<_>>(),
        [
            "TASK-1: move its task file to tasks/completed/auth/TASK-1-greeting.md",
            "A\ttasks/completed/auth/TASK-1-greeting.md",
            "D\ttasks/in_review/auth/TASK-1-greeting.md",
        ],
        "{top}"
    );
    // The approved commit is main's parent, unchanged: the work landed as approved.
    let state: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(project.run_dir().join("state.json")).unwrap())
            .unwrap();
    let parent = project.git(&["rev-parse", "main^"]).trim().to_string();
    assert!(
        state.to_string().contains(&parent),
        "main^ {parent} is a commit the run recorded"
    );
    assert!(!project.show("main^", "lib/greet.sh").is_empty());
    assert!(project
        .show("main^", "tasks/in_review/auth/TASK-1-greeting.md")
        .contains("status: in_review"));
    assert_eq!(
        project.show("main", "tasks/completed/auth/TASK-1-greeting.md"),
        task.replace("status: in_review", "status: completed")
    );
    assert!(!project
        .root
        .join("tasks/in_review/auth/TASK-1-greeting.md")
        .exists());
    assert_eq!(project.git(&["status", "--porcelain"]).trim(), "");
}

#[test]
fn a_file_already_at_the_destination_is_never_overwritten_and_the_work_still_lands() {
    let (project, task) = board_project(
        "tasks/in_review/TASK-1-greeting.md",
        &[(
            "tasks/completed/TASK-1-greeting.md",
            "the user's own file\n",
        )],
    );

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    assert_eq!(
        project.show("main", "tasks/completed/TASK-1-greeting.md"),
        "the user's own file\n"
    );
    assert_eq!(
        project.show("main", "tasks/in_review/TASK-1-greeting.md"),
        task
    );
    let shown = format!("{}{}", stdout(&output), loop_fixture::stderr(&output));
    assert!(
        shown.contains("the task file tasks/in_review/TASK-1-greeting.md stays where it is, not moved to tasks/completed/TASK-1-greeting.md: tasks/completed/TASK-1-greeting.md is already there"),
        "{shown}"
    );
}

#[test]
fn a_completed_folder_that_is_a_link_is_not_followed() {
    let project = Project::new();
    let task = project.read(".autobuild/tasks/TASK-1.md");
    fs::remove_file(project.root.join(".autobuild/tasks/TASK-1.md")).unwrap();
    project.write(".guardkit/tasks/backlog/TASK-1.md", &task);
    fs::create_dir_all(project.root.join("elsewhere")).unwrap();
    fs::create_dir_all(project.root.join(".guardkit/tasks")).unwrap();
    std::os::unix::fs::symlink(
        "../../elsewhere",
        project.root.join(".guardkit/tasks/completed"),
    )
    .unwrap();
    let project = project.commit();

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert_eq!(
        project.show("main", ".guardkit/tasks/backlog/TASK-1.md"),
        task
    );
    assert!(fs::read_dir(project.root.join("elsewhere"))
        .unwrap()
        .next()
        .is_none());
    let shown = loop_fixture::stderr(&output);
    assert!(
        shown.contains(".guardkit/tasks/completed is already there"),
        "{shown}"
    );
}

#[test]
fn complete_moves_the_file_too_and_says_so() {
    let (project, _) = board_project(".guardkit/tasks/TASK-1.md", &[]);
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    // Until it lands, the file stays where it is.
    assert!(project.root.join(".guardkit/tasks/TASK-1.md").is_file());

    let output = project.run(&["complete", TASK]);

    assert_exit(&output, 0);
    assert!(
        stdout(&output).contains(
            "moved the task file .guardkit/tasks/TASK-1.md to .guardkit/tasks/completed/TASK-1.md"
        ),
        "{}",
        stdout(&output)
    );
    assert!(project
        .show("main", ".guardkit/tasks/completed/TASK-1.md")
        .contains("status: completed"));
    assert!(!project.root.join(".guardkit/tasks/TASK-1.md").exists());
}
