//! `[worktree]` of config.toml: what a task's worktree needs that git does not
//! check out — a git-ignored `.venv` or `node_modules` linked (`link`) or copied (`copy`) from
//! the main checkout, and a `setup` command run once after the worktree is created.
//!
//! Entries are paths relative to the repository root that stay inside it: an absolute path or
//! one with `..` could make a worktree file point anywhere, and `.git` is git's own.

use std::path::{Component, Path};

use serde::Deserialize;

use super::values::{RepoPath, ShellCommand};
use crate::user_file::rule::Rule;

/// `[worktree]`: what a task's worktree needs besides the checked-out files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Worktree")]
pub struct WorktreeConfig {
    /// Paths symlinked to the main checkout's copies (e.g. a git-ignored `.venv`).
    #[serde(deserialize_with = "RepoPath::each")]
    #[schemars(with = "Vec<RepoPath>")]
    pub link: Vec<String>,
    /// Paths copied from the main checkout when the worktree is created.
    #[serde(deserialize_with = "RepoPath::each")]
    #[schemars(with = "Vec<RepoPath>")]
    pub copy: Vec<String>,
    /// A shell command run once in a new worktree, with the project environment.
    #[serde(deserialize_with = "ShellCommand::some")]
    #[schemars(with = "Option<ShellCommand>")]
    pub setup: Option<String>,
}

/// `text` as a clean relative path inside the repository, or why it is not one.
pub(crate) fn normalize(text: &str) -> Result<String, &'static str> {
    let path = Path::new(text.trim());
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err("it leaves the repository (`..`)"),
            Component::RootDir | Component::Prefix(_) => return Err("it is absolute"),
        }
    }
    if parts.is_empty() {
        return Err("it names the repository itself");
    }
    if parts.first().is_some_and(|p| p == ".git") {
        return Err("`.git` belongs to git");
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::normalize;

    #[test]
    fn entries_are_clean_relative_paths() {
        assert_eq!(normalize("./.venv/"), Ok(".venv".to_string()));
        assert_eq!(
            normalize("web/node_modules"),
            Ok("web/node_modules".to_string())
        );
        assert!(normalize("../x").is_err());
        assert!(normalize("/opt/venv").is_err());
        assert!(normalize(".").is_err());
        assert!(normalize(".git/hooks").is_err());
    }
}
