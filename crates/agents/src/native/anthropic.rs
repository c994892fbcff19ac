//! The Anthropic Messages dialect (`POST {base_url}/messages`).
//!
//! Tools are plain tools with an `input_schema`; the model's calls are `tool_use` blocks whose
//! input is already JSON, and results go back as `tool_result` blocks of a user message. The
//! API has no response format, so a verdict role is offered one more tool, [`VERDICT_TOOL`],
//! whose input schema is the verdict schema: the model ends by calling it, and its input is
//! the verdict.
//!
//! Every request carries prompt-cache breakpoints (`cache_control`, [`CACHE`]): on the last
//! tool (the tools are the prompt's first part), on the system prompt, and on the last block of
//! the conversation's latest message. A tool-using session resends its whole conversation on
//! every round trip; with the breakpoints each request reads all but its newest part from the
//! cache (billed at a tenth of the input price) instead of paying for it again. Up to four
//! breakpoints are allowed; these are three.

use serde_json::{json, Value};

use super::conversation::{count, Call, Exchange, Message, Reply};
use super::reply_error::ReplyError;
use crate::pricing::TokenCounts;
use model::workflow::model::ToolChoice;

/// The request path under `base_url`.
pub const MESSAGES_PATH: &str = "messages";
/// The API version every request names.
pub const API_VERSION: &str = "2023-06-01";
/// The tool a verdict role returns its verdict with.
pub const VERDICT_TOOL: &str = "verdict";

/// The prompt-cache breakpoint every request sets (Anthropic's default five-minute cache).
pub fn cache() -> Value {
    json!({"type": "ephemeral"})
}

pub fn request_body(exchange: &Exchange<'_>) -> Value {
    let mut messages: Vec<Value> = exchange
        .messages
        .iter()
        .map(|message| match message {
            // As a block, the same whether or not it carries the latest breakpoint, so the
            // next request's prefix is byte for byte this one's.
            Message::User(text) => {
                json!({"role": "user", "content": [{"type": "text", "text": text}]})
            }
            Message::Assistant { text, calls } => {
                let mut blocks = Vec::new();
                if !text.is_empty() {
                    blocks.push(json!({"type": "text", "text": text}));
                }
                blocks.extend(calls.iter().map(|call| {
                    json!({
                        "type": "tool_use",
                        "id": call.id,
                        "name": call.name,
                        "input": call.arguments.clone().unwrap_or_else(|_| json!({})),
                    })
                }));
                json!({"role": "assistant", "content": blocks})
            }
            Message::Results(results) => json!({
                "role": "user",
                "content": results.iter().map(|result| json!({
                    "type": "tool_result",
                    "tool_use_id": result.call_id,
                    "content": result.content,
                    "is_error": result.is_error,
                })).collect::<Vec<_>>(),
            }),
        })
        .collect();
    // The latest message's last block closes the part the next request reads from the cache.
    if let Some(last) = messages.last_mut() {
        if let Some(block) = last["content"].as_array_mut().and_then(|b| b.last_mut()) {
            block["cache_control"] = cache();
        }
    }
    let mut tools: Vec<Value> = exchange
        .tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "input_schema": tool.parameters,
            })
        })
        .collect();
    if let Some(schema) = exchange.verdict_schema {
        tools.push(json!({
            "name": VERDICT_TOOL,
            "description": "Return your verdict. Call this exactly once, when your review is complete; its input is the verdict.",
            "input_schema": schema,
        }));
    }
    let mut body = json!({
        "model": exchange.model,
        "max_tokens": exchange.max_tokens.unwrap_or(super::max_tokens::DEFAULT_MAX_TOKENS),
        "messages": messages,
    });
    if !exchange.system.is_empty() {
        body["system"] =
            json!([{"type": "text", "text": exchange.system, "cache_control": cache()}]);
    }
    if let (Some(choice), false) = (exchange.tool_choice, exchange.tools.is_empty()) {
        body["tool_choice"] = json!({"type": match choice {
            ToolChoice::Auto => "auto",
            ToolChoice::Required => "any",
        }});
    }
    if let Some(last) = tools.last_mut() {
        last["cache_control"] = cache();
    }
    if !tools.is_empty() {
        body["tools"] = json!(tools);
    }
    body
}

pub fn parse_reply(body: &Value) -> Result<Reply, ReplyError> {
    let blocks = body
        .get("content")
        .and_then(Value::as_array)
        .ok_or(ReplyError::Missing("content"))?;
    let mut text = Vec::new();
    let mut calls = Vec::new();
    for block in blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => text.push(
                block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            ),
            Some("tool_use") => {
                let input = block.get("input").cloned().unwrap_or(json!({}));
                calls.push(Call {
                    id: block
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    name: block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    raw_arguments: input.to_string(),
                    arguments: Ok(input),
                });
            }
            _ => {}
        }
    }
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    let cached = count(&usage, &["cache_read_input_tokens"]);
    let written = count(&usage, &["cache_creation_input_tokens"]);
    Ok(Reply {
        text: text.join("\n"),
        calls,
        // `input_tokens` excludes the tokens read from or written to the prompt cache.
        usage: TokenCounts {
            input_tokens: count(&usage, &["input_tokens"]) + cached + written,
            cached_input_tokens: cached,
            cache_written_tokens: written,
            output_tokens: count(&usage, &["output_tokens"]),
        },
        stop_reason: body
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::native::conversation::ToolResult;

    #[test]
    fn results_go_back_as_tool_result_blocks_and_a_verdict_is_a_tool() {
        let messages = vec![
            Message::User("review".into()),
            Message::Assistant {
                text: "looking".into(),
                calls: vec![Call {
                    id: "t1".into(),
                    name: "read".into(),
                    raw_arguments: "{}".into(),
                    arguments: Ok(json!({"path": "a"})),
                }],
            },
            Message::Results(vec![ToolResult {
                call_id: "t1".into(),
                content: "refused".into(),
                is_error: true,
            }]),
        ];
        let schema = json!({"type": "object"});
        let body = request_body(&Exchange {
            model: "claude-x",
            system: "sys",
            messages: &messages,
            tools: &[],
            verdict_schema: Some(&schema),
            format: crate::native::format::Format::JsonSchema,
            max_tokens: Some(8192),
            tool_choice: Some(ToolChoice::Required),
            stream: false,
            cache_key: None,
        });
        // Without tools of its own, the role is not forced to call one.
        assert!(body.get("tool_choice").is_none(), "{body}");
        assert_eq!(body["system"][0]["text"], "sys");
        assert_eq!(body["messages"][1]["content"][1]["type"], "tool_use");
        // Three cache breakpoints: the last tool, the system prompt, the latest message.
        assert_eq!(body["tools"][0]["cache_control"], cache());
        assert_eq!(body["system"][0]["cache_control"], cache());
        assert_eq!(body["messages"][2]["content"][0]["cache_control"], cache());
        assert!(body["messages"][0]["content"][0]
            .get("cache_control")
            .is_none());
        assert_eq!(body.to_string().matches("cache_control").count(), 3);
        assert_eq!(body["messages"][2]["content"][0]["is_error"], true);
        assert_eq!(body["tools"][0]["name"], VERDICT_TOOL);
        assert_eq!(body["tools"][0]["input_schema"], schema);
    }

    #[test]
    fn a_reply_counts_cached_input_as_input() {
        let reply = parse_reply(&json!({
            "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "x", "name": "glob", "input": {"pattern": "*"}}],
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90},
        }))
        .unwrap();
        assert_eq!(reply.text, "hi");
        assert_eq!(reply.calls[0].name, "glob");
        assert_eq!(reply.usage.input_tokens, 100);
        assert_eq!(reply.usage.uncached_input_tokens(), 10);
    }

    /// What was written to the cache is billed as input and counted apart.
    #[test]
    fn a_reply_counts_what_it_wrote_to_the_cache() {
        let reply = parse_reply(&json!({
            "content": [{"type": "text", "text": "hi"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 90,
                      "cache_creation_input_tokens": 20},
        }))
        .unwrap();
        let usage = crate::TokenUsage::from(reply.usage);
        assert_eq!(
            (usage.input, usage.cached, usage.cache_written),
            (30, 90, 20)
        );
    }
}
