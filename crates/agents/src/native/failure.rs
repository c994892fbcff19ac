//! What an error answer of the API means, whether trying again may help, and the fix.
//!
//! 401/403 are a key the API does not accept; 402, an exhausted quota (OpenAI's 429
//! `insufficient_quota`) or a too-low credit balance (Anthropic's 400) are out of credit; a 404
//! or 400 about the model is a model the endpoint does not serve (Ollama: "model … not found,
//! try pulling it first"). These stop the run (`AgentErrorClass::stops_run`). A 429 is a rate
//! limit and a 5xx (or Anthropic's 529 "overloaded") a server error: both are retried.
//! A prompt that does not fit in the model's context (llama-server's 500 "Context size has
//! been exceeded.", llama-cpp-python's and OpenAI's 400 `context_length_exceeded`) is not
//! retried, whatever the status: the same prompt fails the same way; its fix names the
//! server's setting to raise.

use super::endpoint::Endpoint;
use crate::AgentErrorClass;

/// How an error answer is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Verdict {
    pub class: AgentErrorClass,
    pub retry: bool,
    /// The prompt did not fit in the model's context, and which server said so.
    pub context: Option<ContextServer>,
}

/// Whose words said the context was exceeded, so the fix names its setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextServer {
    /// llama.cpp's `llama-server` ("Context size has been exceeded.", "exceeds the available
    /// context size").
    LlamaServer,
    /// `context_length_exceeded` / "maximum context length" (llama-cpp-python, OpenAI, vLLM).
    ContextLength,
}

/// Whether `body` says the prompt did not fit in the model's context.
fn context_exceeded(lower: &str) -> Option<ContextServer> {
    if lower.contains("context size has been exceeded")
        || lower.contains("exceeds the available context size")
    {
        Some(ContextServer::LlamaServer)
    } else if lower.contains("context_length_exceeded") || lower.contains("maximum context length")
    {
        Some(ContextServer::ContextLength)
    } else {
        None
    }
}

/// The fix for a prompt that did not fit in the context of `model` at `base_url`.
pub fn context_fix(server: ContextServer, role_name: &str, base_url: &str) -> String {
    let raise = match server {
        ContextServer::LlamaServer => {
            format!("restart the llama-server at {base_url} with a larger `--ctx-size` (`-c`)")
        }
        ContextServer::ContextLength => format!(
            "give the server at {base_url} a larger context (llama-cpp-python: `--n_ctx`; \
             llama-server: `--ctx-size`; Ollama: `num_ctx`), or use a model with a longer one"
        ),
    };
    format!("{raise}, or give role `{role_name}` a smaller task or a lower `max_tokens`")
}

/// The class of an answer with `status` (not 2xx) and `body`.
pub fn classify(status: u16, body: &str) -> Verdict {
    let lower = body.to_lowercase();
    let says = |words: &[&str]| words.iter().any(|word| lower.contains(word));
    let out_of_credit = says(&[
        "insufficient_quota",
        "credit balance",
        "billing",
        "exceeded your current quota",
    ]);
    let about_model = lower.contains("model")
        && says(&[
            "not found",
            "not_found",
            "does not exist",
            "model_not_found",
            "unknown model",
        ]);
    let context = context_exceeded(&lower);
    let (class, retry) = match status {
        _ if context.is_some() => (AgentErrorClass::ApiError, false),
        401 | 403 => (AgentErrorClass::AuthMissing, false),
        402 => (AgentErrorClass::OutOfCredit, false),
        _ if out_of_credit => (AgentErrorClass::OutOfCredit, false),
        429 => (AgentErrorClass::RateLimited, true),
        404 | 400 if about_model => (AgentErrorClass::ModelNotFound, false),
        500..=599 => (AgentErrorClass::ApiError, true),
        _ => (AgentErrorClass::ApiError, false),
    };
    Verdict {
        class,
        retry,
        context,
    }
}

/// The fix for a failure of `class`, in the words of the role's configuration.
pub fn fix(class: AgentErrorClass, role_name: &str, endpoint: &Endpoint) -> Option<String> {
    let Endpoint {
        key_var,
        model,
        base_url,
        ..
    } = endpoint;
    match class {
        AgentErrorClass::AuthMissing => Some(format!(
            "check the API key in {key_var} (the variable `api_key_env` of role `{role_name}` \
             names): the endpoint {base_url} refused it"
        )),
        AgentErrorClass::OutOfCredit => Some(format!(
            "add credit or raise the quota of the account whose key is in {key_var}, or use \
             another endpoint for role `{role_name}`"
        )),
        AgentErrorClass::ModelNotFound => Some(format!(
            "set `model` of role `{role_name}` to a model {base_url} serves (GET \
             {base_url}/models lists them; with Ollama, `ollama pull {model}`)"
        )),
        AgentErrorClass::ApiError | AgentErrorClass::RateLimited => Some(format!(
            "check that the server at {base_url} is running and answers (`autobuild doctor`)"
        )),
        _ => None,
    }
}

/// The error text of an answer body: `error.message` when it is JSON, else the body, cut short.
pub fn message_of(body: &str) -> String {
    let from_json = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|value| {
            let error = value.get("error")?;
            error
                .get("message")
                .and_then(|m| m.as_str())
                .or_else(|| error.as_str())
                .map(str::to_string)
        });
    let text = from_json.unwrap_or_else(|| body.trim().to_string());
    base::text::elide(&text, 500)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_and_bodies_map_to_classes() {
        let class = |status, body| classify(status, body);
        assert_eq!(class(401, "").class, AgentErrorClass::AuthMissing);
        assert_eq!(class(403, "").class, AgentErrorClass::AuthMissing);
        assert_eq!(class(402, "").class, AgentErrorClass::OutOfCredit);
        let quota = r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#;
        assert_eq!(
            class(429, quota),
            Verdict {
                class: AgentErrorClass::OutOfCredit,
                retry: false,
                context: None,
            }
        );
        assert_eq!(
            class(429, "slow down"),
            Verdict {
                class: AgentErrorClass::RateLimited,
                retry: true,
                context: None,
            }
        );
        let ollama = r#"{"error":{"message":"model \"qwen9\" not found, try pulling it first"}}"#;
        assert_eq!(class(404, ollama).class, AgentErrorClass::ModelNotFound);
        assert_eq!(class(404, "no such route").class, AgentErrorClass::ApiError);
        let low = r#"{"type":"error","error":{"type":"invalid_request_error","message":"Your credit balance is too low"}}"#;
        assert_eq!(class(400, low).class, AgentErrorClass::OutOfCredit);
        assert!(class(529, "overloaded").retry);
        assert!(!class(400, "bad request").retry);
        let llama_server = r#"{"error":{"code":500,"message":"Context size has been exceeded.","type":"server_error"}}"#;
        assert_eq!(
            class(500, llama_server),
            Verdict {
                class: AgentErrorClass::ApiError,
                retry: false,
                context: Some(ContextServer::LlamaServer),
            }
        );
        let llama_cpp_python = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 2561 tokens (2049 in the messages, 512 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#;
        assert_eq!(
            class(400, llama_cpp_python).context,
            Some(ContextServer::ContextLength)
        );
        assert!(!class(400, llama_cpp_python).retry);
        assert!(context_fix(ContextServer::LlamaServer, "coach", "u").contains("--ctx-size"));
        assert!(context_fix(ContextServer::ContextLength, "coach", "u").contains("--n_ctx"));
        assert_eq!(
            message_of(ollama),
            "model \"qwen9\" not found, try pulling it first"
        );
    }
}
