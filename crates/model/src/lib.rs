//! What a run is asked to do, as typed data: workflows, profiles, tasks, project config, feature
//! files and their JSON Schemas, and the pure step decisions over them (ARCHITECTURE.md, "Layers").

pub mod feature_file;
pub mod profile;
pub mod project;
pub mod schema;
pub mod steps;
pub mod task;
pub mod workflow;
