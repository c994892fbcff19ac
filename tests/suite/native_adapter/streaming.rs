//! Streamed answers (`stream: true`, Server-Sent Events) against a scripted streaming server:
//! the answer and tool calls are put together from their deltas, every token keeps the idle
//! watchdog quiet, and an abandoned request closes its connection so the server can stop
//! generating.

use super::*;
use native_fixture::stream::{delta, text_stream, usage, Step, StreamServer};

const CLOSE_SEEN: Duration = Duration::from_secs(10);

#[test]
fn a_streamed_verdict_is_assembled_and_each_token_restarts_the_idle_watchdog() {
    let dirs = Dirs::new();
    let verdict = json!({"decision": "approve", "summary": "fine", "issues": [], "criteria": []});
    // Four pauses of 400 ms with an idle_timeout of 1 s: 1.6 s in all, never 1 s silent.
    let mut script = Vec::new();
    for piece in text_stream(&verdict.to_string(), 20, "stop") {
        if matches!(piece, Step::Event(_)) && script.len() < 8 {
            script.push(Step::Pause(Duration::from_millis(400)));
        }
        script.push(piece);
    }
    let server = StreamServer::start(vec![script]);
    let mut coach = coach("openai", &server.base_url());
    coach.idle_timeout = Some(Duration::from_secs(1));
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &coach);

    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.structured_output, Some(verdict));
    assert_eq!(outcome.usage.input, 1000, "the usage chunk counts");
    let sent = &server.requests()[0];
    assert_eq!(sent["stream"], true);
    assert_eq!(sent["stream_options"]["include_usage"], true);
    assert!(server.client_closed_within(Duration::ZERO).is_none());
}

#[test]
fn streamed_tool_call_deltas_run_in_the_worktree() {
    let dirs = Dirs::new();
    let call_id = json!({"index": 0, "id": "call_w", "type": "function",
                         "function": {"name": "write", "arguments": ""}});
    let piece = |text: &str| json!({"tool_calls": [{"index": 0, "function": {"arguments": text}}]});
    let server = StreamServer::start(vec![
        vec![
            delta(json!({"role": "assistant", "tool_calls": [call_id]}), None),
            delta(piece(r#"{"path": "hello"#), None),
            delta(piece(r#".txt", "content": "#), None),
            delta(piece(r#""hi\n"}"#), None),
            delta(json!({}), Some("tool_calls")),
            usage(500, 20),
        ],
        text_stream("Wrote hello.txt.", 4, "stop"),
    ]);
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));

    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        fs::read_to_string(dirs.worktree.join("hello.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(outcome.final_message, "Wrote hello.txt.");
    assert_eq!(outcome.agent_turns, Some(2));
    // The second request carries the call as one whole message, and its result.
    let second = &server.requests()[1];
    let messages = second["messages"].as_array().unwrap();
    let assistant = &messages[messages.len() - 2];
    assert_eq!(assistant["tool_calls"][0]["id"], "call_w");
    assert_eq!(
        assistant["tool_calls"][0]["function"]["arguments"],
        r#"{"path": "hello.txt", "content": "hi\n"}"#
    );
    assert_eq!(messages[messages.len() - 1]["tool_call_id"], "call_w");
}

#[test]
fn an_idle_stream_is_abandoned_and_its_connection_closed() {
    let dirs = Dirs::new();
    let server = StreamServer::start(vec![vec![
        delta(json!({"content": "Let me think"}), None),
        // Stuck: far longer than the idle timeout, and than the test waits.
        Step::Pause(Duration::from_secs(120)),
        delta(json!({"content": "..."}), Some("stop")),
    ]]);
    let idle = role(
        "openai",
        &server.base_url(),
        json!({"idle_timeout": "1s", "timeout": "5m"}),
    );
    let call = Call::new(&dirs);
    let started = std::time::Instant::now();
    let outcome = call.invoke(&openai(), &idle);

    let AgentStatus::IdleTimedOut {
        detail: Some(detail),
    } = &outcome.status
    else {
        panic!("expected an idle timeout, got {:?}", outcome.status);
    };
    assert!(detail.contains("sent nothing for 1s"), "{detail}");
    assert!(detail.contains(&server.base_url()), "{detail}");
    let closed = server
        .client_closed_within(CLOSE_SEEN)
        .expect("the server never saw the connection close");
    assert!(closed.duration_since(started) < Duration::from_secs(5));
}

#[test]
fn a_cancelled_stream_closes_its_connection() {
    let dirs = Dirs::new();
    let server = StreamServer::start(vec![vec![
        delta(json!({"content": "Working"}), None),
        Step::Pause(Duration::from_secs(120)),
    ]]);
    let cancel = CancelToken::new();
    let later = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        later.cancel();
    });
    let call = Call::new(&dirs);
    let outcome = call.invoke_with(
        &openai(),
        &role("openai", &server.base_url(), json!({})),
        &cancel,
    );
    assert_eq!(outcome.status, AgentStatus::Cancelled);
    assert!(server.client_closed_within(CLOSE_SEEN).is_some());
}

#[test]
fn a_streamed_answer_cut_off_at_max_tokens_is_a_truncated_turn() {
    let dirs = Dirs::new();
    let server = StreamServer::start(vec![text_stream(
        "I will now explain at length",
        5,
        "length",
    )]);
    let call = Call::new(&dirs);
    let role = role("openai", &server.base_url(), json!({"max_tokens": 16}));
    let outcome = call.invoke(&openai(), &role);
    let (_, message) = failure(&outcome);
    assert!(message.contains("cut off at max_tokens (16)"), "{message}");
    assert_eq!(outcome.final_message, "I will now explain at length");
    assert_eq!(server.requests()[0]["max_tokens"], 16);
}

#[test]
fn an_error_in_the_stream_is_classified_like_an_error_answer() {
    let dirs = Dirs::new();
    let server = StreamServer::start(vec![vec![Step::Raw(
        r#"error: {"code":500,"message":"Context size has been exceeded.","type":"server_error"}"#
            .to_string(),
    )]]);
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    let (_, message) = failure(&outcome);
    assert!(
        message.contains("Context size has been exceeded"),
        "{message}"
    );
    assert!(message.contains("--ctx-size"), "{message}");
    assert_eq!(server.requests().len(), 1, "not retried");
}

#[test]
fn a_server_refusing_stream_is_asked_for_whole_answers_for_the_rest_of_the_run() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![
            error(
                400,
                "Unrecognized request argument supplied: stream_options",
            ),
            openai_text("first"),
            openai_text("second"),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let role = role("openai", &server.base_url(), json!({}));
    assert_eq!(call.invoke(&openai(), &role).final_message, "first");
    let fallback = transcript_events(&call.transcript(), "stream_fallback");
    assert_eq!(fallback.len(), 1, "the record says why");
    assert_eq!(call.invoke(&openai(), &role).final_message, "second");
    let posts = server.posts();
    assert_eq!(posts.len(), 3);
    assert_eq!(posts[0].body["stream"], true);
    assert!(posts[1].body.get("stream").is_none(), "{}", posts[1].body);
    assert!(posts[2].body.get("stream").is_none(), "remembered");
}

#[test]
fn tool_choice_required_forces_the_first_answer_only() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![
            openai_calls(&[("glob", r#"{"pattern": "*"}"#)]),
            openai_text("done"),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let role = role(
        "openai",
        &server.base_url(),
        json!({"tool_choice": "required"}),
    );
    let outcome = call.invoke(&openai(), &role);
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    let posts = server.posts();
    assert_eq!(posts[0].body["tool_choice"], "required");
    assert_eq!(posts[1].body["tool_choice"], "auto");
}
