//! The OpenAI chat-completions dialect (`POST {base_url}/chat/completions`), which Ollama,
//! llama.cpp's server, vLLM and LM Studio speak too.
//!
//! Tools are `function` tools; the model's calls come back in `message.tool_calls` with the
//! arguments as a JSON *string*, which a model may get wrong — a call whose arguments do not
//! parse is answered with an error result instead of being run. A verdict role asks for
//! `response_format: json_schema`, so the final message is the verdict JSON.

use serde_json::{json, Value};

use super::conversation::{count, Call, Exchange, Message, Reply};
use super::format::Format;
use super::reply_error::ReplyError;
use crate::pricing::TokenCounts;
use model::workflow::model::ToolChoice;

/// The request path under `base_url`.
pub const CHAT_PATH: &str = "chat/completions";

pub fn request_body(exchange: &Exchange<'_>) -> Value {
    let mut messages = Vec::new();
    if !exchange.system.is_empty() {
        messages.push(json!({"role": "system", "content": exchange.system}));
    }
    for message in exchange.messages {
        match message {
            Message::User(text) => messages.push(json!({"role": "user", "content": text})),
            Message::Assistant { text, calls } => {
                let mut entry = json!({"role": "assistant", "content": text});
                if !calls.is_empty() {
                    entry["tool_calls"] = calls
                        .iter()
                        .map(|call| {
                            json!({
                                "id": call.id,
                                "type": "function",
                                "function": {"name": call.name, "arguments": call.raw_arguments},
                            })
                        })
                        .collect();
                }
                messages.push(entry);
            }
            Message::Results(results) => {
                messages.extend(results.iter().map(|result| {
                    json!({"role": "tool", "tool_call_id": result.call_id, "content": result.content})
                }));
            }
        }
    }
    let mut body = json!({
        "model": exchange.model,
        "messages": messages,
    });
    if let Some(limit) = exchange.max_tokens {
        body["max_tokens"] = json!(limit);
    }
    if let Some(key) = exchange.cache_key {
        body["prompt_cache_key"] = json!(key);
    }
    if !exchange.tools.is_empty() {
        body["tools"] = exchange
            .tools
            .iter()
            .map(|tool| {
                json!({
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                    },
                })
            })
            .collect();
    }
    if let (Some(choice), false) = (exchange.tool_choice, exchange.tools.is_empty()) {
        body["tool_choice"] = match (choice, exchange.tools) {
            (ToolChoice::Auto, _) => json!("auto"),
            // The one tool by name: what llama-cpp-python's `chatml-function-calling` takes
            // (it answers "required" with a 500), and the same for every other server.
            (ToolChoice::Required, [only]) => {
                json!({"type": "function", "function": {"name": only.name}})
            }
            (ToolChoice::Required, _) => json!("required"),
        };
    }
    if exchange.stream {
        // `include_usage`: the last event carries the answer's tokens.
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
    }
    if let Some(schema) = exchange.verdict_schema {
        match exchange.format {
            Format::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": "verdict", "schema": schema},
                });
            }
            Format::JsonObject => {
                body["response_format"] = json!({"type": "json_object", "schema": schema});
            }
            Format::Plain => {}
        }
    }
    body
}

/// The first choice of a chat completion; `Err` when the body is not one.
pub fn parse_reply(body: &Value) -> Result<Reply, ReplyError> {
    let choice = body
        .get("choices")
        .and_then(|choices| choices.get(0))
        .ok_or(ReplyError::Missing("choices"))?;
    let message = choice.get("message").ok_or(ReplyError::NoMessage)?;
    let text = message
        .get("content")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let calls = message
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(index, call)| {
            let function = call.get("function").cloned().unwrap_or(Value::Null);
            let raw = match function.get("arguments") {
                Some(Value::String(text)) => text.clone(),
                // Some servers send the arguments as an object.
                Some(other) => other.to_string(),
                None => String::new(),
            };
            call_of(
                index,
                call.get("id").and_then(Value::as_str),
                function
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default(),
                raw,
            )
        })
        .collect();
    Ok(Reply {
        text,
        calls,
        usage: usage_of(body.get("usage").unwrap_or(&Value::Null)),
        stop_reason: choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A tool call as the model wrote it; `id` is made up from its position when missing.
pub fn call_of(index: usize, id: Option<&str>, name: &str, raw: String) -> Call {
    // Models write raw newlines inside strings (a file's content): read leniently.
    let arguments = base::json_text::parse_lenient(if raw.trim().is_empty() { "{}" } else { &raw })
        .map_err(|e| format!("the arguments are not JSON ({e})"));
    Call {
        id: id.map_or_else(|| format!("call_{index}"), str::to_string),
        name: name.to_string(),
        raw_arguments: raw,
        arguments,
    }
}

/// The tokens a `usage` object counts.
pub fn usage_of(usage: &Value) -> TokenCounts {
    TokenCounts {
        input_tokens: count(usage, &["prompt_tokens"]),
        cached_input_tokens: count(usage, &["prompt_tokens_details", "cached_tokens"]),
        output_tokens: count(usage, &["completion_tokens"]),
        ..TokenCounts::default()
    }
}

/// The model names a `GET {base_url}/models` answer lists (`data[].id`).
pub fn model_names(body: &Value) -> Vec<String> {
    body.get("data")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|model| model.get("id").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::conversation::{ToolResult, ToolSpec};

    #[test]
    fn the_conversation_becomes_chat_messages_with_function_tools() {
        let messages = vec![
            Message::User("do it".into()),
            Message::Assistant {
                text: String::new(),
                calls: vec![Call {
                    id: "c1".into(),
                    name: "read".into(),
                    raw_arguments: r#"{"path":"a"}"#.into(),
                    arguments: Ok(json!({"path": "a"})),
                }],
            },
            Message::Results(vec![ToolResult {
                call_id: "c1".into(),
                content: "hello".into(),
                is_error: false,
            }]),
        ];
        let tools = [ToolSpec {
            name: "read".into(),
            description: "Read".into(),
            parameters: json!({"type": "object"}),
        }];
        let schema = json!({"type": "object"});
        let body = request_body(&Exchange {
            model: "m",
            system: "be brief",
            messages: &messages,
            tools: &tools,
            verdict_schema: Some(&schema),
            format: Format::JsonSchema,
            max_tokens: Some(512),
            tool_choice: Some(ToolChoice::Required),
            stream: true,
            cache_key: Some("autobuild:T:coach"),
        });
        assert_eq!(body["prompt_cache_key"], "autobuild:T:coach");
        // One tool: forced by name.
        assert_eq!(
            body["tool_choice"],
            json!({"type": "function", "function": {"name": "read"}})
        );
        let two = [tools[0].clone(), tools[0].clone()];
        let several = request_body(&Exchange {
            tool_choice: Some(ToolChoice::Required),
            ..exchange_for_limit(&messages, &two)
        });
        assert_eq!(several["tool_choice"], "required");
        assert_eq!(body["stream"], true);
        assert_eq!(body["stream_options"]["include_usage"], true);
        assert_eq!(body["max_tokens"], 512);
        let unlimited = request_body(&Exchange {
            max_tokens: None,
            ..exchange_for_limit(&messages, &tools)
        });
        assert!(unlimited.get("max_tokens").is_none(), "{unlimited}");
        assert!(unlimited.get("tool_choice").is_none(), "{unlimited}");
        assert!(unlimited.get("stream").is_none(), "{unlimited}");
        assert_eq!(body["messages"][0]["role"], "system");
        assert_eq!(
            body["messages"][2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"a"}"#
        );
        assert_eq!(body["messages"][3]["role"], "tool");
        assert_eq!(body["messages"][3]["tool_call_id"], "c1");
        assert_eq!(body["tools"][0]["function"]["name"], "read");
        assert_eq!(body["response_format"]["type"], "json_schema");
    }

    #[test]
    fn a_reply_carries_text_calls_and_tokens_and_bad_arguments_are_kept_as_errors() {
        let body = json!({
            "choices": [{"finish_reason": "tool_calls", "message": {"content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "edit", "arguments": "{\"path\": "}},
                {"id": "b", "type": "function", "function": {"name": "read", "arguments": "{\"path\": \"x\"}"}},
            ]}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": 40}},
        });
        let reply = parse_reply(&body).unwrap();
        assert_eq!(reply.text, "");
        assert!(reply.calls[0].arguments.is_err());
        assert_eq!(reply.calls[1].arguments, Ok(json!({"path": "x"})));
        assert_eq!(reply.usage.input_tokens, 100);
        assert_eq!(reply.usage.cached_input_tokens, 40);
        assert_eq!(reply.usage.output_tokens, 7);
        assert_eq!(
            parse_reply(&json!({"error": "x"})),
            Err(ReplyError::Missing("choices"))
        );
        assert_eq!(
            parse_reply(&json!({"choices": [{}]})),
            Err(ReplyError::NoMessage)
        );
        assert_eq!(
            model_names(&json!({"data": [{"id": "qwen"}]})),
            vec!["qwen"]
        );
    }

    fn exchange_for_limit<'a>(messages: &'a [Message], tools: &'a [ToolSpec]) -> Exchange<'a> {
        Exchange {
            model: "m",
            system: "",
            messages,
            tools,
            verdict_schema: None,
            format: Format::JsonSchema,
            max_tokens: Some(1),
            tool_choice: None,
            stream: false,
            cache_key: None,
        }
    }
}
