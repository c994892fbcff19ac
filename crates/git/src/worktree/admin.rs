//! Git's record of the linked worktrees, `.git/worktrees/<name>/`, read and written file by
//! file.
//!
//! libgit2 answers "does some worktree have this branch checked out?" by opening the
//! repository of every worktree (reading its config files), and asks it in each worktree add
//! and each branch delete. A feature's wave keeps one worktree per task, so every task's start
//! and landing paid for every other task's worktree (issue 24: a third of a wave's time). The
//! runner reads the two small files it needs instead — `HEAD` (what is checked out) and
//! `gitdir` (where the worktree is) — each only when it is a regular file
//! ([`read_admin_file`]), and writes a new worktree's record as `git worktree add` does.

use std::fs;
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Component, Path, PathBuf};

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{LazyLock, Mutex};

use git2::Repository;

use super::super::error::{Context, GitError};
use super::super::files::read_admin_file;
use super::super::guard::KnownFiles;
use super::super::repo::Repo;
use super::super::stamp::{stamp_clock, Stamp};

impl Repo {
    /// `.git/worktrees/<name>`.
    pub(crate) fn admin_dir(&self, name: &str) -> PathBuf {
        self.git_dir().join("worktrees").join(name)
    }

    /// The names of the registered worktrees (directories under `.git/worktrees`), sorted. A
    /// record a kill left half-written is listed too: its missing files answer nothing. The
    /// listing is kept while the directory's stamp is unchanged (adding or removing a record
    /// changes it; the racy-clean rule of [`Stamp::changed_before`] applies): every landing of
    /// a feature asks three times, with one record per task.
    pub(crate) fn worktree_names(&self) -> Vec<String> {
        static LISTED: LazyLock<Mutex<HashMap<PathBuf, Listing>>> = LazyLock::new(Mutex::default);
        let dir = self.git_dir().join("worktrees");
        let stamp = Stamp::at(&dir);
        if let (Some(stamp), Ok(listed)) = (stamp, LISTED.lock()) {
            if let Some((known, names)) = listed.get(&dir) {
                if *known == stamp {
                    return names.clone();
                }
            }
        }
        // Taken before the listing: a change stamped before it is in what is listed.
        let clock = stamp_clock();
        let Ok(entries) = fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .flatten()
            .filter(|entry| entry.file_type().is_ok_and(|kind| kind.is_dir()))
            .filter_map(|entry| entry.file_name().into_string().ok())
            .collect();
        names.sort();
        if let (Some(stamp), Some(clock)) = (stamp, clock) {
            if stamp.changed_before(clock) && Stamp::at(&dir) == Some(stamp) {
                if let Ok(mut listed) = LISTED.lock() {
                    listed.insert(dir, (stamp, names.clone()));
                }
            }
        }
        names
    }

    /// Every registered worktree's name and the text of its `HEAD` record (`None` when that is
    /// not a regular file or cannot be read). A record unchanged since it was last read is not
    /// read again ([`KnownFiles`]): every landing of a feature asks this of each task's
    /// worktree. While a [`HeadsRead`] is held the records are read once, for all its
    /// questions.
    pub(crate) fn worktree_heads(&self) -> Heads {
        if let Some(read) = self.heads.borrow().read.clone() {
            return read;
        }
        let heads = self.read_worktree_heads();
        let mut once = self.heads.borrow_mut();
        if once.holders > 0 {
            once.read = Some(heads.clone());
        }
        heads
    }

    fn read_worktree_heads(&self) -> Heads {
        let names = self.worktree_names();
        let records = KnownFiles::open(&self.git_dir().join("worktrees"));
        names
            .into_iter()
            .map(|name| {
                let head = records
                    .as_ref()
                    .and_then(|records| records.read(&format!("{name}/HEAD")))
                    .and_then(|text| String::from_utf8(text).ok());
                (name, head)
            })
            .collect::<Vec<_>>()
            .into()
    }

    /// Where the worktree `name` is registered: the directory holding the `.git` file its
    /// `gitdir` names (relative to the record, when git wrote it relative).
    pub(crate) fn registered_path(&self, name: &str) -> Option<PathBuf> {
        let admin = self.admin_dir(name);
        let link = read_admin_file(&admin.join("gitdir")).ok()?;
        let link = Path::new(link.trim_end());
        if link.as_os_str().is_empty() {
            return None;
        }
        resolve(&admin.join(link)).parent().map(Path::to_path_buf)
    }

    /// Writes the record of a new worktree `name` at `path` on `branch` and checks the branch
    /// out there, as `git worktree add` does (the caller made sure no working tree has it
    /// checked out, [`Repo::ensure_not_checked_out`]). The record's `gitdir` is written first, so a kill at any point leaves a
    /// record that names its worktree ([`Repo::discard_partial_worktree`] finds it). `path`
    /// must be absolute and normalized; it may be an empty directory.
    pub(crate) fn add_worktree_record(
        &self,
        name: &str,
        path: &Path,
        branch: &str,
    ) -> Result<(), GitError> {
        self.forget_worktree_heads();
        let worktrees = self.git_dir().join("worktrees");
        fs::create_dir_all(&worktrees).context("create directory", &worktrees)?;
        let admin = worktrees.join(name);
        fs::create_dir(&admin).context("create the worktree's record", &admin)?;
        let admin = admin
            .canonicalize()
            .context("resolve the worktree's record", &admin)?;
        let (Some(parent), Some(dir_name)) = (path.parent(), path.file_name()) else {
            return Err(GitError::WorktreePathExists {
                path: path.to_path_buf(),
            });
        };
        let workdir = parent
            .canonicalize()
            .context("resolve the worktree path", parent)?
            .join(dir_name);
        write_new(&admin.join("gitdir"), &[workdir.join(".git").as_os_str()])?;
        make_empty_dir(&workdir)?;
        write_new(
            &workdir.join(".git"),
            &["gitdir: ".as_ref(), admin.as_os_str()],
        )?;
        let common = self.git_dir();
        let common = common.canonicalize().context("resolve", common)?;
        write_new(&admin.join("commondir"), &[common.as_os_str()])?;
        write_new(
            &admin.join("HEAD"),
            &["ref: refs/heads/".as_ref(), branch.as_ref()],
        )?;
        let worktree = Repository::open(&workdir).context("open the new worktree", &workdir)?;
        super::parts::check_out_head(&worktree, super::parts::PART_FILES)
            .context(format_args!("check out `{branch}`"), &workdir)
    }
}

/// `path` with its `.` and `..` components resolved by name, as git resolves a relative
/// `gitdir` against the record holding it.
fn resolve(path: &Path) -> PathBuf {
    let mut resolved = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                resolved.pop();
            }
            other => resolved.push(other),
        }
    }
    resolved
}

/// The records' directory listing: the names, and the directory's stamp when they were listed.
type Listing = (Stamp, Vec<String>);

/// Every registered worktree's name and the text of its `HEAD` record, if readable.
pub(crate) type Heads = Rc<Vec<(String, Option<String>)>>;

/// The worktrees' `HEAD` records as read once for a landing, while a [`HeadsRead`] holds them.
#[derive(Default)]
pub(crate) struct HeadsOnce {
    holders: usize,
    read: Option<Heads>,
}

/// Holds the worktrees' `HEAD` records read once ([`Repo::heads_read_once`]) until dropped.
#[must_use = "the records are read once only while this is held"]
pub struct HeadsRead {
    heads: Rc<RefCell<HeadsOnce>>,
}

impl Drop for HeadsRead {
    fn drop(&mut self) {
        let mut once = self.heads.borrow_mut();
        once.holders -= 1;
        if once.holders == 0 {
            once.read = None;
        }
    }
}

impl Repo {
    /// Until the returned value is dropped, which branch each worktree has checked out is read
    /// once and every question about it ([`Repo::checkouts_of`], finding a worktree by branch)
    /// answered from that reading: one landing of a feature asks three, and a wave keeps one
    /// worktree per task, so each landing read every task's `HEAD` three times. The runner's
    /// own changes to the records (a worktree added, removed or pruned) update the reading; a
    /// branch someone checks out in another worktree during the landing is not seen until the
    /// next one, as with git, whose check and ref update are not one step either: moving that
    /// branch leaves the worktree's files as they were (nothing in it is lost), deleting it
    /// leaves the worktree's `HEAD` unborn.
    pub fn heads_read_once(&self) -> HeadsRead {
        self.heads.borrow_mut().holders += 1;
        HeadsRead {
            heads: Rc::clone(&self.heads),
        }
    }

    /// The record of worktree `name` is gone (pruned or removed by the runner): the reading
    /// held for a landing no longer lists it.
    pub(crate) fn forget_worktree_head(&self, name: &str) {
        if let Some(read) = &mut self.heads.borrow_mut().read {
            Rc::make_mut(read).retain(|(n, _)| n != name);
        }
    }

    /// A worktree record was written: the reading held for a landing is taken again.
    pub(crate) fn forget_worktree_heads(&self) {
        self.heads.borrow_mut().read = None;
    }
}

/// Creates `dir`, or takes it as it is when it is an empty directory (not a link to one).
fn make_empty_dir(dir: &Path) -> Result<(), GitError> {
    match fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            let empty = fs::symlink_metadata(dir).is_ok_and(|meta| meta.is_dir())
                && fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none());
            if empty {
                Ok(())
            } else {
                Err(GitError::WorktreePathExists {
                    path: dir.to_path_buf(),
                })
            }
        }
        Err(e) => Err(e).context("create directory", dir),
    }
}

/// Writes a new file (never an existing one, never through a link) holding `parts` and a
/// newline.
fn write_new(path: &Path, parts: &[&std::ffi::OsStr]) -> Result<(), GitError> {
    let mut text = Vec::new();
    for part in parts {
        text.extend_from_slice(part.as_bytes());
    }
    text.push(b'\n');
    fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o644)
        .open(path)
        .and_then(|mut file| file.write_all(&text))
        .context("write", path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init_with_commit;

    /// Waits (on the clock, not a sleep of a guessed length) until the coarse clock is past the
    /// last change of `dir`, so a listing made now is kept.
    fn until_clock_passes(dir: &Path) {
        let changed = fs::symlink_metadata(dir).unwrap();
        let stamp = Stamp::of(&changed);
        while !stamp_clock().is_some_and(|clock| stamp.changed_before(clock)) {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_kept_listing_of_the_records_follows_records_added_and_removed() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let records = dir.path().join(".git/worktrees");
        assert!(repo.worktree_names().is_empty());
        for name in ["one", "two"] {
            fs::create_dir_all(records.join(name)).unwrap();
        }
        until_clock_passes(&records);
        assert_eq!(repo.worktree_names(), ["one", "two"]);
        assert_eq!(repo.worktree_names(), ["one", "two"]);

        fs::create_dir(records.join("three")).unwrap();
        assert_eq!(repo.worktree_names(), ["one", "three", "two"]);
        until_clock_passes(&records);
        assert_eq!(repo.worktree_names(), ["one", "three", "two"]);
        fs::remove_dir(records.join("one")).unwrap();
        assert_eq!(repo.worktree_names(), ["three", "two"]);
        // A file is no record.
        fs::write(records.join("stray"), "").unwrap();
        assert_eq!(repo.worktree_names(), ["three", "two"]);
    }
}
