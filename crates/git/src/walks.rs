//! A count of the working-tree walks the runner makes, per working tree, so the bound on them
//! (at most two per turn of the default loop: one after the writer, one after the checks and
//! the reviewer; see ARCHITECTURE.md, "git") is a tested fact, not a hope.
//!
//! A walk is one libgit2 pass over every file of a working tree: a status, a diff of the index
//! against the working tree, a checkout that removes untracked files. Each costs about one
//! `git status`. The count is kept per thread (the engine runs git on the thread that drives
//! the run), so tests running side by side do not see each other's walks.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

thread_local! {
    static WALKS: RefCell<HashMap<PathBuf, u64>> = RefCell::new(HashMap::new());
}

/// Notes one walk of the working tree at `root`.
pub(crate) fn count(root: &Path) {
    let root = super::repo::normalize(root);
    WALKS.with(|walks| *walks.borrow_mut().entry(root).or_default() += 1);
}

/// How many walks of the working tree at `root` this thread has made so far.
pub fn walks_of(root: &Path) -> u64 {
    let root = super::repo::normalize(root);
    WALKS.with(|walks| walks.borrow().get(&root).copied().unwrap_or(0))
}
