//! GitHub Actions workflow commands (`::error file=…,line=…::message`, `::group::`), written
//! when `GITHUB_ACTIONS=true` so a run's problems show on the pull request's files.

use crate::diagnostic::{Diagnostic, Severity};

/// Whether this process runs as a GitHub Actions step.
pub fn enabled() -> bool {
    std::env::var_os("GITHUB_ACTIONS").is_some_and(|v| v == "true")
}

/// `::error file=F,line=L,col=C::message` (or `::warning`) for one located problem.
pub fn diagnostic(d: &Diagnostic) -> String {
    let mut props = vec![format!("file={}", property(&d.path.display().to_string()))];
    if let Some(at) = d.location {
        props.push(format!("line={}", at.line));
        props.push(format!("col={}", at.column));
    }
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    format!("::{severity} {}::{}", props.join(","), data(&message))
}

/// `::warning::message` or `::error::message`, unlocated.
pub fn plain(severity: &str, message: &str) -> String {
    format!("::{severity}::{}", data(message))
}

pub fn group(title: &str) -> String {
    format!("::group::{}", data(title))
}

pub const END_GROUP: &str = "::endgroup::";

/// A message as GitHub reads it: `%`, CR and LF escaped.
fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A property value: also `:` and `,` escaped.
fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn problems_become_located_workflow_commands() {
        let mut d = Diagnostic::new(
            ".autobuild/workflows/a,b.toml",
            "unknown role `cocah`\n50% sure",
        )
        .with_help("did you mean `coach`?");
        d.location = Some(crate::diagnostic::Location { line: 3, column: 7 });
        assert_eq!(
            diagnostic(&d),
            "::error file=.autobuild/workflows/a%2Cb.toml,line=3,col=7::unknown role `cocah`%0A50%25 \
             sure%0Ahelp: did you mean `coach`?"
        );
        assert_eq!(plain("warning", "a\nb"), "::warning::a%0Ab");
        assert_eq!(group("doctor"), "::group::doctor");
    }
}
