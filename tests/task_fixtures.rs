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
fn the_fixture_project_lists_every_task_file() {
    let scan = list_tasks(Path::new(GUARDKIT)).unwrap();
    let ids: Vec<&str> = scan.tasks.iter().map(|t| t.id.as_str()).collect();
    // The stale backlog copy of TASK-REV-003 is a file of its own; lookup settles which counts.
    assert_eq!(
        ids,
        vec![
            "TASK-AUTH-001",
            "TASK-REV-003",
            "TASK-AUTH-002",
            "TASK-REV-003"
        ]
    );
    assert!(scan.invalid.is_empty());
}

#[test]
fn a_guardkit_review_task_loads_as_guardkit_reads_it() {
    let task = locate(Path::new(GUARDKIT), "TASK-REV-003").unwrap();
    assert!(task
        .path
        .ends_with("tasks/in_review/TASK-REV-003-review-auth.md"));
    assert_eq!(task.task_type, "review");
    assert_eq!(task.complexity, None);
    assert_eq!(task.workflow, None);
    assert_eq!(
        task.extra["status"],
        yaml_serde::Value::String("in_review".into())
    );
    let ids: Vec<&str> = task.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, vec!["AC-001", "AC-002", "AC-003"]);
    assert_eq!(
        task.criteria[0].preamble,
        "Each finding names a file and a line.\n\n### Coverage"
    );
    assert!(task.criteria[2]
        .text
        .starts_with("Severity\n\nEach risk is rated"));
    assert!(task.criteria[2]
        .text
        .ends_with("| high   | exploitable now |"));
    assert_eq!(task.requirements, "## Description\n\nRead `src/api/auth.py` and record what could go wrong in `docs/auth-review.md`.\n\n## Notes\n\nNo code changes are expected.");
    let warnings: Vec<String> = task.warnings.iter().map(|w| w.headline()).collect();
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].contains(":7:1: `status` is given more than once"));
    assert!(warnings[1].contains(":8:1: `workflow` is a mapping"));
    assert!(warnings[2]
        .contains("also declared by tasks/backlog/TASK-REV-003-review-auth.md (backlog)"));
}
