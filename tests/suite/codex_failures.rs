//! How the `codex` adapter fails, against the fake `codex` in tests/fixtures/fake-codex:
//! failed turns and error events, timeouts, a missing binary, sign-in and model errors,
//! rate-limit retries, and secrets kept out of every file it writes.

use crate::codex_fixture;

use std::fs;
use std::time::{Duration, Instant};

use autobuild::agents::{Adapter, AgentError, AgentErrorClass, AgentStatus};
use autobuild::process::CancelToken;
use codex_fixture::{adapter, coach, failure, files_below, player, Sandbox, SECRET};
use serde_json::json;

#[test]
fn turn_failed_fails_the_step() {
    let sandbox = Sandbox::new(json!({"player": [{
        "turn_failed": "stream disconnected before completion: Transport error",
    }]}));

    let outcome = sandbox.invoke("player", &player());

    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::ApiError);
    assert_eq!(
        message,
        "codex: stream disconnected before completion: Transport error"
    );
    assert_eq!(sandbox.invocations().len(), 1, "not a rate limit: no retry");
}

#[test]
fn an_error_event_fails_the_step_even_with_exit_code_zero() {
    let sandbox = Sandbox::new(json!({"player": [{
        "error": "unexpected status 500 Internal Server Error",
        "omit_turn_completed": true,
        "exit": 0,
    }]}));

    let (class, message) = failure(&sandbox.invoke("player", &player()));

    assert_eq!(class, AgentErrorClass::ApiError);
    assert!(message.contains("500 Internal Server Error"), "{message}");
}

#[test]
fn an_error_codex_recovers_from_does_not_fail_the_step() {
    let sandbox = Sandbox::new(json!({"player": [{"error": "Reconnecting... 1/5"}]}));

    assert_eq!(
        sandbox.invoke("player", &player()).status,
        AgentStatus::Succeeded
    );
}

#[test]
fn reconnect_notices_do_not_keep_the_idle_watchdog_quiet() {
    let sandbox = Sandbox::new(json!({"player": [{"reconnect": {"count": 600, "delay": 0.1}}]}));
    let mut role = player();
    role.idle_timeout = Some(Duration::from_secs(1));

    let started = Instant::now();
    let outcome = sandbox.invoke("player", &role);

    assert_eq!(outcome.status, AgentStatus::IdleTimedOut { detail: None });
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[test]
fn a_hung_codex_is_killed_with_its_children_at_the_timeout() {
    let sandbox = Sandbox::new(json!({}));
    let pids_file = sandbox.root.join("pids");
    sandbox.scenario(json!({"player": [{"sleep": 1000, "pids_file": pids_file}]}));
    let mut role = player();
    // A short timeout first, so the test is quick on an idle machine. Under load the fake CLI
    // may be killed before it wrote its pids; the kill is then tried again with room to start
    // (the bound still tells a kill at the timeout from the scenario's own end).
    for timeout in [3, 15] {
        let _ = fs::remove_file(&pids_file);
        role.timeout = Some(Duration::from_secs(timeout));

        let started = Instant::now();
        let outcome = sandbox.invoke("player", &role);

        assert_eq!(outcome.status, AgentStatus::TimedOut);
        assert!(started.elapsed() < Duration::from_secs(timeout + 45));
        let Ok(pids) = fs::read_to_string(&pids_file) else {
            continue;
        };
        let pids: Vec<i32> = pids
            .split_whitespace()
            .map(|p| p.parse().unwrap())
            .collect();
        assert_eq!(pids.len(), 2);
        for pid in pids {
            // SAFETY: signal 0 only checks whether the process exists.
            let alive = unsafe { libc::kill(pid, 0) } == 0;
            assert!(!alive, "process {pid} survived the timeout");
        }
        return;
    }
    panic!("the fake codex wrote no pids before a 15 s timeout");
}

#[test]
fn a_missing_codex_binary_is_an_error_with_install_help() {
    let mut sandbox = Sandbox::new(json!({}));
    sandbox.env[0].1 = sandbox.root.join("no-bin").display().to_string();

    let error = adapter()
        .invoke(&sandbox.request("player", &player()), &CancelToken::new())
        .unwrap_err();

    assert!(matches!(error, AgentError::Start { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        "role `player`: `codex` not found on PATH"
    );
    assert!(
        error.help().contains("npm install -g @openai/codex"),
        "{}",
        error.help()
    );
}

#[test]
fn a_rate_limited_invocation_is_retried_and_its_logs_kept() {
    let limited = "exceeded retry limit, last status: 429 Too Many Requests";
    let sandbox = Sandbox::new(json!({"player": [
        {"error": limited, "turn_failed": limited},
        {"text": "done after the retry"},
    ]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "done after the retry");
    assert_eq!(sandbox.invocations().len(), 2);
    let logs = sandbox.run_dir.join("logs");
    assert!(logs.join("turn_1_player.rate-limited-1.log").is_file());
    assert!(logs.join("turn_1_player.rate-limited-1.jsonl").is_file());
    assert!(fs::read_to_string(&sandbox.transcript)
        .unwrap()
        .contains("done after the retry"));
}

#[test]
fn retries_are_bounded() {
    let limited = "Rate limit reached for gpt-5-codex; 429";
    let sandbox = Sandbox::new(json!({"player": [{"turn_failed": limited}]}));

    let outcome = sandbox.invoke("player", &player());

    let (class, message) = failure(&outcome);
    assert_eq!(class, AgentErrorClass::RateLimited);
    assert!(message.contains("autobuild resume"), "{message}");
    assert_eq!(
        sandbox.invocations().len(),
        3,
        "the first try and two retries"
    );
}

#[test]
fn a_spent_quota_is_not_retried() {
    let sandbox = Sandbox::new(json!({"player": [{
        "turn_failed": "You've hit your usage limit. Try again in 3 days.",
    }]}));

    // A plan's usage limit is out of credit for the run, not a rate limit to wait out.
    assert_eq!(
        failure(&sandbox.invoke("player", &player())).0,
        AgentErrorClass::OutOfCredit
    );
    assert_eq!(sandbox.invocations().len(), 1);
}

#[test]
fn a_server_error_after_the_model_metadata_notice_is_retried() {
    let demand = "We're currently experiencing high demand, which may cause temporary errors.";
    let sandbox = Sandbox::new(json!({"player": [
        {
            "notice": "Model metadata for `gpt-5-codex` not found. Defaulting to fallback \
                       metadata; this can degrade performance and cause issues.",
            "error": demand,
            "turn_failed": demand,
        },
        {"text": "done after the retry"},
    ]}));

    let outcome = sandbox.invoke("player", &player());

    assert_eq!(
        outcome.status,
        AgentStatus::Succeeded,
        "{:?}",
        outcome.status
    );
    assert_eq!(outcome.final_message, "done after the retry");
    assert_eq!(sandbox.invocations().len(), 2);
}

#[test]
fn a_persistent_server_error_is_an_api_error_not_an_unknown_model() {
    let demand = "We're currently experiencing high demand, which may cause temporary errors.";
    let sandbox = Sandbox::new(json!({"player": [{
        "notice": "Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata.",
        "turn_failed": demand,
    }]}));

    let (class, message) = failure(&sandbox.invoke("player", &player()));

    assert_eq!(class, AgentErrorClass::ApiError, "{message}");
    assert!(message.contains("high demand"), "{message}");
    assert_eq!(
        sandbox.invocations().len(),
        3,
        "the first try and two retries"
    );
}

#[test]
fn a_missing_login_is_reported_with_the_fix() {
    let sandbox = Sandbox::new(json!({"player": [{
        "stderr": "Error: Not logged in. Run `codex login` or set CODEX_API_KEY.",
        "omit_turn_completed": true,
        "text": "",
        "exit": 1,
    }]}));

    let (class, message) = failure(&sandbox.invoke("player", &player()));

    assert_eq!(class, AgentErrorClass::AuthMissing);
    assert!(message.contains("exited with code 1"), "{message}");
    assert!(message.contains("fix: sign codex in"), "{message}");
}

#[test]
fn an_unknown_model_is_reported_with_the_fix() {
    let sandbox = Sandbox::new(json!({"coach": [{
        "turn_failed": "{\"detail\":\"The 'sonnet' model is not supported when using Codex with a ChatGPT account.\"}",
    }]}));
    let mut role = coach();
    role.model = Some("sonnet".to_string());

    let (class, message) = failure(&sandbox.invoke("coach", &role));

    assert_eq!(class, AgentErrorClass::ModelNotFound);
    assert!(message.contains("[roles.coach]"), "{message}");
}

#[test]
fn secrets_never_reach_a_file_in_the_run_directory() {
    let mut sandbox = Sandbox::new(json!({
        "player": [{"leak_env": ["OPENAI_API_KEY"], "stderr": "debug"}],
        "coach": [{"leak_env": ["OPENAI_API_KEY"], "text": "no verdict here"}],
    }));
    sandbox.set("OPENAI_API_KEY", SECRET);

    let player_outcome = sandbox.invoke("player", &player());
    let coach_outcome = sandbox.invoke("coach", &coach());

    assert!(player_outcome.final_message.contains("[REDACTED]"));
    assert!(!coach_outcome.final_message.contains(SECRET));
    let recorded = sandbox.invocations();
    assert_eq!(
        recorded[0]["env"]["OPENAI_API_KEY"], SECRET,
        "the agent does get the key"
    );
    let mut checked = 0;
    for file in files_below(&sandbox.run_dir) {
        let text = String::from_utf8_lossy(&fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains(SECRET), "{} has the key", file.display());
        checked += 1;
    }
    assert!(checked >= 5, "only {checked} files written");
}
