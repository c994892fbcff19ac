//! The `command` adapter with scripted agents from tests/fixtures/agents: the AUTOBUILD_*
//! contract, stdin and prompt file, the project env, failures and timeouts.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use autobuild::agents::{adapter_for, AgentError, AgentErrorClass, AgentRequest, AgentStatus};
use autobuild::process::CancelToken;
use autobuild::workflow::model::{AgentKind, Role};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents")
        .join(name)
        .display()
        .to_string()
}

fn role(config: serde_json::Value) -> Role {
    let mut base = serde_json::json!({"agent": "command", "prompt": "player.md"});
    base.as_object_mut()
        .unwrap()
        .extend(config.as_object().unwrap().clone());
    serde_json::from_value(base).unwrap()
}

struct Setup {
    _dir: tempfile::TempDir,
    worktree: PathBuf,
    run_dir: PathBuf,
    prompt_file: PathBuf,
    transcript: PathBuf,
}

fn setup(prompt: &str) -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    let worktree = root.join("worktree");
    let run_dir = root.join("run");
    fs::create_dir_all(&worktree).unwrap();
    fs::create_dir_all(run_dir.join("prompts")).unwrap();
    let prompt_file = run_dir.join("prompts/player_turn_2.md");
    fs::write(&prompt_file, prompt).unwrap();
    Setup {
        transcript: run_dir.join("logs/player_turn_2.log"),
        _dir: dir,
        worktree,
        run_dir,
        prompt_file,
    }
}

fn request<'a>(
    setup: &'a Setup,
    role: &'a Role,
    prompt: &'a str,
    env: &'a [(String, String)],
) -> AgentRequest<'a> {
    AgentRequest {
        role_name: "player",
        role,
        prompt,
        worktree: &setup.worktree,
        env,
        run_dir: &setup.run_dir,
        prompt_file: &setup.prompt_file,
        transcript_path: &setup.transcript,
        task_id: "TASK-007",
        turn: 2,
        wants_verdict: false,
        verdict_schema: "{}",
        pricing: None,
        sandbox: None,
    }
}

#[test]
fn passes_every_autobuild_variable_the_prompt_and_the_project_env() {
    let prompt = "Implement greeting()";
    let setup = setup(prompt);
    let role = role(serde_json::json!({
        "command": ["sh", fixture("echo_env.sh")],
        "model": "scripted-1",
    }));
    let env = vec![("PROJECT_VAR".to_string(), "from-config".to_string())];
    let adapter = adapter_for(AgentKind::Command).unwrap();
    let req = request(&setup, &role, prompt, &env);

    assert_eq!(
        adapter.command_line(&req),
        vec!["sh".to_string(), fixture("echo_env.sh")]
    );
    let outcome = adapter.invoke(&req, &CancelToken::new()).unwrap();

    assert_eq!(outcome.status, AgentStatus::Succeeded);
    assert_eq!(outcome.final_message, "final message from player\n");
    let seen = fs::read_to_string(setup.worktree.join("agent_seen.txt")).unwrap();
    let expected = format!(
        "role=player\nturn=2\ntask=TASK-007\nworktree={wt}\nrun_dir={run}\nmodel=scripted-1\n\
         project_var=from-config\npwd={wt}\nprompt_file={prompt}\nstdin={prompt}\n",
        wt = setup.worktree.display(),
        run = setup.run_dir.display(),
    );
    assert_eq!(seen, expected);
    let transcript = fs::read_to_string(&setup.transcript).unwrap();
    assert!(transcript.contains("final message from player"));
}

#[test]
fn without_a_model_no_model_variable_is_set() {
    let setup = setup("p");
    let role = role(serde_json::json!({"command": ["sh", fixture("echo_env.sh")]}));
    let adapter = adapter_for(AgentKind::Command).unwrap();
    adapter
        .invoke(&request(&setup, &role, "p", &[]), &CancelToken::new())
        .unwrap();
    let seen = fs::read_to_string(setup.worktree.join("agent_seen.txt")).unwrap();
    assert!(seen.contains("model=unset\n"), "{seen}");
}

#[test]
fn a_failing_agent_is_a_failed_outcome_with_the_stderr_tail() {
    let setup = setup("p");
    let role = role(serde_json::json!({"command": ["sh", fixture("failing.sh")]}));
    let adapter = adapter_for(AgentKind::Command).unwrap();
    let outcome = adapter
        .invoke(&request(&setup, &role, "p", &[]), &CancelToken::new())
        .unwrap();
    match outcome.status {
        AgentStatus::Failed { class, message } => {
            assert_eq!(class, AgentErrorClass::NonZeroExit);
            assert!(message.starts_with("exited with code 3"), "{message}");
            assert!(
                message.ends_with("warming up\nerror: the model is overloaded"),
                "{message}"
            );
        }
        other => panic!("expected a failure, got {other:?}"),
    }
    assert_eq!(outcome.final_message, "starting work\n");
}

#[test]
fn a_hanging_agent_is_stopped_at_the_role_timeout() {
    let setup = setup("p");
    let role = role(serde_json::json!({
        "command": ["sh", fixture("hanging.sh")],
        "timeout": "1s",
    }));
    let adapter = adapter_for(AgentKind::Command).unwrap();
    let outcome = adapter
        .invoke(&request(&setup, &role, "p", &[]), &CancelToken::new())
        .unwrap();
    assert_eq!(outcome.status, AgentStatus::TimedOut);
    assert!(outcome.duration >= Duration::from_secs(1));
    assert!(
        outcome.duration < Duration::from_secs(10),
        "{:?}",
        outcome.duration
    );
    let pid: i32 = fs::read_to_string(setup.run_dir.join("hanging.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(
        unsafe { libc::kill(-pid, 0) },
        0,
        "the agent's group is gone"
    );
}

#[test]
fn the_program_is_found_on_the_project_path_or_relative_to_the_worktree() {
    let setup = setup("p");
    let bin = setup.worktree.join("tools");
    fs::create_dir_all(&bin).unwrap();
    let agent = bin.join("my-agent");
    fs::write(&agent, "#!/bin/sh\necho on path\n").unwrap();
    fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let adapter = adapter_for(AgentKind::Command).unwrap();

    let on_path = role(serde_json::json!({"command": ["my-agent"]}));
    let env = vec![(
        "PATH".to_string(),
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    )];
    let outcome = adapter
        .invoke(&request(&setup, &on_path, "p", &env), &CancelToken::new())
        .unwrap();
    assert_eq!(outcome.final_message, "on path\n");

    let relative = role(serde_json::json!({"command": ["tools/my-agent"]}));
    let outcome = adapter
        .invoke(&request(&setup, &relative, "p", &[]), &CancelToken::new())
        .unwrap();
    assert_eq!(outcome.final_message, "on path\n");
}

#[test]
fn a_missing_program_cannot_start_and_says_how_to_fix_it() {
    let setup = setup("p");
    let role = role(serde_json::json!({"command": ["no-such-agent-xyz", "--flag"]}));
    let adapter = adapter_for(AgentKind::Command).unwrap();
    let error = adapter
        .invoke(&request(&setup, &role, "p", &[]), &CancelToken::new())
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "role `player`: `no-such-agent-xyz` not found on PATH"
    );
    assert!(error.help().contains("[env]"));
    assert!(!setup.transcript.exists());
}

#[test]
fn a_role_without_a_command_cannot_start() {
    let setup = setup("p");
    for config in [serde_json::json!({}), serde_json::json!({"command": []})] {
        let role = role(config);
        let adapter = adapter_for(AgentKind::Command).unwrap();
        let error = adapter
            .invoke(&request(&setup, &role, "p", &[]), &CancelToken::new())
            .unwrap_err();
        assert!(matches!(error, AgentError::NoCommand { .. }), "{error}");
    }
}
