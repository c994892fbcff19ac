//! Claude Code's machine-readable error fields, and what they say about a failure.
//!
//! Claude Code labels a failed API call three ways, all more reliable than its prose (which
//! changes between versions: "API Error: 429 …" became "API Error: Request rejected (429) · …"):
//!
//! - the synthetic assistant message it prints for the failure carries a top-level `error`
//!   label (`authentication_failed`, `billing_error`, `rate_limit`, `model_not_found`, …);
//! - the `result` event carries the HTTP status as `api_error_status`;
//! - each `system`/`api_retry` event (Claude Code retrying on its own) carries `error_status`
//!   and the same `error` label.
//!
//! A label wins over a status, and a status over text; text is only the fallback (module
//! `status`). The same fields decide, line by line while claude runs, whether its output is
//! progress for the idle watchdog: a retry notice is not, and a retry of a refused credential
//! or an unpaid bill is hopeless — claude would otherwise retry it for minutes.

use serde_json::Value;

use process::LineSignal;

/// What went wrong with an API call, per the labels and statuses above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiFailure {
    /// The credentials were refused or are missing.
    Auth,
    /// Billing failed or the account is on hold.
    Billing,
    ModelNotFound,
    /// A rate or usage limit; whether waiting seconds helps is for the text to say.
    RateLimit,
    /// The API is overloaded (529): waiting a little helps.
    Overloaded,
    /// Another server error, which Claude Code already retried on its own.
    Server,
    /// The request itself was refused (not transient, not the credentials).
    InvalidRequest,
}

/// A `system`/`api_retry` event: Claude Code is retrying a failed call on its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ApiRetry {
    pub attempt: Option<u64>,
    pub error_status: Option<u16>,
    /// The label of the failure, like an assistant message's `error`.
    pub error: Option<String>,
}

impl ApiRetry {
    pub fn from_event(event: &serde_json::Map<String, Value>) -> ApiRetry {
        ApiRetry {
            attempt: event.get("attempt").and_then(Value::as_u64),
            error_status: status_of(event.get("error_status")),
            error: event
                .get("error")
                .and_then(Value::as_str)
                .map(str::to_string),
        }
    }

    /// What the failure being retried is.
    pub fn failure(&self) -> Option<ApiFailure> {
        classify(self.error.as_deref(), self.error_status)
    }
}

/// The failure a label or else a status describes.
pub fn classify(label: Option<&str>, status: Option<u16>) -> Option<ApiFailure> {
    label
        .and_then(from_label)
        .or_else(|| status.and_then(from_status))
}

fn from_label(label: &str) -> Option<ApiFailure> {
    Some(match label {
        "authentication_failed"
        | "oauth_org_not_allowed"
        | "invalid_grant"
        | "cloud_credential_error" => ApiFailure::Auth,
        "billing_error" | "account_on_hold" => ApiFailure::Billing,
        "model_not_found" => ApiFailure::ModelNotFound,
        "rate_limit" => ApiFailure::RateLimit,
        "overloaded" => ApiFailure::Overloaded,
        "server_error" => ApiFailure::Server,
        "invalid_request" => ApiFailure::InvalidRequest,
        // `unknown`, `max_output_tokens` and labels a later version adds say nothing we act on.
        _ => return None,
    })
}

fn from_status(status: u16) -> Option<ApiFailure> {
    Some(match status {
        401 | 403 => ApiFailure::Auth,
        402 => ApiFailure::Billing,
        404 => ApiFailure::ModelNotFound,
        429 => ApiFailure::RateLimit,
        400 | 413 => ApiFailure::InvalidRequest,
        529 => ApiFailure::Overloaded,
        500..=599 => ApiFailure::Server,
        _ => return None,
    })
}

/// An HTTP status given as a number or a numeric string.
pub fn status_of(value: Option<&Value>) -> Option<u16> {
    match value? {
        Value::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// One line of claude's stream-json output, for the idle watchdog: a retry is no progress, and
/// a retry of refused credentials or billing is hopeless.
pub fn judge_line(line: &str) -> LineSignal {
    let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
        return LineSignal::Progress;
    };
    let is_retry = event.get("type").and_then(Value::as_str) == Some("system")
        && event.get("subtype").and_then(Value::as_str) == Some("api_retry");
    if !is_retry {
        return LineSignal::Progress;
    }
    match ApiRetry::from_event(&event).failure() {
        Some(ApiFailure::Auth | ApiFailure::Billing) => LineSignal::Hopeless,
        _ => LineSignal::Waiting,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_label_wins_over_a_status() {
        assert_eq!(
            classify(Some("authentication_failed"), Some(500)),
            Some(ApiFailure::Auth)
        );
        assert_eq!(
            classify(Some("unknown"), Some(402)),
            Some(ApiFailure::Billing)
        );
        assert_eq!(classify(None, Some(529)), Some(ApiFailure::Overloaded));
        assert_eq!(classify(None, Some(503)), Some(ApiFailure::Server));
        assert_eq!(classify(None, Some(404)), Some(ApiFailure::ModelNotFound));
        assert_eq!(classify(Some("max_output_tokens"), None), None);
        assert_eq!(classify(None, None), None);
    }

    #[test]
    fn retries_are_waiting_and_refused_credentials_hopeless() {
        let retry = |status: u16, error: &str| {
            json!({"type": "system", "subtype": "api_retry", "attempt": 2, "max_retries": 10,
                   "retry_delay_ms": 1200, "error_status": status, "error": error,
                   "session_id": "s"})
            .to_string()
        };
        assert_eq!(judge_line(&retry(529, "overloaded")), LineSignal::Waiting);
        assert_eq!(judge_line(&retry(429, "rate_limit")), LineSignal::Waiting);
        assert_eq!(
            judge_line(&retry(401, "authentication_failed")),
            LineSignal::Hopeless
        );
        assert_eq!(judge_line(&retry(402, "unknown")), LineSignal::Hopeless);
        let assistant = json!({"type": "assistant", "message": {"content": []}}).to_string();
        assert_eq!(judge_line(&assistant), LineSignal::Progress);
        assert_eq!(judge_line("not json"), LineSignal::Progress);
    }

    #[test]
    fn statuses_may_be_strings() {
        assert_eq!(status_of(Some(&json!("429"))), Some(429));
        assert_eq!(status_of(Some(&json!(401))), Some(401));
        assert_eq!(status_of(Some(&json!(null))), None);
    }
}
