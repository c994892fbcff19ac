//! The built-in steps of a workflow and the pure logic they rest on.

pub mod check;
pub mod verdict;
pub mod normalize;
pub mod verify;
pub mod summary;
pub mod classify;
pub mod gate;
pub mod feedback;
pub mod stall;
