//! Located, user-facing problems in files a user wrote (workflows, tasks, config, features).
//!
//! Every loader and validator reports `Diagnostic`s instead of failing on the first problem, so a
//! user sees all of a file's mistakes at once, each as `path:line:col: message` with the offending
//! line, a caret, and a help line such as a "did you mean" suggestion.

use std::fmt;
use std::path::{Path, PathBuf};

/// A position in a source file; line and column are 1-based, column counted in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// The location of a byte offset in `source`.
    pub fn from_offset(source: &str, offset: usize) -> Location {
        let before = &source[..crate::text::floor_char_boundary(source, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Location { line, column }
    }

    /// The byte offset of every line's start in `source`, 0 first: the index
    /// [`Location::from_line_starts`] searches.
    pub fn line_starts(source: &str) -> Vec<usize> {
        std::iter::once(0)
            .chain(source.match_indices('\n').map(|(i, _)| i + 1))
            .collect()
    }

    /// [`Location::from_offset`] through `line_starts` ([`Location::line_starts`] of `source`):
    /// a binary search instead of a count from the start.
    pub fn from_line_starts(source: &str, line_starts: &[usize], offset: usize) -> Location {
        let offset = crate::text::floor_char_boundary(source, offset);
        let line = line_starts.partition_point(|&start| start <= offset).max(1);
        let line_start = line_starts.get(line - 1).copied().unwrap_or(0);
        let column = source[line_start..offset].chars().count() + 1;
        Location { line, column }
    }
}

/// Whether a problem stops what reported it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Severity {
    #[default]
    Error,
    /// Worth knowing, but the file is usable as it is (printed as `warning:`).
    Warning,
}

/// One problem, optionally located in a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub path: PathBuf,
    pub location: Option<Location>,
    /// The text of the offending line, for the snippet (boxed: diagnostics travel in `Err`s,
    /// which are kept small).
    pub source_line: Option<Box<str>>,
    pub message: String,
    pub help: Option<String>,
}

impl Diagnostic {
    /// A problem with a whole file (or one that cannot be located more precisely).
    pub fn new(path: impl Into<PathBuf>, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            path: path.into(),
            location: None,
            source_line: None,
            message: message.into(),
            help: None,
        }
    }

    /// A problem at a byte offset of `source`, the text of the file at `path`.
    pub fn at_offset(
        path: impl Into<PathBuf>,
        source: &str,
        offset: usize,
        message: impl Into<String>,
    ) -> Diagnostic {
        let location = Location::from_offset(source, offset);
        Diagnostic::at(path, source, location, message)
    }

    /// A problem at a line/column of `source`.
    pub fn at(
        path: impl Into<PathBuf>,
        source: &str,
        location: Location,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            location: Some(location),
            source_line: source.lines().nth(location.line - 1).map(Box::from),
            ..Diagnostic::new(path, message)
        }
    }

    /// The same problem as a warning: reported, but it stops nothing.
    pub fn into_warning(mut self) -> Diagnostic {
        self.severity = Severity::Warning;
        self
    }

    pub fn is_warning(&self) -> bool {
        self.severity == Severity::Warning
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `path:line:col: message` on one line, for lists of warnings.
    pub fn headline(&self) -> String {
        match self.location {
            Some(loc) => format!(
                "{}:{}:{}: {}",
                self.path.display(),
                loc.line,
                loc.column,
                self.message
            ),
            None => format!("{}: {}", self.path.display(), self.message),
        }
    }
}

impl fmt::Display for Diagnostic {
    /// `path:line:col: message`, then the line with a caret under the column, then `help:`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self.path.display();
        if self.is_warning() {
            f.write_str("warning: ")?;
        }
        match self.location {
            Some(loc) => write!(f, "{path}:{}:{}: {}", loc.line, loc.column, self.message)?,
            None => write!(f, "{path}: {}", self.message)?,
        }
        if let (Some(loc), Some(line)) = (self.location, &self.source_line) {
            let gutter = loc.line.to_string();
            let pad = " ".repeat(gutter.len());
            let caret_pad: String = line
                .chars()
                .take(loc.column.saturating_sub(1))
                .map(|c| if c == '\t' { '\t' } else { ' ' })
                .collect();
            write!(f, "\n{pad} |\n{gutter} | {line}\n{pad} | {caret_pad}^")?;
        }
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// The closest of `candidates` to `name`, when it is close enough to be a likely typo. A close
/// candidate that has every `_`-separated word of `name` wins over a closer one that does not
/// (`max_turns` means `max_agent_turns`, not `max_tokens`).
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let has_words = |candidate: &str| {
        name.split('_')
            .all(|word| candidate.split('_').any(|other| other == word))
    };
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(name, candidate), candidate))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| {
            (has_words(a.1), a.0)
                .partial_cmp(&(has_words(b.1), b.0))
                .unwrap_or(std::cmp::Ordering::Equal)
        })
        .map(|(_, candidate)| candidate)
}

/// Several diagnostics, printed one after another with a blank line between.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

impl From<Vec<Diagnostic>> for Diagnostics {
    fn from(v: Vec<Diagnostic>) -> Self {
        Diagnostics(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offset_maps_to_line_and_column() {
        let src = "a = 1\nbb = 2\n";
        assert_eq!(
            Location::from_offset(src, 6),
            Location { line: 2, column: 1 }
        );
        assert_eq!(
            Location::from_offset(src, 9),
            Location { line: 2, column: 4 }
        );
    }

    #[test]
    fn the_line_index_agrees_with_counting_from_the_start() {
        for src in [
            "",
            "\n",
            "a = 1\nbb = 2\n",
            "é = \"ü\"\n\n[t]\nk = 'ß'",
            "x\r\ny",
        ] {
            let starts = Location::line_starts(src);
            for offset in 0..=src.len() + 2 {
                assert_eq!(
                    Location::from_line_starts(src, &starts, offset),
                    Location::from_offset(src, offset),
                    "{src:?} at {offset}"
                );
            }
        }
    }

    #[test]
    fn renders_snippet_with_caret_and_help() {
        let src = "name = \"x\"\nmax_iteration = 3\n";
        let d = Diagnostic::at_offset("w.toml", src, 11, "unknown key `max_iteration`")
            .with_help("did you mean `max_iterations`?");
        let text = d.to_string();
        assert!(text.starts_with("w.toml:2:1: unknown key `max_iteration`"));
        assert!(text.contains("2 | max_iteration = 3"));
        assert!(text.contains("  | ^"));
        assert!(text.ends_with("help: did you mean `max_iterations`?"));
    }

    #[test]
    fn suggests_close_names_only() {
        let names = ["max_iterations", "until", "stall"];
        assert_eq!(did_you_mean("max_iteration", names), Some("max_iterations"));
        assert_eq!(did_you_mean("zzz", names), None);
        let keys = ["max_agent_turns", "max_tokens", "timeout"];
        assert_eq!(did_you_mean("max_turns", keys), Some("max_agent_turns"));
        assert_eq!(did_you_mean("max_token", keys), Some("max_tokens"));
    }
}
