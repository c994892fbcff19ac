//! The agent loop: ask the model, run the tools it calls, give it their results, until it
//! answers without calling a tool — or returns its verdict — or a bound ends the invocation.
//!
//! One *agent turn* is one answer of the model; `max_agent_turns` answers are allowed, and a
//! model still calling tools in its last one fails with `max_turns`. A request that meets a
//! rate limit, a server error or a broken connection is retried after the adapter's delays
//! (longer when the server's `Retry-After` says so) while the role's `timeout` leaves time for
//! it; any other error answer ends the invocation with its class and fix (module `failure`).
//! The request and what its answer means are module `ask`.

mod ask;

use std::time::{Duration, Instant};

use serde_json::{json, Value};

use super::accepts;
use super::anthropic::VERDICT_TOOL;
use super::conversation::{Exchange, Message, Reply, ToolResult};
use super::endpoint::{Endpoint, EndpointProblem};
use super::format::Format;
use super::http::{self, Bounds, Stop};
use super::max_tokens::default_max_tokens;
use super::tools::{self, Done, Shell};
use super::transcript::Transcript;
use super::{failure, tool_log_dir, Dialect};
use crate::pricing::{self, TokenCounts};
use crate::{
    empty, schema, AgentError, AgentErrorClass, AgentOutcome, AgentRequest, AgentStatus,
    DEFAULT_AGENT_TIMEOUT,
};
use ask::Asked;
use model::workflow::model::ToolChoice;
use process::{CancelToken, Redactor};

/// Answers a role may get when it sets no `max_agent_turns`.
pub const DEFAULT_MAX_TURNS: u32 = 100;
/// The longest `Retry-After` honoured; a longer one fails the request as it is.
pub(super) const MAX_RETRY_AFTER: Duration = Duration::from_secs(120);

/// What every native agent is told before the role's own system prompt.
const PREAMBLE: &str = "You are working in a git repository; every path you use is relative \
to its root, and you cannot reach files outside it. Use the tools to inspect and change it. \
When you are done, answer with a short summary of what you did, without calling a tool.";

/// Runs one invocation to its end; `Err` only when its transcript cannot be written.
pub fn run(
    dialect: Dialect,
    retry_delays: &[Duration],
    req: &AgentRequest<'_>,
    cancel: &CancelToken,
) -> Result<AgentOutcome, AgentError> {
    let started = Instant::now();
    let endpoint = match Endpoint::of(dialect, req.role_name, req.role, req.env) {
        Ok(endpoint) => endpoint,
        Err(problem) => {
            let class = match problem {
                EndpointProblem::NoKey(_) => AgentErrorClass::AuthMissing,
                EndpointProblem::NoModel(_) => AgentErrorClass::ModelNotFound,
            };
            let status = AgentStatus::Failed {
                class,
                message: problem.message().to_string(),
            };
            return Ok(AgentOutcome::new(status, String::new(), started.elapsed()));
        }
    };
    let mut secrets = req.env.to_vec();
    if let Some(key) = &endpoint.key {
        secrets.push(("AUTOBUILD_NATIVE_API_KEY".to_string(), key.clone()));
    }
    let transcript =
        Transcript::create(req.transcript_path, Redactor::new(&secrets)).map_err(|source| {
            AgentError::Transcript {
                role: req.role_name.to_string(),
                path: req.transcript_path.to_path_buf(),
                source,
            }
        })?;
    let verdict_schema = req
        .wants_verdict
        .then(|| schema::for_cli(req.verdict_schema).ok())
        .flatten()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok());
    let mut session = Session {
        dialect,
        retry_delays,
        req,
        endpoint,
        transcript,
        bounds: Bounds {
            deadline: started + req.role.timeout.unwrap_or(DEFAULT_AGENT_TIMEOUT),
            idle: req.role.idle_timeout,
        },
        spent: Spent::default(),
        verdict_schema,
        // Tools compare paths with the worktree as the filesystem resolves it.
        worktree: req
            .worktree
            .canonicalize()
            .unwrap_or_else(|_| req.worktree.to_path_buf()),
    };
    let mut outcome = session.converse(cancel);
    outcome.duration = started.elapsed();
    if let Some(problem) = session.transcript.problem() {
        tracing::warn!("native agent transcript incomplete: {problem}");
    }
    Ok(outcome)
}

/// What the invocation has used so far.
#[derive(Debug, Default)]
struct Spent {
    tokens: TokenCounts,
    cost_usd: Option<f64>,
    /// Some answer's tokens had no price.
    unpriced: bool,
    turns: u32,
    denials: Vec<String>,
    notes: Vec<String>,
}

struct Session<'a> {
    dialect: Dialect,
    retry_delays: &'a [Duration],
    req: &'a AgentRequest<'a>,
    endpoint: Endpoint,
    transcript: Transcript,
    bounds: Bounds,
    spent: Spent,
    verdict_schema: Option<Value>,
    worktree: std::path::PathBuf,
}

impl Session<'_> {
    fn converse(&mut self, cancel: &CancelToken) -> AgentOutcome {
        let role = self.req.role;
        let offered = tools::offered(role);
        let specs = tools::specs(&offered);
        let system = match &role.system_prompt {
            Some(extra) => format!("{PREAMBLE}\n\n{extra}"),
            None => PREAMBLE.to_string(),
        };
        let max_turns = role.max_agent_turns.unwrap_or(DEFAULT_MAX_TURNS);
        let max_tokens = role
            .max_tokens
            .or_else(|| default_max_tokens(self.dialect, &self.endpoint.base_url));
        let mut messages = vec![Message::User(self.req.prompt.to_string())];
        let mut calls_run = 0;
        let mut last_text = String::new();
        let (base_url, model) = (&self.endpoint.base_url, &self.endpoint.model);
        let mut accepts = accepts::of(base_url, model);
        // One key per task and role: their prompts share the longest prefixes.
        let cache_key = format!("autobuild:{}:{}", self.req.task_id, self.req.role_name);
        // The next answer is asked for whole, because its stream broke.
        let mut unstreamed = false;
        if self.verdict_schema.is_some() && accepts.format != Format::JsonSchema {
            self.spent.notes.push(accepts.format.note().to_string());
        }
        loop {
            let body = self.dialect.request_body(&Exchange {
                model: &self.endpoint.model,
                system: &system,
                messages: &messages,
                tools: &specs,
                verdict_schema: self.verdict_schema.as_ref(),
                format: accepts.format,
                max_tokens,
                // `required` forces a tool call in the first answer only, so the model can
                // still finish with a text answer later.
                tool_choice: role.tool_choice.map(|choice| match self.spent.turns {
                    0 => choice,
                    _ => ToolChoice::Auto,
                }),
                stream: accepts.stream && self.dialect == Dialect::OpenAi && !unstreamed,
                cache_key: (accepts.cache_key && self.dialect == Dialect::OpenAi)
                    .then_some(cache_key.as_str()),
            });
            let reply = match self.ask(&body, cancel) {
                Ok(reply) => reply,
                Err(Asked::Ended(status)) => return self.outcome(status, last_text, None),
                Err(Asked::FormatRefused) => {
                    // A refused `Plain` has no `response_format`, so is never `FormatRefused`.
                    accepts.format = accepts.format.next().unwrap_or(Format::Plain);
                    self.fall_back(accepts, "format_fallback", accepts.format.note());
                    self.spent
                        .notes
                        .retain(|note| !note.contains("response_format"));
                    self.spent.notes.push(accepts.format.note().to_string());
                    continue;
                }
                Err(Asked::StreamBroken(why)) if !unstreamed => {
                    unstreamed = true;
                    self.transcript.record(&json!({
                        "event": "stream_broken",
                        "turn": self.spent.turns + 1,
                        "note": format!("{why}; asking again without streaming, for the \
                                         server's reason"),
                    }));
                    continue;
                }
                Err(Asked::StreamBroken(why)) => {
                    let status = self.failed(AgentErrorClass::ApiError, why);
                    return self.outcome(status, last_text, None);
                }
                Err(Asked::CacheKeyRefused) => {
                    accepts.cache_key = false;
                    self.fall_back(
                        accepts,
                        "cache_key_fallback",
                        "the server does not take `prompt_cache_key`: asked without",
                    );
                    continue;
                }
                Err(Asked::StreamRefused) => {
                    accepts.stream = false;
                    self.fall_back(
                        accepts,
                        "stream_fallback",
                        "the server does not take `stream`: answers are asked for whole",
                    );
                    continue;
                }
            };
            unstreamed = false;
            self.spent.turns += 1;
            self.count(&reply);
            last_text = reply.text.clone();
            // OpenAI's `length`, Anthropic's `max_tokens`: the answer is cut off, so neither
            // its text nor its tool calls are whole.
            if matches!(reply.stop_reason.as_deref(), Some("length" | "max_tokens")) {
                let status = AgentStatus::Failed {
                    class: AgentErrorClass::Other,
                    message: format!(
                        "the model's answer was cut off at {} and is incomplete; fix: raise \
                         `max_tokens` of role `{}` (and the server's context, if it is \
                         smaller), or give it a smaller task",
                        match max_tokens {
                            Some(limit) => format!("max_tokens ({limit})"),
                            None => "the server's output limit".to_string(),
                        },
                        self.req.role_name
                    ),
                };
                return self.outcome(status, last_text, None);
            }
            if let Some(verdict) = reply.calls.iter().find(|call| call.name == VERDICT_TOOL) {
                if let (Some(_), Ok(input)) = (&self.verdict_schema, &verdict.arguments) {
                    return self.outcome(
                        AgentStatus::Succeeded,
                        input.to_string(),
                        Some(input.clone()),
                    );
                }
            }
            if reply.calls.is_empty() {
                let structured: Option<Value> = self
                    .verdict_schema
                    .as_ref()
                    .and_then(|_| serde_json::from_str(reply.text.trim()).ok());
                let left = empty::Left {
                    text: &reply.text,
                    structured: structured.is_some(),
                    acted: calls_run > 0,
                };
                let status = match empty::answered_nothing(left) {
                    true => empty::failure(self.spent.tokens.output_tokens),
                    false => AgentStatus::Succeeded,
                };
                return self.outcome(status, reply.text, structured);
            }
            if self.spent.turns >= max_turns {
                let status = AgentStatus::Failed {
                    class: AgentErrorClass::MaxTurns,
                    message: format!(
                        "the model was still calling tools after max_agent_turns ({max_turns}) \
                         answers; fix: raise `max_agent_turns` of role `{}`, or give it a \
                         smaller task",
                        self.req.role_name
                    ),
                };
                return self.outcome(status, last_text, None);
            }
            let mut results = Vec::new();
            for call in &reply.calls {
                if let Some(stop) = self.bounds.check(cancel, Instant::now()) {
                    return self.outcome(stopped(stop), last_text, None);
                }
                calls_run += 1;
                let shell = Shell {
                    worktree: &self.worktree,
                    env: self.req.env,
                    run_dir: self.req.run_dir,
                    log_dir: tool_log_dir(self.req.transcript_path),
                    sandbox: self.req.sandbox,
                    left: self.bounds.left(),
                    idle: self.bounds.idle,
                };
                let done = tools::run(call, &offered, &shell, calls_run, cancel);
                let (status, content, is_error) = match done {
                    Done::Ok(text) => ("ok", text, false),
                    Done::Failed(text) => ("failed", text, true),
                    Done::Refused(text) => {
                        self.spent.denials.push(format!("{}: {text}", call.name));
                        ("refused", format!("refused: {text}"), true)
                    }
                };
                self.transcript.record(&json!({
                    "event": "tool_result",
                    "turn": self.spent.turns,
                    "call_id": call.id,
                    "tool": call.name,
                    "status": status,
                    "content": content,
                }));
                results.push(ToolResult {
                    call_id: call.id.clone(),
                    content: self.transcript.redact(&content),
                    is_error,
                });
            }
            messages.push(Message::Assistant {
                text: reply.text,
                calls: reply.calls,
            });
            messages.push(Message::Results(results));
        }
    }

    /// Remembers what the server was found to take, now `accepts`, for the rest of the run,
    /// and records the step down as `event` in the transcript.
    fn fall_back(&mut self, accepts: accepts::Accepts, event: &str, note: &str) {
        accepts::remember(&self.endpoint.base_url, &self.endpoint.model, accepts);
        self.transcript.record(&json!({
            "event": event,
            "turn": self.spent.turns + 1,
            "note": note,
        }));
    }

    /// Adds an answer's tokens and cost, and records the answer.
    fn count(&mut self, reply: &Reply) {
        let tokens = reply.usage;
        self.spent.tokens.add(tokens);
        let model = &self.endpoint.model;
        let cost = if http::is_loopback(&self.endpoint.base_url) {
            Some(pricing::cost(
                pricing::local_price(model, self.req.pricing),
                tokens,
            ))
        } else {
            pricing::estimate(Some(model), tokens, self.req.pricing)
        };
        match cost {
            Some(cost) => self.spent.cost_usd = Some(self.spent.cost_usd.unwrap_or(0.0) + cost),
            None if tokens != TokenCounts::default() => self.spent.unpriced = true,
            None => {}
        }
        self.transcript.record(&json!({
            "event": "answer",
            "turn": self.spent.turns,
            "text": reply.text,
            "calls": reply.calls.iter().map(|call| json!({
                "id": call.id,
                "tool": call.name,
                "arguments": call.raw_arguments,
                // As autobuild read them (`null` when they are not JSON).
                "input": call.arguments.as_ref().ok(),
            })).collect::<Vec<_>>(),
            "stop_reason": reply.stop_reason,
            "tokens": {
                "input": tokens.input_tokens,
                "cached_input": tokens.cached_input_tokens,
                "output": tokens.output_tokens,
            },
            "cost_usd": cost,
        }));
    }

    fn failed(&self, class: AgentErrorClass, message: String) -> AgentStatus {
        let fix = failure::fix(class, self.req.role_name, &self.endpoint);
        AgentStatus::failed_with(class, message, fix)
    }

    fn outcome(
        &mut self,
        status: AgentStatus,
        final_message: String,
        structured_output: Option<Value>,
    ) -> AgentOutcome {
        self.transcript.record(&json!({
            "event": "end",
            "status": status.name(),
            "message": status.message(),
            "turns": self.spent.turns,
        }));
        let spent = &self.spent;
        if spent.unpriced {
            tracing::warn!(
                role = self.req.role_name,
                "no token price for model `{}`: this run's cost is not counted; add \
                 [pricing.\"{}\"] to .autobuild/config.toml",
                self.endpoint.model,
                self.endpoint.model
            );
        }
        let cost_usd = spent.cost_usd.filter(|_| !spent.unpriced);
        let mut outcome = AgentOutcome::new(status, final_message, Duration::ZERO);
        outcome.structured_output = structured_output;
        outcome.usage = spent.tokens.into();
        outcome.cost_usd = cost_usd;
        outcome.cost_estimated = cost_usd.is_some();
        outcome.agent_turns = Some(spent.turns);
        outcome.permission_denials = spent.denials.clone();
        outcome.notes = spent.notes.clone();
        outcome
    }
}

fn stopped(stop: Stop) -> AgentStatus {
    match stop {
        Stop::Cancelled => AgentStatus::Cancelled,
        Stop::TimedOut => AgentStatus::TimedOut,
        Stop::IdleTimedOut => AgentStatus::IdleTimedOut { detail: None },
    }
}
