//! Writing single files of a tree into a working directory, and recognizing what a file on
//! disk holds: the path-by-path operations of landing a merge in the user's checkout and of
//! reverting paths an agent was not allowed to change.

use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use git2::{ObjectType, Oid, Repository, Tree};

use super::error::{Context, GitError};
use super::links;

/// The text of a small file of git's administration that an agent can write (a worktree's
/// `HEAD`, its recorded links): read only when it is a regular file, and opened without
/// blocking, so a FIFO left in its place is refused at once instead of hanging the runner.
pub(crate) fn read_admin_file(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    base::user_file::open_regular(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// What one path holds in a tree: its blob and file mode, or nothing.
pub(crate) type Entry = Option<(Oid, i32)>;

pub(crate) fn entry(tree: &Tree<'_>, path: &str) -> Entry {
    tree.get_path(Path::new(path))
        .ok()
        .map(|entry| (entry.id(), entry.filemode()))
}

/// The blob id of what is on disk at `rel` under `root` (a symlink's target, a file's bytes),
/// or `None`; a path beyond a symbolic link is `None` too, as git sees it: nothing is read
/// through a link.
pub(crate) fn on_disk(root: &Path, rel: &str) -> Result<Option<Oid>, GitError> {
    if links::linked_component(root, rel).is_some() {
        return Ok(None);
    }
    let full = root.join(rel);
    let path = full.as_path();
    let Ok(meta) = fs::symlink_metadata(path) else {
        return Ok(None);
    };
    let bytes = if meta.file_type().is_symlink() {
        let target = fs::read_link(path).context("read symlink", path)?;
        target.as_os_str().as_encoded_bytes().to_vec()
    } else if meta.is_file() {
        fs::read(path).context("read", path)?
    } else {
        return Ok(None);
    };
    Oid::hash_object(ObjectType::Blob, &bytes)
        .map(Some)
        .context("hash", path)
}

/// Makes `rel` under `root` hold `entry` (a file, an executable, a symlink), or removes it.
/// Refuses a path beyond a symbolic link ([`links::ensure_no_link`]).
pub(crate) fn write_entry(
    repo: &Repository,
    root: &Path,
    rel: &str,
    entry: Entry,
) -> Result<(), GitError> {
    links::ensure_no_link(root, rel)?;
    let full = root.join(rel);
    let full = full.as_path();
    if fs::symlink_metadata(full).is_ok() {
        fs::remove_file(full).context("remove", full)?;
    }
    let Some((id, mode)) = entry else {
        remove_empty_parents(root, full);
        return Ok(());
    };
    if let Some(parent) = full.parent() {
        fs::create_dir_all(parent).context("create directory", parent)?;
    }
    let blob = repo.find_blob(id).context("read a merged file", full)?;
    if mode == 0o120000 {
        let target = std::ffi::OsStr::from_bytes(blob.content());
        std::os::unix::fs::symlink(target, full).context("create symlink", full)?;
        return Ok(());
    }
    fs::write(full, blob.content()).context("write", full)?;
    if mode == 0o100755 {
        fs::set_permissions(full, fs::Permissions::from_mode(0o755)).context("chmod", full)?;
    }
    Ok(())
}

/// Removes directories a deletion emptied, up to the checkout's root.
fn remove_empty_parents(root: &Path, full: &Path) {
    let mut dir = full.parent();
    while let Some(current) = dir {
        if current == root || !current.starts_with(root) || fs::remove_dir(current).is_err() {
            break;
        }
        dir = current.parent();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_admin_file_replaced_by_a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("autobuild-linked");
        fs::write(&file, "/.venv\n").unwrap();
        assert_eq!(read_admin_file(&file).unwrap(), "/.venv\n");
        fs::remove_file(&file).unwrap();
        let path = std::ffi::CString::new(file.as_os_str().as_bytes()).unwrap();
        // SAFETY: mkfifo(3) reads the NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
        // Without a writer, a blocking open would never return.
        let error = read_admin_file(&file).unwrap_err();
        assert_eq!(error.kind(), std::io::ErrorKind::InvalidInput);
    }
}
