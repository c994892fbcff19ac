//! The example verdicts the prompts show, and answers that copy them.
//!
//! Small models sometimes repeat their prompt, example verdict included: its `feedback` with a
//! must-fix "What is wrong…" at `path/to/file:12` would reach the player as work to do. The
//! examples' texts are placeholders no real review writes, so an answer whose verdict holds one
//! copied the example, and is not a verdict ([`echoes`]).

use serde_json::Value;

/// The placeholders of the coach prompt's example (prompts/coach.md; a test holds them equal).
pub const PROMPT_SUMMARY: &str = "One paragraph: what you checked and what you found.";
pub const PROMPT_DESCRIPTION: &str = "What is wrong, and which criterion or requirement it breaks.";
pub const PROMPT_SUGGESTION: &str = "What to do instead.";
pub const PROMPT_EVIDENCE: &str = "How you know.";

/// The placeholders of the retry prompt's example ([`super::retry_prompt`]).
pub const RETRY_SUMMARY: &str = "One paragraph: the state of the work and what matters most next.";
pub const RETRY_DESCRIPTION: &str = "What is wrong and why it matters.";
pub const RETRY_SUGGESTION: &str = "How to fix it.";
pub const RETRY_EVIDENCE: &str = "what you observed: a command and its result, or the code";

const PLACEHOLDERS: [&str; 8] = [
    PROMPT_SUMMARY,
    PROMPT_DESCRIPTION,
    PROMPT_SUGGESTION,
    PROMPT_EVIDENCE,
    RETRY_SUMMARY,
    RETRY_DESCRIPTION,
    RETRY_SUGGESTION,
    RETRY_EVIDENCE,
];

/// Whether the verdict object `value` (normalized) holds a placeholder of an example as its
/// summary, an issue's description or suggestion, or a criterion's evidence.
pub fn echoes(value: &Value) -> bool {
    let is_placeholder = |v: Option<&Value>| {
        v.and_then(Value::as_str)
            .is_some_and(|text| PLACEHOLDERS.contains(&text.trim()))
    };
    let each = |list: &str, fields: &[&str]| {
        value
            .get(list)
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items
                    .iter()
                    .any(|item| fields.iter().any(|f| is_placeholder(item.get(f))))
            })
    };
    is_placeholder(value.get("summary"))
        || each("issues", &["description", "suggestion"])
        || each("criteria", &["evidence"])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_coach_prompt_shows_these_placeholders() {
        let prompt = include_str!("../../../../../prompts/coach.md");
        for text in [
            PROMPT_SUMMARY,
            PROMPT_DESCRIPTION,
            PROMPT_SUGGESTION,
            PROMPT_EVIDENCE,
        ] {
            assert!(prompt.contains(text), "prompts/coach.md lacks {text:?}");
        }
    }

    #[test]
    fn a_verdict_holding_a_placeholder_echoes_an_example() {
        let echo = serde_json::json!({"decision": "feedback", "summary": "s",
            "issues": [{"description": PROMPT_DESCRIPTION}], "criteria": []});
        assert!(echoes(&echo));
        let real = serde_json::json!({"decision": "feedback", "summary": "s",
            "issues": [{"description": "greeting drops the name"}],
            "criteria": [{"evidence": "How you know it: ran it"}]});
        assert!(!echoes(&real));
    }
}
