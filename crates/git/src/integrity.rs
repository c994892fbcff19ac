//! Keeping a task worktree on its task branch, and nothing lost on the way.
//!
//! An agent with a shell can switch branches, detach HEAD or commit. The runner checks after
//! every agent step that HEAD is still the task branch ([`reattach`]) and where the branch tip
//! is ([`branch_tip`]); before it reverts anything that was not reviewed it saves it under a
//! backup ref ([`backup`]), so no work is ever deleted silently.

use std::path::Path;

use super::error::{Context, GitError};
use super::repo::{find_commit, head_of, open_checkout, signature};
use super::snapshot::state_tree_last;

/// Puts HEAD back on `refs/heads/<branch>` when an agent moved it elsewhere, leaving the files
/// and the index as they are. Returns where HEAD was (a branch name or a commit), or `None`
/// when it was already on the branch.
pub fn reattach(worktree: &Path, branch: &str) -> Result<Option<String>, GitError> {
    reattach_in(&open_checkout(worktree)?, worktree, branch)
}

/// [`reattach`] with the worktree's repository open.
pub(crate) fn reattach_in(
    repo: &git2::Repository,
    worktree: &Path,
    branch: &str,
) -> Result<Option<String>, GitError> {
    let wanted = format!("refs/heads/{branch}");
    let head = repo.find_reference("HEAD").context("read HEAD", worktree)?;
    let current = match head.symbolic_target().ok().flatten() {
        Some(target) if target == wanted => return Ok(None),
        Some(target) => target
            .strip_prefix("refs/heads/")
            .unwrap_or(target)
            .to_string(),
        None => format!(
            "detached at {}",
            head.target().map(|id| id.to_string()).unwrap_or_default()
        ),
    };
    repo.set_head(&wanted)
        .context(format_args!("put HEAD back on {branch}"), worktree)?;
    Ok(Some(current))
}

/// Whether HEAD of `worktree` is on `branch` and `branch` points to `commit` (full hex): no
/// step moved either. Reads refs only.
pub fn on_branch_at(worktree: &Path, branch: &str, commit: &str) -> Result<bool, GitError> {
    // The handle the last checkpoint kept reads refs from the files as they are now: no
    // opening of the repository for a question about two refs.
    let mut kept = None;
    super::index_cache::with_kept_repo(worktree, |repo| {
        kept = Some(on_branch_at_in(repo, worktree, branch, commit));
    });
    match kept {
        Some(answer) => answer,
        None => on_branch_at_in(&open_checkout(worktree)?, worktree, branch, commit),
    }
}

fn on_branch_at_in(
    repo: &git2::Repository,
    worktree: &Path,
    branch: &str,
    commit: &str,
) -> Result<bool, GitError> {
    let head = repo.find_reference("HEAD").context("read HEAD", worktree)?;
    let wanted = format!("refs/heads/{branch}");
    if head.symbolic_target().ok().flatten() != Some(wanted.as_str()) {
        return Ok(false);
    }
    let tip = repo.refname_to_id(&wanted).ok();
    Ok(tip.is_some_and(|tip| tip.to_string() == commit))
}

/// The commit (hex) `branch` points to.
pub fn branch_tip(worktree: &Path, branch: &str) -> Result<String, GitError> {
    branch_tip_in(&open_checkout(worktree)?, worktree, branch)
}

/// [`branch_tip`] with the worktree's repository open.
pub(crate) fn branch_tip_in(
    repo: &git2::Repository,
    worktree: &Path,
    branch: &str,
) -> Result<String, GitError> {
    let reference = repo
        .find_branch(branch, git2::BranchType::Local)
        .map_err(|_| GitError::BranchNotFound {
            branch: branch.to_string(),
        })?;
    let commit = reference
        .get()
        .peel_to_commit()
        .context(format_args!("read the tip of {branch}"), worktree)?;
    Ok(commit.id().to_string())
}

/// Saves everything in `worktree` that differs from `reviewed` — commits made on top of it and
/// uncommitted or untracked (not ignored) files — as one commit under a new ref
/// `<prefix>/<unix seconds>[-N]`, without touching the worktree. Returns the ref's name, or
/// `None` when there is nothing to save. An existing backup is never overwritten.
pub fn backup(
    worktree: &Path,
    reviewed: &str,
    prefix: &str,
    message: &str,
) -> Result<Option<String>, GitError> {
    let repo = open_checkout(worktree)?;
    let head = head_of(&repo, worktree)?;
    let reviewed_commit = find_commit(&repo, reviewed, worktree)?;
    // Nothing below uses the handle's index.
    let tree_id = state_tree_last(&repo, worktree)?;
    if head.id() == reviewed_commit.id() && tree_id == reviewed_commit.tree_id() {
        return Ok(None);
    }
    let tree = repo
        .find_tree(tree_id)
        .context("read the worktree's tree", worktree)?;
    let author = signature(&repo, worktree)?;
    let commit = repo
        .commit(None, &author, &author, message, &tree, &[&head])
        .context("save unreviewed work", worktree)?;
    save_under_new_ref(&repo, prefix, commit, message, worktree).map(Some)
}

/// Points a new ref `<prefix>/<unix seconds>[-N]` at `commit`; returns its name. Refs are
/// created without `force`, so two saves in one second get two names.
pub(crate) fn save_under_new_ref(
    repo: &git2::Repository,
    prefix: &str,
    commit: git2::Oid,
    message: &str,
    path: &Path,
) -> Result<String, GitError> {
    // Opened on the shared git directory: libgit2 (1.9) opened on a linked worktree checks a
    // new ref's existence in the worktree's own directory but writes it to the shared one, so
    // `force = false` would silently replace an existing backup.
    let repo = git2::Repository::open(repo.commondir())
        .context("open the repository", repo.commondir())?;
    let stamp = super::now_ms() / 1000;
    let mut n = 0u64;
    loop {
        let refname = match n {
            0 => format!("{prefix}/{stamp}"),
            n => format!("{prefix}/{stamp}-{n}"),
        };
        match repo.reference(&refname, commit, false, message) {
            Ok(_) => return Ok(refname),
            Err(e) if e.code() == git2::ErrorCode::Exists => n += 1,
            Err(e) => return Err(e).context(format_args!("create {refname}"), path),
        }
    }
}

/// Whether `path` (relative, `/`-separated) exists in the tree of `branch`'s tip.
pub fn path_in_branch(repo_root: &Path, branch: &str, path: &str) -> Result<bool, GitError> {
    let repo = open_checkout(repo_root)?;
    let tip = repo
        .find_branch(branch, git2::BranchType::Local)
        .map_err(|_| GitError::BranchNotFound {
            branch: branch.to_string(),
        })?
        .get()
        .peel_to_tree()
        .context(format_args!("read the tree of {branch}"), repo_root)?;
    Ok(tip.get_path(Path::new(path)).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{checkpoint, init_with_commit, Repo};

    fn task_worktree() -> (tempfile::TempDir, std::path::PathBuf, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let path = dir.path().join("wt");
        let info = repo.create_worktree("autobuild/T", "main", &path).unwrap();
        (dir, path, info.base_commit)
    }

    #[test]
    fn reattach_puts_a_switched_head_back_and_keeps_the_files() {
        let (_dir, wt, _) = task_worktree();
        assert_eq!(reattach(&wt, "autobuild/T").unwrap(), None);
        let repo = git2::Repository::open(&wt).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        repo.branch("evil", &head, false).unwrap();
        repo.set_head("refs/heads/evil").unwrap();
        std::fs::write(wt.join("a.txt"), "changed\n").unwrap();
        assert_eq!(
            reattach(&wt, "autobuild/T").unwrap(),
            Some("evil".to_string())
        );
        assert_eq!(
            repo.find_reference("HEAD")
                .unwrap()
                .symbolic_target()
                .unwrap(),
            Some("refs/heads/autobuild/T")
        );
        assert_eq!(
            std::fs::read_to_string(wt.join("a.txt")).unwrap(),
            "changed\n"
        );
    }

    #[test]
    fn backup_saves_commits_and_untracked_files_only_when_there_are_some() {
        let (dir, wt, base) = task_worktree();
        assert_eq!(
            backup(&wt, &base, "refs/autobuild/backup/T", "b").unwrap(),
            None
        );
        std::fs::write(wt.join("notes.md"), "mine\n").unwrap();
        let saved = backup(&wt, &base, "refs/autobuild/backup/T", "b")
            .unwrap()
            .unwrap();
        let repo = git2::Repository::open(dir.path()).unwrap();
        let commit = repo
            .find_reference(&saved)
            .unwrap()
            .peel_to_commit()
            .unwrap();
        assert!(commit
            .tree()
            .unwrap()
            .get_path(Path::new("notes.md"))
            .is_ok());
        assert!(wt.join("notes.md").exists(), "the worktree is untouched");
        let committed = checkpoint(&wt, "user commit").unwrap();
        let again = backup(&wt, &base, "refs/autobuild/backup/T", "b")
            .unwrap()
            .unwrap();
        assert_ne!(
            again, saved,
            "a second backup in the same second gets its own name"
        );
        assert_eq!(
            repo.find_reference(&saved)
                .unwrap()
                .peel_to_commit()
                .unwrap()
                .id(),
            commit.id(),
            "the first backup is kept"
        );
        assert_eq!(branch_tip(&wt, "autobuild/T").unwrap(), committed.commit);
        assert!(path_in_branch(dir.path(), "main", "a.txt").unwrap());
        assert!(!path_in_branch(dir.path(), "main", "notes.md").unwrap());
    }
}
