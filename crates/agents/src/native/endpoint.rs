//! Where a native adapter sends its requests and with which credentials, from the role
//! (`base_url`, `api_key_env`, `headers`, `model`) and the environment.
//!
//! The key is read from the variable `api_key_env` names (default `OPENAI_API_KEY` or
//! `ANTHROPIC_API_KEY`), in the project environment first, then autobuild's own. It is
//! required when the role names the variable or talks to the provider's own API; a local
//! server (`base_url` set, no `api_key_env`) is asked without one when the variable is unset.

use model::workflow::model::Role;
use process::child_var;

use super::Dialect;

/// Everything needed to address the API.
#[derive(Debug, Clone)]
pub struct Endpoint {
    pub dialect: Dialect,
    /// Without a trailing `/`.
    pub base_url: String,
    pub model: String,
    /// The variable the key is read from (named in messages, never its value).
    pub key_var: String,
    pub key: Option<String>,
    pub headers: Vec<(String, String)>,
}

/// Why a role cannot reach its API; the message carries the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointProblem {
    NoModel(String),
    NoKey(String),
}

impl EndpointProblem {
    pub fn message(&self) -> &str {
        match self {
            EndpointProblem::NoModel(message) | EndpointProblem::NoKey(message) => message,
        }
    }
}

impl Endpoint {
    /// The endpoint of `role`, with variables looked up in `env` and then autobuild's own.
    pub fn of(
        dialect: Dialect,
        role_name: &str,
        role: &Role,
        env: &[(String, String)],
    ) -> Result<Endpoint, EndpointProblem> {
        let model = role
            .model
            .clone()
            .filter(|model| !model.trim().is_empty())
            .ok_or_else(|| {
                EndpointProblem::NoModel(format!(
                    "role `{role_name}` ({}) names no `model`; fix: set `model` under \
                     [roles.{role_name}] (the name the server lists at GET {}/models)",
                    dialect.kind(),
                    base_url(dialect, role)
                ))
            })?;
        let key_var = role
            .api_key_env
            .clone()
            .unwrap_or_else(|| dialect.default_key_var().to_string());
        let key = child_var(env, &key_var);
        let required = role.api_key_env.is_some() || role.base_url.is_none();
        if key.is_none() && required {
            return Err(EndpointProblem::NoKey(format!(
                "role `{role_name}` ({}): {key_var} is not set; fix: export {key_var} with the \
                 API key (or add it to [env] vars), or name the variable that holds it with \
                 `api_key_env` under [roles.{role_name}]",
                dialect.kind()
            )));
        }
        Ok(Endpoint {
            dialect,
            base_url: base_url(dialect, role),
            model,
            key_var,
            key,
            headers: role.headers.clone().into_iter().flatten().collect(),
        })
    }

    /// `base_url` joined with `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }

    /// The headers of every request: authentication, the API version, the role's own.
    pub fn request_headers(&self) -> Vec<(String, String)> {
        let mut headers = self.dialect.auth_headers(self.key.as_deref());
        headers.extend(self.headers.iter().cloned());
        headers
    }
}

/// The role's `base_url`, or the provider's own API, without a trailing `/`.
pub fn base_url(dialect: Dialect, role: &Role) -> String {
    role.base_url
        .as_deref()
        .unwrap_or(dialect.default_base_url())
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn role(extra: serde_json::Value) -> Role {
        let mut base = json!({"agent": "openai", "prompt": "player.md", "model": "m"});
        if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
            base.extend(extra.clone());
        }
        serde_json::from_value(base).unwrap()
    }

    #[test]
    fn a_local_server_needs_no_key_but_the_provider_and_a_named_variable_do() {
        let local = role(json!({"base_url": "http://127.0.0.1:11434/v1/"}));
        let endpoint = Endpoint::of(Dialect::OpenAi, "coach", &local, &[]).unwrap();
        assert_eq!(
            endpoint.url("chat/completions"),
            "http://127.0.0.1:11434/v1/chat/completions"
        );
        assert_eq!(endpoint.key, None);

        let named = role(json!({"base_url": "http://x/v1", "api_key_env": "AB_TEST_UNSET_KEY"}));
        let problem = Endpoint::of(Dialect::OpenAi, "coach", &named, &[]).unwrap_err();
        assert!(problem.message().contains("AB_TEST_UNSET_KEY is not set"));

        let env = [("AB_TEST_UNSET_KEY".to_string(), "sk-1234567890".to_string())];
        let endpoint = Endpoint::of(Dialect::OpenAi, "coach", &named, &env).unwrap();
        assert_eq!(endpoint.key.as_deref(), Some("sk-1234567890"));
        assert!(endpoint.request_headers().contains(&(
            "authorization".to_string(),
            "Bearer sk-1234567890".to_string()
        )));
    }

    #[test]
    fn a_role_without_a_model_is_refused() {
        let mut no_model = role(json!({"base_url": "http://x/v1"}));
        no_model.model = None;
        let problem = Endpoint::of(Dialect::Anthropic, "coach", &no_model, &[]).unwrap_err();
        assert!(matches!(problem, EndpointProblem::NoModel(_)));
        assert!(problem.message().contains("GET http://x/v1/models"));
    }
}
