//! The last worktree index the walks used, kept in memory between them. libgit2 parses and
//! checksums the whole index file at every read (9 MB at 100,000 files: tens of milliseconds),
//! and a turn's two walks would read it twice more than the file changes.
//!
//! The kept copy is only ever one whose content is the file's (just read or just written, plus
//! stat information a walk refreshed), and it is taken out while in use: code that fails
//! between staging and writing drops it, and the next walk reads the file again. Before use
//! it is compared with the file (libgit2 compares the file's trailing checksum with its own)
//! and read again when anything else wrote the file since. One index is kept per thread: the
//! engine drives a run's git work on one thread, and a run works on one worktree.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use git2::{Index, Repository};

use super::error::{Context, GitError};

thread_local! {
    static KEPT: RefCell<Option<(PathBuf, Index)>> = const { RefCell::new(None) };
}

/// `repo`'s index (of the worktree at `worktree`): the kept one when it is this repository's
/// and still its file's, else read from the file.
pub(crate) fn take(repo: &Repository, worktree: &Path) -> Result<Index, GitError> {
    let file = repo.path().join("index");
    let kept = KEPT.with(|kept| match kept.borrow_mut().take() {
        Some((path, index)) if path == file => Some(index),
        _ => None,
    });
    let Some(mut index) = kept else {
        return repo.index().context("open the index", worktree);
    };
    repo.set_index(&mut index)
        .context("open the index", worktree)?;
    // Rereads the file only when it changed since this copy was read or written.
    index.read(false).context("read the index", worktree)?;
    Ok(index)
}

/// Keeps `index`, whose content is its file's, for the next [`take`].
pub(crate) fn keep(index: Index) {
    let Some(path) = index.path().map(Path::to_path_buf) else {
        return;
    };
    KEPT.with(|kept| *kept.borrow_mut() = Some((path, index)));
}

/// Drops the kept index (tests that count reads start from nothing).
#[cfg(test)]
pub(crate) fn forget() {
    KEPT.with(|kept| *kept.borrow_mut() = None);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::repo::open_checkout;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        crate::git::init_with_commit(dir.path(), "main", "first").unwrap();
        dir
    }

    /// An entry only the kept copy has (never written) shows whether it was reused.
    fn mark(index: &mut Index) {
        let mut entry = index.get_path(Path::new("a.txt"), 0).unwrap();
        entry.path = b"only-in-memory".to_vec();
        index.add(&entry).unwrap();
    }

    #[test]
    fn the_kept_index_serves_the_next_use_of_the_same_repository() {
        forget();
        let dir = repo();
        let repo = open_checkout(dir.path()).unwrap();
        let mut index = take(&repo, dir.path()).unwrap();
        mark(&mut index);
        keep(index);
        let again = open_checkout(dir.path()).unwrap();
        let index = take(&again, dir.path()).unwrap();
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_some());
        // Taken out while in use: a second taker reads the file.
        let third = open_checkout(dir.path()).unwrap();
        let fresh = take(&third, dir.path()).unwrap();
        assert!(fresh.get_path(Path::new("only-in-memory"), 0).is_none());
    }

    #[test]
    fn a_file_written_by_anything_else_is_read_again() {
        forget();
        let dir = repo();
        let repo = open_checkout(dir.path()).unwrap();
        let mut index = take(&repo, dir.path()).unwrap();
        mark(&mut index);
        keep(index);
        // Another writer (an agent, git itself) changes the index file.
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let other = git2::Repository::open(dir.path()).unwrap();
        let mut written = other.index().unwrap();
        written.add_path(Path::new("b.txt")).unwrap();
        written.write().unwrap();
        let again = open_checkout(dir.path()).unwrap();
        let index = take(&again, dir.path()).unwrap();
        assert!(index.get_path(Path::new("b.txt"), 0).is_some());
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_none());
    }

    #[test]
    fn another_repositorys_index_is_not_used() {
        forget();
        let (one, two) = (repo(), repo());
        let repo = open_checkout(one.path()).unwrap();
        let mut index = take(&repo, one.path()).unwrap();
        mark(&mut index);
        keep(index);
        let other = open_checkout(two.path()).unwrap();
        let index = take(&other, two.path()).unwrap();
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_none());
    }
}
