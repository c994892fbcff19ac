//! The built-in steps of a workflow and the pure logic they rest on.

pub mod check;
