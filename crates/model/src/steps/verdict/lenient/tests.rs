use serde_json::json;

use super::*;

fn ids(list: &[&str]) -> Vec<String> {
    list.iter().map(|id| id.to_string()).collect()
}

#[test]
fn comments_and_trailing_commas_are_tolerated_outside_strings() {
    let text = "{\n  // the verdict\n  \"a\": \"x // y, }\", /* note */\n  \"b\": [1, 2,],\n}";
    assert_eq!(
        parse_json(text).unwrap(),
        json!({"a": "x // y, }", "b": [1, 2]})
    );
    let error = parse_json("{\"a\": 1 // no closing brace\n").unwrap_err();
    assert!(error.is_eof(), "{error}");
}

#[test]
fn a_wrapper_is_unwrapped_only_when_it_has_no_decision() {
    let wrapped = json!({"Verdict": {"decision": "approve"}});
    assert_eq!(unwrap(wrapped), json!({"decision": "approve"}));
    let own = json!({"decision": "feedback", "verdict": {"decision": "approve"}});
    assert_eq!(unwrap(own.clone()), own);
}

#[test]
fn normalizes_case_nulls_extra_keys_and_maps() {
    let value = json!({
        "Decision": "Approve", "Summary": "ok", "confidence": 0.9, "issues": null,
        "criteria": {"AC-1": "MET", "ac-002": {"Status": "Not Verified", "evidence": null}}
    });
    assert_eq!(
        normalize(value, &ids(&["AC-001", "AC-002"])),
        json!({
            "decision": "approve", "summary": "ok", "issues": [],
            "criteria": [
                {"id": "AC-001", "status": "met", "evidence": ""},
                {"id": "AC-002", "status": "not_verified", "evidence": ""}
            ]
        })
    );
}

#[test]
fn issue_fields_default_to_empty_and_severities_are_normalized() {
    let value = json!({"decision": "feedback", "summary": "s",
        "issues": [{"severity": "Must-Fix", "description": "d", "line": 3, "location": null}]});
    assert_eq!(
        normalize(value, &[])["issues"],
        json!([{"severity": "must_fix", "category": "", "description": "d",
                "location": "", "suggestion": ""}])
    );
}

#[test]
fn ids_are_mapped_only_when_exactly_one_task_id_matches() {
    let task = ids(&["AC-001", "AC-002", "REQ-1"]);
    for (given, expected) in [
        ("AC-001", "AC-001"),
        ("AC-1", "AC-001"),
        ("ac-02", "AC-002"),
        ("AC 2", "AC-002"),
        ("req-001", "REQ-1"),
        ("AC-3", "AC-3"),
        ("criterion 1", "criterion 1"),
        ("AC-1a", "AC-1a"),
    ] {
        assert_eq!(canonical_id(given, &task), expected, "{given}");
    }
    let clash = ids(&["AC-1", "AC-001"]);
    assert_eq!(canonical_id("ac-01", &clash), "ac-01");
}

#[test]
fn duplicate_keys_are_found_at_any_depth_and_in_any_case() {
    let table = [
        (
            r#"{"decision": "feedback", "decision": "approve"}"#,
            Some("decision"),
        ),
        (
            r#"{"decision": "approve", "Decision": "feedback"}"#,
            Some("Decision"),
        ),
        (r#"{"a": [{"id": 1, "id": 2}]}"#, Some("id")),
        (r#"{"a": 1, /* c */ "a": 2,}"#, Some("a")),
        (r#"{"a": {"b": 1}, "b": 2}"#, None),
        (r#"{"a": 1"#, None),
    ];
    for (text, expected) in table {
        assert_eq!(duplicate_key(text).as_deref(), expected, "{text}");
    }
}

#[test]
fn harmless_forms_of_lists_ids_and_severities_are_read() {
    let value = json!({"decision": "feedback", "summary": "s", "issues": [
        {"severity": "High", "description": "a"},
        {"severity": "blocker", "description": "b"},
        {"severity": "minor", "description": "c"},
        {"severity": "P1", "description": "d"}],
        "criteria": [{"id": "AC-001: Slug keeps ß", "status": "met", "evidence": "e"}]});
    let out = normalize(value, &ids(&["AC-001"]));
    let severities: Vec<&str> = out["issues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["severity"].as_str().unwrap())
        .collect();
    assert_eq!(
        severities,
        ["must_fix", "critical", "nice_to_have", "must_fix"]
    );
    assert!(out["issues"][3]["description"]
        .as_str()
        .unwrap()
        .contains("severity `P1`"));
    assert_eq!(out["criteria"][0]["id"], "AC-001");
    for word in ["none", "N/A", "", "None."] {
        let value = json!({"decision": "approve", "summary": "s", "issues": word});
        assert_eq!(normalize(value, &[])["issues"], json!([]), "{word}");
    }
    // A real sentence is not an empty list: the schema says what is wrong.
    let value = json!({"decision": "approve", "summary": "s", "issues": "fix the docs"});
    assert_eq!(normalize(value, &[])["issues"], "fix the docs");
    // Ids with titles map only to a task id.
    let task = ids(&["AC-001", "AC-002"]);
    for (given, expected) in [
        ("AC-002 - handles empty names", "AC-002"),
        ("AC-1 (greeting)", "AC-001"),
        ("AC-003: not a task id", "AC-003: not a task id"),
    ] {
        assert_eq!(canonical_id(given, &task), expected, "{given}");
    }
}

#[test]
fn a_misspelled_decision_is_not_guessed() {
    let value = json!({"decision": "Approved", "summary": "s"});
    assert_eq!(normalize(value, &[])["decision"], "approved");
}
