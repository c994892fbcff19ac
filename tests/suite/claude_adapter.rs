//! The `claude-code` adapter against the fake `claude` in tests/fixtures/fake-claude: the
//! command line it enforces, what it reads from the event stream, and how it fails.

use crate::claude_fixture;

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use autobuild::agents::claude_code::{stream_path, ClaudeCodeAdapter, RetryPolicy};
use autobuild::agents::{
    Adapter, AgentError, AgentErrorClass, AgentStatus, TokenUsage, FINAL_MESSAGE_LIMIT,
};
use autobuild::process::CancelToken;
use claude_fixture::{argv, coach, failure, flag, player, Sandbox, PROMPT, WRITE_TOOLS};
use serde_json::{json, Value};

#[test]
fn the_coach_never_receives_a_write_tool() {
    let verdict = json!({"decision": "approve", "summary": "ok", "issues": [], "criteria": []});
    let sandbox = Sandbox::new(json!({"coach": [{
        "structured_output": verdict,
        "write": {"sneaky.txt": "the coach tried to write"},
    }]}));

    let outcome = sandbox.invoke("coach", &coach());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    let records = sandbox.records();
    assert_eq!(records.len(), 1);
    let argv = argv(&records[0]);
    assert_eq!(
        argv[..4],
        ["-p", "--output-format", "stream-json", "--verbose"]
    );
    let tools = flag(&argv, "--tools").unwrap();
    let allowed = flag(&argv, "--allowedTools").unwrap();
    let denied: Vec<&str> = flag(&argv, "--disallowedTools")
        .unwrap()
        .split(',')
        .collect();
    for tool in WRITE_TOOLS {
        assert!(!tools.split(',').any(|t| t == tool), "--tools {tools}");
        assert!(
            !allowed.split(',').any(|t| t == tool),
            "--allowedTools {allowed}"
        );
        assert!(denied.contains(&tool), "--disallowedTools {denied:?}");
    }
    // Names the current Claude Code no longer has only earn "matches no known tool" warnings.
    for gone in ["MultiEdit", "LS"] {
        assert!(
            !argv
                .iter()
                .any(|arg| arg.split(',').any(|name| name == gone)),
            "{argv:?}"
        );
    }
    assert_eq!(flag(&argv, "--permission-mode"), Some("dontAsk"));
    assert_eq!(flag(&argv, "--model"), Some("opus"));
    assert_eq!(flag(&argv, "--max-turns"), Some("40"));
    assert_eq!(
        flag(&argv, "--json-schema"),
        Some(r#"{"type":"object","required":["decision"]}"#)
    );
    assert_eq!(records[0]["stdin"], PROMPT);
    assert_eq!(records[0]["cwd"], sandbox.worktree.display().to_string());
    assert!(records[0]["env"].get("CLAUDECODE").is_none());
    // The write was refused by the session's tool set, and the refusal recorded.
    assert!(!sandbox.worktree.join("sneaky.txt").exists());
    assert_eq!(outcome.permission_denials.len(), 1);
    assert!(outcome.permission_denials[0].starts_with("Write: "));
    assert_eq!(outcome.structured_output, Some(verdict));
}

#[test]
fn the_command_line_for_dry_run_is_what_runs() {
    let sandbox = Sandbox::new(json!({}));
    let role = player();
    let adapter = ClaudeCodeAdapter::new();
    let shown = adapter.command_line(&sandbox.request("player", &role));
    sandbox.invoke("player", &role);
    let recorded = argv(&sandbox.records()[0]);
    assert_eq!(shown[0], "claude");
    assert_eq!(shown[1..], recorded[..]);
    assert_eq!(flag(&recorded, "--permission-mode"), Some("acceptEdits"));
    assert!(!recorded.contains(&"--json-schema".to_string()));
}

#[test]
fn the_player_edits_the_worktree_and_usage_is_counted_once_per_message() {
    let sandbox = Sandbox::new(json!({"player": [{
        "write": {"lib/greet.sh": "greeting() { echo hi; }\n"},
        "run": "echo ran > ran.txt",
        "result_usage": false,
        "cost": 0.5,
    }]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert!(sandbox.worktree.join("lib/greet.sh").is_file());
    assert!(sandbox.worktree.join("ran.txt").is_file());
    // Three messages; the first two are each split over two events repeating their usage.
    assert_eq!(
        outcome.usage,
        TokenUsage {
            input: 450,
            output: 60,
            cached: 3000,
            cache_written: 150,
        }
    );
    assert_eq!(outcome.cost_usd, Some(0.5));
    assert_eq!(outcome.agent_turns, Some(3));
    assert!(outcome
        .session_id
        .as_deref()
        .unwrap()
        .starts_with("fake-session-player-"));
    assert_eq!(outcome.final_message, "Done.");
    assert!(outcome.permission_denials.is_empty());
    let stream = fs::read_to_string(stream_path(&sandbox.transcript)).unwrap();
    assert!(stream
        .lines()
        .all(|l| serde_json::from_str::<Value>(l).is_ok()));
    assert!(fs::read_to_string(&sandbox.transcript)
        .unwrap()
        .contains("\"type\": \"result\""));
}

#[test]
fn an_error_result_with_subtype_success_fails_the_step() {
    let sandbox = Sandbox::new(json!({"player": [{
        "is_error": true,
        "result": "API Error: 500 {\"type\":\"error\",\"error\":{\"type\":\"api_error\"}}",
    }]}));

    let outcome = sandbox.invoke("player", &player());

    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::ApiError);
    assert!(message.contains("API Error: 500"), "{message}");
    assert_eq!(sandbox.records().len(), 1, "an API error is not retried");
}

#[test]
fn a_five_megabyte_event_line_is_read() {
    let sandbox = Sandbox::new(json!({"player": [{"big_event_bytes": 5_000_000}]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert!(outcome.final_message.starts_with("Done. xxxx"));
    assert!(outcome.final_message.len() <= FINAL_MESSAGE_LIMIT + 200);
    assert!(outcome.final_message.contains("truncated"));
    // 100 tokens in and 50 written to the prompt cache.
    assert_eq!(outcome.usage.input, 150);
    let stream = fs::read_to_string(stream_path(&sandbox.transcript)).unwrap();
    assert!(stream.len() > 10_000_000, "both big events are on disk");
}

#[test]
fn lines_that_are_not_json_are_skipped() {
    let sandbox = Sandbox::new(json!({"player": [{
        "noise": ["npm WARN deprecated", "{not json", "[1,2,3]"],
        "text": "finished",
    }]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "finished");
}

#[test]
fn a_hung_claude_is_killed_with_its_children_at_the_timeout() {
    let sandbox = Sandbox::new(json!({}));
    let pids = sandbox.root.join("pids");
    sandbox.scenario(json!({"player": [{"sleep": 60, "pids_file": pids.display().to_string()}]}));
    let mut role = player();
    // A short timeout first, so the test is quick on an idle machine. Under load the fake CLI
    // may be killed before it wrote its pids; the kill is then tried again with room to start
    // (the bound still tells a kill at the timeout from the scenario's own end).
    for timeout in [3, 15] {
        let _ = fs::remove_file(&pids);
        role.timeout = Some(Duration::from_secs(timeout));

        let started = Instant::now();
        let outcome = sandbox.invoke("player", &role);

        assert_eq!(outcome.status, AgentStatus::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(timeout + 35));
        let Ok(pids) = fs::read_to_string(&pids) else {
            continue;
        };
        for pid in pids.split_whitespace() {
            assert!(
                !Path::new(&format!("/proc/{pid}")).exists(),
                "process {pid} survived the timeout"
            );
        }
        return;
    }
    panic!("the fake claude wrote no pids before a 15 s timeout");
}

#[test]
fn a_missing_claude_says_how_to_install_it() {
    let mut sandbox = Sandbox::new(json!({}));
    let empty = sandbox.root.join("empty-bin");
    fs::create_dir_all(&empty).unwrap();
    sandbox.set("PATH", &empty.display().to_string());
    let role = player();

    let error = ClaudeCodeAdapter::new()
        .invoke(&sandbox.request("player", &role), &CancelToken::new())
        .unwrap_err();

    assert!(matches!(error, AgentError::Start { .. }));
    assert!(error.to_string().contains("`claude` not found"), "{error}");
    assert!(
        error
            .help()
            .contains("npm install -g @anthropic-ai/claude-code"),
        "{}",
        error.help()
    );
}

#[test]
fn a_rate_limited_attempt_is_retried() {
    let rate_limited = json!({
        "is_error": true, "exit": 1, "cost": 0.01,
        "result": "API Error: 429 {\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\"}}",
    });
    let sandbox = Sandbox::new(json!({"player": [rate_limited, {"text": "second time lucky"}]}));
    let adapter = ClaudeCodeAdapter::with_retry(RetryPolicy {
        delays: vec![Duration::from_millis(20), Duration::from_millis(20)],
    });

    let outcome = sandbox.invoke_with(&adapter, "player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "second time lucky");
    assert_eq!(sandbox.records().len(), 2);
    let cost = outcome.cost_usd.unwrap();
    assert!(
        (cost - 0.0225).abs() < 1e-9,
        "both attempts are paid for: {cost}"
    );
    let logs = sandbox.run_dir.join("logs");
    let first = fs::read_to_string(logs.join("turn_1_player.attempt1.log")).unwrap();
    assert!(first.contains("rate_limit_error"));
    assert!(logs.join("turn_1_player.attempt1.stream.jsonl").is_file());
    assert!(!fs::read_to_string(&sandbox.transcript)
        .unwrap()
        .contains("rate_limit_error"));
}

#[test]
fn retries_are_bounded() {
    let sandbox = Sandbox::new(json!({"player": [{
        "is_error": true, "exit": 1, "result": "API Error: 429 rate_limit_error",
    }]}));
    let adapter = ClaudeCodeAdapter::with_retry(RetryPolicy {
        delays: vec![Duration::from_millis(10), Duration::from_millis(10)],
    });

    let outcome = sandbox.invoke_with(&adapter, "player", &player());

    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::RateLimited);
    assert!(message.contains("gave up after 3 attempts"), "{message}");
    assert_eq!(sandbox.records().len(), 3);
}

#[test]
fn not_logged_in_max_turns_and_unknown_models_are_named() {
    let cases = [
        (
            json!({"is_error": true, "exit": 1, "result": "Invalid API key · Please run /login"}),
            AgentErrorClass::AuthMissing,
            "ANTHROPIC_API_KEY",
        ),
        (
            json!({"subtype": "error_max_turns", "is_error": true, "result": ""}),
            AgentErrorClass::MaxTurns,
            "max_agent_turns",
        ),
        (
            json!({"omit_result": true, "exit": 1,
                   "stderr": "API Error: 404 {\"type\":\"error\",\"error\":{\"type\":\"not_found_error\",\"message\":\"model: sonnet\"}}"}),
            AgentErrorClass::ModelNotFound,
            "model `sonnet`",
        ),
    ];
    for (turn, expected_class, fix) in cases {
        let sandbox = Sandbox::new(json!({ "player": [turn] }));
        let (class, message) = failure(&sandbox.invoke("player", &player()));
        assert_eq!(class, expected_class, "{message}");
        assert!(message.contains(fix), "{message}");
    }
}

#[test]
fn a_read_only_session_that_has_a_write_tool_fails() {
    let verdict = json!({"decision": "approve", "summary": "ok", "issues": [], "criteria": []});
    let sandbox = Sandbox::new(json!({"coach": [{
        "tools": ["Read", "Grep", "Write"],
        "structured_output": verdict,
    }]}));

    let (class, message) = failure(&sandbox.invoke("coach", &coach()));

    assert_eq!(class, AgentErrorClass::Other);
    assert!(message.contains("read-only role `coach`"), "{message}");
    assert!(message.contains("(Write)"), "{message}");
}

#[test]
fn secrets_never_reach_the_files_or_the_outcome() {
    let secret = "sk-secret-123456";
    let mut sandbox = Sandbox::new(json!({"player": [{
        "leak_env": ["ANTHROPIC_API_KEY"],
        "stderr": format!("debug: key {secret}"),
    }]}));
    sandbox.set("ANTHROPIC_API_KEY", secret);

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert!(outcome
        .final_message
        .contains("ANTHROPIC_API_KEY=[REDACTED]"));
    let json = serde_json::to_string(&outcome).unwrap();
    assert!(!json.contains(secret));
    for file in [sandbox.transcript.clone(), stream_path(&sandbox.transcript)] {
        let text = fs::read_to_string(&file).unwrap();
        assert!(!text.contains(secret), "{} leaks the key", file.display());
        assert!(text.contains("[REDACTED]"), "{}", file.display());
    }
}

#[test]
fn retries_stay_within_the_roles_timeout() {
    let sandbox = Sandbox::new(json!({"player": [{
        "is_error": true, "exit": 1, "result": "API Error: 429 rate_limit_error",
    }]}));
    let adapter = ClaudeCodeAdapter::with_retry(RetryPolicy {
        delays: vec![Duration::from_secs(60), Duration::from_secs(60)],
    });
    let mut role = player();
    // Room for the fake CLI to start on a loaded machine; the first attempt fails at once.
    role.timeout = Some(Duration::from_secs(20));

    let outcome = sandbox.invoke_with(&adapter, "player", &role);

    // A 60 s pause does not fit a 20 s timeout: no second attempt.
    assert_eq!(sandbox.records().len(), 1);
    assert!(!outcome.status.is_success());
}

/// A result with no text, no structured output and no tool use is no answer: a failed turn;
/// the same empty result after tool uses is a turn that acted.
#[test]
fn an_empty_result_is_a_failed_turn_unless_claude_acted() {
    let sandbox = Sandbox::new(json!({
        "player": [{"text": ""}, {"text": "", "write": {"a.txt": "a\n"}}],
        "coach": [{"text": ""}],
    }));

    let nothing = sandbox.invoke("player", &player());
    let (class, message) = failure(&nothing);
    assert_eq!(class, AgentErrorClass::EmptyAnswer, "{nothing:?}");
    assert!(message.contains("the model answered nothing"), "{message}");
    let acted = sandbox.invoke("player", &player());
    assert_eq!(acted.status, AgentStatus::Succeeded, "{acted:?}");
    let coach = sandbox.invoke("coach", &coach());
    assert_eq!(failure(&coach).0, AgentErrorClass::EmptyAnswer, "{coach:?}");
}
