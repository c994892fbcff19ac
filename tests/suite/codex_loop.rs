//! The Player/Coach loop end to end with the `codex` adapter: the real binary on the sample
//! project of tests/loop_fixture, with the fake `codex` of tests/fixtures/fake-codex found
//! through the project's `[env] path_prepend`.

use crate::loop_fixture;

use std::fs;
use std::path::{Path, PathBuf};

use loop_fixture::{approve, assert_exit, files_below, Project, TASK};
use serde_json::{json, Value};

const SECRET: &str = "sk-secret-codex-0123456789";

/// USD per million tokens in the project's `[pricing]`; the fake reports 1200 input tokens
/// (200 of them cached) and 300 output tokens per invocation.
const PRICE: (f64, f64, f64) = (2.0, 1.0, 10.0);
const COST_PER_INVOCATION: f64 = (1000.0 * PRICE.0 + 200.0 * PRICE.1 + 300.0 * PRICE.2) / 1e6;

fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-codex")
}

/// The sample project with both roles on `codex` and the fake scripted by `scenario`.
fn codex_project(scenario: Value) -> (Project, PathBuf) {
    let project = Project::new().commit();
    // The fake's scenario, state and record live where the sandbox lets it write.
    let outside = project.outside("");
    let home = project.home();
    fs::write(outside.join("scenario.json"), scenario.to_string()).unwrap();
    let config = format!(
        r#"[checks.test]
cmd = "sh tests/run.sh"
timeout = "30s"

[env]
path_prepend = ["{fake}"]

[roles.player]
agent = "codex"
model = "gpt-5-codex"
timeout = "30s"

[roles.coach]
agent = "codex"
model = "gpt-5-codex"
timeout = "30s"

[pricing."gpt-5-codex"]
input = {input}
cached_input = {cached}
output = {output}
"#,
        fake = fake_dir().display(),
        input = PRICE.0,
        cached = PRICE.1,
        output = PRICE.2,
    );
    project.write(
        ".autobuild/config.toml",
        &format!("{config}{}", project.sandbox_table()),
    );
    project.git(&["commit", "-q", "-am", "use codex"]);
    let record = outside.join("record.jsonl");
    let project = project
        .env(
            "FAKE_CODEX_SCRIPT",
            &outside.join("scenario.json").display().to_string(),
        )
        .env("FAKE_CODEX_RECORD", &record.display().to_string())
        .env("CODEX_API_KEY", SECRET)
        // The CLI's own state directories are made writable (created) under HOME.
        .env("HOME", &home.display().to_string());
    (project, record)
}

const WRITE_GREETING: &str = ". .autobuild/agents/write_greeting.sh && write_greeting '!'";

fn close(actual: &Value, expected: f64) -> bool {
    actual
        .as_f64()
        .is_some_and(|value| (value - expected).abs() < 1e-9)
}

#[test]
fn the_loop_runs_end_to_end_with_codex_and_merges() {
    let (project, record) = codex_project(json!({
        "player": [{
            "run": WRITE_GREETING,
            "text": "Implemented greeting with a test.",
            "leak_env": ["CODEX_API_KEY"],
        }],
        "coach": [{"verdict": approve(), "leak_env": ["CODEX_API_KEY"]}],
    }));

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "merged");
    assert!(project.show("main", "lib/greet.sh").contains("greeting()"));
    let player = project.record("player", 1);
    assert_eq!(player["agent"]["status"]["status"], "succeeded");
    assert_eq!(player["agent"]["session_id"], "0199fake-thread-0001");
    assert_eq!(
        player["agent"]["usage"],
        json!({"input": 1000, "output": 300, "cached": 200, "cache_written": 0})
    );
    assert!(close(&player["agent"]["cost_usd"], COST_PER_INVOCATION));
    assert_eq!(player["agent"]["cost_estimated"], true);
    assert!(player["files_changed"]
        .as_array()
        .unwrap()
        .contains(&json!("lib/greet.sh")));
    let coach = project.record("coach", 1);
    assert_eq!(coach["verdict"]["decision"], "approve");
    assert_eq!(coach["retried"], false);
    assert!(close(
        &project.state()["cost_usd"],
        2.0 * COST_PER_INVOCATION
    ));

    let invocations: Vec<Value> = fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(invocations.len(), 2, "one player and one coach invocation");
    let worktree = project.worktree().display().to_string();
    for (invocation, (sandbox, verdict)) in invocations
        .iter()
        .zip([("workspace-write", false), ("read-only", true)])
    {
        let argv: Vec<&str> = invocation["argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        let value_of = |flag: &str| argv.iter().position(|a| *a == flag).map(|i| argv[i + 1]);
        assert_eq!(value_of("--sandbox"), Some(sandbox), "{argv:?}");
        assert_eq!(value_of("-C"), Some(worktree.as_str()), "{argv:?}");
        assert_eq!(value_of("--output-schema").is_some(), verdict, "{argv:?}");
        assert_eq!(invocation["cwd"], worktree);
    }
    assert!(invocations[0]["stdin"]
        .as_str()
        .unwrap()
        .contains("Add a greeting function"));

    let mut checked = 0;
    for file in files_below(&project.root.join(".autobuild")) {
        let text = String::from_utf8_lossy(&fs::read(&file).unwrap()).into_owned();
        assert!(
            !text.contains(SECRET),
            "{} contains the API key",
            file.display()
        );
        checked += 1;
    }
    assert!(checked > 10, "only {checked} files under .autobuild");
    let stream = fs::read_to_string(project.run_dir().join("logs/turn_1_player.jsonl")).unwrap();
    assert!(stream.contains("[REDACTED]"));
}

#[test]
fn a_failed_codex_turn_is_never_approved_and_the_loop_goes_on() {
    let (project, _) = codex_project(json!({
        "player": [
            {"turn_failed": "stream disconnected before completion"},
            {"run": WRITE_GREETING},
        ],
        "coach": [{"verdict": approve()}],
    }));

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let first = project.record("player", 1);
    assert_eq!(first["agent"]["status"]["status"], "failed");
    assert_eq!(first["agent"]["status"]["class"], "api_error");
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
}

#[test]
fn preflight_refuses_codex_with_only_openai_api_key() {
    let (project, record) = codex_project(json!({"player": [{"run": WRITE_GREETING}]}));
    // What `codex exec` 0.169 ignores is all there is: no CODEX_API_KEY, no stored login.
    let project = project
        .env("CODEX_API_KEY", "")
        .env("OPENAI_API_KEY", SECRET)
        .env("FAKE_CODEX_AUTH", "logged_out");

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    let stderr = loop_fixture::stderr(&output);
    assert!(stderr.contains("(codex): not logged in"), "{stderr}");
    assert!(stderr.contains("OPENAI_API_KEY is set, but"), "{stderr}");
    assert!(stderr.contains("CODEX_API_KEY"), "{stderr}");
    assert!(!stderr.contains(SECRET));
    assert!(!project.run_dir().exists(), "nothing is created");
    assert!(!project.branch_exists(&project.branch()));
    assert!(!record.exists(), "no agent was started");
}

#[test]
fn a_model_without_a_price_is_named_and_refused_until_pricing_gives_one() {
    let (project, record) = codex_project(json!({
        "player": [{"run": WRITE_GREETING}],
        "coach": [{"verdict": approve()}],
    }));

    // codex 0.169's default model, which the built-in price table does not know.
    let args = ["task", TASK, "--no-merge", "--player-model", "gpt-6.1-sol"];
    let output = project.run(&args);

    assert_exit(&output, 2);
    let stderr = loop_fixture::stderr(&output);
    assert!(
        stderr.contains("model `gpt-6.1-sol` has no known price"),
        "{stderr}"
    );
    assert!(stderr.contains("max_cost_usd"), "{stderr}");
    assert!(stderr.contains("[pricing.\"gpt-6.1-sol\"]"), "{stderr}");
    assert!(!project.run_dir().exists(), "nothing is created");
    assert!(!record.exists(), "no agent was started");

    // With a price the run goes ahead and every invocation counts against the budget.
    let config = project.read(".autobuild/config.toml");
    project.write(
        ".autobuild/config.toml",
        &format!(
            "{config}\n[pricing.\"gpt-6.1-sol\"]\ninput = 2.0\ncached_input = 1.0\noutput = 10.0\n"
        ),
    );
    project.git(&["commit", "-q", "-am", "price gpt-6.1-sol"]);

    let output = project.run(&args);

    assert_exit(&output, 0);
    assert_eq!(project.record("player", 1)["agent"]["cost_estimated"], true);
    assert!(close(
        &project.state()["cost_usd"],
        2.0 * COST_PER_INVOCATION
    ));
}
