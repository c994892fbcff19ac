//! Agent adapters: one trait the engine drives, one implementation per agent CLI.
//!
//! An adapter turns a role plus a rendered prompt into a child process (through
//! [`process::run`], so every agent gets the same guarantees: piped stdin, its own process
//! group, deadline and idle watchdog, the project environment, a redacted transcript) and turns
//! what the process printed into an [`AgentOutcome`]. An agent that fails, times out or is
//! cancelled is an outcome with a non-success [`AgentStatus`] — data the gate and the report
//! use — never an `Err`. [`AgentError`] means the agent could not be started at all.
//!
//! Each adapter declares in [`Capabilities`] what it can enforce; the workflow validator
//! rejects a role that asks for a restriction its adapter cannot enforce.
//!
//! An adapter is one module: its [`Description`] (program, install hint, pinned package,
//! secrets, credentials, login probe) and its [`Adapter`] implementation. [`describe`] lists
//! every adapter once; whatever needs to know the adapters asks it.

pub mod claude_code;
pub mod codex;
pub mod command;
pub mod credentials;
pub mod description;
pub mod empty;
pub mod login;
pub mod native;
pub mod pricing;
pub mod private_state;
pub mod retry;
pub mod schema;

use std::path::Path;
use std::time::Duration;

use base::Keyword;
use serde::{Deserialize, Serialize};

pub use description::{Description, Package};
use model::project::config::PriceTable;
use model::workflow::model::{AgentKind, Role};
use process::{self, ProcessEnd, ProcessError, ProcessSpec};
use strum::IntoEnumIterator;

/// How long an agent may run when its role sets no `timeout`.
pub const DEFAULT_AGENT_TIMEOUT: Duration = Duration::from_secs(20 * 60);

/// Bytes of an agent's stdout kept as its final message; the transcript has everything.
pub const FINAL_MESSAGE_LIMIT: usize = 1 << 20;

/// Lines of stderr quoted in the message of a failed agent.
const STDERR_LINES_IN_MESSAGE: usize = 20;

/// Inherited variables an agent must not see: `CLAUDECODE` makes a nested Claude Code refuse
/// to start when autobuild itself runs inside one.
pub const AGENT_ENV_REMOVE: &[&str] = &["CLAUDECODE"];

/// Everything an adapter needs for one invocation.
#[derive(Debug, Clone, Copy)]
pub struct AgentRequest<'a> {
    pub role_name: &'a str,
    pub role: &'a Role,
    pub prompt: &'a str,
    pub worktree: &'a Path,
    /// The project environment (docs/config.md, "Project config"), already computed.
    pub env: &'a [(String, String)],
    pub run_dir: &'a Path,
    /// The rendered prompt, already written here by the engine.
    pub prompt_file: &'a Path,
    pub transcript_path: &'a Path,
    pub task_id: &'a str,
    pub turn: u32,
    /// The role must return a coach verdict.
    pub wants_verdict: bool,
    /// The verdict JSON schema, for adapters that can enforce it.
    pub verdict_schema: &'a str,
    /// `[pricing]` of the project config, for adapters that estimate cost from tokens.
    pub pricing: Option<&'a model::project::config::PriceTable>,
    /// The OS confinement to run the agent in (module [`sandbox`]), when it is on.
    pub sandbox: Option<&'a sandbox::Confinement>,
}

/// What one agent invocation produced; recorded in `player_turn_N.json` / `coach_turn_N.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentOutcome {
    pub final_message: String,
    /// Output validated by the agent CLI itself (e.g. against `--json-schema`).
    pub structured_output: Option<serde_json::Value>,
    pub session_id: Option<String>,
    pub usage: TokenUsage,
    pub cost_usd: Option<f64>,
    /// `cost_usd` was computed from token counts and list prices, not reported by the CLI.
    #[serde(default)]
    pub cost_estimated: bool,
    #[serde(rename = "duration_ms", with = "duration_ms")]
    pub duration: Duration,
    /// Agent-internal turns (tool-use rounds), when the CLI reports them.
    pub agent_turns: Option<u32>,
    /// Tool uses the agent CLI refused.
    pub permission_denials: Vec<String>,
    pub status: AgentStatus,
    /// What the adapter noticed that did not fail the invocation but weakens its result (e.g.
    /// a verdict the CLI did not enforce the schema on); shown as warnings and kept here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl AgentOutcome {
    /// An outcome with only a status, a message and a duration (no usage reported).
    pub fn new(status: AgentStatus, final_message: String, duration: Duration) -> AgentOutcome {
        AgentOutcome {
            final_message,
            structured_output: None,
            session_id: None,
            usage: TokenUsage::default(),
            cost_usd: None,
            cost_estimated: false,
            duration,
            agent_turns: None,
            permission_denials: Vec::new(),
            status,
            notes: Vec::new(),
        }
    }
}

/// An agent's tokens. Input is `input` + `cached`: what was not read from the prompt cache
/// (what was written to it included), and what was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input: u64,
    pub output: u64,
    /// Input read from the prompt cache.
    pub cached: u64,
    /// Of `input`, what was written to the prompt cache (where the API says: Anthropic's).
    #[serde(default)]
    pub cache_written: u64,
}

impl TokenUsage {
    pub fn add(&mut self, other: TokenUsage) {
        *self = self.zip(other, |a, b| a + b);
    }

    /// Each count the larger of the two.
    pub fn max(self, other: TokenUsage) -> TokenUsage {
        self.zip(other, u64::max)
    }

    fn zip(self, other: TokenUsage, f: impl Fn(u64, u64) -> u64) -> TokenUsage {
        TokenUsage {
            input: f(self.input, other.input),
            output: f(self.output, other.output),
            cached: f(self.cached, other.cached),
            cache_written: f(self.cache_written, other.cache_written),
        }
    }
}

/// How an invocation ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(tag = "status", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum AgentStatus {
    Succeeded,
    Failed {
        class: AgentErrorClass,
        message: String,
    },
    TimedOut,
    /// Nothing came for the role's `idle_timeout`; `detail` says from where and for how long,
    /// when the adapter knows.
    IdleTimedOut {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    Cancelled,
}

impl AgentStatus {
    pub fn is_success(&self) -> bool {
        matches!(self, AgentStatus::Succeeded)
    }

    /// A failure of `class`: `message`, then the fix when there is one.
    pub fn failed_with(
        class: AgentErrorClass,
        message: String,
        fix: Option<String>,
    ) -> AgentStatus {
        let message = match fix {
            Some(fix) => format!("{message}\nfix: {fix}"),
            None => message,
        };
        AgentStatus::Failed { class, message }
    }

    /// The failure class, when it is one that stops the whole run ([`AgentErrorClass::stops_run`]).
    pub fn run_stopper(&self) -> Option<AgentErrorClass> {
        match self {
            AgentStatus::Failed { class, .. } if class.stops_run() => Some(*class),
            _ => None,
        }
    }

    pub fn is_cancelled(&self) -> bool {
        matches!(self, AgentStatus::Cancelled)
    }

    /// The status as recorded and shown (`succeeded`, `failed`, `timed_out`, …).
    pub fn name(&self) -> &'static str {
        self.into()
    }

    /// What happened, in words, for feedback and reports.
    pub fn message(&self) -> String {
        match self {
            AgentStatus::Succeeded => "succeeded".to_string(),
            AgentStatus::Failed { message, .. } => message.clone(),
            AgentStatus::TimedOut => "timed out (the role's `timeout` was reached)".to_string(),
            AgentStatus::IdleTimedOut {
                detail: Some(detail),
            } => format!("stopped: {detail}"),
            AgentStatus::IdleTimedOut { detail: None } => {
                "stopped after printing nothing for too long (the role's `idle_timeout`)"
                    .to_string()
            }
            AgentStatus::Cancelled => "cancelled".to_string(),
        }
    }

    /// What the next turn's prompt is told of this ending: [`AgentStatus::message`], except
    /// for a failure of what serves the agent (a server error, a rate limit, a refused key, an
    /// unknown model), whose text — a server's answer body, with its file paths — is no
    /// finding about the work: the prompt says what kind of failure it was, and the record
    /// keeps the whole message.
    pub fn feedback(&self) -> String {
        match self {
            AgentStatus::Failed { class, .. } if class.is_infrastructure() => format!(
                "the agent's model or its server failed ({}); the error is in the run's \
                 record. Nothing in the work caused this",
                class.as_str()
            ),
            other => other.message(),
        }
    }

    /// The status of an agent process from how it ended; a non-zero exit quotes the last
    /// lines of stderr. Adapters that understand their CLI's output refine `Succeeded` and
    /// `NonZeroExit` further (API errors, rate limits, …).
    pub fn from_process_end(end: ProcessEnd, stderr_tail: &str) -> AgentStatus {
        let failed = |class, what: String| AgentStatus::Failed {
            class,
            message: with_stderr(&what, stderr_tail),
        };
        match end {
            ProcessEnd::Exited(0) => AgentStatus::Succeeded,
            ProcessEnd::Exited(code) => failed(
                AgentErrorClass::NonZeroExit,
                format!("exited with code {code}"),
            ),
            ProcessEnd::Signaled(signal) => {
                failed(AgentErrorClass::Other, format!("killed by signal {signal}"))
            }
            ProcessEnd::TimedOut => AgentStatus::TimedOut,
            ProcessEnd::IdleTimedOut => AgentStatus::IdleTimedOut { detail: None },
            ProcessEnd::Cancelled => AgentStatus::Cancelled,
            ProcessEnd::Aborted => failed(
                AgentErrorClass::Other,
                "stopped early: its output showed it could not succeed".to_string(),
            ),
        }
    }
}

/// `what`, then the last lines of stderr (if any).
fn with_stderr(what: &str, stderr_tail: &str) -> String {
    let lines: Vec<&str> = stderr_tail
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    if lines.is_empty() {
        return format!("{what} (nothing on stderr)");
    }
    let shown = &lines[lines.len().saturating_sub(STDERR_LINES_IN_MESSAGE)..];
    format!("{what}; stderr ends with:\n{}", shown.join("\n"))
}

/// Why an agent failed, as far as its adapter can tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, strum::IntoStaticStr)]
#[strum(serialize_all = "snake_case")]
#[serde(rename_all = "snake_case")]
pub enum AgentErrorClass {
    NonZeroExit,
    ApiError,
    AuthMissing,
    RateLimited,
    /// Out of credit: a failed payment, an exhausted quota, or a plan's usage limit that only
    /// resets in hours — waiting seconds does not help.
    OutOfCredit,
    ModelNotFound,
    MaxTurns,
    /// It ended without an error but answered nothing: no text, no tool call (module [`empty`]).
    EmptyAnswer,
    Other,
}

impl AgentErrorClass {
    /// Whether this failure stops the whole run at once (README.md): an agent that cannot
    /// authenticate, is out of credit, or names a model it cannot use fails every later step
    /// the same way, so going on only burns turns and ends in a misleading stall.
    pub fn stops_run(self) -> bool {
        matches!(
            self,
            AgentErrorClass::AuthMissing
                | AgentErrorClass::OutOfCredit
                | AgentErrorClass::ModelNotFound
        )
    }

    /// Whether the failure is of what serves the agent (its API, server, account or model)
    /// rather than of the agent's work.
    pub fn is_infrastructure(self) -> bool {
        matches!(
            self,
            AgentErrorClass::ApiError
                | AgentErrorClass::AuthMissing
                | AgentErrorClass::RateLimited
                | AgentErrorClass::OutOfCredit
                | AgentErrorClass::ModelNotFound
        )
    }

    /// What an agent with this failure cannot do, for messages ("the player agent …").
    pub fn describe(self) -> &'static str {
        match self {
            AgentErrorClass::AuthMissing => "cannot authenticate",
            AgentErrorClass::OutOfCredit => "is out of credit",
            AgentErrorClass::ModelNotFound => "names a model it cannot use",
            AgentErrorClass::RateLimited => "is rate limited",
            AgentErrorClass::ApiError => "met an API error",
            AgentErrorClass::MaxTurns => "ran out of agent turns",
            AgentErrorClass::EmptyAnswer => "answered nothing",
            AgentErrorClass::NonZeroExit | AgentErrorClass::Other => "failed",
        }
    }
}

/// What an adapter can enforce itself (rather than only ask for in the prompt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Capabilities {
    /// Only the role's `tools` are usable.
    pub enforces_tool_allowlist: bool,
    /// The agent cannot modify files.
    pub enforces_read_only: bool,
    /// The CLI validates output against a JSON schema.
    pub structured_output: bool,
}

/// Why an agent step's cost cannot be counted against a budget, and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CostGap {
    pub what: String,
    pub fix: String,
}

/// One agent: a CLI autobuild starts, or an API autobuild talks to. Besides running it, the
/// adapter answers what preflight and `doctor` ask before a run (the program to find, how to
/// install it, whether it is logged in, what else in the role stops a run, whether its cost is
/// known), so a new adapter is one module plus one line in [`describe`].
pub trait Adapter: Send + Sync {
    /// The adapter's static facts.
    fn description(&self) -> &'static Description;
    fn kind(&self) -> AgentKind {
        self.description().kind
    }
    fn capabilities(&self) -> Capabilities;
    /// The program preflight must find for `role`; `None` when the adapter starts none.
    fn program(&self, _role: &Role) -> Option<String> {
        self.description().program.map(str::to_string)
    }
    /// How to install [`Adapter::program`] when it is missing (empty: nothing to suggest).
    fn install_hint(&self) -> String {
        self.description().install_hint.to_string()
    }
    /// What else about `role` stops a run before it starts (an unusable model, a missing key),
    /// given the project environment.
    fn preflight(&self, _role_name: &str, _role: &Role, _env: &[(String, String)]) -> Vec<String> {
        Vec::new()
    }
    /// Why the cost of `role`'s steps cannot be known, when the adapter prices tokens itself
    /// and has no price for them; `None` when the cost is reported or priced.
    fn unpriced(&self, _role_name: &str, _role: &Role, _pricing: &PriceTable) -> Option<CostGap> {
        None
    }
    /// What `doctor` reports about `role` beyond the program and the login (e.g. whether an
    /// endpoint answers and serves the model).
    fn diagnose(&self, _role_name: &str, _role: &Role, _env: &[(String, String)]) -> Vec<Finding> {
        Vec::new()
    }
    /// What `--dry-run` says about `role` beyond its command line (e.g. that the server it
    /// talks to is down); cheap and bounded, and it sends nothing.
    fn dry_run_notes(&self, _role_name: &str, _role: &Role) -> Vec<String> {
        Vec::new()
    }
    /// The argv `invoke` would run, for `--dry-run`.
    fn command_line(&self, req: &AgentRequest<'_>) -> Vec<String>;
    /// What the agent CLI itself writes outside the worktree (its configuration, sessions,
    /// locks), given the environment it runs with: writable in the sandbox.
    fn sandbox_state(&self, _env: &[(String, String)]) -> Vec<sandbox::Writable> {
        Vec::new()
    }
    /// The CLI's own state made private to the run in `run_dir` (module [`private_state`]),
    /// for a child with `env`; `None` for an adapter whose CLI keeps none.
    fn private_state(
        &self,
        _env: &[(String, String)],
        _run_dir: &Path,
    ) -> Option<private_state::PrivateState> {
        None
    }
    /// Runs the agent once. `Err` only when it could not be started at all.
    fn invoke(
        &self,
        req: &AgentRequest<'_>,
        cancel: &process::CancelToken,
    ) -> Result<AgentOutcome, AgentError>;
}

/// One line of `doctor` about a role's agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub ok: bool,
    pub subject: String,
    pub detail: String,
    /// How to fix it, when not ok.
    pub fix: String,
}

/// The registry of adapters: the description of `kind`'s adapter, declared in its module.
/// Adding an adapter is its module, its [`AgentKind`] and one line here.
pub fn describe(kind: AgentKind) -> &'static Description {
    match kind {
        AgentKind::ClaudeCode => &claude_code::DESCRIPTION,
        AgentKind::Codex => &codex::DESCRIPTION,
        AgentKind::Command => &command::DESCRIPTION,
        AgentKind::Openai => &native::OPENAI,
        AgentKind::Anthropic => &native::ANTHROPIC,
    }
}

/// Every adapter's description, in the order of [`AgentKind`].
pub fn descriptions() -> impl Iterator<Item = &'static Description> {
    AgentKind::iter().map(describe)
}

/// The adapter for `kind` (every kind has one; `None` is kept for a kind a build may lack).
pub fn adapter_for(kind: AgentKind) -> Option<Box<dyn Adapter>> {
    Some((describe(kind).adapter)())
}

/// The process every adapter starts from: cwd = worktree, the prompt on stdin, the project
/// environment, the role's deadline and idle watchdog, the transcript at the requested path.
pub fn agent_process_spec(program: &str, args: &[String], req: &AgentRequest<'_>) -> ProcessSpec {
    let mut spec = ProcessSpec::new(program, req.worktree, req.transcript_path);
    spec.args = args.to_vec();
    spec.env = req.env.to_vec();
    spec.env_remove = AGENT_ENV_REMOVE.iter().map(|s| s.to_string()).collect();
    spec.stdin = Some(req.prompt.as_bytes().to_vec());
    spec.timeout = Some(req.role.timeout.unwrap_or(DEFAULT_AGENT_TIMEOUT));
    spec.idle_timeout = req.role.idle_timeout;
    spec.capture_limit = FINAL_MESSAGE_LIMIT;
    spec.group_file = Some(agent_group_file(req.run_dir));
    spec.sandbox = req.sandbox.map(sandbox::Confinement::wrapper);
    spec
}

/// A role's `timeout` bounds the whole invocation, retries and their pauses included: the role
/// one more attempt runs with gets only what is left of it.
pub fn role_for_attempt(role: &Role, started: std::time::Instant) -> Role {
    let budget = role.timeout.unwrap_or(DEFAULT_AGENT_TIMEOUT);
    let mut attempt = role.clone();
    attempt.timeout = Some(budget.saturating_sub(started.elapsed()));
    attempt
}

/// Whether a retry after `delay` still leaves time for an attempt within the role's timeout.
pub fn retry_fits(role: &Role, started: std::time::Instant, delay: Duration) -> bool {
    let budget = role.timeout.unwrap_or(DEFAULT_AGENT_TIMEOUT);
    started.elapsed() + delay < budget
}

/// Sleeps for `delay` (a pause before a retry) unless cancelled first; whether it slept the
/// whole time.
pub fn pause(delay: Duration, cancel: &process::CancelToken) -> bool {
    let until = std::time::Instant::now() + delay;
    loop {
        if cancel.is_cancelled() {
            return false;
        }
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() {
            return true;
        }
        std::thread::sleep(left.min(Duration::from_millis(50)));
    }
}

/// Where the running agent's process group id is recorded (one agent runs at a time per run).
pub fn agent_group_file(run_dir: &Path) -> std::path::PathBuf {
    run_dir.join("agent.pgid")
}

/// The run's scratch directory: agents and checks may write it in the sandbox, and it is kept
/// for the whole run (unlike the private `/tmp` of each process).
pub fn scratch_dir(run_dir: &Path) -> std::path::PathBuf {
    run_dir.join("scratch")
}

/// Where the running check's or `run` command's process group id is recorded (one runs at a
/// time per run).
pub fn command_group_file(run_dir: &Path) -> std::path::PathBuf {
    run_dir.join("command.pgid")
}

/// An agent could not be started.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    #[error("role `{role}` uses the `command` agent but has no `command`")]
    NoCommand { role: String },
    #[error("role `{role}`: cannot write the transcript {}: {source}", path.display())]
    Transcript {
        role: String,
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("role `{role}`: {source}")]
    Start {
        role: String,
        #[source]
        source: ProcessError,
        /// How to fix it (install the CLI, fix the path, …).
        help: String,
    },
}

impl AgentError {
    pub fn help(&self) -> String {
        match self {
            AgentError::NoCommand { role } => format!(
                "set the program to run under [roles.{role}], e.g. \
                 command = [\"sh\", \".autobuild/agents/{role}.sh\"]"
            ),
            AgentError::Start { help, .. } => help.clone(),
            AgentError::Transcript { .. } => {
                "check that the run directory is writable and the disk is not full".to_string()
            }
        }
    }
}

impl base::error::Problem for AgentError {
    fn class(&self) -> base::error::Class {
        base::error::Class::Runtime
    }

    fn help(&self) -> Option<String> {
        Some(AgentError::help(self))
    }
}

/// Calls `f` with every line of an agent CLI's event stream (without its newline), or `None`
/// for a line longer than `max` bytes, which is skipped without being held in memory.
pub(crate) fn for_each_line(
    mut reader: impl std::io::BufRead,
    max: usize,
    mut f: impl FnMut(Option<&str>),
) -> std::io::Result<()> {
    use std::io::{BufRead, Read};
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        let read = reader
            .by_ref()
            .take(max as u64 + 1)
            .read_until(b'\n', &mut buffer)?;
        if read == 0 {
            return Ok(());
        }
        let complete = buffer.last() == Some(&b'\n');
        if !complete && read > max {
            reader.skip_until(b'\n')?;
            f(None);
            continue;
        }
        let text = String::from_utf8_lossy(&buffer);
        f(Some(text.trim_end_matches(['\n', '\r'])));
    }
}

/// Durations in turn records are whole milliseconds.
mod duration_ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(value.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

#[cfg(test)]
mod tests;
