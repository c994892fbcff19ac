//! How a `claude` invocation ended, from its exit, its event stream and its stderr.
//!
//! Success needs all three to agree: exit code 0, a `result` event, and `is_error: false` —
//! an API failure can arrive as `subtype: "success"` with `is_error: true` and exit 0. Failures
//! users can act on are named (not logged in, out of credit or at a plan's usage limit, rate
//! limited, unknown model, max agent turns, an outdated CLI), each as a one-line cause plus the
//! fix. The machine-readable fields decide the cause when present (module `signals`); the
//! error texts only when they are not. A read-only role whose session reports a file-writing
//! tool fails outright: the restriction did not hold.

use crate::{AgentErrorClass, AgentStatus};
use model::workflow::model::{Access, Role};
use process::ProcessEnd;

use super::args::ANY_WRITE_TOOLS;
use super::signals::{self, ApiFailure};
use super::stream::StreamSummary;

/// Characters of an error text quoted in a failure message.
const EXCERPT_CHARS: usize = 300;

/// The install command shown when `claude` is missing or outdated.
pub const INSTALL: &str = "npm install -g @anthropic-ai/claude-code";

/// The status of one invocation, and whether trying again soon may help.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Classified {
    pub status: AgentStatus,
    /// A transient API condition (rate limit, overload): worth another attempt after a pause.
    pub transient: bool,
}

impl Classified {
    fn done(status: AgentStatus) -> Classified {
        Classified {
            status,
            transient: false,
        }
    }

    fn failed(class: AgentErrorClass, message: String) -> Classified {
        Classified::done(AgentStatus::Failed { class, message })
    }
}

pub fn classify(
    end: ProcessEnd,
    summary: &StreamSummary,
    stderr_tail: &str,
    role_name: &str,
    role: &Role,
) -> Classified {
    if matches!(
        end,
        ProcessEnd::TimedOut | ProcessEnd::IdleTimedOut | ProcessEnd::Cancelled
    ) {
        return Classified::done(AgentStatus::from_process_end(end, stderr_tail));
    }
    if let Some(problem) = write_tools_granted(summary, role_name, role) {
        return Classified::failed(AgentErrorClass::Other, problem);
    }
    let result = summary.result.as_ref();
    if let Some(result) = result.filter(|r| r.subtype == "error_max_turns") {
        let limit = role
            .max_agent_turns
            .or(result.num_turns)
            .map_or_else(String::new, |n| format!(" ({n})"));
        return Classified::failed(
            AgentErrorClass::MaxTurns,
            format!(
                "claude stopped at its agent turn limit{limit} before finishing; fix: raise \
                 `max_agent_turns` of role `{role_name}`, or split the task"
            ),
        );
    }
    let exited_cleanly = end == ProcessEnd::Exited(0);
    match result {
        // Only `success` is success: another subtype (a budget or retry limit, or one a future
        // CLI adds) with `is_error: false` is still not a finished turn.
        Some(result) if exited_cleanly && !result.is_error && result.subtype == "success" => {
            return Classified::done(AgentStatus::Succeeded)
        }
        None if exited_cleanly => {
            return Classified::failed(
                AgentErrorClass::Other,
                "claude exited without a final `result` event, so its output is incomplete; \
                 see the transcript"
                    .to_string(),
            )
        }
        _ => {}
    }

    let mut texts: Vec<&str> = Vec::new();
    if let Some(result) = result {
        // The result text is an error message only when the CLI says so; otherwise it is the
        // agent's own answer, which may well talk about logins or rate limits.
        if result.is_error {
            texts.extend(result.text.as_deref());
        }
        texts.extend(result.errors.iter().map(String::as_str));
    }
    if let Some(api_error) = &summary.api_error {
        texts.extend(api_error.text.as_deref());
    }
    texts.push(stderr_tail);
    let said = texts.join("\n").to_lowercase();
    let cx = Context {
        excerpt: excerpt(&texts),
        role_name,
        model: role.model.as_deref().unwrap_or("(default)"),
        retried: retry_that_ended_it(end, summary),
    };
    if let Some(failure) = machine_failure(end, summary).or_else(|| text_failure(&said)) {
        return describe(failure, &said, &cx);
    }
    if has(
        &said,
        &[
            "unknown option",
            "unknown argument",
            "invalid choice",
            "is invalid. allowed",
        ],
    ) {
        return Classified::failed(
            AgentErrorClass::Other,
            format!(
                "this Claude Code does not accept autobuild's arguments ({}); fix: update \
                 it with `{INSTALL}@latest`",
                cx.excerpt
            ),
        );
    }
    match result {
        Some(result) if result.is_error || result.subtype != "success" => {
            let class = if result.subtype == "success" {
                AgentErrorClass::ApiError
            } else {
                AgentErrorClass::Other
            };
            Classified::failed(
                class,
                format!(
                    "claude reported an error ({}): {}",
                    display_subtype(&result.subtype),
                    cx.excerpt
                ),
            )
        }
        _ => Classified::done(AgentStatus::from_process_end(end, stderr_tail)),
    }
}

/// What a failure message needs besides the failure.
struct Context<'a> {
    excerpt: String,
    role_name: &'a str,
    model: &'a str,
    /// Claude Code was stopped while retrying a call itself: its status.
    retried: Option<u16>,
}

fn has(said: &str, needles: &[&str]) -> bool {
    needles.iter().any(|needle| said.contains(needle))
}

/// The failure the machine-readable fields name: the failed call's label, else the result's
/// HTTP status, else — when claude was stopped or died while retrying, so nothing else
/// followed — the retry being attempted.
fn machine_failure(end: ProcessEnd, summary: &StreamSummary) -> Option<ApiFailure> {
    let label = summary.api_error.as_ref().map(|e| e.label.as_str());
    let status = summary.result.as_ref().and_then(|r| r.api_error_status);
    signals::classify(label, status).or_else(|| {
        let retry = summary.last_retry.as_ref()?;
        let retrying_at_the_end = end == ProcessEnd::Aborted || summary.result.is_none();
        retrying_at_the_end.then(|| retry.failure()).flatten()
    })
}

/// The status of the retry claude was stopped in, if that is how it ended.
fn retry_that_ended_it(end: ProcessEnd, summary: &StreamSummary) -> Option<u16> {
    let retry = summary.last_retry.as_ref()?;
    (end == ProcessEnd::Aborted)
        .then_some(retry.error_status)
        .flatten()
}

/// The failure the error texts describe, for versions or paths without the fields.
fn text_failure(said: &str) -> Option<ApiFailure> {
    if has(
        said,
        &[
            "invalid api key",
            "/login",
            "authentication_error",
            "authentication_failed",
            "failed to authenticate",
            "not logged in",
            "oauth token has expired",
            "invalid bearer token",
            "invalid x-api-key",
        ],
    ) {
        Some(ApiFailure::Auth)
    } else if has(
        said,
        &[
            "credit balance is too low",
            "billing_error",
            "billing error",
        ],
    ) {
        Some(ApiFailure::Billing)
    } else if has(said, PLAN_LIMIT)
        || has(
            said,
            &[
                "rate_limit",
                "rate limit",
                "too many requests",
                "api error: 429",
                "status 429",
                "(429)",
            ],
        )
    {
        Some(ApiFailure::RateLimit)
    } else if has(
        said,
        &["overloaded", "api error: 529", "status 529", "(529)"],
    ) {
        Some(ApiFailure::Overloaded)
    } else if has(
        said,
        &[
            "not_found_error",
            "model not found",
            "invalid model",
            "may not exist or you may not have access",
        ],
    ) {
        Some(ApiFailure::ModelNotFound)
    } else {
        None
    }
}

/// Words of a plan's usage limit ("You've hit your session limit · resets 3pm", "Claude AI
/// usage limit reached"): a rate limit that waiting seconds does not lift.
const PLAN_LIMIT: &[&str] = &[
    "usage limit",
    "session limit",
    "weekly limit",
    "hit your",
    "5-hour limit",
];

/// The status, message and fix for a recognised failure.
fn describe(failure: ApiFailure, said: &str, cx: &Context<'_>) -> Classified {
    let excerpt = &cx.excerpt;
    let stopped = match cx.retried {
        Some(status) => format!(
            " (autobuild stopped claude while it retried a call the API had refused with \
             status {status})"
        ),
        None => String::new(),
    };
    let transient = |class, message| Classified {
        status: AgentStatus::Failed { class, message },
        transient: true,
    };
    match failure {
        ApiFailure::Auth => Classified::failed(
            AgentErrorClass::AuthMissing,
            format!(
                "claude is not logged in or its credentials were refused ({excerpt}){stopped}; \
                 fix: set ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN), or log in with \
                 `claude auth login` (or /login inside `claude`), then `autobuild resume <ID>`"
            ),
        ),
        ApiFailure::Billing => Classified::failed(
            AgentErrorClass::OutOfCredit,
            format!(
                "the Anthropic account is out of credit or its billing failed \
                 ({excerpt}){stopped}; fix: add credit or fix the payment method in the \
                 Anthropic Console (or use another key), then `autobuild resume <ID>`"
            ),
        ),
        ApiFailure::RateLimit if has(said, PLAN_LIMIT) => Classified::failed(
            AgentErrorClass::OutOfCredit,
            format!(
                "the usage limit of this Claude plan is reached ({excerpt}); fix: wait until it \
                 resets (the message says when), then `autobuild resume <ID>`, or use an API key"
            ),
        ),
        ApiFailure::RateLimit => transient(
            AgentErrorClass::RateLimited,
            format!(
                "the Anthropic API rate-limited the request ({excerpt}); fix: wait, then \
                 `autobuild resume <ID>`, or run fewer tasks at once"
            ),
        ),
        ApiFailure::Overloaded => transient(
            AgentErrorClass::ApiError,
            format!(
                "the Anthropic API is overloaded ({excerpt}); fix: wait, then \
                 `autobuild resume <ID>`"
            ),
        ),
        ApiFailure::Server => Classified::failed(
            AgentErrorClass::ApiError,
            format!("the Anthropic API failed the request ({excerpt}), after claude's own retries"),
        ),
        ApiFailure::InvalidRequest => Classified::failed(
            AgentErrorClass::ApiError,
            format!("the Anthropic API refused the request as invalid ({excerpt})"),
        ),
        ApiFailure::ModelNotFound => Classified::failed(
            AgentErrorClass::ModelNotFound,
            format!(
                "model `{}` is unknown or not available to this account ({excerpt}); fix: set \
                 `model` of role `{}` to one you can use (e.g. sonnet, opus), in \
                 .autobuild/config.toml or with --player-model/--coach-model",
                cx.model, cx.role_name
            ),
        ),
    }
}

/// A read-only role must not have a file-writing tool in its session.
fn write_tools_granted(summary: &StreamSummary, role_name: &str, role: &Role) -> Option<String> {
    if role.access != Access::ReadOnly {
        return None;
    }
    let init = summary.init.as_ref()?;
    let granted: Vec<&str> = init
        .tools
        .iter()
        .map(String::as_str)
        .filter(|tool| ANY_WRITE_TOOLS.contains(tool))
        .collect();
    if granted.is_empty() {
        return None;
    }
    Some(format!(
        "read-only role `{role_name}` was given file-writing tools by claude ({}) despite \
         --tools/--disallowedTools; fix: update Claude Code (`{INSTALL}@latest`) and check the \
         `permissions` of ~/.claude/settings.json and .claude/settings.json",
        granted.join(", ")
    ))
}

fn display_subtype(subtype: &str) -> &str {
    if subtype.is_empty() {
        "no subtype"
    } else {
        subtype
    }
}

/// The first non-blank line of the first text that has one, shortened.
fn excerpt(texts: &[&str]) -> String {
    let line = texts
        .iter()
        .flat_map(|text| text.lines())
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("no error text");
    format!("\"{}\"", base::text::elide(line, EXCERPT_CHARS))
}

#[cfg(test)]
mod tests;
