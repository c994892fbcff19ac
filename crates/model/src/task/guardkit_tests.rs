//! Task files in the shapes GuardKit writes them (issue 11): each test is one of the ways a
//! real GuardKit file differs from autobuild's own format.

use super::*;

fn parse_at(path: &str, source: &str) -> Result<Task, String> {
    Task::parse(Path::new(path), source).map_err(|d| d.to_string())
}

fn parse(source: &str) -> Result<Task, String> {
    parse_at("TASK.md", source)
}

const HEADER: &str = "---\nid: TASK-001\n---\n# T\n\n";

fn texts(task: &Task) -> Vec<&str> {
    task.criteria.iter().map(|c| c.text.as_str()).collect()
}

#[test]
fn numbered_lists_are_criteria_with_their_sub_bullets() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria\n\n1. [ ] First\n   - detail of the first\n2. Second `verify: make`\n3) [x] Third\n"
    ))
    .unwrap();
    assert_eq!(
        texts(&task),
        ["First\n- detail of the first", "Second", "Third"]
    );
    assert_eq!(task.criteria[1].verify.as_deref(), Some("make"));
    assert!(task.criteria[2].checked);
    let ids: Vec<&str> = task.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["AC-001", "AC-002", "AC-003"]);
}

#[test]
fn complexity_zero_is_unset_and_a_fraction_of_ten_is_read() {
    let body = "## Acceptance Criteria\n- a\n";
    let task = parse(&format!("---\nid: T1\ncomplexity: 0\n---\n{body}")).unwrap();
    assert_eq!(task.complexity, None);
    let task = parse(&format!("---\nid: T1\ncomplexity: \"3/10\"\n---\n{body}")).unwrap();
    assert_eq!(task.complexity, Some(3));
    let err = parse(&format!("---\nid: T1\ncomplexity: \"3/5\"\n---\n{body}")).unwrap_err();
    assert!(
        err.starts_with("TASK.md:3:13: `complexity` must be"),
        "{err}"
    );
    assert!(err.contains("help: write a whole number"), "{err}");
}

#[test]
fn every_part_of_the_criteria_section_is_kept_in_order() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria\n\nAll of these must hold.\n\n### Functional\n- [ ] a\n\n| input | output |\n|---|---|\n| 1 | 2 |\n\n### Quality\n- [ ] b\n\n```sh\nmake lint\n```\n\nClosing note.\n\n## Notes\nafter\n"
    ))
    .unwrap();
    assert_eq!(texts(&task), ["a", "b"]);
    assert_eq!(
        task.criteria[0].preamble,
        "All of these must hold.\n\n### Functional"
    );
    assert_eq!(
        task.criteria[1].preamble,
        "| input | output |\n|---|---|\n| 1 | 2 |\n\n### Quality"
    );
    assert_eq!(
        task.criteria_epilogue,
        "```sh\nmake lint\n```\n\nClosing note."
    );
    assert_eq!(task.requirements, "## Notes\nafter");
}

#[test]
fn ac_headings_with_paragraphs_are_criteria() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria\n\n### AC-001: Login succeeds\n\nGiven a known user\nwhen they log in\nthen a token is returned.\n\n### AC-002 - Logout `verify: ./logout-test`\n\n### Group with items\n- [ ] AC-003: listed\n"
    ))
    .unwrap();
    let ids: Vec<&str> = task.criteria.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["AC-001", "AC-002", "AC-003"]);
    assert_eq!(
        task.criteria[0].text,
        "Login succeeds\n\nGiven a known user\nwhen they log in\nthen a token is returned."
    );
    assert_eq!(task.criteria[1].text, "Logout");
    assert_eq!(task.criteria[1].verify.as_deref(), Some("./logout-test"));
    assert_eq!(task.criteria[2].preamble, "### Group with items");
}

#[test]
fn an_ac_heading_over_a_list_is_a_group_heading() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria\n### AC-001: Functional\n- a\n- b\n"
    ))
    .unwrap();
    assert_eq!(texts(&task), ["a", "b"]);
    assert_eq!(task.criteria[0].preamble, "### AC-001: Functional");
}

#[test]
fn a_criteria_heading_with_a_suffix_is_the_section() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria (Machine-Verifiable)\n- a\n"
    ))
    .unwrap();
    assert_eq!(texts(&task), ["a"]);
}

#[test]
fn a_heading_swallowed_by_an_unclosed_fence_is_read_with_a_warning_at_heading_and_fence() {
    let task = parse(&format!(
        "{HEADER}Example:\n\n```yaml\nkey: value\n\n## Acceptance Criteria\n- a\n"
    ))
    .unwrap();
    assert_eq!(texts(&task), ["a"]);
    let warning = task.warnings[0].to_string();
    assert!(
        warning.starts_with("TASK.md:11:1: this `## Acceptance Criteria` heading is inside the code fence opened on line 8, which is never closed; read as the criteria section, as GuardKit reads it"),
        "{warning}"
    );
    assert!(
        warning.contains("help: end the fenced block with a closing ``` line"),
        "{warning}"
    );
}

#[test]
fn a_heading_in_a_fence_that_closes_later_is_read_when_there_is_no_other_section() {
    // A fence left open by mistake pairs with a later one (a line with an info string never
    // closes a fence): GuardKit, reading line by line, still finds the heading.
    let task = parse(&format!(
        "{HEADER}Shape:\n```\nx\n\n## Acceptance Criteria\n- a\n\n```python\nprint()\n```\n"
    ))
    .unwrap();
    assert_eq!(texts(&task)[0], "a");
    let warning = task.warnings[0].to_string();
    assert!(
        warning.contains("inside the code fence opened on line 7; read as the criteria section"),
        "{warning}"
    );
}

#[test]
fn a_second_criteria_section_and_a_level_3_heading_are_read_with_warnings() {
    let task = parse(&format!(
        "{HEADER}## Acceptance Criteria\n- a\n\n## Notes\nn\n\n## Acceptance Criteria\n- b\n"
    ))
    .unwrap();
    assert_eq!(texts(&task), ["a", "b"]);
    let warning = task.warnings[0].to_string();
    assert!(
        warning.contains(
            "a second acceptance criteria section; its criteria are read after the first one's"
        ),
        "{warning}"
    );

    let task = parse(&format!(
        "{HEADER}Intro.\n\n### Acceptance Criteria (from the review)\n- a\n- b\n"
    ))
    .unwrap();
    assert_eq!(texts(&task), ["a", "b"]);
    let warning = task.warnings[0].to_string();
    assert!(
        warning.contains("the acceptance criteria heading is not a level-2 heading; read as the criteria section"),
        "{warning}"
    );
}

#[test]
fn a_key_given_twice_is_a_located_warning_and_the_last_value_wins_as_in_guardkit() {
    let task = parse(
        "---\nid: T1\nstatus: backlog\npriority: high\nstatus: in_review\n---\n## Acceptance Criteria\n- a\n",
    )
    .unwrap();
    assert_eq!(
        task.extra["status"],
        yaml_serde::Value::String("in_review".into())
    );
    assert_eq!(task.warnings.len(), 1);
    let warning = task.warnings[0].to_string();
    assert!(
        warning.starts_with("TASK.md:5:1: `status` is given more than once (first on line 3)"),
        "{warning}"
    );

    // A key autobuild reads: GuardKit's loader keeps the last value, and so does autobuild.
    let task = parse(
        "---\nid: T1\ntask_type: feature\ntask_type: testing\n---\n## Acceptance Criteria\n- a\n",
    )
    .unwrap();
    assert_eq!(task.task_type, "testing");
    let warning = task.warnings[0].to_string();
    assert!(
        warning.starts_with(
            "TASK.md:4:1: `task_type` is given more than once (first on line 3), with different \
             values; the last one is kept"
        ),
        "{warning}"
    );
    let task =
        parse("---\nid: T1\ncomplexity: 3\ncomplexity: 3\n---\n## Acceptance Criteria\n- a\n")
            .unwrap();
    assert_eq!(task.complexity, Some(3));
    assert!(
        task.warnings[0].to_string().contains(
            "`complexity` is given more than once (first on line 3), with the same value"
        ),
        "{:?}",
        task.warnings
    );
}

#[test]
fn front_matter_criteria_come_first_and_the_body_section_stays_in_the_requirements() {
    let task = parse(
        "---\nid: T1\nacceptance_criteria:\n  - Login works\n  - \"AC-007: logout works `verify: make logout`\"\n---\n# T\n\nDo it.\n\n## Acceptance Criteria\n- [ ] written for humans\n",
    )
    .unwrap();
    assert_eq!(texts(&task), ["Login works", "logout works"]);
    assert_eq!(task.criteria[1].id, "AC-007");
    assert_eq!(task.criteria[1].verify.as_deref(), Some("make logout"));
    assert_eq!(
        task.requirements,
        "Do it.\n\n## Acceptance Criteria\n- [ ] written for humans"
    );

    // Without a body section, the front-matter list is enough.
    let task = parse("---\nid: T1\nacceptance_criteria: [only]\n---\n# T\n").unwrap();
    assert_eq!(texts(&task), ["only"]);
    // An empty list is no list: the body's section is required as usual.
    let err = parse("---\nid: T1\nacceptance_criteria: []\n---\n# T\n").unwrap_err();
    assert!(err.contains("no `## Acceptance Criteria` section"), "{err}");
    let err = parse("---\nid: T1\nacceptance_criteria:\n  - [nested]\n---\n# T\n").unwrap_err();
    assert!(
        err.starts_with(
            "TASK.md:4:5: invalid type: array, expected a criterion: text, or a mapping"
        ),
        "{err}"
    );
}

#[test]
fn a_workflow_mapping_is_ignored_with_a_note() {
    let task = parse(
        "---\nid: T1\nworkflow:\n  turns: 3\n  approved: true\n---\n## Acceptance Criteria\n- a\n",
    )
    .unwrap();
    assert_eq!(task.workflow, None);
    assert!(task.extra.contains_key("workflow"));
    let note = task.warnings[0].to_string();
    assert!(
        note.starts_with("TASK.md:3:1: `workflow` is a mapping"),
        "{note}"
    );
}

#[test]
fn the_file_name_gives_the_id_when_the_front_matter_has_none() {
    let body = "# Title\n\n## Acceptance Criteria\n- a\n";
    let task = parse_at(
        "tasks/backlog/TASK-AB-12-some-slug.md",
        &format!("---\ntitle: x\n---\n{body}"),
    )
    .unwrap();
    assert_eq!(task.id, "TASK-AB-12");
    let task = parse_at("TASK-7.md", body).unwrap();
    assert_eq!((task.id.as_str(), task.title.as_str()), ("TASK-7", "Title"));

    let err = parse_at("notes.md", body).unwrap_err();
    assert!(err.contains("missing YAML front matter"), "{err}");
    let err = parse_at("notes.md", &format!("---\ntitle: x\n---\n{body}")).unwrap_err();
    assert!(err.contains("the front matter has no `id`"), "{err}");
}

#[test]
fn a_misspelled_front_matter_key_is_a_warning_and_guardkit_keys_are_not() {
    let task = parse(
        "---\nid: T1\ntask_typ: documentation\ntask_id: T1\nstatus: backlog\ntags: [a]\npriority: high\nparent_review: R1\nfeature_id: F1\n---\n## Acceptance Criteria\n- a\n",
    )
    .unwrap();
    assert_ne!(task.task_type, "documentation");
    let warnings: Vec<String> = task.warnings.iter().map(ToString::to_string).collect();
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    assert!(
        warnings[0].starts_with(
            "TASK.md:3:1: `task_typ` is not a key autobuild reads (did you mean `task_type`?); it is ignored"
        ),
        "{warnings:#?}"
    );
}

/// Front matters GuardKit's loader (Python's YAML) reads and a spec-following parser does not
/// (issue 49, item 13): each loads as GuardKit reads it, with a warning at the line.
#[test]
fn front_matter_python_reads_loads_with_a_located_warning() {
    let body = "---\n## Acceptance Criteria\n- a\n";
    let cases = [
        (
            "id: T1\norganized_files: [\n  \"T1.md\",\n  \"notes.md\"\n]\n",
            "TASK.md:6:1: this `]` at column 1 closes the flow collection opened above, as GuardKit's loader (Python's YAML) reads it",
            ("organized_files", "[T1.md, notes.md]"),
        ),
        (
            "id: T1\ngates:\n  tests:\n    passed: 3\n    passed: true\n",
            "TASK.md:6:5: `gates.tests.passed` is given more than once (first on line 5); the last value is kept",
            ("gates", "{tests: {passed: true}}"),
        ),
        (
            "id: T1\ncontext_files:\n  - ../../forge/run.sh\n",
            "TASK.md:4:5: context file `../../forge/run.sh` is outside the repository; it is ignored",
            ("", ""),
        ),
    ];
    for (front, warning, (key, value)) in cases {
        let task = parse(&format!("---\n{front}{body}")).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(texts(&task), ["a"]);
        let warnings: Vec<String> = task.warnings.iter().map(ToString::to_string).collect();
        assert!(
            warnings.len() == 1 && warnings[0].starts_with(warning),
            "{warnings:#?}"
        );
        if !key.is_empty() {
            let kept = yaml_serde::to_string(&task.extra[key]).unwrap_or_default();
            let kept: yaml_serde::Value = yaml_serde::from_str(&kept).unwrap_or_default();
            assert_eq!(
                kept,
                yaml_serde::from_str::<yaml_serde::Value>(value).unwrap_or_default(),
                "{key}"
            );
        }
    }
    let task = parse(&format!(
        "---\nid: T1\ncontext_files: [/etc/x, docs/a.md]\n{body}"
    ))
    .unwrap();
    let kept: Vec<&str> = task.context_files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(kept, ["docs/a.md"]);
}

/// Front matters GuardKit's loader rejects too stay refused, at the line, with the fix.
#[test]
fn front_matter_guardkit_cannot_read_is_refused_with_the_fix() {
    let cases = [
        (
            "title: Fix \"Critical error: None\" display\n",
            "TASK.md:3:27: malformed YAML front matter: invalid YAML: mapping values are not allowed",
            "quote a value that holds `: `",
        ),
        (
            "depends_on:\nstatus: \"backlog\"\n  - TASK-001\n",
            "TASK.md:5:3: malformed YAML front matter",
            "indent a value's lines under its key",
        ),
    ];
    for (front, error, help) in cases {
        let source = format!("---\nid: T1\n{front}---\n## Acceptance Criteria\n- a\n");
        let err = parse(&source).unwrap_err();
        assert!(err.starts_with(error), "{err}");
        assert!(err.contains("help: ") && err.contains(help), "{err}");
    }
}
