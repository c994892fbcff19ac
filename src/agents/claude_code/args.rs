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
//! (anything not pre-approved is denied instead of prompting) and never gets `Write`, `Edit`,
//! `MultiEdit` or `NotebookEdit`, even if its role lists them. `bypassPermissions` is never
//! used: it approves every tool that reaches the mode, which makes the allowlist advisory.

use crate::workflow::model::{Access, Role, Tool};

/// The Claude Code executable.
pub const PROGRAM: &str = "claude";

/// Claude Code's built-in tools that modify files.
pub const WRITE_TOOLS: &[&str] = &["Write", "Edit", "MultiEdit", "NotebookEdit"];

/// Claude Code's names for a tool of the vocabulary.
pub fn native_tools(tool: Tool) -> &'static [&'static str] {
    match tool {
        Tool::Read => &["Read"],
        Tool::Write => &["Write"],
        Tool::Edit => &["Edit", "MultiEdit"],
        Tool::Bash => &["Bash"],
        Tool::Grep => &["Grep"],
        Tool::Glob => &["Glob", "LS"],
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
    let candidates = Tool::ALL.iter().flat_map(|&tool| native_tools(tool));
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
        flag("--json-schema", without_dialect(&compact_json(schema)));
    }
    args
}

/// The schema on one line (it is an argument), keys in their written order; text that is not
/// JSON is passed unchanged so Claude Code reports the problem itself.
fn compact_json(text: &str) -> String {
    if serde_json::from_str::<serde_json::Value>(text).is_err() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    for c in text.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if c == '"' {
            in_string = true;
            out.push(c);
        } else if !c.is_whitespace() {
            out.push(c);
        }
    }
    out
}

/// The compact schema without its top-level `$schema` member: Claude Code (2.1.197) silently
/// ignores a `--json-schema` that names its dialect — the session gets no `StructuredOutput`
/// tool, so no verdict could ever arrive as structured output. Anything that is not a JSON
/// object is returned unchanged.
fn without_dialect(compact: &str) -> String {
    if !matches!(
        serde_json::from_str(compact),
        Ok(serde_json::Value::Object(_))
    ) {
        return compact.to_string();
    }
    // The top-level members, as [start, end) byte ranges between the braces and commas.
    let mut members = Vec::new();
    let (mut depth, mut in_string, mut escaped, mut start) = (0usize, false, false, 0);
    for (i, byte) in compact.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth == 1 {
                    start = i + 1;
                }
            }
            b'}' | b']' => {
                if depth == 1 && i > start {
                    members.push(start..i);
                }
                depth -= 1;
            }
            b',' if depth == 1 => {
                members.push(start..i);
                start = i + 1;
            }
            _ => {}
        }
    }
    let kept: Vec<&str> = members
        .into_iter()
        .map(|range| &compact[range])
        .filter(|member| !member.starts_with("\"$schema\":"))
        .collect();
    format!("{{{}}}", kept.join(","))
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
        let tools = "Read,Write,Edit,MultiEdit,Bash,Grep,Glob,LS";
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
            Some("Read,Write,Edit,MultiEdit,Bash,Grep,Glob,LS,WebFetch,WebSearch")
        );
    }

    #[test]
    fn the_schema_is_compacted_in_its_written_order() {
        let schema = "{\n  \"type\": \"object\",\n  \"title\": \"a \\\" b  c\"\n}";
        assert_eq!(
            compact_json(schema),
            r#"{"type":"object","title":"a \" b  c"}"#
        );
        assert_eq!(compact_json("not json"), "not json");
    }

    #[test]
    fn the_schema_dialect_is_left_out() {
        let schema = r#"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"$schema":{"type":"string"}}}"#;
        assert_eq!(
            without_dialect(schema),
            r#"{"type":"object","properties":{"$schema":{"type":"string"}}}"#
        );
        assert_eq!(
            without_dialect(r#"{"type":"object"}"#),
            r#"{"type":"object"}"#
        );
        assert_eq!(without_dialect("{}"), "{}");
        assert_eq!(without_dialect("not json"), "not json");
        let verdict = include_str!("../../../schemas/verdict.schema.json");
        let args = arguments(&role(Access::ReadOnly, &[]), Some(verdict));
        let passed: serde_json::Value =
            serde_json::from_str(value_of(&args, "--json-schema").unwrap()).unwrap();
        let mut expected: serde_json::Value = serde_json::from_str(verdict).unwrap();
        expected.as_object_mut().unwrap().remove("$schema");
        assert_eq!(passed, expected);
    }

    #[test]
    fn web_maps_to_fetch_and_search() {
        let args = arguments(&role(Access::ReadOnly, &[Tool::Web]), None);
        assert_eq!(value_of(&args, "--tools"), Some("WebFetch,WebSearch"));
    }
}
