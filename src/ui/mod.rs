//! Everything a user sees: errors, warnings, progress. No other module prints.

pub mod progress;

use std::io::{self, BufRead, IsTerminal, Write};

use tracing_subscriber::EnvFilter;

use crate::error::Error;

/// Logs go to stderr; `AUTOBUILD_LOG` (an `EnvFilter` string) overrides the level.
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
        .without_time()
        .with_target(false)
        .try_init();
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
