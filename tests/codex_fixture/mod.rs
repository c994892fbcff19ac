//! A temporary worktree and run directory with the fake `codex` of tests/fixtures/fake-codex
//! on the PATH, for the codex adapter tests.

#![allow(dead_code)] // each test binary uses a different subset

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use autobuild::agents::codex::CodexAdapter;
use autobuild::agents::{Adapter, AgentErrorClass, AgentOutcome, AgentRequest, AgentStatus};
use autobuild::process::CancelToken;
use autobuild::steps::verdict::VERDICT_SCHEMA;
use autobuild::workflow::model::Role;
use serde_json::{json, Value};

pub const PROMPT: &str = "Implement greeting() for AC-001";
pub const SECRET: &str = "sk-secret-0123456789abcdef";

pub fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-codex")
}

pub fn player() -> Role {
    serde_json::from_value(json!({
        "agent": "codex", "model": "gpt-5-codex", "prompt": "player.md",
        "tools": ["read", "write", "edit", "bash"], "access": "write", "timeout": "30s",
    }))
    .unwrap()
}

pub fn coach() -> Role {
    serde_json::from_value(json!({
        "agent": "codex", "model": "gpt-5-codex", "prompt": "coach.md",
        "tools": ["read", "grep", "bash"], "access": "read-only", "output": "verdict",
        "timeout": "30s",
    }))
    .unwrap()
}

/// A worktree and run directory, a scenario for the fake, and the environment that finds it.
pub struct Sandbox {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub worktree: PathBuf,
    pub run_dir: PathBuf,
    pub prompt_file: PathBuf,
    pub transcript: PathBuf,
    pub coach_transcript: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Sandbox {
    pub fn new(scenario: Value) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let worktree = root.join("worktree");
        let run_dir = root.join("run");
        fs::create_dir_all(&worktree).unwrap();
        fs::create_dir_all(run_dir.join("prompts")).unwrap();
        fs::write(root.join("scenario.json"), scenario.to_string()).unwrap();
        let path = format!(
            "{}:{}",
            fake_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let env = vec![
            ("PATH".to_string(), path),
            (
                "FAKE_CODEX_SCRIPT".to_string(),
                root.join("scenario.json").display().to_string(),
            ),
            (
                "FAKE_CODEX_RECORD".to_string(),
                root.join("record.jsonl").display().to_string(),
            ),
        ];
        Sandbox {
            _dir: dir,
            prompt_file: run_dir.join("prompts/turn_1_player.md"),
            transcript: run_dir.join("logs/turn_1_player.log"),
            coach_transcript: run_dir.join("logs/turn_1_coach.log"),
            root,
            worktree,
            run_dir,
            env,
        }
    }

    /// Replaces the fake's scenario.
    pub fn scenario(&self, scenario: Value) {
        fs::write(self.root.join("scenario.json"), scenario.to_string()).unwrap();
    }

    pub fn set(&mut self, name: &str, value: &str) {
        self.env.push((name.to_string(), value.to_string()));
    }

    pub fn request<'a>(&'a self, role_name: &'a str, role: &'a Role) -> AgentRequest<'a> {
        AgentRequest {
            role_name,
            role,
            prompt: PROMPT,
            worktree: &self.worktree,
            env: &self.env,
            run_dir: &self.run_dir,
            prompt_file: &self.prompt_file,
            transcript_path: match role_name {
                "coach" => &self.coach_transcript,
                _ => &self.transcript,
            },
            task_id: "TASK-1",
            turn: 1,
            wants_verdict: role.output.is_some(),
            verdict_schema: VERDICT_SCHEMA,
            pricing: None,
            sandbox: None,
        }
    }

    pub fn invoke(&self, role_name: &str, role: &Role) -> AgentOutcome {
        adapter()
            .invoke(&self.request(role_name, role), &CancelToken::new())
            .unwrap()
    }

    /// What the fake recorded, one entry per invocation.
    pub fn invocations(&self) -> Vec<Value> {
        fs::read_to_string(self.root.join("record.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

pub fn adapter() -> CodexAdapter {
    CodexAdapter::with_retry_delays(vec![Duration::from_millis(10), Duration::from_millis(10)])
}

pub fn argv(invocation: &Value) -> Vec<String> {
    invocation["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

pub fn flag_value(argv: &[String], flag: &str) -> Option<String> {
    argv.iter()
        .position(|a| a == flag)
        .map(|i| argv[i + 1].clone())
}

pub fn failure(outcome: &AgentOutcome) -> (AgentErrorClass, String) {
    match &outcome.status {
        AgentStatus::Failed { class, message } => (*class, message.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}

pub use crate::support::files_below;
