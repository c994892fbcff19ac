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

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex};

use git2::Index;

/// More candidates than this and a path list saves libgit2 nothing worth its cost.
const MAX_CANDIDATES: usize = 4096;
/// Below this many index entries one thread walks alone.
const PARALLEL_FROM: usize = 2048;
/// At most this many threads stat files.
const MAX_THREADS: usize = 4;

/// An index entry: its path and the metadata it recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    path: Vec<u8>,
    stat: Stat,
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
    fn of(meta: &std::fs::Metadata) -> Stat {
        // git's canonical modes: a regular file is 644 or 755 by its owner's execute bit.
        let kind = meta.mode() & libc::S_IFMT;
        let mode = if kind == libc::S_IFREG {
            if meta.mode() & 0o100 != 0 {
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
            mtime: (meta.mtime() as i32, meta.mtime_nsec() as u32),
            ctime: (meta.ctime() as i32, meta.ctime_nsec() as u32),
            ino: meta.ino() as u32,
            uid: meta.uid(),
            gid: meta.gid(),
            size: meta.size() as u32,
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
    let written = std::fs::metadata(index_file).ok()?;
    let written = (written.mtime() as i32, written.mtime_nsec() as u32);
    let mut entries = Vec::with_capacity(index.len());
    for entry in index.iter() {
        // Conflict stages (bits 12-13), assume-unchanged (bit 15); skip-worktree and
        // intent-to-add in the extended flags: libgit2 treats these specially.
        if entry.flags & 0xb000 != 0 || entry.flags_extended & 0x6000 != 0 {
            return None;
        }
        entries.push(Recorded {
            path: entry.path,
            stat: Stat {
                mode: entry.mode,
                mtime: (entry.mtime.seconds(), entry.mtime.nanoseconds()),
                ctime: (entry.ctime.seconds(), entry.ctime.nanoseconds()),
                ino: entry.ino,
                uid: entry.uid,
                gid: entry.gid,
                size: entry.file_size,
            },
        });
    }
    // The index is sorted by path bytes; rely on it only after checking.
    if !entries.windows(2).all(|w| w[0].path < w[1].path) {
        return None;
    }
    let walk = Walk {
        worktree,
        entries: &entries,
        written,
        queue: Mutex::new(Queue {
            dirs: vec![Vec::new()],
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
            .filter(|(entry, seen)| !**seen && entry.stat.mode != GITLINK)
            .map(|(entry, _)| entry.path.clone()),
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

/// The index mode of a submodule entry, which the walks leave alone.
const GITLINK: u32 = 0o160000;

/// One walk over the worktree, shared by its threads.
struct Walk<'a> {
    worktree: &'a Path,
    entries: &'a [Recorded],
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
    dirs: Vec<Vec<u8>>,
    busy: usize,
}

/// What one thread found: index entries it saw (by position) and candidate paths.
#[derive(Default)]
struct Visit {
    seen: Vec<usize>,
    candidates: Vec<Vec<u8>>,
}

impl Walk<'_> {
    /// Reads directories off the queue until none are left or one thread gave up.
    fn work(&self) -> Option<Visit> {
        // A thread that panics must not leave the others waiting for its directory.
        let _on_panic = GiveUpOnPanic(self);
        let mut visit = Visit::default();
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
            if self.read_dir(&dir, &mut visit, &mut subdirs).is_none() {
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

    /// Stats every entry of the directory `dir` (relative; empty for the root).
    fn read_dir(&self, dir: &[u8], visit: &mut Visit, subdirs: &mut Vec<Vec<u8>>) -> Option<()> {
        let at = self.worktree.join(OsStr::from_bytes(dir));
        // The index entries under `dir`, compared by what follows `dir/` (they share the rest).
        let start = if dir.is_empty() { 0 } else { dir.len() + 1 };
        let range = self.under(dir);
        let under = &self.entries[range.clone()];
        for entry in std::fs::read_dir(at).ok()? {
            let entry = entry.ok()?;
            let name = entry.file_name();
            let name = name.as_bytes();
            if name == b".git" {
                if dir.is_empty() {
                    continue;
                }
                // A repository inside the worktree: libgit2's rules for it are its own.
                return None;
            }
            // The entry's path, made only for what is kept (most files are not).
            let path = || {
                let mut path = Vec::with_capacity(dir.len() + 1 + name.len());
                if !dir.is_empty() {
                    path.extend_from_slice(dir);
                    path.push(b'/');
                }
                path.extend_from_slice(name);
                path
            };
            let kind = entry.file_type().ok()?;
            let recorded = under
                .binary_search_by(|e| e.path[start..].cmp(name))
                .map(|at| range.start + at);
            if kind.is_dir() {
                match recorded {
                    // A submodule's directory: left alone, as libgit2's walk leaves it.
                    Ok(at) if self.entries[at].stat.mode == GITLINK => visit.seen.push(at),
                    // A file became a directory.
                    Ok(_) => visit.candidates.push(path()),
                    Err(_) => {
                        let path = path();
                        if self.under(&path).is_empty() {
                            // Untracked (maybe ignored): libgit2 looks inside if it must.
                            visit.candidates.push(path);
                        } else {
                            subdirs.push(path);
                        }
                    }
                }
                continue;
            }
            match recorded {
                Ok(at) => {
                    visit.seen.push(at);
                    let found = Stat::of(&entry.metadata().ok()?);
                    if may_differ(&self.entries[at].stat, &found, self.written) {
                        visit.candidates.push(path());
                    }
                }
                // Untracked, or a directory that became a file.
                Err(_) => visit.candidates.push(path()),
            }
        }
        Some(())
    }

    /// The positions of the index entries under the directory `dir` (all for the root).
    fn under(&self, dir: &[u8]) -> std::ops::Range<usize> {
        if dir.is_empty() {
            return 0..self.entries.len();
        }
        let mut prefix = dir.to_vec();
        prefix.push(b'/');
        let first = self.entries.partition_point(|e| e.path < prefix);
        let count = self.entries[first..].partition_point(|e| e.path.starts_with(&prefix));
        first..first + count
    }
}

#[cfg(test)]
mod tests;
