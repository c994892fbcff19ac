//! The conversation as both APIs share it: the prompt, the model's answers (text and tool
//! calls) and the tools' results. Each dialect (modules `openai`, `anthropic`) turns it into
//! its request body and its response back into a [`Reply`].

use serde_json::Value;

use super::format::Format;
use crate::pricing::TokenCounts;
use model::workflow::model::ToolChoice;

/// One tool call the model asked for.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    pub id: String,
    pub name: String,
    /// The arguments as the model wrote them (OpenAI sends a JSON string; it may be malformed).
    pub raw_arguments: String,
    /// The arguments as JSON, or why they are not.
    pub arguments: Result<Value, String>,
}

/// What a tool call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    pub is_error: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    User(String),
    Assistant { text: String, calls: Vec<Call> },
    Results(Vec<ToolResult>),
}

/// One answer of the model.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub calls: Vec<Call>,
    pub usage: TokenCounts,
    /// Why the model stopped (`stop`, `tool_calls`, `length`, `end_turn`, …).
    pub stop_reason: Option<String>,
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

/// Everything one request says.
#[derive(Debug, Clone, Copy)]
pub struct Exchange<'a> {
    pub model: &'a str,
    pub system: &'a str,
    pub messages: &'a [Message],
    pub tools: &'a [ToolSpec],
    /// The verdict schema, when the role must return a verdict.
    pub verdict_schema: Option<&'a Value>,
    /// How the OpenAI dialect asks for the verdict (module `format`).
    pub format: Format,
    /// The most tokens the answer may have (the role's `max_tokens`, or the default for this
    /// dialect and server); `None`: none is sent.
    pub max_tokens: Option<u32>,
    /// Whether the model must call a tool in this answer; `None`: nothing is sent.
    pub tool_choice: Option<ToolChoice>,
    /// Ask for the answer as a stream of events (the OpenAI dialect's `stream`, module
    /// `stream`), so the idle watchdog sees each token.
    pub stream: bool,
    /// The OpenAI dialect's `prompt_cache_key`: requests of one role share it, so a server
    /// that caches prompts routes them to the same cache; `None`: nothing is sent.
    pub cache_key: Option<&'a str>,
}

/// A number from a JSON path, 0 when absent.
pub fn count(value: &Value, path: &[&str]) -> u64 {
    path.iter()
        .try_fold(value, |value, key| value.get(key))
        .and_then(Value::as_u64)
        .unwrap_or(0)
}
