//! What tells one version of a file from another without reading it: its identity (device,
//! inode), size, and modification and change times. A rewrite changes the change time (and a
//! replacement the inode) whatever a writer does to the modification time afterwards; no
//! unprivileged process can set the change time. The one gap is a change within the same tick
//! of the kernel's coarse clock as an earlier look, which keeps every stamp: a stamp is only
//! trusted for content read after the clock moved past its change time
//! ([`Stamp::changed_before`], git's "racily clean" rule).

use std::path::Path;
use std::time::{Duration, SystemTime};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of an open or looked-up file.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Stamp {
        use std::os::unix::fs::MetadataExt;
        Stamp {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime: (meta.mtime(), meta.mtime_nsec()),
            ctime: (meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The stamp of what `path` names itself (a link is not followed).
    pub(crate) fn at(path: &Path) -> Option<Stamp> {
        std::fs::symlink_metadata(path)
            .ok()
            .map(|meta| Stamp::of(&meta))
    }

    /// The stamp of a `stat(2)` result.
    pub(crate) fn of_stat(stat: &libc::stat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: u64::try_from(stat.st_size).unwrap_or_default(),
            mtime: (stat.st_mtime, stat.st_mtime_nsec),
            ctime: (stat.st_ctime, stat.st_ctime_nsec),
        }
    }

    /// Whether the file's last change was stamped before `time`: then any later change gets
    /// another change time, and the stamp stands for the content read after `time`.
    pub(crate) fn changed_before(&self, time: SystemTime) -> bool {
        let (seconds, nanos) = self.ctime;
        let Ok(seconds) = u64::try_from(seconds) else {
            return false;
        };
        let Ok(nanos) = u32::try_from(nanos) else {
            return false;
        };
        SystemTime::UNIX_EPOCH
            .checked_add(Duration::new(seconds, nanos))
            .is_some_and(|changed| changed < time)
    }
}

/// The clock the kernel stamps file changes from (Linux: the real-time clock as of the last
/// timer tick), if it can be read: a change made from now on is stamped no earlier than this.
#[cfg(target_os = "linux")]
pub fn stamp_clock() -> Option<SystemTime> {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec we pass and nothing else.
    if unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut now) } != 0 {
        return None;
    }
    let seconds = u64::try_from(now.tv_sec).ok()?;
    let nanos = u32::try_from(now.tv_nsec).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(Duration::new(seconds, nanos))
}

/// Elsewhere the clock the kernel stamps from is not known.
#[cfg(not(target_os = "linux"))]
pub fn stamp_clock() -> Option<SystemTime> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewrite_changes_the_stamp_even_with_the_modification_time_put_back() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("hook");
        std::fs::write(&file, "one").unwrap();
        let before = Stamp::at(&file).unwrap();
        let mtime = std::fs::metadata(&file).unwrap().modified().unwrap();
        // Past the coarse clock's tick, so the change time must move.
        std::thread::sleep(Duration::from_millis(30));
        std::fs::write(&file, "two").unwrap();
        let handle = std::fs::File::options().write(true).open(&file).unwrap();
        handle.set_modified(mtime).unwrap();
        assert_ne!(Stamp::at(&file).unwrap(), before);
        assert!(before.changed_before(SystemTime::now()));
        assert!(!before.changed_before(SystemTime::UNIX_EPOCH));
    }
}
