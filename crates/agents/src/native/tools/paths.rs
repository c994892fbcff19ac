//! Every path a tool touches stays inside the worktree.
//!
//! A path is taken relative to the worktree (an absolute one must lie inside it), `..` may not
//! climb out of it, and the deepest part that exists is resolved through its symlinks and must
//! still lie inside: a symlink in the worktree pointing elsewhere is no way out. The worktree's
//! `.git` (a file naming its git admin directory) is off limits too.

use std::path::{Component, Path, PathBuf};

use super::Problem;

/// `requested` as an absolute path inside `worktree` (itself canonical), or why not.
pub fn inside(worktree: &Path, requested: &str) -> Result<PathBuf, Problem> {
    let requested_path = Path::new(requested);
    let relative = if requested_path.is_absolute() {
        requested_path
            .strip_prefix(worktree)
            .map_err(|_| outside(requested))?
            .to_path_buf()
    } else {
        requested_path.to_path_buf()
    };
    let mut normal = PathBuf::new();
    for component in relative.components() {
        match component {
            Component::Normal(part) => normal.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    return Err(outside(requested));
                }
            }
            Component::RootDir | Component::Prefix(_) => return Err(outside(requested)),
        }
    }
    if normal
        .components()
        .next()
        .is_some_and(|first| first.as_os_str() == ".git")
    {
        return Err(Problem::Refused(format!(
            "`{requested}` is git's own data, which no tool may touch"
        )));
    }
    let full = worktree.join(&normal);
    // The deepest existing ancestor, resolved through symlinks, must stay inside.
    let existing = full
        .ancestors()
        .find(|ancestor| ancestor.symlink_metadata().is_ok())
        .unwrap_or(worktree);
    let resolved = existing
        .canonicalize()
        .map_err(|e| Problem::Failed(format!("cannot resolve `{requested}`: {e}")))?;
    if !resolved.starts_with(worktree) {
        return Err(outside(requested));
    }
    Ok(full)
}

/// `path` relative to the worktree, for what the model is shown.
pub fn shown(worktree: &Path, path: &Path) -> String {
    path.strip_prefix(worktree)
        .unwrap_or(path)
        .display()
        .to_string()
}

fn outside(requested: &str) -> Problem {
    Problem::Refused(format!(
        "`{requested}` is outside the worktree; tools may only use paths inside it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_outside_the_worktree_are_refused_however_they_are_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("wt")).unwrap();
        let worktree = dir.path().join("wt").canonicalize().unwrap();
        std::fs::create_dir(worktree.join("src")).unwrap();
        std::fs::write(dir.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path(), worktree.join("escape")).unwrap();

        assert_eq!(
            inside(&worktree, "src/a.rs").unwrap(),
            worktree.join("src/a.rs")
        );
        assert_eq!(
            inside(&worktree, "./src/../b.rs").unwrap(),
            worktree.join("b.rs")
        );
        let absolute = worktree.join("src/new/c.rs");
        assert_eq!(
            inside(&worktree, absolute.to_str().unwrap()).unwrap(),
            absolute
        );
        for bad in [
            "../secret",
            "src/../../secret",
            "/etc/passwd",
            "escape/secret",
            "escape/new.txt",
            ".git/config",
        ] {
            assert!(inside(&worktree, bad).is_err(), "{bad} was allowed");
        }
    }
}
