//! The native adapters: autobuild itself runs the agent loop against a model's HTTP API —
//! `openai` (chat completions: OpenAI, and the local servers that speak it: Ollama, llama.cpp,
//! vLLM, LM Studio) and `anthropic` (the Messages API). See docs/native-http.md.
//!
//! Because autobuild runs every tool call itself (module `tools`), the role's tool allowlist
//! and read-only access hold *before* anything runs: a tool that is not offered is refused,
//! a read-only role is never offered a writing tool, and no path outside the worktree is
//! touched. The loop (module `session`) is bounded like a process adapter: `max_agent_turns`
//! answers, the role's `timeout`, the idle watchdog (no answer for `idle_timeout`), and
//! cancellation. Rate limits and server errors are retried after a pause; a key the API
//! refuses, an account out of credit or a model the endpoint does not serve stop the run with
//! the fix (module `failure`). Tokens are priced from `[pricing]` (module
//! [`crate::pricing`]).

mod accepts;
mod anthropic;
mod conversation;
mod doctor;
mod endpoint;
mod failure;
mod format;
pub mod http;
pub mod http_error;
mod max_tokens;
mod openai;
mod reply_error;
mod session;
mod stream;
mod tools;
mod transcript;

use std::path::Path;
use std::time::Duration;

use base::Keyword;
use serde_json::Value;

use super::description::Description;
use super::{Adapter, AgentError, AgentOutcome, AgentRequest, Capabilities, CostGap, Finding};
use conversation::{Exchange, Reply};
use endpoint::Endpoint;
use model::project::config::PriceTable;
use model::workflow::model::{AgentKind, Role};
use process::CancelToken;

/// Waits before retrying a rate-limited or failed request; one retry per entry.
pub const DEFAULT_RETRY_DELAYS: [Duration; 3] = [
    Duration::from_secs(2),
    Duration::from_secs(10),
    Duration::from_secs(30),
];

/// How long the dry run waits for a connection to a server on this machine.
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The `openai` adapter's facts (module [`super::description`]): it starts no program; its
/// key is the variable `api_key_env` names, by default the secret a CI job passes.
pub static OPENAI: Description = Description {
    kind: AgentKind::Openai,
    program: None,
    install_hint: "",
    package: None,
    secrets: &["OPENAI_API_KEY"],
    credentials: None,
    login: None,
    adapter: || Box::new(NativeAdapter::new(Dialect::OpenAi)),
};

/// The `anthropic` adapter's facts, as [`OPENAI`]'s.
pub static ANTHROPIC: Description = Description {
    kind: AgentKind::Anthropic,
    program: None,
    install_hint: "",
    package: None,
    secrets: &["ANTHROPIC_API_KEY"],
    credentials: None,
    login: None,
    adapter: || Box::new(NativeAdapter::new(Dialect::Anthropic)),
};

/// Which API a native adapter speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    OpenAi,
    Anthropic,
}

impl Dialect {
    pub fn kind(self) -> AgentKind {
        self.description().kind
    }

    /// The adapter's facts.
    pub fn description(self) -> &'static Description {
        match self {
            Dialect::OpenAi => &OPENAI,
            Dialect::Anthropic => &ANTHROPIC,
        }
    }

    fn default_base_url(self) -> &'static str {
        match self {
            Dialect::OpenAi => "https://api.openai.com/v1",
            Dialect::Anthropic => "https://api.anthropic.com/v1",
        }
    }

    /// The variable the key is read from unless the role's `api_key_env` names another: the
    /// secret a CI job passes.
    fn default_key_var(self) -> &'static str {
        self.description().secrets[0]
    }

    fn path(self) -> &'static str {
        match self {
            Dialect::OpenAi => openai::CHAT_PATH,
            Dialect::Anthropic => anthropic::MESSAGES_PATH,
        }
    }

    fn auth_headers(self, key: Option<&str>) -> Vec<(String, String)> {
        let mut headers = Vec::new();
        match self {
            Dialect::OpenAi => {
                if let Some(key) = key {
                    headers.push(("authorization".to_string(), format!("Bearer {key}")));
                }
            }
            Dialect::Anthropic => {
                if let Some(key) = key {
                    headers.push(("x-api-key".to_string(), key.to_string()));
                }
                headers.push((
                    "anthropic-version".to_string(),
                    anthropic::API_VERSION.to_string(),
                ));
            }
        }
        headers
    }

    fn request_body(self, exchange: &Exchange<'_>) -> Value {
        match self {
            Dialect::OpenAi => openai::request_body(exchange),
            Dialect::Anthropic => anthropic::request_body(exchange),
        }
    }

    fn parse_reply(self, body: &Value) -> Result<Reply, reply_error::ReplyError> {
        match self {
            Dialect::OpenAi => openai::parse_reply(body),
            Dialect::Anthropic => anthropic::parse_reply(body),
        }
    }

    /// How a verdict comes back, for the dry run.
    fn verdict_by(self) -> &'static str {
        match self {
            Dialect::OpenAi => "response_format=json_schema",
            Dialect::Anthropic => "verdict-tool",
        }
    }
}

pub struct NativeAdapter {
    dialect: Dialect,
    retry_delays: Vec<Duration>,
}

impl NativeAdapter {
    pub fn new(dialect: Dialect) -> NativeAdapter {
        NativeAdapter::with_retry_delays(dialect, DEFAULT_RETRY_DELAYS.to_vec())
    }

    /// An adapter that retries a rate-limited or failed request once after each of `delays`
    /// (or the server's `Retry-After`, when longer).
    pub fn with_retry_delays(dialect: Dialect, delays: Vec<Duration>) -> NativeAdapter {
        NativeAdapter {
            dialect,
            retry_delays: delays,
        }
    }
}

impl Adapter for NativeAdapter {
    fn description(&self) -> &'static Description {
        self.dialect.description()
    }

    /// Every tool call is run by autobuild, so the allowlist and read-only access are enforced
    /// before a tool runs; verdicts are asked for with a schema.
    fn capabilities(&self) -> Capabilities {
        Capabilities {
            enforces_tool_allowlist: true,
            enforces_read_only: true,
            structured_output: true,
        }
    }

    fn preflight(&self, role_name: &str, role: &Role, env: &[(String, String)]) -> Vec<String> {
        match Endpoint::of(self.dialect, role_name, role, env) {
            Ok(_) => Vec::new(),
            Err(problem) => vec![problem.message().to_string()],
        }
    }

    /// The APIs report tokens only: the cost is known when `[pricing]` or the built-in table
    /// has the model's price, and for a server on this machine, which is free unless
    /// `[pricing]` names the model.
    fn unpriced(&self, role_name: &str, role: &Role, pricing: &PriceTable) -> Option<CostGap> {
        let model = role.model.as_deref()?;
        if http::is_loopback(&endpoint::base_url(self.dialect, role)) {
            return None;
        }
        super::pricing::price_of(model, Some(pricing))
            .is_none()
            .then(|| super::pricing::missing_price(role_name, model))
    }

    fn diagnose(&self, role_name: &str, role: &Role, env: &[(String, String)]) -> Vec<Finding> {
        doctor::diagnose(self.dialect, role_name, role, env)
    }

    /// A server on this machine that accepts no connection is said to be down (a remote API
    /// is not contacted: the dry run sends nothing off the machine).
    fn dry_run_notes(&self, role_name: &str, role: &Role) -> Vec<String> {
        let base_url = endpoint::base_url(self.dialect, role);
        if !http::is_loopback(&base_url) {
            return Vec::new();
        }
        match http::connect_probe(&base_url, PROBE_TIMEOUT) {
            Ok(()) => Vec::new(),
            Err(problem) => vec![format!(
                "endpoint down: {problem}; start the server, or fix `base_url` under \
                 [roles.{role_name}] (`autobuild doctor` checks it)"
            )],
        }
    }

    fn command_line(&self, req: &AgentRequest<'_>) -> Vec<String> {
        let role = req.role;
        let tools: Vec<&str> = tools::offered(role).iter().map(|t| t.as_str()).collect();
        let mut line = vec![
            "POST".to_string(),
            format!(
                "{}/{}",
                endpoint::base_url(self.dialect, role),
                self.dialect.path()
            ),
            format!("model={}", role.model.as_deref().unwrap_or("(none)")),
            format!("tools={}", tools.join(",")),
        ];
        if req.wants_verdict {
            line.push(format!("verdict={}", self.dialect.verdict_by()));
        }
        line
    }

    fn invoke(
        &self,
        req: &AgentRequest<'_>,
        cancel: &CancelToken,
    ) -> Result<AgentOutcome, AgentError> {
        session::run(self.dialect, &self.retry_delays, req, cancel)
    }
}

/// Where the full output of each `bash` call of the invocation logged at `transcript` is kept.
fn tool_log_dir(transcript: &Path) -> std::path::PathBuf {
    transcript.with_extension("tools")
}
