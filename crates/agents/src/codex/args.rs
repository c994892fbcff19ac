//! The `codex exec` command line for one invocation.
//!
//! ```text
//! codex exec --json --color never --skip-git-repo-check
//!     --sandbox read-only|workspace-write -C <worktree> -c approval_policy="never"
//!     [-c web_search="disabled"] [-m <model>] [-c developer_instructions=<system prompt>]
//!     [--output-schema <run dir>/codex/verdict.schema.json] -
//! ```
//!
//! - `--json` prints the event stream (JSONL) on stdout; `--color never` keeps stderr plain.
//! - The sandbox is what makes a read-only role read-only: codex runs the model's commands
//!   under bubblewrap + seccomp (Linux) or Seatbelt (macOS) with the worktree either read-only
//!   or writable. The runner still audits the worktree after every read-only step.
//! - `web_search="disabled"` for a role whose `tools` do not list `web`: the sandbox keeps the
//!   model's *commands* off the network, but codex also has a hosted `web_search` tool, on by
//!   default (`cached`), that the sandbox does not govern. A role with `web` keeps codex's
//!   setting.
//! - `codex exec` never asks for approval: it runs headless with the approval policy `never`
//!   (there is no `--ask-for-approval` flag on `exec`, and `--full-auto` is deprecated in
//!   favour of `--sandbox workspace-write`); `-c approval_policy="never"` states it
//!   explicitly so a user's codex config cannot make a run wait for a human.
//! - `--skip-git-repo-check`: the worktree is always a git worktree autobuild made; the check
//!   only adds a failure mode (e.g. an untrusted directory).
//! - `-` reads the prompt from stdin (a prompt argument would be visible in `ps` and bounded
//!   by the argument size limit).
//! - codex has no flag for extra system instructions; `developer_instructions` is the config
//!   key recent versions inject as a developer message (older versions ignore it).
//! - codex has no per-invocation bound on agent turns; the role's `timeout` bounds the run.

use std::path::Path;

use crate::AgentRequest;
use model::workflow::model::{Access, Tool};

/// The program the adapter runs.
pub const PROGRAM: &str = "codex";

/// The arguments after the program name. `schema` is the `--output-schema` file, for roles that
/// return a verdict.
pub fn exec_args(req: &AgentRequest<'_>, schema: Option<&Path>) -> Vec<String> {
    let sandbox = match req.role.access {
        Access::ReadOnly => "read-only",
        Access::Write => "workspace-write",
    };
    let mut args: Vec<String> = [
        "exec",
        "--json",
        "--color",
        "never",
        "--skip-git-repo-check",
        "--sandbox",
        sandbox,
        "-C",
    ]
    .map(String::from)
    .to_vec();
    args.push(req.worktree.display().to_string());
    args.extend(["-c".to_string(), "approval_policy=\"never\"".to_string()]);
    if !req.role.tools.contains(&Tool::Web) {
        args.extend(["-c".to_string(), "web_search=\"disabled\"".to_string()]);
    }
    if let Some(model) = &req.role.model {
        args.extend(["-m".to_string(), model.clone()]);
    }
    if let Some(instructions) = &req.role.system_prompt {
        let value = toml::Value::String(instructions.clone());
        args.extend(["-c".to_string(), format!("developer_instructions={value}")]);
    }
    if let Some(schema) = schema {
        args.extend(["--output-schema".to_string(), schema.display().to_string()]);
    }
    args.push("-".to_string());
    args
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use model::workflow::model::Role;

    fn role(json: serde_json::Value) -> Role {
        let mut base = serde_json::json!({"agent": "codex", "prompt": "x.md"});
        base.as_object_mut()
            .unwrap()
            .extend(json.as_object().unwrap().clone());
        serde_json::from_value(base).unwrap()
    }

    fn args_for(role: &Role, schema: Option<&Path>) -> Vec<String> {
        let worktree = PathBuf::from("/repo/.autobuild/worktrees/T-1");
        let run_dir = PathBuf::from("/repo/.autobuild/runs/T-1");
        let req = AgentRequest {
            role_name: "coach",
            role,
            prompt: "",
            worktree: &worktree,
            env: &[],
            run_dir: &run_dir,
            prompt_file: &run_dir,
            transcript_path: &run_dir,
            task_id: "T-1",
            turn: 1,
            wants_verdict: schema.is_some(),
            verdict_schema: "{}",
            pricing: None,
            sandbox: None,
        };
        exec_args(&req, schema)
    }

    #[test]
    fn a_read_only_verdict_role() {
        let role = role(serde_json::json!({"access": "read-only", "model": "gpt-5-codex"}));
        let schema = Path::new("/run/codex/verdict.schema.json");
        assert_eq!(
            args_for(&role, Some(schema)).join(" "),
            "exec --json --color never --skip-git-repo-check --sandbox read-only \
             -C /repo/.autobuild/worktrees/T-1 -c approval_policy=\"never\" \
             -c web_search=\"disabled\" -m gpt-5-codex \
             --output-schema /run/codex/verdict.schema.json -"
        );
    }

    #[test]
    fn a_writer_without_model_uses_codex_defaults() {
        let role = role(serde_json::json!({"access": "write"}));
        let args = args_for(&role, None);
        assert_eq!(
            args.join(" "),
            "exec --json --color never --skip-git-repo-check --sandbox workspace-write \
             -C /repo/.autobuild/worktrees/T-1 -c approval_policy=\"never\" \
             -c web_search=\"disabled\" -"
        );
    }

    #[test]
    fn web_search_stays_on_only_for_a_role_with_web() {
        let without = role(serde_json::json!({"tools": ["read", "bash"]}));
        let args = args_for(&without, None);
        let at = args.iter().position(|a| a == "web_search=\"disabled\"");
        assert!(at.is_some_and(|i| args[i - 1] == "-c"), "{args:?}");
        let with = role(serde_json::json!({"tools": ["read", "bash", "web"]}));
        let args = args_for(&with, None);
        assert!(
            !args.iter().any(|a| a.starts_with("web_search")),
            "{args:?}"
        );
    }

    #[test]
    fn the_system_prompt_is_a_quoted_toml_string() {
        let role = role(serde_json::json!({"system_prompt": "Be \"terse\".\nNo chatter."}));
        let args = args_for(&role, None);
        let value = args
            .iter()
            .find_map(|arg| arg.strip_prefix("developer_instructions="))
            .expect("developer_instructions override");
        let parsed: toml::Table = toml::from_str(&format!("v = {value}")).unwrap();
        assert_eq!(parsed["v"].as_str(), Some("Be \"terse\".\nNo chatter."));
    }
}
