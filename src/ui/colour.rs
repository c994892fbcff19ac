//! Colour: whether each output stream gets ANSI colour, and the few styles autobuild uses.
//!
//! One decision per stream, made once at start-up from `--color auto|always|never`, `NO_COLOR`
//! (no-color.org: set and non-empty turns colour off), `TERM=dumb`, and whether the stream is a
//! terminal — colour codes in a CI log or a file are noise. [`paint`] adds codes only when some
//! stream will show them, and every writer in [`crate::ui`] strips them again for a stream that
//! must stay plain, so one painted line can go to either stream. Before [`init`] (unit tests,
//! library use) nothing is painted.

use std::borrow::Cow;
use std::ffi::OsStr;
use std::io::{self, IsTerminal};
use std::sync::atomic::{AtomicBool, Ordering};

use anstyle::{AnsiColor, Style};

static STDOUT: AtomicBool = AtomicBool::new(false);
static STDERR: AtomicBool = AtomicBool::new(false);

/// `--color`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum When {
    #[default]
    Auto,
    Always,
    Never,
}

pub const ERROR: Style = AnsiColor::Red.on_default().bold();
pub const WARNING: Style = AnsiColor::Yellow.on_default().bold();
/// Passed, approved, merged, ok.
pub const GOOD: Style = AnsiColor::Green.on_default();
/// Failed, not approved, blocked.
pub const BAD: Style = AnsiColor::Red.on_default();
/// Needs attention without being a failure: feedback, warn, waiting.
pub const NOTICE: Style = AnsiColor::Yellow.on_default();
pub const HELP: Style = AnsiColor::Cyan.on_default();

/// Decides colour for stdout and stderr from `when` and the environment.
pub fn init(when: When) {
    let no_color = std::env::var_os("NO_COLOR");
    let term = std::env::var_os("TERM");
    let decide =
        |terminal: bool| wants_colour(when, terminal, no_color.as_deref(), term.as_deref());
    STDOUT.store(decide(io::stdout().is_terminal()), Ordering::Relaxed);
    STDERR.store(decide(io::stderr().is_terminal()), Ordering::Relaxed);
}

/// Whether a stream gets colour: `always` and `never` say so; `auto` only on a terminal, not
/// with a non-empty `NO_COLOR`, not on a `dumb` terminal.
pub fn wants_colour(
    when: When,
    terminal: bool,
    no_color: Option<&OsStr>,
    term: Option<&OsStr>,
) -> bool {
    match when {
        When::Always => true,
        When::Never => false,
        When::Auto => {
            terminal
                && no_color.is_none_or(|value| value.is_empty())
                && term != Some(OsStr::new("dumb"))
        }
    }
}

pub fn on_stdout() -> bool {
    STDOUT.load(Ordering::Relaxed)
}

pub fn on_stderr() -> bool {
    STDERR.load(Ordering::Relaxed)
}

/// `text` in `style`, when any stream shows colour.
pub fn paint(style: Style, text: &str) -> String {
    if on_stdout() || on_stderr() {
        format!("{style}{text}{style:#}")
    } else {
        text.to_string()
    }
}

/// `text` as a stream that shows colour (`coloured`) or not should get it.
pub fn for_stream(text: &str, coloured: bool) -> Cow<'_, str> {
    if coloured || !text.contains('\u{1b}') {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(anstream::adapter::strip_str(text).to_string())
    }
}

/// The style of a run or task status word (`merged`, `blocked`, …), if it has one.
pub fn status_style(status: &str) -> Option<Style> {
    match status {
        "merged" | "approved" | "passed" | "ok" | "approve" => Some(GOOD),
        "blocked" | "stalled" | "failed" | "halted" | "cancelled" | "timed_out" | "error"
        | "missing" => Some(BAD),
        "feedback" | "interrupted" | "warn" | "running" => Some(NOTICE),
        _ => None,
    }
}

/// `text` painted in its status style, if it has one.
pub fn status(text: &str) -> String {
    status_padded(text, 0)
}

/// The status word painted in its style, then padded with spaces to `width` columns.
pub fn status_padded(status: &str, width: usize) -> String {
    let pad = " ".repeat(width.saturating_sub(status.chars().count()));
    match status_style(status) {
        Some(style) => format!("{}{pad}", paint(style, status)),
        None => format!("{status}{pad}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_colours_only_a_terminal_without_no_color_or_a_dumb_term() {
        assert!(wants_colour(When::Auto, true, None, None));
        assert!(wants_colour(When::Auto, true, Some(OsStr::new("")), None));
        assert!(!wants_colour(When::Auto, true, Some(OsStr::new("1")), None));
        assert!(!wants_colour(When::Auto, false, None, None));
        assert!(!wants_colour(
            When::Auto,
            true,
            None,
            Some(OsStr::new("dumb"))
        ));
    }

    #[test]
    fn always_and_never_are_obeyed_whatever_the_environment() {
        assert!(wants_colour(
            When::Always,
            false,
            Some(OsStr::new("1")),
            None
        ));
        assert!(!wants_colour(When::Never, true, None, None));
    }

    #[test]
    fn a_plain_stream_gets_the_text_without_codes() {
        let painted = format!("{GOOD}merged{GOOD:#} and {BAD}blocked{BAD:#}");
        assert_eq!(for_stream(&painted, false), "merged and blocked");
        assert_eq!(for_stream(&painted, true), painted);
    }

    #[test]
    fn nothing_is_painted_before_init() {
        assert_eq!(paint(ERROR, "error"), "error");
        assert_eq!(status("merged"), "merged");
    }
}
