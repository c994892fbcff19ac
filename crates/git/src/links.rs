//! The runner never writes through a symbolic link. An agent can replace a directory of its
//! worktree (`src/`, `.autobuild/`) with a link to anywhere; a runner that then restores
//! `src/main.rs` "in place" would write a file of the agent's choosing wherever the link
//! points, with the runner's rights. Git refuses such paths ("beyond a symbolic link"); so
//! does every writer here, through the one check [`linked_component`]:
//!
//! - in a worktree the runner owns (scope restore, the read-only audit, clean-up after
//!   checks) the link itself is what gets restored: [`remove_links_in_the_way`] removes it,
//!   and the checkpoint's directory is written in its place;
//! - in the user's checkout (landing a merge) the path is refused or left alone, never written.
//!
//! The last component of a path may itself be a link: writing it means replacing the link,
//! which touches nothing it points to.

use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::error::{Context, GitError};

/// The first directory on the way to `rel` (relative to `root`, `/`-separated, the last
/// component excluded) that is a symbolic link, as a relative path; `None` when every
/// directory on the way is a real one or does not exist.
pub(crate) fn linked_component(root: &Path, rel: &str) -> Option<String> {
    let rel = rel.as_bytes();
    // The last component is the entry itself, which may be a link.
    let dirs = match rel.iter().rposition(|&b| b == b'/') {
        Some(slash) => &rel[..slash],
        None => return None,
    };
    first_link(root, dirs).map(|link| String::from_utf8_lossy(&link).into_owned())
}

/// The first of the directories `a`, `a/b`, … of `rel` (bytes, `/`-separated, every
/// component included) under `root` that is a link. Bytes, not text: a directory name need
/// not be UTF-8.
fn first_link(root: &Path, rel: &[u8]) -> Option<Vec<u8>> {
    let mut prefix: Vec<u8> = Vec::new();
    for part in rel.split(|&b| b == b'/').filter(|part| !part.is_empty()) {
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(part);
        // Each prefix is checked before the next, so `lstat` never follows a link on the way.
        match fs::symlink_metadata(root.join(OsStr::from_bytes(&prefix))) {
            Ok(meta) if meta.file_type().is_symlink() => return Some(prefix),
            Ok(meta) if meta.is_dir() => {}
            _ => return None,
        }
    }
    None
}

/// Refuses to go on when a directory on the way to `rel` is a link: the writer's last line of
/// defence, whatever its caller checked before.
pub(crate) fn ensure_no_link(root: &Path, rel: &str) -> Result<(), GitError> {
    match linked_component(root, rel) {
        None => Ok(()),
        Some(link) => Err(GitError::BeyondSymlink {
            checkout: root.to_path_buf(),
            path: rel.to_string(),
            link,
        }),
    }
}

/// In a worktree the runner owns: removes every link found where one of `dirs` (relative
/// directories, as bytes, that the content about to be written needs, in any order) should be
/// a directory. Returns the removed links' paths, sorted.
pub(crate) fn remove_links_in_the_way<'a>(
    root: &Path,
    dirs: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Vec<String>, GitError> {
    let mut dirs: Vec<&[u8]> = dirs.into_iter().collect();
    // A parent sorts before its children, so a link is found (and removed) before anything
    // below it is looked up through it.
    dirs.sort_unstable();
    dirs.dedup();
    let mut removed = Vec::new();
    for dir in dirs {
        // Below a link already removed nothing exists any more, so nothing is found twice.
        if let Some(link) = first_link(root, dir) {
            remove_link(root, &link)?;
            removed.push(String::from_utf8_lossy(&link).into_owned());
        }
    }
    Ok(removed)
}

/// Removes the link at `rel` (the link, never what it points to).
pub(crate) fn remove_link(root: &Path, rel: &[u8]) -> Result<(), GitError> {
    let full = root.join(OsStr::from_bytes(rel));
    fs::remove_file(&full).context("remove the symbolic link", &full)?;
    tracing::debug!(link = %full.display(), "removed a link in the way");
    Ok(())
}

/// Every directory on the way to each of `paths`: `a`, `a/b` for `a/b/c.txt`.
pub(crate) fn parent_dirs<'a>(paths: impl IntoIterator<Item = &'a [u8]>) -> Vec<&'a [u8]> {
    let mut dirs = Vec::new();
    for path in paths {
        for (at, &byte) in path.iter().enumerate() {
            if byte == b'/' && at > 0 {
                dirs.push(&path[..at]);
            }
        }
    }
    dirs.sort_unstable();
    dirs.dedup();
    dirs
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_link_on_the_way_is_found_but_a_link_at_the_end_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("a/b")).unwrap();
        symlink(outside.path(), dir.path().join("a/out")).unwrap();
        symlink(outside.path(), dir.path().join("top")).unwrap();
        let cases = [
            ("a/b/c.txt", None),
            ("a/out/c.txt", Some("a/out")),
            ("a/out/deeper/c.txt", Some("a/out")),
            ("top/x", Some("top")),
            ("a/out", None),
            ("top", None),
            ("missing/x/y", None),
        ];
        for (path, expected) in cases {
            assert_eq!(
                linked_component(dir.path(), path).as_deref(),
                expected,
                "{path}"
            );
        }
        let err = ensure_no_link(dir.path(), "top/x").unwrap_err();
        assert!(err.to_string().contains("beyond a symbolic link"), "{err}");
    }

    #[test]
    fn links_in_the_way_are_removed_and_what_they_point_to_is_not_touched() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(outside.path().join("sub")).unwrap();
        fs::write(outside.path().join("sub/keep.txt"), "keep").unwrap();
        fs::create_dir_all(dir.path().join("real")).unwrap();
        symlink(outside.path(), dir.path().join("src")).unwrap();
        let files: [&[u8]; 3] = [b"src/sub/a.rs", b"src/b.rs", b"real/c.rs"];
        let dirs = parent_dirs(files);
        assert_eq!(dirs, [&b"real"[..], b"src", b"src/sub"]);

        let removed = remove_links_in_the_way(dir.path(), dirs).unwrap();

        assert_eq!(removed, ["src"]);
        assert!(fs::symlink_metadata(dir.path().join("src")).is_err());
        assert_eq!(
            fs::read_to_string(outside.path().join("sub/keep.txt")).unwrap(),
            "keep"
        );
        assert!(dir.path().join("real").is_dir());
    }

    #[test]
    fn a_link_with_a_name_that_is_not_utf8_is_found_too() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let name = OsStr::from_bytes(b"caf\xe9");
        symlink(outside.path(), dir.path().join(name)).unwrap();

        let removed =
            remove_links_in_the_way(dir.path(), parent_dirs([&b"caf\xe9/x.rs"[..]])).unwrap();

        assert_eq!(removed.len(), 1);
        assert!(fs::symlink_metadata(dir.path().join(name)).is_err());
    }
}
