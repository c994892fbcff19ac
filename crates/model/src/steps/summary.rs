//! A bounded summary of a check's output: the first error block plus the final summary lines.
//!
//! Feedback that shows only the last few lines of a test run hides the actual error (a
//! traceback, a compiler message, an assertion diff) behind "1 failed". Feedback that shows
//! everything drowns the next prompt. The summary keeps the two parts that matter — where the
//! output first says what went wrong, and how it ended — bounded in lines and bytes; the full
//! output stays on disk and its path travels with the summary.
//!
//! Markers come in two strengths. Strong markers point at the error itself (`error[E0425]:`,
//! `panicked at`, `Traceback`, pytest's `E   ` lines, `--- FAIL:`, jest's `●`). Weak markers
//! only say that something failed (`test foo ... FAILED`, `FAIL pkg`) and are used when no
//! strong marker exists, so a cargo run's per-test `FAILED` line does not hide the panic
//! message printed further down.

/// Bounds of a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryLimits {
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Default for SummaryLimits {
    fn default() -> Self {
        SummaryLimits {
            max_lines: 40,
            max_bytes: 4000,
        }
    }
}

/// Marks lines left out of a summary.
pub const ELISION: &str = "…";

/// Final lines shown after the error block (fewer when the line bound is small).
const TAIL_LINES: usize = 5;

/// Lines above the marker kept as context when they belong to the same paragraph (pytest's
/// failing source line above its `E` lines).
const CONTEXT_BEFORE: usize = 2;

/// A blank line ends the error block only after this many lines of it (jest separates the
/// test name from its diff by blank lines).
const MIN_BLOCK_LINES: usize = 3;

base::regexes! {
    ANSI_ESCAPE = r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]";
}

base::regexes! {
    STRONG_MARKER = concat!(
        r"^\s*error(\[E\d+\])?:",
        r"|: (fatal )?error( TS\d+)?:",
        r"|panicked at",
        r"|^Traceback \(most recent call last\)",
        r"|^E {2,}\S",
        r"|^\s*([A-Za-z_][\w.]*)?(Error|Exception)(: |$)",
        r"|^--- FAIL:",
        r"|^\s*● ",
        r"|^(FAIL|ERROR): ",
        r"|^npm (ERR!|error) ",
        r"|command not found|: not found$|No such file or directory",
        r"|^(fatal|FATAL):",
        r"|^Exception in thread",
    );
}

base::regexes! {
    WEAK_MARKER = r"FAILED|^FAIL\b|\bERROR\b|(?i)\berror\b";
}

/// The first error block of `output`, an elision mark, and its final non-empty lines; the whole
/// output when it is short. ANSI escapes are removed; the result has at most
/// `limits.max_lines` lines and `limits.max_bytes` bytes and never splits a character.
pub fn summarize(output: &str, limits: SummaryLimits) -> String {
    let lines = clean_lines(output);
    let parts = select(&lines, limits.max_lines.max(1));
    render(&parts, limits)
}

/// `text` without ANSI escape sequences (colours, cursor moves, hyperlinks).
pub fn strip_ansi(text: &str) -> std::borrow::Cow<'_, str> {
    ANSI_ESCAPE.replace_all(text, "")
}

/// Output as a terminal would show it: escapes removed, carriage-return overwrites applied,
/// trailing whitespace trimmed, leading and trailing blank lines dropped.
fn clean_lines(output: &str) -> Vec<String> {
    let plain = strip_ansi(output);
    let mut lines: Vec<String> = plain
        .split('\n')
        .map(|line| {
            let shown = line
                .trim_end_matches('\r')
                .rsplit('\r')
                .find(|part| !part.trim().is_empty())
                .unwrap_or("");
            shown.trim_end().to_string()
        })
        .collect();
    while lines.last().is_some_and(|line| line.is_empty()) {
        lines.pop();
    }
    let first = lines.iter().position(|line| !line.is_empty());
    lines.drain(..first.unwrap_or(lines.len()));
    lines
}

/// The lines a summary shows: `head`, then (after an elision mark when `gap`) `tail`.
#[derive(Debug, PartialEq)]
struct Parts<'a> {
    head: Vec<&'a str>,
    gap: bool,
    tail: Vec<&'a str>,
}

fn select(lines: &[String], max_lines: usize) -> Parts<'_> {
    if lines.len() <= max_lines {
        return Parts {
            head: lines.iter().map(String::as_str).collect(),
            gap: false,
            tail: Vec::new(),
        };
    }
    let tail_count = TAIL_LINES.min(max_lines / 3).max(1);
    let block_budget = max_lines.saturating_sub(tail_count + 1);
    let block = match find_marker(lines) {
        Some(marker) if block_budget > 0 => error_block(lines, marker, block_budget),
        _ => 0..0,
    };
    let tail_budget = if block.is_empty() {
        max_lines.saturating_sub(1).max(1)
    } else {
        tail_count
    };
    let tail_indices = last_non_empty(lines, block.end, tail_budget);
    let gap = tail_indices
        .first()
        .is_some_and(|&first| lines[block.end..first].iter().any(|l| !l.is_empty()))
        || (block.is_empty() && tail_indices.first().is_some_and(|&first| first > 0));
    let shown = block.len() + tail_indices.len();
    Parts {
        head: lines[block].iter().map(String::as_str).collect(),
        gap: gap && shown < max_lines,
        tail: tail_indices.iter().map(|&i| lines[i].as_str()).collect(),
    }
}

/// The first strong marker, else the first weak one.
fn find_marker(lines: &[String]) -> Option<usize> {
    lines
        .iter()
        .position(|line| STRONG_MARKER.is_match(line))
        .or_else(|| lines.iter().position(|line| WEAK_MARKER.is_match(line)))
}

/// The marker line with a little context above it (same paragraph) and the lines after it
/// until a blank line (once the block has some substance) or the budget.
fn error_block(lines: &[String], marker: usize, budget: usize) -> std::ops::Range<usize> {
    let mut start = marker;
    while start > 0 && marker - start < CONTEXT_BEFORE && !lines[start - 1].is_empty() {
        start -= 1;
    }
    start = start.max((marker + 1).saturating_sub(budget));
    let mut end = marker + 1;
    let mut substance = 1;
    while end < lines.len() && end - start < budget {
        if lines[end].is_empty() {
            if substance >= MIN_BLOCK_LINES {
                break;
            }
        } else {
            substance += 1;
        }
        end += 1;
    }
    while end > marker + 1 && lines[end - 1].is_empty() {
        end -= 1;
    }
    start..end
}

/// Indices of the last `count` non-empty lines at or after `from`, in order.
fn last_non_empty(lines: &[String], from: usize, count: usize) -> Vec<usize> {
    let mut indices: Vec<usize> = (from..lines.len())
        .rev()
        .filter(|&i| !lines[i].is_empty())
        .take(count)
        .collect();
    indices.reverse();
    indices
}

/// Joins the parts within the byte bound: the tail gets up to two fifths, the head the rest;
/// overlong lines are shortened with an elision mark.
fn render(parts: &Parts<'_>, limits: SummaryLimits) -> String {
    let max_line = (limits.max_bytes / 4).max(80);
    let gap = if parts.gap { ELISION.len() + 1 } else { 0 };
    let tail_budget = if parts.head.is_empty() {
        limits.max_bytes.saturating_sub(gap)
    } else {
        limits.max_bytes * 2 / 5
    };
    let tail = keep(parts.tail.iter().rev(), tail_budget, max_line, true);
    let head_budget = limits.max_bytes.saturating_sub(tail.len() + gap + 1);
    let head = keep(parts.head.iter(), head_budget, max_line, false);
    let elision = if parts.gap { ELISION } else { "" };
    let shown: Vec<&str> = [head.as_str(), elision, tail.as_str()]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect();
    shown.join("\n")
}

/// Whole `lines` in the order given while they fit in `budget` bytes (the first one shortened
/// when not even it fits), joined in their order in the output (reversed when `from_end`).
fn keep<'a>(
    lines: impl Iterator<Item = &'a &'a str>,
    budget: usize,
    max_line: usize,
    from_end: bool,
) -> String {
    let mut kept: Vec<String> = Vec::new();
    let mut used = 0;
    for line in lines {
        let line = shorten(line, max_line);
        let needed = line.len() + usize::from(!kept.is_empty());
        if used + needed > budget {
            if kept.is_empty() {
                kept.push(shorten(&line, budget));
            }
            break;
        }
        used += needed;
        kept.push(line);
    }
    if from_end {
        kept.reverse();
    }
    kept.join("\n")
}

/// `line` cut to at most `max` bytes on a character boundary, ending in an elision mark when cut.
pub(crate) fn shorten(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let end = base::text::floor_char_boundary(line, max.saturating_sub(ELISION.len()));
    if max < ELISION.len() {
        return String::new();
    }
    format!("{}{ELISION}", &line[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn numbered(count: usize) -> String {
        (1..=count).map(|i| format!("line {i}\n")).collect()
    }

    #[test]
    fn short_output_is_kept_whole() {
        let text = "\n\nall good\n3 passed\n\n";
        assert_eq!(
            summarize(text, SummaryLimits::default()),
            "all good\n3 passed"
        );
    }

    #[test]
    fn without_a_marker_the_end_is_kept() {
        let limits = SummaryLimits {
            max_lines: 4,
            max_bytes: 1000,
        };
        assert_eq!(
            summarize(&numbered(10), limits),
            "…\nline 8\nline 9\nline 10"
        );
    }

    #[test]
    fn strong_marker_wins_over_an_earlier_weak_one() {
        let mut text = String::from("test a ... FAILED\n");
        text.push_str(&numbered(20));
        text.push_str("thread 'a' panicked at src/lib.rs:1:1:\nboom\n");
        text.push_str(&numbered(20));
        let summary = summarize(&text, SummaryLimits::default());
        assert!(
            summary.starts_with("line 19\nline 20\nthread 'a' panicked at"),
            "{summary}"
        );
        assert!(!summary.contains("FAILED"), "{summary}");
    }

    #[test]
    fn strips_ansi_and_applies_carriage_returns() {
        let text = "\x1b[31merror\x1b[0m: bad\nprogress 10%\rprogress 100%\r\n";
        assert_eq!(
            summarize(text, SummaryLimits::default()),
            "error: bad\nprogress 100%"
        );
    }

    #[test]
    fn respects_line_and_byte_bounds_without_splitting_characters() {
        let text = format!("Error: {}\n{}", "é".repeat(5000), numbered(100));
        for (max_lines, max_bytes) in [(40, 4000), (10, 300), (3, 50), (1, 10), (5, 7)] {
            let limits = SummaryLimits {
                max_lines,
                max_bytes,
            };
            let summary = summarize(&text, limits);
            assert!(summary.len() <= max_bytes, "{max_bytes}: {}", summary.len());
            assert!(summary.lines().count() <= max_lines, "{summary}");
        }
    }

    #[test]
    fn shorten_cuts_on_a_char_boundary() {
        assert_eq!(shorten("ééé", 4), "…");
        assert_eq!(shorten("éééé", 6), "é…");
        assert_eq!(shorten("abc", 3), "abc");
    }
}
