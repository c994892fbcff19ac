//! What the `claude-code` adapter learns from Claude Code beyond the final answer, against the
//! fake `claude` in tests/fixtures/fake-claude: whether the session really enforces the verdict
//! schema, and the machine-readable error fields of its events.

mod claude_fixture;

use autobuild::agents::schema::draft07_problems;
use autobuild::agents::{AgentErrorClass, AgentStatus};
use autobuild::steps::verdict::VERDICT_SCHEMA;
use claude_fixture::{argv, coach, failure, flag, Sandbox};
use serde_json::{json, Value};

fn approve() -> Value {
    json!({"decision": "approve", "summary": "ok", "issues": [], "criteria": []})
}

#[test]
fn the_shipped_verdict_schema_reaches_claude_as_draft07_without_a_meta_schema() {
    let mut sandbox = Sandbox::new(json!({"coach": [{"structured_output": approve()}]}));
    sandbox.schema = VERDICT_SCHEMA.to_string();

    let outcome = sandbox.invoke("coach", &coach());

    let argv = argv(&sandbox.records()[0]);
    let passed: Value = serde_json::from_str(flag(&argv, "--json-schema").unwrap()).unwrap();
    assert!(passed.get("$schema").is_none(), "{passed}");
    assert_eq!(draft07_problems(&passed), Vec::<String>::new());
    assert_eq!(
        passed["required"],
        json!(["decision", "summary", "issues", "criteria"])
    );
    // Claude Code accepted the schema: the verdict came through its StructuredOutput tool.
    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.structured_output, Some(approve()));
    assert!(outcome.notes.is_empty(), "{:?}", outcome.notes);
}

#[test]
fn a_verdict_session_without_structured_output_is_noted_not_silent() {
    // An older or stricter Claude Code that rejected the schema starts without the tool.
    let sandbox = Sandbox::new(json!({"coach": [{
        "tools": ["Bash", "Glob", "Grep", "Read"],
        "text": "```json\n{\"decision\": \"approve\"}\n```",
    }]}));

    let outcome = sandbox.invoke("coach", &coach());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.notes.len(), 1, "{:?}", outcome.notes);
    assert!(
        outcome.notes[0].contains("StructuredOutput"),
        "{:?}",
        outcome.notes
    );
    let recorded = serde_json::to_value(&outcome).unwrap();
    assert_eq!(recorded["notes"].as_array().map(Vec::len), Some(1));
}

#[test]
fn a_player_session_needs_no_structured_output() {
    let sandbox = Sandbox::new(json!({}));

    let outcome = sandbox.invoke("player", &claude_fixture::player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert!(outcome.notes.is_empty());
    let recorded = serde_json::to_value(&outcome).unwrap();
    assert!(recorded.get("notes").is_none(), "no empty list in records");
}

#[allow(dead_code)]
fn class_of(sandbox: &Sandbox) -> AgentErrorClass {
    failure(&sandbox.invoke("player", &claude_fixture::player())).0
}
