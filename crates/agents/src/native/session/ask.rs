//! One answer of the model: the request, its retries, and what the server's answer means — a
//! reply (whole or streamed), a refusal of something the request asked for (the verdict's
//! `response_format`, `stream`), or a failure to retry or to end the invocation with.

use std::time::Duration;

use base::Keyword;
use serde_json::{json, Value};

use super::{Session, MAX_RETRY_AFTER};
use crate::native::conversation::Reply;
use crate::native::failure::{self, ContextServer};
use crate::native::http::{self, Answer, Failure, Stop};
use crate::native::reply_error::ReplyError;
use crate::native::{format, stream};
use crate::{pause, AgentErrorClass, AgentStatus};
use process::CancelToken;

/// Why no answer came.
pub(super) enum Asked {
    /// The invocation ends with this status.
    Ended(AgentStatus),
    /// The server does not take the `response_format` asked: ask again with the next level.
    FormatRefused,
    /// The server does not take `stream`: ask again without.
    StreamRefused,
    /// The server does not take `prompt_cache_key`: ask again without.
    CacheKeyRefused,
    /// The stream ended before the answer did, which says nothing of why (llama-cpp-python
    /// ends it so when the prompt does not fit in the context): ask this answer again without
    /// streaming, whose error answer says why.
    StreamBroken(String),
}

/// An attempt that brought no reply, and whether another may.
struct Problem {
    class: AgentErrorClass,
    message: String,
    retry: bool,
    retry_after: Option<Duration>,
    /// The prompt did not fit in the model's context.
    context: Option<ContextServer>,
}

impl Problem {
    fn unreadable(message: String, retry: bool) -> Problem {
        Problem {
            class: AgentErrorClass::ApiError,
            message,
            retry,
            retry_after: None,
            context: None,
        }
    }
}

impl Session<'_> {
    /// One answer of the model, retried while the failure is transient and time is left.
    pub(super) fn ask(&mut self, body: &Value, cancel: &CancelToken) -> Result<Reply, Asked> {
        let request = http::Request {
            method: "POST",
            url: self.endpoint.url(self.dialect.path()),
            headers: self.endpoint.request_headers(),
            body: Some(http::Body::json(body.to_string())),
        };
        let mut attempt = 0;
        loop {
            let problem = match http::exchange(request.clone(), &self.bounds, cancel) {
                Ok(answer) => match self.read(&request.url, body, &answer) {
                    Read::Reply(reply) => return Ok(reply),
                    Read::Problem(problem) => problem,
                    Read::Refused(refused) => return Err(refused),
                },
                Err(Failure::Stopped(stop)) => {
                    return Err(Asked::Ended(self.stopped_waiting(stop, &request.url)))
                }
                Err(Failure::Transport(problem)) => Problem::unreadable(problem.to_string(), true),
            };
            let Problem {
                class,
                message,
                retry,
                retry_after,
                context,
            } = problem;
            let delay = self
                .retry_delays
                .get(attempt)
                .map(|delay| retry_after.map_or(*delay, |after| after.max(*delay)))
                .filter(|delay| retry && *delay <= MAX_RETRY_AFTER && *delay < self.bounds.left());
            self.transcript.record(&json!({
                "event": "error",
                "turn": self.spent.turns + 1,
                "class": class.as_str(),
                "message": message,
                "retry_in_ms": delay.map(|d| d.as_millis() as u64),
            }));
            let Some(delay) = delay else {
                let message = if attempt > 0 {
                    format!("{message} (gave up after {} attempts)", attempt + 1)
                } else {
                    message
                };
                let (role, url) = (self.req.role_name, &self.endpoint.base_url);
                return Err(Asked::Ended(match context {
                    Some(server) => {
                        let fix = failure::context_fix(server, role, url);
                        AgentStatus::failed_with(class, message, Some(fix))
                    }
                    None => self.failed(class, message),
                }));
            };
            tracing::warn!(
                role = self.req.role_name,
                "{message}; retrying in {}",
                humantime::format_duration(delay)
            );
            if !pause(delay, cancel) {
                return Err(Asked::Ended(AgentStatus::Cancelled));
            }
            attempt += 1;
        }
    }

    /// What `answer` to the request `body` sent to `url` means.
    fn read(&self, url: &str, body: &Value, answer: &Answer) -> Read {
        let text = &answer.body;
        if !(200..300).contains(&answer.status) {
            return Read::error(url, body, answer.status, text, answer.retry_after);
        }
        if !stream::is_stream(answer) {
            return match serde_json::from_str::<Value>(text)
                .map_err(|e| ReplyError::NotJson(e.to_string()))
                .and_then(|value| self.dialect.parse_reply(&value))
            {
                Ok(reply) => Read::Reply(reply),
                Err(why) => Read::Problem(Problem::unreadable(
                    format!("{url} gave an answer autobuild cannot read: {why}"),
                    false,
                )),
            };
        }
        match stream::parse(text) {
            Ok(reply) => Read::Reply(reply),
            // An error in the stream is the server's error answer, sent after its 200.
            Err(stream::StreamError::Server(error)) => Read::error(url, body, 500, &error, None),
            Err(stream::StreamError::Broken(why)) => {
                let cut = answer
                    .cut
                    .as_ref()
                    .map(|cut| format!(" ({cut})"))
                    .unwrap_or_default();
                Read::Refused(Asked::StreamBroken(format!(
                    "{url} ended its stream early: {why}{cut}"
                )))
            }
        }
    }

    /// The status of an invocation whose wait for `url` a bound ended.
    fn stopped_waiting(&self, stop: Stop, url: &str) -> AgentStatus {
        match (stop, self.bounds.idle) {
            (Stop::IdleTimedOut, Some(idle)) => AgentStatus::IdleTimedOut {
                detail: Some(format!(
                    "{url} sent nothing for {} (the role's `idle_timeout`); the request was \
                     abandoned and its connection closed",
                    humantime::format_duration(idle)
                )),
            },
            _ => super::stopped(stop),
        }
    }
}

/// What an answer means.
enum Read {
    Reply(Reply),
    Problem(Problem),
    Refused(Asked),
}

impl Read {
    /// What an error answer (`status` not 2xx) of `url` to the request `body` means: a refusal
    /// of what the request asked for, so it is asked again without, or a problem.
    fn error(
        url: &str,
        body: &Value,
        status: u16,
        text: &str,
        retry_after: Option<Duration>,
    ) -> Read {
        if body.get("response_format").is_some() && format::refused(status, text) {
            return Read::Refused(Asked::FormatRefused);
        }
        if body.get("stream").is_some() && stream::refused(status, text) {
            return Read::Refused(Asked::StreamRefused);
        }
        if body.get("prompt_cache_key").is_some()
            && status >= 400
            && text.to_lowercase().contains("prompt_cache_key")
        {
            return Read::Refused(Asked::CacheKeyRefused);
        }
        let verdict = failure::classify(status, text);
        Read::Problem(Problem {
            class: verdict.class,
            message: format!("{url} answered {status}: {}", failure::message_of(text)),
            retry: verdict.retry,
            retry_after,
            context: verdict.context,
        })
    }
}
