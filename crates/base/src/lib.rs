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
