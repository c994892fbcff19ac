//! What the `claude-code` adapter learns from Claude Code beyond the final answer, against the
//! fake `claude` in tests/fixtures/fake-claude: whether the session really enforces the verdict
//! schema, the machine-readable error fields of its events, and its own retries (which are no
//! progress, and hopeless when the API refused the credentials).

use crate::claude_fixture;

use std::time::{Duration, Instant};

use autobuild::agents::claude_code::{ClaudeCodeAdapter, RetryPolicy};
use autobuild::agents::schema::draft07_problems;
use autobuild::agents::{AgentErrorClass, AgentStatus};
use autobuild::steps::verdict::VERDICT_SCHEMA;
use claude_fixture::{argv, coach, failure, flag, player, Sandbox};
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

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert!(outcome.notes.is_empty());
    let recorded = serde_json::to_value(&outcome).unwrap();
    assert!(recorded.get("notes").is_none(), "no empty list in records");
}

/// An adapter that retries transient failures twice, quickly.
fn quick_retries() -> ClaudeCodeAdapter {
    ClaudeCodeAdapter::with_retry(RetryPolicy {
        delays: vec![Duration::from_millis(10), Duration::from_millis(10)],
    })
}

fn api_error(label: &str, status: u16, text: &str) -> Value {
    json!({"player": [{"api_error": {"label": label, "status": status, "text": text}}]})
}

#[test]
fn machine_readable_fields_win_over_the_text() {
    // The text reads like a rate limit, the fields say the credentials were refused.
    let sandbox = Sandbox::new(api_error(
        "authentication_failed",
        401,
        "API Error: Request rejected (429) · Rate limited",
    ));

    let outcome = sandbox.invoke_with(&quick_retries(), "player", &player());

    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::AuthMissing, "{message}");
    assert!(message.contains("claude auth login"), "{message}");
    assert_eq!(
        sandbox.records().len(),
        1,
        "refused credentials are not retried"
    );
}

#[test]
fn a_plans_usage_limit_is_out_of_credit_and_a_429_is_retried() {
    let limit = Sandbox::new(api_error(
        "rate_limit",
        429,
        "You've hit your session limit · resets 3pm (Europe/Berlin)",
    ));
    let (class, message) = failure(&limit.invoke_with(&quick_retries(), "player", &player()));
    assert_eq!(class, AgentErrorClass::OutOfCredit, "{message}");
    assert!(message.contains("resets 3pm"), "{message}");
    assert_eq!(limit.records().len(), 1);

    let throttled = Sandbox::new(api_error(
        "rate_limit",
        429,
        "API Error: Request rejected (429) · Number of requests exceeds your rate limit",
    ));
    let (class, _) = failure(&throttled.invoke_with(&quick_retries(), "player", &player()));
    assert_eq!(class, AgentErrorClass::RateLimited);
    assert_eq!(
        throttled.records().len(),
        3,
        "the first try and two retries"
    );
}

#[test]
fn billing_and_unknown_models_are_named_from_their_labels() {
    let billing = Sandbox::new(api_error(
        "billing_error",
        400,
        "Your credit balance is too low to access the Anthropic API.",
    ));
    assert_eq!(
        failure(&billing.invoke("player", &player())).0,
        AgentErrorClass::OutOfCredit
    );
    let model = Sandbox::new(api_error(
        "model_not_found",
        404,
        "There's an issue with the selected model (sonnet-9).",
    ));
    let (class, message) = failure(&model.invoke("player", &player()));
    assert_eq!(class, AgentErrorClass::ModelNotFound);
    assert!(message.contains("role `player`"), "{message}");
}

#[test]
fn claude_retrying_refused_credentials_is_stopped_at_once() {
    // An invalid key: Claude Code would retry for minutes, one api_retry event per attempt.
    let sandbox = Sandbox::new(json!({"player": [{"api_retry": {
        "status": 401, "error": "authentication_failed", "count": 600, "delay": 0.1,
    }}]}));

    let started = Instant::now();
    let outcome = sandbox.invoke_with(&quick_retries(), "player", &player());

    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::AuthMissing, "{message}");
    assert!(message.contains("status 401"), "{message}");
    assert!(
        started.elapsed() < Duration::from_secs(15),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(sandbox.records().len(), 1);
}

#[test]
fn claudes_own_retries_do_not_keep_the_idle_watchdog_quiet() {
    let sandbox = Sandbox::new(json!({"player": [{"api_retry": {
        "status": 529, "error": "overloaded", "count": 600, "delay": 0.1,
    }}]}));
    let mut role = player();
    role.idle_timeout = Some(Duration::from_secs(1));

    let started = Instant::now();
    let outcome = sandbox.invoke("player", &role);

    assert_eq!(outcome.status, AgentStatus::IdleTimedOut { detail: None });
    assert!(started.elapsed() < Duration::from_secs(15));
}
