//! The two things a feature landed from CI needs beyond the local repository: which task
//! commits a branch already holds (its first-parent history), and fetching a task's branch from
//! a remote.
//!
//! Fetching runs the `git` executable, unlike the rest of this layer: a CI checkout authenticates
//! through `http.extraheader` or a credential helper, which only git itself honours.

use std::path::Path;
use std::process::Command;

use git2::Sort;

use super::error::{Context, GitError};
use super::repo::Repo;

impl Repo {
    /// The messages of the commits on `branch`'s first-parent line, newest first.
    pub fn first_parent_messages(&self, branch: &str) -> Result<Vec<String>, GitError> {
        let tip = self.branch_tip(branch)?;
        let root = self.root().to_path_buf();
        let mut walk = self.repo.revwalk().context("walk the history", &root)?;
        walk.set_sorting(Sort::TOPOLOGICAL)
            .context("walk the history", &root)?;
        walk.simplify_first_parent()
            .context("walk the history", &root)?;
        walk.push(tip.id()).context("walk the history", &root)?;
        let mut messages = Vec::new();
        for oid in walk {
            let oid = oid.context(format_args!("walk the history of `{branch}`"), &root)?;
            let commit = self
                .repo
                .find_commit(oid)
                .context(format_args!("read commit {oid}"), &root)?;
            messages.push(commit.message().unwrap_or_default().to_string());
        }
        Ok(messages)
    }

    /// Fetches `branch` from `remote` into the local branch of the same name (replacing it).
    /// Returns whether the remote has the branch.
    pub fn fetch_branch(&self, remote: &str, branch: &str) -> Result<bool, GitError> {
        let refname = format!("refs/heads/{branch}");
        let listed = git(self.root(), &["ls-remote", "--heads", remote, &refname])?;
        if listed.trim().is_empty() {
            return Ok(false);
        }
        git(
            self.root(),
            &[
                "fetch",
                "--no-tags",
                "--quiet",
                remote,
                &format!("+{refname}:{refname}"),
            ],
        )?;
        Ok(true)
    }
}

/// Runs `git ARGS` in `dir`; its stdout, or the failure with git's own message.
fn git(dir: &Path, args: &[&str]) -> Result<String, GitError> {
    let action = format!("run `git {}`", args.join(" "));
    let output = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .context(&action, dir)?;
    if !output.status.success() {
        return Err(GitError::Io {
            action,
            path: dir.to_path_buf(),
            source: std::io::Error::other(
                String::from_utf8_lossy(&output.stderr).trim().to_string(),
            ),
        });
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}
