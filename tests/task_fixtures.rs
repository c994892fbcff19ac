//! Task files as GuardKit writes them (tests/fixtures/tasks/guardkit) parse without edits.

use std::path::Path;

use autobuild::task::{list_tasks, locate};

const GUARDKIT: &str = "tests/fixtures/tasks/guardkit";

#[test]
fn a_guardkit_task_keeps_its_sections_and_foreign_keys() {
    let task = locate(Path::new(GUARDKIT), "TASK-AUTH-001").unwrap();
    assert_eq!(task.title, "Implement login endpoint");
    assert_eq!(task.complexity, Some(5));
    assert_eq!(
        task.extra["status"],
        yaml_serde::Value::String("backlog".into())
    );
    assert!(task.extra.contains_key("test_results"));
    assert!(task
        .requirements
        .starts_with("## Description\n\nAdd `POST /login`"));
    assert!(task.requirements.contains("## Implementation Notes"));
    assert!(task
        .requirements
        .contains("- [ ] Unit tests for both outcomes"));
    assert!(!task.requirements.contains("Task: Implement login endpoint"));

    let ids: Vec<&str> = task.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["AC-001", "AC-002", "AC-003"]);
    assert_eq!(
        task.criteria[1].text,
        "Invalid credentials return 401\n- with a JSON error body `{\"error\": \"invalid_credentials\"}`\n- without revealing whether the user exists"
    );
    assert!(task.criteria[2].checked);
    assert_eq!(
        task.criteria[2].verify.as_deref(),
        Some("python -m pytest tests/test_login.py -q")
    );
    assert_eq!(
        task.criteria[2].text,
        "Passwords are compared in constant time"
    );
}

#[test]
fn a_positional_id_taken_by_an_explicit_one_moves_to_the_next_number() {
    let task = locate(Path::new(GUARDKIT), "TASK-AUTH-002").unwrap();
    assert_eq!(task.dependencies, vec!["TASK-AUTH-001"]);
    let ids: Vec<&str> = task.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["AC-002", "AC-003"]);
}

#[test]
fn the_fixture_project_lists_both_tasks() {
    let scan = list_tasks(Path::new(GUARDKIT)).unwrap();
    let ids: Vec<&str> = scan.tasks.iter().map(|t| t.id.as_str()).collect();
    assert_eq!(ids, vec!["TASK-AUTH-001", "TASK-AUTH-002"]);
    assert!(scan.invalid.is_empty());
}
