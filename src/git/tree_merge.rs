//! The three-way merge of two commits' trees, in memory: the first phase of every landing
//! (nothing is written to a branch or a checkout here).

use std::path::Path;

use git2::{Commit, ErrorCode, MergeOptions, Oid, Repository};

use super::error::{Context, GitError};

/// The tree a three-way merge produces, or the paths that conflict.
pub(crate) enum TreeMerge {
    Clean(Oid),
    Conflicts(Vec<String>),
}

/// The three-way merge of `ours` and `theirs` over their merge base (the empty tree when the
/// histories are unrelated).
pub(crate) fn merge_tree(
    repo: &Repository,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    path: &Path,
) -> Result<TreeMerge, GitError> {
    let ancestor = match repo.merge_base(ours.id(), theirs.id()) {
        Ok(base) => repo
            .find_commit(base)
            .and_then(|commit| commit.tree())
            .context("read the merge base", path)?,
        Err(e) if e.code() == ErrorCode::NotFound => {
            let empty = repo
                .treebuilder(None)
                .and_then(|builder| builder.write())
                .context("write the empty tree", path)?;
            repo.find_tree(empty).context("read the empty tree", path)?
        }
        Err(e) => return Err(e).context("find the merge base", path),
    };
    let (our_tree, their_tree) = (
        ours.tree().context("read a commit's tree", path)?,
        theirs.tree().context("read a commit's tree", path)?,
    );
    let mut index = repo
        .merge_trees(
            &ancestor,
            &our_tree,
            &their_tree,
            Some(&MergeOptions::new()),
        )
        .context("merge trees", path)?;
    if index.has_conflicts() {
        let mut paths: Vec<String> = index
            .conflicts()
            .context("list conflicts", path)?
            .flatten()
            .flat_map(|conflict| [conflict.ancestor, conflict.our, conflict.their])
            .flatten()
            .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
            .collect();
        paths.sort();
        paths.dedup();
        return Ok(TreeMerge::Conflicts(paths));
    }
    let tree = index
        .write_tree_to(repo)
        .context("write the merged tree", path)?;
    Ok(TreeMerge::Clean(tree))
}
