//! What `doctor` says about a native role: whether its endpoint answers and serves the model,
//! and for an `openai` verdict role, which structured output the server takes (module
//! `format`), found with one-token requests and bounded by [`DOCTOR_TIMEOUT`] each.

use std::time::Duration;

use serde_json::{json, Value};

use super::conversation::{Exchange, Message};
use super::endpoint::{Endpoint, EndpointProblem};
use super::format::Format;
use super::{accepts, failure, format, http, openai, Dialect};
use crate::Finding;
use model::workflow::model::Role;

/// How long `doctor` waits for each request to the endpoint.
const DOCTOR_TIMEOUT: Duration = Duration::from_secs(5);

/// Whether the endpoint answers `GET {base_url}/models` and lists the role's model, and for
/// an `openai` verdict role, how the server takes a verdict's structured output.
pub fn diagnose(
    dialect: Dialect,
    role_name: &str,
    role: &Role,
    env: &[(String, String)],
) -> Vec<Finding> {
    let listed = models_finding(dialect, role_name, role, env);
    let probe = match Endpoint::of(dialect, role_name, role, env) {
        Ok(endpoint) if listed.ok && dialect == Dialect::OpenAi && role.output.is_some() => {
            Some(format_finding(&listed.subject, &endpoint))
        }
        _ => None,
    };
    std::iter::once(listed).chain(probe).collect()
}

/// How `endpoint` takes a verdict: asked at each level of module `format` in turn with a
/// one-token request, as a run would; the answer is remembered for the rest of this process.
fn format_finding(subject: &str, endpoint: &Endpoint) -> Finding {
    let finding = |detail: String| Finding {
        ok: true,
        subject: subject.to_string(),
        detail,
        fix: String::new(),
    };
    let schema = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
    let mut level = accepts::of(&endpoint.base_url, &endpoint.model).format;
    let settle = |level: Format| {
        let mut accepted = accepts::of(&endpoint.base_url, &endpoint.model);
        accepted.format = level;
        accepts::remember(&endpoint.base_url, &endpoint.model, accepted);
        finding(format!("verdicts: {}", level.taken()))
    };
    loop {
        if level == Format::Plain {
            return settle(level);
        }
        let body = openai::request_body(&Exchange {
            model: &endpoint.model,
            system: "",
            messages: &[Message::User(
                "Answer with the JSON {\"ok\": true}.".to_string(),
            )],
            tools: &[],
            verdict_schema: Some(&schema),
            format: level,
            max_tokens: Some(1),
            tool_choice: None,
            stream: false,
            cache_key: None,
        });
        let request = http::Request {
            method: "POST",
            url: endpoint.url(openai::CHAT_PATH),
            headers: endpoint.request_headers(),
            body: Some(http::Body::json(body.to_string())),
        };
        let answer = match http::send(&request, DOCTOR_TIMEOUT) {
            Ok(answer) => answer,
            Err(problem) => return finding(format!("verdict format not checked: {problem}")),
        };
        if (200..300).contains(&answer.status) {
            return settle(level);
        }
        if !format::refused(answer.status, &answer.body) {
            return finding(format!(
                "verdict format not checked: {} answered {}: {}",
                request.url,
                answer.status,
                failure::message_of(&answer.body)
            ));
        }
        level = level.next().unwrap_or(Format::Plain);
    }
}

/// Whether the endpoint answers `GET {base_url}/models` and lists the role's model.
fn models_finding(
    dialect: Dialect,
    role_name: &str,
    role: &Role,
    env: &[(String, String)],
) -> Finding {
    let subject = format!("role {role_name} ({})", dialect.kind());
    let finding = |ok: bool, detail: String, fix: String| Finding {
        ok,
        subject: subject.clone(),
        detail,
        fix,
    };
    let endpoint = match Endpoint::of(dialect, role_name, role, env) {
        Ok(endpoint) => endpoint,
        Err(EndpointProblem::NoKey(message) | EndpointProblem::NoModel(message)) => {
            let (detail, fix) = message.split_once("; fix: ").unwrap_or((&message, ""));
            return finding(false, detail.to_string(), fix.to_string());
        }
    };
    let url = endpoint.url("models");
    let request = http::Request {
        method: "GET",
        url: url.clone(),
        headers: endpoint.request_headers(),
        body: None,
    };
    let answer = match http::send(&request, DOCTOR_TIMEOUT) {
        Ok(answer) => answer,
        Err(problem) => {
            return finding(
                false,
                format!("cannot reach {}: {problem}", endpoint.base_url),
                format!(
                    "start the server at {} (e.g. `ollama serve`), or fix `base_url` under \
                     [roles.{role_name}]",
                    endpoint.base_url
                ),
            )
        }
    };
    if !(200..300).contains(&answer.status) {
        let verdict = failure::classify(answer.status, &answer.body);
        return finding(
            false,
            format!(
                "GET {url} answered {}: {}",
                answer.status,
                failure::message_of(&answer.body)
            ),
            failure::fix(verdict.class, role_name, &endpoint).unwrap_or_default(),
        );
    }
    let listed = serde_json::from_str::<Value>(&answer.body)
        .map(|body| openai::model_names(&body))
        .unwrap_or_default();
    if listed.iter().any(|name| serves(name, &endpoint.model)) {
        finding(
            true,
            format!(
                "{} answers and serves `{}`",
                endpoint.base_url, endpoint.model
            ),
            String::new(),
        )
    } else {
        finding(
            false,
            format!(
                "{} answers, but does not list model `{}` (it lists: {})",
                endpoint.base_url,
                endpoint.model,
                if listed.is_empty() {
                    "nothing".to_string()
                } else {
                    listed.join(", ")
                }
            ),
            failure::fix(crate::AgentErrorClass::ModelNotFound, role_name, &endpoint)
                .unwrap_or_default(),
        )
    }
}

/// Whether a server listing `listed` serves `model`: the same name, a tag of it (Ollama lists
/// `qwen2.5-coder:latest` for `qwen2.5-coder`) or a dated snapshot of an alias (Anthropic
/// lists `claude-sonnet-4-5-20250929` for `claude-sonnet-4-5`).
fn serves(listed: &str, model: &str) -> bool {
    listed.strip_prefix(model).is_some_and(|rest| {
        let snapshot = rest
            .strip_prefix('-')
            .is_some_and(|date| date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()));
        rest.is_empty() || rest.starts_with(':') || snapshot
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_tag_or_snapshot_serves_the_model() {
        assert!(serves("qwen2.5-coder", "qwen2.5-coder"));
        assert!(serves("qwen2.5-coder:latest", "qwen2.5-coder"));
        assert!(serves("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"));
        assert!(!serves("qwen2.5-coder", "qwen2.5"));
        assert!(!serves("qwen2.5-coder-7b", "qwen2.5-coder:7b"));
    }
}
