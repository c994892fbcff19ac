//! Which JSON in a coach's answer is its verdict.
//!
//! The adapter's structured output, when there is one, is the verdict. Otherwise the candidates
//! of the final message ([`extract::candidates`]) are read in order, and the verdict is the
//! **last one that has a `decision`**: a coach that approves and then shows an example issue
//! block has approved. Several blocks with a `decision` must agree: a `feedback` verdict
//! followed by an "once fixed it would look like this" `approve` block is ambiguous, and
//! ambiguity is never approval. A last verdict block that does not parse (a truncated answer)
//! is an error, not a reason to fall back on an earlier draft.
//!
//! Before any of that, the answer's reasoning is set aside ([`reasoning`]): a verdict found only
//! there is a draft. A candidate that gives a key twice is ambiguous, and one that holds the
//! prompt's example placeholders ([`example`]) is an echo, not a review.

use serde_json::Value;

use super::extract::{self, Origin};
use super::{example, lenient, reasoning, VerdictError};

/// The verdict object of the answer (unwrapped, not yet normalized) and where it was found.
pub fn read(structured: Option<&Value>, message: &str) -> Result<(Value, Origin), VerdictError> {
    if let Some(value) = structured.filter(|value| !value.is_null()) {
        return Ok((lenient::unwrap(value.clone()), Origin::StructuredOutput));
    }
    let (answer, had_reasoning) = reasoning::final_part(message);
    let candidates: Vec<Candidate> = extract::candidates(&answer)
        .into_iter()
        .map(|(text, origin)| Candidate::parse(text, origin))
        .collect();
    let Some(last) = candidates.last() else {
        if had_reasoning && !extract::candidates(message).is_empty() {
            return Err(VerdictError::OnlyInReasoning);
        }
        return Err(VerdictError::Missing);
    };
    for candidate in &candidates {
        if let Some(key) = lenient::duplicate_key(candidate.text) {
            return Err(VerdictError::DuplicateKey {
                origin: candidate.origin,
                key,
            });
        }
        let echo = candidate.value.as_ref().is_ok_and(|v| {
            lenient::has_decision(v) && example::echoes(&lenient::normalize(v.clone(), &[]))
        });
        if echo {
            return Err(VerdictError::EchoedExample {
                origin: candidate.origin,
            });
        }
    }
    let verdicts: Vec<&Candidate> = candidates.iter().filter(|c| c.has_decision()).collect();
    let chosen = verdicts.last().copied().unwrap_or(last);
    let decisions: Vec<(Origin, String)> = verdicts
        .iter()
        .filter_map(|c| Some((c.origin, lenient::decision_of(c.value.as_ref().ok()?)?)))
        .collect();
    if decisions.iter().any(|(_, d)| *d != decisions[0].1) {
        return Err(VerdictError::Ambiguous { decisions });
    }
    match &chosen.value {
        Ok(value) => Ok((value.clone(), chosen.origin)),
        Err(message) => Err(VerdictError::Syntax {
            origin: chosen.origin,
            message: message.clone(),
        }),
    }
}

struct Candidate<'a> {
    text: &'a str,
    origin: Origin,
    value: Result<Value, String>,
}

impl<'a> Candidate<'a> {
    fn parse(text: &'a str, origin: Origin) -> Candidate<'a> {
        let value = lenient::parse_json(text)
            .map(lenient::unwrap)
            .map_err(|e| e.to_string());
        Candidate {
            text,
            origin,
            value,
        }
    }

    /// A verdict, or what was meant to be one before it broke off.
    fn has_decision(&self) -> bool {
        match &self.value {
            Ok(value) => lenient::has_decision(value),
            Err(_) => self.text.to_ascii_lowercase().contains("\"decision\""),
        }
    }
}
