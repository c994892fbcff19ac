//! autobuild-model.

pub mod feature_file;
pub mod profile;
pub mod project;
pub mod schema;
pub mod steps;
pub mod task;
pub mod workflow;
