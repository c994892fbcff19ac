//! The task repository of a run with hidden paths (`[scope] hidden`, README.md).
//!
//! Agents must not find hidden files anywhere, git included: a linked worktree of the user's
//! repository would give them its whole object store (every version of every hidden file, on
//! every branch). So a run with hidden paths works in a repository of its own,
//! `.autobuild/task-repos/<ID>`, whose only history is one parentless commit: the base tree
//! with the hidden paths removed. The task branch and its linked worktree live there, and the
//! runner's checkpoints, guards and audits work on it exactly as on the user's repository.
//!
//! The task repository's files beside its `.git` hold what the runner needs and the sandbox
//! never shows agents: `base` names the user's base commit the task started from and the
//! stripped commit made of it.
//!
//! When the work is approved, [`transplant`] applies the change the task branch made (the
//! stripped base against the approved commit) onto the user's base commit: the result's tree is
//! the real base tree with exactly the task's changes, hidden paths untouched (a change under a
//! hidden glob is never carried over; the scope check already refused it). That commit, on the
//! user's task branch `autobuild/<ID>`, is what the ordinary landing merges.

use std::fs;
use std::path::{Path, PathBuf};

use git2::{Delta, ObjectType, Oid, Repository, Tree, TreeWalkMode, TreeWalkResult};
use globset::GlobSet;

use super::error::{Context, GitError};
use super::repo::{signature, Repo};

impl Repo {
    /// Where the user's repository shows its content: the main checkout, the shared git
    /// directory and every linked worktree (what a run with hidden paths masks).
    pub fn hiding_places(&self) -> Vec<PathBuf> {
        let mut places = vec![self.root().to_path_buf(), self.git_dir().to_path_buf()];
        if let Ok(names) = self.repo.worktrees() {
            for name in names.iter() {
                let Ok(Some(name)) = name else { continue };
                if let Ok(worktree) = self.repo.find_worktree(name) {
                    places.push(worktree.path().to_path_buf());
                }
            }
        }
        places
    }
}

/// What the task repository was made from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskBase {
    /// The user's base commit.
    pub real: Oid,
    /// The task repository's stripped copy of it.
    pub stripped: Oid,
}

const BASE_FILE: &str = "base";
const HIDDEN_FILE: &str = "hidden";

/// The task repository of the worktree at `worktree` (`.autobuild/worktrees/.repos/<name>`
/// beside `.autobuild/worktrees/<name>`), when there is one.
pub fn of_worktree(worktree: &Path) -> Option<PathBuf> {
    let dir = worktree
        .parent()?
        .join(".repos")
        .join(worktree.file_name()?);
    dir.join(BASE_FILE).is_file().then_some(dir)
}

/// The hidden globs the task repository at `dir` was made without.
pub fn hidden_globs(dir: &Path) -> Result<GlobSet, GitError> {
    let file = dir.join(HIDDEN_FILE);
    let text = super::files::read_admin_file(&file).context("read", &file)?;
    let patterns: Vec<String> = text.lines().map(str::to_string).collect();
    base::pattern::set(&patterns).map_err(|why| GitError::Io {
        action: format!("read the hidden globs ({why}) in"),
        path: file.clone(),
        source: std::io::Error::other(why),
    })
}

/// Creates the task repository at `dir` (which must not exist): one commit, the tree of
/// `base_commit` in the repository at `user_repo` without the paths `hidden` matches, on branch
/// `base_branch`, checked out by nothing.
pub fn create_task_repo(
    user_repo: &Path,
    dir: &Path,
    base_commit: &str,
    base_branch: &str,
    patterns: &[String],
) -> Result<TaskBase, GitError> {
    let hidden = &base::pattern::set(patterns).map_err(|why| GitError::Io {
        action: format!("compile the hidden globs ({why}) for"),
        path: dir.to_path_buf(),
        source: std::io::Error::other(why),
    })?;
    let user = Repository::open(user_repo).context("open the repository", user_repo)?;
    let real = Oid::from_str(base_commit).context("read the base commit", user_repo)?;
    let commit = user
        .find_commit(real)
        .context("find the base commit", user_repo)?;
    let tree = commit.tree().context("read the base tree", user_repo)?;
    fs::create_dir_all(dir).context("create directory", dir)?;
    let task = Repository::init(dir).context("create the task repository", dir)?;
    let stripped_tree = copy_tree(&user, &task, &tree, "", hidden, dir)?;
    let stripped_tree = task
        .find_tree(stripped_tree)
        .context("read the stripped tree", dir)?;
    let author = signature(&task, dir)?;
    let message = format!(
        "autobuild: {base_branch} at {} without its hidden paths\n",
        &base_commit[..base_commit.len().min(10)]
    );
    let stripped = task
        .commit(None, &author, &author, &message, &stripped_tree, &[])
        .context("commit the stripped base", dir)?;
    let stripped_commit = task
        .find_commit(stripped)
        .context("find the stripped base", dir)?;
    task.branch(base_branch, &stripped_commit, true)
        .context(format_args!("create branch `{base_branch}`"), dir)?;
    task.set_head(&format!("refs/heads/{base_branch}"))
        .context("point HEAD at the base", dir)?;
    let base = TaskBase { real, stripped };
    let file = dir.join(HIDDEN_FILE);
    fs::write(&file, patterns.join("\n")).context("write", &file)?;
    // Written last: its presence says the task repository is complete.
    let file = dir.join(BASE_FILE);
    fs::write(&file, format!("{real} {stripped}\n")).context("write", &file)?;
    Ok(base)
}

/// What the task repository at `dir` was made from.
pub fn task_base(dir: &Path) -> Result<TaskBase, GitError> {
    let file = dir.join(BASE_FILE);
    let text = super::files::read_admin_file(&file).context("read", &file)?;
    let mut words = text.split_whitespace();
    let mut next = || {
        words
            .next()
            .and_then(|word| Oid::from_str(word).ok())
            .ok_or_else(|| GitError::CommitNotFound {
                commit: text.trim().to_string(),
                path: file.clone(),
            })
    };
    Ok(TaskBase {
        real: next()?,
        stripped: next()?,
    })
}

/// Copies `tree` of `from` into `to` without the entries `hidden` matches (paths relative to
/// the repository root, `prefix` being `tree`'s); returns the new tree's id.
fn copy_tree(
    from: &Repository,
    to: &Repository,
    tree: &Tree<'_>,
    prefix: &str,
    hidden: &GlobSet,
    dir: &Path,
) -> Result<Oid, GitError> {
    let mut builder = to.treebuilder(None).context("build a tree", dir)?;
    for entry in tree.iter() {
        let name = String::from_utf8_lossy(entry.name_bytes()).into_owned();
        let path = format!("{prefix}{name}");
        if hidden.is_match(&path) {
            continue;
        }
        let id = match entry.kind() {
            Some(ObjectType::Tree) => {
                let sub = from
                    .find_tree(entry.id())
                    .context(format_args!("read tree {path}"), dir)?;
                let copied = copy_tree(from, to, &sub, &format!("{path}/"), hidden, dir)?;
                let empty = to.find_tree(copied).is_ok_and(|t| t.is_empty());
                if empty {
                    continue;
                }
                copied
            }
            Some(ObjectType::Blob) => copy_blob(from, to, entry.id(), &path, dir)?,
            // A submodule's commit is named, not stored.
            _ => entry.id(),
        };
        builder
            .insert(entry.name_bytes(), id, entry.filemode())
            .context(format_args!("add {path}"), dir)?;
    }
    builder.write().context("write a tree", dir)
}

/// Copies blob `id` from `from` to `to`, checking its content hashes to its name.
fn copy_blob(
    from: &Repository,
    to: &Repository,
    id: Oid,
    path: &str,
    dir: &Path,
) -> Result<Oid, GitError> {
    let odb = from.odb().context("open the object store", dir)?;
    let object = odb
        .read(id)
        .context(format_args!("read {path} ({id})"), dir)?;
    let written = to
        .blob(object.data())
        .context(format_args!("copy {path}"), dir)?;
    if written != id {
        return Err(GitError::CommitNotFound {
            commit: format!("{id} (its content does not match its name)"),
            path: PathBuf::from(path),
        });
    }
    Ok(written)
}

/// Writes, in the user's repository at `user_repo`, the commit that applies what `approved`
/// (in the task repository of `worktree`) changed against `base.stripped` onto `base.real`,
/// and points `branch` at it; returns the commit. Changes to paths `hidden` matches are never
/// carried over, so the hidden files stay exactly as they are in the base.
pub fn transplant(
    user_repo: &Path,
    worktree: &Path,
    base: &TaskBase,
    approved: &str,
    branch: &str,
    hidden: &GlobSet,
) -> Result<String, GitError> {
    let commit = transplanted(user_repo, worktree, base, approved, hidden)?;
    let user = Repository::open(user_repo).context("open the repository", user_repo)?;
    let found = Oid::from_str(&commit)
        .and_then(|id| user.find_commit(id))
        .context("find the transplanted commit", user_repo)?;
    user.branch(branch, &found, true).context(
        format_args!("point branch `{branch}` at the work"),
        user_repo,
    )?;
    Ok(commit)
}

/// The commit [`transplant`] points its branch at, written to the user's repository but named
/// by no ref. The same inputs give the same commit (its author and committer are the approved
/// commit's), so a landing that is interrupted and tried again finds the commit it wrote.
pub fn transplanted(
    user_repo: &Path,
    worktree: &Path,
    base: &TaskBase,
    approved: &str,
    hidden: &GlobSet,
) -> Result<String, GitError> {
    let user = Repository::open(user_repo).context("open the repository", user_repo)?;
    let task = Repository::open(worktree).context("open the task repository", worktree)?;
    let approved = Oid::from_str(approved).context("read the approved commit", worktree)?;
    let approved = task
        .find_commit(approved)
        .context("find the approved commit", worktree)?;
    let after = approved
        .tree()
        .context("read the approved tree", worktree)?;
    let before = task
        .find_commit(base.stripped)
        .and_then(|c| c.tree())
        .context("read the stripped base", worktree)?;
    let diff = task
        .diff_tree_to_tree(Some(&before), Some(&after), None)
        .context("compare the task's work with its base", worktree)?;
    let real = user
        .find_commit(base.real)
        .context("find the base commit", user_repo)?;
    let real_tree = real.tree().context("read the base tree", user_repo)?;
    let mut update = git2::build::TreeUpdateBuilder::new();
    for delta in diff.deltas() {
        let file = delta.new_file();
        let Some(path) = file
            .path()
            .or_else(|| delta.old_file().path())
            .map(|p| p.to_string_lossy().into_owned())
        else {
            continue;
        };
        if hidden.is_match(&path) {
            continue;
        }
        match delta.status() {
            Delta::Deleted => {
                update.remove(&path);
            }
            _ => {
                let mode = file.mode();
                let id = if mode == git2::FileMode::Commit {
                    file.id()
                } else {
                    copy_blob(&task, &user, file.id(), &path, worktree)?
                };
                update.upsert(&path, id, mode);
            }
        }
    }
    let tree = update
        .create_updated(&user, &real_tree)
        .context("apply the task's work to the base tree", user_repo)?;
    let tree = user
        .find_tree(tree)
        .context("read the landed tree", user_repo)?;
    let message = approved.message().unwrap_or("autobuild: approved work");
    let commit = user
        .commit(
            None,
            &approved.author(),
            &approved.committer(),
            message,
            &tree,
            &[&real],
        )
        .context("commit the task's work onto the base", user_repo)?;
    Ok(commit.to_string())
}

/// Saves what the worktree of a task repository holds beyond `reviewed` (commits on top of it,
/// uncommitted or untracked files) in the user's repository, as [`transplant`] would land it,
/// under a new ref `<prefix>/<time>`: the task repository is removed once its work landed, and
/// what the user made there must not go with it. Returns the ref, or `None` when there is
/// nothing to save.
pub fn keep_unreviewed(
    user_repo: &Path,
    worktree: &Path,
    base: &TaskBase,
    reviewed: &str,
    prefix: &str,
    note: &str,
    hidden: &GlobSet,
) -> Result<Option<String>, GitError> {
    let Some(refname) = super::backup(worktree, reviewed, prefix, note)? else {
        return Ok(None);
    };
    let task = Repository::open(worktree).context("open the task repository", worktree)?;
    let saved = task
        .refname_to_id(&refname)
        .context(format_args!("read {refname}"), worktree)?;
    let commit = transplanted(user_repo, worktree, base, &saved.to_string(), hidden)?;
    let user = Repository::open(user_repo).context("open the repository", user_repo)?;
    let commit = Oid::from_str(&commit).context("read the saved commit", user_repo)?;
    super::integrity::save_under_new_ref(&user, prefix, commit, note, user_repo).map(Some)
}

/// Every path of `tree` in the user's repository at `user_repo` that `hidden` matches, with
/// its content, for the runner's hidden checks.
pub fn hidden_files(
    user_repo: &Path,
    commit: Oid,
    hidden: &GlobSet,
) -> Result<Vec<(String, Vec<u8>, bool)>, GitError> {
    let user = Repository::open(user_repo).context("open the repository", user_repo)?;
    let tree = user
        .find_commit(commit)
        .and_then(|c| c.tree())
        .context("read the base tree", user_repo)?;
    let mut found = Vec::new();
    let mut failure = None;
    let walked = tree.walk(TreeWalkMode::PreOrder, |prefix, entry| {
        if entry.kind() != Some(ObjectType::Blob) {
            return TreeWalkResult::Ok;
        }
        let path = format!("{prefix}{}", String::from_utf8_lossy(entry.name_bytes()));
        if !hidden.is_match(&path) {
            return TreeWalkResult::Ok;
        }
        match user.find_blob(entry.id()) {
            Ok(blob) => {
                let executable = entry.filemode() == i32::from(git2::FileMode::BlobExecutable);
                found.push((path, blob.content().to_vec(), executable));
                TreeWalkResult::Ok
            }
            Err(e) => {
                failure = Some((path, e));
                TreeWalkResult::Abort
            }
        }
    });
    if let Some((path, e)) = failure {
        return Err(e).context(format_args!("read hidden file {path}"), user_repo);
    }
    walked.context("list the hidden files", user_repo)?;
    Ok(found)
}

#[cfg(test)]
mod tests;
