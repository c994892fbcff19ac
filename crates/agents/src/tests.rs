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
fn every_kind_has_one_description_and_its_adapter_is_that_kind() {
    let kinds: Vec<AgentKind> = descriptions().map(|d| d.kind).collect();
    assert_eq!(kinds, AgentKind::iter().collect::<Vec<_>>());
    for description in descriptions() {
        let adapter = (description.adapter)();
        assert_eq!(adapter.kind(), description.kind);
        assert!(std::ptr::eq(adapter.description(), description));
    }
}

#[test]
fn a_cli_adapter_says_how_to_install_its_package_and_how_it_authenticates() {
    for description in descriptions() {
        let kind = description.kind;
        match (description.program, description.package) {
            (Some(_), Some(package)) => {
                let install = format!("npm install -g {}", package.name);
                assert!(description.install_hint.contains(&install), "{kind}");
                assert!(description.login.is_some(), "{kind}");
                assert!(description.credentials.is_some(), "{kind}");
                assert!(!description.secrets.is_empty(), "{kind}");
            }
            (None, None) => assert!(description.install_hint.is_empty(), "{kind}"),
            other => panic!("{kind}: a program without a package or back: {other:?}"),
        }
    }
    // The native adapters read their key from their first secret by default.
    for kind in [AgentKind::Openai, AgentKind::Anthropic] {
        assert!(!describe(kind).secrets.is_empty(), "{kind}");
    }
    let claude = describe(AgentKind::ClaudeCode).package.unwrap();
    assert_eq!(
        claude_code::status::INSTALL,
        format!("npm install -g {}", claude.name)
    );
}

/// `scripts/real-agents.versions` (read by scripts/e2e-real-agents.sh) is derived from the
/// descriptions; this keeps the checked-in file current.
#[test]
fn the_checked_in_versions_file_is_the_descriptions_pins() {
    let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
        .join("scripts/real-agents.versions");
    let checked_in = std::fs::read_to_string(&path).unwrap();
    let derived = description::versions_file();
    assert!(
        checked_in == derived,
        "{} is out of date; write this into it:\n{derived}",
        path.display()
    );
    assert!(
        derived.contains("claude  @anthropic-ai/claude-code  "),
        "{derived}"
    );
    assert!(
        derived.contains("\ncodex   @openai/codex              "),
        "{derived}"
    );
}

#[test]
fn the_agent_flag_help_names_every_adapter() {
    assert_eq!(
        description::agent_flag_help(),
        "Adapter for every role (claude-code, codex, command, openai, anthropic)"
    );
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
