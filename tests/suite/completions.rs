//! Value completions, driven as a shell drives them: the binary is called with
//! `COMPLETE=fish` and the words typed so far, and prints one candidate per line (`value`, a
//! tab and its help). Task ids and workflow names come from the project the shell is in.

use crate::loop_fixture;

use std::process::Command;

use loop_fixture::{workflow_fixture, Project};

/// The candidates offered after `words` in `project`.
fn offered(project: &Project, words: &[&str]) -> Vec<String> {
    let output = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .current_dir(&project.root)
        .env("COMPLETE", "fish")
        .env(
            "AUTOBUILD_CONFIG_DIR",
            project.root.join("no-such-config-dir"),
        )
        .env_remove("AUTOBUILD_DIR")
        .arg("--")
        .arg("autobuild")
        .args(words)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| line.split('\t').next().unwrap_or_default().to_string())
        .collect()
}

fn project() -> Project {
    let project = Project::new();
    project.write(
        ".autobuild/workflows/secure.toml",
        &workflow_fixture("secure.toml"),
    );
    project.write(
        "tasks/backlog/TASK-2-farewell.md",
        "---\nid: TASK-2\ntitle: Say goodbye\n---\n# Say goodbye\n\n## Acceptance Criteria\n- [ ] done\n",
    );
    project.commit()
}

#[test]
fn task_ids_of_the_project_are_offered_where_a_task_is_named() {
    let project = project();
    assert_eq!(offered(&project, &["task", "TASK-"]), ["TASK-1", "TASK-2"]);
    assert_eq!(offered(&project, &["task", "TASK-2"]), ["TASK-2"]);
    assert_eq!(
        offered(&project, &["approve", "TASK-"]),
        ["TASK-1", "TASK-2"]
    );
}

#[test]
fn workflow_names_built_in_and_the_project_s_are_offered_for_workflow() {
    let project = project();
    let names = offered(&project, &["task", "TASK-1", "--workflow", ""]);
    for name in [
        "player-coach",
        "solo",
        "guardkit",
        "planned",
        "tdd",
        "secure",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
    assert_eq!(
        offered(&project, &["feature", "F", "--workflow", "sec"]),
        ["secure"]
    );
}

#[test]
fn schema_kinds_are_offered() {
    let project = project();
    let kinds = offered(&project, &["schema", ""]);
    assert_eq!(kinds[..4], ["workflow", "config", "profile", "feature"]);
    assert_eq!(offered(&project, &["schema", "pro"]), ["profile"]);
}

#[test]
fn outside_a_project_no_task_is_offered_and_nothing_fails() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .current_dir(dir.path())
        .env("COMPLETE", "fish")
        .env_remove("AUTOBUILD_DIR")
        .args(["--", "autobuild", "task", "TASK-"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "");
}
