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

use super::AGENT_ENV_REMOVE;
use model::workflow::model::AgentKind;
use process::{self, CancelToken, ProcessEnd, ProcessSpec};

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
    super::describe(kind).login.map(|probe| probe(program, env))
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

/// Why a login probe did not run; its `Display` follows the probed command line
/// ("`claude auth status` could not run: …").
#[derive(Debug, thiserror::Error)]
pub(super) enum ProbeError {
    #[error("could not run: {0}")]
    NoScratch(#[source] std::io::Error),
    #[error("could not run: {0}")]
    NotStarted(#[source] process::ProcessError),
}

/// Runs `program args` in a temporary directory, bounded.
pub(super) fn probe(
    program: &Path,
    args: &[&str],
    env: &[(String, String)],
) -> Result<process::ProcessOutcome, ProbeError> {
    let scratch = tempfile::tempdir().map_err(ProbeError::NoScratch)?;
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
    process::run(&spec, &CancelToken::new()).map_err(ProbeError::NotStarted)
}

/// What `command` (the probe, in backquotes) said when it did not tell: how it ended, and the
/// first line of `said`.
pub(super) fn undecided(command: &str, end: ProcessEnd, said: &str) -> Login {
    let ended = match end {
        ProcessEnd::Exited(code) => format!("exit code {code}"),
        ProcessEnd::TimedOut => format!("no answer within {}s", PROBE_TIMEOUT.as_secs()),
        other => format!("{other:?}"),
    };
    let first = said.lines().map(str::trim).find(|l| !l.is_empty());
    let first = first.map_or(String::new(), |l| format!(": {l}"));
    Login::Unknown(format!("{command} did not say ({ended}){first}"))
}

/// An environment of fixed variables, for the adapters' credential tests.
#[cfg(test)]
pub(crate) fn test_vars(
    pairs: &'static [(&'static str, &'static str)],
) -> impl Fn(&str) -> Option<String> {
    move |name| {
        pairs
            .iter()
            .find(|(key, _)| *key == name)
            .map(|(_, value)| value.to_string())
    }
}
