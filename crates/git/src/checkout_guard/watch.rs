//! Which paths of the main checkout something wrote since the last look, from the kernel
//! (inotify) instead of a walk: a guard that has a [`Watch`] examines only the paths named
//! there (with those it held and those whose index entry changed) after a step, so an
//! unconfined agent step costs a read of the events instead of a pass over every file.
//!
//! Watched: every directory of the checkout but ignored ones, `.git`, nested repositories and
//! the runner's own (`.autobuild/runs`, `.autobuild/worktrees`) — plus each file the restore
//! puts back (the runner's inputs) by itself, since a directory's watch hears only writes
//! made through a name in that directory, and a write through a hard link made elsewhere
//! reaches the file's own watch only. Written through a mapping, a file is heard when the
//! writer closes it, which is at the latest when its process ends, and none outlives its step.
//!
//! Where a list of names cannot say what happened, [`Watch::changed`] answers `None` and the
//! guard walks, then watches afresh: a directory created, removed or renamed (what it holds is
//! unknown), a watched file replaced or removed, the queue overflowed, a watch lost, or the
//! ignore rules or attributes changed (`.gitignore`, `.gitattributes`, `.git/info/exclude`:
//! they change what differs from the index without writing those files). Not heard: a change
//! of the user's global excludes file, and a write to a file other than the runner's inputs
//! through a hard link from outside the checkout (reported only by the walk).

use std::collections::{BTreeSet, HashMap};
use std::ffi::OsStr;
use std::fs;
use std::mem::MaybeUninit;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fd::OwnedFd;
use rustix::fs::inotify::{self, CreateFlags, ReadFlags, WatchFlags};

/// What a file's own watch hears: written, its mode or links changed, removed or renamed.
const FILE: WatchFlags = WatchFlags::MODIFY
    .union(WatchFlags::CLOSE_WRITE)
    .union(WatchFlags::ATTRIB)
    .union(WatchFlags::DELETE_SELF)
    .union(WatchFlags::MOVE_SELF)
    .union(WatchFlags::DONT_FOLLOW);

/// What a directory's watch hears: the same of its entries and itself, and its entries
/// created, removed or renamed.
const DIRECTORY: WatchFlags = FILE
    .union(WatchFlags::CREATE)
    .union(WatchFlags::DELETE)
    .union(WatchFlags::MOVED_FROM)
    .union(WatchFlags::MOVED_TO)
    .union(WatchFlags::ONLYDIR);

/// Events after which only a walk can tell what differs.
const UNKNOWABLE: ReadFlags = ReadFlags::QUEUE_OVERFLOW
    .union(ReadFlags::IGNORED)
    .union(ReadFlags::UNMOUNT)
    .union(ReadFlags::DELETE_SELF)
    .union(ReadFlags::MOVE_SELF);

/// Names whose change changes what differs from the index.
const RULES: [&[u8]; 2] = [b".gitignore", b".gitattributes"];

/// Whether the kernel refused a watch in this process ([`Watch::start`]).
static REFUSED: AtomicBool = AtomicBool::new(false);

#[derive(Debug)]
pub(super) struct Watch {
    fd: OwnedFd,
    /// Each watched directory, relative to the checkout (empty for its root), by its watch.
    dirs: HashMap<i32, Vec<u8>>,
    /// Each file watched by itself, relative, by its watch.
    files: HashMap<i32, Vec<u8>>,
    /// `info/exclude` of the repository as it was when the watch started.
    exclude: (PathBuf, Option<(u64, i64, i64)>),
}

impl Watch {
    /// Watches every directory of the checkout at `root` (of `repo`) that the walk would look
    /// into; `None` when the kernel refuses (no inotify, the user's watches used up): the guard
    /// then walks as before. Start it before the walk whose result it is to keep current.
    /// Refused once, it is not tried again in this process: a failed start lists every
    /// directory, which would add a pass to each walk it could not spare.
    pub(super) fn start(repo: &git2::Repository, root: &Path) -> Option<Watch> {
        if REFUSED.load(Ordering::Relaxed) {
            return None;
        }
        let watch = Watch::try_start(repo, root);
        REFUSED.fetch_or(watch.is_none(), Ordering::Relaxed);
        watch
    }

    fn try_start(repo: &git2::Repository, root: &Path) -> Option<Watch> {
        let fd = inotify::init(CreateFlags::CLOEXEC | CreateFlags::NONBLOCK).ok()?;
        let exclude = repo.commondir().join("info/exclude");
        let mut watch = Watch {
            fd,
            dirs: HashMap::new(),
            files: HashMap::new(),
            exclude: (exclude.clone(), stamp(&exclude)),
        };
        let mut pending = vec![Vec::new()];
        while let Some(dir) = pending.pop() {
            let full = root.join(OsStr::from_bytes(&dir));
            let wd = inotify::add_watch(&watch.fd, &full, DIRECTORY).ok()?;
            let entries = fs::read_dir(&full).ok()?;
            watch.dirs.insert(wd, dir.clone());
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let path = join(&dir, entry.file_name().as_bytes());
                if looked_into(repo, root, &path) {
                    pending.push(path);
                }
            }
        }
        Some(watch)
    }

    /// Watches each of `paths` (files, relative) by itself; `false` when one cannot be.
    pub(super) fn files<'a>(&mut self, root: &Path, paths: impl Iterator<Item = &'a str>) -> bool {
        for path in paths {
            let full = root.join(path);
            if fs::symlink_metadata(&full).is_err() {
                continue;
            }
            match inotify::add_watch(&self.fd, &full, FILE) {
                Ok(wd) => {
                    self.files.insert(wd, path.as_bytes().to_vec());
                }
                Err(_) => {
                    REFUSED.store(true, Ordering::Relaxed);
                    return false;
                }
            }
        }
        true
    }

    /// The paths written, created, removed or changed in mode since the last call (or the
    /// start), relative to the checkout; `None` when only a walk can tell (module doc).
    pub(super) fn changed(&mut self) -> Option<BTreeSet<String>> {
        if stamp(&self.exclude.0) != self.exclude.1 {
            return None;
        }
        let mut paths = BTreeSet::new();
        let mut buffer = [MaybeUninit::uninit(); 8192];
        let mut reader = inotify::Reader::new(&self.fd, &mut buffer);
        loop {
            let event = match reader.next() {
                Ok(event) => event,
                Err(rustix::io::Errno::AGAIN) => return Some(paths),
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => return None,
            };
            let flags = event.events();
            if flags.intersects(UNKNOWABLE) {
                return None;
            }
            if let Some(file) = self.files.get(&event.wd()) {
                paths.insert(String::from_utf8_lossy(file).into_owned());
                continue;
            }
            let (Some(dir), Some(name)) = (self.dirs.get(&event.wd()), event.file_name()) else {
                continue;
            };
            let name = name.to_bytes();
            let entries =
                ReadFlags::CREATE | ReadFlags::DELETE | ReadFlags::MOVED_FROM | ReadFlags::MOVED_TO;
            if flags.contains(ReadFlags::ISDIR) && flags.intersects(entries) {
                return None;
            }
            if RULES.contains(&name) {
                return None;
            }
            if flags.contains(ReadFlags::ISDIR) {
                // A subdirectory's own mode or times: its entries have watches of their own.
                continue;
            }
            paths.insert(String::from_utf8_lossy(&join(dir, name)).into_owned());
        }
    }
}

/// Whether the walk looks into the directory `path` (relative): not the repository's own,
/// not the runner's, not a nested repository, not ignored.
fn looked_into(repo: &git2::Repository, root: &Path, path: &[u8]) -> bool {
    let own: [&[u8]; 3] = [b".git", b".autobuild/runs", b".autobuild/worktrees"];
    if own.contains(&path) || path.ends_with(b"/.git") {
        return false;
    }
    let relative = Path::new(OsStr::from_bytes(path));
    if root.join(relative).join(".git").exists() {
        return false;
    }
    !repo.is_path_ignored(relative).unwrap_or(true)
}

fn join(dir: &[u8], name: &[u8]) -> Vec<u8> {
    match dir.is_empty() {
        true => name.to_vec(),
        false => [dir, b"/", name].concat(),
    }
}

/// A file's size and change times, or `None` when it does not exist.
fn stamp(path: &Path) -> Option<(u64, i64, i64)> {
    let meta = fs::metadata(path).ok()?;
    Some((
        meta.len(),
        meta.mtime_nsec() + meta.mtime() * 1_000_000_000,
        meta.ctime_nsec() + meta.ctime() * 1_000_000_000,
    ))
}
