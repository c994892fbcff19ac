//! The fast half of a working-tree walk: which paths *may* differ from the index, found from
//! file metadata alone, so that libgit2 (which hashes, applies filters and ignore rules, and
//! refreshes the index) only looks at those. See [`super::snapshot::unstaged_changes`].
//!
//! libgit2's own walk stats every file by its full path, one after another; this one reads
//! each directory once and stats its entries relative to it (no path lookup from the root),
//! on several threads. Its answer is a superset of what differs: a tracked file whose
//! metadata (type, executable bit, size, inode, owner, change and modification times) is not
//! exactly what the index recorded, or that the index recorded too close to its own writing to
//! trust (git's "racily clean" entries); every entry that is not in the index (ignored or
//! not: libgit2 decides); every index entry not found. A content change that keeps all of
//! that is what git itself would miss, and the change time cannot be set by an agent.
//!
//! Anything the walk does not model makes it give up ([`None`]) and the caller walks the
//! whole tree with libgit2 as before: an index entry with a conflict stage or a flag
//! (assume-unchanged, skip-worktree, intent-to-add), a `.git` anywhere but the root, an
//! unreadable directory, no index file, or more candidates than a path list is worth.

use std::ffi::{CStr, CString};
use std::ops::Range;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use git2::{Binding, Index};

mod listing;

/// More candidates than this and a path list saves libgit2 nothing worth its cost.
const MAX_CANDIDATES: usize = 4096;
/// Below this many index entries one thread walks alone.
const PARALLEL_FROM: usize = 2048;
/// At most this many threads stat files.
const MAX_THREADS: usize = 4;

/// An index entry, borrowed from the index: its path, and the entry itself for the metadata it
/// recorded (read when the file is compared, not copied: 24 bytes an entry instead of 56, 3 MB
/// fewer at 100,000 files).
#[derive(Clone, Copy)]
struct Recorded<'i> {
    path: &'i [u8],
    entry: Entry<'i>,
}

/// A borrowed libgit2 index entry.
#[derive(Clone, Copy)]
struct Entry<'i>(&'i libgit2_sys::git_index_entry);

// SAFETY: the walk's threads only read the entry (its numbers; the path pointer in it is never
// followed through this type), and the shared borrow of the index it comes from keeps libgit2
// from changing or freeing it meanwhile.
unsafe impl Sync for Entry<'_> {}

impl Recorded<'_> {
    fn mode(&self) -> u32 {
        self.entry.0.mode
    }

    /// The metadata the entry recorded.
    fn stat(&self) -> Stat {
        let entry = self.entry.0;
        Stat {
            mode: entry.mode,
            mtime: (entry.mtime.seconds, entry.mtime.nanoseconds),
            ctime: (entry.ctime.seconds, entry.ctime.nanoseconds),
            ino: entry.ino,
            uid: entry.uid,
            gid: entry.gid,
            size: entry.file_size,
        }
    }
}

/// A file's metadata in the index's terms: what libgit2 compares between an index entry and
/// the file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Stat {
    mode: u32,
    mtime: (i32, u32),
    ctime: (i32, u32),
    ino: u32,
    uid: u32,
    gid: u32,
    size: u32,
}

impl Stat {
    fn of(meta: &libc::stat) -> Stat {
        // git's canonical modes: a regular file is 644 or 755 by its owner's execute bit.
        let kind = meta.st_mode & libc::S_IFMT;
        let mode = if kind == libc::S_IFREG {
            if meta.st_mode & 0o100 != 0 {
                0o100755
            } else {
                0o100644
            }
        } else if kind == libc::S_IFLNK {
            0o120000
        } else {
            // A socket, a fifo, a device: never what an index entry records.
            kind
        };
        // Truncated the way the index stores them (32 bits each).
        Stat {
            mode,
            mtime: (meta.st_mtime as i32, meta.st_mtime_nsec as u32),
            ctime: (meta.st_ctime as i32, meta.st_ctime_nsec as u32),
            ino: meta.st_ino as u32,
            uid: meta.st_uid,
            gid: meta.st_gid,
            size: meta.st_size as u32,
        }
    }
}

/// Whether a file found as `found` may differ from the index entry that recorded `recorded`,
/// when the index file was last written at `index_written` (seconds, nanoseconds).
fn may_differ(recorded: &Stat, found: &Stat, index_written: (i32, u32)) -> bool {
    // Recorded no earlier than the index was written: a change in the same clock tick would
    // keep every stamp, so only the content can tell (git's racy-clean rule).
    let racy = recorded.mtime >= index_written;
    racy || recorded != found
}

/// The paths of `worktree` (relative, `/`-separated) that may differ from `index`, sorted; a
/// directory stands for everything under it. `None` when this walk cannot tell (see the
/// module's documentation): then everything may differ.
pub(crate) fn candidates(
    index: &Index,
    index_file: &Path,
    worktree: &Path,
) -> Option<Vec<Vec<u8>>> {
    // Asked once: the answer reads cgroup files.
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let threads = if index.len() < PARALLEL_FROM {
        1
    } else {
        *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
    .min(MAX_THREADS);
    candidates_on(index, index_file, worktree, threads)
}

/// [`candidates`] on `threads` threads.
fn candidates_on(
    index: &Index,
    index_file: &Path,
    worktree: &Path,
    threads: usize,
) -> Option<Vec<Vec<u8>>> {
    use std::os::unix::fs::MetadataExt;
    let written = std::fs::metadata(index_file).ok()?;
    let written = (written.mtime() as i32, written.mtime_nsec() as u32);
    let entries = recorded(index)?;
    // The index is sorted by path bytes; rely on it only after checking.
    if !entries.windows(2).all(|w| w[0].path < w[1].path) {
        return None;
    }
    let walk = Walk {
        root: listing::Dir::root(worktree).ok()?,
        entries: &entries,
        written,
        queue: Mutex::new(Queue {
            dirs: vec![Queued {
                path: Vec::new(),
                range: 0..entries.len(),
            }],
            busy: 0,
        }),
        changed: Condvar::new(),
        gave_up: AtomicBool::new(false),
    };
    let results: Vec<Option<Visit>> = std::thread::scope(|scope| {
        // A thread that cannot be started leaves its share to the others.
        let workers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, || walk.work())
                    .ok()
            })
            .collect();
        let mut results = vec![walk.work()];
        results.extend(workers.into_iter().map(|w| w.join().ok().flatten()));
        results
    });
    let mut seen = vec![false; entries.len()];
    let mut found = Vec::new();
    for visit in results {
        let visit = visit?;
        for at in visit.seen {
            seen[at] = true;
        }
        found.extend(visit.candidates);
    }
    // What the index has and the walk did not see is gone (or hidden behind a type change).
    found.extend(
        entries
            .iter()
            .zip(&seen)
            .filter(|(entry, seen)| !**seen && entry.mode() != GITLINK)
            .map(|(entry, _)| entry.path.to_vec()),
    );
    if found.len() > MAX_CANDIDATES {
        tracing::debug!(candidates = found.len(), "too many candidates: a full walk");
        return None;
    }
    tracing::debug!(
        candidates = found.len(),
        entries = entries.len(),
        "metadata walk"
    );
    found.sort();
    found.dedup();
    Some(found)
}

/// Entry flags the walk does not model: a conflict stage and assume-unchanged (`VALID`).
const UNMODELLED_FLAGS: u16 =
    libgit2_sys::GIT_INDEX_ENTRY_STAGEMASK | libgit2_sys::GIT_INDEX_ENTRY_VALID as u16;
/// Extended flags the walk does not model: skip-worktree and intent-to-add.
const UNMODELLED_EXTENDED: u16 = (libgit2_sys::GIT_INDEX_ENTRY_SKIP_WORKTREE
    | libgit2_sys::GIT_INDEX_ENTRY_INTENT_TO_ADD) as u16;

/// The index's entries as the walk compares them, read in place (no copy of a path), or
/// `None` for an entry the walk does not model (a conflict stage, assume-unchanged,
/// skip-worktree, intent-to-add: libgit2 treats these specially).
fn recorded(index: &Index) -> Option<Vec<Recorded<'_>>> {
    let raw = index.raw();
    // SAFETY: `raw` is the live index `index` borrows for as long as the entries are used.
    let count = unsafe { libgit2_sys::git_index_entrycount(raw) };
    let mut entries = Vec::with_capacity(count);
    for n in 0..count {
        // SAFETY: `n` is below the entry count. The entry (and the path it points to) belongs
        // to the index and stays valid until the index changes, which the shared borrow of
        // `index` rules out for the lifetime the entries are given.
        let entry = unsafe { libgit2_sys::git_index_get_byindex(raw, n).as_ref() }?;
        if entry.flags & UNMODELLED_FLAGS != 0 || entry.flags_extended & UNMODELLED_EXTENDED != 0 {
            return None;
        }
        if entry.path.is_null() {
            return None;
        }
        // SAFETY: a non-null entry path is a NUL-terminated string owned by the entry.
        let path = unsafe { CStr::from_ptr(entry.path) }.to_bytes();
        entries.push(Recorded {
            path,
            entry: Entry(entry),
        });
    }
    Some(entries)
}

/// The index mode of a submodule entry, which the walks leave alone.
const GITLINK: u32 = 0o160000;

/// One walk over the worktree, shared by its threads.
struct Walk<'a> {
    root: OwnedFd,
    entries: &'a [Recorded<'a>],
    written: (i32, u32),
    queue: Mutex<Queue>,
    changed: Condvar,
    gave_up: AtomicBool,
}

/// Gives the walk up when dropped by a panicking thread.
struct GiveUpOnPanic<'w, 'a>(&'w Walk<'a>);

impl Drop for GiveUpOnPanic<'_, '_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.give_up();
        }
    }
}

/// Directories still to read, and how many are being read.
struct Queue {
    dirs: Vec<Queued>,
    busy: usize,
}

/// A directory to read: its path (relative; empty for the root) and the positions of the
/// index entries under it.
struct Queued {
    path: Vec<u8>,
    range: Range<usize>,
}

/// What one thread found: index entries it saw (by position) and candidate paths.
#[derive(Default)]
struct Visit {
    seen: Vec<usize>,
    candidates: Vec<Vec<u8>>,
}

/// What the index has directly in a directory under one name.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Child {
    /// A file, symlink or submodule: its entry's position.
    Entry(usize),
    /// A directory: the positions of the entries under it.
    Dir(Range<usize>),
}

/// The names the index has directly in the directory whose entries are `entries[range]` and
/// whose own path takes the first `start` bytes of theirs, sorted by name.
fn children<'a>(
    entries: &'a [Recorded<'a>],
    range: Range<usize>,
    start: usize,
) -> Vec<(&'a [u8], Child)> {
    let mut children = Vec::new();
    let mut at = range.start;
    while at < range.end {
        let rest = entries[at].path.get(start..).unwrap_or_default();
        match rest.iter().position(|b| *b == b'/') {
            None => {
                children.push((rest, Child::Entry(at)));
                at += 1;
            }
            Some(slash) => {
                // Every entry under `name/` follows this one: the index is sorted.
                let name = &rest[..slash];
                let group = &entries[at..range.end];
                // At least this entry itself, whatever the comparison says.
                let count = group
                    .partition_point(|e| {
                        e.path.get(start..).is_some_and(|r| {
                            r.len() > slash && r[slash] == b'/' && &r[..slash] == name
                        })
                    })
                    .max(1);
                children.push((name, Child::Dir(at..at + count)));
                at += count;
            }
        }
    }
    // Index order puts `a.txt` before `a/…`; lookups need plain name order.
    children.sort_unstable_by(|a, b| a.0.cmp(b.0));
    children
}

impl Walk<'_> {
    /// Reads directories off the queue until none are left or one thread gave up.
    fn work(&self) -> Option<Visit> {
        // A thread that panics must not leave the others waiting for its directory.
        let _on_panic = GiveUpOnPanic(self);
        let mut visit = Visit::default();
        let mut names = listing::Names::default();
        loop {
            let dir = {
                let Ok(mut queue) = self.queue.lock() else {
                    self.give_up();
                    return None;
                };
                loop {
                    if self.gave_up.load(Ordering::Relaxed) {
                        return None;
                    }
                    if let Some(dir) = queue.dirs.pop() {
                        queue.busy += 1;
                        break dir;
                    }
                    if queue.busy == 0 {
                        return Some(visit);
                    }
                    queue = match self.changed.wait(queue) {
                        Ok(queue) => queue,
                        Err(_) => {
                            self.give_up();
                            return None;
                        }
                    };
                }
            };
            let mut subdirs = Vec::new();
            if self
                .read_dir(&dir, &mut names, &mut visit, &mut subdirs)
                .is_none()
            {
                self.give_up();
            }
            let Ok(mut queue) = self.queue.lock() else {
                self.give_up();
                return None;
            };
            queue.busy -= 1;
            queue.dirs.extend(subdirs);
            self.changed.notify_all();
        }
    }

    fn give_up(&self) {
        self.gave_up.store(true, Ordering::Relaxed);
        self.changed.notify_all();
    }

    /// Stats every entry of the directory `dir` that the index records, and lists what may
    /// differ.
    fn read_dir(
        &self,
        dir: &Queued,
        names: &mut listing::Names,
        visit: &mut Visit,
        subdirs: &mut Vec<Queued>,
    ) -> Option<()> {
        let relative = if dir.path.is_empty() {
            CString::from(c".")
        } else {
            CString::new(dir.path.clone()).ok()?
        };
        let opened = listing::Dir::open(&self.root, &relative).ok()?;
        opened.read_into(names).ok()?;
        let start = if dir.path.is_empty() {
            0
        } else {
            dir.path.len() + 1
        };
        let children = children(self.entries, dir.range.clone(), start);
        for name in names.iter() {
            if name.bytes == b".git" {
                if dir.path.is_empty() {
                    continue;
                }
                // A repository inside the worktree: libgit2's rules for it are its own.
                return None;
            }
            // The entry's path, made only for what is kept (most files are not).
            let path = || {
                let mut path = Vec::with_capacity(dir.path.len() + 1 + name.bytes.len());
                if !dir.path.is_empty() {
                    path.extend_from_slice(&dir.path);
                    path.push(b'/');
                }
                path.extend_from_slice(name.bytes);
                path
            };
            let child = children
                .binary_search_by(|(child, _)| (*child).cmp(name.bytes))
                .ok()
                .map(|at| &children[at].1);
            // The type from the listing where the file system gives it, else from a stat.
            let mut stat = None;
            let is_dir = match name.kind {
                libc::DT_DIR => true,
                libc::DT_UNKNOWN => {
                    let meta = opened.stat(name.c).ok()?;
                    let is_dir = meta.st_mode & libc::S_IFMT == libc::S_IFDIR;
                    stat = Some(meta);
                    is_dir
                }
                _ => false,
            };
            match (is_dir, child) {
                // A submodule's directory: left alone, as libgit2's walk leaves it.
                (true, Some(Child::Entry(at))) if self.entries[*at].mode() == GITLINK => {
                    visit.seen.push(*at)
                }
                (true, Some(Child::Dir(range))) => subdirs.push(Queued {
                    path: path(),
                    range: range.clone(),
                }),
                (false, Some(Child::Entry(at))) => {
                    visit.seen.push(*at);
                    let meta = match stat {
                        Some(meta) => meta,
                        None => opened.stat(name.c).ok()?,
                    };
                    if may_differ(&self.entries[*at].stat(), &Stat::of(&meta), self.written) {
                        visit.candidates.push(path());
                    }
                }
                // Untracked (maybe ignored: libgit2 looks inside a directory if it must), a
                // file that became a directory or a directory that became a file.
                _ => visit.candidates.push(path()),
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests;
