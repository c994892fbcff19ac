//! What a new task worktree gets besides the checked-out files (`[worktree]` of config.toml):
//! links and copies of git-ignored paths of the main checkout, such as a `.venv` or
//! `node_modules` that a project's tests need but git never checks out.
//!
//! Links point at the main checkout's copies (absolute targets, so they work from any
//! depth), and are recorded with git ([`crate::git::record_linked`]) so they are never a
//! change, never tripped over by the read-only audit, and never committed. Copies are plain
//! files of the worktree: a copied path that git does not ignore is the task's to change, like
//! any other file. A path missing from the main checkout is skipped with a note (the setup
//! command may create it); a path git tracks cannot be linked or copied over its checked-out
//! version, which [`preflight`] reports before anything is created.

use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::Path;

use crate::error::Error;
use crate::project::config::WorktreeConfig;

/// What [`preflight`] found: problems that stop the run, and warnings.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Checked {
    pub blockers: Vec<String>,
    pub warnings: Vec<String>,
}

/// Checks `[worktree]` against the repository before any side effect: a linked or copied path
/// must not be tracked on `base`, and a linked path should be ignored by git as a file too,
/// so that git commands an agent runs itself do not pick the link up.
pub fn preflight(root: &Path, base: &str, config: &WorktreeConfig) -> Checked {
    let mut checked = Checked::default();
    for (key, path) in entries(config) {
        if let Ok(true) = crate::git::path_in_branch(root, base, path) {
            checked.blockers.push(format!(
                "[worktree] {key} lists `{path}`, which git tracks on {base}: the worktree checks it out already; remove it from `{key}`"
            ));
            continue;
        }
        if fs::symlink_metadata(root.join(path)).is_err() {
            checked.warnings.push(format!(
                "[worktree] {key}: `{path}` does not exist in the main checkout, so the worktree will not get it{}",
                if config.setup.is_some() { " (the setup command may create it)" } else { "" }
            ));
        }
    }
    let unignored: Vec<&str> = config
        .link
        .iter()
        .map(String::as_str)
        .filter(|path| !ignored_as_file(root, path))
        .collect();
    if !unignored.is_empty() {
        let rules: Vec<String> = unignored.iter().map(|p| format!("/{p}")).collect();
        checked.warnings.push(format!(
            "[worktree] link: .gitignore does not ignore {} as a symlink (a rule ending in `/` matches directories only); the runner never commits the links, but a `git add -A` an agent runs itself could: add {} to .gitignore",
            unignored.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(", "),
            rules.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>().join(", ")
        ));
    }
    checked
}

fn entries(config: &WorktreeConfig) -> impl Iterator<Item = (&'static str, &str)> {
    let links = config.link.iter().map(|p| ("link", p.as_str()));
    links.chain(config.copy.iter().map(|p| ("copy", p.as_str())))
}

/// Whether the root `.gitignore` has a rule naming `path` that also matches a symlink (`.venv`
/// or `/.venv`, not the directory-only `.venv/`). libgit2, which the runner uses, follows the
/// link and treats `.venv/` as matching; the git command line does not, and agents run that.
/// Only literal rules are recognized: a glob or a nested `.gitignore` that covers the link
/// gets the warning anyway, which costs a line of output, not a commit.
fn ignored_as_file(root: &Path, path: &str) -> bool {
    let Ok(text) = crate::user_file::read(&root.join(".gitignore"), Path::new(".gitignore")) else {
        return false;
    };
    text.lines()
        .map(str::trim)
        .any(|rule| rule == path || rule.strip_prefix('/') == Some(path))
}

/// Environment directories `init` looks for: created by a project's package manager, ignored
/// by git, needed by its tests.
const ENVIRONMENT_DIRS: [&str; 4] = [".venv", "venv", "node_modules", ".tox"];

/// What `init` suggests for `[worktree] link`: the [`ENVIRONMENT_DIRS`] the main checkout has
/// and git ignores, with the reason.
pub fn suggest_links(root: &Path) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(root) else {
        return Vec::new();
    };
    ENVIRONMENT_DIRS
        .iter()
        .filter(|dir| root.join(dir).is_dir())
        .filter(|dir| repo.is_path_ignored(dir).unwrap_or(false))
        .map(|dir| dir.to_string())
        .collect()
}

/// Links and copies the `[worktree]` paths from `root` into the new `worktree`, and records the
/// links with git. Returns notes for the user (paths skipped because the main checkout lacks
/// them).
pub fn populate(
    root: &Path,
    worktree: &Path,
    config: &WorktreeConfig,
) -> Result<Vec<String>, Error> {
    let mut notes = Vec::new();
    let mut linked = Vec::new();
    for (key, path) in entries(config) {
        let source = root.join(path);
        let target = worktree.join(path);
        if fs::symlink_metadata(&source).is_err() {
            notes.push(format!(
                "[worktree] {key}: `{path}` does not exist in the main checkout; the worktree does not get it"
            ));
            continue;
        }
        if fs::symlink_metadata(&target).is_ok() {
            return Err(Error::usage(format!(
                "[worktree] {key}: `{path}` already exists in the worktree (git tracks it); remove it from `{key}` in .autobuild/config.toml"
            )));
        }
        if let Some(parent) = target.parent() {
            fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
        }
        if key == "link" {
            let absolute = std::path::absolute(&source).unwrap_or(source);
            symlink(&absolute, &target).map_err(|e| Error::io("cannot link", &target, e))?;
            linked.push(path.to_string());
        } else {
            copy_tree(&source, &target).map_err(|e| Error::io("cannot copy into", &target, e))?;
        }
    }
    if !linked.is_empty() {
        crate::git::record_linked(worktree, &linked)?;
    }
    Ok(notes)
}

/// Copies a file, a symlink (as a symlink) or a directory tree.
fn copy_tree(source: &Path, target: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(source)?;
    if meta.file_type().is_symlink() {
        symlink(fs::read_link(source)?, target)
    } else if meta.is_dir() {
        fs::create_dir_all(target)?;
        fs::set_permissions(target, meta.permissions())?;
        for entry in fs::read_dir(source)? {
            let entry = entry?;
            copy_tree(&entry.path(), &target.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        fs::copy(source, target).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rules_that_match_a_symlink_count_as_ignoring_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let rules = |text: &str| {
            fs::write(dir.path().join(".gitignore"), text).unwrap();
            ["a", ".venv", "web/node_modules"].map(|p| ignored_as_file(dir.path(), p))
        };
        assert_eq!(rules(".venv/\nweb/node_modules/\n"), [false, false, false]);
        assert_eq!(rules("/.venv\n web/node_modules \n"), [false, true, true]);
    }

    #[test]
    fn copies_keep_trees_modes_and_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("src");
        fs::create_dir_all(src.join("bin")).unwrap();
        fs::write(src.join("bin/tool"), "#!/bin/sh\n").unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(src.join("bin/tool"), fs::Permissions::from_mode(0o755)).unwrap();
        symlink("bin/tool", src.join("alias")).unwrap();
        let dst = dir.path().join("dst");
        copy_tree(&src, &dst).unwrap();
        let mode = fs::metadata(dst.join("bin/tool"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(
            fs::read_link(dst.join("alias")).unwrap(),
            Path::new("bin/tool")
        );
    }
}
