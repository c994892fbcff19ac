//! Whole-file parsing tests: front matter, body, criteria and every located error.

use super::*;

fn parse(source: &str) -> Result<Task, String> {
    Task::parse(Path::new("TASK.md"), source).map_err(|d| d.to_string())
}

const HEADER: &str = "---\nid: TASK-001\n---\n";

fn criteria_of(section: &str) -> Vec<Criterion> {
    parse(&format!("{HEADER}# T\n\n## Acceptance Criteria\n{section}"))
        .unwrap()
        .criteria
}

#[test]
fn parses_the_documented_example() {
    let task = parse(
        r#"---
id: TASK-001
title: Add greeting function
task_type: feature          # selects the quality-gate profile; default "feature"
complexity: 3               # optional, 1-10
dependencies: []            # task ids (used by features)
workflow: player-coach      # optional override
---
# Add greeting function

Add `greeting(name)` to `src/utils.py` returning "Hello, {name}!".

## Acceptance Criteria
- [ ] AC-001: `greeting("Ada")` returns "Hello, Ada!" `verify: python -c "from src.utils import greeting; assert greeting('Ada')=='Hello, Ada!'"`
- [ ] Has a unit test in tests/test_utils.py
"#,
    )
    .unwrap();
    assert_eq!(task.id, "TASK-001");
    assert_eq!(task.title, "Add greeting function");
    assert_eq!(task.task_type, "feature");
    assert_eq!(task.complexity, Some(3));
    assert_eq!(task.workflow.as_deref(), Some("player-coach"));
    assert_eq!(
        task.requirements,
        "Add `greeting(name)` to `src/utils.py` returning \"Hello, {name}!\"."
    );
    assert_eq!(task.criteria.len(), 2);
    assert_eq!(task.criteria[0].id, "AC-001");
    assert_eq!(
        task.criteria[0].text,
        "`greeting(\"Ada\")` returns \"Hello, Ada!\""
    );
    assert_eq!(
        task.criteria[0].verify.as_deref(),
        Some("python -c \"from src.utils import greeting; assert greeting('Ada')=='Hello, Ada!'\"")
    );
    assert_eq!(task.criteria[1].id, "AC-002");
    assert_eq!(
        task.criteria[1].text,
        "Has a unit test in tests/test_utils.py"
    );
    assert_eq!(task.criteria[1].verify, None);
    assert_eq!(task.executable_criteria().count(), 1);
}

#[test]
fn defaults_and_kept_unknown_keys() {
    let task = parse(
        "---\nid: T1\nstatus: backlog\npriority: high\n---\n# From heading\n\n## Acceptance Criteria\n- works\n",
    )
    .unwrap();
    assert_eq!(task.title, "From heading");
    assert_eq!(task.task_type, DEFAULT_TASK_TYPE);
    assert_eq!(task.complexity, None);
    assert!(task.dependencies.is_empty());
    assert_eq!(task.extra.len(), 2);
    assert_eq!(
        task.extra["status"],
        yaml_serde::Value::String("backlog".into())
    );
    assert_eq!(task.requirements, "");
}

#[test]
fn front_matter_title_wins_and_the_id_is_the_last_resort() {
    let task =
        parse("---\nid: T1\ntitle: Front\n---\n# Heading\n## Acceptance Criteria\n- a\n").unwrap();
    assert_eq!(task.title, "Front");
    assert!(!task.requirements.contains("Heading"));
    let task = parse("---\nid: T1\n---\n## Acceptance Criteria\n- a\n").unwrap();
    assert_eq!(task.title, "T1");
}

#[test]
fn requirements_keep_other_sections_but_not_title_or_criteria() {
    let task = parse(
        "---\nid: T1\n---\n# Title\n\nFirst paragraph.\n\nSecond paragraph.\n\n## Acceptance Criteria\n- a\n\n## Context\nSee docs/api.md.\n```sh\n# a comment, not a heading\n```\n",
    )
    .unwrap();
    assert_eq!(
        task.requirements,
        "First paragraph.\n\nSecond paragraph.\n\n## Context\nSee docs/api.md.\n```sh\n# a comment, not a heading\n```"
    );
}

#[test]
fn criteria_markers_are_removed_as_prefixes_only() {
    let criteria = criteria_of(
        "- [ ] open\n- [x] done\n- [X] DONE\n- plain\n* star\n- x marks the spot\n- -1 is rejected\n- [x]x stays\n- [link](url) kept\n",
    );
    let got: Vec<(&str, bool)> = criteria
        .iter()
        .map(|c| (c.text.as_str(), c.checked))
        .collect();
    assert_eq!(
        got,
        vec![
            ("open", false),
            ("done", true),
            ("DONE", true),
            ("plain", false),
            ("star", false),
            ("x marks the spot", false),
            ("-1 is rejected", false),
            ("[x]x stays", false),
            ("[link](url) kept", false),
        ]
    );
}

#[test]
fn sub_bullets_and_continuations_belong_to_their_parent() {
    let criteria = criteria_of(
        "- [ ] Handles bad input:\n  - empty string\n    - nested\n  - null\n- [ ] Lazy\ncontinuation line\n- [ ] Last\n\n  indented after blank\n\nClosing prose is not a criterion.\n",
    );
    let texts: Vec<&str> = criteria.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        vec![
            "Handles bad input:\n- empty string\n  - nested\n- null",
            "Lazy\ncontinuation line",
            "Last\nindented after blank",
        ]
    );
}

#[test]
fn subheadings_group_criteria_and_next_section_ends_them() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria\n### Functional\n- a\n### Quality\n- b\n## Notes\n- not a criterion\n"
    ))
    .unwrap();
    let texts: Vec<&str> = task.criteria.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(texts, vec!["a", "b"]);
    assert_eq!(task.requirements, "## Notes\n- not a criterion");
}

#[test]
fn explicit_and_positional_ids_never_collide() {
    let ids =
        |section: &str| -> Vec<String> { criteria_of(section).into_iter().map(|c| c.id).collect() };
    assert_eq!(
        ids("- AC-001: a\n- b\n- AC-003: c\n"),
        vec!["AC-001", "AC-002", "AC-003"]
    );
    assert_eq!(ids("- a\n- AC-001: b\n"), vec!["AC-002", "AC-001"]);
    assert_eq!(
        ids("- AC-002: a\n- b\n- c\n"),
        vec!["AC-002", "AC-003", "AC-004"]
    );
    assert_eq!(ids("- REQ-7: a\n- b\n"), vec!["REQ-7", "AC-002"]);
    assert_eq!(criteria_of("- REQ-7: a\n")[0].text, "a");
    assert_eq!(
        criteria_of("- Ac-1: lowercase is text\n")[0].text,
        "Ac-1: lowercase is text"
    );
}

#[test]
fn verify_spans_are_extracted_and_removed() {
    let criteria = criteria_of(
        "- [ ] Tests pass `verify: cargo test` quickly\n- [ ] ``verify: test \"$(echo `x`)\" = x``\n- [ ] `code` stays and `verify:   make check  `\n",
    );
    assert_eq!(criteria[0].text, "Tests pass quickly");
    assert_eq!(criteria[0].verify.as_deref(), Some("cargo test"));
    assert_eq!(
        criteria[1].verify.as_deref(),
        Some("test \"$(echo `x`)\" = x")
    );
    assert_eq!(criteria[1].text, "`test \"$(echo `x`)\" = x` succeeds");
    assert_eq!(criteria[2].text, "`code` stays and");
    assert_eq!(criteria[2].verify.as_deref(), Some("make check"));
}

#[test]
fn verify_in_a_sub_bullet_counts_for_the_parent() {
    let criteria = criteria_of("- [ ] Builds\n  - `verify: make`\n");
    assert_eq!(criteria.len(), 1);
    assert_eq!(criteria[0].verify.as_deref(), Some("make"));
}

fn first_error(source: &str) -> String {
    parse(source).unwrap_err()
}

#[test]
fn no_front_matter_is_located_at_the_first_line() {
    let err = first_error("# Title\n\n## Acceptance Criteria\n- a\n");
    assert!(
        err.starts_with("TASK.md:1:1: missing YAML front matter"),
        "{err}"
    );
    assert!(err.contains("help:"), "{err}");
    let err = first_error("---\nid: T\n# never closed\n");
    assert!(
        err.starts_with("TASK.md:1:1: the front matter opened here is never closed"),
        "{err}"
    );
}

#[test]
fn malformed_yaml_is_located_in_the_file() {
    let err = first_error("---\nid: T1\ntitle: [unclosed\n---\n## Acceptance Criteria\n- a\n");
    assert!(err.starts_with("TASK.md:3:8:"), "{err}");
    assert!(err.contains("malformed YAML front matter"), "{err}");
    assert!(!err.lines().next().unwrap().contains(" at line "), "{err}");
}

#[test]
fn an_alias_bomb_in_the_front_matter_is_located_at_the_alias() {
    // Nested: yaml_serde alone reports "repetition limit exceeded" at no position.
    let mut nested = String::from("---\nid: T1\na: &a [x,x,x,x,x,x,x,x,x]\n");
    for (before, name) in [("a", "b"), ("b", "c"), ("c", "d"), ("d", "e"), ("e", "f")] {
        let refs = vec![format!("*{before}"); 9].join(",");
        nested.push_str(&format!("{name}: &{name} [{refs}]\n"));
    }
    nested.push_str("---\n## Acceptance Criteria\n- a\n");
    let err = first_error(&nested);
    assert!(
        err.starts_with("TASK.md:7:8: malformed YAML front matter: too many aliases"),
        "{err}"
    );
    assert!(err.contains("billion laughs"), "{err}");

    // Wide: within yaml_serde's jump guard, yet a million values.
    let items = vec!["1"; 1_000].join(",");
    let aliases = vec!["*a"; 1_000].join(",");
    let wide =
        format!("---\nid: T1\nx: &a [{items}]\ny: [{aliases}]\n---\n## Acceptance Criteria\n- a\n");
    let err = first_error(&wide);
    assert!(err.starts_with("TASK.md:4:"), "{err}");
    assert!(err.contains("too many aliases"), "{err}");

    // Ordinary reuse is still a valid task.
    let reuse = "---\nid: T1\nlabels: &l [a, b]\nalso: *l\n---\n## Acceptance Criteria\n- a\n";
    assert_eq!(parse(reuse).unwrap().extra.len(), 2);
}

#[test]
fn missing_and_invalid_ids_say_why() {
    let err = first_error("---\ntitle: x\n---\n## Acceptance Criteria\n- a\n");
    assert!(
        err.starts_with("TASK.md:1:1: the front matter has no `id`"),
        "{err}"
    );

    let err = first_error("---\nid: feature/login\n---\n## Acceptance Criteria\n- a\n");
    assert!(err.starts_with("TASK.md:2:5: invalid task id"), "{err}");
    assert!(err.contains("path separators"), "{err}");

    let err = first_error("---\nid: TASK 001\n---\n## Acceptance Criteria\n- a\n");
    assert!(err.starts_with("TASK.md:2:5: invalid task id"), "{err}");
    assert!(err.contains("whitespace"), "{err}");

    let err = first_error("---\nid: 42\n---\n## Acceptance Criteria\n- a\n");
    assert!(err.contains("`id` must be a string"), "{err}");
    assert!(err.contains("id: \"42\""), "{err}");
}

#[test]
fn missing_or_empty_criteria_are_errors() {
    let err = first_error("---\nid: T\n---\n# Title\nBody.\n");
    assert!(
        err.starts_with("TASK.md:4:1: the task has no `## Acceptance Criteria` section"),
        "{err}"
    );

    let err =
        first_error("---\nid: T\n---\n# Title\n## Acceptance Criteria\n\nNothing yet.\n## Notes\n");
    assert!(
        err.starts_with("TASK.md:5:1: the `## Acceptance Criteria` section lists no criteria"),
        "{err}"
    );

    // A deeper heading with criteria under it is read as GuardKit reads it, with a warning
    // (guardkit_tests.rs); with nothing under it, it is not the section.
    let err = first_error("---\nid: T\n---\n### Acceptance Criteria\n### Notes\n");
    assert!(
        err.starts_with("TASK.md:4:1: the acceptance criteria heading must be a level-2 heading"),
        "{err}"
    );
}

#[test]
fn every_problem_of_a_file_is_reported_in_order() {
    let err = first_error(
        "---\nid: bad/id\ncomplexity: 11\ndependencies: TASK-2\ntask_type: 5\n---\n## Acceptance Criteria\n- AC-001: a\n- AC-001: b\n- [ ]\n- `verify: a` and `verify: b`\n- `verify:`\n- prints it `verify: sh -c 'test -f x'\n",
    );
    let headers: Vec<&str> = err.lines().filter(|l| l.starts_with("TASK.md:")).collect();
    let expected = [
        "TASK.md:2:5: invalid task id",
        "TASK.md:3:13: `complexity` must be a whole number from 1 to 10, found 11",
        "TASK.md:4:15: invalid type: string \"TASK-2\", expected an array",
        "TASK.md:5:12: invalid type: integer `5`, expected a non-empty string",
        "TASK.md:9:1: criterion id `AC-001` is used more than once",
        "TASK.md:10:1: empty acceptance criterion",
        "TASK.md:11:1: a criterion may have only one `verify:` command",
        "TASK.md:12:1: the `verify:` span has no command",
        "TASK.md:13:1: the `verify:` span has no closing backtick",
    ];
    assert_eq!(headers.len(), expected.len(), "{err}");
    for (header, want) in headers.iter().zip(expected) {
        assert!(header.starts_with(want), "{header}\n  expected {want}");
    }
}

#[test]
fn crlf_files_parse_like_lf_files() {
    let task = parse("---\r\nid: T1\r\n---\r\n# Title\r\n\r\nText.\r\n\r\n## Acceptance Criteria\r\n- [x] done `verify: true`\r\n").unwrap();
    assert_eq!(task.title, "Title");
    assert_eq!(task.requirements, "Text.");
    assert_eq!(task.criteria[0].text, "done");
    assert_eq!(task.criteria[0].verify.as_deref(), Some("true"));
    assert!(task.criteria[0].checked);
}

#[test]
fn hidden_paths_are_read_from_the_front_matter() {
    let task = parse(
        "---\nid: T-1\nhidden: [\"tests/acceptance/**\"]\n---\n# T\n\n## Acceptance Criteria\n- [ ] done\n",
    )
    .unwrap();
    assert_eq!(task.hidden, ["tests/acceptance/**"]);
    assert!(task.protect.is_empty());
}

#[test]
fn each_key_is_decoded_on_its_own_and_other_tools_keys_are_kept_as_written() {
    let err = first_error(
        "---\nid: T1\ndependencies:\n  - T-2\n  - bad id\n  - also/bad\nprotect: 3\ncomplexity: [1]\n---\n## Acceptance Criteria\n- a\n",
    );
    let headers: Vec<&str> = err.lines().filter(|l| l.starts_with("TASK.md:")).collect();
    assert_eq!(headers.len(), 4, "{err}");
    assert!(
        headers[0].starts_with("TASK.md:5:5: invalid dependency"),
        "{err}"
    );
    assert!(
        headers[1].starts_with("TASK.md:6:5: invalid dependency"),
        "{err}"
    );
    assert!(
        headers[2]
            .starts_with("TASK.md:7:10: invalid type: integer `3`, expected a list, or one string"),
        "{err}"
    );
    assert!(
        headers[3].starts_with("TASK.md:8:13: invalid type: array"),
        "{err}"
    );
    assert!(err.contains("help: write it as `protect:"), "{err}");

    let task = parse(
        "---\nid: T1\nscore: .inf\nworkflow: ~\nmeta: {a: [1, x]}\n---\n## Acceptance Criteria\n- a\n",
    )
    .unwrap();
    assert_eq!(task.workflow, None);
    assert!(
        matches!(&task.extra["score"], yaml_serde::Value::Number(n) if n.as_f64() == Some(f64::INFINITY))
    );
    assert_eq!(
        task.extra["meta"],
        yaml_serde::from_str::<yaml_serde::Value>("{a: [1, x]}").unwrap()
    );
    assert!(!task.extra.contains_key("workflow"));
}
