//! The `codex` adapter: OpenAI's Codex CLI as an agent (docs/codex.md).
//!
//! Each invocation is one `codex exec --json` process in the worktree with the prompt on stdin
//! (the exact command line and why each flag is there: module `args`). Its stdout is a JSONL event
//! stream, copied (redacted) next to the transcript as `<transcript>.jsonl` and folded into a
//! summary after the process ends (module `events`): the last agent message is the final message —
//! with `--output-schema` it is the JSON verdict, parsed into `structured_output` — the thread
//! id is the session id, and tokens are summed over `turn.completed` events.
//!
//! The run succeeded only when codex exited 0, completed a turn, and reported no failure; a
//! `turn.failed` or an unrecovered `error` event fails it even when the exit code is 0.
//! Failures are classified from what ended the run (module `failure`) so the message carries a
//! fix (sign in, pick a model the account can use), and a transient rate limit or server error
//! is retried after the configured delays.
//!
//! codex reports no cost, so the cost is estimated from token prices (module `pricing`) and marked
//! `cost_estimated`.
//!
//! What is enforced: read-only roles run in codex's `read-only` sandbox, writers in
//! `workspace-write` (writes confined to the worktree). A per-tool allowlist is *not*
//! enforceable — codex has no switch to withhold its shell or patch tools — so a role's `tools`
//! are not passed on; within the sandbox the agent may use any of its tools.

mod args;
mod events;
mod failure;
pub mod login;

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::description::{Description, Package};
use super::pricing::{self, estimate, TokenCounts};
use super::retry::with_retries;
use super::CostGap;
use super::{
    agent_process_spec, Adapter, AgentError, AgentErrorClass, AgentOutcome, AgentRequest,
    AgentStatus, Capabilities, FINAL_MESSAGE_LIMIT,
};
use events::StreamSummary;
use model::project::config::PriceTable;
use model::workflow::model::{AgentKind, Role};
use process::{self, CancelToken, LineWatch, ProcessEnd, ProcessError};

pub use args::PROGRAM;
pub use failure::unsuitable_model;

/// Whether the cost of `model` can be estimated: `[pricing]` (`overrides`) or the built-in
/// table knows its price.
pub fn price_known(model: &str, overrides: &PriceTable) -> bool {
    pricing::price_of(model, Some(overrides)).is_some()
}

/// Waits before retrying a rate-limited invocation; one retry per entry.
pub const DEFAULT_RETRY_DELAYS: [Duration; 2] = [Duration::from_secs(10), Duration::from_secs(30)];

/// How to install the CLI when it is missing.
pub const INSTALL_HELP: &str = "install the Codex CLI with `npm install -g @openai/codex` (or \
     `brew install --cask codex`) so that `codex` is on the PATH autobuild runs with (or in a \
     directory of [env] path_prepend), then sign in with `codex login`";

/// The `codex` adapter's facts (module [`super::description`]).
pub static DESCRIPTION: Description = Description {
    kind: AgentKind::Codex,
    program: Some(PROGRAM),
    install_hint: "install Codex with `npm install -g @openai/codex`",
    package: Some(Package {
        name: "@openai/codex",
        version: "0.169.0",
    }),
    secrets: &["OPENAI_API_KEY"],
    credentials: Some(login::credentials),
    login: Some(login::login),
    adapter: || Box::new(CodexAdapter::default()),
};

pub struct CodexAdapter {
    retry_delays: Vec<Duration>,
}

impl Default for CodexAdapter {
    fn default() -> Self {
        CodexAdapter::with_retry_delays(DEFAULT_RETRY_DELAYS.to_vec())
    }
}

impl CodexAdapter {
    /// An adapter that retries a transiently failed invocation once after each of `delays`.
    pub fn with_retry_delays(delays: Vec<Duration>) -> CodexAdapter {
        CodexAdapter {
            retry_delays: delays,
        }
    }

    fn run_once(
        &self,
        req: &AgentRequest<'_>,
        args: &[String],
        cancel: &CancelToken,
    ) -> Result<Attempt, AgentError> {
        let mut spec = agent_process_spec(PROGRAM, args, req);
        // Reconnect notices are no progress for the idle watchdog.
        spec.watch = Some(LineWatch::new(events::judge_line));
        let events_path = events_path(req.transcript_path);
        spec.stdout_path = Some(events_path.clone());
        let ended = process::run(&spec, cancel).map_err(|source| start_error(req, source))?;
        if let Some(problem) = &ended.transcript_error {
            tracing::warn!("codex transcript incomplete: {problem}");
        }
        let read = fs::File::open(&events_path)
            .and_then(|file| events::read_stream(std::io::BufReader::new(file)));
        let (summary, stream_error) = match read {
            Ok(summary) => (summary, None),
            Err(e) => (
                StreamSummary::default(),
                Some(format!(
                    "cannot read codex's event stream {}: {e}",
                    events_path.display()
                )),
            ),
        };
        let finished = Finished {
            end: ended.end,
            stderr_tail: ended.stderr_tail,
            duration: ended.duration,
            summary,
            stream_error,
        };
        Ok(interpret(&finished, &Context::of(req)))
    }
}

impl Adapter for CodexAdapter {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }

    /// Read-only access is enforced by codex's sandbox and verdicts by `--output-schema`; a
    /// per-tool allowlist is not enforceable (codex cannot withhold its shell or patch tools).
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            enforces_tool_allowlist: false,
            enforces_read_only: true,
            structured_output: true,
        }
    }

    /// A Claude model is refused before the run: codex cannot use it.
    fn preflight(&self, role_name: &str, role: &Role, _env: &[(String, String)]) -> Vec<String> {
        role.model
            .as_deref()
            .and_then(unsuitable_model)
            .map(|why| format!("role `{role_name}`: {why}"))
            .into_iter()
            .collect()
    }

    /// codex reports tokens only: the cost is known when the role names a model with a price.
    fn unpriced(&self, role_name: &str, role: &Role, pricing: &PriceTable) -> Option<CostGap> {
        match role.model.as_deref() {
            Some(model) if price_known(model, pricing) => None,
            // A Claude model is refused for codex anyway, with its own fix.
            Some(model) if unsuitable_model(model).is_some() => None,
            Some(model) => Some(super::pricing::missing_price(role_name, model)),
            None => Some(CostGap {
                what: "names no `model`, so codex runs its own default, whose price autobuild \
                       cannot know"
                    .to_string(),
                fix: format!(
                    "set `model` of role `{role_name}` (with [pricing.\"<model>\"] in \
                     .autobuild/config.toml unless the built-in table has it)"
                ),
            }),
        }
    }

    /// codex keeps its configuration, credentials and sessions in `$CODEX_HOME` (default
    /// `~/.codex`); its own sandbox for the model's commands works inside autobuild's.
    fn sandbox_state(&self, env: &[(String, String)]) -> Vec<sandbox::Writable> {
        user_home(env)
            .map(sandbox::Writable::Dir)
            .into_iter()
            .collect()
    }

    /// A `CODEX_HOME` of the run's own (module `crate::private_state`), starting from the
    /// user's `config.toml` and `AGENTS.md`, with the user's `auth.json` linked.
    fn private_state(
        &self,
        env: &[(String, String)],
        run_dir: &Path,
    ) -> Option<crate::private_state::PrivateState> {
        let user = user_home(env)?;
        let dir = crate::private_state::dir_in(run_dir, "codex");
        // codex refuses a home under the temporary directory (it will not make its sandbox
        // helper there): a run there keeps the user's (docs/codex.md).
        let temp = [std::env::temp_dir(), PathBuf::from("/tmp")];
        if temp.iter().any(|temp| dir.starts_with(temp)) {
            return None;
        }
        Some(crate::private_state::PrivateState {
            env: vec![("CODEX_HOME".to_string(), dir.display().to_string())],
            copies: vec![
                (user.join("config.toml"), "config.toml"),
                (user.join("AGENTS.md"), "AGENTS.md"),
            ],
            links: vec![(user.join("auth.json"), "auth.json")],
            dir,
        })
    }

    fn command_line(&self, req: &AgentRequest<'_>) -> Vec<String> {
        let schema = req.wants_verdict.then(|| schema_path(req.run_dir));
        let mut argv = vec![PROGRAM.to_string()];
        argv.extend(args::exec_args(req, schema.as_deref()));
        argv
    }

    fn invoke(
        &self,
        req: &AgentRequest<'_>,
        cancel: &CancelToken,
    ) -> Result<AgentOutcome, AgentError> {
        let schema = req.wants_verdict.then(|| write_schema(req)).transpose()?;
        let args = args::exec_args(req, schema.as_deref());
        let attempts = with_retries(
            req,
            &self.retry_delays,
            cancel,
            |attempt_req| self.run_once(attempt_req, &args, cancel),
            |attempt| attempt.retry,
            |attempt, number, delay| {
                tracing::warn!(
                    role = req.role_name,
                    "codex hit a rate limit or a server error; retrying in {}: {}",
                    humantime::format_duration(delay),
                    attempt.outcome.status.message()
                );
                keep_attempt_logs(req.transcript_path, number);
            },
        )?;
        let earlier: Vec<AgentOutcome> = attempts.earlier.into_iter().map(|a| a.outcome).collect();
        let mut last = attempts.last.outcome;
        if attempts.cancelled {
            last.status = AgentStatus::Cancelled;
        }
        Ok(combine(last, &earlier))
    }
}

/// The user's codex home: `$CODEX_HOME`, else `~/.codex`.
fn user_home(env: &[(String, String)]) -> Option<PathBuf> {
    let var = |name: &str| process::child_var(env, name).map(PathBuf::from);
    var("CODEX_HOME").or_else(|| var("HOME").map(|home| home.join(".codex")))
}

/// One finished `codex exec` process.
#[derive(Debug, Clone)]
struct Finished {
    end: ProcessEnd,
    stderr_tail: String,
    duration: Duration,
    summary: StreamSummary,
    /// Set when the event stream could not be read back.
    stream_error: Option<String>,
}

/// What the interpretation of a finished process needs from the request.
#[derive(Debug, Clone, Copy)]
struct Context<'a> {
    role_name: &'a str,
    model: Option<&'a str>,
    wants_verdict: bool,
    pricing: Option<&'a PriceTable>,
    transcript: &'a Path,
}

impl<'a> Context<'a> {
    fn of(req: &AgentRequest<'a>) -> Context<'a> {
        Context {
            role_name: req.role_name,
            model: req.role.model.as_deref(),
            wants_verdict: req.wants_verdict,
            pricing: req.pricing,
            transcript: req.transcript_path,
        }
    }
}

/// One attempt's outcome, and whether trying again may help.
#[derive(Debug, Clone)]
struct Attempt {
    outcome: AgentOutcome,
    retry: bool,
}

/// The outcome of a finished process, from its exit and its events.
fn interpret(run: &Finished, cx: &Context<'_>) -> Attempt {
    let summary = &run.summary;
    // Only what ended the run is classified: the stream's failure, else stderr (codex fails
    // there before the stream starts). Notices and errors codex recovered from are not causes.
    let decisive = summary
        .failure()
        .map_or_else(|| run.stderr_tail.clone(), str::to_string);
    let class_of_end = || {
        summary
            .failure()
            .and_then(failure::classify)
            .or_else(|| failure::classify(&run.stderr_tail))
    };
    let status = match AgentStatus::from_process_end(run.end, &run.stderr_tail) {
        AgentStatus::Succeeded | AgentStatus::Failed { .. } if summary.failure().is_some() => {
            let class = class_of_end().unwrap_or(AgentErrorClass::ApiError);
            let message = format!(
                "codex: {}{}",
                summary.failure().unwrap_or_default(),
                noted(summary)
            );
            failed(class, message, cx)
        }
        AgentStatus::Failed { class, message } => {
            let class = class_of_end().unwrap_or(class);
            failed(class, with_stream_error(message, run), cx)
        }
        AgentStatus::Succeeded if summary.turns_completed == 0 => failed(
            class_of_end().unwrap_or(AgentErrorClass::Other),
            with_stream_error(
                "codex exited without completing its turn (no `turn.completed` event)".to_string(),
                run,
            ),
            cx,
        ),
        other => other,
    };
    // Retry only when what ended this run is transient (a rate limit, a server error): a 429
    // codex recovered from earlier says nothing about a later, different failure.
    let retry = matches!(
        status,
        AgentStatus::Failed {
            class: AgentErrorClass::RateLimited | AgentErrorClass::ApiError,
            ..
        }
    ) && failure::is_transient(&decisive);

    let text = summary.final_message.clone().unwrap_or_default();
    let structured_output = if cx.wants_verdict {
        serde_json::from_str(&text).ok()
    } else {
        None
    };
    let cost_usd = estimate(cx.model, summary.usage, cx.pricing);
    if cost_usd.is_none() && summary.usage != TokenCounts::default() {
        tracing::warn!(
            role = cx.role_name,
            "no token price for {}: this codex run's cost is not counted; add \
             [pricing.\"<model>\"] to .autobuild/config.toml",
            cx.model.map_or(
                "codex's default model (the role sets no `model`)".to_string(),
                |m| { format!("model `{m}`") }
            )
        );
    }
    let mut outcome = AgentOutcome::new(status, bounded_message(text, cx.transcript), run.duration);
    outcome.structured_output = structured_output;
    outcome.session_id = summary.thread_id.clone();
    outcome.usage = summary.usage.into();
    outcome.cost_usd = cost_usd;
    outcome.cost_estimated = cost_usd.is_some();
    outcome.permission_denials = summary.declined_commands.clone();
    Attempt {
        outcome: super::empty::refuse(outcome, summary.acted_items > 0),
        retry,
    }
}

/// codex's notices (an `error` item such as a model-metadata fallback), as context after a
/// failure message.
fn noted(summary: &StreamSummary) -> String {
    if summary.notices.is_empty() {
        String::new()
    } else {
        format!("\n(codex also noted: {})", summary.notices.join("; "))
    }
}

fn failed(class: AgentErrorClass, message: String, cx: &Context<'_>) -> AgentStatus {
    AgentStatus::failed_with(class, message, failure::fix(class, cx.role_name, cx.model))
}

fn with_stream_error(message: String, run: &Finished) -> String {
    match &run.stream_error {
        Some(problem) => format!("{message} ({problem})"),
        None => message,
    }
}

/// The final message, cut at [`FINAL_MESSAGE_LIMIT`] with a pointer to the full transcript.
fn bounded_message(mut text: String, transcript: &Path) -> String {
    if base::text::truncate(&mut text, FINAL_MESSAGE_LIMIT) {
        text.push_str(&format!(
            "\n… (message truncated; the full text is in {})",
            transcript.display()
        ));
    }
    text
}

/// The last attempt's outcome, with the tokens, cost and time of the earlier ones added: a
/// retried invocation is one step, and everything it spent counts against the budget.
fn combine(mut last: AgentOutcome, earlier: &[AgentOutcome]) -> AgentOutcome {
    for outcome in earlier {
        last.usage.add(outcome.usage);
        last.duration += outcome.duration;
        if let Some(cost) = outcome.cost_usd {
            last.cost_usd = Some(last.cost_usd.unwrap_or(0.0) + cost);
            last.cost_estimated = true;
        }
    }
    last
}

/// Where the event stream of the invocation logged at `transcript` is copied.
pub fn events_path(transcript: &Path) -> PathBuf {
    transcript.with_extension("jsonl")
}

/// Where the verdict schema is written for `--output-schema`.
pub fn schema_path(run_dir: &Path) -> PathBuf {
    run_dir.join("codex").join("verdict.schema.json")
}

/// Writes the verdict schema where `--output-schema` reads it, without `$schema`: the
/// structured-output API accepts a subset of JSON Schema and the meta-schema URI is no
/// constraint on the answer (module [`super::schema`]).
fn write_schema(req: &AgentRequest<'_>) -> Result<PathBuf, AgentError> {
    let path = schema_path(req.run_dir);
    let schema = super::schema::for_cli(req.verdict_schema).map_err(|e| AgentError::Start {
        role: req.role_name.to_string(),
        source: ProcessError::Spawn {
            program: PROGRAM.to_string(),
            source: std::io::Error::other(format!("the verdict schema is not JSON: {e}")),
        },
        help: "this is a bug in autobuild: please report it".to_string(),
    })?;
    let written = path
        .parent()
        .map_or(Ok(()), fs::create_dir_all)
        .and_then(|()| fs::write(&path, format!("{schema}\n")));
    written.map_err(|source| AgentError::Start {
        role: req.role_name.to_string(),
        help: format!(
            "autobuild could not write the verdict schema for --output-schema to {}: check that \
             the run directory is writable",
            path.display()
        ),
        source: ProcessError::Spawn {
            program: PROGRAM.to_string(),
            source,
        },
    })?;
    Ok(path)
}

fn start_error(req: &AgentRequest<'_>, source: ProcessError) -> AgentError {
    let help = match source {
        ProcessError::NotFound { .. } | ProcessError::PathNotFound { .. } => {
            INSTALL_HELP.to_string()
        }
        _ => format!(
            "check that `codex` starts in a shell (`codex --version`) and that the worktree \
             {} exists",
            req.worktree.display()
        ),
    };
    AgentError::Start {
        role: req.role_name.to_string(),
        source,
        help,
    }
}

/// Moves an attempt's transcript and event stream aside (`….rate-limited-N.log`) so the retry
/// does not overwrite the evidence of why it was needed.
fn keep_attempt_logs(transcript: &Path, attempt: usize) {
    for path in [transcript.to_path_buf(), events_path(transcript)] {
        let (Some(stem), Some(extension)) = (path.file_stem(), path.extension()) else {
            continue;
        };
        let kept = path.with_file_name(format!(
            "{}.rate-limited-{attempt}.{}",
            stem.to_string_lossy(),
            extension.to_string_lossy()
        ));
        if let Err(e) = fs::rename(&path, &kept) {
            tracing::debug!("cannot keep {} as {}: {e}", path.display(), kept.display());
        }
    }
}

#[cfg(test)]
mod tests;
