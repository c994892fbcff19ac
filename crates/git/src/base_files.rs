//! The base's versions of the files a change touched: what the base oracle puts back in its
//! copy of the checkpoint (the base's test files and test infrastructure), and the base tree
//! that keys its baseline.

use std::path::Path;

use git2::ObjectType;

use super::error::{Context, GitError};
use super::repo::find_commit;
use super::tree_diff::{changed_leaves_in, open_for_diffs};

/// One path that differs between the base and the checkpoint, as the base has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseFile {
    /// Relative to the top of the tree, `/`-separated.
    pub path: String,
    /// The file at the base (its bytes, and whether it is executable); `None` where the base
    /// has no file there. A symbolic link is its target's path, as git stores it.
    pub content: Option<BaseContent>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BaseContent {
    pub bytes: Vec<u8>,
    pub executable: bool,
    pub symlink: bool,
}

/// The id git would give `commit`'s tree without its top-level entry `leave_out` (the
/// project's `.autobuild/`: a task file added does not change what the tests see). Computed,
/// never written to the object store.
pub fn tree_id_without(checkout: &Path, commit: &str, leave_out: &str) -> Result<String, GitError> {
    let repo = open_for_diffs(checkout)?;
    let commit = find_commit(&repo, commit, checkout)?;
    let tree = commit.tree().context("read a commit's tree", checkout)?;
    let mut bytes = Vec::new();
    for entry in tree
        .iter()
        .filter(|e| e.name_bytes() != leave_out.as_bytes())
    {
        bytes.extend_from_slice(format!("{:o} ", entry.filemode()).as_bytes());
        bytes.extend_from_slice(entry.name_bytes());
        bytes.push(0);
        bytes.extend_from_slice(entry.id().as_bytes());
    }
    let id = git2::Oid::hash_object(ObjectType::Tree, &bytes).context("hash a tree", checkout)?;
    Ok(id.to_string())
}

/// Every path whose entry differs between `base` and `commit` (both sides of a rename, every
/// leaf of a directory one side lacks) that `wanted` accepts, with its content at `base`.
/// Gitlinks (submodules) are left out.
pub fn base_versions(
    checkout: &Path,
    base: &str,
    commit: &str,
    wanted: &dyn Fn(&str) -> bool,
) -> Result<Vec<BaseFile>, GitError> {
    let repo = open_for_diffs(checkout)?;
    let from = find_commit(&repo, base, checkout)?;
    let to = find_commit(&repo, commit, checkout)?;
    let base_tree = from.tree().context("read a commit's tree", checkout)?;
    let changed = changed_leaves_in(&repo, from.tree_id(), to.tree_id())
        .context("compare trees", checkout)?;
    let mut files = Vec::new();
    for raw in changed {
        let path = String::from_utf8_lossy(&raw).into_owned();
        if !wanted(&path) {
            continue;
        }
        let content = match base_tree.get_path(Path::new(&path)) {
            Err(_) => None,
            Ok(entry) if entry.kind() != Some(ObjectType::Blob) => continue,
            Ok(entry) => {
                let blob = repo
                    .find_blob(entry.id())
                    .context(format_args!("read {path} at the base"), checkout)?;
                let mode = entry.filemode();
                Some(BaseContent {
                    bytes: blob.content().to_vec(),
                    executable: mode == i32::from(git2::FileMode::BlobExecutable),
                    symlink: mode == i32::from(git2::FileMode::Link),
                })
            }
        };
        files.push(BaseFile { path, content });
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    #[test]
    fn a_tree_without_an_entry_has_the_id_git_gives_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::create_dir_all(root.join(".autobuild/tasks")).unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join(".autobuild/tasks/T.md"), "task").unwrap();
        std::fs::write(root.join("src/a.py"), "a").unwrap();
        std::fs::write(root.join("run.sh"), "x").unwrap();
        git(root, &["add", "-A"]);
        git(
            root,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "one",
            ],
        );
        let with = tree_id_without(root, "HEAD", ".autobuild").unwrap();
        git(root, &["rm", "-rq", "--cached", ".autobuild"]);
        let expected = git(root, &["write-tree"]);
        assert_eq!(with, expected);
        assert_ne!(with, git(root, &["rev-parse", "HEAD^{tree}"]));
    }
}
