//! Reading the JSONL event stream of `codex exec --json`.
//!
//! The stream is folded line by line into a [`StreamSummary`]: the thread id (the session to
//! resume), the last `agent_message` (the final message; with `--output-schema` it is the JSON
//! answer), token usage summed over `turn.completed` events, and whatever says the run failed.
//! Parsing is forgiving where codex is chatty and strict where it matters: a line that is not a
//! JSON object, or an event or item type this version does not know, is skipped; a
//! `turn.failed` fails the run, and so does an `error` event unless a later `turn.completed`
//! shows codex recovered from it (codex reports transient trouble such as a dropped stream it
//! reconnects to as `error` events, then finishes the turn). Lines are read from disk with a
//! generous bound, so a multi-megabyte command output in one event costs a little memory once
//! and never truncates the events after it.

use std::io::{self, BufRead};

use serde_json::Value;

use crate::pricing::TokenCounts;
use process::LineSignal;

/// Longer lines are skipped (counted in [`StreamSummary::skipped_lines`]), not held in memory.
pub const MAX_EVENT_LINE: usize = 64 << 20;

/// Messages kept for classifying a failure; older ones are dropped.
const KEPT_MESSAGES: usize = 8;

/// Bytes of one error message kept.
const MESSAGE_LIMIT: usize = 4096;

/// What a codex event stream said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamSummary {
    /// From `thread.started`: the id `codex exec resume` takes.
    pub thread_id: Option<String>,
    /// The text of the last completed `agent_message` item.
    pub final_message: Option<String>,
    /// Summed over every `turn.completed`.
    pub usage: TokenCounts,
    pub turns_completed: u32,
    /// The message of the last `turn.failed`.
    pub turn_failure: Option<String>,
    /// Messages of `error` events, the most recent last.
    pub errors: Vec<String>,
    /// An `error` event arrived after the last `turn.completed`.
    pub error_pending: bool,
    /// Messages of `error` items: non-fatal notices (a config warning, a model fallback) that
    /// explain a failure when one follows.
    pub notices: Vec<String>,
    /// Commands whose execution was declined.
    pub declined_commands: Vec<String>,
    /// Completed items that acted (a command, a file change, a tool call): codex did something
    /// even when its final message is empty.
    pub acted_items: u32,
    /// Lines that were not JSON objects, or too long to keep.
    pub skipped_lines: usize,
}

impl StreamSummary {
    /// Why the run failed according to its events, if it did.
    pub fn failure(&self) -> Option<&str> {
        self.turn_failure.as_deref().or_else(|| {
            self.error_pending
                .then(|| self.errors.last().map(String::as_str))
                .flatten()
        })
    }

    /// Folds one line of the stream in.
    pub fn feed(&mut self, line: &str) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
            self.skipped_lines += 1;
            return;
        };
        match event.get("type").and_then(Value::as_str) {
            Some("thread.started") => {
                if let Some(id) = event.get("thread_id").and_then(Value::as_str) {
                    self.thread_id = Some(id.to_string());
                }
            }
            Some("turn.completed") => {
                self.turns_completed += 1;
                self.error_pending = false;
                if let Some(usage) = event.get("usage") {
                    self.usage.add(usage_of(usage));
                }
            }
            Some("turn.failed") => {
                let message = event
                    .get("error")
                    .and_then(|error| error.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("the turn failed (codex gave no reason)");
                self.turn_failure = Some(bounded(message));
            }
            Some("error") => {
                let message = event
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("codex reported an error without a message");
                push_bounded(&mut self.errors, message);
                self.error_pending = true;
            }
            Some("item.completed") => {
                if let Some(item) = event.get("item") {
                    self.completed_item(item);
                }
            }
            _ => {}
        }
    }

    fn completed_item(&mut self, item: &Value) {
        let text = |key: &str| item.get(key).and_then(Value::as_str);
        match text("type") {
            Some("agent_message") => {
                if let Some(message) = text("text") {
                    self.final_message = Some(message.to_string());
                }
            }
            Some("error") => {
                if let Some(message) = text("message") {
                    push_bounded(&mut self.notices, message);
                }
            }
            Some("command_execution") if text("status") == Some("declined") => {
                if let Some(command) = text("command") {
                    self.declined_commands.push(command.to_string());
                }
                self.acted_items += 1;
            }
            Some("command_execution" | "file_change" | "mcp_tool_call" | "web_search") => {
                self.acted_items += 1;
            }
            _ => {}
        }
    }
}

/// Whether an `error` message is codex saying it lost the stream and is reconnecting
/// ("Reconnecting... 2/5 (…)"; newer versions print "Reconnecting…").
pub fn is_reconnect_notice(message: &str) -> bool {
    message
        .trim_start()
        .to_lowercase()
        .starts_with("reconnecting")
}

/// One line of the event stream, for the idle watchdog: a reconnect notice is no progress.
/// Offline, codex prints them without end, and each would otherwise restart the watchdog.
pub fn judge_line(line: &str) -> LineSignal {
    let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
        return LineSignal::Progress;
    };
    let reconnecting = event.get("type").and_then(Value::as_str) == Some("error")
        && event
            .get("message")
            .and_then(Value::as_str)
            .is_some_and(is_reconnect_notice);
    if reconnecting {
        LineSignal::Waiting
    } else {
        LineSignal::Progress
    }
}

/// Reads a whole event stream. Only I/O errors fail; bad lines are skipped.
pub fn read_stream(reader: impl BufRead) -> io::Result<StreamSummary> {
    let mut summary = StreamSummary::default();
    crate::for_each_line(reader, MAX_EVENT_LINE, |line| match line {
        Some(text) => summary.feed(text),
        None => summary.skipped_lines += 1,
    })?;
    Ok(summary)
}

fn usage_of(usage: &Value) -> TokenCounts {
    let count = |key: &str| usage.get(key).and_then(Value::as_u64).unwrap_or(0);
    TokenCounts {
        input_tokens: count("input_tokens"),
        cached_input_tokens: count("cached_input_tokens"),
        output_tokens: count("output_tokens"),
        ..TokenCounts::default()
    }
}

fn bounded(message: &str) -> String {
    message[..base::text::floor_char_boundary(message, MESSAGE_LIMIT)].to_string()
}

fn push_bounded(messages: &mut Vec<String>, message: &str) {
    if messages.len() == KEPT_MESSAGES {
        messages.remove(0);
    }
    messages.push(bounded(message));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary_of(text: &str) -> StreamSummary {
        read_stream(text.as_bytes()).unwrap()
    }

    const SUCCESS: &str = r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Planning**"}}
{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"","exit_code":null,"status":"in_progress"}}
{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc ls","aggregated_output":"src\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_2","type":"file_change","changes":[{"path":"src/a.rs","kind":"update"}],"status":"completed"}}
{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"first thoughts"}}
{"type":"item.completed","item":{"id":"item_4","type":"agent_message","text":"Done: added greeting()."}}
{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}
"#;

    #[test]
    fn a_successful_stream_gives_thread_message_and_usage() {
        let summary = summary_of(SUCCESS);
        assert_eq!(
            summary.thread_id.as_deref(),
            Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
        );
        assert_eq!(
            summary.final_message.as_deref(),
            Some("Done: added greeting().")
        );
        assert_eq!(summary.turns_completed, 1);
        assert_eq!(
            summary.usage,
            TokenCounts {
                input_tokens: 24763,
                cached_input_tokens: 24448,
                output_tokens: 122,
                ..TokenCounts::default()
            }
        );
        assert_eq!(summary.failure(), None);
        assert_eq!(summary.skipped_lines, 0);
    }

    #[test]
    fn usage_is_summed_over_turns() {
        let summary = summary_of(
            "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":100,\"cached_input_tokens\":40,\"output_tokens\":10}}\n\
             {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":50,\"cached_input_tokens\":0,\"output_tokens\":5}}\n",
        );
        assert_eq!(summary.turns_completed, 2);
        assert_eq!(summary.usage.input_tokens, 150);
        assert_eq!(summary.usage.cached_input_tokens, 40);
        assert_eq!(summary.usage.output_tokens, 15);
    }

    #[test]
    fn turn_failed_is_a_failure_even_after_a_completed_turn() {
        let summary = summary_of(
            "{\"type\":\"turn.completed\",\"usage\":{}}\n\
             {\"type\":\"turn.failed\",\"error\":{\"message\":\"stream disconnected\"}}\n",
        );
        assert_eq!(summary.failure(), Some("stream disconnected"));
        let summary = summary_of("{\"type\":\"turn.failed\"}\n");
        assert_eq!(
            summary.failure(),
            Some("the turn failed (codex gave no reason)")
        );
    }

    #[test]
    fn an_error_event_fails_unless_a_turn_completes_after_it() {
        let failed = summary_of(
            "{\"type\":\"turn.started\"}\n{\"type\":\"error\",\"message\":\"unexpected status 401 Unauthorized\"}\n",
        );
        assert_eq!(failed.failure(), Some("unexpected status 401 Unauthorized"));

        let recovered = summary_of(
            "{\"type\":\"error\",\"message\":\"Reconnecting... 1/5\"}\n{\"type\":\"turn.completed\",\"usage\":{}}\n",
        );
        assert_eq!(recovered.failure(), None);
        assert_eq!(recovered.errors, vec!["Reconnecting... 1/5"]);
    }

    #[test]
    fn non_json_lines_and_unknown_events_are_skipped() {
        let summary = summary_of(
            "Reading prompt from stdin...\n\
             [2025-01-01T00:00:00Z] warning: something\n\
             [1, 2]\n\
             {\"type\":\"some.future.event\",\"x\":1}\n\
             {\"type\":\"item.completed\",\"item\":{\"type\":\"future_item\"}}\n\
             {\"no_type\":true}\n\
             {\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"ok\"}}\n\
             {\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"cached_input_tokens\":0,\"output_tokens\":1}}",
        );
        assert_eq!(summary.skipped_lines, 3);
        assert_eq!(summary.final_message.as_deref(), Some("ok"));
        assert_eq!(summary.turns_completed, 1, "the last line needs no newline");
    }

    #[test]
    fn a_line_of_several_megabytes_is_read_whole() {
        let output = "x".repeat(5 << 20);
        let big = serde_json::json!({"type": "item.completed", "item": {"type": "command_execution",
            "command": "cat big", "aggregated_output": output, "exit_code": 0, "status": "completed"}});
        let stream = format!(
            "{big}\n{{\"type\":\"item.completed\",\"item\":{{\"type\":\"agent_message\",\"text\":\"after\"}}}}\n"
        );
        // A small buffer makes the line arrive in many pieces.
        let summary = read_stream(io::BufReader::with_capacity(4096, stream.as_bytes())).unwrap();
        assert_eq!(summary.skipped_lines, 0);
        assert_eq!(summary.final_message.as_deref(), Some("after"));
    }

    #[test]
    fn a_line_over_the_bound_is_skipped_without_losing_the_next() {
        let mut stream = vec![b'{'; MAX_EVENT_LINE + 10];
        stream.extend_from_slice(
            b"\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"next\"}}\n",
        );
        let summary = read_stream(stream.as_slice()).unwrap();
        assert_eq!(summary.skipped_lines, 1);
        assert_eq!(summary.final_message.as_deref(), Some("next"));
    }

    #[test]
    fn notices_and_declined_commands_are_kept() {
        let summary = summary_of(
            "{\"type\":\"item.completed\",\"item\":{\"type\":\"error\",\"message\":\"Model metadata for `o3-mini` not found\"}}\n\
             {\"type\":\"item.completed\",\"item\":{\"type\":\"command_execution\",\"command\":\"rm -rf /\",\"aggregated_output\":\"\",\"exit_code\":null,\"status\":\"declined\"}}\n\
             {\"type\":\"turn.failed\",\"error\":{\"message\":\"model not supported\"}}\n",
        );
        assert_eq!(summary.declined_commands, vec!["rm -rf /"]);
        assert_eq!(summary.notices, ["Model metadata for `o3-mini` not found"]);
        assert_eq!(summary.failure(), Some("model not supported"));
    }

    #[test]
    fn reconnect_notices_are_no_progress() {
        let notice = |m: &str| serde_json::json!({"type": "error", "message": m}).to_string();
        assert_eq!(
            judge_line(&notice(
                "Reconnecting... 2/5 (stream disconnected before completion)"
            )),
            LineSignal::Waiting
        );
        assert_eq!(
            judge_line(&notice("Reconnecting… 1/5")),
            LineSignal::Waiting
        );
        assert_eq!(
            judge_line(&notice("unexpected status 401 Unauthorized")),
            LineSignal::Progress
        );
        assert_eq!(
            judge_line("{\"type\":\"turn.started\"}"),
            LineSignal::Progress
        );
        assert_eq!(
            judge_line("Reading prompt from stdin..."),
            LineSignal::Progress
        );
    }

    #[test]
    fn messages_are_bounded() {
        let mut summary = StreamSummary::default();
        for i in 0..20 {
            summary.feed(&format!("{{\"type\":\"error\",\"message\":\"error {i}\"}}"));
        }
        assert_eq!(summary.errors.len(), KEPT_MESSAGES);
        assert_eq!(summary.errors.last().unwrap(), "error 19");
        let long = format!(
            "{{\"type\":\"turn.failed\",\"error\":{{\"message\":\"{}\"}}}}",
            "é".repeat(5000)
        );
        summary.feed(&long);
        assert!(summary.turn_failure.unwrap().len() <= MESSAGE_LIMIT);
    }
}
