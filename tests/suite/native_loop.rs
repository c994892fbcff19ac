//! The Player/Coach loop end to end on the native `openai` adapter: the real binary on the
//! sample project of tests/loop_fixture, both roles talking to a scripted chat-completions
//! server on 127.0.0.1 whose tool calls implement, test and review the task.

use crate::loop_fixture;
use crate::native_fixture;
#[path = "native_loop/llama_server.rs"]
mod llama_server;

use loop_fixture::{assert_exit, Project, TASK};
use native_fixture::{openai_calls, openai_text, Server};
use serde_json::{json, Value};

const MODEL: &str = "qwen2.5-coder";

fn native_project(server: &Server) -> Project {
    let project = Project::new().commit();
    let config = format!(
        r#"[checks.test]
cmd = "sh tests/run.sh"
timeout = "30s"

[roles.player]
agent = "openai"
base_url = "{base}"
model = "{MODEL}"
timeout = "30s"

[roles.coach]
agent = "openai"
base_url = "{base}"
model = "{MODEL}"
timeout = "30s"

[pricing."{MODEL}"]
input = 1.0
cached_input = 0.1
output = 10.0
"#,
        base = server.base_url(),
    );
    project.write(
        ".autobuild/config.toml",
        &format!("{config}{}", project.sandbox_table()),
    );
    project.git(&["commit", "-q", "-am", "use the openai adapter"]);
    project
}

/// A loopback server without `[pricing]` is free: a budgeted run starts without zero prices.
#[test]
fn a_budgeted_run_on_a_local_server_starts_without_declaring_prices() {
    let server = Server::start(Vec::new(), &[MODEL]);
    let project = native_project(&server);
    let config = project.read(".autobuild/config.toml");
    let start = config.find("[pricing.").unwrap();
    let end = start + config[start..].find("output = 10.0\n").unwrap() + "output = 10.0\n".len();
    project.write(
        ".autobuild/config.toml",
        &format!("{}{}", &config[..start], &config[end..]),
    );
    project.git(&["commit", "-q", "-am", "no prices"]);
    let dry = project.run(&["task", TASK, "--dry-run", "--set", "limits.max_cost_usd=1"]);
    assert_exit(&dry, 0);
    let stderr = loop_fixture::stderr(&dry);
    assert!(!stderr.contains("no known price"), "{stderr}");
}

/// The dry run tries to connect to a server on this machine, and says when nothing listens.
#[test]
fn the_dry_run_says_when_a_local_server_is_down() {
    let server = Server::start(Vec::new(), &[MODEL]);
    let project = native_project(&server);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let config = project
        .read(".autobuild/config.toml")
        .replace(&server.base_url(), &format!("http://{closed}/v1"));
    project.write(".autobuild/config.toml", &config);
    project.git(&["commit", "-q", "-am", "a server that is not running"]);

    let dry = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&dry, 0);
    let plan = String::from_utf8_lossy(&dry.stdout);
    let down = format!("endpoint down: nothing accepts connections at {closed}");
    assert_eq!(plan.matches(&down).count(), 2, "player and coach:\n{plan}");
    assert!(plan.contains("`autobuild doctor` checks it"), "{plan}");
}

fn args(value: Value) -> String {
    value.to_string()
}

#[test]
fn the_loop_runs_end_to_end_on_the_native_adapter_and_merges() {
    let greeting = "greeting() {\n    printf 'Hello, %s!\\n' \"$1\"\n}\n\nfarewell() {";
    let test = ". ./lib/greet.sh\n[ \"$(greeting Ada)\" = \"Hello, Ada!\" ] || exit 1\n";
    let verdict = json!({
        "decision": "approve",
        "summary": "greeting works and is tested",
        "issues": [],
        "criteria": [{"id": "AC-001", "status": "met", "evidence": "tests/run.sh passes"}],
    });
    let player_edit =
        args(json!({"path": "lib/greet.sh", "old_string": "farewell() {", "new_string": greeting}));
    let player_test = args(json!({"path": "tests/test_greeting.sh", "content": test}));
    let coach_read = args(json!({"path": "lib/greet.sh"}));
    let coach_run = args(json!({"command": "sh tests/run.sh"}));
    let server = Server::start(
        vec![
            // `doctor` asks the coach's endpoint how it takes a verdict.
            openai_text(r#"{"ok": true}"#),
            openai_calls(&[("edit", &player_edit), ("write", &player_test)]),
            openai_text("Added greeting() with a test."),
            openai_calls(&[("read", &coach_read), ("bash", &coach_run)]),
            openai_text(&verdict.to_string()),
        ],
        &[MODEL],
    );
    let project = native_project(&server);

    let dry = project.run(&["task", TASK, "--dry-run"]);
    assert_exit(&dry, 0);
    let plan = String::from_utf8_lossy(&dry.stdout);
    assert!(
        plan.contains(&format!("coach: openai model {MODEL}, access read-only")),
        "{plan}"
    );
    assert!(
        plan.contains(&format!(
            "$ POST {}/chat/completions model={MODEL} tools=read,grep,glob,bash verdict=response_format=json_schema",
            server.base_url()
        )),
        "{plan}"
    );
    assert!(server.posts().is_empty(), "a dry run sends nothing");
    assert!(!plan.contains("endpoint down"), "{plan}");

    let doctor = project.run(&["doctor"]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    for role in ["player", "coach"] {
        let line = format!(
            "ok       role {role} (openai): {} answers and serves `{MODEL}`",
            server.base_url()
        );
        assert!(report.contains(&line), "{report}");
    }
    assert!(
        report.contains(
            "role coach (openai): verdicts: the server takes `response_format: json_schema`"
        ),
        "{report}"
    );
    let probe = &server.posts()[0].body;
    assert_eq!(probe["max_tokens"], 1);
    assert_eq!(probe["response_format"]["type"], "json_schema");

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "merged");
    assert!(project.show("main", "lib/greet.sh").contains("greeting()"));
    assert!(project
        .show("main", "tests/test_greeting.sh")
        .contains("Hello, Ada!"));
    let player = project.record("player", 1);
    assert_eq!(player["agent"]["status"]["status"], "succeeded");
    assert_eq!(player["agent"]["agent_turns"], 2);
    assert_eq!(
        player["agent"]["usage"],
        json!({"input": 2000, "output": 200, "cached": 0, "cache_written": 0})
    );
    assert_eq!(player["agent"]["cost_estimated"], true);
    let coach = project.record("coach", 1);
    assert_eq!(coach["verdict"]["decision"], "approve");
    // The run's requests, after doctor's one.
    let posts = server.posts()[1..].to_vec();
    assert_eq!(posts.len(), 4);
    assert!(posts[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .contains("Add a greeting function"));
    // The coach ran the project's tests through its bash tool, in the worktree.
    let ran = posts[3].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "call_1")
        .unwrap();
    assert!(
        ran["content"]
            .as_str()
            .unwrap()
            .contains("2 passed, 0 failed"),
        "{ran}"
    );
    let transcript =
        std::fs::read_to_string(project.run_dir().join("logs/turn_1_coach.log")).unwrap();
    assert!(transcript.contains("\"event\":\"tool_result\""));
}

/// A coach whose request fails (the server's error body, with its Python file paths) did not
/// review: the next player prompt says the review did not happen, never the body, and never
/// as an issue to fix; the body stays in the coach's record.
#[test]
fn a_failed_coach_request_reaches_the_player_as_a_note_without_the_servers_body() {
    let greeting = "greeting() {\n    printf 'Hello, %s!\\n' \"$1\"\n}\n\nfarewell() {";
    let test = ". ./lib/greet.sh\n[ \"$(greeting Ada)\" = \"Hello, Ada!\" ] || exit 1\n";
    let verdict = json!({
        "decision": "approve",
        "summary": "greeting works and is tested",
        "issues": [],
        "criteria": [{"id": "AC-001", "status": "met", "evidence": "tests/run.sh passes"}],
    });
    let player_edit =
        args(json!({"path": "lib/greet.sh", "old_string": "farewell() {", "new_string": greeting}));
    let player_test = args(json!({"path": "tests/test_greeting.sh", "content": test}));
    let server_path = "/usr/lib/python3/site-packages/llama_cpp/server/app.py";
    let server = Server::start(
        vec![
            openai_calls(&[("edit", &player_edit), ("write", &player_test)]),
            openai_text("Added greeting() with a test."),
            native_fixture::error(
                400,
                &format!(
                    "Traceback (most recent call last): File \"{server_path}\", line 512, in \
                 create_chat_completion: ValueError: bad request"
                ),
            ),
            openai_text("Nothing left to change."),
            openai_text(&verdict.to_string()),
        ],
        &[MODEL],
    );
    let project = native_project(&server);

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    let coach = project.record("coach", 1);
    assert!(
        coach["verdict_error"]
            .as_str()
            .unwrap()
            .contains(server_path),
        "the record keeps the error: {coach}"
    );
    let posts = server.posts();
    let prompt = posts[3].body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("the review did not happen"), "{prompt}");
    assert!(!prompt.contains(server_path), "{prompt}");
    // No must-fix issue reaches the player for the reviewer's failure.
    assert!(!prompt.contains("[must_fix]"), "{prompt}");
}

/// A player that answers nothing (0 tokens, no tool call) has not done a turn: the turn is
/// failed with the reason in its record and in the next prompt, and the coach's approval of
/// it does not approve; a coach that answers nothing never approves either.
#[test]
fn an_empty_answer_is_a_failed_turn_for_the_player_and_never_an_approval_for_the_coach() {
    let greeting = "greeting() {\n    printf 'Hello, %s!\\n' \"$1\"\n}\n\nfarewell() {";
    let test = ". ./lib/greet.sh\n[ \"$(greeting Ada)\" = \"Hello, Ada!\" ] || exit 1\n";
    let verdict = json!({
        "decision": "approve",
        "summary": "greeting works and is tested",
        "issues": [],
        "criteria": [{"id": "AC-001", "status": "met", "evidence": "tests/run.sh passes"}],
    });
    let player_edit =
        args(json!({"path": "lib/greet.sh", "old_string": "farewell() {", "new_string": greeting}));
    let player_test = args(json!({"path": "tests/test_greeting.sh", "content": test}));
    let server = Server::start(
        vec![
            // Turn 1: the player answers nothing; the coach (wrongly) approves.
            native_fixture::openai_nothing(),
            openai_text(&verdict.to_string()),
            // Turn 2: the player works; the coach answers nothing.
            openai_calls(&[("edit", &player_edit), ("write", &player_test)]),
            openai_text("Added greeting() with a test."),
            native_fixture::openai_nothing(),
            // Turn 3: nothing left to do; the coach approves.
            openai_text("Nothing left to change."),
            openai_text(&verdict.to_string()),
        ],
        &[MODEL],
    );
    let project = native_project(&server);

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    let player = project.record("player", 1);
    assert_eq!(player["agent"]["status"]["status"], "failed", "{player}");
    assert_eq!(
        player["agent"]["status"]["class"], "empty_answer",
        "{player}"
    );
    assert!(player["agent"]["status"]["message"]
        .as_str()
        .unwrap()
        .contains("the model answered nothing"));
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false, "{gate}");
    let coach = project.record("coach", 2);
    assert_eq!(coach["agent"]["status"]["class"], "empty_answer", "{coach}");
    assert_eq!(project.record("gate", 2)["approved"], false);
    assert_eq!(project.record("gate", 3)["approved"], true);
    assert_eq!(project.state()["status"], "merged");
    // The second player prompt says why the first turn failed.
    let posts = server.posts();
    let prompt = posts[2].body["messages"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("the model answered nothing"), "{prompt}");
}
