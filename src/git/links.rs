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

use std::fs;
use std::path::Path;

use super::error::{Context, GitError};

/// The first directory on the way to `rel` (relative to `root`, `/`-separated, the last
/// component excluded) that is a symbolic link, as a relative path; `None` when every
/// directory on the way is a real one or does not exist.
pub(crate) fn linked_component(root: &Path, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = rel.split('/').filter(|part| !part.is_empty()).collect();
    parts.pop();
    first_link(root, &parts)
}

/// The first of the directories `parts[..1]`, `parts[..2]`, … under `root` that is a link.
fn first_link(root: &Path, parts: &[&str]) -> Option<String> {
    let mut prefix = String::new();
    for part in parts {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        // Each prefix is checked before the next, so `lstat` never follows a link on the way.
        match fs::symlink_metadata(root.join(&prefix)) {
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
/// directories that the content about to be written needs, in any order) should be a
/// directory. Returns the removed links' paths, sorted.
pub(crate) fn remove_links_in_the_way<'a>(
    root: &Path,
    dirs: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, GitError> {
    let mut dirs: Vec<&str> = dirs.into_iter().collect();
    // A parent sorts before its children, so a link is found (and removed) before anything
    // below it is looked up through it.
    dirs.sort_unstable();
    dirs.dedup();
    let mut removed = Vec::new();
    for dir in dirs {
        let parts: Vec<&str> = dir.split('/').filter(|part| !part.is_empty()).collect();
        // Below a link already removed nothing exists any more, so nothing is found twice.
        if let Some(link) = first_link(root, &parts) {
            remove_link(root, &link)?;
            removed.push(link);
        }
    }
    Ok(removed)
}

/// Removes the link at `rel` (the link, never what it points to).
pub(crate) fn remove_link(root: &Path, rel: &str) -> Result<(), GitError> {
    let full = root.join(rel);
    fs::remove_file(&full).context("remove the symbolic link", &full)?;
    tracing::debug!(link = %full.display(), "removed a link in the way");
    Ok(())
}

/// Every directory on the way to each of `paths`: `a`, `a/b` for `a/b/c.txt`.
pub(crate) fn parent_dirs<'a>(paths: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut dirs = Vec::new();
    for path in paths {
        let mut end = 0;
        while let Some(slash) = path[end..].find('/') {
            end += slash;
            dirs.push(&path[..end]);
            end += 1;
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
        let dirs = parent_dirs(["src/sub/a.rs", "src/b.rs", "real/c.rs"]);
        assert_eq!(dirs, ["real", "src", "src/sub"]);

        let removed = remove_links_in_the_way(dir.path(), dirs).unwrap();

        assert_eq!(removed, ["src"]);
        assert!(fs::symlink_metadata(dir.path().join("src")).is_err());
        assert_eq!(
            fs::read_to_string(outside.path().join("sub/keep.txt")).unwrap(),
            "keep"
        );
        assert!(dir.path().join("real").is_dir());
    }
}
