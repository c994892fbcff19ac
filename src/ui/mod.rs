//! Everything a user sees: errors, warnings, progress. No other module prints.

pub mod annotations;
pub mod colour;
pub mod feature;
pub mod progress;

use std::io::{self, BufRead, IsTerminal, Write};

use tracing_subscriber::EnvFilter;

use crate::engine::io::Prompter;
use crate::error::Error;
use crate::process::CancelToken;

/// Logs go to stderr; `AUTOBUILD_LOG` (an `EnvFilter` string) overrides the level. They are
/// coloured only when stderr is ([`colour`]: a terminal, no `NO_COLOR`, or `--color always`):
/// escape codes in a CI log or a file are noise. Call after [`colour::init`].
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
        .with_ansi(colour::on_stderr())
        .without_time()
        .with_target(false)
        .try_init();
}

/// `error: <message>` on stderr, then the help line if there is one.
pub fn print_error(error: &Error) {
    let mut text = match error {
        Error::Invalid(diagnostics) => diagnostics.to_string(),
        other => format!("{} {other}", colour::paint(colour::ERROR, "error:")),
    };
    if let Some(help) = error.help() {
        text.push_str(&format!(
            "\n  {} {help}",
            colour::paint(colour::HELP, "help:")
        ));
    }
    error_line(&text);
}

/// `warning: <message>` on stderr.
pub fn warn(message: &str) {
    error_line(&format!(
        "{} {message}",
        colour::paint(colour::WARNING, "warning:")
    ));
}

/// A command's result printed by `print`, with its `warnings` on stderr first. On GitHub
/// Actions a text result is a collapsible `::group::` titled `group` (`None` for a JSON
/// document, which stays alone on stdout) and the warnings and `errors` are
/// `::warning::`/`::error::` annotations (the errors are part of the result otherwise).
pub fn result(group: Option<&str>, warnings: &[String], errors: &[String], print: impl FnOnce()) {
    let ci = annotations::enabled();
    for warning in warnings {
        if ci {
            note(&annotations::plain("warning", warning));
        } else {
            warn(warning);
        }
    }
    let group = group.filter(|_| ci);
    if let Some(title) = group {
        line(&annotations::group(title));
    }
    print();
    if group.is_some() {
        line(annotations::END_GROUP);
    }
    if ci {
        for error in errors {
            note(&annotations::plain("error", error));
        }
    }
}

/// A line of commentary on stderr, for commands whose stdout is read by a program.
pub fn note(message: &str) {
    error_line(message);
}

/// A line on stderr, without colour codes unless stderr shows colour.
fn error_line(text: &str) {
    let _ = writeln!(
        io::stderr().lock(),
        "{}",
        colour::for_stream(text, colour::on_stderr())
    );
}

/// Text on stdout as it is (no newline added), flushed at once: for output that grows.
pub fn text(text: &str) {
    let mut out = io::stdout().lock();
    let _ = out.write_all(colour::for_stream(text, colour::on_stdout()).as_bytes());
    let _ = out.flush();
}

/// A located problem that does not stop the command (it reads `warning: path:line:col: …`).
pub fn diagnostic(diagnostic: &crate::diagnostic::Diagnostic) {
    let _ = writeln!(io::stderr().lock(), "{diagnostic}");
}

/// A line of normal output on stdout.
pub fn line(text: &str) {
    let _ = writeln!(
        io::stdout().lock(),
        "{}",
        colour::for_stream(text, colour::on_stdout())
    );
}

/// A line for a live panel drawn on stderr, without colour codes unless stderr shows colour.
pub fn for_panel(text: &str) -> String {
    colour::for_stream(text, colour::on_stderr()).into_owned()
}

pub fn stderr_is_terminal() -> bool {
    io::stderr().is_terminal()
}

/// Prints what a feature command had to show (its warnings, then its lines); its exit code.
pub fn show(shown: crate::feature::events::Shown) -> u8 {
    for warning in &shown.warnings {
        warn(warning);
    }
    for text in &shown.lines {
        line(text);
    }
    shown.exit_code
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
