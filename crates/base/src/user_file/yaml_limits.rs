//! What loading one YAML document may cost: a bound on alias expansion and on nesting.
//!
//! **Alias policy.** Anchors and aliases stay allowed in workflow, feature and task files: a
//! user who writes `defaults: &d {…}` and reuses `*d` in a few places should not be told off.
//! What is bounded is the *expansion*. Every alias copies its anchor's whole value, so an
//! anchored list of aliases of an anchored list of aliases… grows exponentially: a 523-byte
//! "billion laughs" file expands to 9⁹ values and took the process down on memory. The loader
//! counts the values aliases copy (an anchored value counts every value inside it, copies from
//! nested aliases included) and stops at the alias that would take the count past
//! [`MAX_ALIAS_NODES`] (10,000), with an error located at that alias. Ordinary reuse copies
//! tens or hundreds of values; a bomb crosses the bound after a few levels, having built only
//! about that many values, so it fails in microseconds and kilobytes.
//!
//! **Nesting.** A document nested deeper than [`MAX_DEPTH`] (128, yaml_serde's own recursion
//! limit) is refused too: one line of `- - - - …` in a 1 MiB file nests half a million levels,
//! and building, cloning or dropping such a tree recurses once per level and overflows the
//! stack. Real files need a handful of levels.
//!
//! The bound applies to every YAML autobuild reads: [`crate::user_file::parse_yaml`] (workflow
//! and feature files) keeps a [`Budget`] while it builds its tree, and task front matter, which
//! is read with yaml_serde, is first run through [`check`]. yaml_serde has a guard of its own —
//! at most 100 alias jumps per event of the document — which stops the nested bomb but not a
//! wide one: an anchored list of 100,000 values aliased 100,000 times fits in 1 MiB and within
//! that guard, yet expands to 10¹⁰ values. Counting copied values, not jumps, covers both.

use std::collections::HashMap;

use saphyr_parser::{Event, Marker, Parser};

use crate::diagnostic::Location;

/// The most values aliases may copy into one document.
pub const MAX_ALIAS_NODES: usize = 10_000;

/// The deepest nesting of sequences and mappings one document may have.
pub const MAX_DEPTH: usize = 128;

/// A bound was crossed at `location`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    pub location: Location,
    pub message: String,
    pub help: &'static str,
}

/// Counts what a document costs as its events are read; see the module docs.
#[derive(Debug, Default)]
pub struct Budget {
    /// Values in each completed anchored value, by the parser's anchor id.
    sizes: HashMap<usize, usize>,
    /// For each open sequence or mapping: its anchor id (0: none) and the values in it so far.
    open: Vec<(usize, usize)>,
    /// Values copied by aliases so far.
    copied: usize,
}

impl Budget {
    /// A sequence or mapping starts at `at`.
    pub fn open(&mut self, anchor: usize, at: Marker) -> Result<(), Exceeded> {
        if self.open.len() >= MAX_DEPTH {
            return Err(Exceeded {
                location: location(at),
                message: format!("the document nests more than {MAX_DEPTH} levels deep"),
                help: "workflow, feature and task files need a handful of levels; check the indentation and brackets here",
            });
        }
        self.open.push((anchor, 1));
        Ok(())
    }

    /// The innermost open sequence or mapping ends.
    pub fn close(&mut self) {
        if let Some((anchor, size)) = self.open.pop() {
            self.finished(anchor, size);
        }
    }

    /// A scalar (a key or a value).
    pub fn scalar(&mut self, anchor: usize) {
        self.finished(anchor, 1);
    }

    /// An alias at `at` copies its anchor's value.
    pub fn alias(&mut self, anchor: usize, at: Marker) -> Result<(), Exceeded> {
        // An unknown anchor is the parser's error to report; it copies nothing.
        let size = self.sizes.get(&anchor).copied().unwrap_or(1);
        self.copied = self.copied.saturating_add(size);
        if self.copied > MAX_ALIAS_NODES {
            return Err(Exceeded {
                location: location(at),
                message: format!(
                    "too many aliases: expanding this one would copy more than {MAX_ALIAS_NODES} values from anchors"
                ),
                help: "an alias copies its anchor's whole value, so aliases of lists of aliases grow exponentially (a \"billion laughs\" document); write such values out, or reuse them less (ordinary reuse stays far below the bound)",
            });
        }
        self.add(size);
        Ok(())
    }

    fn finished(&mut self, anchor: usize, size: usize) {
        if anchor > 0 {
            self.sizes.insert(anchor, size);
        }
        self.add(size);
    }

    fn add(&mut self, size: usize) {
        if let Some((_, parent)) = self.open.last_mut() {
            *parent = parent.saturating_add(size);
        }
    }
}

/// Runs `text` through a [`Budget`] without building anything. Syntax errors are not reported
/// here (`Ok`): the parser that reads the document for real reports them, located.
pub fn check(text: &str) -> Result<(), Exceeded> {
    let mut budget = Budget::default();
    let mut parser = Parser::new_from_str(text);
    while let Some(Ok((event, span))) = parser.next_event() {
        match event {
            Event::Scalar(_, _, anchor, _) => budget.scalar(anchor),
            Event::Alias(anchor) => budget.alias(anchor, span.start)?,
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                budget.open(anchor, span.start)?;
            }
            Event::SequenceEnd | Event::MappingEnd => budget.close(),
            Event::StreamEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentStart(_) | Event::DocumentEnd => {}
        }
    }
    Ok(())
}

/// 1-based line and column of a parser marker (its column is 0-based).
pub fn location(marker: Marker) -> Location {
    Location {
        line: marker.line().max(1),
        column: marker.col() + 1,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The 523-byte document of the issue: ten levels, each a list of nine aliases of the one
    /// before, expanding to 9⁹ values.
    pub(crate) fn laughs() -> String {
        let mut text = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i"];
        for pair in names.windows(2) {
            let (before, name) = (pair[0], pair[1]);
            let refs = vec![format!("*{before}"); 9].join(",");
            text.push_str(&format!("{name}: &{name} [{refs}]\n"));
        }
        text
    }

    #[test]
    fn ordinary_anchors_and_aliases_pass() {
        let text = "defaults: &d {model: opus, timeout: 10m}\nroles:\n  player: *d\n  coach: *d\nsteps: &s [a, b]\nagain: *s\n";
        assert_eq!(check(text), Ok(()));
    }

    #[test]
    fn a_billion_laughs_stops_at_the_alias_that_crosses_the_bound() {
        let err = check(&laughs()).unwrap_err();
        assert!(err.message.contains("too many aliases"), "{err:?}");
        // Level e (line 5) is the first whose expansion exceeds 10,000 values.
        assert_eq!(err.location.line, 5);
    }

    #[test]
    fn a_wide_expansion_within_yaml_serdes_jump_guard_is_stopped_too() {
        let items = vec!["1"; 2_000].join(",");
        let aliases = vec!["*a"; 2_000].join(",");
        let text = format!("x: &a [{items}]\ny: [{aliases}]\n");
        let err = check(&text).unwrap_err();
        assert_eq!(err.location.line, 2);
        // Four aliases of 2,001 values each fit in the bound; the fifth crosses it.
        assert_eq!(err.location.column, 5 + 4 * 3);
    }

    #[test]
    fn the_bound_counts_copies_not_aliases() {
        // 4,000 aliases of a scalar copy 4,000 values: fine.
        let aliases = vec!["*a"; 4_000].join(",");
        assert_eq!(check(&format!("x: &a 1\ny: [{aliases}]\n")), Ok(()));
    }

    #[test]
    fn nesting_deeper_than_the_bound_is_refused() {
        let fine = format!("{}1{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(check(&fine), Ok(()));
        let deep = "- ".repeat(100_000) + "x\n";
        let err = check(&deep).unwrap_err();
        assert!(err.message.contains("more than 128 levels"), "{err:?}");
        assert_eq!(err.location.line, 1);
    }
}
