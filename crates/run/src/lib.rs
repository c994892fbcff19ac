//! Running: the engine that walks a workflow for one task, the feature runner's waves and
//! landings, and the run records and reports (ARCHITECTURE.md, "Layers").

pub mod engine;
pub mod feature;
pub mod forge;
pub mod otel;
pub mod report;
