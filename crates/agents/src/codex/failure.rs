//! What went wrong with a codex run, and what the user can do about it.
//!
//! codex reports failures as free text (in `turn.failed`, `error` events, `error` items, or on
//! stderr before the event stream even starts), so the class is recognised from well-known
//! phrases of the OpenAI API and the codex CLI — in the failure that ended the run only: codex
//! also prints notices (``Model metadata for `gpt-5-codex` not found. Defaulting to fallback
//! metadata``, "Reconnecting... 1/5") that name no failure, and those lines are never read as
//! one. The class decides the fix shown to the user and whether the invocation is retried: a
//! transient rate limit or a server error is; an exhausted quota, a billing problem or a plan's
//! usage limit is not, because seconds of waiting do not fix it.

use crate::AgentErrorClass;

/// The class of a failure described by `text`; `None` when no known cause is recognised.
pub fn classify(text: &str) -> Option<AgentErrorClass> {
    let text = without_notices(text).to_lowercase();
    let has = |needles: &[&str]| needles.iter().any(|needle| text.contains(needle));
    if has_status_code(&text, "402")
        || has(&[
            "usage limit",
            "usage_limit",
            "insufficient_quota",
            "exceeded your current quota",
            "quota exceeded",
            "billing",
            "credit balance",
            "payment required",
        ])
    {
        Some(AgentErrorClass::OutOfCredit)
    } else if has_status_code(&text, "429")
        || has(&["rate limit", "rate_limit", "ratelimit", "too many requests"])
    {
        Some(AgentErrorClass::RateLimited)
    } else if has(&[
        "401 unauthorized",
        "status 401",
        "unauthorized",
        "not logged in",
        "invalid_api_key",
        "incorrect api key",
        "invalid api key",
        "missing api key",
        "no api key",
        "missing bearer",
        "codex login",
        "access token could not be refreshed",
        "authentication",
    ]) {
        Some(AgentErrorClass::AuthMissing)
    } else if text.contains("model")
        && has(&[
            "model_not_found",
            "model not found",
            "does not exist",
            "not supported",
            "unknown model",
            "do not have access",
            "not available",
        ])
    {
        Some(AgentErrorClass::ModelNotFound)
    } else {
        None
    }
}

/// `text` without the lines that are codex notices rather than failures.
fn without_notices(text: &str) -> String {
    text.lines()
        .filter(|line| {
            let line = line.trim_start().to_lowercase();
            !line.contains("model metadata for") && !line.starts_with("reconnecting")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `code` appears in `text` as a number of its own (not inside `a4291` or `v1.429`).
fn has_status_code(text: &str, code: &str) -> bool {
    text.match_indices(code).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + code.len()..].chars().next();
        let separate = |c: Option<char>| c.is_none_or(|c| !c.is_alphanumeric() && c != '.');
        separate(before) && separate(after)
    })
}

/// Whether waiting a little and trying again can help: a rate limit, but not a spent quota.
pub fn is_transient_rate_limit(text: &str) -> bool {
    let text = without_notices(text).to_lowercase();
    classify(&text) == Some(AgentErrorClass::RateLimited)
        && !["usage limit", "usage_limit", "quota", "billing"]
            .iter()
            .any(|needle| text.contains(needle))
}

/// Whether the OpenAI side failed in a way a later attempt may not meet: a server error or
/// overload (codex 0.169 words a 500 "We're currently experiencing high demand").
pub fn is_server_error(text: &str) -> bool {
    let text = without_notices(text).to_lowercase();
    ["500", "502", "503", "504", "529"]
        .iter()
        .any(|code| has_status_code(&text, code))
        || [
            "high demand",
            "overloaded",
            "internal server error",
            "server_error",
            "server had an error",
            "service unavailable",
            "bad gateway",
        ]
        .iter()
        .any(|needle| text.contains(needle))
}

/// Whether another attempt after a pause may succeed where this one failed.
pub fn is_transient(text: &str) -> bool {
    is_transient_rate_limit(text) || (classify(text).is_none() && is_server_error(text))
}

/// How to fix a failure of `class` for the role `role_name` using `model`.
pub fn fix(class: AgentErrorClass, role_name: &str, model: Option<&str>) -> Option<String> {
    match class {
        AgentErrorClass::AuthMissing => Some(
            "sign codex in: run `codex login` (ChatGPT account), or store an API key with \
             `printenv OPENAI_API_KEY | codex login --with-api-key`, or give `codex exec` the \
             key in CODEX_API_KEY (it does not read OPENAI_API_KEY); then `autobuild resume <ID>`"
                .to_string(),
        ),
        AgentErrorClass::ModelNotFound => Some(format!(
            "{} is not available to codex with this account: set `model` of role `{role_name}` \
             to a model your codex offers (run `codex` and type /model to list them) under \
             [roles.{role_name}] in .autobuild/config.toml, or pass \
             --player-model/--coach-model{}; then `autobuild resume <ID>`",
            model.map_or("the default model".to_string(), |m| format!("model `{m}`")),
            if model.is_some_and(is_claude_model) {
                " (this name is a Claude model, probably inherited from a workflow written for \
                 claude-code)"
            } else {
                ""
            }
        )),
        AgentErrorClass::OutOfCredit => Some(
            "the OpenAI account's quota or credit, or the ChatGPT plan's usage limit, is spent: \
             add credit (platform.openai.com billing) or wait until the limit resets, then \
             `autobuild resume <ID>`"
                .to_string(),
        ),
        AgentErrorClass::RateLimited => Some(
            "the OpenAI rate limit was hit: wait and continue with `autobuild resume <ID>`, or \
             lower the run's concurrency"
                .to_string(),
        ),
        _ => None,
    }
}

/// Why `model` cannot be meant for codex, when its name alone says so: a Claude model, most
/// likely inherited from a workflow written for claude-code. For checks before a run starts.
pub fn unsuitable_model(model: &str) -> Option<String> {
    is_claude_model(model).then(|| {
        format!(
            "`{model}` is a Claude model, which codex cannot use; set `model` to an OpenAI model \
             your codex offers (run `codex` and type /model to list them) where the role \
             switches to `agent = \"codex\"`"
        )
    })
}

fn is_claude_model(model: &str) -> bool {
    let model = model.to_lowercase();
    model.starts_with("claude") || ["sonnet", "opus", "haiku"].contains(&model.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_the_common_causes() {
        let cases = [
            (
                "exceeded retry limit, last status: 429 Too Many Requests",
                Some(AgentErrorClass::RateLimited),
            ),
            (
                "You've hit your usage limit. Try again in 3 days.",
                Some(AgentErrorClass::OutOfCredit),
            ),
            (
                "Quota exceeded. Check your plan and billing details.",
                Some(AgentErrorClass::OutOfCredit),
            ),
            (
                "Model metadata for `gpt-5-codex` not found. Defaulting to fallback metadata; \
                 this can degrade performance and cause issues.\n\
                 We're currently experiencing high demand, which may cause temporary errors.",
                None,
            ),
            (
                "unexpected status 401 Unauthorized: Missing bearer authentication in header",
                Some(AgentErrorClass::AuthMissing),
            ),
            (
                "Not logged in. Run `codex login`.",
                Some(AgentErrorClass::AuthMissing),
            ),
            (
                "{\"detail\":\"The 'o3-mini' model is not supported when using Codex with a ChatGPT account.\"}",
                Some(AgentErrorClass::ModelNotFound),
            ),
            (
                "The model `gpt-9` does not exist or you do not have access to it.",
                Some(AgentErrorClass::ModelNotFound),
            ),
            ("stream disconnected before completion", None),
            ("file not found: src/a.rs", None),
            ("request a4291 took 1.429s", None),
        ];
        for (text, class) in cases {
            assert_eq!(classify(text), class, "{text}");
        }
    }

    #[test]
    fn only_a_rate_limit_is_worth_retrying() {
        assert!(is_transient_rate_limit("429 Too Many Requests"));
        assert!(is_transient_rate_limit(
            "Rate limit reached for gpt-5-codex"
        ));
        assert!(!is_transient_rate_limit(
            "You've hit your usage limit. Try again in 3 days."
        ));
        assert!(!is_transient_rate_limit(
            "429: You exceeded your current quota, please check your plan and billing details"
        ));
        assert!(!is_transient_rate_limit("401 Unauthorized"));
    }

    #[test]
    fn server_errors_are_transient_notices_are_not_failures() {
        let after_notice = "Model metadata for `gpt-5-codex` not found. Defaulting to fallback \
                            metadata\nWe're currently experiencing high demand, which may cause \
                            temporary errors.";
        assert!(is_transient(after_notice));
        assert!(is_transient("unexpected status 503 Service Unavailable"));
        assert!(is_transient("429 Too Many Requests"));
        assert!(!is_transient(
            "Quota exceeded. Check your plan and billing details."
        ));
        assert!(!is_transient("stream disconnected before completion"));
        assert!(!is_transient("unexpected status 401 Unauthorized"));
        assert!(!is_server_error("request a5003 took 1.500s"));
    }

    #[test]
    fn fixes_name_the_role_and_the_model() {
        let fix_text = fix(AgentErrorClass::ModelNotFound, "coach", Some("sonnet")).unwrap();
        assert!(fix_text.contains("model `sonnet`"), "{fix_text}");
        assert!(fix_text.contains("[roles.coach]"), "{fix_text}");
        assert!(fix_text.contains("Claude model"), "{fix_text}");
        let fix_text = fix(AgentErrorClass::ModelNotFound, "player", Some("o3-mini")).unwrap();
        assert!(!fix_text.contains("Claude"), "{fix_text}");
        assert!(fix(AgentErrorClass::AuthMissing, "player", None)
            .unwrap()
            .contains("codex login"));
        assert_eq!(fix(AgentErrorClass::NonZeroExit, "player", None), None);
    }

    #[test]
    fn claude_models_are_unsuitable() {
        for model in ["sonnet", "Opus", "haiku", "claude-sonnet-4-5"] {
            assert!(unsuitable_model(model).is_some(), "{model}");
        }
        for model in ["gpt-5-codex", "o3", "my-sonnet-finetune"] {
            assert_eq!(unsuitable_model(model), None, "{model}");
        }
    }
}
