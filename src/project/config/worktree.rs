//! `[worktree]` of config.toml (README.md): what a task's worktree needs that git does not
//! check out — a git-ignored `.venv` or `node_modules` linked (`link`) or copied (`copy`) from
//! the main checkout, and a `setup` command run once after the worktree is created.
//!
//! Entries are paths relative to the repository root that stay inside it: an absolute path or
//! one with `..` could make a worktree file point anywhere, and `.git` is git's own.

use std::path::{Component, Path};

use toml::de::DeTable;

use super::reader::{Item, Reader};
use super::WorktreeConfig;

pub(super) const KEYS: [&str; 3] = ["link", "copy", "setup"];

pub(super) fn read(reader: &mut Reader<'_>, table: &DeTable<'_>) -> WorktreeConfig {
    let mut worktree = WorktreeConfig::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "link" => worktree.link = paths(reader, "link", item),
            "copy" => worktree.copy = paths(reader, "copy", item),
            "setup" => {
                worktree.setup = reader.non_blank(
                    "worktree.setup",
                    item,
                    "`setup` is empty; remove it or give a shell command",
                );
            }
            _ => reader.unknown_key(key, "in [worktree]", &KEYS),
        }
    }
    for path in &worktree.link {
        if worktree.copy.contains(path) {
            if let Some(item) = table.get("copy") {
                reader.report(
                    item.span(),
                    format!(
                        "`{path}` is in both `link` and `copy`; a path is either linked or copied"
                    ),
                    None,
                );
            }
        }
    }
    worktree
}

/// The entries of `[worktree] <name>`, normalized (`./` and trailing `/` removed).
fn paths(reader: &mut Reader<'_>, name: &str, item: &Item<'_>) -> Vec<String> {
    let Some(entries) = reader.array(&format!("worktree.{name}"), item) else {
        return Vec::new();
    };
    let mut paths = Vec::new();
    for entry in entries {
        let Some(text) = reader.string(&format!("a `worktree.{name}` entry"), entry) else {
            continue;
        };
        match normalize(text) {
            Ok(path) if !paths.contains(&path) => paths.push(path),
            Ok(_) => {}
            Err(why) => reader.report(
                entry.span(),
                format!("`{text}` cannot be in `worktree.{name}`: {why}"),
                Some("give a path relative to the repository root, such as \".venv\" or \"web/node_modules\"".to_string()),
            ),
        }
    }
    paths
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
