//! The `codex` adapter against the fake `codex` in tests/fixtures/fake-codex: the command line
//! per role, what it reads from the JSONL event stream, and cost estimates.

use crate::codex_fixture;

use std::fs;
use std::path::PathBuf;

use autobuild::agents::codex::{events_path, schema_path};
use autobuild::agents::{adapter_for, Adapter, AgentStatus, TokenUsage};
use autobuild::process::CancelToken;
use autobuild::project::config::{ModelPrice, PriceTable};
use autobuild::steps::verdict::VERDICT_SCHEMA;
use autobuild::workflow::model::{AgentKind, Tool};
use codex_fixture::{adapter, argv, coach, flag_value, player, Sandbox, PROMPT};
use serde_json::{json, Value};

/// Whether the last invocation's event stream has a `web_search` item.
fn searched_the_web(sandbox: &Sandbox) -> bool {
    fs::read_to_string(events_path(&sandbox.transcript))
        .unwrap()
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .any(|event| event["item"]["type"] == "web_search")
}

#[test]
fn codex_web_search_is_off_unless_the_role_lists_web() {
    let sandbox = Sandbox::new(json!({"player": [{"web_search": "greeting conventions"}]}));
    let without_web = player();
    assert!(!without_web.tools.contains(&Tool::Web));
    let mut with_web = player();
    with_web.tools.push(Tool::Web);

    assert_eq!(
        sandbox.invoke("player", &without_web).status,
        AgentStatus::Succeeded
    );
    assert!(!searched_the_web(&sandbox));
    let argv_without = argv(&sandbox.invocations()[0]);
    assert!(argv_without
        .windows(2)
        .any(|w| w == ["-c", "web_search=\"disabled\""]));

    assert_eq!(
        sandbox.invoke("player", &with_web).status,
        AgentStatus::Succeeded
    );
    assert!(searched_the_web(&sandbox));
}

#[test]
fn the_writer_gets_a_writable_sandbox_and_edits_the_worktree() {
    let sandbox = Sandbox::new(json!({"player": [{
        "run": "printf 'greeting() { echo hi; }\\n' > greet.sh",
        "text": "Implemented greeting.",
    }]}));
    let role = player();

    let outcome = sandbox.invoke("player", &role);

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "Implemented greeting.");
    assert_eq!(outcome.session_id.as_deref(), Some("0199fake-thread-0001"));
    assert_eq!(outcome.structured_output, None);
    assert!(fs::read_to_string(sandbox.worktree.join("greet.sh"))
        .unwrap()
        .contains("greeting()"));
    let invocations = sandbox.invocations();
    assert_eq!(invocations.len(), 1);
    let argv = argv(&invocations[0]);
    let worktree = sandbox.worktree.display().to_string();
    assert_eq!(argv[0], "exec");
    assert!(argv.contains(&"--json".to_string()));
    assert_eq!(
        flag_value(&argv, "--sandbox").as_deref(),
        Some("workspace-write")
    );
    assert_eq!(flag_value(&argv, "-C"), Some(worktree.clone()));
    assert_eq!(flag_value(&argv, "-m").as_deref(), Some("gpt-5-codex"));
    assert_eq!(flag_value(&argv, "--output-schema"), None);
    assert_eq!(argv.last().map(String::as_str), Some("-"));
    assert_eq!(invocations[0]["stdin"], PROMPT);
    assert_eq!(invocations[0]["cwd"], worktree);
    assert_eq!(
        adapter().command_line(&sandbox.request("player", &role))[1..],
        argv[..]
    );
    assert!(events_path(&sandbox.transcript).is_file());
}

#[test]
fn the_coach_gets_a_read_only_sandbox_and_a_schema_and_returns_structured_output() {
    let verdict = json!({
        "decision": "approve", "summary": "good", "issues": [],
        "criteria": [{"id": "AC-001", "status": "met", "evidence": "ran it"}],
    });
    let sandbox = Sandbox::new(json!({"coach": [{"verdict": verdict}]}));

    let outcome = sandbox.invoke("coach", &coach());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.structured_output, Some(verdict));
    let argv = argv(&sandbox.invocations()[0]);
    assert_eq!(flag_value(&argv, "--sandbox").as_deref(), Some("read-only"));
    let schema = flag_value(&argv, "--output-schema").unwrap();
    assert_eq!(
        PathBuf::from(&schema),
        schema_path(&sandbox.run_dir),
        "the schema lives in the run directory"
    );
    let written: Value = serde_json::from_str(&fs::read_to_string(&schema).unwrap()).unwrap();
    let original: Value = serde_json::from_str(VERDICT_SCHEMA).unwrap();
    assert_eq!(written["properties"], original["properties"]);
    assert_eq!(written["additionalProperties"], false);
    assert!(written.get("$schema").is_none());
}

#[test]
fn usage_is_summed_over_turns_and_cost_is_estimated_from_the_price_table() {
    let sandbox = Sandbox::new(json!({"player": [{"usage": [
        {"input_tokens": 600_000, "cached_input_tokens": 100_000, "output_tokens": 50_000},
        {"input_tokens": 400_000, "cached_input_tokens": 100_000, "output_tokens": 50_000},
    ]}]}));
    let role = player();

    let outcome = sandbox.invoke("player", &role);

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(
        outcome.usage,
        TokenUsage {
            input: 800_000,
            output: 100_000,
            cached: 200_000,
            cache_written: 0,
        }
    );
    // Built-in gpt-5-codex: 800k × $1.25 + 200k × $0.125 + 100k × $10 per million.
    let cost = outcome.cost_usd.unwrap();
    assert!((cost - 2.025).abs() < 1e-9, "{cost}");
    assert!(outcome.cost_estimated);
    let record = serde_json::to_value(&outcome).unwrap();
    assert_eq!(record["cost_estimated"], true);

    let mut table = PriceTable::new();
    table.insert(
        "gpt-5-codex".to_string(),
        ModelPrice {
            input: 1.0,
            cached_input: Some(0.5),
            output: 2.0,
        },
    );
    let mut request = sandbox.request("player", &role);
    request.pricing = Some(&table);
    let outcome = adapter().invoke(&request, &CancelToken::new()).unwrap();
    let cost = outcome.cost_usd.unwrap();
    assert!((cost - (0.8 + 0.1 + 0.2)).abs() < 1e-9, "{cost}");
}

#[test]
fn non_json_lines_are_skipped() {
    let sandbox = Sandbox::new(json!({"player": [{
        "noise": ["Reading prompt from stdin...", "[1,2,3]", "{not json", ""],
        "text": "still parsed",
    }]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "still parsed");
    assert_eq!(outcome.usage.output, 300);
}

#[test]
fn a_five_megabyte_event_line_is_handled() {
    let sandbox = Sandbox::new(json!({"player": [{
        "big_event_bytes": 5 << 20,
        "text": "after the big line",
    }]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "after the big line");
    assert_eq!(outcome.usage.output, 300, "the events after it were read");
    let stream = fs::read_to_string(events_path(&sandbox.transcript)).unwrap();
    assert!(stream.lines().any(|line| line.len() > 5 << 20));
}

#[test]
fn declined_commands_are_recorded_as_permission_denials() {
    let sandbox = Sandbox::new(json!({"player": [{"declined": "git push origin main"}]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.permission_denials, vec!["git push origin main"]);
}

#[test]
fn adapter_for_codex_is_this_adapter() {
    let adapter = adapter_for(AgentKind::Codex).unwrap();
    assert_eq!(adapter.kind(), AgentKind::Codex);
    assert!(adapter.capabilities().enforces_read_only);
    assert!(!adapter.capabilities().enforces_tool_allowlist);
}
