//! A worktree and run directory with the fake `claude` of tests/fixtures/fake-claude on the
//! PATH, for the claude-code adapter tests.

#![allow(dead_code)] // each test binary uses a different subset

use std::fs;
use std::path::{Path, PathBuf};

use autobuild::agents::claude_code::ClaudeCodeAdapter;
use autobuild::agents::{Adapter, AgentErrorClass, AgentOutcome, AgentRequest, AgentStatus};
use autobuild::process::CancelToken;
use autobuild::workflow::model::Role;
use serde_json::{json, Value};

pub const PROMPT: &str = "Implement greeting()";
pub const SCHEMA: &str = r#"{"type": "object", "required": ["decision"]}"#;
/// The file-writing tools of a current Claude Code.
pub const WRITE_TOOLS: [&str; 3] = ["Write", "Edit", "NotebookEdit"];

pub fn fake_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-claude")
}

pub fn player() -> Role {
    serde_json::from_value(json!({
        "agent": "claude-code", "model": "sonnet", "prompt": "player.md",
        "tools": ["read", "write", "edit", "bash", "grep", "glob"], "access": "write",
        "max_agent_turns": 100, "timeout": "30s",
    }))
    .unwrap()
}

pub fn coach() -> Role {
    serde_json::from_value(json!({
        "agent": "claude-code", "model": "opus", "prompt": "coach.md",
        "tools": ["read", "grep", "glob", "bash"], "access": "read-only", "output": "verdict",
        "max_agent_turns": 40, "timeout": "30s",
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
    pub env: Vec<(String, String)>,
    /// The verdict schema a verdict role is given.
    pub schema: String,
}

impl Sandbox {
    pub fn new(scenario: Value) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        let worktree = root.join("worktree");
        let run_dir = root.join("run");
        fs::create_dir_all(&worktree).unwrap();
        fs::create_dir_all(run_dir.join("prompts")).unwrap();
        let script = root.join("scenario.json");
        fs::write(&script, scenario.to_string()).unwrap();
        let path = format!(
            "{}:{}",
            fake_dir().display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let env = vec![
            ("PATH".to_string(), path),
            (
                "FAKE_CLAUDE_SCRIPT".to_string(),
                script.display().to_string(),
            ),
            (
                "FAKE_CLAUDE_RECORD".to_string(),
                root.join("record.jsonl").display().to_string(),
            ),
        ];
        Sandbox {
            _dir: dir,
            prompt_file: run_dir.join("prompts/turn_1.md"),
            transcript: run_dir.join("logs/turn_1_player.log"),
            root,
            worktree,
            run_dir,
            env,
            schema: SCHEMA.to_string(),
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
            transcript_path: &self.transcript,
            task_id: "TASK-1",
            turn: 1,
            wants_verdict: role.output.is_some(),
            verdict_schema: &self.schema,
            pricing: None,
            sandbox: None,
        }
    }

    pub fn invoke_with(
        &self,
        adapter: &ClaudeCodeAdapter,
        role_name: &str,
        role: &Role,
    ) -> AgentOutcome {
        adapter
            .invoke(&self.request(role_name, role), &CancelToken::new())
            .unwrap()
    }

    pub fn invoke(&self, role_name: &str, role: &Role) -> AgentOutcome {
        self.invoke_with(&ClaudeCodeAdapter::new(), role_name, role)
    }

    /// What the fake recorded, one entry per invocation.
    pub fn records(&self) -> Vec<Value> {
        fs::read_to_string(self.root.join("record.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect()
    }
}

pub fn argv(record: &Value) -> Vec<String> {
    record["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect()
}

pub fn flag<'a>(argv: &'a [String], name: &str) -> Option<&'a str> {
    let at = argv.iter().position(|a| a == name)?;
    argv.get(at + 1).map(String::as_str)
}

pub fn failure(outcome: &AgentOutcome) -> (AgentErrorClass, String) {
    match &outcome.status {
        AgentStatus::Failed { class, message } => (*class, message.clone()),
        other => panic!("expected a failure, got {other:?}"),
    }
}
