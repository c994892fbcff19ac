//! The real `autobuild` binary against a REAL llama.cpp server: llama-cpp-python serving Gemma 3
//! 270M on 127.0.0.1, started by scripts/llama-server.sh, which sets
//!   AUTOBUILD_LLAMA_URL          the base URL (…/v1)
//!   AUTOBUILD_LLAMA_MODEL        the model with its own chat template (n_ctx 4096)
//!   AUTOBUILD_LLAMA_TOOLS_MODEL  the same weights with `chatml-function-calling`
//!   AUTOBUILD_LLAMA_SMALL_MODEL  the same weights with a 512-token context
//!   AUTOBUILD_LLAMA_BARE_MODEL   the same weights without a chat format (llama-cpp-python then
//!                                uses llama-2's, and Gemma answers every prompt with nothing)
//!   AUTOBUILD_LLAMA_FIGURES      a file the measured figures are appended to
//! Ignored by default; run them with the script.

use std::io::Write;
use std::time::{Duration, Instant};

use super::*;

const NEEDS: &str = "needs a llama.cpp server: scripts/llama-server.sh";

struct Llama {
    url: String,
    model: String,
    tools_model: String,
    small_model: String,
    bare_model: String,
}

fn llama() -> Llama {
    let var = |name: &str| {
        std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set: run {NEEDS}"))
    };
    Llama {
        url: var("AUTOBUILD_LLAMA_URL"),
        model: var("AUTOBUILD_LLAMA_MODEL"),
        tools_model: var("AUTOBUILD_LLAMA_TOOLS_MODEL"),
        small_model: var("AUTOBUILD_LLAMA_SMALL_MODEL"),
        bare_model: var("AUTOBUILD_LLAMA_BARE_MODEL"),
    }
}

/// Appends a measured figure to the file the script reports from (and prints it).
fn figure(line: &str) {
    println!("figure: {line}");
    if let Ok(path) = std::env::var("AUTOBUILD_LLAMA_FIGURES") {
        if let Ok(mut file) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            let _ = writeln!(file, "{line}");
        }
    }
}

/// The sample project with `roles` (TOML tables) in its config, in place of the fixture's
/// scripted roles of the same names (the others stay scripted).
fn project_with(roles: &str) -> Project {
    let project = Project::new().commit();
    let replaced: Vec<String> = roles
        .lines()
        .filter(|line| line.starts_with("[roles."))
        .map(str::to_string)
        .collect();
    let fixture = std::fs::read_to_string(project.root.join(".autobuild/config.toml")).unwrap();
    let mut kept = String::new();
    let mut dropping = false;
    for line in fixture.lines() {
        if line.starts_with('[') {
            dropping = replaced.iter().any(|header| header == line.trim());
        }
        if !dropping {
            kept.push_str(line);
            kept.push('\n');
        }
    }
    let config = format!("{kept}\n{roles}\n");
    project.write(".autobuild/config.toml", &config);
    project.git(&["commit", "-q", "-am", "roles on the llama.cpp server"]);
    project
}

fn role(name: &str, llama: &Llama, model: &str, extra: &str) -> String {
    format!(
        "[roles.{name}]\nagent = \"openai\"\nbase_url = \"{}\"\nmodel = \"{model}\"\ntimeout = \"10m\"\n{extra}\n",
        llama.url
    )
}

fn transcript(project: &Project, role: &str) -> Vec<Value> {
    std::fs::read_to_string(project.run_dir().join(format!("logs/turn_1_{role}.log")))
        .unwrap_or_default()
        .lines()
        .filter_map(|line| serde_json::from_str(line).ok())
        .collect()
}

fn events<'a>(lines: &'a [Value], event: &str) -> Vec<&'a Value> {
    lines.iter().filter(|line| line["event"] == event).collect()
}

/// One whole completion straight to the server: (seconds, completion tokens).
fn complete(llama: &Llama, max_tokens: u32) -> (f64, u64) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(300)))
        .proxy(None)
        .build()
        .into();
    let body = json!({
        "model": llama.model,
        "messages": [{"role": "user", "content": "Write a short poem about the sea."}],
        "max_tokens": max_tokens,
    });
    let started = Instant::now();
    let mut answer = agent
        .post(&format!("{}/chat/completions", llama.url))
        .header("content-type", "application/json")
        .send(body.to_string().as_bytes())
        .unwrap();
    let value: Value = serde_json::from_str(&answer.body_mut().read_to_string().unwrap()).unwrap();
    (
        started.elapsed().as_secs_f64(),
        value["usage"]["completion_tokens"].as_u64().unwrap_or(0),
    )
}

/// Seconds until the first token of a streamed answer.
fn first_token(llama: &Llama) -> f64 {
    use std::io::{BufRead, BufReader};
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(300)))
        .proxy(None)
        .build()
        .into();
    let body = json!({
        "model": llama.model,
        "messages": [{"role": "user", "content": "Say hello."}],
        "max_tokens": 16,
        "stream": true,
    });
    let started = Instant::now();
    let mut answer = agent
        .post(&format!("{}/chat/completions", llama.url))
        .header("content-type", "application/json")
        .send(body.to_string().as_bytes())
        .unwrap();
    let reader = BufReader::new(answer.body_mut().as_reader());
    for line in reader.lines() {
        let line = line.unwrap();
        let Some(data) = line.strip_prefix("data: ") else {
            continue;
        };
        let chunk: Value = serde_json::from_str(data).unwrap_or(Value::Null);
        if chunk["choices"][0]["delta"]["content"]
            .as_str()
            .is_some_and(|text| !text.is_empty())
        {
            return started.elapsed().as_secs_f64();
        }
    }
    panic!("the stream carried no token");
}

#[test]
#[ignore = "needs a llama.cpp server: scripts/llama-server.sh"]
fn llama_server_coach_verdict_through_the_response_format_fallback() {
    let llama = llama();
    let (seconds, tokens) = complete(&llama, 64);
    figure(&format!(
        "generation: {tokens} tokens in {seconds:.1} s ({:.1} tokens/s)",
        tokens as f64 / seconds
    ));
    assert!(
        tokens > 0,
        "the model answered nothing: is its chat format set?"
    );
    figure(&format!(
        "time to first token (short prompt, streamed): {:.2} s",
        first_token(&llama)
    ));
    let project = project_with(&role("coach", &llama, &llama.model, "max_tokens = 512"));

    let started = Instant::now();
    let output = project.run(&["task", TASK, "--max-turns", "1", "--no-merge"]);
    figure(&format!(
        "a turn with a scripted player and the real coach: {:.1} s",
        started.elapsed().as_secs_f64()
    ));

    let lines = transcript(&project, "coach");
    // llama-cpp-python answers json_schema with a 500; the coach falls back at once.
    let fallback = events(&lines, "format_fallback");
    assert_eq!(fallback.len(), 1, "{lines:#?}\n{output:?}");
    assert!(fallback[0]["note"]
        .as_str()
        .unwrap()
        .contains("json_object"));
    let retried: Vec<_> = events(&lines, "error")
        .into_iter()
        .filter(|e| !e["retry_in_ms"].is_null())
        .collect();
    assert!(
        retried.is_empty(),
        "the refusal is not retried: {retried:#?}"
    );
    assert!(!events(&lines, "answer").is_empty(), "{lines:#?}");
    let coach = project.record("coach", 1);
    let notes = coach.to_string();
    assert!(
        notes.contains("json_object"),
        "the record notes the fallback: {coach}"
    );
}

#[test]
#[ignore = "needs a llama.cpp server: scripts/llama-server.sh"]
fn llama_server_streaming_and_cancellation_leave_the_server_serving() {
    let llama = llama();
    let project = project_with(&role("player", &llama, &llama.model, "max_tokens = 4096"));
    let mut child = project.spawn(&["task", TASK, "--max-turns", "1", "--no-merge"]);
    let log = project.run_dir().join("logs/turn_1_player.log");
    let waited = Instant::now();
    while !log.exists() && waited.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(log.exists(), "the player never started");
    // Let it stream for a moment, then Ctrl-C.
    std::thread::sleep(Duration::from_secs(2));
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(!status.success());

    // The abandoned request's connection was closed, so the server is free for the next one.
    let started = Instant::now();
    let (seconds, tokens) = complete(&llama, 8);
    figure(&format!(
        "next request after a cancelled stream: answered in {:.1} s ({tokens} tokens)",
        started.elapsed().as_secs_f64()
    ));
    assert!(seconds < 60.0, "the server was still busy: {seconds:.1} s");
}

#[test]
#[ignore = "needs a llama.cpp server: scripts/llama-server.sh"]
fn llama_server_max_tokens_truncation_is_a_truncated_turn() {
    let llama = llama();
    let project = project_with(&role("player", &llama, &llama.model, "max_tokens = 8"));
    project.run(&["task", TASK, "--max-turns", "1", "--no-merge"]);
    let player = project.record("player", 1);
    let message = player["agent"]["status"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("cut off at max_tokens (8)"), "{player}");
}

#[test]
#[ignore = "needs a llama.cpp server: scripts/llama-server.sh"]
fn llama_server_context_exceeded_names_the_setting_to_raise() {
    let llama = llama();
    let project = project_with(&role(
        "player",
        &llama,
        &llama.small_model,
        "max_tokens = 64",
    ));
    project.run(&["task", TASK, "--max-turns", "1", "--no-merge"]);
    let player = project.record("player", 1);
    let message = player["agent"]["status"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(message.contains("--n_ctx"), "{player}");
    let lines = transcript(&project, "player");
    assert_eq!(events(&lines, "error").len(), 1, "not retried: {lines:#?}");
    // llama-cpp-python ends the stream without a word; the answer asked whole says why.
    assert_eq!(events(&lines, "stream_broken").len(), 1, "{lines:#?}");
}

#[test]
#[ignore = "needs a llama.cpp server: scripts/llama-server.sh"]
fn llama_server_a_forced_tool_call_runs_in_the_worktree() {
    let llama = llama();
    let extra =
        "tools = [\"write\"]\ntool_choice = \"required\"\nmax_tokens = 256\nmax_agent_turns = 2";
    let project = project_with(&role("player", &llama, &llama.tools_model, extra));
    project.run(&["task", TASK, "--max-turns", "1", "--no-merge"]);
    let lines = transcript(&project, "player");
    let results = events(&lines, "tool_result");
    assert!(!results.is_empty(), "no tool call was run: {lines:#?}");
    assert_eq!(results[0]["tool"], "write", "{lines:#?}");
    let calls = events(&lines, "answer");
    // The arguments as autobuild read them (the raw text may hold raw control characters).
    let arguments = calls[0]["calls"][0]["input"].clone();
    if arguments.is_null() {
        // The model's arguments were not JSON even read leniently (a 270M model may copy the
        // prompt into `content` until `max_tokens` cuts the string): the call is refused with
        // the reason and nothing is written, which is what the runner must do then.
        assert_eq!(results[0]["status"], "failed", "{lines:#?}");
        let reason = results[0]["content"].as_str().unwrap_or_default();
        assert!(reason.contains("invalid arguments"), "{lines:#?}");
        figure("forced tool call: arguments not JSON -> refused");
        return;
    }
    assert!(arguments.is_object(), "{lines:#?}");
    figure(&format!(
        "forced tool call: write {} -> {}",
        arguments["path"], results[0]["status"]
    ));
    if results[0]["status"] == "ok" {
        let path = arguments["path"].as_str().unwrap();
        assert!(project.worktree().join(path).exists(), "{lines:#?}");
    }
}

/// The trust bug this suite found: served without a chat format, Gemma mostly answers with 0
/// tokens. That turn is failed with the reason, not recorded as a finished turn. The model
/// samples, so now and then it does say something (garbage): the record must then follow the
/// other side of the same rule. Either way the turn's status is checked against what the real
/// server answered, and nothing is approved.
#[test]
#[ignore = "needs a llama.cpp server: scripts/llama-server.sh"]
fn llama_server_an_empty_answer_is_a_failed_turn() {
    let llama = llama();
    let project = project_with(&role(
        "player",
        &llama,
        &llama.bare_model,
        "max_tokens = 256",
    ));
    project.run(&["task", TASK, "--max-turns", "1", "--no-merge"]);
    let player = project.record("player", 1);
    let said = player["agent"]["final_message"]
        .as_str()
        .unwrap_or_default()
        .trim()
        .to_string();
    let acted = player["agent"]["agent_turns"].as_u64().unwrap_or(0) > 1;
    if said.is_empty() && !acted {
        figure("served without a chat format: the model answered nothing (failed turn)");
        assert_eq!(player["agent"]["status"]["status"], "failed", "{player}");
        assert_eq!(
            player["agent"]["status"]["class"], "empty_answer",
            "{player}"
        );
    } else {
        figure("served without a chat format: the model said something this time");
        assert_ne!(
            player["agent"]["status"]["class"], "empty_answer",
            "{player}"
        );
    }
    assert_eq!(project.record("gate", 1)["approved"], false);
}
