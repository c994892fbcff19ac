//! The parts of a repository's shared git directory an agent could change to affect work
//! beyond its worktree: `config` and `config.worktree` (aliases, `core.hooksPath`, filters that
//! run programs), everything under `info/` (`exclude` would hide files from later checkpoints,
//! `attributes` would change what is checked out) and `hooks/` (which would run in the user's
//! own git commands), and `objects/info/alternates` (which would borrow objects from elsewhere).
//! No agent step may change them — a new file counts as much as an edit; [`GitDirGuard`]
//! notices and undoes changes around every agent step.
//!
//! The rest of the git directory is left to git: the user may be committing in the main
//! checkout while a run is in progress, and branches and tags are guarded by
//! [`super::RefGuard`].

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use std::os::unix::ffi::OsStrExt;

use super::error::{Context, GitError};
use super::links;
use super::repo::open_checkout;

/// The guarded files' contents and permission bits before a step (`None`: the file did not
/// exist). The mode matters: `chmod +x` on a sample hook would arm it.
#[derive(Debug, Clone)]
pub struct GitDirGuard {
    common_dir: PathBuf,
    files: BTreeMap<PathBuf, Option<(Vec<u8>, u32)>>,
}

/// The mode recorded for a guarded path that is a symbolic link (its content is the target):
/// a link is never read through, and one put in place of a file counts as a change.
const LINK_MODE: u32 = 0o120000;

/// A guarded file's content (a link's target) and mode.
type Content = (Vec<u8>, u32);

const GUARDED_FILES: [&str; 3] = ["config", "config.worktree", "objects/info/alternates"];

/// Directories whose every file is guarded, including files created in them.
const GUARDED_DIRS: [&str; 2] = ["info", "hooks"];

impl GitDirGuard {
    /// Records the guarded files of the repository `worktree` belongs to.
    pub fn capture(worktree: &Path) -> Result<GitDirGuard, GitError> {
        let repo = open_checkout(worktree)?;
        Ok(GitDirGuard::capture_in(repo.commondir()))
    }

    /// Records the guarded files of the shared git directory `common_dir`.
    pub(crate) fn capture_in(common_dir: &Path) -> GitDirGuard {
        GitDirGuard {
            common_dir: common_dir.to_path_buf(),
            files: snapshot(common_dir),
        }
    }

    /// Puts back every guarded file that changed, appeared or disappeared since
    /// [`GitDirGuard::capture`]; returns them as `.git/<path>`.
    pub fn restore(&self) -> Result<Vec<String>, GitError> {
        let mut changed = Vec::new();
        let mut now = snapshot(&self.common_dir);
        // A file that was there and is gone (or now beyond a link) is absent.
        for path in self.files.keys() {
            now.entry(path.clone()).or_insert(None);
        }
        for (path, content) in &now {
            let before = self.files.get(path).cloned().flatten();
            if *content == before {
                continue;
            }
            let full = self.common_dir.join(path);
            // Never through a link: one on the way (`hooks/` -> elsewhere) or in the file's
            // place (`config` -> a file of the user's) is removed, not written to.
            let rel = path.as_os_str().as_bytes();
            links::remove_links_in_the_way(&self.common_dir, links::parent_dirs([rel]))?;
            if fs::symlink_metadata(&full).is_ok_and(|meta| meta.file_type().is_symlink()) {
                links::remove_link(&self.common_dir, rel)?;
            }
            match &before {
                Some((target, LINK_MODE)) => {
                    let target = std::ffi::OsStr::from_bytes(target);
                    std::os::unix::fs::symlink(target, &full).context("restore the link", &full)?;
                }
                Some((bytes, mode)) => {
                    use std::os::unix::fs::PermissionsExt;
                    if let Some(parent) = full.parent() {
                        fs::create_dir_all(parent).context("create directory", parent)?;
                    }
                    fs::write(&full, bytes).context("restore", &full)?;
                    fs::set_permissions(&full, fs::Permissions::from_mode(*mode))
                        .context("restore the mode of", &full)?;
                }
                None => match fs::remove_file(&full) {
                    Ok(()) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e).context("remove", &full),
                },
            }
            changed.push(format!(".git/{}", path.display()));
        }
        Ok(changed)
    }
}

/// The guarded files' contents as they are now, by path relative to `common_dir`: the
/// [`GUARDED_FILES`] always (absent ones as `None`) and every file under the
/// [`GUARDED_DIRS`]. Each directory is opened relative to its parent and each file relative to
/// its directory, never following a link: a link is recorded as itself ([`LINK_MODE`]) and
/// nothing beyond it is read. A file that is not a regular one (a FIFO an agent left) is
/// recorded by its mode alone, never opened for reading in a way that could block.
fn snapshot(common_dir: &Path) -> BTreeMap<PathBuf, Option<(Vec<u8>, u32)>> {
    let mut found = BTreeMap::new();
    let root = at::Dir::open(common_dir);
    for file in GUARDED_FILES {
        let mut parts: Vec<&str> = file.split('/').collect();
        let name = parts.pop().unwrap_or(file);
        let content = root.as_ref().and_then(|root| {
            let mut dir: Option<at::Dir> = None;
            for part in &parts {
                dir = Some(dir.as_ref().unwrap_or(root).dir(part)?);
            }
            dir.as_ref()
                .unwrap_or(root)
                .read(name, &common_dir.join(file))
        });
        found.insert(PathBuf::from(file), content);
    }
    if let Some(root) = &root {
        for dir in GUARDED_DIRS {
            root.collect(common_dir, Path::new(""), dir, &mut found);
        }
    }
    found
}

/// A directory of small files of git's records that are asked about again and again, like
/// every worktree's `HEAD` at each landing of a feature: a regular file is taken from what was
/// last read there while its stamp is unchanged (see [`at`]), never read through a link at its
/// own name, never blocking on a FIFO. Looked up relative to the open directory, so each look
/// costs a short path walk.
pub(super) struct KnownFiles {
    dir: at::Dir,
    path: PathBuf,
}

impl KnownFiles {
    pub(super) fn open(path: &Path) -> Option<KnownFiles> {
        Some(KnownFiles {
            dir: at::Dir::open(path)?,
            path: path.to_path_buf(),
        })
    }

    /// The content of the regular file `relative` (`name` or `dir/name`); `None` when it is
    /// no regular file or cannot be read.
    pub(super) fn read(&self, relative: &str) -> Option<Vec<u8>> {
        let (content, mode) = self.dir.read(relative, &self.path.join(relative))?;
        (mode & libc::S_IFMT == libc::S_IFREG).then_some(content)
    }
}

/// Reading relative to open directories (`openat`), never through a link.
///
/// Each snapshot looks at every guarded file (two agent steps a turn, before and after each),
/// but they almost never change: a regular file whose stamp (inode, size, modification and
/// change times: [`crate::stamp`]) is what it was when last read is not read again.
mod at {
    use std::collections::{BTreeMap, HashMap};
    use std::ffi::{CStr, CString, OsStr};
    use std::io::Read;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::os::unix::ffi::OsStrExt;
    use std::path::{Path, PathBuf};
    use std::sync::{LazyLock, Mutex};

    use super::super::stamp::{stamp_clock, Stamp};
    use super::{Content, LINK_MODE};

    /// A guarded file's content and mode when last read, and its stamp then.
    struct Known {
        stamp: Stamp,
        mode: u32,
        content: Vec<u8>,
    }

    /// By the file's full path: shared by every guard of the process (a feature run's tasks
    /// share one git directory).
    static KNOWN: LazyLock<Mutex<HashMap<PathBuf, Known>>> = LazyLock::new(Mutex::default);

    /// An open directory.
    pub(super) struct Dir(OwnedFd);

    fn c(name: &str) -> Option<CString> {
        CString::new(name).ok()
    }

    impl Dir {
        /// `path` itself (the shared git directory: links to it are followed, as git does).
        pub(super) fn open(path: &Path) -> Option<Dir> {
            let path = CString::new(path.as_os_str().as_bytes()).ok()?;
            Dir::open_flags(libc::AT_FDCWD, &path, 0)
        }

        fn open_flags(at: i32, name: &CStr, extra: i32) -> Option<Dir> {
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC | extra;
            // SAFETY: openat(2) reads the NUL-terminated name and returns a new descriptor or -1.
            let fd = unsafe { libc::openat(at, name.as_ptr(), flags) };
            // SAFETY: a descriptor openat just returned, owned by nothing else.
            (fd >= 0).then(|| Dir(unsafe { OwnedFd::from_raw_fd(fd) }))
        }

        /// The directory `name` in this one, unless it is a link or no directory.
        pub(super) fn dir(&self, name: &str) -> Option<Dir> {
            Dir::open_flags(self.0.as_raw_fd(), &c(name)?, libc::O_NOFOLLOW)
        }

        /// The content and mode of `name` in this directory, whose full path is `full`; a
        /// link's target with [`LINK_MODE`]; `None` when it does not exist or cannot be read.
        pub(super) fn read(&self, name: &str, full: &Path) -> Option<(Vec<u8>, u32)> {
            read_at(self.0.as_raw_fd(), &c(name)?, full)
        }

        /// Every file under the directory `name` of this one (recursively) into `found`, by
        /// path `relative/name/...` (this directory being `base/relative`); `name` itself when
        /// it is a link.
        pub(super) fn collect(
            &self,
            base: &Path,
            relative: &Path,
            name: &str,
            found: &mut BTreeMap<PathBuf, Option<(Vec<u8>, u32)>>,
        ) {
            let here = relative.join(name);
            let Some(dir) = self.dir(name) else {
                if let Some(link) = c(name).and_then(|name| link_at(self.0.as_raw_fd(), &name)) {
                    found.insert(here, Some(link));
                }
                return;
            };
            for (entry, kind) in dir.entries() {
                let Some(text) = OsStr::from_bytes(entry.as_bytes()).to_str() else {
                    continue;
                };
                if kind == libc::DT_DIR || (kind == libc::DT_UNKNOWN && dir.dir(text).is_some()) {
                    dir.collect(base, &here, text, found);
                } else {
                    let path = here.join(text);
                    let content = read_at(dir.0.as_raw_fd(), &entry, &base.join(&path));
                    found.insert(path, content);
                }
            }
        }

        /// The names and types of this directory's entries (`.` and `..` left out).
        fn entries(&self) -> Vec<(CString, u8)> {
            // SAFETY: dup(2) of a descriptor this directory owns.
            let fd = unsafe { libc::dup(self.0.as_raw_fd()) };
            if fd < 0 {
                return Vec::new();
            }
            // SAFETY: fdopendir takes ownership of the duplicate; on failure it is closed here.
            let stream = unsafe { libc::fdopendir(fd) };
            if stream.is_null() {
                // SAFETY: the duplicate is still ours when fdopendir failed.
                drop(unsafe { OwnedFd::from_raw_fd(fd) });
                return Vec::new();
            }
            let mut entries = Vec::new();
            loop {
                // SAFETY: readdir on the stream opened above; the entry it returns is valid
                // until the next readdir or closedir, and is copied before either.
                let entry = unsafe { libc::readdir(stream) };
                if entry.is_null() {
                    break;
                }
                // SAFETY: d_name is a NUL-terminated name inside the entry.
                let (name, kind) = unsafe {
                    (
                        CStr::from_ptr((*entry).d_name.as_ptr()).to_owned(),
                        (*entry).d_type,
                    )
                };
                if name.as_bytes() != b"." && name.as_bytes() != b".." {
                    entries.push((name, kind));
                }
            }
            // SAFETY: closes the stream (and the duplicate) exactly once.
            unsafe { libc::closedir(stream) };
            entries
        }
    }

    /// The content and mode of `name` in `dir` (full path `full`): as last read when its
    /// stamp is unchanged since, else read now.
    pub(super) fn read_at(dir: i32, name: &CStr, full: &Path) -> Option<(Vec<u8>, u32)> {
        if let Some(known) = known_at(dir, name, full) {
            return Some(known);
        }
        // Taken before the read: a change stamped before it is in what is read.
        let clock = stamp_clock();
        let (content, stamp) = read_now(dir, name)?;
        if let (Some(clock), Some(stamp)) = (clock, stamp) {
            if stamp.changed_before(clock) {
                if let Ok(mut known) = KNOWN.lock() {
                    known.insert(
                        full.to_path_buf(),
                        Known {
                            stamp,
                            mode: content.1,
                            content: content.0.clone(),
                        },
                    );
                }
            }
        }
        Some(content)
    }

    /// What `full` held when last read, if the regular file `name` in `dir` still has the
    /// stamp it had then.
    fn known_at(dir: i32, name: &CStr, full: &Path) -> Option<(Vec<u8>, u32)> {
        // SAFETY: an all-zero stat is a valid value for fstatat to overwrite.
        let mut stat: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstatat(2) reads the NUL-terminated name and writes the stat we pass.
        let found =
            unsafe { libc::fstatat(dir, name.as_ptr(), &mut stat, libc::AT_SYMLINK_NOFOLLOW) };
        if found != 0 || stat.st_mode & libc::S_IFMT != libc::S_IFREG {
            return None;
        }
        let known = KNOWN.lock().ok()?;
        let known = known.get(full)?;
        (known.stamp == Stamp::of_stat(&stat) && known.mode == stat.st_mode)
            .then(|| (known.content.clone(), known.mode))
    }

    /// Reads `name` in `dir`: its content and mode, and the stamp of a regular file.
    fn read_now(dir: i32, name: &CStr) -> Option<(Content, Option<Stamp>)> {
        let flags =
            libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC;
        // SAFETY: openat(2) reads the NUL-terminated name and returns a new descriptor or -1.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags) };
        if fd < 0 {
            return link_at(dir, name).map(|link| (link, None));
        }
        // SAFETY: a descriptor openat just returned, owned by nothing else.
        let file = std::fs::File::from(unsafe { OwnedFd::from_raw_fd(fd) });
        let meta = file.metadata().ok()?;
        use std::os::unix::fs::MetadataExt;
        if !meta.is_file() {
            return Some(((Vec::new(), meta.mode()), None));
        }
        let mut content = Vec::with_capacity(meta.len() as usize + 1);
        file.take(meta.len() + 1).read_to_end(&mut content).ok()?;
        Some(((content, meta.mode()), Some(Stamp::of(&meta))))
    }

    /// The target of the link `name` in `dir`, as [`LINK_MODE`] content.
    fn link_at(dir: i32, name: &CStr) -> Option<(Vec<u8>, u32)> {
        let mut buffer = vec![0u8; libc::PATH_MAX as usize];
        // SAFETY: readlinkat(2) writes at most `buffer.len()` bytes into the buffer.
        let len = unsafe {
            libc::readlinkat(dir, name.as_ptr(), buffer.as_mut_ptr().cast(), buffer.len())
        };
        let len = usize::try_from(len).ok()?;
        buffer.truncate(len);
        Some((buffer, LINK_MODE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init_with_commit;

    #[test]
    fn changes_to_exclude_and_hooks_are_undone_and_named() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let guard = GitDirGuard::capture(dir.path()).unwrap();
        assert!(guard.restore().unwrap().is_empty());
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("info")).unwrap();
        fs::write(git.join("info/exclude"), "*.rs\n").unwrap();
        fs::create_dir_all(git.join("hooks")).unwrap();
        fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\nrm -rf /\n").unwrap();
        let mut changed = guard.restore().unwrap();
        changed.sort();
        assert_eq!(changed, [".git/hooks/pre-commit", ".git/info/exclude"]);
        assert!(!git.join("hooks/pre-commit").exists());
        assert_eq!(
            snapshot(&git)
                .get(Path::new("info/exclude"))
                .cloned()
                .flatten(),
            guard
                .files
                .get(Path::new("info/exclude"))
                .cloned()
                .flatten()
        );
    }

    #[test]
    fn a_fifo_or_a_nested_file_left_in_hooks_is_removed_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("hooks")).unwrap();
        let guard = GitDirGuard::capture(dir.path()).unwrap();
        let fifo =
            std::ffi::CString::new(git.join("hooks/pre-push").as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o755) }, 0);
        fs::create_dir_all(git.join("hooks/deep")).unwrap();
        fs::write(git.join("hooks/deep/pre-commit"), "#!/bin/sh\n").unwrap();

        let mut changed = guard.restore().unwrap();

        changed.sort();
        assert_eq!(
            changed,
            [".git/hooks/deep/pre-commit", ".git/hooks/pre-push"]
        );
        assert!(!git.join("hooks/pre-push").exists());
        assert!(!git.join("hooks/deep/pre-commit").exists());
    }

    #[test]
    fn a_guarded_file_replaced_by_a_link_is_restored_without_writing_through_it() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let git = dir.path().join(".git");
        fs::create_dir_all(git.join("hooks")).unwrap();
        fs::write(git.join("hooks/pre-commit"), "#!/bin/sh\n").unwrap();
        let config = fs::read(git.join("config")).unwrap();
        let guard = GitDirGuard::capture(dir.path()).unwrap();
        let victim = outside.path().join("victim");
        fs::write(&victim, "the user's file\n").unwrap();
        fs::remove_file(git.join("config")).unwrap();
        std::os::unix::fs::symlink(&victim, git.join("config")).unwrap();
        fs::remove_dir_all(git.join("hooks")).unwrap();
        std::os::unix::fs::symlink(outside.path(), git.join("hooks")).unwrap();

        let changed = guard.restore().unwrap();

        for named in [".git/config", ".git/hooks", ".git/hooks/pre-commit"] {
            assert!(changed.iter().any(|c| c == named), "{named}: {changed:?}");
        }
        assert!(!changed.iter().any(|c| c.contains("victim")), "{changed:?}");
        assert_eq!(fs::read_to_string(&victim).unwrap(), "the user's file\n");
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 1);
        assert_eq!(fs::read(git.join("config")).unwrap(), config);
        assert!(git.join("hooks").is_dir() && git.join("hooks/pre-commit").is_file());
    }

    /// A hook rewritten in place (same inode, same size) with its modification time put back:
    /// the change time still tells, whether the guard read the hook long before (its copy is
    /// kept and not read again while the stamp holds) or in the very tick it was last changed
    /// (then nothing is kept, and the content is compared).
    #[test]
    fn a_hook_rewritten_in_place_with_its_times_put_back_is_still_caught() {
        for settled in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            fs::write(dir.path().join("a.txt"), "a\n").unwrap();
            init_with_commit(dir.path(), "main", "first").unwrap();
            let hook = dir.path().join(".git/hooks/pre-commit");
            fs::create_dir_all(hook.parent().unwrap()).unwrap();
            fs::write(&hook, "#!/bin/sh\ntrue\n").unwrap();
            if settled {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            let guard = GitDirGuard::capture(dir.path()).unwrap();
            // A second look finds it unchanged, from the kept copy or not.
            assert!(guard.restore().unwrap().is_empty(), "settled: {settled}");
            if settled {
                std::thread::sleep(std::time::Duration::from_millis(30));
            }
            let mtime = fs::metadata(&hook).unwrap().modified().unwrap();
            fs::write(&hook, "#!/bin/sh\nevil\n").unwrap();
            fs::File::options()
                .write(true)
                .open(&hook)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
            assert_eq!(
                guard.restore().unwrap(),
                [".git/hooks/pre-commit"],
                "settled: {settled}"
            );
            assert_eq!(fs::read_to_string(&hook).unwrap(), "#!/bin/sh\ntrue\n");
        }
    }
}
