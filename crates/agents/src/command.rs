//! The `command` adapter: any program as an agent (docs/agents.md, "Agents").
//!
//! Runs the role's `command` argv in the worktree with the prompt on stdin and in the file
//! named by `AUTOBUILD_PROMPT_FILE`, plus `AUTOBUILD_ROLE`, `AUTOBUILD_TURN`,
//! `AUTOBUILD_TASK_ID`, `AUTOBUILD_WORKTREE`, `AUTOBUILD_RUN_DIR`, `AUTOBUILD_PROJECT` (the main
//! checkout, where scripts not yet committed are found; read-only in the sandbox) and
//! `AUTOBUILD_MODEL` when the role names a model, on top of the project environment. Its stdout is the final message;
//! exit 0 means success. It wraps other agent CLIs and drives scripted agents in tests and in
//! `demo`. It can enforce nothing — no tool allowlist, no read-only access — so read-only roles
//! on it rely on the engine's audit after every read-only step.

use std::path::Path;

use super::description::Description;
use super::{
    agent_process_spec, Adapter, AgentError, AgentOutcome, AgentRequest, AgentStatus, Capabilities,
};
use model::workflow::model::{AgentKind, Role};
use process::{self, CancelToken};

/// The `command` adapter's facts (module [`super::description`]): each role names its own
/// program, which has no package, secrets or login.
pub static DESCRIPTION: Description = Description {
    kind: AgentKind::Command,
    program: None,
    install_hint: "",
    package: None,
    secrets: &[],
    credentials: None,
    login: None,
    adapter: || Box::new(CommandAdapter),
};

pub struct CommandAdapter;

impl Adapter for CommandAdapter {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    fn program(&self, role: &Role) -> Option<String> {
        Some(
            role.command
                .as_ref()
                .and_then(|argv| argv.first())
                .cloned()
                .unwrap_or_default(),
        )
    }

    fn command_line(&self, req: &AgentRequest<'_>) -> Vec<String> {
        req.role.command.clone().unwrap_or_default()
    }

    fn invoke(
        &self,
        req: &AgentRequest<'_>,
        cancel: &CancelToken,
    ) -> Result<AgentOutcome, AgentError> {
        let (program, args) = req
            .role
            .command
            .as_deref()
            .and_then(|argv| argv.split_first())
            .ok_or_else(|| AgentError::NoCommand {
                role: req.role_name.to_string(),
            })?;
        let mut spec = agent_process_spec(program, args, req);
        spec.env.extend(autobuild_env(req));

        let outcome = process::run(&spec, cancel).map_err(|source| AgentError::Start {
            role: req.role_name.to_string(),
            help: format!(
                "check `command` of role `{}` (in the workflow or .autobuild/config.toml): a \
                 bare name is looked up on the PATH the agent gets (including [env] \
                 path_prepend), a name with a `/` relative to the worktree",
                req.role_name
            ),
            source,
        })?;
        if let Some(problem) = &outcome.transcript_error {
            tracing::warn!("agent transcript incomplete: {problem}");
        }
        let mut final_message = outcome.stdout;
        if outcome.stdout_truncated {
            final_message.push_str(&format!(
                "\n… (output truncated; the full text is in {})",
                req.transcript_path.display()
            ));
        }
        let status = AgentStatus::from_process_end(outcome.end, &outcome.stderr_tail);
        Ok(AgentOutcome::new(status, final_message, outcome.duration))
    }
}

/// Interpreters whose first argument, unless it is an option, is the script they run.
const INTERPRETERS: [&str; 11] = [
    "sh", "bash", "dash", "zsh", "ksh", "python", "python3", "node", "ruby", "perl", "php",
];

/// Why the script a `command` agent's interpreter runs cannot be found, when it cannot:
/// `["sh", "agents/player.sh"]` without `agents/player.sh` in the repository (`root`). The
/// interpreter itself exists, so without this check the mistake shows only when the agent
/// starts, after the run has created its branch and worktree. An option first (`sh -c …`)
/// means there is no script file to check.
pub fn missing_script(argv: &[String], root: &Path) -> Option<String> {
    let (program, args) = argv.split_first()?;
    let name = Path::new(program).file_name()?.to_str()?;
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    if !INTERPRETERS.contains(&name) && !INTERPRETERS.contains(&base) {
        return None;
    }
    let script = args.first()?;
    if script.starts_with('-') || root.join(script).exists() {
        return None;
    }
    Some(format!(
        "`{program} {script}`: `{script}` does not exist (a script path is relative to the repository root)"
    ))
}

/// The variables that tell a command agent what it is working on.
fn autobuild_env(req: &AgentRequest<'_>) -> Vec<(String, String)> {
    let mut env = vec![
        ("AUTOBUILD_ROLE", req.role_name.to_string()),
        ("AUTOBUILD_TURN", req.turn.to_string()),
        ("AUTOBUILD_TASK_ID", req.task_id.to_string()),
        ("AUTOBUILD_WORKTREE", req.worktree.display().to_string()),
        ("AUTOBUILD_RUN_DIR", req.run_dir.display().to_string()),
        (
            "AUTOBUILD_PROMPT_FILE",
            req.prompt_file.display().to_string(),
        ),
    ];
    if let Some(root) = model::project::Layout::root_of_run_dir(req.run_dir) {
        env.push(("AUTOBUILD_PROJECT", root.display().to_string()));
    }
    if let Some(model) = &req.role.model {
        env.push(("AUTOBUILD_MODEL", model.clone()));
    }
    env.into_iter()
        .map(|(name, value)| (name.to_string(), value))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn a_missing_script_of_an_interpreter_is_named() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("agents")).unwrap();
        std::fs::write(root.path().join("agents/player.sh"), "echo hi\n").unwrap();
        assert_eq!(
            missing_script(&argv(&["sh", "agents/player.sh"]), root.path()),
            None
        );
        let missing = missing_script(&argv(&["sh", "agents/playr.sh"]), root.path()).unwrap();
        assert!(
            missing.contains("`agents/playr.sh` does not exist"),
            "{missing}"
        );
        assert!(missing_script(&argv(&["/usr/bin/python3.12", "x.py"]), root.path()).is_some());
    }

    #[test]
    fn inline_commands_and_other_programs_are_not_scripts() {
        let root = tempfile::tempdir().unwrap();
        for words in [
            &["sh", "-c", "echo done"][..],
            &["my-agent", "missing.txt"],
            &["bash"],
            &[],
        ] {
            assert_eq!(missing_script(&argv(words), root.path()), None, "{words:?}");
        }
    }
}
