//! The tools a native agent is offered, and the gate every call passes before anything runs.
//!
//! A role's `tools` are the allowlist; a read-only role is never offered `write` or `edit`
//! (and a call to one is refused even when the model tries it anyway). A role with no `tools`
//! gets the whole vocabulary but `web`. `web` is never offered: there is no fetching tool in
//! this build, and a call to it is refused with that reason. A refused call, a call with
//! arguments that do not parse or do not fit the tool, and a tool that fails all come back to
//! the model as an error result, so it can correct itself; refusals are also kept as the
//! invocation's permission denials.

mod files;
mod paths;
mod search;
mod shell;

use base::Keyword;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use strum::IntoEnumIterator;

use super::conversation::{Call, ToolSpec};
use model::workflow::model::{Access, Role, Tool};
use process::CancelToken;
pub use shell::Shell;

/// The tools offered to `role`.
pub fn offered(role: &Role) -> Vec<Tool> {
    let listed: Vec<Tool> = if role.tools.is_empty() {
        Tool::iter().collect()
    } else {
        role.tools.clone()
    };
    listed
        .into_iter()
        .filter(|tool| *tool != Tool::Web)
        .filter(|tool| !(role.access == Access::ReadOnly && tool.writes()))
        .collect()
}

/// Why a tool did not do what it was asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// Not allowed (a path outside the worktree); nothing was touched.
    Refused(String),
    /// It went wrong (a missing file, an ambiguous edit); the model may try again.
    Failed(String),
}

impl From<String> for Problem {
    fn from(message: String) -> Problem {
        Problem::Failed(message)
    }
}

/// How a call went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Done {
    Ok(String),
    /// The tool ran and failed, or its arguments were wrong: the model may try again.
    Failed(String),
    /// The call was not allowed; nothing ran.
    Refused(String),
}

/// Runs `call` if `offered` allows it. `number` names the call's log files.
pub fn run(
    call: &Call,
    offered: &[Tool],
    shell: &Shell<'_>,
    number: usize,
    cancel: &CancelToken,
) -> Done {
    let Some(tool) = Tool::iter().find(|t| t.as_str() == call.name) else {
        return Done::Refused(format!(
            "there is no tool `{}`; the tools are: {}",
            call.name,
            names(offered)
        ));
    };
    if !offered.contains(&tool) {
        let why = if tool == Tool::Web {
            "the native adapter has no web tool".to_string()
        } else if tool.writes() && !offered.iter().any(|t| t.writes()) {
            "this role is read-only: it may not change files".to_string()
        } else {
            format!("this role's tools are: {}", names(offered))
        };
        return Done::Refused(format!("`{}` is not allowed: {why}", call.name));
    }
    let arguments = match &call.arguments {
        Ok(arguments) => arguments.clone(),
        Err(why) => return Done::Failed(format!("invalid arguments for `{}`: {why}", call.name)),
    };
    let worktree = shell.worktree;
    let result = match tool {
        Tool::Read => parse(tool, arguments).and_then(|a| files::read(worktree, a)),
        Tool::Write => parse(tool, arguments).and_then(|a| files::write(worktree, a)),
        Tool::Edit => parse(tool, arguments).and_then(|a| files::edit(worktree, a)),
        Tool::Grep => parse(tool, arguments).and_then(|a| search::grep(worktree, a)),
        Tool::Glob => parse(tool, arguments).and_then(|a| search::glob(worktree, a)),
        Tool::Bash => {
            return match parse(tool, arguments)
                .and_then(|a| shell::bash(shell, a, number, cancel).map_err(Problem::Failed))
            {
                Ok((output, false)) => Done::Ok(output),
                Ok((output, true)) => Done::Failed(output),
                Err(Problem::Failed(output) | Problem::Refused(output)) => Done::Failed(output),
            }
        }
        Tool::Web => Err(Problem::Refused(
            "the native adapter has no web tool".to_string(),
        )),
    };
    match result {
        Ok(text) => Done::Ok(text),
        Err(Problem::Failed(problem)) => Done::Failed(problem),
        Err(Problem::Refused(why)) => Done::Refused(why),
    }
}

fn parse<T: DeserializeOwned>(tool: Tool, arguments: Value) -> Result<T, Problem> {
    serde_json::from_value(arguments)
        .map_err(|e| Problem::Failed(format!("invalid arguments for `{tool}`: {e}")))
}

fn names(tools: &[Tool]) -> String {
    if tools.is_empty() {
        return "(none)".to_string();
    }
    tools
        .iter()
        .map(|t| t.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What the model is told about each offered tool.
pub fn specs(offered: &[Tool]) -> Vec<ToolSpec> {
    offered
        .iter()
        .filter_map(|tool| {
            let (description, parameters) = match tool {
                Tool::Read => (
                    "Read a text file of the repository; lines come numbered. Use offset and limit to page through long files.",
                    json!({"type": "object", "properties": {
                        "path": {"type": "string", "description": "relative to the repository root"},
                        "offset": {"type": "integer", "description": "first line, from 1"},
                        "limit": {"type": "integer", "description": "number of lines"},
                    }, "required": ["path"]}),
                ),
                Tool::Write => (
                    "Create or overwrite a file with the given content.",
                    json!({"type": "object", "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                    }, "required": ["path", "content"]}),
                ),
                Tool::Edit => (
                    "Replace an exact piece of text in a file. old_string must occur exactly once unless replace_all is true.",
                    json!({"type": "object", "properties": {
                        "path": {"type": "string"},
                        "old_string": {"type": "string"},
                        "new_string": {"type": "string"},
                        "replace_all": {"type": "boolean"},
                    }, "required": ["path", "old_string", "new_string"]}),
                ),
                Tool::Bash => (
                    "Run a bash command in the repository root (for builds and tests); output is cut in the middle when long.",
                    json!({"type": "object", "properties": {
                        "command": {"type": "string"},
                        "timeout_secs": {"type": "integer", "description": "default 120, at most 600"},
                    }, "required": ["command"]}),
                ),
                Tool::Grep => (
                    "Search file contents with a regular expression; git-ignored files are skipped. Prints path:line:text.",
                    json!({"type": "object", "properties": {
                        "pattern": {"type": "string"},
                        "path": {"type": "string", "description": "directory or file to search"},
                        "glob": {"type": "string", "description": "only files matching this glob, e.g. *.rs"},
                        "case_insensitive": {"type": "boolean"},
                    }, "required": ["pattern"]}),
                ),
                Tool::Glob => (
                    "List files whose path matches a glob such as src/**/*.rs; git-ignored files are skipped.",
                    json!({"type": "object", "properties": {
                        "pattern": {"type": "string"},
                    }, "required": ["pattern"]}),
                ),
                Tool::Web => return None,
            };
            Some(ToolSpec {
                name: tool.as_str().to_string(),
                description: description.to_string(),
                parameters,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(access: &str, tools: &[&str]) -> Role {
        serde_json::from_value(json!({
            "agent": "openai", "model": "m", "prompt": "coach.md", "access": access, "tools": tools,
        }))
        .unwrap()
    }

    fn call(name: &str, arguments: Result<Value, String>) -> Call {
        Call {
            id: "c".into(),
            name: name.into(),
            raw_arguments: String::new(),
            arguments,
        }
    }

    #[test]
    fn a_read_only_role_is_never_offered_or_allowed_a_writing_tool() {
        let coach = role("read-only", &["read", "grep", "bash", "web"]);
        assert_eq!(offered(&coach), vec![Tool::Read, Tool::Grep, Tool::Bash]);
        assert_eq!(
            offered(&role("write", &[])),
            vec![
                Tool::Read,
                Tool::Write,
                Tool::Edit,
                Tool::Bash,
                Tool::Grep,
                Tool::Glob
            ]
        );
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        let shell = Shell {
            worktree: &wt,
            env: &[],
            run_dir: &wt,
            log_dir: wt.join("logs"),
            sandbox: None,
            left: std::time::Duration::from_secs(10),
            idle: None,
        };
        let tools = offered(&coach);
        let write = call("write", Ok(json!({"path": "a", "content": "x"})));
        match run(&write, &tools, &shell, 1, &CancelToken::new()) {
            Done::Refused(why) => assert!(why.contains("read-only"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert!(!wt.join("a").exists());
        assert!(matches!(
            run(
                &call("web", Ok(json!({}))),
                &tools,
                &shell,
                2,
                &CancelToken::new()
            ),
            Done::Refused(_)
        ));
        assert!(matches!(
            run(
                &call("rm", Ok(json!({}))),
                &tools,
                &shell,
                3,
                &CancelToken::new()
            ),
            Done::Refused(_)
        ));
        let bad = run(
            &call("read", Err("not JSON".into())),
            &tools,
            &shell,
            4,
            &CancelToken::new(),
        );
        assert_eq!(
            bad,
            Done::Failed("invalid arguments for `read`: not JSON".into())
        );
        let missing = run(
            &call("read", Ok(json!({"file": "a"}))),
            &tools,
            &shell,
            5,
            &CancelToken::new(),
        );
        assert!(matches!(missing, Done::Failed(why) if why.contains("missing field `path`")));
        assert_eq!(specs(&tools).len(), 3);
    }
}
