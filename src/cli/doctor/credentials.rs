//! Whether an agent CLI can authenticate, from the names of variables and files that provide
//! its credentials: the fallback for when the CLI itself cannot be asked (it is not installed,
//! or too old to have `auth status` / `login status`; module [`crate::agents::login`]). Values
//! are never read or printed: a variable counts when it is set and non-empty, a file when it
//! exists. `~/.claude.json` is no evidence: any `claude` run creates it, logged in or not.

use std::path::{Path, PathBuf};

/// Reads a variable: set and non-empty, or `None`.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Finds one agent CLI's credentials from variables and the home directory.
pub type Detect = fn(Lookup<'_>, Option<&Path>) -> Credentials;

/// What provides an agent CLI's credentials (names only, never values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    Present(String),
    /// Something was found, but it does not log the CLI in (the CLI says it is not logged in,
    /// or a variable it does not read is set): what, and how to fix it.
    Refused {
        detail: String,
        fix: String,
    },
    /// How to provide them.
    Absent(String),
}

impl Credentials {
    /// The check's detail and the fix.
    pub fn describe(&self) -> (String, String) {
        match self {
            Credentials::Present(what) => (what.clone(), String::new()),
            Credentials::Refused { detail, fix } => (detail.clone(), fix.clone()),
            Credentials::Absent(fix) => ("none found".to_string(), fix.clone()),
        }
    }
}

/// Claude Code authenticates with an API key or token variable, a cloud provider, or a login.
pub fn claude_credentials(var: Lookup<'_>, home: Option<&Path>) -> Credentials {
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
    let config_dir = var("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".claude")));
    if let Some(file) = config_dir
        .map(|dir| dir.join(".credentials.json"))
        .filter(|f| f.is_file())
    {
        return Credentials::Present(format!("logged in ({})", file.display()));
    }
    Credentials::Absent(
        "export ANTHROPIC_API_KEY, or log in with `claude auth login` (or /login inside `claude`)"
            .to_string(),
    )
}

/// `codex exec` authenticates with `CODEX_API_KEY` or a stored `codex login`
/// (`$CODEX_HOME/auth.json`); it does not read `OPENAI_API_KEY`.
pub fn codex_credentials(var: Lookup<'_>, home: Option<&Path>) -> Credentials {
    if var("CODEX_API_KEY").is_some() {
        return Credentials::Present("CODEX_API_KEY is set".to_string());
    }
    let codex_home = var("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| home.map(|h| h.join(".codex")));
    if let Some(file) = codex_home
        .map(|dir| dir.join("auth.json"))
        .filter(|f| f.is_file())
    {
        return Credentials::Present(format!("logged in ({})", file.display()));
    }
    if var("OPENAI_API_KEY").is_some() {
        return Credentials::Refused {
            detail: "OPENAI_API_KEY is set, but `codex exec` does not read it".to_string(),
            fix: crate::agents::login::CODEX_FIX.to_string(),
        };
    }
    Credentials::Absent(crate::agents::login::CODEX_FIX.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    #[test]
    fn claude_credentials_come_from_a_key_a_provider_or_a_login() {
        let home = tempfile::tempdir().unwrap();
        let none = vars(&[]);
        assert!(matches!(
            claude_credentials(&none, Some(home.path())),
            Credentials::Absent(fix) if fix.contains("ANTHROPIC_API_KEY")
        ));
        let key = vars(&[("ANTHROPIC_API_KEY", "sk-ant-do-not-print")]);
        let found = claude_credentials(&key, Some(home.path()));
        assert_eq!(
            found,
            Credentials::Present("ANTHROPIC_API_KEY is set".into())
        );
        let bedrock = vars(&[("CLAUDE_CODE_USE_BEDROCK", "1")]);
        assert!(matches!(
            claude_credentials(&bedrock, None),
            Credentials::Present(_)
        ));

        // Any `claude` run creates ~/.claude.json, logged in or not: it proves nothing.
        std::fs::write(home.path().join(".claude.json"), "{}").unwrap();
        assert!(matches!(
            claude_credentials(&none, Some(home.path())),
            Credentials::Absent(_)
        ));
        std::fs::create_dir_all(home.path().join(".claude")).unwrap();
        std::fs::write(home.path().join(".claude/.credentials.json"), "{}").unwrap();
        assert!(matches!(
            claude_credentials(&none, Some(home.path())),
            Credentials::Present(what) if what.contains(".credentials.json")
        ));
    }

    #[test]
    fn codex_credentials_come_from_a_key_or_auth_json() {
        let home = tempfile::tempdir().unwrap();
        let none = vars(&[]);
        assert!(matches!(
            codex_credentials(&none, Some(home.path())),
            Credentials::Absent(fix) if fix.contains("codex login")
        ));
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/auth.json"), "{}").unwrap();
        assert!(matches!(
            codex_credentials(&none, Some(home.path())),
            Credentials::Present(_)
        ));
        let key = vars(&[("CODEX_API_KEY", "sk-do-not-print")]);
        assert_eq!(
            codex_credentials(&key, None),
            Credentials::Present("CODEX_API_KEY is set".into())
        );
        // codex exec 0.169 sends no Authorization header for OPENAI_API_KEY alone.
        let openai = vars(&[("OPENAI_API_KEY", "sk-do-not-print")]);
        match codex_credentials(&openai, None) {
            Credentials::Refused { detail, fix } => {
                assert!(detail.contains("does not read it"), "{detail}");
                assert!(
                    fix.contains("CODEX_API_KEY") && fix.contains("codex login"),
                    "{fix}"
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
