//! Cost estimates for agents that report tokens but no cost.
//!
//! `codex exec --json` and the chat-completions and Messages APIs the native adapters talk to
//! report tokens but no cost, and a run's `max_cost_usd` budget needs one, so the adapter
//! estimates it from list prices: the project's `[pricing."<model>"]` table when
//! it names the model, otherwise the built-in table below. The built-in prices are OpenAI's and
//! Anthropic's published per-token API prices at the time of writing (for Anthropic, "cached
//! input" is the price of a prompt-cache read) — an estimate, not a bill: a ChatGPT
//! plan is not billed per token at all, and prices change. Every cost computed here is marked
//! `cost_estimated` in the turn record.

use model::project::config::{ModelPrice, PriceTable};

/// USD per million tokens: (model, input, cached input, output).
const BUILT_IN: &[(&str, f64, f64, f64)] = &[
    ("gpt-5", 1.25, 0.125, 10.0),
    ("gpt-5-codex", 1.25, 0.125, 10.0),
    ("gpt-5-mini", 0.25, 0.025, 2.0),
    ("gpt-5-nano", 0.05, 0.005, 0.40),
    ("gpt-5.1", 1.25, 0.125, 10.0),
    ("gpt-5.1-codex", 1.25, 0.125, 10.0),
    ("gpt-5.1-codex-max", 1.25, 0.125, 10.0),
    ("gpt-5.1-codex-mini", 0.25, 0.025, 2.0),
    ("codex-mini-latest", 1.50, 0.375, 6.0),
    ("o3", 2.0, 0.50, 8.0),
    ("o4-mini", 1.10, 0.275, 4.40),
    ("gpt-4.1", 2.0, 0.50, 8.0),
    ("gpt-4.1-mini", 0.40, 0.10, 1.60),
    ("claude-opus-4-5", 5.0, 0.50, 25.0),
    ("claude-opus-4-1", 15.0, 1.50, 75.0),
    ("claude-sonnet-4-5", 3.0, 0.30, 15.0),
    ("claude-sonnet-4-0", 3.0, 0.30, 15.0),
    ("claude-haiku-4-5", 1.0, 0.10, 5.0),
];

/// Tokens as the OpenAI APIs count them: `input` includes the `cached_input` tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    pub input_tokens: u64,
    pub cached_input_tokens: u64,
    /// Of `input_tokens`, those written to the prompt cache.
    pub cache_written_tokens: u64,
    pub output_tokens: u64,
}

impl TokenCounts {
    pub fn add(&mut self, other: TokenCounts) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.cache_written_tokens += other.cache_written_tokens;
        self.output_tokens += other.output_tokens;
    }

    /// Input tokens billed at the full rate.
    pub fn uncached_input_tokens(&self) -> u64 {
        self.input_tokens.saturating_sub(self.cached_input_tokens)
    }
}

impl From<TokenCounts> for crate::TokenUsage {
    /// Tokens as turn records keep them: `input` without the cached tokens.
    fn from(counts: TokenCounts) -> Self {
        crate::TokenUsage {
            input: counts.uncached_input_tokens(),
            output: counts.output_tokens,
            cached: counts.cached_input_tokens,
            cache_written: counts.cache_written_tokens,
        }
    }
}

/// The price of `model`: from `overrides` first, then the built-in table. A dated snapshot
/// name (`o3-2025-04-16`) falls back to its base model's price.
pub fn price_of(model: &str, overrides: Option<&PriceTable>) -> Option<ModelPrice> {
    let lookup = |name: &str| {
        overrides
            .and_then(|table| table.get(name).copied())
            .or_else(|| built_in(name))
    };
    lookup(model).or_else(|| strip_date_suffix(model).and_then(lookup))
}

/// The estimated cost in USD of `usage` on `model`, or `None` when no price is known.
pub fn estimate(
    model: Option<&str>,
    usage: TokenCounts,
    overrides: Option<&PriceTable>,
) -> Option<f64> {
    Some(cost(price_of(model?, overrides)?, usage))
}

/// The cost in USD of `usage` at `price`.
pub fn cost(price: ModelPrice, usage: TokenCounts) -> f64 {
    let per_million = |tokens: u64, usd: f64| tokens as f64 * usd / 1_000_000.0;
    per_million(usage.uncached_input_tokens(), price.input)
        + per_million(usage.cached_input_tokens, price.cached_input())
        + per_million(usage.output_tokens, price.output)
}

/// The price of `model` served on this machine (a native role whose `base_url` is on the
/// loopback): `[pricing]`'s when it names the model, else free — a local model costs no money,
/// so a budgeted workflow need not declare zero prices. The built-in list prices are not used.
pub fn local_price(model: &str, overrides: Option<&PriceTable>) -> ModelPrice {
    let lookup = |name: &str| overrides.and_then(|table| table.get(name).copied());
    lookup(model)
        .or_else(|| strip_date_suffix(model).and_then(lookup))
        .unwrap_or(ModelPrice {
            input: 0.0,
            cached_input: Some(0.0),
            output: 0.0,
        })
}

/// The gap of a role whose `model` has no price: what to say, and the fix.
pub fn missing_price(role_name: &str, model: &str) -> crate::CostGap {
    crate::CostGap {
        what: format!("model `{model}` has no known price"),
        fix: format!(
            "add [pricing.\"{model}\"] with input, cached_input and output in USD per million \
             tokens to .autobuild/config.toml, or set `model` of role `{role_name}` to a model \
             with a known price"
        ),
    }
}

fn built_in(model: &str) -> Option<ModelPrice> {
    BUILT_IN
        .iter()
        .find(|(name, ..)| *name == model)
        .map(|&(_, input, cached_input, output)| ModelPrice {
            input,
            cached_input: Some(cached_input),
            output,
        })
}

/// `name` without a trailing `-YYYY-MM-DD`, if it has one.
fn strip_date_suffix(name: &str) -> Option<&str> {
    let (base, date) = name.split_at_checked(name.len().checked_sub(11)?)?;
    let date = date.strip_prefix('-')?;
    let shape_ok = date.char_indices().all(|(i, c)| match i {
        4 | 7 => c == '-',
        _ => c.is_ascii_digit(),
    });
    shape_ok.then_some(base)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, cached: u64, output: u64) -> TokenCounts {
        TokenCounts {
            input_tokens: input,
            cached_input_tokens: cached,
            output_tokens: output,
            ..TokenCounts::default()
        }
    }

    #[test]
    fn cached_tokens_are_billed_at_the_cache_rate_only() {
        let cost = estimate(
            Some("gpt-5-codex"),
            usage(1_000_000, 400_000, 100_000),
            None,
        )
        .unwrap();
        // 600k uncached × 1.25 + 400k cached × 0.125 + 100k output × 10.
        assert!((cost - (0.75 + 0.05 + 1.0)).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn the_project_table_wins_over_the_built_in_one() {
        let mut table = PriceTable::new();
        table.insert(
            "gpt-5-codex".to_string(),
            ModelPrice {
                input: 2.0,
                cached_input: Some(1.0),
                output: 20.0,
            },
        );
        table.insert(
            "my-finetune".to_string(),
            ModelPrice {
                input: 1.0,
                cached_input: Some(1.0),
                output: 1.0,
            },
        );
        let tokens = usage(1_000_000, 0, 1_000_000);
        assert_eq!(
            estimate(Some("gpt-5-codex"), tokens, Some(&table)),
            Some(22.0)
        );
        assert_eq!(
            estimate(Some("my-finetune"), tokens, Some(&table)),
            Some(2.0)
        );
        assert_eq!(estimate(Some("o3"), tokens, Some(&table)), Some(10.0));
    }

    #[test]
    fn unknown_or_unnamed_models_have_no_estimate() {
        let tokens = usage(10, 0, 10);
        assert_eq!(estimate(Some("sonnet"), tokens, None), None);
        assert_eq!(estimate(None, tokens, None), None);
    }

    #[test]
    fn dated_snapshots_use_their_base_price() {
        assert_eq!(price_of("o3-2025-04-16", None), price_of("o3", None));
        assert!(price_of("o3-2025-04-16", None).is_some());
        assert_eq!(strip_date_suffix("gpt-5-codex"), None);
        assert_eq!(strip_date_suffix("x-2025-4-160"), None);
        assert_eq!(strip_date_suffix("-2025-04-16"), Some(""));
        assert_eq!(strip_date_suffix("é"), None);
    }

    #[test]
    fn usage_adds_up() {
        let mut total = usage(100, 40, 10);
        total.add(usage(50, 10, 5));
        assert_eq!(total, usage(150, 50, 15));
        assert_eq!(total.uncached_input_tokens(), 100);
    }
}
