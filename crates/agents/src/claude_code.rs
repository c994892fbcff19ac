//! The `claude-code` adapter: Claude Code in print mode as a Player or Coach (docs/claude-code.md).
//!
//! Each invocation is a fresh `claude -p --output-format stream-json --verbose` process in the
//! worktree with the prompt on stdin (closed after writing, never a terminal). The role's tools
//! and access become `--tools`/`--allowedTools`/`--disallowedTools` and a permission mode
//! ([`args`]); a verdict role gets the verdict schema through `--json-schema`, and its answer
//! is read from the `result` event's `structured_output`.
//!
//! stdout is also streamed (redacted) to `<transcript>.stream.jsonl` and parsed from there
//! ([`stream`]), because one event can be larger than any in-memory capture. The status comes
//! from the exit code, the `result` event and stderr together ([`status`]). A rate-limited or
//! overloaded attempt is retried after a pause ([`RetryPolicy`]); the transcripts of earlier
//! attempts are kept as `<name>.attemptN.log` / `.attemptN.stream.jsonl`.

pub mod args;
pub mod home;
pub mod login;
pub mod signals;
pub mod status;
pub mod stream;

use std::fs::{self, File};
use std::io::BufReader;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::description::{Description, Package};
use super::retry::with_retries;
use super::{
    agent_process_spec, Adapter, AgentError, AgentOutcome, AgentRequest, AgentStatus, Capabilities,
    TokenUsage, FINAL_MESSAGE_LIMIT,
};
use model::workflow::model::AgentKind;
use process::{self, CancelToken, LineWatch, ProcessError, ProcessOutcome};
use status::Classified;
use stream::StreamSummary;

/// Pauses between attempts of an invocation that hit a transient API condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPolicy {
    /// One pause per retry: `n` pauses allow `n + 1` attempts.
    pub delays: Vec<Duration>,
}

impl Default for RetryPolicy {
    /// Three attempts, 5 s and 15 s apart.
    fn default() -> RetryPolicy {
        RetryPolicy {
            delays: vec![Duration::from_secs(5), Duration::from_secs(15)],
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct ClaudeCodeAdapter {
    retry: RetryPolicy,
}

impl ClaudeCodeAdapter {
    pub fn new() -> ClaudeCodeAdapter {
        ClaudeCodeAdapter::default()
    }

    pub fn with_retry(retry: RetryPolicy) -> ClaudeCodeAdapter {
        ClaudeCodeAdapter { retry }
    }
}

/// The `claude-code` adapter's facts (module [`super::description`]).
pub static DESCRIPTION: Description = Description {
    kind: AgentKind::ClaudeCode,
    program: Some(args::PROGRAM),
    install_hint: "install Claude Code with `npm install -g @anthropic-ai/claude-code` (it needs \
                   Node.js 18+), or put `claude` on the PATH (e.g. with [env] path_prepend in \
                   .autobuild/config.toml)",
    package: Some(Package {
        name: "@anthropic-ai/claude-code",
        version: "2.1.197",
    }),
    secrets: &["ANTHROPIC_API_KEY"],
    credentials: Some(login::credentials),
    login: Some(login::login),
    adapter: || Box::new(ClaudeCodeAdapter::new()),
};

/// Where stdout of the invocation logged to `transcript` is kept.
pub fn stream_path(transcript: &Path) -> PathBuf {
    sibling(transcript, "stream.jsonl")
}

/// `dir/name.log` → `dir/name.<suffix>`.
fn sibling(transcript: &Path, suffix: &str) -> PathBuf {
    let name = transcript
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name.strip_suffix(".log").unwrap_or(&name);
    transcript.with_file_name(format!("{stem}.{suffix}"))
}

impl Adapter for ClaudeCodeAdapter {
    fn description(&self) -> &'static Description {
        &DESCRIPTION
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            enforces_tool_allowlist: true,
            enforces_read_only: true,
            structured_output: true,
        }
    }

    fn sandbox_state(&self, env: &[(String, String)]) -> Vec<sandbox::Writable> {
        home::state_paths(env)
    }

    fn private_state(
        &self,
        env: &[(String, String)],
        run_dir: &std::path::Path,
    ) -> Option<crate::private_state::PrivateState> {
        home::private_state(env, run_dir)
    }

    fn command_line(&self, req: &AgentRequest<'_>) -> Vec<String> {
        let mut argv = vec![args::PROGRAM.to_string()];
        argv.extend(arguments(req));
        argv
    }

    fn invoke(
        &self,
        req: &AgentRequest<'_>,
        cancel: &CancelToken,
    ) -> Result<AgentOutcome, AgentError> {
        let attempts = with_retries(
            req,
            &self.retry.delays,
            cancel,
            |attempt_req| {
                let (ran, summary) = run_once(attempt_req, cancel)?;
                let classified =
                    status::classify(ran.end, &summary, &ran.stderr_tail, req.role_name, req.role);
                Ok((summary, classified))
            },
            |(_, classified)| classified.transient,
            |(_, classified), attempt, delay| {
                tracing::warn!(
                    role = req.role_name,
                    attempt,
                    "claude hit a transient API condition; retrying in {delay:?}: {}",
                    classified.status.message()
                );
                keep_attempt(req.transcript_path, attempt);
            },
        )?;
        let mut spent = Spent::default();
        for (summary, _) in attempts.earlier.iter().chain([&attempts.last]) {
            spent.add(summary);
        }
        let elapsed = attempts.started.elapsed();
        if attempts.cancelled {
            let outcome = AgentOutcome::new(AgentStatus::Cancelled, String::new(), elapsed);
            return Ok(spent.apply(outcome));
        }
        let count = attempts.count();
        let (summary, classified) = attempts.last;
        let classified = mention_attempts(classified, count);
        let outcome = spent.apply(outcome(req, summary, classified, elapsed));
        // `num_turns` counts tool-use rounds: more than one, or a refused tool use, means
        // claude acted even when its result text is empty.
        let acted = outcome.agent_turns.is_some_and(|turns| turns > 1)
            || !outcome.permission_denials.is_empty();
        Ok(super::empty::refuse(outcome, acted))
    }
}

fn arguments(req: &AgentRequest<'_>) -> Vec<String> {
    let schema = req.wants_verdict.then_some(req.verdict_schema);
    args::arguments(req.role, schema)
}

/// One `claude` process, and what its stream said.
fn run_once(
    req: &AgentRequest<'_>,
    cancel: &CancelToken,
) -> Result<(ProcessOutcome, StreamSummary), AgentError> {
    let mut spec = agent_process_spec(args::PROGRAM, &arguments(req), req);
    // The final message comes from the stream file, so nothing is captured in memory.
    spec.capture_limit = 0;
    // Claude Code's own retries are no progress, and retrying refused credentials is hopeless.
    spec.watch = Some(LineWatch::new(signals::judge_line));
    let stream_file = stream_path(req.transcript_path);
    spec.stdout_path = Some(stream_file.clone());
    let ran = process::run(&spec, cancel).map_err(|source| {
        let help = match source {
            ProcessError::NotFound { .. }
            | ProcessError::PathNotFound { .. }
            | ProcessError::NotExecutable { .. } => DESCRIPTION.install_hint.to_string(),
            _ => "check that the worktree exists and the run directory is writable".to_string(),
        };
        AgentError::Start {
            role: req.role_name.to_string(),
            help,
            source,
        }
    })?;
    if let Some(problem) = &ran.transcript_error {
        tracing::warn!("agent transcript incomplete: {problem}");
    }
    let summary = File::open(&stream_file)
        .and_then(|file| stream::read(BufReader::new(file)))
        .unwrap_or_else(|error| {
            tracing::warn!("cannot read {}: {error}", stream_file.display());
            StreamSummary::default()
        });
    if summary.skipped_lines > 0 {
        tracing::debug!(
            skipped = summary.skipped_lines,
            "claude printed lines that are not JSON events"
        );
    }
    if let Some(init) = &summary.init {
        tracing::debug!(tools = ?init.tools, model = ?init.model, "claude session started");
    }
    Ok((ran, summary))
}

/// Moves an attempt's transcript and stream file aside before the next attempt reuses the
/// names.
fn keep_attempt(transcript: &Path, attempt: usize) {
    let moves = [
        (transcript.to_path_buf(), format!("attempt{attempt}.log")),
        (
            stream_path(transcript),
            format!("attempt{attempt}.stream.jsonl"),
        ),
    ];
    for (from, suffix) in moves {
        let to = sibling(transcript, &suffix);
        if let Err(error) = fs::rename(&from, &to) {
            if from.exists() {
                tracing::warn!(
                    "cannot keep {} as {}: {error}",
                    from.display(),
                    to.display()
                );
            }
        }
    }
}

/// A failure after retries says how many attempts were made.
fn mention_attempts(classified: Classified, attempts: usize) -> Classified {
    match classified.status {
        AgentStatus::Failed { class, message } if classified.transient && attempts > 1 => {
            Classified {
                status: AgentStatus::Failed {
                    class,
                    message: format!("{message} (gave up after {attempts} attempts)"),
                },
                transient: true,
            }
        }
        status => Classified {
            status,
            ..classified
        },
    }
}

fn outcome(
    req: &AgentRequest<'_>,
    summary: StreamSummary,
    classified: Classified,
    duration: Duration,
) -> AgentOutcome {
    let mut final_message = summary.final_message();
    if base::text::truncate(&mut final_message, FINAL_MESSAGE_LIMIT) {
        final_message.push_str(&format!(
            "\n… (truncated; the full text is in {})",
            stream_path(req.transcript_path).display()
        ));
    }
    let session_id = summary.session_id();
    let notes = structured_output_missing(req, &summary)
        .into_iter()
        .collect();
    let mut outcome = AgentOutcome::new(classified.status, final_message, duration);
    outcome.session_id = session_id;
    outcome.notes = notes;
    if let Some(result) = summary.result {
        outcome.structured_output = result.structured_output;
        outcome.agent_turns = result.num_turns;
        outcome.permission_denials = result.permission_denials;
    }
    outcome
}

/// A verdict role whose session started without the `StructuredOutput` tool: Claude Code did
/// not accept `--json-schema` (it drops the tool silently), so the verdict can only be read
/// from the final message, unenforced.
fn structured_output_missing(req: &AgentRequest<'_>, summary: &StreamSummary) -> Option<String> {
    let init = summary.init.as_ref()?;
    if !req.wants_verdict || init.tools.iter().any(|t| t == args::STRUCTURED_OUTPUT_TOOL) {
        return None;
    }
    let note = format!(
        "claude started the verdict role `{}` without its {} tool, so --json-schema was not \
         enforced and the verdict is read from the final message instead; update Claude Code \
         (`{}@latest`) if this persists",
        req.role_name,
        args::STRUCTURED_OUTPUT_TOOL,
        status::INSTALL
    );
    tracing::warn!("{note}");
    Some(note)
}

/// Tokens and money of every attempt of one invocation.
#[derive(Debug, Default)]
struct Spent {
    usage: TokenUsage,
    cost_usd: Option<f64>,
}

impl Spent {
    fn add(&mut self, summary: &StreamSummary) {
        self.usage.add(summary.tokens());
        let cost = summary.result.as_ref().and_then(|r| r.cost_usd);
        self.cost_usd = base::cost::sum([self.cost_usd, cost]);
    }

    fn apply(self, mut outcome: AgentOutcome) -> AgentOutcome {
        outcome.usage = self.usage;
        outcome.cost_usd = self.cost_usd;
        outcome
    }
}
