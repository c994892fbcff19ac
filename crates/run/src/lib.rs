//! autobuild-run.

pub mod engine;
pub mod feature;
pub mod report;
