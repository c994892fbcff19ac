//! The OpenAI Responses API as `codex exec` uses it: `POST /v1/responses` (always streaming),
//! answered with the events `response.created`, `response.output_item.added` and
//! `response.output_item.done` (an assistant `message` or a `function_call`), and
//! `response.completed` with the usage.

use serde_json::{json, Value};

use super::http::Response;
use super::{sse, Failure, Step};

/// Tokens reported for every answer: input, of which cached, and output.
pub const USAGE: (u64, u64, u64) = (1000, 200, 50);

fn items(body: &Value) -> Vec<Value> {
    body["input"].as_array().cloned().unwrap_or_default()
}

/// The texts of the user messages of the input.
pub fn user_text(body: &Value) -> String {
    let mut out = String::new();
    for item in items(body)
        .iter()
        .filter(|i| i["type"] == "message" && i["role"] == "user")
    {
        match &item["content"] {
            Value::String(text) => out.push_str(text),
            Value::Array(parts) => {
                for part in parts {
                    out.push_str(part["text"].as_str().unwrap_or(""));
                    out.push('\n');
                }
            }
            _ => {}
        }
        out.push('\n');
    }
    out
}

/// The outputs of the function calls so far, in order.
pub fn tool_results(body: &Value) -> Vec<String> {
    items(body)
        .iter()
        .filter(|i| i["type"] == "function_call_output")
        .map(|i| match &i["output"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// How many answers the model already gave: each scripted answer but the last is one function
/// call, so the calls in the input count them.
pub fn step_of(body: &Value) -> usize {
    items(body)
        .iter()
        .filter(|i| i["type"] == "function_call")
        .count()
}

/// The event stream of one answer.
pub fn stream(model: &str, step: &Step, index: usize) -> Vec<u8> {
    let id = format!("resp_scripted_{index}");
    let item = match step {
        Step::Text(text) => json!({
            "type": "message", "role": "assistant", "id": format!("msg_scripted_{index}"),
            "status": "completed",
            "content": [{"type": "output_text", "text": text, "annotations": []}],
        }),
        Step::Tool { name, input } => json!({
            "type": "function_call", "id": format!("fc_scripted_{index}"),
            "call_id": format!("call_scripted_{index}"), "name": name,
            "arguments": input.to_string(), "status": "completed",
        }),
    };
    let (input, cached, output) = USAGE;
    sse(&[
        json!({"type": "response.created",
               "response": {"id": id, "model": model, "status": "in_progress"}}),
        json!({"type": "response.output_item.added", "output_index": 0, "item": item}),
        json!({"type": "response.output_item.done", "output_index": 0, "item": item}),
        json!({"type": "response.completed", "response": {
            "id": id, "model": model, "status": "completed",
            "usage": {"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                      "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": input + output}}}),
    ])
}

/// The API's answer for a scripted failure.
pub fn failure(failure: Failure) -> Response {
    match failure {
        Failure::Unauthorized => Response::json(
            401,
            json!({"error": {"message": "Incorrect API key provided: test.",
                   "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}),
        ),
        Failure::RateLimited => Response::json(
            429,
            json!({"error": {"message": "Rate limit reached for requests per min (RPM). Please try again in 1s.",
                   "type": "requests", "param": null, "code": "rate_limit_exceeded"}}),
        )
        .header("retry-after", "1"),
    }
}
