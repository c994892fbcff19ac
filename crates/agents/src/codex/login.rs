//! How codex authenticates: asked of `codex login status` ([`login`]; `CODEX_API_KEY`, which
//! `codex exec` reads and `login status` does not know, counts as logged in), or, when the CLI
//! cannot be asked, told from `CODEX_API_KEY` and `$CODEX_HOME/auth.json` ([`credentials`]).

use std::path::Path;

use crate::credentials::{login_file, Credentials, Lookup};
use crate::login::{probe, undecided, Login};
use process::{self, ProcessEnd};

/// How to log codex in.
pub const CODEX_FIX: &str = "run `codex login` (ChatGPT account), or store an API key with \
     `printenv OPENAI_API_KEY | codex login --with-api-key`, or export CODEX_API_KEY (`codex \
     exec` does not read OPENAI_API_KEY)";

/// Whether the located CLI is logged in, asked of `codex login status` with `env` on top of
/// autobuild's environment.
pub fn login(program: &Path, env: &[(String, String)]) -> Login {
    if process::child_var(env, "CODEX_API_KEY").is_some() {
        return Login::Yes("CODEX_API_KEY is set (`codex exec` reads it)".to_string());
    }
    let ran = match probe(program, &["login", "status"], env) {
        Ok(ran) => ran,
        Err(problem) => return Login::Unknown(format!("`codex login status` {problem}")),
    };
    // codex prints its answer on stderr; older versions used stdout.
    let said = format!("{}\n{}", ran.stdout, ran.stderr_tail);
    interpret_codex(
        ran.end,
        &said,
        process::child_var(env, "OPENAI_API_KEY").is_some(),
    )
}

fn interpret_codex(end: ProcessEnd, said: &str, openai_key_set: bool) -> Login {
    let line = said
        .lines()
        .map(str::trim)
        .find(|l| l.to_lowercase().contains("logged in"))
        .map(str::to_string);
    match (end, line) {
        (ProcessEnd::Exited(0), line) => {
            // "Logged in using an API key - sk-proj-***ABCDE": the masked key is not kept.
            let how = line
                .map(|l| l.split(" - ").next().unwrap_or_default().to_string())
                .unwrap_or_else(|| "logged in".to_string());
            Login::Yes(format!("{how} (`codex login status`)"))
        }
        (ProcessEnd::Exited(1), Some(line)) if line.to_lowercase().contains("not logged in") => {
            let mut detail = "not logged in (`codex login status`)".to_string();
            if openai_key_set {
                detail.push_str("; OPENAI_API_KEY is set, but `codex exec` does not read it");
            }
            Login::No {
                detail,
                fix: CODEX_FIX.to_string(),
            }
        }
        (end, _) => undecided("`codex login status`", end, said),
    }
}

/// `codex exec` authenticates with `CODEX_API_KEY` or a stored `codex login`
/// (`$CODEX_HOME/auth.json`); it does not read `OPENAI_API_KEY`.
pub fn credentials(var: Lookup<'_>, home: Option<&Path>) -> Credentials {
    if var("CODEX_API_KEY").is_some() {
        return Credentials::Present("CODEX_API_KEY is set".to_string());
    }
    if let Some(found) = login_file(var, home, ("CODEX_HOME", ".codex"), "auth.json") {
        return found;
    }
    if var("OPENAI_API_KEY").is_some() {
        return Credentials::Refused {
            detail: "OPENAI_API_KEY is set, but `codex exec` does not read it".to_string(),
            fix: CODEX_FIX.to_string(),
        };
    }
    Credentials::Absent(CODEX_FIX.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::login::test_vars as vars;

    #[test]
    fn codex_login_status_is_read_from_its_words() {
        assert_eq!(
            interpret_codex(ProcessEnd::Exited(0), "\nLogged in using ChatGPT\n", false),
            Login::Yes("Logged in using ChatGPT (`codex login status`)".into())
        );
        assert_eq!(
            interpret_codex(
                ProcessEnd::Exited(0),
                "Logged in using an API key - sk-proj-***ABCDE",
                false
            ),
            Login::Yes("Logged in using an API key (`codex login status`)".into())
        );
        match interpret_codex(ProcessEnd::Exited(1), "Not logged in\n", true) {
            Login::No { detail, fix } => {
                assert!(detail.contains("OPENAI_API_KEY is set, but"), "{detail}");
                assert!(fix.contains("CODEX_API_KEY"), "{fix}");
                assert!(fix.contains("codex login"), "{fix}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            interpret_codex(
                ProcessEnd::Exited(2),
                "error: unrecognized subcommand",
                false
            ),
            Login::Unknown(_)
        ));
    }

    #[test]
    fn codex_credentials_come_from_a_key_or_auth_json() {
        let home = tempfile::tempdir().unwrap();
        let none = vars(&[]);
        assert!(matches!(
            credentials(&none, Some(home.path())),
            Credentials::Absent(fix) if fix.contains("codex login")
        ));
        std::fs::create_dir_all(home.path().join(".codex")).unwrap();
        std::fs::write(home.path().join(".codex/auth.json"), "{}").unwrap();
        assert!(matches!(
            credentials(&none, Some(home.path())),
            Credentials::Present(_)
        ));
        let key = vars(&[("CODEX_API_KEY", "sk-do-not-print")]);
        assert_eq!(
            credentials(&key, None),
            Credentials::Present("CODEX_API_KEY is set".into())
        );
        // codex exec 0.169 sends no Authorization header for OPENAI_API_KEY alone.
        let openai = vars(&[("OPENAI_API_KEY", "sk-do-not-print")]);
        match credentials(&openai, None) {
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
