use super::*;
use crate::claude_code::signals::ApiRetry;
use crate::claude_code::stream::{ApiErrorMessage, InitEvent, ResultEvent};

fn role(access: Access) -> Role {
    let mut role: Role = serde_json::from_value(
        serde_json::json!({"agent": "claude-code", "prompt": "p.md", "model": "sonnet"}),
    )
    .unwrap();
    role.access = access;
    role
}

fn with_result(subtype: &str, is_error: bool, text: &str) -> StreamSummary {
    StreamSummary {
        result: Some(ResultEvent {
            subtype: subtype.into(),
            is_error,
            text: Some(text.into()),
            ..ResultEvent::default()
        }),
        ..StreamSummary::default()
    }
}

fn run(end: ProcessEnd, summary: &StreamSummary, stderr: &str) -> Classified {
    classify(end, summary, stderr, "coach", &role(Access::ReadOnly))
}

fn class_and_message(classified: &Classified) -> (AgentErrorClass, String) {
    match &classified.status {
        AgentStatus::Failed { class, message } => (*class, message.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn success_needs_exit_zero_a_result_and_no_error() {
    let ok = with_result("success", false, "done");
    assert_eq!(
        run(ProcessEnd::Exited(0), &ok, "").status,
        AgentStatus::Succeeded
    );
    let (class, _) = class_and_message(&run(ProcessEnd::Exited(1), &ok, "boom"));
    assert_eq!(class, AgentErrorClass::NonZeroExit);
    let (class, message) =
        class_and_message(&run(ProcessEnd::Exited(0), &StreamSummary::default(), ""));
    assert_eq!(class, AgentErrorClass::Other);
    assert!(
        message.contains("without a final `result` event"),
        "{message}"
    );
}

#[test]
fn an_error_flagged_success_is_an_api_error() {
    let summary = with_result("success", true, "API Error: 500 Internal server error");
    let classified = run(ProcessEnd::Exited(0), &summary, "");
    let (class, message) = class_and_message(&classified);
    assert_eq!(class, AgentErrorClass::ApiError);
    assert!(message.contains("API Error: 500"), "{message}");
    assert!(!classified.transient);
}

#[test]
fn max_turns_is_its_own_class() {
    let summary = with_result("error_max_turns", true, "");
    let mut writer = role(Access::Write);
    writer.max_agent_turns = Some(7);
    let classified = classify(ProcessEnd::Exited(0), &summary, "", "player", &writer);
    let (class, message) = class_and_message(&classified);
    assert_eq!(class, AgentErrorClass::MaxTurns);
    assert!(message.contains("(7)"), "{message}");
    assert!(
        message.contains("`max_agent_turns` of role `player`"),
        "{message}"
    );
}

#[test]
fn auth_problems_say_how_to_log_in() {
    let summary = with_result("success", true, "Invalid API key · Please run /login");
    let (class, message) = class_and_message(&run(ProcessEnd::Exited(1), &summary, ""));
    assert_eq!(class, AgentErrorClass::AuthMissing);
    assert!(message.contains("ANTHROPIC_API_KEY"), "{message}");
    assert!(message.contains("Invalid API key"), "{message}");
}

#[test]
fn rate_limits_are_transient() {
    let summary = with_result(
        "success",
        true,
        r#"API Error: 429 {"type":"error","error":{"type":"rate_limit_error"}}"#,
    );
    let classified = run(ProcessEnd::Exited(0), &summary, "");
    assert_eq!(
        class_and_message(&classified).0,
        AgentErrorClass::RateLimited
    );
    assert!(classified.transient);
    let overloaded = run(
        ProcessEnd::Exited(1),
        &StreamSummary::default(),
        "API Error: 529 Overloaded",
    );
    assert!(overloaded.transient);
    // A plan's usage limit lifts in hours: out of credit for the run, not a rate limit.
    let exhausted = with_result("success", true, "Claude AI usage limit reached|1700000000");
    let classified = run(ProcessEnd::Exited(0), &exhausted, "");
    assert_eq!(
        class_and_message(&classified).0,
        AgentErrorClass::OutOfCredit
    );
    assert!(!classified.transient, "waiting seconds does not help");
}

#[test]
fn an_unknown_model_names_the_role_to_fix() {
    let stderr = "There's an issue with the selected model (sonnet-9). It may not exist or you may not have access to it.";
    let (class, message) = class_and_message(&run(
        ProcessEnd::Exited(1),
        &StreamSummary::default(),
        stderr,
    ));
    assert_eq!(class, AgentErrorClass::ModelNotFound);
    assert!(message.contains("model `sonnet`"), "{message}");
    assert!(message.contains("role `coach`"), "{message}");
}

#[test]
fn an_outdated_cli_is_told_to_update() {
    let (class, message) = class_and_message(&run(
        ProcessEnd::Exited(1),
        &StreamSummary::default(),
        "error: unknown option '--tools'",
    ));
    assert_eq!(class, AgentErrorClass::Other);
    assert!(message.contains("@latest"), "{message}");
}

#[test]
fn a_read_only_session_with_a_write_tool_fails_even_when_it_succeeded() {
    let mut summary = with_result("success", false, "approved");
    summary.init = Some(InitEvent {
        tools: vec!["Read".into(), "Edit".into(), "Write".into()],
        ..InitEvent::default()
    });
    let (class, message) = class_and_message(&run(ProcessEnd::Exited(0), &summary, ""));
    assert_eq!(class, AgentErrorClass::Other);
    assert!(message.contains("(Edit, Write)"), "{message}");
    let writer = classify(
        ProcessEnd::Exited(0),
        &summary,
        "",
        "player",
        &role(Access::Write),
    );
    assert_eq!(writer.status, AgentStatus::Succeeded);
}

#[test]
fn bounds_and_cancellation_keep_their_status() {
    let summary = with_result("success", false, "");
    assert_eq!(
        run(ProcessEnd::TimedOut, &summary, "").status,
        AgentStatus::TimedOut
    );
    assert_eq!(
        run(ProcessEnd::Cancelled, &summary, "").status,
        AgentStatus::Cancelled
    );
}

#[test]
fn excerpts_are_one_shortened_line() {
    let long = "e".repeat(500);
    let shown = excerpt(&["", &format!("\n  {long}\nsecond")]);
    assert!(shown.starts_with("\"eee"));
    assert!(shown.ends_with("…\""));
    assert!(!shown.contains("second"));
}

#[test]
fn the_agents_own_answer_is_not_read_as_an_error_message() {
    let summary = with_result(
        "success",
        false,
        "I added the /login route and a rate limit to it.",
    );
    let classified = run(ProcessEnd::Exited(1), &summary, "");
    let (class, _) = class_and_message(&classified);
    assert_eq!(class, AgentErrorClass::NonZeroExit);
    assert!(!classified.transient);
}

#[test]
fn only_the_success_subtype_is_success() {
    let summary = with_result("error_max_budget_usd", false, "");
    assert!(!run(ProcessEnd::Exited(0), &summary, "").status.is_success());
}

/// A failed session as Claude Code 2.1 reports it: the synthetic assistant message with its
/// `error` label, then an error result with the HTTP status.
fn api_failure(label: &str, status: Option<u16>, text: &str) -> StreamSummary {
    let mut summary = with_result("success", true, text);
    if let Some(result) = summary.result.as_mut() {
        result.api_error_status = status;
    }
    summary.api_error = Some(ApiErrorMessage {
        label: label.into(),
        text: Some(text.into()),
    });
    summary
}

#[test]
fn machine_readable_fields_win_over_the_text() {
    // The text reads like a rate limit; the label says the credentials were refused.
    let summary = api_failure(
        "authentication_failed",
        Some(401),
        "API Error: Request rejected (429) · rate limited",
    );
    let classified = run(ProcessEnd::Exited(1), &summary, "");
    assert_eq!(
        class_and_message(&classified).0,
        AgentErrorClass::AuthMissing
    );
    assert!(!classified.transient);

    let cases = [
        (
            "billing_error",
            Some(402),
            "Your credit balance is too low",
            AgentErrorClass::OutOfCredit,
        ),
        (
            "model_not_found",
            Some(404),
            "Something failed",
            AgentErrorClass::ModelNotFound,
        ),
        (
            "unknown",
            Some(401),
            "Something failed",
            AgentErrorClass::AuthMissing,
        ),
        (
            "server_error",
            Some(500),
            "Not logged in",
            AgentErrorClass::ApiError,
        ),
    ];
    for (label, status, text, expected) in cases {
        let (class, message) = class_and_message(&run(
            ProcessEnd::Exited(1),
            &api_failure(label, status, text),
            "",
        ));
        assert_eq!(class, expected, "{label}: {message}");
    }
}

#[test]
fn current_rate_limit_texts_are_recognised() {
    let transient = api_failure(
        "rate_limit",
        Some(429),
        "API Error: Request rejected (429) · slow down",
    );
    let classified = run(ProcessEnd::Exited(1), &transient, "");
    assert_eq!(
        class_and_message(&classified).0,
        AgentErrorClass::RateLimited
    );
    assert!(classified.transient);

    let plan = api_failure(
        "rate_limit",
        Some(429),
        "You've hit your weekly limit · resets Mon 9am",
    );
    let classified = run(ProcessEnd::Exited(1), &plan, "");
    let (class, message) = class_and_message(&classified);
    assert_eq!(class, AgentErrorClass::OutOfCredit);
    assert!(message.contains("resets Mon 9am"), "{message}");
    assert!(!classified.transient);

    // Without the fields, the texts still say it.
    let text_only = with_result(
        "success",
        true,
        "API Error: Request rejected (429) · slow down",
    );
    assert!(run(ProcessEnd::Exited(1), &text_only, "").transient);
}

#[test]
fn a_retry_claude_was_stopped_in_names_the_cause() {
    let summary = StreamSummary {
        last_retry: Some(ApiRetry {
            attempt: Some(3),
            error_status: Some(401),
            error: Some("authentication_failed".into()),
        }),
        retries: 3,
        ..StreamSummary::default()
    };
    let (class, message) = class_and_message(&run(ProcessEnd::Aborted, &summary, ""));
    assert_eq!(class, AgentErrorClass::AuthMissing);
    assert!(message.contains("status 401"), "{message}");
    // A retry that claude got past says nothing about how the session ended.
    let mut recovered = with_result("success", true, "boom");
    recovered.last_retry = summary.last_retry.clone();
    let (class, _) = class_and_message(&run(ProcessEnd::Exited(1), &recovered, ""));
    assert_eq!(class, AgentErrorClass::ApiError);
}
