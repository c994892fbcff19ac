//! Whether an agent CLI can authenticate, from the names of variables and files that provide
//! its credentials. Values are never read or printed: a variable counts when it is set and
//! non-empty, a file when it exists.

use std::path::{Path, PathBuf};

/// Reads a variable: set and non-empty, or `None`.
pub type Lookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Finds one agent CLI's credentials from variables and the home directory.
pub type Detect = fn(Lookup<'_>, Option<&Path>) -> Credentials;

/// What provides an agent CLI's credentials (names only, never values).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credentials {
    Present(String),
    /// Some evidence, not proof (e.g. a config file whose secret lives in a keychain).
    Likely(String),
    /// How to provide them.
    Absent(String),
}

impl Credentials {
    /// The check's detail and the fix.
    pub fn describe(&self) -> (String, String) {
        match self {
            Credentials::Present(what) => (what.clone(), String::new()),
            Credentials::Likely(what) => (what.clone(), String::new()),
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
    if let Some(file) = home.map(|h| h.join(".claude.json")).filter(|f| f.is_file()) {
        return Credentials::Likely(format!(
            "no API key; {} exists, so a login kept in the system keychain is likely",
            file.display()
        ));
    }
    Credentials::Absent(
        "export ANTHROPIC_API_KEY, or run `claude` once and log in with /login".to_string(),
    )
}

/// Codex authenticates with an API key variable or `codex login` (`$CODEX_HOME/auth.json`).
pub fn codex_credentials(var: Lookup<'_>, home: Option<&Path>) -> Credentials {
    for name in ["OPENAI_API_KEY", "CODEX_API_KEY"] {
        if var(name).is_some() {
            return Credentials::Present(format!("{name} is set"));
        }
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
    Credentials::Absent("export OPENAI_API_KEY, or run `codex login`".to_string())
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

        std::fs::write(home.path().join(".claude.json"), "{}").unwrap();
        assert!(matches!(
            claude_credentials(&none, Some(home.path())),
            Credentials::Likely(_)
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
        let key = vars(&[("OPENAI_API_KEY", "sk-do-not-print")]);
        assert_eq!(
            codex_credentials(&key, None),
            Credentials::Present("OPENAI_API_KEY is set".into())
        );
    }
}
