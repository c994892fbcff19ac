//! The foundations every layer shares: typed errors and diagnostics, the reader of user files,
//! atomic files, failpoints and the glob dialect of path patterns (ARCHITECTURE.md, "Layers").

pub mod atomic_file;
pub mod cost;
pub mod diagnostic;
pub mod error;
pub mod failpoint;
pub mod json_text;
pub mod memory;
pub mod pattern;
pub mod quoted;
pub mod regexes;
pub mod text;
pub mod tree_copy;
pub mod unknown;
pub mod user_file;

/// A keyword's name as files, records and events write it: the one `as_str` of every enum that
/// derives strum's `IntoStaticStr` (its serialized names are declared once, on the enum).
pub trait Keyword: Copy + Into<&'static str> {
    fn as_str(self) -> &'static str {
        self.into()
    }
}

impl<T: Copy + Into<&'static str>> Keyword for T {}
