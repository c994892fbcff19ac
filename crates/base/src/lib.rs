//! autobuild-base.

pub mod atomic_file;
pub mod cost;
pub mod diagnostic;
pub mod error;
pub mod failpoint;
pub mod json_text;
pub mod pattern;
pub mod unknown;
pub mod user_file;
