//! Which JSON in a coach's answer is its verdict.
//!
//! The adapter's structured output, when there is one, is the verdict. Otherwise the candidates
//! of the final message ([`extract::candidates`]) are read in order, and the verdict is the
//! **last one that has a `decision`**: a coach that approves and then shows an example issue
//! block has approved. Several blocks with a `decision` must agree: a `feedback` verdict
//! followed by an "once fixed it would look like this" `approve` block is ambiguous, and
//! ambiguity is never approval. A last verdict block that does not parse (a truncated answer)
//! is an error, not a reason to fall back on an earlier draft.

use serde_json::Value;

use super::extract::{self, Origin};
use super::{lenient, VerdictError};

/// The verdict object of the answer (unwrapped, not yet normalized) and where it was found.
pub fn read(structured: Option<&Value>, message: &str) -> Result<(Value, Origin), VerdictError> {
    if let Some(value) = structured.filter(|value| !value.is_null()) {
        return Ok((lenient::unwrap(value.clone()), Origin::StructuredOutput));
    }
    let candidates: Vec<Candidate> = extract::candidates(message)
        .into_iter()
        .map(|(text, origin)| Candidate::parse(text, origin))
        .collect();
    let Some(last) = candidates.last() else {
        return Err(VerdictError::Missing);
    };
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
