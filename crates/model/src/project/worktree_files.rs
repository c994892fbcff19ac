//! What a new task worktree gets besides the checked-out files (`[worktree]` of config.toml):
//! links and copies of git-ignored paths of the main checkout, such as a `.venv` or
//! `node_modules` that a project's tests need but git never checks out.
//!
//! Links point at the main checkout's copies (absolute targets, so they work from any
//! depth), and are recorded with git ([`git::record_linked`]) so they are never a
//! change, never tripped over by the read-only audit, and never committed. Copies are plain
//! files of the worktree: a copied path that git does not ignore is the task's to change, like
//! any other file. A path missing from the main checkout is skipped with a note (the setup
//! command may create it); a path git tracks cannot be linked or copied over its checked-out
//! version, which [`preflight`] reports before anything is created.

use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::Path;

use globset::GlobSet;

use crate::project::config::WorktreeConfig;
use base::error::Error;

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
        if let Ok(true) = git::path_in_branch(root, base, path) {
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
    let Ok(text) = base::user_file::read(&root.join(".gitignore"), Path::new(".gitignore")) else {
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

/// At most this many hidden paths are named in a message.
const NAMED: usize = 3;

/// The paths of the main checkout at or below `path` (relative to `root`) that `hidden`
/// matches, in no particular order. Symbolic links are not followed.
pub fn hidden_below(root: &Path, path: &str, hidden: &GlobSet) -> Vec<String> {
    let mut found = Vec::new();
    let mut pending = vec![path.trim_end_matches('/').to_string()];
    while let Some(rel) = pending.pop() {
        if hidden.is_match(&rel) {
            found.push(rel);
            continue;
        }
        let Ok(meta) = fs::symlink_metadata(root.join(&rel)) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let Ok(entries) = fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for entry in entries.flatten() {
            pending.push(format!("{rel}/{}", entry.file_name().to_string_lossy()));
        }
    }
    found
}

/// `paths` for a message: the first few, sorted, and how many more.
fn named(mut paths: Vec<String>) -> String {
    paths.sort();
    let more = paths.len().saturating_sub(NAMED);
    let mut text: Vec<String> = paths.iter().take(NAMED).map(|p| format!("`{p}`")).collect();
    if more > 0 {
        text.push(format!("{more} more"));
    }
    text.join(", ")
}

/// Problems that stop a run with hidden paths: a `[worktree] link` at or above a hidden path
/// would show it to every agent (the sandbox shows a link's target), and a link cannot leave
/// part of what it points to out. (A copy can: [`populate`] leaves hidden paths out.)
pub fn hidden_links(root: &Path, config: &WorktreeConfig, hidden: &GlobSet) -> Vec<String> {
    config
        .link
        .iter()
        .filter_map(|path| {
            let found = hidden_below(root, path, hidden);
            (!found.is_empty()).then(|| {
                format!(
                    "[worktree] link `{path}` would show hidden paths to the agents ({}): a link \
                     shows everything it points to; list it under `copy` instead (a copy leaves \
                     the hidden paths out) or move the hidden files out of it",
                    named(found)
                )
            })
        })
        .collect()
}

/// Links and copies the `[worktree]` paths from `root` into the new `worktree`, and records the
/// links with git. Returns notes for the user (paths skipped because the main checkout lacks
/// them, hidden paths a copy left out). With `hidden` (a run with hidden paths), a copy leaves
/// out every path the globs match, and a link to anything they match is refused (preflight
/// refused it already; the main checkout may have changed since).
pub fn populate(
    root: &Path,
    worktree: &Path,
    config: &WorktreeConfig,
    hidden: Option<&GlobSet>,
) -> Result<Vec<String>, Error> {
    let mut notes = Vec::new();
    let mut linked = Vec::new();
    if let Some(hidden) = hidden {
        if let Some(problem) = hidden_links(root, config, hidden).into_iter().next() {
            return Err(Error::usage(problem));
        }
    }
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
            let left_out = match hidden {
                Some(hidden) => hidden_below(root, path, hidden),
                None => Vec::new(),
            };
            if left_out.iter().any(|p| p == path.trim_end_matches('/')) {
                notes.push(format!(
                    "[worktree] copy: `{path}` is a hidden path; the worktree does not get it"
                ));
                continue;
            }
            let skipped: Vec<std::path::PathBuf> = left_out.iter().map(|p| root.join(p)).collect();
            copy_tree(&source, &target, &skipped)
                .map_err(|e| Error::io("cannot copy into", &target, e))?;
            if !left_out.is_empty() {
                notes.push(format!(
                    "[worktree] copy `{path}`: left out {} hidden path(s) ({}): no agent may see them",
                    left_out.len(),
                    named(left_out)
                ));
            }
        }
    }
    if !linked.is_empty() {
        git::record_linked(worktree, &linked)?;
    }
    Ok(notes)
}

/// Copies into `dir` (the runner's copy of a worktree for its hidden checks) what [`populate`]
/// left out of the worktree's `[worktree] copy` entries because `hidden` matches it: the hidden
/// checks run with every hidden file, tracked or not. Returns how many paths it copied.
pub fn copy_hidden(
    root: &Path,
    dir: &Path,
    config: &WorktreeConfig,
    hidden: &GlobSet,
) -> Result<usize, Error> {
    let mut copied = 0;
    for path in &config.copy {
        for rel in hidden_below(root, path, hidden) {
            let (source, target) = (root.join(&rel), dir.join(&rel));
            if let Some(parent) = target.parent() {
                fs::create_dir_all(parent).map_err(|e| Error::io("cannot create", parent, e))?;
            }
            if fs::symlink_metadata(&target).is_ok() {
                let removed = if target.is_dir() {
                    fs::remove_dir_all(&target)
                } else {
                    fs::remove_file(&target)
                };
                removed.map_err(|e| Error::io("cannot remove", &target, e))?;
            }
            copy_tree(&source, &target, &[])
                .map_err(|e| Error::io("cannot copy into", &target, e))?;
            copied += 1;
        }
    }
    Ok(copied)
}

/// Copies a file, a symlink (as a symlink) or a directory tree, leaving out the sources in
/// `left_out`.
fn copy_tree(source: &Path, target: &Path, left_out: &[std::path::PathBuf]) -> io::Result<()> {
    if left_out.iter().any(|p| p == source) {
        return Ok(());
    }
    let meta = fs::symlink_metadata(source)?;
    if meta.file_type().is_symlink() {
        symlink(fs::read_link(source)?, target)
    } else if meta.is_dir() {
        fs::create_dir_all(target)?;
        fs::set_permissions(target, meta.permissions())?;
        for entry in fs::read_dir(source)? {
            let entry = entry?;
            copy_tree(&entry.path(), &target.join(entry.file_name()), left_out)?;
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
        copy_tree(&src, &dst, &[]).unwrap();
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

    /// A main checkout with an ignored `data/` whose `answers/` the project hides, and the
    /// globs.
    fn hidden_data() -> (tempfile::TempDir, std::path::PathBuf, GlobSet) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        fs::create_dir_all(root.join("data/answers/deep")).unwrap();
        fs::write(root.join("data/input.txt"), "input").unwrap();
        fs::write(root.join("data/answers/deep/secret.txt"), "SECRET").unwrap();
        fs::write(root.join("data/answers.txt"), "not hidden").unwrap();
        fs::write(root.join("key.txt"), "SECRET").unwrap();
        let hidden =
            base::pattern::set(&["data/answers/**".to_string(), "key.txt".to_string()]).unwrap();
        (dir, root, hidden)
    }

    #[test]
    fn a_copy_leaves_hidden_paths_out_and_says_so() {
        let (dir, root, hidden) = hidden_data();
        let worktree = dir.path().join("wt");
        fs::create_dir_all(&worktree).unwrap();
        let config = WorktreeConfig {
            copy: vec!["data".into(), "key.txt".into()],
            ..WorktreeConfig::default()
        };
        let notes = populate(&root, &worktree, &config, Some(&hidden)).unwrap();
        assert_eq!(
            fs::read_to_string(worktree.join("data/input.txt")).unwrap(),
            "input"
        );
        assert!(worktree.join("data/answers.txt").exists());
        assert!(!worktree.join("data/answers/deep/secret.txt").exists());
        assert!(!worktree.join("key.txt").exists());
        // The runner's copy for its hidden checks gets them back.
        let check_copy = dir.path().join("hidden-check");
        fs::create_dir_all(&check_copy).unwrap();
        assert_eq!(
            copy_hidden(&root, &check_copy, &config, &hidden).unwrap(),
            2
        );
        assert_eq!(
            fs::read_to_string(check_copy.join("data/answers/deep/secret.txt")).unwrap(),
            "SECRET"
        );
        assert_eq!(
            fs::read_to_string(check_copy.join("key.txt")).unwrap(),
            "SECRET"
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
        assert!(
            notes[0].contains("left out 1 hidden path(s) (`data/answers/deep`)"),
            "{notes:?}"
        );
        assert!(notes[1].contains("`key.txt` is a hidden path"), "{notes:?}");
        // Without hidden paths a copy is whole.
        let plain = dir.path().join("plain");
        fs::create_dir_all(&plain).unwrap();
        populate(&root, &plain, &config, None).unwrap();
        assert!(plain.join("data/answers/deep/secret.txt").exists());
    }

    #[test]
    fn a_link_to_anything_hidden_is_refused() {
        let (dir, root, hidden) = hidden_data();
        let config = WorktreeConfig {
            link: vec!["data".into(), "key.txt".into(), "data/input.txt".into()],
            ..WorktreeConfig::default()
        };
        let problems = hidden_links(&root, &config, &hidden);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("[worktree] link `data` would show hidden paths to the agents (`data/answers/deep`)"), "{problems:?}");
        assert!(problems[1].contains("link `key.txt`"), "{problems:?}");
        let worktree = dir.path().join("wt");
        fs::create_dir_all(&worktree).unwrap();
        let refused = populate(&root, &worktree, &config, Some(&hidden)).unwrap_err();
        assert!(refused.to_string().contains("link `data`"), "{refused}");
        assert!(fs::symlink_metadata(worktree.join("data")).is_err());
    }
}
