//! A streamed chat completion (`stream: true`): Server-Sent Events whose `data:` lines each
//! carry a chunk, a `delta` of the answer, ended by `data: [DONE]`. The text, the tool calls
//! (whose id and name come in a call's first delta and whose arguments come in pieces, keyed
//! by `index`), the `finish_reason` and the `usage` (sent in a last chunk when
//! `stream_options.include_usage` is asked) are put back together into one [`Reply`].
//!
//! Streaming is what lets the idle watchdog see a model that is working (module `http`).
//! A server that refuses `stream` (an error naming it) is asked again without, and remembered
//! (module `accepts`). An error event in the stream (`data: {"error": …}`, or llama-server's
//! `error: {…}` line) is the server's error answer, classified like one (module `failure`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::conversation::Reply;
use super::http::Answer;
use super::openai::{call_of, usage_of};

/// Why a stream is not an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamError {
    /// The server sent an error event; its JSON, to classify like an error body.
    Server(String),
    /// The stream cannot be read, or ended before the answer did.
    Broken(String),
}

/// Whether `answer` is a stream of events rather than one JSON body.
pub fn is_stream(answer: &Answer) -> bool {
    answer.content_type.as_deref() == Some("text/event-stream")
        || answer.body.trim_start().starts_with("data:")
}

/// Whether an error answer refuses streaming: its body names `stream` as what it does not take.
pub fn refused(status: u16, body: &str) -> bool {
    let lower = body.to_lowercase();
    status >= 400
        && [
            "stream_options",
            "'stream'",
            "\"stream\"",
            "\\\"stream\\\"",
            "`stream`",
            "stream is not supported",
            "streaming is not supported",
            "does not support stream",
        ]
        .iter()
        .any(|words| lower.contains(words))
}

/// One tool call as its deltas arrive.
#[derive(Default)]
struct Partial {
    id: Option<String>,
    name: String,
    arguments: String,
}

/// The answer a stream's body carries.
pub fn parse(body: &str) -> Result<Reply, StreamError> {
    let mut reply = Reply::default();
    let mut calls: BTreeMap<u64, Partial> = BTreeMap::new();
    let mut done = false;
    for line in body.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(error) = line.strip_prefix("error:") {
            return Err(StreamError::Server(error.trim().to_string()));
        }
        let Some(data) = line.strip_prefix("data:") else {
            // Comments (`: ping`), `event:`, `id:`, `retry:` and the blank lines between events.
            continue;
        };
        let data = data.trim();
        if data == "[DONE]" {
            done = true;
            break;
        }
        if data.is_empty() {
            continue;
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| StreamError::Broken(format!("an event is not JSON ({e}): {data}")))?;
        if chunk.get("error").is_some() {
            return Err(StreamError::Server(data.to_string()));
        }
        if let Some(usage) = chunk.get("usage").filter(|usage| usage.is_object()) {
            reply.usage = usage_of(usage);
        }
        let Some(choice) = chunk.get("choices").and_then(|choices| choices.get(0)) else {
            continue;
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            reply.stop_reason = Some(reason.to_string());
        }
        let Some(delta) = choice.get("delta") else {
            continue;
        };
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            reply.text.push_str(text);
        }
        for (position, call) in delta
            .get("tool_calls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            let index = call
                .get("index")
                .and_then(Value::as_u64)
                .unwrap_or(position as u64);
            let partial = calls.entry(index).or_default();
            if let Some(id) = call.get("id").and_then(Value::as_str) {
                partial.id.get_or_insert_with(|| id.to_string());
            }
            let function = call.get("function");
            if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str) {
                if partial.name.is_empty() {
                    partial.name = name.to_string();
                }
            }
            match function.and_then(|f| f.get("arguments")) {
                Some(Value::String(piece)) => partial.arguments.push_str(piece),
                // Some servers send the arguments whole, as an object.
                Some(whole) if !whole.is_null() => partial.arguments = whole.to_string(),
                _ => {}
            }
        }
    }
    if !done && reply.stop_reason.is_none() {
        return Err(StreamError::Broken(
            "the stream ended before the answer did (no `finish_reason`, no `[DONE]`)".to_string(),
        ));
    }
    reply.calls = calls
        .into_values()
        .enumerate()
        .map(|(index, partial)| {
            call_of(
                index,
                partial.id.as_deref(),
                &partial.name,
                partial.arguments,
            )
        })
        .collect();
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn events(chunks: &[Value]) -> String {
        let mut body: String = chunks
            .iter()
            .map(|chunk| format!("data: {chunk}\n\n"))
            .collect();
        body.push_str("data: [DONE]\n\n");
        body
    }

    #[test]
    fn text_deltas_finish_reason_and_usage_make_one_reply() {
        let body = events(&[
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Hel"}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": null}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 3}}),
        ]);
        let reply = parse(&format!(": ping\n\n{body}")).unwrap();
        assert_eq!(reply.text, "Hello");
        assert_eq!(reply.stop_reason.as_deref(), Some("length"));
        assert_eq!(reply.usage.input_tokens, 12);
        assert_eq!(reply.usage.output_tokens, 3);
        assert!(reply.calls.is_empty());
    }

    #[test]
    fn tool_call_deltas_are_joined_by_index() {
        let body = events(&[
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "call_a", "type": "function", "function": {"name": "write", "arguments": ""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"a.txt\", "}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 1, "id": "call_b", "function": {"name": "read", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"content\": \"hi\"}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
        ]);
        let reply = parse(&body).unwrap();
        assert_eq!(reply.calls.len(), 2);
        assert_eq!(reply.calls[0].id, "call_a");
        assert_eq!(reply.calls[0].name, "write");
        assert_eq!(
            reply.calls[0].arguments,
            Ok(json!({"path": "a.txt", "content": "hi"}))
        );
        assert_eq!(reply.calls[1].name, "read");
        assert_eq!(reply.stop_reason.as_deref(), Some("tool_calls"));
    }

    #[test]
    fn error_events_and_cut_streams_are_not_answers() {
        let llama_server = "error: {\"code\":500,\"message\":\"Context size has been exceeded.\",\"type\":\"server_error\"}\n\n";
        assert!(
            matches!(parse(llama_server), Err(StreamError::Server(body)) if body.contains("Context size"))
        );
        let in_data = events(&[json!({"error": {"message": "boom"}})]);
        assert!(matches!(parse(&in_data), Err(StreamError::Server(_))));
        let cut = "data: {\"choices\": [{\"delta\": {\"content\": \"Hel\"}}]}\n\n";
        assert!(matches!(parse(cut), Err(StreamError::Broken(_))));
        assert!(matches!(
            parse("data: {not json\n\n"),
            Err(StreamError::Broken(_))
        ));
    }

    #[test]
    fn only_a_body_naming_stream_refuses_it() {
        assert!(refused(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: stream_options"}}"#
        ));
        assert!(refused(
            400,
            r#"{"error":{"message":"`stream` is not supported for this model"}}"#
        ));
        assert!(refused(
            422,
            r#"{"detail":[{"loc":["body","stream"],"msg":"extra fields not permitted"}],"param":"stream"}"#
        ));
        assert!(!refused(500, r#"{"error":{"message":"upstream error"}}"#));
        assert!(!refused(500, "Context size has been exceeded."));
        assert!(!refused(200, "'stream'"));
    }

    #[test]
    fn a_stream_is_known_by_its_media_type_or_its_first_line() {
        let answer = |content_type: Option<&str>, body: &str| Answer {
            status: 200,
            body: body.to_string(),
            retry_after: None,
            content_type: content_type.map(str::to_string),
            cut: None,
        };
        assert!(is_stream(&answer(Some("text/event-stream"), "")));
        assert!(is_stream(&answer(None, "data: {}\n\n")));
        assert!(!is_stream(&answer(
            Some("application/json"),
            "{\"choices\": []}"
        )));
    }
}
