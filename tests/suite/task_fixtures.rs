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

/// One task file per way GuardKit's files differ from autobuild's own format
/// (tests/fixtures/tasks/guardkit-shapes), each loading with the criteria GuardKit reads.
const SHAPES: &str = "tests/fixtures/tasks/guardkit-shapes";

fn shape(id: &str) -> autobuild::task::Task {
    locate(Path::new(SHAPES), id).unwrap_or_else(|e| panic!("{id}: {e}"))
}

fn criteria(task: &autobuild::task::Task) -> Vec<(&str, &str)> {
    task.criteria
        .iter()
        .map(|c| (c.id.as_str(), c.text.as_str()))
        .collect()
}

#[test]
fn every_guardkit_shape_loads() {
    let scan = list_tasks(Path::new(SHAPES)).unwrap();
    let broken: Vec<String> = scan
        .invalid
        .iter()
        .map(|t| t.problems.to_string())
        .collect();
    assert!(broken.is_empty(), "{broken:#?}");
    assert_eq!(scan.tasks.len(), 8);
}

#[test]
fn guardkit_shapes_keep_their_criteria_text() {
    // Bold ids are text: nothing is stripped from a criterion.
    assert_eq!(
        criteria(&shape("TASK-S01")),
        [
            ("AC-001", "**AC-001**: The cache is cleared on logout"),
            (
                "AC-002",
                "**AC-002**: Cached entries expire after 10 minutes"
            ),
        ]
    );
    let numbered = shape("TASK-S02");
    assert_eq!(
        criteria(&numbered),
        [
            (
                "AC-001",
                "`settings.py` is renamed to `config.py`\n- every import is updated\n- no alias is left behind"
            ),
            ("AC-002", "The test suite passes"),
            ("AC-003", "Documentation mentions the new name"),
        ]
    );
    assert_eq!(
        numbered.criteria_epilogue,
        "All three are checked in review."
    );
    assert!(numbered
        .requirements
        .ends_with("## Notes\n\nKeep the commit small."));

    let scenarios = shape("TASK-S03");
    assert_eq!(scenarios.criteria.len(), 2);
    assert_eq!(scenarios.criteria[1].id, "AC-002");
    assert_eq!(
        scenarios.criteria[1].text,
        "Empty project\n\nGiven a project without reports\nWhen the user exports\nThen an error says there is nothing to export"
    );

    let listed = shape("TASK-S04");
    assert_eq!(
        criteria(&listed),
        [
            ("AC-001", "The endpoint returns 204 on success"),
            ("AC-002", "Unknown ids return 404"),
        ]
    );

    let bare = shape("TASK-S05");
    assert_eq!(bare.title, "Add a health endpoint");
    assert_eq!(bare.criteria.len(), 2);

    let repeated = shape("TASK-S06");
    assert_eq!(
        repeated.extra["status"],
        yaml_serde::Value::String("in_progress".into())
    );
    assert_eq!(repeated.warnings.len(), 2);

    let sections = shape("TASK-S07");
    assert_eq!(sections.task_type, "implementation");
    assert_eq!(sections.complexity, None);
    assert_eq!(sections.workflow, None);
    assert_eq!(
        sections.criteria[1].preamble,
        "| input | output |\n|-------|--------|\n| 2.345 | 2.34   |\n\n### Quality"
    );
    assert_eq!(sections.criteria[1].verify.as_deref(), Some("ruff check ."));

    let code = shape("TASK-S08");
    assert_eq!(code.complexity, Some(4));
    assert_eq!(
        code.criteria[0].text,
        "The CLI prints the version:\n```\n$ tool --version\ntool 1.2.0\n```"
    );
    assert_eq!(
        code.criteria_epilogue,
        "Example session:\n\n```\n$ tool --bogus\nerror: unknown flag --bogus\n```"
    );
}
