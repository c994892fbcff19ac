//! The three-way merge of two commits' trees, in memory: the first phase of every landing
//! (nothing is written to a branch or a checkout here).

use std::path::Path;

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::ops::Bound;
use std::os::unix::ffi::OsStrExt;

use git2::build::TreeUpdateBuilder;
use git2::{Commit, ErrorCode, FileMode, MergeOptions, Oid, Repository, Tree};

use super::error::{Context, GitError};
use super::tree_diff::changed_leaves_in;

/// The tree a three-way merge produces, or the paths that conflict.
pub(crate) enum TreeMerge {
    Clean(Oid),
    Conflicts(Vec<String>),
}

/// The three-way merge of `ours` and `theirs` over `fork`, their merge base
/// ([`Repo::merge_base`]; the empty tree when the histories are unrelated).
pub(crate) fn merge_tree(
    repo: &Repository,
    fork: Option<Oid>,
    ours: &Commit<'_>,
    theirs: &Commit<'_>,
    path: &Path,
) -> Result<TreeMerge, GitError> {
    let ancestor = match fork {
        Some(base) => repo
            .find_commit(base)
            .and_then(|commit| commit.tree())
            .context("read the merge base", path)?,
        None => {
            let empty = repo
                .treebuilder(None)
                .and_then(|builder| builder.write())
                .context("write the empty tree", path)?;
            repo.find_tree(empty).context("read the empty tree", path)?
        }
    };
    let (our_tree, their_tree) = (
        ours.tree().context("read a commit's tree", path)?,
        theirs.tree().context("read a commit's tree", path)?,
    );
    if let Some(tree) =
        one_sided(repo, &ancestor, &our_tree, &their_tree).context("merge trees", path)?
    {
        return Ok(TreeMerge::Clean(tree));
    }
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

/// The merge when each path changed on one side at most: `ours` with the paths `theirs`
/// changed set to what `theirs` has. Only the trees on those paths are rewritten; libgit2's
/// merge writes the whole merged index, looking up every one of its entries in the object
/// database, which made each landing of a feature cost as much as the feature's tree. `None`
/// (merge in full) when a path, or a directory above it, changed on both sides, or when a side
/// replaced a file by a directory, a gitlink by a file, or the other way round.
fn one_sided(
    repo: &Repository,
    ancestor: &Tree<'_>,
    ours: &Tree<'_>,
    theirs: &Tree<'_>,
) -> Result<Option<Oid>, git2::Error> {
    let ours_changed = changed_leaves_in(repo, ancestor.id(), ours.id())?;
    let theirs_changed = changed_leaves_in(repo, ancestor.id(), theirs.id())?;
    let ours_changed: BTreeSet<&[u8]> = ours_changed.iter().map(Vec::as_slice).collect();
    let theirs_set: BTreeSet<&[u8]> = theirs_changed.iter().map(Vec::as_slice).collect();
    let overlapping = theirs_changed
        .iter()
        .any(|path| touches(&ours_changed, path) || has_below(&theirs_set, path))
        || ours_changed
            .iter()
            .any(|path| has_below(&ours_changed, path));
    if overlapping {
        return Ok(None);
    }
    let mut update = TreeUpdateBuilder::new();
    for path in &theirs_changed {
        let path_os = Path::new(OsStr::from_bytes(path));
        match theirs.get_path(path_os) {
            Ok(entry) => {
                // libgit2 replaces an entry only by one of its kind (a gitlink stays a gitlink).
                let kind_kept = ours
                    .get_path(path_os)
                    .map_or(true, |before| before.kind() == entry.kind());
                match file_mode(entry.filemode_raw()) {
                    Some(mode) if kind_kept => {
                        update.upsert(path.as_slice(), entry.id(), mode);
                    }
                    _ => return Ok(None),
                }
            }
            Err(e) if e.code() == ErrorCode::NotFound => {
                update.remove(path.as_slice());
            }
            Err(e) => return Err(e),
        }
    }
    update.create_updated(repo, ours).map(Some)
}

/// Whether `changed` holds `path`, a directory above it, or a path below it.
fn touches(changed: &BTreeSet<&[u8]>, path: &[u8]) -> bool {
    let above = path
        .iter()
        .enumerate()
        .filter(|(_, byte)| **byte == b'/')
        .any(|(at, _)| changed.contains(&path[..at]));
    changed.contains(path) || above || has_below(changed, path)
}

/// Whether `changed` holds a path below `path` (as a directory).
fn has_below(changed: &BTreeSet<&[u8]>, path: &[u8]) -> bool {
    let mut prefix = path.to_vec();
    prefix.push(b'/');
    changed
        .range::<[u8], _>((Bound::Included(prefix.as_slice()), Bound::Unbounded))
        .next()
        .is_some_and(|next| next.starts_with(&prefix))
}

/// A leaf's tree mode as libgit2 takes it; `None` for a mode git does not write.
fn file_mode(raw: i32) -> Option<FileMode> {
    [
        FileMode::Blob,
        FileMode::BlobExecutable,
        FileMode::BlobGroupWritable,
        FileMode::Link,
        FileMode::Commit,
    ]
    .into_iter()
    .find(|mode| i32::from(*mode) == raw)
}

#[cfg(test)]
mod tests;
