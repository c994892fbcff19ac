//! Reading Claude Code's `stream-json` output: one JSON event per line.
//!
//! The stream is read defensively because it is written by another program whose format
//! evolves: a line that is not JSON (a warning printed by a wrapper, a Node deprecation
//! notice) is skipped, an event type we do not know is ignored, and a single event can be
//! several megabytes (a tool result quoting a large file), so lines are read from disk without
//! a small length limit. Usage is counted once per assistant message: the stream repeats a
//! message's `usage` on every content block of that message.

use std::collections::BTreeMap;
use std::io::{self, BufRead};

use serde_json::Value;

use super::signals::{status_of, ApiRetry};
use crate::{for_each_line, TokenUsage};

/// A line longer than this is skipped rather than held in memory.
pub const MAX_EVENT_LINE: usize = 256 << 20;

/// Characters of a denied tool's input quoted in the record.
const DENIAL_INPUT_CHARS: usize = 200;

/// What one invocation's event stream said.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StreamSummary {
    /// From the `system`/`init` event.
    pub init: Option<InitEvent>,
    /// Summed over assistant messages, each counted once.
    pub usage: TokenUsage,
    /// Whether any assistant message reported usage.
    pub saw_usage: bool,
    /// The text of the last assistant message that had text.
    pub last_assistant_text: Option<String>,
    pub result: Option<ResultEvent>,
    /// The last assistant message that stood for a failed API call: its `error` label and text.
    pub api_error: Option<ApiErrorMessage>,
    /// The last `system`/`api_retry` event, and how many there were.
    pub last_retry: Option<ApiRetry>,
    pub retries: usize,
    /// Lines that were not JSON objects, or too long to read.
    pub skipped_lines: usize,
}

/// A synthetic assistant message Claude Code prints for a failed API call.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiErrorMessage {
    /// `authentication_failed`, `rate_limit`, `billing_error`, …
    pub label: String,
    pub text: Option<String>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct InitEvent {
    pub session_id: Option<String>,
    pub model: Option<String>,
    /// The tools the session actually has, as Claude Code names them.
    pub tools: Vec<String>,
}

/// The final `result` event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultEvent {
    /// `success`, `error_max_turns`, `error_during_execution`, …
    pub subtype: String,
    pub is_error: bool,
    /// The final message (or the error text).
    pub text: Option<String>,
    pub session_id: Option<String>,
    pub cost_usd: Option<f64>,
    pub num_turns: Option<u32>,
    pub usage: Option<TokenUsage>,
    /// `Tool: input` for each refused tool use.
    pub permission_denials: Vec<String>,
    /// The answer validated against `--json-schema`.
    pub structured_output: Option<Value>,
    /// Error strings some versions attach to error results.
    pub errors: Vec<String>,
    /// The HTTP status of the API error that ended the session.
    pub api_error_status: Option<u16>,
}

impl StreamSummary {
    /// The session id, from the result or else from the init event.
    pub fn session_id(&self) -> Option<String> {
        self.result
            .as_ref()
            .and_then(|r| r.session_id.clone())
            .or_else(|| self.init.as_ref().and_then(|i| i.session_id.clone()))
    }

    /// The tokens used: per message when the stream reported them (also correct for a run cut
    /// short, which has no result), else the result's totals.
    pub fn tokens(&self) -> TokenUsage {
        match &self.result {
            Some(ResultEvent {
                usage: Some(total), ..
            }) if !self.saw_usage => *total,
            _ => self.usage,
        }
    }

    /// The final message: the result's text, else the last thing the assistant said.
    pub fn final_message(&self) -> String {
        self.result
            .as_ref()
            .and_then(|r| r.text.clone())
            .or_else(|| self.last_assistant_text.clone())
            .unwrap_or_default()
    }
}

/// Reads a whole stream.
pub fn read(reader: impl BufRead) -> io::Result<StreamSummary> {
    let mut parser = Parser::default();
    for_each_line(reader, MAX_EVENT_LINE, |line| match line {
        Some(text) => parser.line(text),
        None => parser.summary.skipped_lines += 1,
    })?;
    Ok(parser.finish())
}

/// Builds a [`StreamSummary`] one line at a time.
#[derive(Debug, Default)]
pub struct Parser {
    summary: StreamSummary,
    /// Usage per assistant message id; repeated reports of one message keep the largest counts.
    per_message: BTreeMap<String, TokenUsage>,
    /// Usage of messages without an id (cannot be de-duplicated).
    anonymous: TokenUsage,
}

impl Parser {
    pub fn line(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let event = match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(event)) => event,
            _ => {
                self.summary.skipped_lines += 1;
                return;
            }
        };
        match event.get("type").and_then(Value::as_str) {
            Some("system") if text(&event, "subtype").as_deref() == Some("init") => {
                self.summary.init = Some(InitEvent {
                    session_id: text(&event, "session_id"),
                    model: text(&event, "model"),
                    tools: strings(event.get("tools")),
                });
            }
            Some("system") if text(&event, "subtype").as_deref() == Some("api_retry") => {
                self.summary.retries += 1;
                self.summary.last_retry = Some(ApiRetry::from_event(&event));
            }
            Some("assistant") => {
                let said = event.get("message").and_then(|m| self.assistant(m));
                if let Some(label) = text(&event, "error") {
                    self.summary.api_error = Some(ApiErrorMessage { label, text: said });
                }
            }
            Some("result") => self.summary.result = Some(result(&event)),
            _ => {}
        }
    }

    /// Counts an assistant message's usage and keeps its text, which it returns.
    fn assistant(&mut self, message: &Value) -> Option<String> {
        if let Some(usage) = message.get("usage").filter(|u| u.is_object()) {
            let usage = token_usage(usage);
            self.summary.saw_usage = true;
            match message.get("id").and_then(Value::as_str) {
                Some(id) => {
                    let seen = self.per_message.entry(id.to_string()).or_default();
                    *seen = seen.max(usage);
                }
                None => self.anonymous.add(usage),
            }
        }
        let said: Vec<&str> = message
            .get("content")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|block| block.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|block| block.get("text").and_then(Value::as_str))
            .collect();
        if said.is_empty() {
            return None;
        }
        let said = said.join("\n");
        self.summary.last_assistant_text = Some(said.clone());
        Some(said)
    }

    pub fn finish(mut self) -> StreamSummary {
        let mut total = self.anonymous;
        for usage in self.per_message.values() {
            total.add(*usage);
        }
        self.summary.usage = total;
        self.summary
    }
}

fn result(event: &serde_json::Map<String, Value>) -> ResultEvent {
    let text_value = match event.get("result") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Null) | None => None,
        Some(other) => Some(other.to_string()),
    };
    ResultEvent {
        subtype: text(event, "subtype").unwrap_or_default(),
        is_error: event
            .get("is_error")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        text: text_value,
        session_id: text(event, "session_id"),
        cost_usd: event.get("total_cost_usd").and_then(Value::as_f64),
        num_turns: event
            .get("num_turns")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok()),
        usage: event
            .get("usage")
            .filter(|u| u.is_object())
            .map(token_usage),
        permission_denials: event
            .get("permission_denials")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(denial)
            .collect(),
        structured_output: event
            .get("structured_output")
            .filter(|v| !v.is_null())
            .cloned(),
        errors: strings(event.get("errors")),
        api_error_status: status_of(event.get("api_error_status")),
    }
}

/// `Tool: {input}` with the input shortened.
fn denial(value: &Value) -> String {
    let tool = value
        .get("tool_name")
        .and_then(Value::as_str)
        .unwrap_or("unknown tool");
    match value.get("tool_input") {
        Some(input) if !input.is_null() => {
            let shown = base::text::elide(&input.to_string(), DENIAL_INPUT_CHARS);
            format!("{tool}: {shown}")
        }
        _ => tool.to_string(),
    }
}

fn token_usage(usage: &Value) -> TokenUsage {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    // `input_tokens` counts neither what was read from the cache nor what was written to it.
    let written = count("cache_creation_input_tokens");
    TokenUsage {
        input: count("input_tokens") + written,
        output: count("output_tokens"),
        cached: count("cache_read_input_tokens"),
        cache_written: written,
    }
}

fn text(event: &serde_json::Map<String, Value>, key: &str) -> Option<String> {
    event.get(key).and_then(Value::as_str).map(str::to_string)
}

fn strings(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|item| match item {
            Value::String(s) => Some(s.clone()),
            Value::Null => None,
            other => Some(other.to_string()),
        })
        .collect()
}

#[cfg(test)]
mod tests;
