//! The native HTTP adapters against scripted servers on 127.0.0.1: tool calls that change the
//! worktree, refusals, malformed arguments, retries, errors that stop the run, turn limits,
//! timeouts, verdicts, and doctor's endpoint check.

use crate::native_fixture;
#[path = "native_adapter/empty_and_broken.rs"]
mod empty_and_broken;
#[path = "native_adapter/streaming.rs"]
mod streaming;

use std::fs;
use std::net::TcpListener;
use std::time::Duration;

use autobuild::agents::native::{Dialect, NativeAdapter};
use autobuild::agents::{Adapter, AgentErrorClass, AgentOutcome, AgentRequest, AgentStatus};
use autobuild::process::CancelToken;
use autobuild::project::config::{ModelPrice, PriceTable};
use autobuild::steps::verdict::VERDICT_SCHEMA;
use autobuild::workflow::model::Role;
use native_fixture::*;
use serde_json::{json, Value};

const KEY: &str = "sk-native-secret-0123456789";

fn role(agent: &str, base_url: &str, extra: Value) -> Role {
    let mut value = json!({
        "agent": agent, "model": "qwen2.5-coder", "prompt": "player.md", "base_url": base_url,
        "tools": ["read", "write", "edit", "bash", "grep", "glob"], "access": "write",
        "timeout": "30s",
    });
    value
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(value).unwrap()
}

fn coach(agent: &str, base_url: &str) -> Role {
    role(
        agent,
        base_url,
        json!({"prompt": "coach.md", "access": "read-only", "output": "verdict",
               "tools": ["read", "grep", "glob", "bash"]}),
    )
}

struct Call<'a> {
    dirs: &'a Dirs,
    env: Vec<(String, String)>,
    pricing: PriceTable,
}

impl<'a> Call<'a> {
    fn new(dirs: &'a Dirs) -> Call<'a> {
        Call {
            dirs,
            env: Vec::new(),
            pricing: PriceTable::new(),
        }
    }

    fn transcript(&self) -> std::path::PathBuf {
        self.dirs.run_dir.join("logs/turn_1_player.log")
    }

    fn invoke(&self, adapter: &NativeAdapter, role: &Role) -> AgentOutcome {
        self.invoke_with(adapter, role, &CancelToken::new())
    }

    fn invoke_with(
        &self,
        adapter: &NativeAdapter,
        role: &Role,
        cancel: &CancelToken,
    ) -> AgentOutcome {
        let transcript = self.transcript();
        let prompt_file = self.dirs.run_dir.join("prompt.md");
        let request = AgentRequest {
            role_name: "player",
            role,
            prompt: "Implement greeting() for AC-001",
            worktree: &self.dirs.worktree,
            env: &self.env,
            run_dir: &self.dirs.run_dir,
            prompt_file: &prompt_file,
            transcript_path: &transcript,
            task_id: "TASK-1",
            turn: 1,
            wants_verdict: role.output.is_some(),
            verdict_schema: VERDICT_SCHEMA,
            pricing: Some(&self.pricing),
            sandbox: None,
        };
        adapter.invoke(&request, cancel).unwrap()
    }
}

fn openai() -> NativeAdapter {
    NativeAdapter::with_retry_delays(Dialect::OpenAi, vec![Duration::from_millis(10)])
}

fn anthropic() -> NativeAdapter {
    NativeAdapter::with_retry_delays(Dialect::Anthropic, vec![Duration::from_millis(10)])
}

fn failure(outcome: &AgentOutcome) -> (AgentErrorClass, String) {
    match &outcome.status {
        AgentStatus::Failed { class, message } => (*class, message.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[test]
fn tool_calls_change_the_worktree_and_their_results_go_back_to_the_model() {
    let dirs = Dirs::new();
    fs::write(
        dirs.worktree.join("lib.py"),
        "def greeting():\n    return None\n",
    )
    .unwrap();
    let server = Server::start(
        vec![
            openai_calls(&[
                ("read", r#"{"path": "lib.py"}"#),
                (
                    "write",
                    r#"{"path": "tests/test_lib.py", "content": "from lib import greeting\n"}"#,
                ),
            ]),
            openai_calls(&[
                (
                    "edit",
                    r#"{"path": "lib.py", "old_string": "return None", "new_string": "return \"hello\""}"#,
                ),
                ("write", r#"{"path": "../outside.txt", "content": "x"}"#),
                ("bash", r#"{"command": "cat lib.py | wc -l"}"#),
            ]),
            openai_text("Implemented greeting()."),
        ],
        &[],
    );
    let mut call = Call::new(&dirs);
    call.pricing.insert(
        "qwen2.5-coder".into(),
        ModelPrice {
            input: 1.0,
            cached_input: Some(0.1),
            output: 10.0,
        },
    );
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));

    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.final_message, "Implemented greeting().");
    assert_eq!(
        fs::read_to_string(dirs.worktree.join("lib.py")).unwrap(),
        "def greeting():\n    return \"hello\"\n"
    );
    assert!(dirs.worktree.join("tests/test_lib.py").is_file());
    assert!(!dirs.root.join("outside.txt").exists());
    assert_eq!(outcome.agent_turns, Some(3));
    assert_eq!(outcome.usage.input, 3000);
    assert_eq!(outcome.usage.output, 300);
    // 3000 input tokens at $1/M and 300 output tokens at $10/M.
    assert!(
        (outcome.cost_usd.unwrap() - 0.006).abs() < 1e-9,
        "{:?}",
        outcome.cost_usd
    );
    assert!(outcome.cost_estimated);
    assert_eq!(outcome.permission_denials.len(), 1);

    let posts = server.posts();
    assert_eq!(posts.len(), 3);
    assert_eq!(posts[0].path, "/v1/chat/completions");
    assert_eq!(posts[0].body["model"], "qwen2.5-coder");
    assert_eq!(
        posts[0].header("authorization"),
        None,
        "a local server gets no key"
    );
    let offered: Vec<&str> = posts[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["read", "write", "edit", "bash", "grep", "glob"]);
    let second = posts[1].body["messages"].as_array().unwrap();
    let read_result = second
        .iter()
        .find(|m| m["tool_call_id"] == "call_0")
        .unwrap();
    assert!(read_result["content"]
        .as_str()
        .unwrap()
        .contains("1\tdef greeting():"));
    let third = posts[2].body["messages"].as_array().unwrap();
    let refused = third
        .iter()
        .rev()
        .find(|m| m["tool_call_id"] == "call_1")
        .unwrap();
    assert!(refused["content"]
        .as_str()
        .unwrap()
        .contains("outside the worktree"));
    let counted = third
        .iter()
        .rev()
        .find(|m| m["tool_call_id"] == "call_2")
        .unwrap();
    assert_eq!(counted["content"].as_str().unwrap().trim(), "2");

    let results = transcript_events(&call.transcript(), "tool_result");
    assert_eq!(results.len(), 5);
    assert_eq!(results[3]["status"], "refused");
    assert_eq!(transcript_events(&call.transcript(), "answer").len(), 3);
}

#[test]
fn a_read_only_role_is_refused_a_write_and_returns_a_schema_verdict() {
    let dirs = Dirs::new();
    let verdict = json!({"decision": "approve", "summary": "fine", "issues": [], "criteria": []});
    let server = Server::start(
        vec![
            openai_calls(&[("write", r#"{"path": "hack.txt", "content": "x"}"#)]),
            openai_text(&verdict.to_string()),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &coach("openai", &server.base_url()));

    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert!(!dirs.worktree.join("hack.txt").exists());
    assert_eq!(outcome.permission_denials.len(), 1);
    assert!(
        outcome.permission_denials[0].contains("read-only"),
        "{:?}",
        outcome.permission_denials
    );
    assert_eq!(outcome.structured_output, Some(verdict));
    let posts = server.posts();
    let offered: Vec<&str> = posts[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["read", "grep", "glob", "bash"]);
    assert_eq!(posts[0].body["response_format"]["type"], "json_schema");
    assert!(posts[0].body["response_format"]["json_schema"]["schema"]
        .get("$schema")
        .is_none());
    let results = transcript_events(&call.transcript(), "tool_result");
    assert_eq!(results[0]["status"], "refused");
    // A server on this machine with no `[pricing]` for its model is free.
    assert_eq!(outcome.cost_usd, Some(0.0));
}

/// A loopback `base_url` is free unless `[pricing]` names the model; a remote one without a
/// price is a gap the budget preflight refuses.
#[test]
fn a_server_on_this_machine_is_free_unless_pricing_says_otherwise() {
    let dirs = Dirs::new();
    let server = Server::start(vec![openai_text("done"), openai_text("done")], &[]);
    let mut call = Call::new(&dirs);
    let local = role("openai", &server.base_url(), json!({}));
    let adapter = openai();
    assert_eq!(adapter.unpriced("player", &local, &call.pricing), None);
    for url in ["http://localhost:11434/v1", "http://[::1]:8080/v1"] {
        let role = role("openai", url, json!({}));
        assert_eq!(
            adapter.unpriced("player", &role, &call.pricing),
            None,
            "{url}"
        );
    }
    let remote = role("openai", "https://llm.example.com/v1", json!({}));
    let gap = adapter.unpriced("player", &remote, &call.pricing).unwrap();
    assert!(gap.what.contains("qwen2.5-coder"), "{gap:?}");
    assert_eq!(call.invoke(&adapter, &local).cost_usd, Some(0.0));
    call.pricing.insert(
        "qwen2.5-coder".to_string(),
        ModelPrice {
            input: 1.0,
            cached_input: Some(0.0),
            output: 10.0,
        },
    );
    let cost = call.invoke(&adapter, &local).cost_usd.unwrap();
    assert!(
        (cost - 0.002).abs() < 1e-9,
        "1000 in at $1/M + 100 out at $10/M: {cost}"
    );
}

#[test]
fn a_server_without_response_format_still_gets_a_parsed_verdict() {
    let dirs = Dirs::new();
    let verdict = json!({"decision": "approve", "summary": "fine", "issues": [], "criteria": []});
    let server = Server::start(
        vec![
            error(400, "unknown field: response_format"),
            error(400, "unknown field: response_format"),
            openai_text(&verdict.to_string()),
        ],
        &[],
    );
    let outcome = Call::new(&dirs).invoke(&openai(), &coach("openai", &server.base_url()));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.structured_output, Some(verdict));
    assert!(
        outcome.notes[0].contains("not schema-enforced"),
        "{:?}",
        outcome.notes
    );
    let posts = server.posts();
    assert_eq!(posts[0].body["response_format"]["type"], "json_schema");
    assert_eq!(posts[1].body["response_format"]["type"], "json_object");
    assert!(posts[2].body.get("response_format").is_none());
}

/// llama-cpp-python 0.3.36 answers `json_schema` with HTTP 500 (a pydantic literal error on
/// `response_format.type`) and takes `json_object` with the schema; the 500 is not retried as a
/// server fault, and the next invocation of the run asks with `json_object` straight away.
#[test]
fn a_500_refusing_json_schema_falls_back_to_json_object_for_the_rest_of_the_run() {
    let dirs = Dirs::new();
    let verdict = json!({"decision": "approve", "summary": "fine", "issues": [], "criteria": []});
    let refusal = Response::json(
        500,
        json!({"error": {
            "message": "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or 'json_object'\"}}]",
            "type": "internal_server_error", "param": null, "code": null,
        }}),
    );
    let server = Server::start(
        vec![
            refusal,
            openai_text(&verdict.to_string()),
            openai_text(&verdict.to_string()),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &coach("openai", &server.base_url()));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.structured_output, Some(verdict.clone()));
    assert!(
        outcome.notes[0].contains("json_object"),
        "{:?}",
        outcome.notes
    );
    let outcome = call.invoke(&openai(), &coach("openai", &server.base_url()));
    assert_eq!(outcome.structured_output, Some(verdict));
    let posts = server.posts();
    assert_eq!(
        posts.len(),
        3,
        "the refusal is not retried as a server fault"
    );
    assert_eq!(posts[0].body["response_format"]["type"], "json_schema");
    assert_eq!(posts[1].body["response_format"]["type"], "json_object");
    assert!(posts[1].body["response_format"]["schema"].is_object());
    assert_eq!(
        posts[2].body["response_format"]["type"], "json_object",
        "remembered for the rest of the run"
    );
}

#[test]
fn malformed_arguments_come_back_as_an_error_the_model_can_fix() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![
            openai_calls(&[("write", r#"{"path": "a.txt", "content": "#)]),
            openai_calls(&[("write", r#"{"file": "a.txt"}"#)]),
            openai_calls(&[("write", r#"{"path": "a.txt", "content": "ok\n"}"#)]),
            openai_text("done"),
        ],
        &[],
    );
    let outcome =
        Call::new(&dirs).invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        fs::read_to_string(dirs.worktree.join("a.txt")).unwrap(),
        "ok\n"
    );
    let posts = server.posts();
    let tool_message = |post: &native_fixture::Recorded| {
        post.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(tool_message(&posts[1]).contains("the arguments are not JSON"));
    assert!(tool_message(&posts[2]).contains("missing field `path`"));
    // The malformed call is replayed as the model wrote it.
    assert_eq!(
        posts[1].body["messages"][2]["tool_calls"][0]["function"]["arguments"],
        r#"{"path": "a.txt", "content": "#
    );
}

#[test]
fn a_rate_limit_is_retried_after_the_servers_retry_after() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![
            error(429, "Rate limit reached").header("retry-after", "0"),
            openai_text("done"),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(server.posts().len(), 2);
    let errors = transcript_events(&call.transcript(), "error");
    assert_eq!(errors[0]["class"], "rate_limited");

    // Retries are bounded: a server that keeps refusing fails the invocation.
    let server = Server::start(
        vec![error(503, "overloaded"), error(503, "overloaded")],
        &[],
    );
    let outcome = call.invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::ApiError);
    assert!(message.contains("gave up after 2 attempts"), "{message}");
}

#[test]
fn a_refused_key_stops_the_run_with_the_fix_and_never_reaches_the_transcript() {
    let dirs = Dirs::new();
    let server = Server::start(vec![error(401, "Incorrect API key provided")], &[]);
    let mut call = Call::new(&dirs);
    call.env.push(("MY_LLM_KEY".into(), KEY.into()));
    let role = role(
        "openai",
        &server.base_url(),
        json!({"api_key_env": "MY_LLM_KEY"}),
    );
    let outcome = call.invoke(&openai(), &role);
    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::AuthMissing);
    assert!(outcome.status.run_stopper().is_some());
    assert!(message.contains("MY_LLM_KEY"), "{message}");
    assert_eq!(server.posts().len(), 1, "authentication is not retried");
    assert_eq!(
        server.posts()[0].header("authorization"),
        Some(format!("Bearer {KEY}").as_str())
    );
    assert!(!fs::read_to_string(call.transcript()).unwrap().contains(KEY));

    // A named variable that is unset fails before any request.
    let empty = Call::new(&dirs);
    let outcome = empty.invoke(&openai(), &role);
    assert_eq!(failure(&outcome).0, AgentErrorClass::AuthMissing);
    assert_eq!(server.posts().len(), 1);
}

#[test]
fn an_unknown_model_and_a_spent_quota_stop_the_run() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![
            error(
                404,
                "model \"qwen2.5-coder\" not found, try pulling it first",
            ),
            Response::json(
                429,
                json!({"error": {"code": "insufficient_quota", "message": "You exceeded your current quota"}}),
            ),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let role = role("openai", &server.base_url(), json!({}));
    let (class, message) = failure(&call.invoke(&openai(), &role));
    assert_eq!(class, AgentErrorClass::ModelNotFound);
    assert!(message.contains("ollama pull qwen2.5-coder"), "{message}");
    let (class, _) = failure(&call.invoke(&openai(), &role));
    assert_eq!(class, AgentErrorClass::OutOfCredit);
    assert_eq!(server.posts().len(), 2, "neither is retried");
}

/// The real bodies of a prompt that does not fit: llama-server's 500 and llama-cpp-python's
/// 400 `context_length_exceeded`. Neither is retried; the fix names the server's setting.
#[test]
fn a_context_exceeded_is_not_retried_and_its_fix_names_the_setting_to_raise() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![
            Response::json(
                500,
                json!({"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}}),
            ),
            Response::json(
                400,
                json!({"error": {
                    "message": "This model's maximum context length is 2048 tokens. However, you requested 2561 tokens (2049 in the messages, 512 in the completion). Please reduce the length of the messages or completion.",
                    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded",
                }}),
            ),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let role = role("openai", &server.base_url(), json!({}));
    let (_, message) = failure(&call.invoke(&openai(), &role));
    assert!(
        message.contains("Context size has been exceeded."),
        "{message}"
    );
    assert!(message.contains("--ctx-size"), "{message}");
    assert!(!message.contains("autobuild doctor"), "{message}");
    assert_eq!(
        server.posts().len(),
        1,
        "a 500 about the context is not retried"
    );
    let (_, message) = failure(&call.invoke(&openai(), &role));
    assert!(message.contains("--n_ctx"), "{message}");
    assert!(!message.contains("autobuild doctor"), "{message}");
    assert_eq!(server.posts().len(), 2);
}

/// An answer cut off at the role's `max_tokens` (`finish_reason: "length"`, as llama.cpp's
/// servers send it) is a truncated turn, not a success; the request carries the limit.
#[test]
fn an_answer_cut_off_at_max_tokens_fails_the_turn_as_truncated() {
    let dirs = Dirs::new();
    let server = Server::start(
        vec![Response::json(
            200,
            json!({
                "choices": [{"index": 0, "finish_reason": "length",
                             "message": {"role": "assistant", "content": "I will now explain at length"}}],
                "usage": {"prompt_tokens": 400, "completion_tokens": 64},
            }),
        )],
        &[],
    );
    let call = Call::new(&dirs);
    let role = role("openai", &server.base_url(), json!({"max_tokens": 64}));
    let outcome = call.invoke(&openai(), &role);
    let (_, message) = failure(&outcome);
    assert!(message.contains("cut off at max_tokens (64)"), "{message}");
    assert!(
        message.contains("raise `max_tokens` of role `player`"),
        "{message}"
    );
    assert_eq!(outcome.usage.output, 64, "its tokens still count");
    assert_eq!(server.posts()[0].body["max_tokens"], 64);
    let end = transcript_events(&call.transcript(), "end");
    assert_eq!(end[0]["status"], "failed");
    assert!(end[0]["message"].as_str().unwrap().contains("cut off"));
}

#[test]
fn a_model_that_never_calls_a_tool_just_answers() {
    let dirs = Dirs::new();
    let server = Server::start(vec![openai_text("Nothing to do.")], &[]);
    let outcome =
        Call::new(&dirs).invoke(&openai(), &role("openai", &server.base_url(), json!({})));
    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "Nothing to do.");
    assert_eq!(outcome.agent_turns, Some(1));
    assert_eq!(fs::read_dir(&dirs.worktree).unwrap().count(), 0);
}

#[test]
fn a_model_that_keeps_calling_tools_stops_at_max_agent_turns() {
    let dirs = Dirs::new();
    let glob = || openai_calls(&[("glob", r#"{"pattern": "**/*"}"#)]);
    let server = Server::start(vec![glob(), glob(), glob(), glob()], &[]);
    let role = role("openai", &server.base_url(), json!({"max_agent_turns": 2}));
    let outcome = Call::new(&dirs).invoke(&openai(), &role);
    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::MaxTurns);
    assert!(message.contains("max_agent_turns (2)"), "{message}");
    assert_eq!(server.posts().len(), 2);
    assert_eq!(outcome.agent_turns, Some(2));
}

#[test]
fn a_server_that_never_answers_is_bounded_by_the_timeout_and_cancellation() {
    let dirs = Dirs::new();
    // Connections queue in the backlog; nothing ever answers.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", silent.local_addr().unwrap());
    let call = Call::new(&dirs);
    let timed = role("openai", &base, json!({"timeout": "1s"}));
    let started = std::time::Instant::now();
    assert_eq!(call.invoke(&openai(), &timed).status, AgentStatus::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));

    let idle = role("openai", &base, json!({"idle_timeout": "1s"}));
    let outcome = call.invoke(&openai(), &idle);
    let AgentStatus::IdleTimedOut {
        detail: Some(detail),
    } = &outcome.status
    else {
        panic!("expected an idle timeout, got {:?}", outcome.status);
    };
    // Where it waited, and for how long.
    assert!(
        detail.contains(&base) && detail.contains("sent nothing for 1s"),
        "{detail}"
    );
    assert!(!outcome.status.message().contains("printing"), "{detail}");

    let cancel = CancelToken::new();
    let later = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(200));
        later.cancel();
    });
    let outcome = call.invoke_with(&openai(), &role("openai", &base, json!({})), &cancel);
    assert_eq!(outcome.status, AgentStatus::Cancelled);
}

#[test]
fn the_anthropic_dialect_edits_with_tool_use_and_returns_the_verdict_through_its_tool() {
    let dirs = Dirs::new();
    fs::write(dirs.worktree.join("lib.py"), "x = 1\n").unwrap();
    let verdict =
        json!({"decision": "feedback", "summary": "add tests", "issues": [], "criteria": []});
    let server = Server::start(
        vec![
            anthropic_calls(&[(
                "edit",
                json!({"path": "lib.py", "old_string": "x = 1", "new_string": "x = 2"}),
            )]),
            anthropic_text("Edited."),
            anthropic_calls(&[
                ("read", json!({"path": "lib.py"})),
                (
                    "edit",
                    json!({"path": "lib.py", "old_string": "x", "new_string": "y"}),
                ),
            ]),
            anthropic_calls(&[("verdict", verdict.clone())]),
        ],
        &[],
    );
    let mut call = Call::new(&dirs);
    call.env.push(("ANTHROPIC_API_KEY".into(), KEY.into()));
    let player = role(
        "anthropic",
        &server.base_url(),
        json!({"model": "claude-sonnet-4-5"}),
    );
    let outcome = call.invoke(&anthropic(), &player);
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(
        fs::read_to_string(dirs.worktree.join("lib.py")).unwrap(),
        "x = 2\n"
    );

    let mut coach = coach("anthropic", &server.base_url());
    coach.model = Some("claude-sonnet-4-5".into());
    let outcome = call.invoke(&anthropic(), &coach);
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    assert_eq!(outcome.structured_output, Some(verdict));
    assert_eq!(
        fs::read_to_string(dirs.worktree.join("lib.py")).unwrap(),
        "x = 2\n"
    );
    assert_eq!(outcome.permission_denials.len(), 1);

    let posts = server.posts();
    assert_eq!(posts[0].path, "/v1/messages");
    assert_eq!(posts[0].header("x-api-key"), Some(KEY));
    assert_eq!(posts[0].header("anthropic-version"), Some("2023-06-01"));
    let result = &posts[1].body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], "toolu_0");
    let coach_tools: Vec<&str> = posts[2].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(coach_tools, ["read", "grep", "glob", "bash", "verdict"]);
    let refused = &posts[3].body["messages"][2]["content"][1];
    assert_eq!(refused["is_error"], true);
    assert!(refused["content"].as_str().unwrap().contains("read-only"));
}

#[test]
fn doctor_reports_whether_the_endpoint_answers_and_serves_the_model() {
    let server = Server::start(Vec::new(), &["qwen2.5-coder", "llama3"]);
    let adapter = openai();
    let present = adapter.diagnose("coach", &role("openai", &server.base_url(), json!({})), &[]);
    assert!(present[0].ok, "{present:?}");
    assert!(present[0].detail.contains("serves `qwen2.5-coder`"));

    let absent = role("openai", &server.base_url(), json!({"model": "mistral"}));
    let missing = adapter.diagnose("coach", &absent, &[]);
    assert!(!missing[0].ok);
    assert!(
        missing[0]
            .detail
            .contains("it lists: qwen2.5-coder, llama3"),
        "{missing:?}"
    );
    assert!(missing[0].fix.contains("ollama pull mistral"));

    assert_eq!(present.len(), 1, "no verdict, no format probe: {present:?}");

    // A verdict role: the server is asked, one token at a time, which format it takes.
    let llama_cpp_python = Server::start(
        vec![
            error(500, "[{'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), 'msg': \"Input should be 'text' or 'json_object'\"}]"),
            openai_text("{"),
        ],
        &["qwen2.5-coder"],
    );
    let found = adapter.diagnose("coach", &coach("openai", &llama_cpp_python.base_url()), &[]);
    assert!(found[0].ok && found[1].ok, "{found:?}");
    assert!(
        found[1]
            .detail
            .contains("refuses `json_schema` but takes `json_object`"),
        "{found:?}"
    );
    let probes = llama_cpp_python.posts();
    assert_eq!(probes[1].body["response_format"]["type"], "json_object");
    assert_eq!(probes[1].body["max_tokens"], 1);

    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let down = role("openai", &format!("http://127.0.0.1:{port}/v1"), json!({}));
    let unreachable = adapter.diagnose("coach", &down, &[]);
    assert!(!unreachable[0].ok);
    assert!(
        unreachable[0].detail.starts_with("cannot reach"),
        "{unreachable:?}"
    );
}

/// The blocks of a Messages request in the order Anthropic's cache reads them (tools, system,
/// messages), each as text without its `cache_control` marker, and whether the request ends
/// with a breakpoint on its last block.
fn cache_blocks(body: &Value) -> (Vec<String>, bool) {
    let strip = |block: &Value| {
        let mut block = block.clone();
        if let Some(map) = block.as_object_mut() {
            map.remove("cache_control");
        }
        block.to_string()
    };
    let mut blocks: Vec<String> = Vec::new();
    for tool in body["tools"].as_array().into_iter().flatten() {
        blocks.push(strip(tool));
    }
    for block in body["system"].as_array().into_iter().flatten() {
        blocks.push(strip(block));
    }
    let mut ends_with_breakpoint = false;
    for message in body["messages"].as_array().into_iter().flatten() {
        match message["content"].as_array() {
            Some(content) => {
                for block in content {
                    blocks.push(format!("{}:{}", message["role"], strip(block)));
                    ends_with_breakpoint = block.get("cache_control").is_some();
                }
            }
            None => {
                blocks.push(format!("{}:{}", message["role"], message["content"]));
                ends_with_breakpoint = false;
            }
        }
    }
    (blocks, ends_with_breakpoint)
}

/// Issue 46: a tool-using session resends its conversation every round trip; with the
/// adapter's cache breakpoints each request only adds to the one before, so all but its
/// newest part is read from the cache. By Anthropic's prices (a cache read 0.1x the input
/// price, a cache write 1.25x), the session's input costs at most 0.35x of the same requests
/// uncached (bytes stand in for tokens).
#[test]
fn a_tool_using_anthropic_session_reads_its_conversation_from_the_prompt_cache() {
    let dirs = Dirs::new();
    fs::write(dirs.worktree.join("lib.py"), "x = 1\n".repeat(40)).unwrap();
    let mut replies: Vec<_> = (0..10)
        .map(|_| anthropic_calls(&[("read", json!({"path": "lib.py"}))]))
        .collect();
    replies.push(anthropic_text("Read it ten times."));
    let server = Server::start(replies, &[]);
    let mut call = Call::new(&dirs);
    call.env.push(("ANTHROPIC_API_KEY".into(), KEY.into()));
    let player = role(
        "anthropic",
        &server.base_url(),
        json!({"model": "claude-sonnet-4-5"}),
    );
    let outcome = call.invoke(&anthropic(), &player);
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");

    let posts = server.posts();
    assert_eq!(posts.len(), 11);
    let (mut uncached, mut billed) = (0f64, 0f64);
    let mut previous: Vec<String> = Vec::new();
    for post in &posts {
        let (blocks, breakpoint) = cache_blocks(&post.body);
        assert!(breakpoint, "every request marks its latest block");
        assert!(
            blocks.starts_with(&previous),
            "a request only adds to the one before"
        );
        let size = |blocks: &[String]| blocks.iter().map(String::len).sum::<usize>() as f64;
        let (read, total) = (size(&previous), size(&blocks));
        uncached += total;
        billed += 0.1 * read + 1.25 * (total - read);
        previous = blocks;
    }
    let ratio = billed / uncached;
    println!("anthropic session: input billed at {ratio:.2}x of uncached ({uncached} bytes sent)");
    assert!(ratio <= 0.35, "{ratio:.2}x");
}

/// Issue 46: OpenAI-compatible requests carry a `prompt_cache_key` (one per task and role), so
/// a caching server routes a role's requests to the same cache; a server that refuses the
/// field is asked again without it, and not asked with it again in the run.
#[test]
fn a_server_that_refuses_the_prompt_cache_key_is_asked_without_it() {
    let dirs = Dirs::new();
    let verdict = json!({"decision": "approve", "summary": "fine", "issues": [], "criteria": []});
    let refusal = Response::json(
        400,
        json!({"error": {
            "message": "Unrecognized request argument supplied: prompt_cache_key",
            "type": "invalid_request_error", "param": null, "code": null,
        }}),
    );
    let server = Server::start(
        vec![
            refusal,
            openai_text(&verdict.to_string()),
            openai_text(&verdict.to_string()),
        ],
        &[],
    );
    let call = Call::new(&dirs);
    let outcome = call.invoke(&openai(), &coach("openai", &server.base_url()));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    let outcome = call.invoke(&openai(), &coach("openai", &server.base_url()));
    assert_eq!(outcome.status, AgentStatus::Succeeded, "{outcome:?}");
    let posts = server.posts();
    assert_eq!(
        posts.len(),
        3,
        "the refusal is not retried as a server fault"
    );
    let key = posts[0].body["prompt_cache_key"].as_str().unwrap();
    assert!(key.starts_with("autobuild:TASK-1:"), "task and role: {key}");
    assert!(posts[1].body.get("prompt_cache_key").is_none());
    assert!(
        posts[2].body.get("prompt_cache_key").is_none(),
        "remembered for the rest of the run"
    );
}
