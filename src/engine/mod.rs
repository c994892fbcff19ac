//! The engine: runs a resolved workflow for one task — preflight, the interpreter, the step
//! executors, persisted state for resume, the event stream and the run lock.

pub mod events;
