use serde_json::json;

use super::*;

fn parse(lines: &[String]) -> StreamSummary {
    let text = lines.join("\n");
    read(text.as_bytes()).unwrap()
}

fn assistant(id: &str, block: serde_json::Value, usage: serde_json::Value) -> String {
    json!({"type": "assistant", "message": {"id": id, "content": [block], "usage": usage}})
        .to_string()
}

fn usage(input: u64, output: u64, cache_read: u64, cache_creation: u64) -> serde_json::Value {
    json!({"input_tokens": input, "output_tokens": output,
           "cache_read_input_tokens": cache_read, "cache_creation_input_tokens": cache_creation})
}

#[test]
fn usage_of_one_message_is_counted_once() {
    let summary = parse(&[
        assistant(
            "msg_1",
            json!({"type": "text", "text": "Looking"}),
            usage(10, 5, 100, 7),
        ),
        assistant(
            "msg_1",
            json!({"type": "tool_use", "name": "Read"}),
            usage(10, 5, 100, 7),
        ),
        assistant(
            "msg_2",
            json!({"type": "text", "text": "Done."}),
            usage(3, 20, 50, 0),
        ),
    ]);
    assert_eq!(
        summary.tokens(),
        TokenUsage {
            input: 20,
            output: 25,
            cached: 150,
            cache_written: 7,
        }
    );
    assert_eq!(summary.final_message(), "Done.");
}

#[test]
fn a_repeated_message_keeps_its_largest_counts() {
    let summary = parse(&[
        assistant(
            "m",
            json!({"type": "text", "text": "a"}),
            usage(10, 1, 0, 0),
        ),
        assistant(
            "m",
            json!({"type": "text", "text": "b"}),
            usage(10, 9, 0, 0),
        ),
    ]);
    assert_eq!(summary.tokens().output, 9);
}

#[test]
fn init_and_result_are_recorded() {
    let summary = parse(&[
        json!({"type": "system", "subtype": "init", "session_id": "s-1", "model": "claude-x",
               "tools": ["Read", "Bash"]})
        .to_string(),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "All done",
               "session_id": "s-1", "total_cost_usd": 0.25, "num_turns": 4,
               "usage": usage(1, 2, 3, 4),
               "permission_denials": [{"tool_name": "Write", "tool_use_id": "t1",
                                       "tool_input": {"file_path": "a.txt"}}],
               "structured_output": {"decision": "approve"}})
        .to_string(),
    ]);
    let init = summary.init.as_ref().unwrap();
    assert_eq!(init.tools, ["Read", "Bash"]);
    assert_eq!(init.model.as_deref(), Some("claude-x"));
    let result = summary.result.as_ref().unwrap();
    assert_eq!(result.subtype, "success");
    assert!(!result.is_error);
    assert_eq!(result.cost_usd, Some(0.25));
    assert_eq!(result.num_turns, Some(4));
    assert_eq!(
        result.permission_denials,
        [r#"Write: {"file_path":"a.txt"}"#]
    );
    assert_eq!(
        result.structured_output,
        Some(json!({"decision": "approve"}))
    );
    assert_eq!(summary.session_id().as_deref(), Some("s-1"));
    assert_eq!(summary.final_message(), "All done");
    // Without per-message usage, the result's totals count.
    assert_eq!(
        summary.tokens(),
        TokenUsage {
            input: 5,
            output: 2,
            cached: 3,
            cache_written: 4,
        }
    );
}

#[test]
fn non_json_lines_and_unknown_events_are_skipped() {
    let summary = parse(&[
        "npm WARN something".to_string(),
        "[1, 2]".to_string(),
        String::new(),
        json!({"type": "stream_event", "event": {}}).to_string(),
        json!({"type": "user", "message": {"content": [{"type": "tool_result"}]}}).to_string(),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "ok"})
            .to_string(),
    ]);
    assert_eq!(summary.skipped_lines, 2);
    assert_eq!(summary.final_message(), "ok");
}

#[test]
fn the_session_id_falls_back_to_the_init_event() {
    let summary =
        parse(&[json!({"type": "system", "subtype": "init", "session_id": "s-9"}).to_string()]);
    assert_eq!(summary.session_id().as_deref(), Some("s-9"));
    assert!(summary.result.is_none());
}

#[test]
fn a_long_line_is_read_whole() {
    let big = "x".repeat(3 << 20);
    let summary = parse(&[
        assistant("m", json!({"type": "text", "text": big}), usage(1, 1, 0, 0)),
        json!({"type": "result", "subtype": "success", "is_error": false}).to_string(),
    ]);
    assert_eq!(summary.final_message().len(), 3 << 20);
}

#[test]
fn a_line_over_the_limit_is_skipped_and_reading_goes_on() {
    let text = format!(
        "{}\n{{\"type\":\"result\",\"result\":\"after\"}}\n",
        "y".repeat(100)
    );
    let mut seen = Vec::new();
    for_each_line(text.as_bytes(), 50, |line| {
        seen.push(line.map(str::to_string))
    })
    .unwrap();
    assert_eq!(
        seen,
        [
            None,
            Some(r#"{"type":"result","result":"after"}"#.to_string())
        ]
    );
}

#[test]
fn a_long_denied_input_is_shortened() {
    let long = "z".repeat(1000);
    let shown = denial(&json!({"tool_name": "Bash", "tool_input": {"command": long}}));
    assert!(shown.starts_with("Bash: {\"command\":\"zzz"));
    assert!(shown.ends_with('…'));
    assert!(shown.chars().count() < 220);
}

#[test]
fn machine_readable_error_fields_are_kept() {
    let summary = parse(&[
        json!({"type": "system", "subtype": "api_retry", "attempt": 1, "max_retries": 10,
               "retry_delay_ms": 500, "error_status": 529, "error": "overloaded"})
        .to_string(),
        json!({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10,
               "retry_delay_ms": 1000, "error_status": 401, "error": "authentication_failed"})
        .to_string(),
        json!({"type": "assistant", "error": "authentication_failed",
               "message": {"id": "m1", "model": "<synthetic>", "role": "assistant",
                           "content": [{"type": "text", "text": "Not logged in · Please run /login"}],
                           "usage": {"input_tokens": 0, "output_tokens": 0}}})
        .to_string(),
        json!({"type": "result", "subtype": "success", "is_error": true,
               "result": "Not logged in · Please run /login", "api_error_status": 401})
        .to_string(),
    ]);
    assert_eq!(summary.retries, 2);
    let retry = summary.last_retry.as_ref().unwrap();
    assert_eq!(retry.error_status, Some(401));
    assert_eq!(retry.error.as_deref(), Some("authentication_failed"));
    let api_error = summary.api_error.as_ref().unwrap();
    assert_eq!(api_error.label, "authentication_failed");
    assert_eq!(
        api_error.text.as_deref(),
        Some("Not logged in · Please run /login")
    );
    assert_eq!(summary.result.as_ref().unwrap().api_error_status, Some(401));
}
