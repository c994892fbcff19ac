//! Where a value came from: the file (or command-line flag) it was written in, the precedence
//! layer of that file, and the line and column inside it.
//!
//! Every key and value of a parsed document carries a [`Pos`], and merging keeps the position
//! of whichever layer supplied the value. That is what lets one validator report errors inside
//! `.autobuild/config.toml` or a `--set` flag as precisely as inside a workflow file, and what
//! `workflows show --resolved` prints next to overridden values.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use crate::diagnostic::{Diagnostic, Location};

/// Precedence layers, lowest first (docs/workflows.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// Embedded in the binary from the crate's `workflows/`, `prompts/`, `profiles/`.
    BuiltIn,
    /// The user's configuration directory.
    User,
    /// The repository's `.autobuild/` directory.
    Repo,
    /// A file named explicitly on the command line.
    File,
    /// `.autobuild/config.toml`, whose `[roles.*]` and `[profiles.*]` tables override the
    /// workflows' roles and the profiles.
    Config,
    /// `--set`, `--max-turns`, `--model` (and its aliases), `--agent`.
    CommandLine,
}

impl Layer {
    pub fn label(self) -> &'static str {
        match self {
            Layer::BuiltIn => "built-in",
            Layer::User => "user",
            Layer::Repo => "repo",
            Layer::File => "file",
            Layer::Config => "config",
            Layer::CommandLine => "command line",
        }
    }
}

/// How a file is named in listings: `built-in` for embedded files, else its path.
pub fn label(path: &Path, layer: Layer) -> String {
    match layer {
        Layer::BuiltIn => Layer::BuiltIn.label().to_string(),
        _ => path.display().to_string(),
    }
}

/// The text of one file or flag, with the name diagnostics show for it.
pub struct Source {
    /// The path shown to users: relative to the repository root where possible,
    /// `<built-in>/…` for embedded files, the flag for command-line values.
    pub path: PathBuf,
    pub text: String,
    pub layer: Layer,
    /// The byte offset of every line's start, built on the first position asked for: a
    /// document's every key and value has one, and counting lines from the text's start for
    /// each was quadratic in the file's size.
    line_starts: OnceLock<Vec<usize>>,
}

impl Source {
    pub fn new(path: impl Into<PathBuf>, text: impl Into<String>, layer: Layer) -> Arc<Source> {
        Arc::new(Source {
            path: path.into(),
            text: text.into(),
            layer,
            line_starts: OnceLock::new(),
        })
    }

    /// How the file is named in listings: `built-in`, else its path.
    pub fn label(&self) -> String {
        label(&self.path, self.layer)
    }

    /// The position of a byte offset of the text.
    pub fn pos_at_offset(self: &Arc<Self>, offset: usize) -> Pos {
        let starts = self
            .line_starts
            .get_or_init(|| Location::line_starts(&self.text));
        Pos {
            location: Location::from_line_starts(&self.text, starts, offset),
            source: Arc::clone(self),
        }
    }

    pub fn pos(self: &Arc<Self>, location: Location) -> Pos {
        Pos {
            source: Arc::clone(self),
            location,
        }
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Source({}, {:?})", self.path.display(), self.layer)
    }
}

/// A line and column in a [`Source`].
#[derive(Clone)]
pub struct Pos {
    pub source: Arc<Source>,
    pub location: Location,
}

impl Pos {
    /// A located problem with the offending line and a caret.
    pub fn error(&self, message: impl Into<String>) -> Diagnostic {
        Diagnostic::at(&self.source.path, &self.source.text, self.location, message)
    }

    /// The same source, `columns` characters further right on the same line.
    pub fn shifted(&self, columns: usize) -> Pos {
        Pos {
            source: Arc::clone(&self.source),
            location: Location {
                line: self.location.line,
                column: self.location.column + columns,
            },
        }
    }

    pub fn layer(&self) -> Layer {
        self.source.layer
    }

    /// `path:line`, as shown next to overridden values; a command-line flag as written
    /// (`--model player=haiku`).
    pub fn describe(&self) -> String {
        match self.source.layer {
            Layer::CommandLine => format!("{} {}", self.source.path.display(), self.source.text),
            _ => format!("{}:{}", self.source.path.display(), self.location.line),
        }
    }

    /// Whether both positions are in the same source text.
    pub fn same_source(&self, other: &Pos) -> bool {
        Arc::ptr_eq(&self.source, &other.source)
    }
}

impl fmt::Debug for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}:{}",
            self.source.path.display(),
            self.location.line,
            self.location.column
        )
    }
}
