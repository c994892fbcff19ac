//! Copying a directory tree: files, directories, and symbolic links as links; anything else (a
//! socket, a device, a FIFO) is left out. The runner's copies of a worktree (the base oracle's,
//! a hidden check's) and `autobuild bench`'s copies of its tasks are made with it.

use std::fs;
use std::path::Path;

use crate::error::Error;

/// Copies what is under `from` to `to` (created as needed), leaving out every path — relative
/// to `from` — that `skip` says to (and what lies under it).
pub fn copy_tree(from: &Path, to: &Path, skip: &dyn Fn(&Path) -> bool) -> Result<(), Error> {
    copy_under(from, to, Path::new(""), skip)
}

fn copy_under(
    from: &Path,
    to: &Path,
    under: &Path,
    skip: &dyn Fn(&Path) -> bool,
) -> Result<(), Error> {
    fs::create_dir_all(to).map_err(|e| Error::io("cannot create", to, e))?;
    let entries = fs::read_dir(from).map_err(|e| Error::io("cannot read", from, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| Error::io("cannot read", from, e))?;
        let name = entry.file_name();
        let relative = under.join(&name);
        if skip(&relative) {
            continue;
        }
        let source = entry.path();
        let target = to.join(&name);
        let kind = entry
            .file_type()
            .map_err(|e| Error::io("cannot inspect", &source, e))?;
        if kind.is_symlink() {
            let link = fs::read_link(&source).map_err(|e| Error::io("cannot read", &source, e))?;
            std::os::unix::fs::symlink(&link, &target)
                .map_err(|e| Error::io("cannot create", &target, e))?;
        } else if kind.is_dir() {
            copy_under(&source, &target, &relative, skip)?;
        } else if kind.is_file() {
            fs::copy(&source, &target).map_err(|e| Error::io("cannot copy", &source, e))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_directories_and_links_are_copied_and_skipped_paths_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let from = dir.path().join("from");
        fs::create_dir_all(from.join("a/b")).unwrap();
        fs::write(from.join("a/b/f.txt"), "f").unwrap();
        fs::write(from.join("keep.txt"), "k").unwrap();
        fs::create_dir_all(from.join("a/.git")).unwrap();
        fs::write(from.join("a/.git/HEAD"), "x").unwrap();
        std::os::unix::fs::symlink("keep.txt", from.join("link")).unwrap();
        let to = dir.path().join("to");

        copy_tree(&from, &to, &|p| p.file_name().is_some_and(|n| n == ".git")).unwrap();

        assert_eq!(fs::read_to_string(to.join("a/b/f.txt")).unwrap(), "f");
        assert_eq!(
            fs::read_link(to.join("link")).unwrap(),
            Path::new("keep.txt")
        );
        assert!(!to.join("a/.git").exists());
    }
}
