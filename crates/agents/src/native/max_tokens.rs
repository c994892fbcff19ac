//! The `max_tokens` a request carries when the role sets none.

use super::http::is_loopback;
use super::Dialect;

/// Tokens one answer may have when the role sets no `max_tokens` and a limit is sent.
pub const DEFAULT_MAX_TOKENS: u32 = 8192;

/// The `max_tokens` sent when the role sets none: Anthropic's API requires one, and a server on
/// this machine gets one so a rambling local model cannot generate until its context is full.
/// A remote OpenAI-compatible API gets none: its models have their own output limits, some
/// below the default, and its reasoning models refuse `max_tokens` altogether.
pub fn default_max_tokens(dialect: Dialect, base_url: &str) -> Option<u32> {
    match dialect {
        Dialect::Anthropic => Some(DEFAULT_MAX_TOKENS),
        Dialect::OpenAi => is_loopback(base_url).then_some(DEFAULT_MAX_TOKENS),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_max_tokens_goes_to_anthropic_and_to_servers_on_this_machine_only() {
        let local = "http://127.0.0.1:8080/v1";
        let remote = "https://api.openai.com/v1";
        assert_eq!(
            default_max_tokens(Dialect::Anthropic, remote),
            Some(DEFAULT_MAX_TOKENS)
        );
        assert_eq!(
            default_max_tokens(Dialect::OpenAi, local),
            Some(DEFAULT_MAX_TOKENS)
        );
        assert_eq!(default_max_tokens(Dialect::OpenAi, remote), None);
    }
}
