//! The scenarios, each run once per CLI (see `for_each_cli!` in main.rs). They assert on what a
//! user would see — exit codes, files in the worktree and on `main`, the run records — and on
//! what the real CLI did, as the model server saw it: the tool results it reported back, the
//! tools and output format it offered the model.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::harness::{Cli, Harness};
use crate::loop_fixture::TASK;
use crate::model_server::{text, Failure, Logged, Role, Script};
use crate::moves::{
    approve, feedback, steps, Moves, COACH_FILE, FEEDBACK_SUMMARY, WRONG_GREETING_FAILURE,
};

/// The shell command the players and coaches run: where they are, and the project's tests.
const RUN_TESTS: &str = "pwd && sh tests/run.sh";

fn harness(cli: Cli, name: &str, script: impl FnOnce(Moves<'_>) -> Script) -> Harness {
    Harness::new(cli, name, |worktree: &Path| script(Moves { cli, worktree }))
}

fn assert_exit(h: &Harness, output: &Output, expected: i32) {
    assert_eq!(
        output.status.code(),
        Some(expected),
        "[{}] stdout:\n{}\nstderr:\n{}\n{}",
        h.name,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        h.context()
    );
}

/// The last request of `role` in `turn`: the one that carries every tool result.
fn last_request(h: &Harness, role: Role, turn: u32) -> Logged {
    let requests = h.server.requests_of(role, turn);
    let last = requests.last().cloned();
    last.unwrap_or_else(|| panic!("no request of the {role:?} in turn {turn}\n{}", h.context()))
}

/// The tool results the CLI reported for `role` in `turn`.
fn tool_results(h: &Harness, role: Role, turn: u32) -> Vec<String> {
    last_request(h, role, turn).tool_results()
}

fn assert_status(h: &Harness, kind: &str, turn: u32, status: &str) {
    let record = h.record(kind, turn);
    assert_eq!(
        record["agent"]["status"]["status"],
        status,
        "[{}] {kind} turn {turn}: {}\n{}",
        h.name,
        record["agent"]["status"],
        h.context()
    );
}

/// The coach's verdict was the CLI's structured output: offered as such to the model and
/// recorded by autobuild from the CLI's structured result, not parsed from prose.
fn assert_structured_verdict(h: &Harness, turn: u32, decision: &str) {
    let coach = h.record("coach", turn);
    assert_eq!(coach["verdict"]["decision"], decision, "{coach}");
    assert_eq!(coach["verdict_error"], Value::Null, "{coach}");
    assert_eq!(
        coach["agent"]["structured_output"]["decision"],
        decision,
        "[{}] the verdict did not come from the CLI's structured output: {coach}\n{}",
        h.name,
        h.context()
    );
    let request = last_request(h, Role::Coach, turn);
    match h.cli {
        Cli::Claude => {
            assert!(
                request.tool_names().iter().any(|t| t == "StructuredOutput"),
                "[{}] claude offered no StructuredOutput tool (the --json-schema was not \
                 accepted); tools: {:?}",
                h.name,
                request.tool_names()
            );
            let result = h
                .agent_events(Role::Coach, turn)
                .into_iter()
                .find(|e| e["type"] == "result")
                .expect("a result event");
            assert_eq!(
                result["structured_output"]["decision"], decision,
                "{result}"
            );
        }
        Cli::Codex => {
            let format = &request.body["text"]["format"];
            assert_eq!(format["type"], "json_schema", "{format}");
            assert!(
                format["schema"]["properties"]["decision"].is_object(),
                "the verdict schema was not sent: {format}"
            );
        }
    }
}

/// The writer wrote files and ran the tests through the real CLI, in the worktree; the coach
/// ran a command too and answered through the structured output; the run merged.
pub fn player_tools_run_in_the_worktree_and_the_verdict_is_structured(cli: Cli) {
    let h = harness(cli, "tools-and-structured-verdict", |m| {
        Script::new()
            .steps(
                Role::Player,
                1,
                steps(vec![
                    m.implement_greeting("!"),
                    vec![
                        m.shell(RUN_TESTS),
                        text("Implemented greeting with a test."),
                    ],
                ]),
            )
            .steps(
                Role::Coach,
                1,
                steps(vec![vec![m.shell(RUN_TESTS)], m.verdict(approve())]),
            )
    });

    let output = h.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&h, &output, 0);
    assert_eq!(h.project.state()["status"], "merged");
    let greet = h.project.show("main", "lib/greet.sh");
    assert!(greet.contains("printf 'Hello, %s!\\n'"), "{greet}");
    assert!(h
        .project
        .show("main", "tests/test_greet.sh")
        .contains("greeting Ada"));

    assert_status(&h, "player", 1, "succeeded");
    let player = h.record("player", 1);
    let changed = player["files_changed"].to_string();
    assert!(changed.contains("lib/greet.sh") && changed.contains("tests/test_greet.sh"));
    assert!(
        player["agent"]["usage"]["input"].as_u64().unwrap() > 0,
        "{player}"
    );
    assert!(player["agent"]["session_id"].is_string(), "{player}");
    // The CLI ran the shell command in the worktree and reported its output to the model.
    let worktree = h.worktree().display().to_string();
    let ran = tool_results(&h, Role::Player, 1);
    let test_run = ran.last().expect("tool results");
    assert!(
        test_run.contains(&worktree) && test_run.contains("2 passed, 0 failed"),
        "[{}] player tool results: {ran:#?}",
        h.name
    );
    let coach_ran = tool_results(&h, Role::Coach, 1);
    assert!(
        coach_ran.iter().any(|r| r.contains("2 passed, 0 failed")),
        "[{}] coach tool results: {coach_ran:#?}",
        h.name
    );
    assert_status(&h, "coach", 1, "succeeded");
    assert_structured_verdict(&h, 1, "approve");
}

/// The read-only coach tries to create a file; the CLI refuses (Claude Code has no write tool
/// for it, codex's read-only sandbox fails the write), so nothing needs reverting.
pub fn the_read_only_coach_cannot_write(cli: Cli) {
    let h = harness(cli, "read-only-coach", |m| {
        Script::new()
            .steps(
                Role::Player,
                1,
                steps(vec![m.implement_greeting("!"), vec![text("Done.")]]),
            )
            .steps(
                Role::Coach,
                1,
                steps(vec![vec![m.try_to_write()], m.verdict(approve())]),
            )
    });

    let output = h.run(&["task", TASK, "--no-merge"]);

    assert_exit(&h, &output, 0);
    assert!(
        !h.in_worktree(COACH_FILE).exists(),
        "[{}] the coach wrote {COACH_FILE}",
        h.name
    );
    let on_branch = h
        .project
        .git(&["ls-tree", "-r", "--name-only", &h.project.branch()]);
    assert!(!on_branch.contains(COACH_FILE), "{on_branch}");
    let coach = h.record("coach", 1);
    assert_eq!(
        coach["scope_violation"],
        serde_json::json!([]),
        "[{}] the CLI let the write through and the runner had to revert it: {coach}",
        h.name
    );
    let refusal = tool_results(&h, Role::Coach, 1);
    let refused = refusal.first().expect("the write attempt's result");
    let expected = match cli {
        Cli::Claude => "No such tool available: Write",
        Cli::Codex => "Read-only file system",
    };
    assert!(
        refused.contains(expected),
        "[{}] the CLI's answer to the write: {refused}",
        h.name
    );
    if cli == Cli::Claude {
        let init = h
            .agent_events(Role::Coach, 1)
            .into_iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init")
            .expect("an init event");
        let tools = init["tools"].to_string();
        assert!(
            !tools.contains("\"Write\"") && !tools.contains("\"Edit\""),
            "{tools}"
        );
    }
    assert_structured_verdict(&h, 1, "approve");
}

/// As in `autobuild demo`: turn 1's greeting lacks its "!", the runner's check and the coach
/// reject it, the feedback reaches turn 2's prompt, turn 2 fixes it and is approved.
pub fn turn_1_rejected_then_turn_2_approved(cli: Cli) {
    let h = harness(cli, "rejected-then-approved", |m| {
        Script::new()
            .steps(
                Role::Player,
                1,
                steps(vec![
                    m.implement_greeting(""),
                    vec![text("Implemented greeting; all tests pass.")],
                ]),
            )
            .steps(Role::Coach, 1, m.verdict(feedback()))
            .steps(
                Role::Player,
                2,
                steps(vec![
                    m.implement_greeting("!"),
                    vec![m.shell(RUN_TESTS), text("Added the exclamation mark.")],
                ]),
            )
            .steps(Role::Coach, 2, m.verdict(approve()))
    });

    let output = h.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&h, &output, 0);
    assert_eq!(h.record("gate", 1)["approved"], false);
    assert_eq!(h.record("gate", 2)["approved"], true);
    assert_eq!(h.record("verify", 1)["passed"], false);
    assert_structured_verdict(&h, 1, "feedback");
    assert_structured_verdict(&h, 2, "approve");
    let prompt = h.server.requests_of(Role::Player, 2)[0].user_text();
    assert!(
        prompt.contains(FEEDBACK_SUMMARY) && prompt.contains(WRONG_GREETING_FAILURE),
        "[{}] turn 2's prompt lacks turn 1's feedback:\n{prompt}",
        h.name
    );
    assert!(h
        .project
        .show("main", "lib/greet.sh")
        .contains("printf 'Hello, %s!\\n'"));
}

/// The API rejects the key (401): the player's turn fails as `auth_missing`, and — DESIGN §10
/// — the run stops at once with exit 1 and the fix, keeping the worktree.
pub fn an_auth_failure_stops_the_run_with_the_fix(cli: Cli) {
    let h = harness(cli, "auth-failure", |_| {
        Script::new().failing_every_request(Failure::Unauthorized)
    });

    let output = h.run(&["task", TASK, "--max-turns", "2"]);

    assert_ne!(output.status.code(), Some(0), "{}", h.context());
    // The step stops before its records: the run state and the report say what happened.
    let state = h.project.state();
    assert_eq!(state["status"], "halted", "[{}] {state}", h.name);
    assert_eq!(state["outcome"]["outcome"], "agent_unusable", "{state}");
    let report = h.project.report();
    assert!(report.contains("auth_missing"), "[{}] {report}", h.name);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let fix = match cli {
        Cli::Claude => "ANTHROPIC_API_KEY",
        Cli::Codex => "codex login",
    };
    let coach_requests = h
        .server
        .requests()
        .iter()
        .filter(|r| r.role == Some(Role::Coach))
        .count();
    let stopped = if output.status.code() != Some(1) {
        Err(format!("exit {:?}, not 1", output.status.code()))
    } else if !said.contains(fix) {
        Err(format!("the output does not name the fix ({fix}):\n{said}"))
    } else if coach_requests > 0 {
        Err(format!("the coach still ran ({coach_requests} requests)"))
    } else if !h.worktree().is_dir() {
        Err("the worktree was not kept".into())
    } else {
        Ok(())
    };
    if let Err(why) = stopped {
        panic!(
            "[{}] an auth failure must stop the run (exit 1 with the fix): {why}",
            h.name
        );
    }
}

/// The first request is rate limited (429, the CLI's own retries off): autobuild retries the
/// invocation after its pause, keeps the failed attempt's logs, and the run succeeds.
pub fn a_rate_limit_is_retried_and_the_run_succeeds(cli: Cli) {
    let h = harness(cli, "rate-limited-then-ok", |m| {
        Script::new()
            .failures(Role::Player, 1, vec![Failure::RateLimited])
            .steps(
                Role::Player,
                1,
                steps(vec![m.implement_greeting("!"), vec![text("Done.")]]),
            )
            .steps(Role::Coach, 1, m.verdict(approve()))
    });

    let output = h.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&h, &output, 0);
    assert_status(&h, "player", 1, "succeeded");
    let answers: Vec<String> = h
        .server
        .requests_of(Role::Player, 1)
        .iter()
        .map(|r| r.answer.clone())
        .collect();
    assert_eq!(
        answers.first().map(String::as_str),
        Some("429"),
        "{answers:?}"
    );
    let kept = match cli {
        Cli::Claude => "logs/turn_1_player.attempt1.stream.jsonl",
        Cli::Codex => "logs/turn_1_player.rate-limited-1.jsonl",
    };
    let first_attempt = h.run_file(kept);
    assert!(first_attempt.contains("429"), "{kept}:\n{first_attempt}");
    assert!(h
        .project
        .show("main", "lib/greet.sh")
        .contains("greeting()"));
}

/// `autobuild doctor` finds the real CLI on the project's PATH (`[env] path_prepend`), reports
/// its version, and sees the credentials the run uses.
pub fn doctor_sees_the_cli_and_its_credentials(cli: Cli) {
    let h = harness(cli, "doctor", |_| Script::new());

    let output = h.run(&["doctor"]);

    assert_exit(&h, &output, 0);
    let report = String::from_utf8_lossy(&output.stdout).into_owned();
    let (agent, credential) = match cli {
        Cli::Claude => ("claude-code", "ANTHROPIC_API_KEY"),
        Cli::Codex => ("codex", "CODEX_API_KEY"),
    };
    let version = h.version();
    assert!(!version.is_empty(), "no --version output");
    let found = report
        .lines()
        .any(|l| l.starts_with("ok") && l.contains(&format!("{agent}: ")) && l.contains(&version));
    assert!(
        found,
        "[{}] no `ok {agent}: … ({version})` line:\n{report}",
        h.name
    );
    let credentials = report.lines().any(|l| {
        l.starts_with("ok") && l.contains(&format!("{agent} credentials")) && l.contains(credential)
    });
    assert!(credentials, "[{}] credentials not seen:\n{report}", h.name);
}
