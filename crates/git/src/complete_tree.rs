//! Whether a commit can land whole: every object its tree needs exists in the repository, and
//! it adds or changes no submodule entry (a gitlink, mode 160000, names a commit of another
//! repository that autobuild can neither check nor check out).
//!
//! Only what differs from a reference tree is walked (the base the work forked from, or the
//! base it lands on): subtrees equal to the reference's are known to be whole, so a large
//! repository with a small change costs a walk of the changed directories. A submodule the
//! user already has is left alone; one the agent adds or moves is refused.
//!
//! Checkpoints use this to refuse a turn (a scope violation the player is told about); a
//! landing uses it before the base moves, so a merge is all or nothing.

use std::fmt;
use std::path::Path;

use git2::{Odb, Oid, Repository, Tree};

use super::error::{Context, GitError};
use super::repo::open_checkout;

/// Something a tree needs that cannot land.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unlandable {
    /// A submodule entry added or changed.
    Gitlink { path: String, commit: String },
    /// An object the tree names is not in the repository.
    Missing { path: String, object: String },
}

impl fmt::Display for Unlandable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unlandable::Gitlink { path, commit } => write!(
                f,
                "{path} is a submodule entry (gitlink to {}); autobuild does not land \
                 submodule changes",
                short(commit)
            ),
            Unlandable::Missing { path, object } => write!(
                f,
                "{path} needs object {} that is not in the repository",
                short(object)
            ),
        }
    }
}

impl Unlandable {
    /// The path in the tree.
    pub fn path(&self) -> &str {
        match self {
            Unlandable::Gitlink { path, .. } | Unlandable::Missing { path, .. } => path,
        }
    }
}

fn short(id: &str) -> &str {
    id.get(..12).unwrap_or(id)
}

/// What in `tree` cannot land, compared with `reference` (`None`: everything is new).
pub(crate) fn unlandable(
    repo: &Repository,
    reference: Option<Oid>,
    tree: Oid,
    path: &Path,
) -> Result<Vec<Unlandable>, GitError> {
    let odb = repo.odb().context("open the object store", path)?;
    let reference = match reference {
        Some(id) => Some(repo.find_tree(id).context("read the base tree", path)?),
        None => None,
    };
    let mut found = Vec::new();
    walk(repo, &odb, reference.as_ref(), tree, "", &mut found);
    Ok(found)
}

/// The problems of the checkpoint `commit` in `worktree` compared with where it forked from
/// `base_branch` (the whole tree when the branch is gone or shares no history with it).
pub fn unlandable_since_fork(
    worktree: &Path,
    base_branch: &str,
    commit: &str,
) -> Result<Vec<Unlandable>, GitError> {
    unlandable_since_fork_in(&open_checkout(worktree)?, worktree, base_branch, commit)
}

/// [`unlandable_since_fork`] with the worktree's repository open.
pub(crate) fn unlandable_since_fork_in(
    repo: &Repository,
    worktree: &Path,
    base_branch: &str,
    commit: &str,
) -> Result<Vec<Unlandable>, GitError> {
    let commit = super::repo::find_commit(repo, commit, worktree)?;
    let fork = repo
        .revparse_single(&format!("refs/heads/{base_branch}"))
        .ok()
        .and_then(|base| repo.merge_base(base.id(), commit.id()).ok())
        .and_then(|fork| repo.find_commit(fork).ok())
        .map(|fork| fork.tree_id());
    unlandable(repo, fork, commit.tree_id(), worktree)
}

fn walk(
    repo: &Repository,
    odb: &Odb<'_>,
    reference: Option<&Tree<'_>>,
    id: Oid,
    prefix: &str,
    found: &mut Vec<Unlandable>,
) {
    let Ok(tree) = repo.find_tree(id) else {
        found.push(Unlandable::Missing {
            path: if prefix.is_empty() {
                "the root directory".to_string()
            } else {
                prefix.to_string()
            },
            object: id.to_string(),
        });
        return;
    };
    for entry in tree.iter() {
        let name = String::from_utf8_lossy(entry.name_bytes());
        let path = if prefix.is_empty() {
            name.into_owned()
        } else {
            format!("{prefix}/{name}")
        };
        let before = reference.and_then(|r| r.get_name_bytes(entry.name_bytes()));
        let before = before.as_ref();
        if before.is_some_and(|b| b.id() == entry.id() && b.filemode() == entry.filemode()) {
            continue;
        }
        match entry.filemode() {
            0o160000 => found.push(Unlandable::Gitlink {
                path,
                commit: entry.id().to_string(),
            }),
            0o040000 => {
                let sub = before
                    .filter(|b| b.filemode() == 0o040000)
                    .and_then(|b| repo.find_tree(b.id()).ok());
                walk(repo, odb, sub.as_ref(), entry.id(), &path, found);
            }
            _ => {
                if !odb.exists(entry.id()) {
                    found.push(Unlandable::Missing {
                        path,
                        object: entry.id().to_string(),
                    });
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use git2::FileMode;

    use super::*;

    fn tree_with(repo: &Repository, entries: &[(&str, Oid, FileMode)]) -> Oid {
        let mut root = repo.treebuilder(None).unwrap();
        for (name, id, mode) in entries {
            root.insert(name, *id, i32::from(*mode)).unwrap();
        }
        root.write().unwrap()
    }

    #[test]
    fn only_added_gitlinks_and_missing_objects_are_unlandable() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        let blob = repo.blob(b"a\n").unwrap();
        let absent = repo.blob(b"lost\n").unwrap();
        let elsewhere = Oid::from_str("1111111111111111111111111111111111111111").unwrap();
        let inner = tree_with(&repo, &[("a.txt", blob, FileMode::Blob)]);
        let base = tree_with(
            &repo,
            &[
                ("lib", inner, FileMode::Tree),
                ("theirs", elsewhere, FileMode::Commit),
            ],
        );
        let sub = tree_with(
            &repo,
            &[
                ("a.txt", blob, FileMode::Blob),
                ("gone.txt", absent, FileMode::Blob),
            ],
        );
        let tree = tree_with(
            &repo,
            &[
                ("lib", sub, FileMode::Tree),
                ("theirs", elsewhere, FileMode::Commit),
                ("vendor", elsewhere, FileMode::Commit),
            ],
        );
        let hex = absent.to_string();
        std::fs::remove_file(repo.path().join("objects").join(&hex[..2]).join(&hex[2..])).unwrap();
        let found = unlandable(&repo, Some(base), tree, dir.path()).unwrap();
        assert_eq!(
            found,
            vec![
                Unlandable::Missing {
                    path: "lib/gone.txt".into(),
                    object: absent.to_string()
                },
                Unlandable::Gitlink {
                    path: "vendor".into(),
                    commit: elsewhere.to_string()
                },
            ]
        );
        assert!(found[1].to_string().contains("vendor is a submodule entry"));
        // Against nothing, the user's own submodule counts too.
        assert_eq!(unlandable(&repo, None, tree, dir.path()).unwrap().len(), 3);
        assert!(unlandable(&repo, Some(base), base, dir.path())
            .unwrap()
            .is_empty());
    }
}
