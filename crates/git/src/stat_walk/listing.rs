//! One directory of the worktree read the way the walk needs it, without an allocation per
//! entry: opened relative to the worktree's root (never through a symlink as its last
//! component), its entries' names and types read in bulk (`getdents64`) into a buffer the
//! thread reuses, and an entry's metadata read relative to it (`fstatat`, not following a
//! symlink). `std::fs::read_dir` allocates a name (twice) for every entry and the walk reads
//! every entry of the worktree twice a turn.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// An open directory.
pub(super) struct Dir {
    fd: OwnedFd,
}

/// The entries of one directory: names (each followed by a NUL) and types, in the order the
/// kernel listed them. Reused from directory to directory by one thread.
#[derive(Default)]
pub(super) struct Names {
    /// Raw `getdents64` records.
    buffer: Vec<u8>,
    /// Where each entry's name starts in `names`, its length and its `d_type`.
    entries: Vec<(usize, usize, u8)>,
    names: Vec<u8>,
}

/// One entry of a directory.
pub(super) struct Name<'n> {
    /// Without the NUL.
    pub bytes: &'n [u8],
    /// With it, for calls relative to the directory.
    pub c: &'n CStr,
    /// `DT_DIR`, `DT_REG`, …; `DT_UNKNOWN` where the file system does not say.
    pub kind: u8,
}

/// Size of the buffer `getdents64` fills per call.
const BUFFER: usize = 32 * 1024;

impl Dir {
    /// Opens the directory `relative` (a NUL-terminated path, `.` for `root` itself) under
    /// `root`.
    pub(super) fn open(root: &OwnedFd, relative: &CStr) -> io::Result<Dir> {
        // SAFETY: openat(2) reads the NUL-terminated path and returns a new descriptor or -1.
        let fd = unsafe {
            libc::openat(
                root.as_raw_fd(),
                relative.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor was just created and nothing else owns it.
        Ok(Dir {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The worktree's root itself, as the directory others are opened relative to.
    pub(super) fn root(path: &std::path::Path) -> io::Result<OwnedFd> {
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY)
            .open(path)?;
        Ok(OwnedFd::from(file))
    }

    /// Reads every entry but `.` and `..` into `names` (replacing what it held). Linux only:
    /// elsewhere the walk gives up and libgit2 walks the whole tree.
    #[cfg(not(target_os = "linux"))]
    pub(super) fn read_into(&self, _: &mut Names) -> io::Result<()> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Reads every entry but `.` and `..` into `names` (replacing what it held).
    #[cfg(target_os = "linux")]
    pub(super) fn read_into(&self, names: &mut Names) -> io::Result<()> {
        names.entries.clear();
        names.names.clear();
        names.buffer.resize(BUFFER, 0);
        loop {
            // SAFETY: getdents64(2) writes at most `BUFFER` bytes into the buffer it is given
            // and returns how many, 0 at the end, or -1.
            let read = unsafe {
                libc::syscall(
                    libc::SYS_getdents64,
                    self.fd.as_raw_fd(),
                    names.buffer.as_mut_ptr(),
                    BUFFER,
                )
            };
            if read < 0 {
                return Err(io::Error::last_os_error());
            }
            let Ok(read) = usize::try_from(read) else {
                return Err(io::Error::other("getdents64 returned a negative length"));
            };
            if read == 0 {
                return Ok(());
            }
            names.parse(read)?;
        }
    }

    /// The metadata of the entry `name`, not following a symlink.
    pub(super) fn stat(&self, name: &CStr) -> io::Result<libc::stat> {
        // SAFETY: an all-zero `stat` is a valid value of this plain C struct.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat(2) reads the NUL-terminated name and writes the struct it is given.
        let done = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                name.as_ptr(),
                &mut stat,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if done != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stat)
    }
}

/// Offsets in a `linux_dirent64` record: inode (8 bytes), offset (8), record length (2),
/// type (1), then the NUL-terminated name.
const RECLEN_AT: usize = 16;
const TYPE_AT: usize = 18;
const NAME_AT: usize = 19;

impl Names {
    /// Copies the names of the first `read` bytes of `buffer`'s records.
    fn parse(&mut self, read: usize) -> io::Result<()> {
        let malformed = || io::Error::other("getdents64 returned a malformed record");
        let mut at = 0;
        while at < read {
            let record = self.buffer.get(at..read).ok_or_else(malformed)?;
            let length = record
                .get(RECLEN_AT..RECLEN_AT + 2)
                .map(|b| usize::from(u16::from_ne_bytes([b[0], b[1]])))
                .filter(|length| *length > NAME_AT && *length <= record.len())
                .ok_or_else(malformed)?;
            let kind = record[TYPE_AT];
            let name = &record[NAME_AT..length];
            let end = name.iter().position(|b| *b == 0).ok_or_else(malformed)?;
            let name = &name[..end];
            if name != b"." && name != b".." {
                self.entries.push((self.names.len(), name.len(), kind));
                self.names.extend_from_slice(name);
                self.names.push(0);
            }
            at += length;
        }
        Ok(())
    }

    /// The entries read, in the kernel's order.
    pub(super) fn iter(&self) -> impl Iterator<Item = Name<'_>> {
        self.entries.iter().filter_map(|&(start, length, kind)| {
            let with_nul = self.names.get(start..start + length + 1)?;
            Some(Name {
                bytes: &with_nul[..length],
                c: CStr::from_bytes_with_nul(with_nul).ok()?,
                kind,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_is_listed_once_with_its_type_and_stat_does_not_follow_links() {
        let dir = tempfile::tempdir().unwrap();
        let long = "n".repeat(200);
        std::fs::write(dir.path().join("file"), "x").unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        std::os::unix::fs::symlink("/etc/passwd", dir.path().join("link")).unwrap();
        // Enough entries to need several getdents64 calls.
        for i in 0..400 {
            std::fs::write(dir.path().join(format!("{long}{i}")), "").unwrap();
        }
        let root = Dir::root(dir.path()).unwrap();
        let opened = Dir::open(&root, c".").unwrap();
        let mut names = Names::default();
        opened.read_into(&mut names).unwrap();
        let listed: Vec<(Vec<u8>, u8)> = names
            .iter()
            .map(|name| (name.bytes.to_vec(), name.kind))
            .collect();
        assert_eq!(listed.len(), 403);
        let kind_of = |wanted: &[u8]| listed.iter().find(|(name, _)| name == wanted).unwrap().1;
        for (name, kind) in [
            (&b"file"[..], libc::DT_REG),
            (b"sub", libc::DT_DIR),
            (b"link", libc::DT_LNK),
        ] {
            let found = kind_of(name);
            assert!(found == kind || found == libc::DT_UNKNOWN, "{name:?}");
        }
        let link = opened.stat(c"link").unwrap();
        assert_eq!(link.st_mode & libc::S_IFMT, libc::S_IFLNK);
        assert!(opened.stat(c"absent").is_err());
        // A symlink to a directory is not opened as one.
        std::os::unix::fs::symlink(dir.path().join("sub"), dir.path().join("to-sub")).unwrap();
        assert!(Dir::open(&root, c"to-sub").is_err());
        assert!(Dir::open(&root, c"sub").is_ok());
    }
}
