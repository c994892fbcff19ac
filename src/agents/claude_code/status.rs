//! How a `claude` invocation ended, from its exit, its event stream and its stderr.
//!
//! Success needs all three to agree: exit code 0, a `result` event, and `is_error: false` —
//! an API failure can arrive as `subtype: "success"` with `is_error: true` and exit 0. Failures
//! users can act on are named (not logged in, rate limited, unknown model, max agent turns,
//! an outdated CLI), each as a one-line cause plus the fix. A read-only role whose session
//! reports a file-writing tool fails outright: the restriction did not hold.

use crate::agents::process::ProcessEnd;
use crate::agents::{AgentErrorClass, AgentStatus};
use crate::workflow::model::{Access, Role};

use super::args::ANY_WRITE_TOOLS;
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
    texts.push(stderr_tail);
    let said = texts.join("\n");
    let excerpt = excerpt(&texts);
    let lower = said.to_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|needle| lower.contains(needle));

    if has(&[
        "invalid api key",
        "/login",
        "authentication_error",
        "not logged in",
        "oauth token has expired",
        "invalid bearer token",
    ]) {
        return Classified::failed(
            AgentErrorClass::AuthMissing,
            format!(
                "claude is not logged in or its API key is invalid ({excerpt}); fix: set \
                 ANTHROPIC_API_KEY, or run `claude` once and log in with /login"
            ),
        );
    }
    if has(&["usage limit reached"]) {
        return Classified::failed(
            AgentErrorClass::RateLimited,
            format!(
                "the Claude usage limit of this account is reached ({excerpt}); fix: wait for \
                 it to reset, then `autobuild resume`, or use an API key"
            ),
        );
    }
    if has(&[
        "rate_limit",
        "rate limit",
        "too many requests",
        "api error: 429",
        "status 429",
    ]) {
        return Classified {
            status: AgentStatus::Failed {
                class: AgentErrorClass::RateLimited,
                message: format!(
                    "the Anthropic API rate-limited the request ({excerpt}); fix: wait, then \
                     `autobuild resume`, or run fewer tasks at once"
                ),
            },
            transient: true,
        };
    }
    if has(&["overloaded", "api error: 529", "status 529"]) {
        return Classified {
            status: AgentStatus::Failed {
                class: AgentErrorClass::ApiError,
                message: format!(
                    "the Anthropic API is overloaded ({excerpt}); fix: wait, then \
                     `autobuild resume`"
                ),
            },
            transient: true,
        };
    }
    if has(&[
        "not_found_error",
        "model not found",
        "invalid model",
        "may not exist or you may not have access",
    ]) {
        let model = role.model.as_deref().unwrap_or("(default)");
        return Classified::failed(
            AgentErrorClass::ModelNotFound,
            format!(
                "model `{model}` is unknown or not available to this account ({excerpt}); fix: \
                 set `model` of role `{role_name}` to one you can use (e.g. sonnet, opus), in \
                 .autobuild/config.toml or with --player-model/--coach-model"
            ),
        );
    }
    if has(&[
        "unknown option",
        "unknown argument",
        "invalid choice",
        "is invalid. allowed",
    ]) {
        return Classified::failed(
            AgentErrorClass::Other,
            format!(
                "this Claude Code does not accept autobuild's arguments ({excerpt}); fix: update \
                 it with `{INSTALL}@latest`"
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
                    "claude reported an error ({}): {excerpt}",
                    display_subtype(&result.subtype)
                ),
            )
        }
        _ => Classified::done(AgentStatus::from_process_end(end, stderr_tail)),
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
    let mut shown: String = line.chars().take(EXCERPT_CHARS).collect();
    if shown.len() < line.len() {
        shown.push('…');
    }
    format!("\"{shown}\"")
}

#[cfg(test)]
mod tests;
