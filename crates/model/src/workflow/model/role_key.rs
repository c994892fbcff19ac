//! Role keys that only some adapters read, and which adapter reads which
//! ([`AgentKind::role_keys`]); validation refuses a key the role's adapter does not read
//! instead of ignoring it.

use super::{AgentKind, Role};

/// A key of `[roles.<name>]` that only some adapters read.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, strum::Display, strum::IntoStaticStr, strum::EnumIter,
)]
#[strum(serialize_all = "snake_case")]
pub enum RoleKey {
    BaseUrl,
    ApiKeyEnv,
    Headers,
    MaxTokens,
    ToolChoice,
}

impl RoleKey {
    /// Whether `role` sets this key.
    pub fn is_set(self, role: &Role) -> bool {
        match self {
            RoleKey::BaseUrl => role.base_url.is_some(),
            RoleKey::ApiKeyEnv => role.api_key_env.is_some(),
            RoleKey::Headers => role.headers.is_some(),
            RoleKey::MaxTokens => role.max_tokens.is_some(),
            RoleKey::ToolChoice => role.tool_choice.is_some(),
        }
    }
}

impl AgentKind {
    /// The role keys only some adapters read that this one reads.
    pub fn role_keys(self) -> &'static [RoleKey] {
        match self {
            AgentKind::Openai | AgentKind::Anthropic => &NATIVE_ROLE_KEYS,
            AgentKind::ClaudeCode | AgentKind::Codex | AgentKind::Command => &[],
        }
    }
}

/// The endpoint and generation keys both native adapters read.
const NATIVE_ROLE_KEYS: [RoleKey; 5] = [
    RoleKey::BaseUrl,
    RoleKey::ApiKeyEnv,
    RoleKey::Headers,
    RoleKey::MaxTokens,
    RoleKey::ToolChoice,
];

#[cfg(test)]
mod tests {
    use base::Keyword;
    use strum::IntoEnumIterator;

    use super::*;

    /// Each key's name is a field `Role` serializes when set (so the check reads real keys).
    #[test]
    fn every_role_key_names_a_field_of_role() {
        let role: Role = toml::from_str(
            r#"
agent = "openai"
prompt = "player.md"
base_url = "http://127.0.0.1:1/v1"
api_key_env = "KEY"
headers = { A = "1" }
max_tokens = 10
tool_choice = "required"
"#,
        )
        .unwrap();
        let written = toml::Value::try_from(&role).unwrap();
        for key in RoleKey::iter() {
            assert!(key.is_set(&role), "{key}");
            assert!(written.get(key.as_str()).is_some(), "{key}");
        }
    }
}
