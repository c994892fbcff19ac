//! How Claude Code authenticates: asked of `claude auth status` ([`login`]), or, when the CLI
//! cannot be asked, told from the variables and files that provide its credentials
//! ([`credentials`]; `~/.claude.json` is no evidence: any `claude` run creates it, logged in or
//! not).

use std::path::Path;

use serde_json::Value;

use crate::credentials::{login_file, Credentials, Lookup};
use crate::login::{probe, undecided, Login};
use process::ProcessEnd;

/// How to log Claude Code in.
pub const CLAUDE_FIX: &str = "log in with `claude auth login` (or /login inside `claude`), or \
     export ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)";

/// Whether the located CLI is logged in, asked of `claude auth status` with `env` on top of
/// autobuild's environment.
pub fn login(program: &Path, env: &[(String, String)]) -> Login {
    let ran = match probe(program, &["auth", "status"], env) {
        Ok(ran) => ran,
        Err(problem) => return Login::Unknown(format!("`claude auth status` {problem}")),
    };
    interpret_claude(ran.end, &ran.stdout, &ran.stderr_tail)
}

/// `claude auth status`: JSON with `loggedIn` (exit 1 when false). Without JSON only a clean
/// exit counts; anything else is an older CLI that cannot tell.
fn interpret_claude(end: ProcessEnd, stdout: &str, stderr: &str) -> Login {
    let status = serde_json::from_str::<Value>(stdout.trim()).ok();
    let logged_in = status
        .as_ref()
        .and_then(|s| s.get("loggedIn"))
        .and_then(Value::as_bool);
    let field = |key: &str| {
        status
            .as_ref()
            .and_then(|s| s.get(key))
            .and_then(Value::as_str)
    };
    match (logged_in, end) {
        (Some(true), _) => {
            let how = match (field("authMethod"), field("apiKeySource")) {
                (_, Some(source)) => format!("{source} is set"),
                (Some("claude.ai"), _) => match field("subscriptionType") {
                    Some(plan) => format!("logged in (Claude account, {plan} plan)"),
                    None => "logged in (Claude account)".to_string(),
                },
                (Some("third_party"), _) => format!(
                    "logged in (through {})",
                    field("apiProvider").unwrap_or("a cloud provider")
                ),
                (Some(method), _) => format!("logged in ({method})"),
                (None, _) => "logged in".to_string(),
            };
            Login::Yes(format!("{how}; `claude auth status` says logged in"))
        }
        (Some(false), _) => Login::No {
            detail: "not logged in (`claude auth status`)".to_string(),
            fix: CLAUDE_FIX.to_string(),
        },
        (None, ProcessEnd::Exited(0)) => {
            Login::Yes("logged in (`claude auth status` exited 0)".to_string())
        }
        (None, end) => undecided("`claude auth status`", end, stderr),
    }
}

/// Claude Code authenticates with an API key or token variable, a cloud provider, or a login.
pub fn credentials(var: Lookup<'_>, home: Option<&Path>) -> Credentials {
    for name in [
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "CLAUDE_CODE_OAUTH_TOKEN",
    ] {
        if var(name).is_some() {
            return Credentials::Present(format!("{name} is set"));
        }
    }
    for name in ["CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX"] {
        if var(name).is_some() {
            return Credentials::Present(format!("{name} is set (cloud provider credentials)"));
        }
    }
    let dir = ("CLAUDE_CONFIG_DIR", ".claude");
    if let Some(found) = login_file(var, home, dir, ".credentials.json") {
        return found;
    }
    Credentials::Absent(
        "export ANTHROPIC_API_KEY, or log in with `claude auth login` (or /login inside `claude`)"
            .to_string(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::login::test_vars as vars;

    #[test]
    fn claude_auth_status_is_read_from_its_json() {
        let key =
            r#"{"loggedIn": true, "authMethod": "api_key", "apiKeySource": "ANTHROPIC_API_KEY"}"#;
        assert_eq!(
            interpret_claude(ProcessEnd::Exited(0), key, ""),
            Login::Yes("ANTHROPIC_API_KEY is set; `claude auth status` says logged in".into())
        );
        let account = r#"{"loggedIn": true, "authMethod": "claude.ai", "apiProvider": "firstParty",
            "email": "someone@example.com", "subscriptionType": "max"}"#;
        match interpret_claude(ProcessEnd::Exited(0), account, "") {
            Login::Yes(how) => {
                assert!(
                    how.starts_with("logged in (Claude account, max plan)"),
                    "{how}"
                );
                assert!(!how.contains("someone@example.com"), "no account details");
            }
            other => panic!("{other:?}"),
        }
        let out = r#"{"loggedIn": false, "authMethod": "none", "apiProvider": "firstParty"}"#;
        assert!(matches!(
            interpret_claude(ProcessEnd::Exited(1), out, ""),
            Login::No { fix, .. } if fix.contains("claude auth login")
        ));
        assert!(matches!(
            interpret_claude(ProcessEnd::Exited(1), "", "error: unknown command 'auth'"),
            Login::Unknown(why) if why.contains("unknown command")
        ));
        assert!(matches!(
            interpret_claude(ProcessEnd::Exited(0), "Logged in.", ""),
            Login::Yes(_)
        ));
    }

    #[test]
    fn claude_credentials_come_from_a_key_a_provider_or_a_login() {
        let home = tempfile::tempdir().unwrap();
        let none = vars(&[]);
        assert!(matches!(
            credentials(&none, Some(home.path())),
            Credentials::Absent(fix) if fix.contains("ANTHROPIC_API_KEY")
        ));
        let key = vars(&[("ANTHROPIC_API_KEY", "sk-ant-do-not-print")]);
        let found = credentials(&key, Some(home.path()));
        assert_eq!(
            found,
            Credentials::Present("ANTHROPIC_API_KEY is set".into())
        );
        let bedrock = vars(&[("CLAUDE_CODE_USE_BEDROCK", "1")]);
        assert!(matches!(
            credentials(&bedrock, None),
            Credentials::Present(_)
        ));

        // Any `claude` run creates ~/.claude.json, logged in or not: it proves nothing.
        std::fs::write(home.path().join(".claude.json"), "{}").unwrap();
        assert!(matches!(
            credentials(&none, Some(home.path())),
            Credentials::Absent(_)
        ));
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(home.path().join(".claude/.credentials.json"), "{}").unwrap();
        assert!(matches!(
            credentials(&none, Some(home.path())),
            Credentials::Present(what) if what.contains(".credentials.json")
        ));
    }
}
