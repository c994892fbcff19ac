//! The Anthropic Messages API as Claude Code uses it: `POST /v1/messages` with `stream: true`,
//! answered with the events `message_start`, `content_block_start`, `content_block_delta`
//! (`text_delta` or `input_json_delta`), `content_block_stop`, `message_delta` (the stop reason
//! and usage) and `message_stop`.

use serde_json::{json, Value};

use super::http::Response;
use super::{sse, Failure, Step};

/// Input tokens reported for every answer.
pub const INPUT_TOKENS: u64 = 100;
/// Output tokens reported for every answer.
pub const OUTPUT_TOKENS: u64 = 20;

/// The texts of the user messages (strings and `text` blocks; not tool results).
pub fn user_text(body: &Value) -> String {
    let mut out = String::new();
    for message in messages(body).iter().filter(|m| m["role"] == "user") {
        match &message["content"] {
            Value::String(text) => out.push_str(text),
            Value::Array(blocks) => {
                for block in blocks.iter().filter(|b| b["type"] == "text") {
                    out.push_str(block["text"].as_str().unwrap_or(""));
                    out.push('\n');
                }
            }
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// The contents of the `tool_result` blocks, in order (an error result is prefixed `ERROR: `).
pub fn tool_results(body: &Value) -> Vec<String> {
    let mut results = Vec::new();
    for message in messages(body) {
        let Some(blocks) = message["content"].as_array() else {
            continue;
        };
        for block in blocks.iter().filter(|b| b["type"] == "tool_result") {
            let content = match &block["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            let error = block["is_error"].as_bool().unwrap_or(false);
            results.push(if error {
                format!("ERROR: {content}")
            } else {
                content
            });
        }
    }
    results
}

/// How many answers the model already gave in this conversation.
pub fn step_of(body: &Value) -> usize {
    messages(body)
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

fn messages(body: &Value) -> Vec<Value> {
    body["messages"].as_array().cloned().unwrap_or_default()
}

fn content_block(step: &Step, index: usize) -> (Value, Value, &'static str) {
    match step {
        Step::Text(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
        Step::Tool { name, input } => (
            json!({"type": "tool_use", "id": format!("toolu_scripted_{index}"), "name": name, "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        ),
    }
}

/// The event stream of one answer.
pub fn stream(model: &str, step: &Step, index: usize) -> Vec<u8> {
    let (start, delta, stop_reason) = content_block(step, index);
    sse(&[
        json!({"type": "message_start", "message": {
            "id": format!("msg_scripted_{index}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": 1,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": start}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta",
               "delta": {"stop_reason": stop_reason, "stop_sequence": null},
               "usage": {"output_tokens": OUTPUT_TOKENS}}),
        json!({"type": "message_stop"}),
    ])
}

/// The same answer as one JSON message, for a request without `stream`.
pub fn message(model: &str, step: &Step, index: usize) -> Value {
    let (content, stop_reason) = match step {
        Step::Text(text) => (json!({"type": "text", "text": text}), "end_turn"),
        Step::Tool { name, input } => (
            json!({"type": "tool_use", "id": format!("toolu_scripted_{index}"), "name": name, "input": input}),
            "tool_use",
        ),
    };
    json!({
        "id": format!("msg_scripted_{index}"), "type": "message", "role": "assistant",
        "model": model, "content": [content], "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": INPUT_TOKENS, "output_tokens": OUTPUT_TOKENS},
    })
}

/// The API's answer for a scripted failure.
pub fn failure(failure: Failure) -> Response {
    match failure {
        Failure::Unauthorized => Response::json(
            401,
            json!({"type": "error",
                   "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        ),
        Failure::RateLimited => Response::json(
            429,
            json!({"type": "error", "error": {"type": "rate_limit_error",
                   "message": "Number of request tokens has exceeded your per-minute rate limit"}}),
        )
        .header("retry-after", "1"),
    }
}
