//! The interpretation of finished codex processes, without processes.

use std::path::Path;
use std::time::Instant;

use super::events::read_stream;
use super::*;
use crate::pause;
use crate::TokenUsage;
use model::project::config::ModelPrice;

const OK_STREAM: &str = "{\"type\":\"thread.started\",\"thread_id\":\"th-1\"}\n\
    {\"type\":\"turn.started\"}\n\
    {\"type\":\"item.completed\",\"item\":{\"id\":\"i0\",\"type\":\"agent_message\",\"text\":\"{\\\"decision\\\":\\\"approve\\\"}\"}}\n\
    {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1000000,\"cached_input_tokens\":200000,\"output_tokens\":100000}}\n";

fn finished(end: ProcessEnd, stream: &str, stderr: &str) -> Finished {
    Finished {
        end,
        stderr_tail: stderr.to_string(),
        duration: Duration::from_millis(1200),
        summary: read_stream(stream.as_bytes()).unwrap(),
        stream_error: None,
    }
}

fn context(model: Option<&'static str>, wants_verdict: bool) -> Context<'static> {
    Context {
        role_name: "coach",
        model,
        wants_verdict,
        pricing: None,
        transcript: Path::new("/run/logs/turn_1_coach.log"),
    }
}

fn failure_of(attempt: &Attempt) -> (AgentErrorClass, String) {
    match &attempt.outcome.status {
        AgentStatus::Failed { class, message } => (*class, message.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn a_completed_turn_succeeds_with_session_usage_and_estimated_cost() {
    let attempt = interpret(
        &finished(ProcessEnd::Exited(0), OK_STREAM, ""),
        &context(Some("gpt-5-codex"), true),
    );
    let outcome = &attempt.outcome;
    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert!(!attempt.retry);
    assert_eq!(outcome.session_id.as_deref(), Some("th-1"));
    assert_eq!(outcome.final_message, "{\"decision\":\"approve\"}");
    assert_eq!(
        outcome.structured_output,
        Some(serde_json::json!({"decision": "approve"}))
    );
    assert_eq!(
        outcome.usage,
        TokenUsage {
            input: 800_000,
            output: 100_000,
            cached: 200_000,
            cache_written: 0,
        }
    );
    // 800k × 1.25 + 200k × 0.125 + 100k × 10, per million.
    let cost = outcome.cost_usd.unwrap();
    assert!((cost - 2.025).abs() < 1e-9, "{cost}");
    assert!(outcome.cost_estimated);
    assert_eq!(outcome.duration, Duration::from_millis(1200));
}

#[test]
fn the_project_price_table_is_used() {
    let mut table = PriceTable::new();
    table.insert(
        "gpt-5-codex".to_string(),
        ModelPrice {
            input: 10.0,
            cached_input: Some(10.0),
            output: 10.0,
        },
    );
    let mut cx = context(Some("gpt-5-codex"), false);
    cx.pricing = Some(&table);
    let attempt = interpret(&finished(ProcessEnd::Exited(0), OK_STREAM, ""), &cx);
    assert_eq!(attempt.outcome.cost_usd, Some(11.0));
    assert_eq!(
        attempt.outcome.structured_output, None,
        "only verdict roles parse their answer"
    );
}

#[test]
fn without_a_known_price_there_is_no_cost() {
    let attempt = interpret(
        &finished(ProcessEnd::Exited(0), OK_STREAM, ""),
        &context(None, false),
    );
    assert_eq!(attempt.outcome.cost_usd, None);
    assert!(!attempt.outcome.cost_estimated);
    assert_eq!(attempt.outcome.usage.output, 100_000);
}

#[test]
fn turn_failed_fails_even_with_exit_code_zero() {
    let stream = "{\"type\":\"turn.started\"}\n\
        {\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected before completion\"}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(0), stream, ""),
        &context(None, false),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::ApiError);
    assert_eq!(message, "codex: stream disconnected before completion");
    assert!(!attempt.retry);
}

#[test]
fn an_unrecovered_error_event_fails() {
    let stream = "{\"type\":\"error\",\"message\":\"unexpected status 401 Unauthorized\"}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), stream, ""),
        &context(None, false),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::AuthMissing);
    assert!(
        message.starts_with("codex: unexpected status 401 Unauthorized\nfix: sign codex in"),
        "{message}"
    );
}

#[test]
fn a_transient_rate_limit_is_retried_a_spent_quota_is_not() {
    let limited = "{\"type\":\"error\",\"message\":\"exceeded retry limit, last status: 429 Too Many Requests\"}\n\
        {\"type\":\"turn.failed\",\"error\":{\"message\":\"exceeded retry limit, last status: 429 Too Many Requests\"}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), limited, ""),
        &context(None, false),
    );
    assert_eq!(failure_of(&attempt).0, AgentErrorClass::RateLimited);
    assert!(attempt.retry);

    // A plan's usage limit is out of credit for the run: waiting seconds does not lift it.
    let quota = "{\"type\":\"turn.failed\",\"error\":{\"message\":\"You've hit your usage limit. Try again in 3 days.\"}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), quota, ""),
        &context(None, false),
    );
    assert_eq!(failure_of(&attempt).0, AgentErrorClass::OutOfCredit);
    assert!(!attempt.retry);
}

#[test]
fn a_model_error_names_the_role_and_the_fix() {
    let stream = "{\"type\":\"item.completed\",\"item\":{\"type\":\"error\",\"message\":\"Model metadata for `sonnet` not found\"}}\n\
        {\"type\":\"turn.failed\",\"error\":{\"message\":\"{\\\"detail\\\":\\\"The 'sonnet' model is not supported\\\"}\"}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), stream, ""),
        &context(Some("sonnet"), false),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::ModelNotFound);
    assert!(message.contains("[roles.coach]"), "{message}");
    assert!(message.contains("Claude model"), "{message}");
}

#[test]
fn a_non_zero_exit_without_events_quotes_stderr_and_classifies_it() {
    let attempt = interpret(
        &finished(
            ProcessEnd::Exited(1),
            "",
            "Error: Not logged in. Run `codex login`.\n",
        ),
        &context(None, false),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::AuthMissing);
    assert!(message.starts_with("exited with code 1; stderr ends with:\nError: Not logged in"));
    assert!(message.contains("fix: sign codex in"), "{message}");

    let attempt = interpret(
        &finished(
            ProcessEnd::Exited(2),
            "",
            "error: unexpected argument '--color'\n",
        ),
        &context(None, false),
    );
    assert_eq!(failure_of(&attempt).0, AgentErrorClass::NonZeroExit);
}

#[test]
fn exit_zero_without_a_completed_turn_is_a_failure() {
    let mut run = finished(
        ProcessEnd::Exited(0),
        "{\"type\":\"thread.started\",\"thread_id\":\"t\"}\n",
        "",
    );
    run.stream_error = Some("cannot read codex's event stream x.jsonl: gone".to_string());
    let (class, message) = failure_of(&interpret(&run, &context(None, false)));
    assert_eq!(class, AgentErrorClass::Other);
    assert!(message.contains("no `turn.completed` event"), "{message}");
    assert!(
        message.contains("cannot read codex's event stream"),
        "{message}"
    );
}

#[test]
fn timeouts_and_cancellation_keep_their_status_and_the_tokens_spent() {
    let partial = "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"cached_input_tokens\":0,\"output_tokens\":5}}\n";
    for end in [
        ProcessEnd::TimedOut,
        ProcessEnd::IdleTimedOut,
        ProcessEnd::Cancelled,
    ] {
        let attempt = interpret(&finished(end, partial, ""), &context(Some("o3"), false));
        assert_eq!(
            attempt.outcome.status,
            AgentStatus::from_process_end(end, "")
        );
        assert_eq!(attempt.outcome.usage.input, 10);
        assert!(attempt.outcome.cost_usd.is_some());
    }
}

#[test]
fn a_huge_final_message_is_bounded_but_still_parsed() {
    let text = format!("{{\"summary\":\"{}\"}}", "é".repeat(FINAL_MESSAGE_LIMIT));
    let event = serde_json::json!({"type": "item.completed", "item": {"type": "agent_message", "text": text}});
    let stream = format!("{event}\n{{\"type\":\"turn.completed\",\"usage\":{{}}}}\n");
    let attempt = interpret(
        &finished(ProcessEnd::Exited(0), &stream, ""),
        &context(None, true),
    );
    assert!(attempt.outcome.final_message.len() < FINAL_MESSAGE_LIMIT + 200);
    assert!(attempt
        .outcome
        .final_message
        .ends_with("the full text is in /run/logs/turn_1_coach.log)"));
    assert!(attempt.outcome.structured_output.is_some());
}

#[test]
fn retried_attempts_add_their_spending_to_the_last() {
    let mut first = AgentOutcome::new(
        AgentStatus::Failed {
            class: AgentErrorClass::RateLimited,
            message: "429".into(),
        },
        String::new(),
        Duration::from_secs(2),
    );
    first.usage = TokenUsage {
        input: 10,
        output: 1,
        cached: 5,
        cache_written: 0,
    };
    first.cost_usd = Some(0.5);
    first.cost_estimated = true;
    let mut last = AgentOutcome::new(
        AgentStatus::Succeeded,
        "done".into(),
        Duration::from_secs(3),
    );
    last.usage = TokenUsage {
        input: 100,
        output: 10,
        cached: 0,
        cache_written: 0,
    };
    let combined = combine(last, &[first]);
    assert_eq!(combined.status, AgentStatus::Succeeded);
    assert_eq!(combined.final_message, "done");
    assert_eq!(
        combined.usage,
        TokenUsage {
            input: 110,
            output: 11,
            cached: 5,
            cache_written: 0,
        }
    );
    assert_eq!(combined.cost_usd, Some(0.5));
    assert!(combined.cost_estimated);
    assert_eq!(combined.duration, Duration::from_secs(5));
}

#[test]
fn pause_stops_early_when_cancelled() {
    let cancel = CancelToken::new();
    assert!(pause(Duration::from_millis(5), &cancel));
    cancel.cancel();
    let started = Instant::now();
    assert!(!pause(Duration::from_secs(30), &cancel));
    assert!(started.elapsed() < Duration::from_secs(1));
}

#[test]
fn declares_what_it_enforces() {
    let caps = CodexAdapter::default().capabilities();
    assert!(caps.enforces_read_only);
    assert!(caps.structured_output);
    assert!(!caps.enforces_tool_allowlist);
}

#[test]
fn attempt_logs_are_kept_under_a_new_name() {
    let dir = tempfile::tempdir().unwrap();
    let transcript = dir.path().join("turn_1_player.log");
    fs::write(&transcript, "first attempt").unwrap();
    fs::write(events_path(&transcript), "{}").unwrap();
    keep_attempt_logs(&transcript, 1);
    assert!(!transcript.exists());
    assert_eq!(
        fs::read_to_string(dir.path().join("turn_1_player.rate-limited-1.log")).unwrap(),
        "first attempt"
    );
    assert!(dir
        .path()
        .join("turn_1_player.rate-limited-1.jsonl")
        .exists());
}

#[test]
fn a_recovered_rate_limit_does_not_make_a_later_failure_retryable() {
    let stream = "{\"type\":\"item.completed\",\"item\":{\"type\":\"error\",\"message\":\"429 Too Many Requests, retrying\"}}\n\
        {\"type\":\"turn.failed\",\"error\":{\"message\":\"the sandbox denied writing to /etc\"}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), stream, ""),
        &context(None, false),
    );
    assert!(!attempt.retry);
}

#[test]
fn a_server_error_after_the_model_metadata_notice_is_retried_not_a_model_error() {
    let notice = "Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; \
                  this can degrade performance and cause issues.";
    let demand = "We're currently experiencing high demand, which may cause temporary errors.";
    let stream = format!(
        "{}\n{}\n{}\n",
        serde_json::json!({"type": "item.completed", "item": {"id": "item_0", "type": "error", "message": notice}}),
        serde_json::json!({"type": "error", "message": demand}),
        serde_json::json!({"type": "turn.failed", "error": {"message": demand}}),
    );
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), &stream, ""),
        &context(Some("gpt-5-codex"), false),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::ApiError, "{message}");
    assert!(attempt.retry);
    assert!(
        message.starts_with(&format!("codex: {demand}")),
        "{message}"
    );
    assert!(
        message.contains("codex also noted: Model metadata"),
        "{message}"
    );
}

#[test]
fn a_quota_codex_words_as_such_is_out_of_credit() {
    let stream = "{\"type\":\"turn.failed\",\"error\":{\"message\":\"Quota exceeded. Check your plan and billing details.\"}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(1), stream, ""),
        &context(None, false),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::OutOfCredit);
    assert!(message.contains("autobuild resume"), "{message}");
    assert!(!attempt.retry);
}

#[test]
fn a_completed_turn_with_no_message_and_no_action_is_an_empty_answer() {
    let empty = "{\"type\":\"thread.started\",\"thread_id\":\"th-1\"}\n\
        {\"type\":\"turn.started\"}\n\
        {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":0}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(0), empty, ""),
        &context(None, true),
    );
    let (class, message) = failure_of(&attempt);
    assert_eq!(class, AgentErrorClass::EmptyAnswer);
    assert!(message.contains("answered nothing"), "{message}");
    assert!(!attempt.retry);
    let acted = "{\"type\":\"turn.started\"}\n\
        {\"type\":\"item.completed\",\"item\":{\"id\":\"i1\",\"type\":\"file_change\",\"status\":\"completed\"}}\n\
        {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}\n";
    let attempt = interpret(
        &finished(ProcessEnd::Exited(0), acted, ""),
        &context(None, false),
    );
    assert_eq!(attempt.outcome.status, AgentStatus::Succeeded);
}
