//! One bookkeeping change carried by a landing: a file moved (and rewritten) in the commit the
//! base will point to, before the landing is journaled — GuardKit's task file going to its
//! `completed/` folder when its task lands (`task::completed`). The change is made in git
//! objects, never in a checkout, so no link on disk is followed; the landing then updates the
//! user's checkout as it does for the approved work (files the user changed, and files in the
//! way, are left as they are).

use std::path::Path;

use git2::build::TreeUpdateBuilder;
use git2::{FileMode, ObjectType, Tree};

use super::super::error::{Context, GitError};
use super::super::repo::Repo;
use super::Landing;
use crate::strategy::MergeStrategy;

/// Why a move was not made; the landing goes on without it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotMoved {
    /// The file is not in the commit that lands (moved or deleted meanwhile, never committed).
    Missing,
    /// It is a link, a submodule or a directory, not a regular file.
    NotAFile,
    /// Something is already at the destination, or a part of its folder is not a folder.
    Occupied(String),
}

impl std::fmt::Display for NotMoved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotMoved::Missing => write!(f, "it is not in the merged commit"),
            NotMoved::NotAFile => write!(f, "it is not a regular file"),
            NotMoved::Occupied(path) => write!(f, "{path} is already there"),
        }
    }
}

impl Repo {
    /// `landing` with the file `from` moved to `to` (its content passed through `rewrite`) in
    /// the commit it lands: for a squash or a merge, the same commit with that change; for a
    /// fast-forward, a commit on top of it (`message`), so the base still only moves forward.
    pub fn landing_with_move(
        &self,
        landing: &Landing,
        from: &Path,
        to: &Path,
        rewrite: &dyn Fn(&[u8]) -> Vec<u8>,
        message: &str,
    ) -> Result<Result<Landing, NotMoved>, GitError> {
        let (from_s, to_s) = (slash(from), slash(to));
        let commit = self
            .repo
            .find_commit(self.oid(&landing.to)?)
            .context("read the commit to land", self.root())?;
        let tree = commit
            .tree()
            .context("read the commit's tree", self.root())?;
        let Some((blob, mode)) = regular_file(&tree, from) else {
            return Ok(Err(match tree.get_path(from) {
                Ok(_) => NotMoved::NotAFile,
                Err(_) => NotMoved::Missing,
            }));
        };
        if let Some(taken) = occupied(&tree, to) {
            return Ok(Err(NotMoved::Occupied(taken)));
        }
        let content = self
            .repo
            .find_blob(blob)
            .context(format_args!("read {from_s}"), self.root())?;
        let new_blob = self
            .repo
            .blob(&rewrite(content.content()))
            .context(format_args!("write {to_s}"), self.root())?;
        let new_tree = TreeUpdateBuilder::new()
            .remove(from)
            .upsert(to, new_blob, mode)
            .create_updated(&self.repo, &tree)
            .context(format_args!("move {from_s} to {to_s}"), self.root())?;
        let parents: Vec<git2::Commit<'_>> = match landing.strategy {
            MergeStrategy::Ff => vec![commit.clone()],
            MergeStrategy::Squash | MergeStrategy::Merge => commit.parents().collect(),
        };
        let message = match landing.strategy {
            MergeStrategy::Ff => message.to_string(),
            _ => format!(
                "{}\n{message}",
                commit.message().unwrap_or_default().trim_end()
            ),
        };
        let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
        let to_commit = self.write_commit(new_tree, &parents, &message)?;
        Ok(Ok(Landing {
            to: to_commit.to_string(),
            ..landing.clone()
        }))
    }
}

fn slash(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// The blob and mode of a regular (or executable) file at `path` in `tree`.
fn regular_file(tree: &Tree<'_>, path: &Path) -> Option<(git2::Oid, FileMode)> {
    let entry = tree.get_path(path).ok()?;
    let mode = match entry.filemode() {
        0o100644 => FileMode::Blob,
        0o100755 => FileMode::BlobExecutable,
        _ => return None,
    };
    (entry.kind() == Some(ObjectType::Blob)).then(|| (entry.id(), mode))
}

/// What stands in the way of a new file at `path`: the path itself, or a folder on the way
/// that is a file or a link.
fn occupied(tree: &Tree<'_>, path: &Path) -> Option<String> {
    if tree.get_path(path).is_ok() {
        return Some(slash(path));
    }
    let mut folder = path.parent();
    while let Some(dir) = folder.filter(|d| !d.as_os_str().is_empty()) {
        if let Ok(entry) = tree.get_path(dir) {
            if entry.kind() != Some(ObjectType::Tree) {
                return Some(slash(dir));
            }
        }
        folder = dir.parent();
    }
    None
}
