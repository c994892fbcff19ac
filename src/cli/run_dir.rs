//! The id a user typed for the commands that act on existing runs (`status`, `resume`,
//! `complete`, `discard`, `logs`, `report`, `approve`), checked before anything is read
//! ([`checked_run`]): it must be a task or feature id or an earlier run's `<ID>@<N>`, and its
//! directory must be inside `.autobuild/runs/` (see [`crate::engine::paths`]). The operations
//! on the run itself are [`crate::engine::existing`]'s.

use std::path::PathBuf;

use crate::cli::task::current_dir;
use crate::engine::paths::{validate_run_id, RunPaths};
use crate::engine::plan::repo_root;
use crate::error::Error;
use crate::project::Layout;

/// The repository root, once `run_id` is known to name a directory directly under
/// `.autobuild/runs/`. Nothing is read before the id itself is checked.
pub(super) fn checked_run(run_id: &str) -> Result<PathBuf, Error> {
    validate_run_id(run_id)?;
    let root = repo_root(&current_dir()?)?;
    RunPaths::within(&Layout::new(&root).runs(), run_id)?;
    Ok(root)
}
