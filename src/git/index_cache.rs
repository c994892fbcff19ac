//! The repository handle and index the last walk used, kept in memory between walks. libgit2
//! parses and checksums the whole index file at every read (9 MB at 100,000 files: tens of
//! milliseconds), and a turn's two walks would read it twice more than the file changes; a
//! fresh handle also rereads the configuration, and starts with a cold object cache, so that
//! rebuilding the index's tree cache after a checkpoint reads every tree from disk again.
//!
//! The kept index is only ever one whose content is the file's (just read or just written,
//! plus stat information a walk refreshed), and handle and index are taken out while in use:
//! code that fails between staging and writing drops them, and the next walk opens and reads
//! afresh. Before use the index is compared with its file (libgit2 compares the file's
//! trailing checksum with its own) and read again when anything else wrote the file since.
//! The handle's configuration is the one read when it was opened: an agent's later edits to
//! it do not reach the walks. References are read from disk at every use. One pair is kept
//! per thread: the engine drives a run's git work on one thread, and a run works on one
//! worktree.

use std::cell::RefCell;
use std::path::{Path, PathBuf};

use git2::{Index, Repository};

use super::error::{Context, GitError};
use super::repo::open_checkout;

thread_local! {
    static KEPT: RefCell<Option<(PathBuf, Repository, Index)>> = const { RefCell::new(None) };
}

/// A repository handle on the worktree at `worktree` and its index: the kept ones when they
/// are this worktree's (the index reread if its file changed), else opened and read.
pub(crate) fn take(worktree: &Path) -> Result<(Repository, Index), GitError> {
    let kept = KEPT.with(|kept| match kept.borrow_mut().take() {
        Some((path, repo, index)) if path == worktree => Some((repo, index)),
        _ => None,
    });
    let Some((repo, mut index)) = kept else {
        let repo = open_checkout(worktree)?;
        let index = repo.index().context("open the index", worktree)?;
        return Ok((repo, index));
    };
    // Rereads the file only when it changed since this copy was read or written.
    index.read(false).context("read the index", worktree)?;
    Ok((repo, index))
}

/// Keeps `repo` (opened on `worktree`) and its `index`, whose content is its file's, for the
/// next [`take`].
pub(crate) fn keep(worktree: &Path, repo: Repository, index: Index) {
    KEPT.with(|kept| *kept.borrow_mut() = Some((worktree.to_path_buf(), repo, index)));
}

/// Drops what is kept (tests that count reads start from nothing).
#[cfg(test)]
pub(crate) fn forget() {
    KEPT.with(|kept| *kept.borrow_mut() = None);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repo() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        crate::git::init_with_commit(dir.path(), "main", "first").unwrap();
        dir
    }

    /// Keeps `root`'s handle and index with an entry only that copy has (never written), which
    /// shows whether a later [`take`] reused it.
    fn keep_marked(root: &Path) {
        forget();
        let (repo, mut index) = take(root).unwrap();
        let mut entry = index.get_path(Path::new("a.txt"), 0).unwrap();
        entry.path = b"only-in-memory".to_vec();
        index.add(&entry).unwrap();
        keep(root, repo, index);
    }

    #[test]
    fn the_kept_index_serves_the_next_use_of_the_same_repository() {
        let dir = repo();
        keep_marked(dir.path());
        let (_repo, index) = take(dir.path()).unwrap();
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_some());
        // Taken out while in use: a second taker reads the file.
        let (_other, fresh) = take(dir.path()).unwrap();
        assert!(fresh.get_path(Path::new("only-in-memory"), 0).is_none());
    }

    #[test]
    fn a_file_written_by_anything_else_is_read_again() {
        let dir = repo();
        keep_marked(dir.path());
        // Another writer (an agent, git itself) changes the index file.
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let other = git2::Repository::open(dir.path()).unwrap();
        let mut written = other.index().unwrap();
        written.add_path(Path::new("b.txt")).unwrap();
        written.write().unwrap();
        let (_repo, index) = take(dir.path()).unwrap();
        assert!(index.get_path(Path::new("b.txt"), 0).is_some());
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_none());
    }

    #[test]
    fn another_repositorys_index_is_not_used() {
        let (one, two) = (repo(), repo());
        keep_marked(one.path());
        let (_repo, index) = take(two.path()).unwrap();
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_none());
    }
}
