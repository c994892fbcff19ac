//! Answers that are no answers, and streams that end before the answer: an empty answer (no
//! text, no tool call) is a failed turn on every dialect and channel; a stream cut short
//! (llama-cpp-python's, when the prompt does not fit in the context) is asked again whole, so
//! the server's own error says why; tool arguments with raw control characters are read.

use super::*;
use native_fixture::stream::{delta, text_stream, Step, StreamServer};

fn empty_answer(outcome: &AgentOutcome) {
    let (class, message) = failure(outcome);
    assert_eq!(class, AgentErrorClass::EmptyAnswer, "{outcome:?}");
    assert!(message.contains("the model answered nothing"), "{message}");
}

#[test]
fn an_empty_answer_fails_the_turn_on_every_dialect_and_channel() {
    // (what the server sends, for the player and for the coach)
    let anthropic_nothing = || {
        Response::json(
            200,
            json!({"type": "message", "role": "assistant", "stop_reason": "end_turn",
                   "content": [], "usage": {"input_tokens": 300, "output_tokens": 0}}),
        )
    };
    let null_content = || {
        Response::json(
            200,
            json!({"choices": [{"index": 0, "finish_reason": "stop",
                                "message": {"role": "assistant", "content": null}}]}),
        )
    };
    let whitespace = || openai_text(" \n ");
    type Answer = fn() -> Response;
    let cases: Vec<(&str, Answer)> = vec![
        ("openai", openai_nothing),
        ("openai", null_content),
        ("openai", whitespace),
        ("anthropic", anthropic_nothing),
    ];
    for (agent, answer) in cases {
        let server = Server::start(vec![answer(), answer()], &[]);
        let adapter = if agent == "openai" {
            openai()
        } else {
            anthropic()
        };
        let dirs = Dirs::new();
        let call = Call::new(&dirs);
        empty_answer(&call.invoke(&adapter, &role(agent, &server.base_url(), json!({}))));
        let end = transcript_events(&call.transcript(), "end");
        assert_eq!(end[0]["status"], "failed");
        // A coach that answers nothing returns no verdict: never an approval.
        let outcome = call.invoke(&adapter, &coach(agent, &server.base_url()));
        empty_answer(&outcome);
        assert_eq!(outcome.structured_output, None);
    }
    // Streamed: no delta with content, `finish_reason: "stop"`.
    let server = StreamServer::start(vec![text_stream("", 4, "stop")]);
    let dirs = Dirs::new();
    empty_answer(
        &Call::new(&dirs).invoke(&openai(), &role("openai", &server.base_url(), json!({}))),
    );
}

/// A model that called tools and then ends with an empty text has acted: the runner judges
/// what it did, the turn is not refused.
#[test]
fn an_empty_last_answer_after_tool_calls_is_a_turn_that_acted() {
    let dirs = Dirs::new();
    let write = json!({"path": "a.txt", "content": "a"}).to_string();
    let server = Server::start(
        vec![openai_calls(&[("write", &write)]), openai_nothing()],
        &[],
    );
    let outcome =
        Call::new(&dirs).invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert!(dirs.worktree.join("a.txt").exists());
}

const CONTEXT_EXCEEDED: &str = "This model's maximum context length is 512 tokens. However, you \
requested 1175 tokens (1111 in the messages, 64 in the completion). Please reduce the length of \
the messages or completion.";

#[test]
fn a_stream_cut_short_is_asked_again_whole_and_the_servers_reason_is_the_failure() {
    let dirs = Dirs::new();
    let server = StreamServer::start(vec![
        vec![Step::Cut],
        vec![Step::Whole(
            400,
            json!({"error": {"message": CONTEXT_EXCEEDED, "type": "invalid_request_error",
                             "param": "messages", "code": "context_length_exceeded"}}),
        )],
    ]);
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::ApiError);
    assert!(
        message.contains("maximum context length is 512"),
        "{message}"
    );
    assert!(message.contains("--n_ctx"), "{message}");
    assert!(
        message.contains("--ctx-size") && message.contains("num_ctx"),
        "{message}"
    );
    assert!(!message.contains("autobuild doctor"), "{message}");
    assert!(!message.contains("cannot read"), "{message}");
    let sent = server.requests();
    assert_eq!(
        sent.len(),
        2,
        "asked once more, whole, and not retried: {sent:#?}"
    );
    assert_eq!(sent[0]["stream"], true);
    assert!(sent[1].get("stream").is_none(), "{}", sent[1]);
    assert_eq!(
        transcript_events(&call.transcript(), "stream_broken").len(),
        1
    );
    assert_eq!(transcript_events(&call.transcript(), "error").len(), 1);
}

#[test]
fn a_stream_cut_mid_answer_is_answered_whole_and_later_answers_stream_again() {
    let dirs = Dirs::new();
    let whole = json!({
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant",
            "content": null, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "write", "arguments": "{\"path\": \"b.txt\", \"content\": \"b\"}"}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5},
    });
    let server = StreamServer::start(vec![
        vec![delta(json!({"content": "Let me"}), None), Step::Cut],
        vec![Step::Whole(200, whole)],
        text_stream("Wrote b.txt.", 4, "stop"),
    ]);
    let outcome =
        Call::new(&dirs).invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.final_message, "Wrote b.txt.");
    assert!(dirs.worktree.join("b.txt").exists());
    let sent = server.requests();
    assert_eq!(sent.len(), 3);
    assert!(sent[1].get("stream").is_none());
    assert_eq!(
        sent[2]["stream"], true,
        "only the broken answer is asked whole"
    );
}

/// A model writes a file's content with real newlines and tabs inside the JSON string.
#[test]
fn tool_arguments_with_raw_control_characters_are_read() {
    let dirs = Dirs::new();
    let raw = "{\"path\": \"poem.txt\", \"content\": \"line 1\nline\t2\n\"}";
    let server = Server::start(
        vec![openai_calls(&[("write", raw)]), openai_text("Done.")],
        &[],
    );
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        fs::read_to_string(dirs.worktree.join("poem.txt")).unwrap(),
        "line 1\nline\t2\n"
    );
    let answer = &transcript_events(&call.transcript(), "answer")[0];
    assert_eq!(answer["calls"][0]["arguments"], raw, "the raw text is kept");
    assert_eq!(answer["calls"][0]["input"]["path"], "poem.txt");
}
