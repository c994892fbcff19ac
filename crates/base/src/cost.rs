//! How a cost is shown, everywhere a report or a listing shows one. The rule: a cost no agent
//! reported is unknown and shown as `–` (a `command` agent, a CLI that says nothing about
//! money); a reported cost is shown in dollars, `$0.00` included (a free local model);
//! `~` marks a cost partly estimated from token counts and a price table.

/// `$0.12`, `~$0.12` when partly estimated, `$0.00` when reported as nothing, `–` when unknown.
pub fn shown(usd: Option<f64>, estimated: bool) -> String {
    match usd {
        Some(usd) => format!("{}${usd:.2}", if estimated { "~" } else { "" }),
        None => "–".to_string(),
    }
}

/// The sum of costs, unknown only when every part is.
pub fn sum(parts: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    parts
        .into_iter()
        .flatten()
        .fold(None, |total, usd| Some(total.unwrap_or(0.0) + usd))
}

/// What the prompt caches did, to follow a token count (`, 900 read from the prompt cache, 120
/// written to it`); nothing when no API said.
pub fn cache_note(read: u64, written: u64) -> String {
    match (read, written) {
        (0, 0) => String::new(),
        (read, 0) => format!(", {read} read from the prompt cache"),
        (read, written) => format!(", {read} read from the prompt cache, {written} written to it"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cache_note_says_only_what_an_api_said() {
        let cases = [
            (0, 0, ""),
            (900, 0, ", 900 read from the prompt cache"),
            (
                900,
                120,
                ", 900 read from the prompt cache, 120 written to it",
            ),
            (0, 120, ", 0 read from the prompt cache, 120 written to it"),
        ];
        for (read, written, note) in cases {
            assert_eq!(cache_note(read, written), note);
        }
    }

    #[test]
    fn unknown_zero_reported_and_estimated_costs_are_told_apart() {
        let cases = [
            (None, false, "–"),
            (Some(0.0), false, "$0.00"),
            (Some(0.126), false, "$0.13"),
            (Some(1.5), true, "~$1.50"),
        ];
        for (usd, estimated, expected) in cases {
            assert_eq!(shown(usd, estimated), expected, "{usd:?} {estimated}");
        }
        assert_eq!(sum([None, None]), None);
        assert_eq!(sum([None, Some(0.0)]), Some(0.0));
        assert_eq!(sum([Some(0.5), None, Some(0.25)]), Some(0.75));
    }
}
