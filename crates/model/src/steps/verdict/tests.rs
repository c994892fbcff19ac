use base::Keyword;
use serde_json::json;

use super::*;

fn ids(list: &[&str]) -> Vec<TaskCriterion> {
    list.iter().map(|id| TaskCriterion::coach(id)).collect()
}

fn strings(list: &[&str]) -> Vec<String> {
    list.iter().map(|id| id.to_string()).collect()
}

/// A complete verdict; a `feedback` one has an issue to act on.
fn verdict_json(decision: &str) -> Value {
    let issues = match decision {
        "feedback" => json!([{"severity": "must_fix", "category": "testing",
                              "description": "add a test for an empty name",
                              "location": "", "suggestion": ""}]),
        _ => json!([]),
    };
    json!({
        "decision": decision,
        "summary": "Greeting implemented and tested.",
        "issues": issues,
        "criteria": [
            {"id": "AC-001", "status": "met", "evidence": "python -c ... exits 0"},
            {"id": "AC-002", "status": "met", "evidence": "tests/test_utils.py::test_greeting"}
        ]
    })
}

fn fenced(value: &Value) -> String {
    format!(
        "```json\n{}\n```",
        serde_json::to_string_pretty(value).unwrap()
    )
}

fn rejected(error: VerdictError) -> Vec<Problem> {
    match error {
        VerdictError::Rejected { problems, .. } => problems,
        other => panic!("expected a rejected verdict, got {other:?}"),
    }
}

#[test]
fn structured_output_wins_over_the_message() {
    let message = fenced(&verdict_json("feedback"));
    let verdict = parse_verdict(
        Some(&verdict_json("approve")),
        &message,
        &ids(&["AC-001", "AC-002"]),
    )
    .unwrap();
    assert_eq!(verdict.decision, Decision::Approve);
    assert_eq!(verdict.criteria.len(), 2);
}

#[test]
fn null_structured_output_falls_back_to_the_message() {
    let message = format!("Review done.\n{}", fenced(&verdict_json("feedback")));
    let verdict = parse_verdict(Some(&Value::Null), &message, &ids(&["AC-001", "AC-002"])).unwrap();
    assert_eq!(verdict.decision, Decision::Feedback);
}

#[test]
fn invalid_structured_output_is_an_error_even_with_a_valid_message() {
    let message = fenced(&verdict_json("approve"));
    let error =
        parse_verdict(Some(&json!([1])), &message, &ids(&["AC-001", "AC-002"])).unwrap_err();
    assert_eq!(
        error,
        VerdictError::NotAnObject {
            origin: Origin::StructuredOutput,
            found: "an array"
        }
    );
}

#[test]
fn bare_object_in_prose_is_accepted() {
    let message = format!(
        "I reviewed the diff. {} That is all.",
        serde_json::to_string(&verdict_json("approve")).unwrap()
    );
    let verdict = parse_verdict(None, &message, &ids(&["AC-001", "AC-002"])).unwrap();
    assert!(verdict.approved());
}

#[test]
fn approval_words_without_json_are_not_a_verdict() {
    for message in [
        "IMPLEMENTATION_APPROVED",
        "The work is not yet IMPLEMENTATION_APPROVED: tests fail.",
        "Not yet approved. Please fix the failing tests.",
        "",
    ] {
        assert_eq!(
            parse_verdict(None, message, &ids(&["AC-001"])),
            Err(VerdictError::Missing),
            "{message:?}"
        );
    }
}

#[test]
fn verdicts_that_disagree_are_ambiguous_whichever_comes_last() {
    let criteria = ids(&["AC-001", "AC-002"]);
    for (first, second) in [("approve", "feedback"), ("feedback", "approve")] {
        let message = format!(
            "{}\nOnce fixed it would look like this:\n{}",
            fenced(&verdict_json(first)),
            fenced(&verdict_json(second))
        );
        let error = parse_verdict(None, &message, &criteria).unwrap_err();
        assert!(matches!(error, VerdictError::Ambiguous { .. }), "{error:?}");
        assert!(
            error.to_string().contains("2 verdicts that disagree"),
            "{error}"
        );
    }
}

#[test]
fn the_last_block_with_a_decision_is_read() {
    let criteria = ids(&["AC-001", "AC-002"]);
    let example_issue = "```json\n{\"severity\": \"must_fix\", \"description\": \"example\"}\n```";
    let message = format!(
        "{}\nAn issue would look like:\n{example_issue}",
        fenced(&verdict_json("approve"))
    );
    assert!(parse_verdict(None, &message, &criteria).unwrap().approved());
    let twice = format!(
        "{}\n{}",
        fenced(&verdict_json("approve")),
        fenced(&verdict_json("approve"))
    );
    assert!(parse_verdict(None, &twice, &criteria).unwrap().approved());
}

#[test]
fn a_broken_last_block_is_an_error_not_a_fallback_to_an_earlier_one() {
    let message = format!(
        "{}\n```json\n{{\"decision\": \"feedback\",\n```",
        fenced(&verdict_json("approve"))
    );
    let error = parse_verdict(None, &message, &ids(&["AC-001", "AC-002"])).unwrap_err();
    assert!(
        matches!(
            error,
            VerdictError::Syntax {
                origin: Origin::FencedBlock { index: 2, count: 2 },
                ..
            }
        ),
        "{error:?}"
    );
}

#[test]
fn unknown_decision_is_a_schema_error_naming_the_field() {
    let error = parse_verdict(
        Some(&verdict_json("approved")),
        "",
        &ids(&["AC-001", "AC-002"]),
    )
    .unwrap_err();
    match &error {
        VerdictError::Schema { path, message, .. } => {
            assert_eq!(path, "decision");
            assert!(message.contains("approved"), "{message}");
        }
        other => panic!("expected a schema error, got {other:?}"),
    }
}

#[test]
fn unknown_fields_are_dropped_and_a_missing_summary_is_blank() {
    let mut extra = verdict_json("feedback");
    extra["issues"] = json!([{
        "severity": "must_fix", "category": "testing", "description": "no test",
        "location": "", "suggestion": "", "confidence": 0.9
    }]);
    let verdict = parse_verdict(Some(&extra), "", &ids(&["AC-001", "AC-002"])).unwrap();
    assert_eq!(verdict.issues[0].description, "no test");

    let mut missing = verdict_json("feedback");
    missing.as_object_mut().unwrap().remove("summary");
    let error = parse_verdict(Some(&missing), "", &ids(&["AC-001", "AC-002"])).unwrap_err();
    assert!(
        error.to_string().contains("missing field `summary`"),
        "{error}"
    );
}

#[test]
fn criterion_ids_must_be_the_tasks_each_at_most_once() {
    let mut value = verdict_json("feedback");
    value["criteria"] = json!([
        {"id": "AC-001", "status": "met", "evidence": "ok"},
        {"id": "AC-001", "status": "met", "evidence": "again"},
        {"id": "AC-009", "status": "met", "evidence": "?"}
    ]);
    let problems =
        rejected(parse_verdict(Some(&value), "", &ids(&["AC-001", "AC-002"])).unwrap_err());
    assert_eq!(
        problems,
        vec![
            Problem::DuplicateCriterion {
                id: "AC-001".into()
            },
            Problem::UnknownCriterion {
                id: "AC-009".into(),
                known: strings(&["AC-001", "AC-002"])
            },
        ]
    );
    let message = VerdictError::Rejected {
        origin: Origin::StructuredOutput,
        problems,
    }
    .to_string();
    assert!(
        message.contains("`AC-009` is not a criterion of this task"),
        "{message}"
    );
}

#[test]
fn approve_with_must_fix_or_unmet_criteria_is_feedback_keeping_them() {
    let mut value = verdict_json("approve");
    value["issues"] = json!([{
        "severity": "must_fix", "category": "correctness", "description": "greeting drops the name",
        "location": "src/utils.py:3", "suggestion": "use an f-string"
    }]);
    value["criteria"][1]["status"] = json!("not_met");
    let verdict = parse_verdict(Some(&value), "", &ids(&["AC-001", "AC-002"])).unwrap();
    assert_eq!(verdict.decision, Decision::Feedback);
    assert_eq!(verdict.issues[0].description, "greeting drops the name");
    assert_eq!(verdict.criteria[1].status, CriterionStatus::NotMet);
}

#[test]
fn feedback_with_must_fix_and_unmet_criteria_is_fine() {
    let mut value = verdict_json("feedback");
    value["issues"] = json!([{
        "severity": "must_fix", "category": "", "description": "missing test",
        "location": "", "suggestion": ""
    }]);
    value["criteria"][1]["status"] = json!("not_met");
    let verdict = parse_verdict(Some(&value), "", &ids(&["AC-001", "AC-002"])).unwrap();
    assert_eq!(verdict.must_fix_count(), 1);
}

#[test]
fn blank_summary_and_descriptions_are_rejected() {
    let mut value = verdict_json("feedback");
    value["summary"] = json!("  ");
    value["issues"] = json!([{
        "severity": "should_fix", "category": "", "description": "",
        "location": "", "suggestion": ""
    }]);
    let problems =
        rejected(parse_verdict(Some(&value), "", &ids(&["AC-001", "AC-002"])).unwrap_err());
    assert_eq!(
        problems,
        vec![
            Problem::BlankSummary,
            Problem::BlankIssueDescription { index: 0 }
        ]
    );
}

#[test]
fn fallback_blocks_the_turn_without_asking_the_player_for_a_change() {
    let verdict = fallback_verdict(&VerdictError::Missing);
    assert_eq!(verdict.decision, Decision::Feedback);
    assert_eq!(verdict.must_fix_count(), 0);
    assert_eq!(verdict.issues[0].category, COACH_OUTPUT_INVALID);
    assert!(verdict
        .invalid_output()
        .unwrap()
        .contains("no JSON verdict"));
    assert!(!verdict.issues[0]
        .suggestion
        .contains("No change to the code is needed"));
}

#[test]
fn a_verdict_round_trips_through_its_own_serialization() {
    let verdict = parse_verdict(
        Some(&verdict_json("approve")),
        "",
        &ids(&["AC-001", "AC-002"]),
    )
    .unwrap();
    let value = serde_json::to_value(&verdict).unwrap();
    assert_eq!(value, verdict_json("approve"));
}

/// The schema is what adapters enforce and the parser is what the runner enforces; they must
/// describe the same document.
#[test]
fn schema_matches_the_parser() {
    let schema: Value = serde_json::from_str(VERDICT_SCHEMA).unwrap();
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );

    let sample = Verdict {
        decision: Decision::Feedback,
        summary: "s".into(),
        issues: vec![Issue {
            severity: Severity::MustFix,
            category: String::new(),
            description: "d".into(),
            location: String::new(),
            suggestion: String::new(),
        }],
        criteria: vec![CriterionVerdict {
            id: "AC-001".into(),
            status: CriterionStatus::Met,
            evidence: String::new(),
        }],
    };
    let sample = serde_json::to_value(&sample).unwrap();
    let objects = [
        (&schema, &sample),
        (
            &schema["properties"]["issues"]["items"],
            &sample["issues"][0],
        ),
        (
            &schema["properties"]["criteria"]["items"],
            &sample["criteria"][0],
        ),
    ];
    for (node, instance) in objects {
        assert_eq!(node["type"], "object");
        assert_eq!(node["additionalProperties"], false);
        let mut fields: Vec<&str> = instance
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        fields.sort_unstable();
        let mut required: Vec<&str> = node["required"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        required.sort_unstable();
        let mut properties: Vec<&str> = node["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        properties.sort_unstable();
        assert_eq!(fields, required);
        assert_eq!(fields, properties);
        for property in node["properties"].as_object().unwrap().values() {
            assert!(property.get("type").is_some(), "every node needs a type");
        }
    }

    let enum_values = |node: &Value| -> Vec<String> {
        node["enum"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        enum_values(&schema["properties"]["decision"]),
        [Decision::Approve, Decision::Feedback].map(|d| d.as_str().to_string())
    );
    assert_eq!(
        enum_values(&schema["properties"]["issues"]["items"]["properties"]["severity"]),
        [
            Severity::Critical,
            Severity::MustFix,
            Severity::ShouldFix,
            Severity::NiceToHave
        ]
        .map(|s| s.as_str().to_string())
    );
    assert_eq!(
        enum_values(&schema["properties"]["criteria"]["items"]["properties"]["status"]),
        [
            CriterionStatus::Met,
            CriterionStatus::NotMet,
            CriterionStatus::NotVerified
        ]
        .map(|s| s.as_str().to_string())
    );
    for variant in ["critical", "must_fix", "should_fix", "nice_to_have"] {
        let parsed: Severity = serde_json::from_value(json!(variant)).unwrap();
        assert_eq!(parsed.as_str(), variant);
    }
    for variant in ["met", "not_met", "not_verified"] {
        let parsed: CriterionStatus = serde_json::from_value(json!(variant)).unwrap();
        assert_eq!(parsed.as_str(), variant);
    }
}

#[test]
fn a_draft_does_not_stand_in_for_a_final_verdict_that_was_cut_off() {
    let message = r#"Draft verdict: {"decision": "approve", "summary": "ok", "issues": [], "criteria": [{"id": "AC-001", "status": "met", "evidence": "x"}]}
Final verdict: {"decision": "feedback", "summary": "no", "issues": [{"severity": "must_fix", "category": "", "description": "add"#;
    assert!(parse_verdict(None, message, &ids(&["AC-001"])).is_err());
}

#[test]
fn an_inconsistent_verdict_names_the_block_that_was_read() {
    let mut unverified = verdict_json("approve");
    unverified["criteria"][1]["status"] = json!("not_verified");
    let message = format!(
        "{}\nAn issue would look like:\n```json\n{{\"severity\": \"must_fix\"}}\n```\n",
        fenced(&unverified)
    );
    let error = parse_verdict(None, &message, &ids(&["AC-001", "AC-002"])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "the verdict in the ```json block 1 of 2 of the final message is inconsistent: \
         `decision` is `approve` but criterion `AC-002` is not judged `met` (`not_verified` or \
         left out); criteria without a verify command are yours to judge: check each (read the \
         code, run it) and answer `met` or `not_met`, or answer `feedback` saying what the \
         player must do"
    );
}
