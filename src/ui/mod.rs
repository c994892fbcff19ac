//! Everything a user sees: errors, warnings, progress. No other module prints.

pub mod progress;

use std::io::{self, BufRead, IsTerminal, Write};

use tracing_subscriber::EnvFilter;

use crate::agents::process::CancelToken;
use crate::engine::io::Prompter;
use crate::error::Error;

/// Logs go to stderr; `AUTOBUILD_LOG` (an `EnvFilter` string) overrides the level. They are
/// coloured only on a terminal, and never when `NO_COLOR` is set (no-color.org): escape codes
/// in a CI log or a file are noise.
pub fn init_logging(verbose: bool, quiet: bool) {
    let default = if verbose {
        "autobuild=debug"
    } else if quiet {
        "error"
    } else {
        "warn"
    };
    let filter =
        EnvFilter::try_from_env("AUTOBUILD_LOG").unwrap_or_else(|_| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr)
        .with_ansi(log_colours(
            io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").as_deref(),
        ))
        .without_time()
        .with_target(false)
        .try_init();
}

/// Whether log lines may carry ANSI colour codes; `NO_COLOR` counts when set and non-empty.
fn log_colours(stderr_is_terminal: bool, no_color: Option<&std::ffi::OsStr>) -> bool {
    stderr_is_terminal && no_color.is_none_or(|value| value.is_empty())
}

/// `error: <message>` on stderr, then the help line if there is one.
pub fn print_error(error: &Error) {
    let mut err = io::stderr().lock();
    let _ = match error {
        Error::Invalid(diagnostics) => writeln!(err, "{diagnostics}"),
        other => writeln!(err, "error: {other}"),
    };
    if let Some(help) = error.help() {
        let _ = writeln!(err, "  help: {help}");
    }
}

/// `warning: <message>` on stderr.
pub fn warn(message: &str) {
    let _ = writeln!(io::stderr().lock(), "warning: {message}");
}

/// A located problem that does not stop the command (it reads `warning: path:line:col: …`).
pub fn diagnostic(diagnostic: &crate::diagnostic::Diagnostic) {
    let _ = writeln!(io::stderr().lock(), "{diagnostic}");
}

/// A line of normal output on stdout.
pub fn line(text: &str) {
    let _ = writeln!(io::stdout().lock(), "{text}");
}

pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// A person is there to answer questions.
pub fn is_interactive() -> bool {
    io::stdin().is_terminal() && io::stderr().is_terminal()
}

/// The terminal as the run's [`Prompter`]: asks when a person is there.
pub struct TerminalPrompter;

impl Prompter for TerminalPrompter {
    fn is_interactive(&self) -> bool {
        is_interactive()
    }

    fn confirm(&self, question: &str, cancel: &CancelToken) -> Option<bool> {
        confirm_or_cancel(question, cancel)
    }
}

/// Asks a yes/no question on the terminal; anything but yes is no.
pub fn confirm(question: &str) -> bool {
    let mut err = io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    let mut answer = String::new();
    if io::stdin().lock().read_line(&mut answer).is_err() {
        return false;
    }
    matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Like [`confirm`], but gives up when `cancel` is set (Ctrl-C at the question): `None`.
/// The answer is read on a helper thread because a terminal read is not interrupted by the
/// signal handler.
pub fn confirm_or_cancel(question: &str, cancel: &CancelToken) -> Option<bool> {
    let mut err = io::stderr().lock();
    let _ = write!(err, "{question} [y/N] ");
    let _ = err.flush();
    drop(err);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut answer = String::new();
        let read = io::stdin().lock().read_line(&mut answer);
        let _ = tx.send(read.map(|_| answer));
    });
    loop {
        if cancel.is_cancelled() {
            let _ = writeln!(io::stderr().lock());
            return None;
        }
        match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(Ok(answer)) => {
                return Some(matches!(
                    answer.trim().to_ascii_lowercase().as_str(),
                    "y" | "yes"
                ))
            }
            Ok(Err(_)) | Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                return Some(false)
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn log_lines_are_coloured_only_on_a_terminal_without_no_color() {
        assert!(log_colours(true, None));
        assert!(log_colours(true, Some(OsStr::new(""))));
        assert!(!log_colours(true, Some(OsStr::new("1"))));
        assert!(!log_colours(false, None));
    }
}
