//! A new worktree's files checked out in parts of at most [`PART_FILES`] files each.
//!
//! libgit2's checkout first diffs the whole target tree against the empty worktree and holds
//! one delta per file (~110 bytes) until the last file is written, beside the index it builds:
//! at 100,000 files that was 11 MB of deltas on top of the index's 10, the peak of a whole run.
//! In parts, only one part's deltas are alive at a time. The parts are checked out in tree order
//! into one in-memory index, written once at the end, so the files and the index come out as
//! one checkout's: every part's checkout sees the files and `.gitattributes` of the parts
//! before it, as one checkout sees the files before each file.

use std::collections::HashMap;

use git2::build::CheckoutBuilder;
use git2::{Error, ObjectType, Oid, Repository, Tree, TreeEntry};

/// The most files a part holds, unless one path alone holds more: a directory with more files
/// is split into its entries.
pub(crate) const PART_FILES: usize = 8192;

/// Checks out `HEAD` into the empty working directory of `repo` (a worktree just recorded, no
/// index yet), `max` files at a time, and writes its index.
pub(crate) fn check_out_head(repo: &Repository, max: usize) -> Result<(), Error> {
    let tree = repo.head()?.peel_to_tree()?;
    let parts = parts(repo, &tree, max)?;
    if parts.len() <= 1 {
        // One part is the whole tree: no path list to match against.
        return repo.checkout_head(None);
    }
    for part in &parts {
        check_out_part(repo, part)?;
    }
    repo.index()?.write()
}

/// libgit2's `GIT_CHECKOUT_DONT_WRITE_INDEX` (`include/git2/checkout.h`, 1.9), which
/// libgit2-sys does not declare.
const DONT_WRITE_INDEX: u32 = 1 << 23;

/// One part's checkout: the paths taken literally, and the index updated in memory only
/// (the next part's checkout keeps it: it has never been on disk), so that no part writes the
/// whole index again.
fn check_out_part(repo: &Repository, paths: &[Vec<u8>]) -> Result<(), Error> {
    use git2::Binding;

    let mut builder = CheckoutBuilder::new();
    builder.disable_pathspec_match(true);
    for path in paths {
        builder.path(path.as_slice());
    }
    // SAFETY: the options are initialized by libgit2 and then filled in by git2 from
    // `builder`, whose path strings outlive the call; `repo.raw()` is a live repository.
    let code = unsafe {
        let mut opts = std::mem::zeroed::<libgit2_sys::git_checkout_options>();
        let init = libgit2_sys::git_checkout_init_options(
            &mut opts,
            libgit2_sys::GIT_CHECKOUT_OPTIONS_VERSION,
        );
        if init < 0 {
            return Err(Error::last_error(init));
        }
        builder.configure(&mut opts);
        opts.checkout_strategy |= DONT_WRITE_INDEX;
        libgit2_sys::git_checkout_head(repo.raw(), &opts)
    };
    if code < 0 {
        return Err(Error::last_error(code));
    }
    Ok(())
}

/// The paths that split `tree` into parts of at most `max` files, in tree order: each path a
/// file, a link, a submodule or a whole directory, and every file under exactly one of them.
pub(crate) fn parts(
    repo: &Repository,
    tree: &Tree<'_>,
    max: usize,
) -> Result<Vec<Vec<Vec<u8>>>, Error> {
    let mut planner = Planner {
        repo,
        max: max.max(1),
        counts: HashMap::new(),
        parts: Vec::new(),
        current: Vec::new(),
        current_files: 0,
    };
    planner.split(tree, b"")?;
    if !planner.current.is_empty() {
        planner.parts.push(planner.current);
    }
    Ok(planner.parts)
}

struct Planner<'r> {
    repo: &'r Repository,
    max: usize,
    /// Files under each tree counted so far; a tree that recurs (same content in two places)
    /// is read once.
    counts: HashMap<Oid, usize>,
    parts: Vec<Vec<Vec<u8>>>,
    current: Vec<Vec<u8>>,
    current_files: usize,
}

impl Planner<'_> {
    fn split(&mut self, tree: &Tree<'_>, prefix: &[u8]) -> Result<(), Error> {
        for entry in tree.iter() {
            // Names are bytes: a file name need not be UTF-8.
            let path = [prefix, entry.name_bytes()].concat();
            let files = self.files_at(&entry)?;
            if files > self.max {
                let subtree = self.repo.find_tree(entry.id())?;
                self.split(&subtree, &[path.as_slice(), b"/"].concat())?;
                continue;
            }
            if self.current_files + files > self.max {
                self.parts.push(std::mem::take(&mut self.current));
                self.current_files = 0;
            }
            self.current.push(path);
            self.current_files += files;
        }
        Ok(())
    }

    /// The files `entry` stands for: one, or every file under a directory.
    fn files_at(&mut self, entry: &TreeEntry<'_>) -> Result<usize, Error> {
        if entry.kind() != Some(ObjectType::Tree) {
            return Ok(1);
        }
        let id = entry.id();
        if let Some(&files) = self.counts.get(&id) {
            return Ok(files);
        }
        let tree = self.repo.find_tree(id)?;
        let mut files = 0;
        for entry in tree.iter() {
            files += self.files_at(&entry)?;
        }
        self.counts.insert(id, files);
        Ok(files)
    }
}

#[cfg(test)]
mod tests;
