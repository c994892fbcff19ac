//! The repository handle and index the last walk used, kept in memory between walks — and
//! the runner's own copy of the index, the only one whose contents it trusts.
//!
//! Speed: libgit2 parses and checksums the whole index file at every read (9 MB at 100,000
//! files: tens of milliseconds), and a fresh handle also rereads the configuration and starts
//! with a cold object cache, so that rebuilding the index's tree cache after a checkpoint reads
//! every tree from disk again.
//!
//! Trust: the index file sits in git files an agent may write (agents run `git add`, `git
//! status` refreshes it). Its stat information decides which files a walk reads, its object ids
//! what a checkpoint commits for a file that looks unchanged, and its tree cache the trees a
//! checkpoint writes for directories that look unchanged: an agent that stages a file and then
//! swaps the staged blob's id (stat information untouched) would have the checkpoint commit
//! content nobody tested while the worktree holds what the checks ran on. So nothing an agent
//! wrote is taken from the file but which paths it tracks:
//!
//! - The kept copy is the index as the runner last wrote or checked it. When the file still
//!   has the stamp it had then (its change time included, which no process can set back), the
//!   copy serves as it is. When anything else wrote the file, the copy still serves; only the
//!   paths the file tracks and the copy does not (`git add -f` of an ignored file) are staged
//!   from the working tree, and those the copy tracks and the file does not (`git rm
//!   --cached`) are dropped — then the copy is written over the file, so that libgit2's own
//!   rereads (a checkout rereads a changed index file) find the runner's.
//! - With no kept copy (a new process: a resumed run), the file's paths are taken the same way
//!   but its entries are rebuilt from HEAD's tree without stat information, so the next walk
//!   compares every file by content.
//!
//! Handle and index are taken out while in use: code that fails between staging and writing
//! drops them, and the next walk starts afresh. The handle's configuration is the one read
//! when it was opened: an agent's later edits to it do not reach the walks. References are
//! read from disk at every use. One pair is kept per thread: the engine drives a run's git work
//! on one thread, and a run works on one worktree. Only task worktrees are ever taken: the
//! rebuild drops what is staged and not committed.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use git2::{Index, Repository};

use super::error::{Context, GitError};
use super::repo::{head_of, open_checkout};
use super::stamp::Stamp;

struct Kept {
    worktree: PathBuf,
    repo: Repository,
    index: Index,
    /// The index file as the runner left it.
    stamp: Option<Stamp>,
}

thread_local! {
    static KEPT: RefCell<Option<Kept>> = const { RefCell::new(None) };
}

/// A repository handle on the worktree at `worktree` and the runner's index for it (see the
/// module doc): the kept one, brought up to date with the paths another writer tracked or
/// untracked since; else one rebuilt from HEAD with every file to be compared by content. The
/// index file holds the returned index when this returns.
pub(crate) fn take(worktree: &Path) -> Result<(Repository, Index), GitError> {
    let kept = KEPT.with(|kept| match kept.borrow_mut().take() {
        Some(kept) if kept.worktree == worktree => Some(kept),
        _ => None,
    });
    let Some(Kept {
        repo,
        mut index,
        stamp,
        ..
    }) = kept
    else {
        return rebuilt(worktree);
    };
    let file = index_file(&index, worktree)?;
    if stamp.is_some() && Stamp::at(&file) == stamp {
        return Ok((repo, index));
    }
    // Read as a separate index: its entries never enter the runner's (but submodule ones).
    if let Ok(theirs) = Index::open(&file) {
        adopt_paths(&mut index, &Tracked::of(&theirs), worktree)?;
    }
    index.write().context("write the index", worktree)?;
    Ok((repo, index))
}

/// Keeps `repo` (opened on `worktree`) and its `index` for the next [`take`]: an index the
/// runner just wrote, or one taken and walked since, whose file nothing else wrote meanwhile.
pub(crate) fn keep(worktree: &Path, repo: Repository, index: Index) {
    let stamp = index.path().and_then(Stamp::at);
    KEPT.with(|kept| {
        *kept.borrow_mut() = Some(Kept {
            worktree: worktree.to_path_buf(),
            repo,
            index,
            stamp,
        })
    });
}

/// [`take`] for the last use of what is kept: `None` when nothing is kept for `worktree`.
/// Either way nothing stays kept (a handle kept for another worktree is released too).
pub(crate) fn take_last(worktree: &Path) -> Result<Option<(Repository, Index)>, GitError> {
    let kept_here = KEPT.with(|kept| {
        let mut kept = kept.borrow_mut();
        let here = kept.as_ref().is_some_and(|k| k.worktree == worktree);
        if !here {
            *kept = None;
        }
        here
    });
    match kept_here {
        true => take(worktree).map(Some),
        false => Ok(None),
    }
}

/// Runs `apply` on the handle kept for `worktree`, if any (rules recorded after it was opened).
pub(crate) fn with_kept_repo(worktree: &Path, apply: impl FnOnce(&Repository)) {
    KEPT.with(|kept| {
        if let Some(kept) = kept.borrow().as_ref().filter(|k| k.worktree == worktree) {
            apply(&kept.repo);
        }
    });
}

/// The index of a worktree the runner has no copy of: HEAD's tree, without stat information
/// (every file is compared by content at the next walk), tracking the paths the file tracks.
fn rebuilt(worktree: &Path) -> Result<(Repository, Index), GitError> {
    let repo = open_checkout(worktree)?;
    let mut index = repo.index().context("open the index", worktree)?;
    let theirs = Tracked::of(&index);
    {
        let head = head_of(&repo, worktree)?;
        let tree = head.tree().context("read HEAD's tree", worktree)?;
        // Cleared first: reading a tree keeps the stat information of entries it matches.
        index.clear().context("clear the index", worktree)?;
        index
            .read_tree(&tree)
            .context("read HEAD's tree", worktree)?;
    }
    adopt_paths(&mut index, &theirs, worktree)?;
    index.write().context("write the index", worktree)?;
    Ok((repo, index))
}

fn index_file(index: &Index, worktree: &Path) -> Result<PathBuf, GitError> {
    index
        .path()
        .map(Path::to_path_buf)
        .ok_or_else(|| GitError::NotARepository {
            path: worktree.to_path_buf(),
        })
}

/// The paths an index tracks, sorted and unique (a conflicted path once), and its submodule
/// entries.
struct Tracked {
    paths: Vec<Vec<u8>>,
    gitlinks: Vec<git2::IndexEntry>,
}

/// The mode of a submodule entry (a gitlink).
const GITLINK: u32 = 0o160000;

impl Tracked {
    fn of(index: &Index) -> Tracked {
        let (mut paths, mut gitlinks) = (Vec::new(), Vec::new());
        for entry in index.iter() {
            paths.push(entry.path.clone());
            if entry.mode == GITLINK {
                gitlinks.push(entry);
            }
        }
        paths.sort_unstable();
        paths.dedup();
        Tracked { paths, gitlinks }
    }
}

/// Makes `index` track what `theirs` tracks: a path only `theirs` tracks is staged from the
/// working tree (when it is a file or link there, not beneath a link), or taken as it is when
/// it is a submodule entry (which never lands: the checkpoint's audit names and drops it); a
/// path only `index` tracks is dropped. Nothing else of `theirs` is used.
fn adopt_paths(index: &mut Index, theirs: &Tracked, worktree: &Path) -> Result<(), GitError> {
    let ours = Tracked::of(index).paths;
    let missing_in = |sorted: &[Vec<u8>], path: &&Vec<u8>| sorted.binary_search(path).is_err();
    let only_ours: Vec<&Vec<u8>> = ours
        .iter()
        .filter(|p| missing_in(&theirs.paths, p))
        .collect();
    let only_theirs: Vec<&Vec<u8>> = theirs
        .paths
        .iter()
        .filter(|p| missing_in(&ours, p))
        .collect();
    for path in only_ours {
        let path = Path::new(OsStr::from_bytes(path));
        index
            .remove_path(path)
            .context(format_args!("unstage {}", path.display()), worktree)?;
    }
    for path in only_theirs {
        if let Some(gitlink) = theirs.gitlinks.iter().find(|entry| entry.path == *path) {
            index
                .add(gitlink)
                .context("stage a submodule entry", worktree)?;
            continue;
        }
        let Ok(text) = std::str::from_utf8(path) else {
            continue;
        };
        if super::links::linked_component(worktree, text).is_some() {
            continue;
        }
        let is_file = std::fs::symlink_metadata(worktree.join(text))
            .is_ok_and(|meta| meta.is_file() || meta.file_type().is_symlink());
        // A submodule entry, a directory, a path that is gone: the walk decides.
        if is_file && index.add_path(Path::new(text)).is_err() {
            tracing::debug!(
                path = text,
                "a path another writer tracks could not be staged"
            );
        }
    }
    Ok(())
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
        crate::init_with_commit(dir.path(), "main", "first").unwrap();
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
    fn a_file_written_by_anything_else_gives_its_paths_only() {
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

    /// Has another writer stage `a.txt` as it is on disk, then point its entry back at the
    /// committed blob with the stat information left as staged: the index claims the edit is
    /// not there.
    fn forge_unchanged(root: &Path) {
        let committed = git2::Repository::open(root)
            .unwrap()
            .revparse_single("HEAD:a.txt")
            .unwrap()
            .id();
        std::fs::write(root.join("a.txt"), "edited\n").unwrap();
        // Older than any index write: not racily clean, so only the entry tells.
        let past = std::time::SystemTime::now() - std::time::Duration::from_secs(10);
        std::fs::File::options()
            .write(true)
            .open(root.join("a.txt"))
            .and_then(|file| file.set_modified(past))
            .unwrap();
        let other = git2::Repository::open(root).unwrap();
        let mut written = other.index().unwrap();
        written.add_path(Path::new("a.txt")).unwrap();
        let mut entry = written.get_path(Path::new("a.txt"), 0).unwrap();
        entry.id = committed;
        written.add(&entry).unwrap();
        written.write().unwrap();
    }

    fn changed(root: &Path) -> Vec<String> {
        let (repo, mut index) = take(root).unwrap();
        let changes = crate::snapshot::unstaged_changes(&repo, &mut index, root).unwrap();
        changes
            .into_iter()
            .map(|(path, _)| String::from_utf8(path).unwrap())
            .collect()
    }

    #[test]
    fn a_forged_entry_does_not_hide_an_edit_from_a_kept_index() {
        let dir = repo();
        forget();
        let (repo, index) = take(dir.path()).unwrap();
        keep(dir.path(), repo, index);
        forge_unchanged(dir.path());
        assert_eq!(changed(dir.path()), ["a.txt"]);
    }

    #[test]
    fn a_forged_entry_does_not_hide_an_edit_when_nothing_is_kept() {
        let dir = repo();
        forge_unchanged(dir.path());
        forget();
        assert_eq!(changed(dir.path()), ["a.txt"]);
    }

    #[test]
    fn paths_another_writer_tracks_or_untracks_are_followed() {
        let dir = repo();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(dir.path().join("kept.log"), "forced\n").unwrap();
        forget();
        let (repo, index) = take(dir.path()).unwrap();
        keep(dir.path(), repo, index);
        // `git add -f kept.log` and `git rm --cached a.txt`, by another writer.
        let other = git2::Repository::open(dir.path()).unwrap();
        let mut written = other.index().unwrap();
        written.add_path(Path::new("kept.log")).unwrap();
        written.remove_path(Path::new("a.txt")).unwrap();
        written.write().unwrap();
        let (_repo, index) = take(dir.path()).unwrap();
        assert!(index.get_path(Path::new("kept.log"), 0).is_some());
        assert!(index.get_path(Path::new("a.txt"), 0).is_none());
    }

    #[test]
    fn the_last_use_releases_what_is_kept() {
        let (one, two) = (repo(), repo());
        keep_marked(one.path());
        let (_repo, index) = take_last(one.path()).unwrap().unwrap();
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_some());
        let (_repo, fresh) = take(one.path()).unwrap();
        assert!(fresh.get_path(Path::new("only-in-memory"), 0).is_none());
        // Kept for another worktree: not used, and released all the same.
        keep_marked(one.path());
        assert!(take_last(two.path()).unwrap().is_none());
        let (_repo, fresh) = take(one.path()).unwrap();
        assert!(fresh.get_path(Path::new("only-in-memory"), 0).is_none());
    }

    #[test]
    fn another_repositorys_index_is_not_used() {
        let (one, two) = (repo(), repo());
        keep_marked(one.path());
        let (_repo, index) = take(two.path()).unwrap();
        assert!(index.get_path(Path::new("only-in-memory"), 0).is_none());
    }
}
