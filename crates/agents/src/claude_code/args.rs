//! The `claude` command line for one role: what the role may use, enforced by Claude Code.
//!
//! Three flags bound the tools, because each does a different job in Claude Code:
//! `--tools` is the complete set of built-in tools the model sees, `--allowedTools` pre-approves
//! them (a print-mode session cannot ask anyone), and `--disallowedTools` adds deny rules, which
//! win over every allow rule and every permission mode — so a tool a user's
//! `settings.json` allows is still unavailable when the role does not list it.
//!
//! Permission modes: a writing role runs with `acceptEdits` (file edits approved without a
//! prompt; everything else only through the allowlist). A read-only role runs with `dontAsk`
//! (anything not pre-approved is denied instead of prompting) and never gets `Write`, `Edit`
//! or `NotebookEdit`, even if its role lists them. `bypassPermissions` is never used: it
//! approves every tool that reaches the mode, which makes the allowlist advisory.
//!
//! Only tool names the current Claude Code has are passed: it merged `MultiEdit` into `Edit`
//! and dropped `LS` (`Glob` and `Bash` cover it), and a rule naming a tool it does not know
//! earns a "matches no known tool" warning on every invocation.
//!
//! The verdict schema goes to `--json-schema` without its `$schema` key (module
//! [`crate::schema`]): with a meta-schema its draft-07 validator does not know, Claude
//! Code silently starts without the `StructuredOutput` tool that enforces the schema.

use model::workflow::model::{Access, Role, Tool};
use strum::IntoEnumIterator;

/// The Claude Code executable.
pub const PROGRAM: &str = "claude";

/// Claude Code's built-in tools that modify files.
pub const WRITE_TOOLS: &[&str] = &["Write", "Edit", "NotebookEdit"];

/// Every file-writing tool some Claude Code version has had: a read-only session whose `init`
/// event lists one of them was given more than it should (older versions still have
/// `MultiEdit`).
pub const ANY_WRITE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// The tool Claude Code adds to a session whose `--json-schema` it accepted.
pub const STRUCTURED_OUTPUT_TOOL: &str = "StructuredOutput";

/// Claude Code's names for a tool of the vocabulary.
pub fn native_tools(tool: Tool) -> &'static [&'static str] {
    match tool {
        Tool::Read => &["Read"],
        Tool::Write => &["Write"],
        Tool::Edit => &["Edit"],
        Tool::Bash => &["Bash"],
        Tool::Grep => &["Grep"],
        Tool::Glob => &["Glob"],
        Tool::Web => &["WebFetch", "WebSearch"],
    }
}

/// The native tools a role may use: its vocabulary tools mapped, without write tools for a
/// read-only role.
pub fn allowed_tools(role: &Role) -> Vec<&'static str> {
    let mut allowed: Vec<&'static str> = Vec::new();
    for &tool in &role.tools {
        for &name in native_tools(tool) {
            let forbidden = role.access == Access::ReadOnly && WRITE_TOOLS.contains(&name);
            if !forbidden && !allowed.contains(&name) {
                allowed.push(name);
            }
        }
    }
    allowed
}

/// Every native tool of the vocabulary the role may not use, plus all write tools for a
/// read-only role.
pub fn denied_tools(role: &Role) -> Vec<&'static str> {
    let allowed = allowed_tools(role);
    let mut denied: Vec<&'static str> = Vec::new();
    let candidates = Tool::iter().flat_map(native_tools);
    let write_tools = WRITE_TOOLS
        .iter()
        .filter(|_| role.access == Access::ReadOnly);
    for &name in candidates.chain(write_tools) {
        if !allowed.contains(&name) && !denied.contains(&name) {
            denied.push(name);
        }
    }
    denied
}

/// The permission mode for a role's access.
pub fn permission_mode(access: Access) -> &'static str {
    match access {
        Access::Write => "acceptEdits",
        Access::ReadOnly => "dontAsk",
    }
}

/// The arguments after `claude` for one invocation; the prompt goes to stdin. `verdict_schema`
/// is the JSON schema the final answer must follow, when the role returns a verdict.
pub fn arguments(role: &Role, verdict_schema: Option<&str>) -> Vec<String> {
    let mut args: Vec<String> = ["-p", "--output-format", "stream-json", "--verbose"]
        .into_iter()
        .map(String::from)
        .collect();
    let mut flag = |name: &str, value: String| {
        args.push(name.to_string());
        args.push(value);
    };
    if let Some(model) = &role.model {
        flag("--model", model.clone());
    }
    if let Some(turns) = role.max_agent_turns {
        flag("--max-turns", turns.to_string());
    }
    if let Some(system_prompt) = &role.system_prompt {
        flag("--append-system-prompt", system_prompt.clone());
    }
    let allowed = allowed_tools(role).join(",");
    flag("--tools", allowed.clone());
    if !allowed.is_empty() {
        flag("--allowedTools", allowed);
    }
    let denied = denied_tools(role);
    if !denied.is_empty() {
        flag("--disallowedTools", denied.join(","));
    }
    flag(
        "--permission-mode",
        permission_mode(role.access).to_string(),
    );
    if let Some(schema) = verdict_schema {
        // Text that is not JSON is passed unchanged so Claude Code reports the problem itself.
        let value = crate::schema::for_cli(schema).unwrap_or_else(|_| schema.to_string());
        flag("--json-schema", value);
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn role(access: Access, tools: &[Tool]) -> Role {
        let mut role: Role =
            serde_json::from_value(serde_json::json!({"agent": "claude-code", "prompt": "p.md"}))
                .unwrap();
        role.access = access;
        role.tools = tools.to_vec();
        role
    }

    fn value_of<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
        let at = args.iter().position(|a| a == flag)?;
        args.get(at + 1).map(String::as_str)
    }

    #[test]
    fn a_writing_role_gets_its_tools_approved_and_edits_accepted() {
        let mut player = role(
            Access::Write,
            &[
                Tool::Read,
                Tool::Write,
                Tool::Edit,
                Tool::Bash,
                Tool::Grep,
                Tool::Glob,
            ],
        );
        player.model = Some("sonnet".into());
        player.max_agent_turns = Some(100);
        player.system_prompt = Some("Be brief.".into());
        let args = arguments(&player, None);
        assert_eq!(
            args[..4],
            ["-p", "--output-format", "stream-json", "--verbose"]
        );
        assert_eq!(value_of(&args, "--model"), Some("sonnet"));
        assert_eq!(value_of(&args, "--max-turns"), Some("100"));
        assert_eq!(value_of(&args, "--append-system-prompt"), Some("Be brief."));
        let tools = "Read,Write,Edit,Bash,Grep,Glob";
        assert_eq!(value_of(&args, "--tools"), Some(tools));
        assert_eq!(value_of(&args, "--allowedTools"), Some(tools));
        assert_eq!(
            value_of(&args, "--disallowedTools"),
            Some("WebFetch,WebSearch")
        );
        assert_eq!(value_of(&args, "--permission-mode"), Some("acceptEdits"));
        assert!(!args.contains(&"--json-schema".to_string()));
    }

    #[test]
    fn a_read_only_role_never_gets_a_write_tool() {
        let coach = role(
            Access::ReadOnly,
            &[Tool::Read, Tool::Write, Tool::Edit, Tool::Bash, Tool::Grep],
        );
        let args = arguments(&coach, Some("{\n  \"type\": \"object\"\n}"));
        assert_eq!(value_of(&args, "--tools"), Some("Read,Bash,Grep"));
        assert_eq!(value_of(&args, "--allowedTools"), Some("Read,Bash,Grep"));
        let denied = value_of(&args, "--disallowedTools").unwrap();
        for tool in WRITE_TOOLS {
            assert!(denied.split(',').any(|d| d == *tool), "{denied}");
        }
        assert_eq!(value_of(&args, "--permission-mode"), Some("dontAsk"));
        assert_eq!(
            value_of(&args, "--json-schema"),
            Some(r#"{"type":"object"}"#)
        );
        assert!(!args.contains(&"--model".to_string()));
        assert!(!args.contains(&"--max-turns".to_string()));
    }

    #[test]
    fn a_role_without_tools_gets_none() {
        let args = arguments(&role(Access::Write, &[]), None);
        assert_eq!(value_of(&args, "--tools"), Some(""));
        assert!(!args.contains(&"--allowedTools".to_string()));
        assert_eq!(
            value_of(&args, "--disallowedTools"),
            Some("Read,Write,Edit,Bash,Grep,Glob,WebFetch,WebSearch")
        );
    }

    #[test]
    fn the_schema_loses_its_meta_schema_and_keeps_its_order() {
        let schema = "{\n  \"$schema\": \"https://json-schema.org/draft/2020-12/schema\",\n  \"type\": \"object\",\n  \"title\": \"a \\\" b  c\"\n}";
        let args = arguments(&role(Access::ReadOnly, &[]), Some(schema));
        assert_eq!(
            value_of(&args, "--json-schema"),
            Some(r#"{"type":"object","title":"a \" b  c"}"#)
        );
        let args = arguments(&role(Access::ReadOnly, &[]), Some("not json"));
        assert_eq!(value_of(&args, "--json-schema"), Some("not json"));
    }

    #[test]
    fn only_tool_names_current_claude_code_knows_are_passed() {
        let every_tool: Vec<Tool> = Tool::iter().collect();
        for access in [Access::Write, Access::ReadOnly] {
            for tools in [every_tool.clone(), Vec::new()] {
                let args = arguments(&role(access, &tools), None);
                for arg in &args {
                    for name in arg.split(',') {
                        assert!(name != "MultiEdit" && name != "LS", "{args:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn web_maps_to_fetch_and_search() {
        let args = arguments(&role(Access::ReadOnly, &[Tool::Web]), None);
        assert_eq!(value_of(&args, "--tools"), Some("WebFetch,WebSearch"));
    }
}
