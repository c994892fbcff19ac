//! Whether an agent CLI is logged in, asked of the CLI itself, offline.
//!
//! Files and variables are poor evidence: any unauthenticated `claude` run creates
//! `~/.claude.json`, and `codex exec` ignores `OPENAI_API_KEY`. Both CLIs answer the question
//! themselves without touching the network: `claude auth status` prints JSON with `loggedIn`
//! (and exits 1 when not), `codex login status` says "Logged in using …" or "Not logged in"
//! (exit 1). `codex exec` also takes an API key from `CODEX_API_KEY`, which `login status` does
//! not know about, so that variable counts as logged in. Preflight refuses a run whose CLI says
//! it is not logged in; `doctor` reports the answer. Where credentials reach the CLI some other
//! way (a model provider with its own key in codex's config, an `apiKeyHelper`, a proxy), the
//! check is skipped with `AUTOBUILD_SKIP_LOGIN_CHECK=1`.
//!
//! The probe runs in a temporary directory with the project environment, bounded by
//! [`PROBE_TIMEOUT`]; no account detail beyond the login method is kept (no e-mail, no key).

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;

use super::AGENT_ENV_REMOVE;
use crate::process::{self, CancelToken, ProcessEnd, ProcessSpec};
use crate::workflow::model::AgentKind;

/// The variable that skips the login check of preflight (any value but ``, `0`, `false`, `no`).
pub const SKIP_ENV: &str = "AUTOBUILD_SKIP_LOGIN_CHECK";

/// How long a login probe may take.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(20);

/// What an agent CLI says about its login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Login {
    /// Logged in; how, in words.
    Yes(String),
    /// Not logged in: what was found, and how to log in.
    No { detail: String, fix: String },
    /// The CLI could not tell (an older version without the command, a timeout).
    Unknown(String),
}

/// Whether the login check is switched off through [`SKIP_ENV`].
pub fn skipped() -> bool {
    std::env::var(SKIP_ENV).is_ok_and(|value| {
        !matches!(
            value.trim().to_lowercase().as_str(),
            "" | "0" | "false" | "no"
        )
    })
}

/// Asks `program` (the CLI of `kind`, already located) whether it is logged in, with `env` on
/// top of autobuild's environment. `None` for agents without a login (`command`).
pub fn check(kind: AgentKind, program: &Path, env: &[(String, String)]) -> Option<Login> {
    super::adapter_for(kind)?.login(program, env)
}

/// [`check`], asked once per process and program: a feature preflights every task, and each
/// task's run preflights again.
pub fn check_once(kind: AgentKind, program: &Path, env: &[(String, String)]) -> Option<Login> {
    type Memo = Vec<((AgentKind, PathBuf), Login)>;
    static MEMO: Mutex<Memo> = Mutex::new(Vec::new());
    let key = (kind, program.to_path_buf());
    let known = MEMO
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, login)| login.clone());
    if let Some(login) = known {
        return Some(login);
    }
    let login = check(kind, program, env)?;
    MEMO.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push((key, login.clone()));
    Some(login)
}

/// How to log Claude Code in.
pub const CLAUDE_FIX: &str = "log in with `claude auth login` (or /login inside `claude`), or \
     export ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`)";

/// How to log codex in.
pub const CODEX_FIX: &str = "run `codex login` (ChatGPT account), or store an API key with \
     `printenv OPENAI_API_KEY | codex login --with-api-key`, or export CODEX_API_KEY (`codex \
     exec` does not read OPENAI_API_KEY)";

pub(super) fn claude(program: &Path, env: &[(String, String)]) -> Login {
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
        (None, end) => Login::Unknown(format!(
            "`claude auth status` did not say ({}){}",
            describe_end(end),
            first_line(stderr).map_or(String::new(), |l| format!(": {l}"))
        )),
    }
}

pub(super) fn codex(program: &Path, env: &[(String, String)]) -> Login {
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
        (end, _) => Login::Unknown(format!(
            "`codex login status` did not say ({}){}",
            describe_end(end),
            first_line(said).map_or(String::new(), |l| format!(": {l}"))
        )),
    }
}

/// Runs `program args` in a temporary directory, bounded.
fn probe(
    program: &Path,
    args: &[&str],
    env: &[(String, String)],
) -> Result<process::ProcessOutcome, String> {
    let scratch = tempfile::tempdir().map_err(|e| format!("could not run: {e}"))?;
    let mut spec = ProcessSpec::new(
        program.display().to_string(),
        scratch.path(),
        scratch.path().join("login.log"),
    );
    spec.args = args.iter().map(|a| a.to_string()).collect();
    spec.env = env.to_vec();
    spec.env_remove = AGENT_ENV_REMOVE.iter().map(|s| s.to_string()).collect();
    spec.timeout = Some(PROBE_TIMEOUT);
    spec.kill_grace = Duration::from_secs(1);
    spec.capture_limit = 64 * 1024;
    process::run(&spec, &CancelToken::new()).map_err(|e| format!("could not run: {e}"))
}

fn describe_end(end: ProcessEnd) -> String {
    match end {
        ProcessEnd::Exited(code) => format!("exit code {code}"),
        ProcessEnd::TimedOut => format!("no answer within {}s", PROBE_TIMEOUT.as_secs()),
        other => format!("{other:?}"),
    }
}

fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
