//! The built-in steps of a workflow and the pure logic they rest on.

pub mod check;
pub mod classify;
pub mod coverage;
pub mod dispute;
pub mod feedback;
pub mod gate;
pub mod no_tests;
pub mod normalize;
pub mod oracle;
pub mod pytest_ini;
pub mod red;
pub mod reveal;
pub mod scope;
pub mod stall;
pub mod summary;
pub mod test_results;
pub mod verdict;
pub mod verify;
pub mod worktree_file;
