//! The typed workflow model: what a workflow file means once it has been parsed, merged and
//! validated. Every other part of autobuild (the engine, `--dry-run`, `workflows show`) works
//! on these types, never on raw TOML or YAML.
//!
//! The model serializes back to TOML (`workflow.resolved.toml`, `workflows show --resolved`)
//! with the same field names users write.

use std::collections::BTreeMap;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::profile::Requirement;
pub use crate::workflow::kinds::Action;
pub use git::MergeStrategy;
pub use role_key::RoleKey;

mod role_key;

/// The only workflow schema version this build understands.
pub const SCHEMA_VERSION: u32 = 1;

/// A complete workflow: inputs, roles, limits and an ordered list of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Workflow {
    pub schema: u32,
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Name of a workflow this one patches (deep merge on top of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extends: Option<String>,
    /// Name of a built-in workflow this one deliberately replaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub inputs: BTreeMap<String, Input>,
    #[serde(default)]
    pub limits: Limits,
    /// Adjustments of the profile gate for this workflow.
    #[serde(default, skip_serializing_if = "GateConfig::is_empty")]
    pub gate: GateConfig,
    #[serde(default)]
    pub roles: BTreeMap<String, Role>,
    pub steps: Vec<Step>,
}

/// A declared workflow input, readable in expressions as `inputs.<name>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Input {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    #[serde(default)]
    pub required: bool,
}

/// Run-level hard caps. Absent means "no cap"; zero is never a way to say unlimited.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    #[serde(
        default,
        with = "opt_duration",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<opt_duration::Written>")]
    pub max_wall_time: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cost_usd: Option<f64>,
}

/// How the workflow's gate treats the task profile's requirements.
///
/// A workflow without a reviewing role (such as the shipped `solo`) cannot ever satisfy a
/// `coach` requirement; it says so explicitly with `waive = ["coach"]` instead of the gate
/// silently skipping requirements it cannot check. Validation rejects a workflow that has no
/// role with `output = "verdict"` and does not waive `coach`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateConfig {
    /// Profile requirements this workflow does not check.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub waive: Vec<Requirement>,
}

impl GateConfig {
    pub fn is_empty(&self) -> bool {
        self.waive.is_empty()
    }
}

/// A named agent configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Role {
    pub agent: AgentKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Prompt template name, looked up along the prompts path (`player.md`).
    pub prompt: String,
    /// Extra system prompt text appended to the agent's own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    #[serde(default)]
    pub tools: Vec<Tool>,
    #[serde(default)]
    pub access: Access,
    /// What the role must return; `verdict` makes its output a coach verdict (docs/verdicts.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_agent_turns: Option<u32>,
    #[serde(
        default,
        with = "opt_duration",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<opt_duration::Written>")]
    pub timeout: Option<Duration>,
    /// Kill the agent when it prints nothing for this long.
    #[serde(
        default,
        with = "opt_duration",
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<opt_duration::Written>")]
    pub idle_timeout: Option<Duration>,
    /// Program and arguments for the `command` adapter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Globs of the only paths this role may change (absent: any path that is not protected).
    /// The runner reverts changes elsewhere after the step (see `steps::scope`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub writes: Option<Vec<String>>,
    /// Endpoint of the native HTTP adapters (`openai`, `anthropic`), e.g.
    /// `http://127.0.0.1:11434/v1`; absent: the provider's own API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_url: Option<String>,
    /// The variable holding the API key of a native HTTP adapter (never the key itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_key_env: Option<String>,
    /// Extra HTTP headers a native HTTP adapter sends with every request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<std::collections::BTreeMap<String, String>>,
    /// The most tokens a native HTTP adapter's model may generate in one answer (default 8192
    /// for Anthropic and servers on this machine, none for a remote OpenAI-compatible API); an
    /// answer cut off there fails the turn as truncated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Whether a native HTTP adapter's model must call a tool: `required` forces a tool call in
    /// its first answer (a local model that never calls one on its own), later answers are
    /// free to finish; `auto` (the default) leaves it to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

/// Which adapter drives a role.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::Display,
    strum::EnumString,
    strum::IntoStaticStr,
    strum::VariantNames,
    strum::EnumIter,
)]
#[serde(rename_all = "kebab-case")]
#[strum(serialize_all = "kebab-case")]
pub enum AgentKind {
    ClaudeCode,
    Codex,
    Command,
    /// The native adapter over an OpenAI-compatible chat-completions API.
    Openai,
    /// The native adapter over the Anthropic Messages API.
    Anthropic,
}

/// The fixed tool vocabulary; each adapter maps it to its native tool names.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::Display,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Tool {
    Read,
    Write,
    Edit,
    Bash,
    Grep,
    Glob,
    Web,
}

impl Tool {
    /// Tools that modify files directly.
    pub fn writes(self) -> bool {
        matches!(self, Tool::Write | Tool::Edit)
    }
}

/// A native HTTP adapter's `tool_choice` (docs/native-http.md).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ToolChoice {
    #[default]
    Auto,
    Required,
}

/// Whether a role may change the worktree. Read-only is enforced by the adapter and audited.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Serialize,
    Deserialize,
    JsonSchema,
    strum::IntoStaticStr,
)]
#[strum(serialize_all = "kebab-case")]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    #[default]
    Write,
    ReadOnly,
}

/// Structured output a role must produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum OutputKind {
    /// A coach's JSON verdict (docs/verdicts.md).
    Verdict,
    /// A plan for later steps: an empty answer stops the run, and a `Complexity: N/10` line is published as the step's `complexity`.
    Plan,
}

/// One step: the keys every step has (documented once, in `kinds::COMMON_KEYS`) plus the
/// built-in action it uses, which holds its kind's keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    pub id: String,
    /// `if`: a bare minijinja expression.
    #[serde(rename = "if", default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(default, skip_serializing_if = "is_false")]
    pub always: bool,
    #[serde(
        default,
        with = "opt_duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout: Option<Duration>,
    #[serde(flatten)]
    pub action: Action,
}

/// Stall detection settings of a loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StallConfig {
    /// How many recent turns are compared.
    #[serde(default = "default_stall_window")]
    pub window: u32,
    /// Give the player one `stall_notice` before stopping.
    #[serde(default = "default_true")]
    pub nudge: bool,
}

impl Default for StallConfig {
    fn default() -> Self {
        StallConfig {
            window: default_stall_window(),
            nudge: true,
        }
    }
}

fn default_stall_window() -> u32 {
    3
}

fn default_true() -> bool {
    true
}

pub(crate) fn is_false(value: &bool) -> bool {
    !*value
}

impl Workflow {
    /// The requirements the gate checks for a profile: the profile's, minus what the workflow
    /// waives.
    pub fn gate_requirements(&self, profile_require: &[Requirement]) -> Vec<Requirement> {
        profile_require
            .iter()
            .filter(|r| !self.gate.waive.contains(r))
            .cloned()
            .collect()
    }

    /// Every step, depth first, in execution order (loop bodies after their loop).
    pub fn all_steps(&self) -> Vec<&Step> {
        fn walk<'a>(steps: &'a [Step], out: &mut Vec<&'a Step>) {
            for step in steps {
                out.push(step);
                if let Action::Loop(body) = &step.action {
                    walk(&body.steps, out);
                }
            }
        }
        let mut out = Vec::new();
        walk(&self.steps, &mut out);
        out
    }

    /// Each agent step's role, by name and definition, in step order (a role the workflow does
    /// not define is left out: validation reports it).
    pub fn agent_roles(&self) -> impl Iterator<Item = (&String, &Role)> {
        self.all_steps()
            .into_iter()
            .filter_map(|step| match &step.action {
                Action::Agent(agent) => self.roles.get_key_value(&agent.role),
                _ => None,
            })
    }
}

/// Durations are written as human strings (`"20m"`, `"90s"`, `"1h 30m"`).
pub mod opt_duration {
    use std::time::Duration;

    use schemars::JsonSchema;
    use serde::{Deserialize, Deserializer, Serializer};

    /// How a duration is written, for the JSON Schemas (`autobuild schema`); values are read
    /// by [`deserialize`].
    #[derive(JsonSchema)]
    #[schemars(
        rename = "Duration",
        description = "a duration such as \"90s\", \"20m\" or \"1h 30m\""
    )]
    pub struct Written(pub String);

    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => s.serialize_str(&humantime::format_duration(*d).to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text = Option::<String>::deserialize(d)?;
        text.map(|t| parse(&t).map_err(serde::de::Error::custom))
            .transpose()
    }

    /// Parses a human duration, with a message that shows the accepted form.
    pub fn parse(text: &str) -> Result<Duration, String> {
        humantime::parse_duration(text.trim()).map_err(|_| {
            format!("invalid duration {text:?}: write it like \"90s\", \"20m\" or \"1h 30m\"")
        })
    }
}

#[cfg(test)]
mod tests;

/// What a `verify` step expects of its checks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Expect {
    /// The checks pass (the ordinary verification).
    #[default]
    Pass,
    /// The checks fail as new tests do before the implementation (a red witness).
    Fail,
}
