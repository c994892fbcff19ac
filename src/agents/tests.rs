//! Tests of the adapter-independent agent types: outcomes, how a process end becomes a status, and
//! the adapter registry.

use super::*;

#[test]
fn outcome_round_trips_through_json() {
    let outcome = AgentOutcome::new(
        AgentStatus::Failed {
            class: AgentErrorClass::NonZeroExit,
            message: "exited with code 2".into(),
        },
        "done".into(),
        Duration::from_millis(1500),
    );
    let json = serde_json::to_value(&outcome).unwrap();
    assert_eq!(json["duration_ms"], 1500);
    assert_eq!(json["status"]["status"], "failed");
    assert_eq!(json["status"]["class"], "non_zero_exit");
    let back: AgentOutcome = serde_json::from_value(json).unwrap();
    assert_eq!(back, outcome);
}

#[test]
fn process_end_maps_to_status_with_stderr_tail() {
    let stderr: String = (1..=30).map(|i| format!("err {i}\n")).collect();
    match AgentStatus::from_process_end(ProcessEnd::Exited(3), &stderr) {
        AgentStatus::Failed { class, message } => {
            assert_eq!(class, AgentErrorClass::NonZeroExit);
            assert!(message.starts_with("exited with code 3; stderr ends with:\nerr 11\n"));
            assert!(message.ends_with("err 30"));
        }
        other => panic!("unexpected {other:?}"),
    }
    assert_eq!(
        AgentStatus::from_process_end(ProcessEnd::Exited(0), "noise"),
        AgentStatus::Succeeded
    );
    let timed_out = AgentStatus::from_process_end(ProcessEnd::TimedOut, "");
    assert_eq!(timed_out, AgentStatus::TimedOut);
    assert_eq!(timed_out.name(), "timed_out");
    assert!(timed_out.message().contains("`timeout`"));
    assert!(AgentStatus::from_process_end(ProcessEnd::Cancelled, "").is_cancelled());
}

#[test]
fn adapter_for_returns_the_adapters_this_build_has() {
    let adapter = adapter_for(AgentKind::Command).expect("command adapter");
    assert_eq!(adapter.kind(), AgentKind::Command);
    assert_eq!(adapter.capabilities(), Capabilities::default());
    let claude = adapter_for(AgentKind::ClaudeCode).expect("claude-code adapter");
    assert!(claude.capabilities().enforces_read_only);
    assert!(adapter_for(AgentKind::Codex).is_some());
}

#[test]
fn a_failure_of_the_server_reaches_the_next_prompt_as_its_kind_only() {
    let failed = |class, message: &str| AgentStatus::Failed {
        class,
        message: message.to_string(),
    };
    let body = "http://127.0.0.1:8080/v1/chat/completions answered 500: Traceback … \
                /venv/lib/python3.11/site-packages/llama_cpp/server/app.py";
    for class in [
        AgentErrorClass::ApiError,
        AgentErrorClass::RateLimited,
        AgentErrorClass::AuthMissing,
        AgentErrorClass::OutOfCredit,
        AgentErrorClass::ModelNotFound,
    ] {
        let feedback = failed(class, body).feedback();
        assert!(!feedback.contains("app.py"), "{feedback}");
        assert!(feedback.contains(class.as_str()), "{feedback}");
        assert!(feedback.contains("Nothing in the work caused this"));
    }
    // The agent's own failures are told as they are.
    for class in [
        AgentErrorClass::EmptyAnswer,
        AgentErrorClass::MaxTurns,
        AgentErrorClass::NonZeroExit,
        AgentErrorClass::Other,
    ] {
        assert_eq!(failed(class, "what it did").feedback(), "what it did");
    }
    assert_eq!(
        AgentStatus::TimedOut.feedback(),
        AgentStatus::TimedOut.message()
    );
}
