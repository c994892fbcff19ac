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

    /// The URL `remote` fetches from; `None` when the repository has no such remote.
    pub fn remote_url(&self, remote: &str) -> Result<Option<String>, GitError> {
        let listed = git(self.root(), &["remote"])?;
        if !listed.lines().any(|name| name.trim() == remote) {
            return Ok(None);
        }
        let url = git(self.root(), &["remote", "get-url", remote])?;
        Ok(Some(url.trim().to_string()))
    }

    /// The commit `branch` points at on `remote`; `None` when the remote has no such branch.
    pub fn remote_branch_tip(
        &self,
        remote: &str,
        branch: &str,
    ) -> Result<Option<String>, GitError> {
        let refname = format!("refs/heads/{branch}");
        let listed = git(self.root(), &["ls-remote", "--heads", remote, &refname])?;
        Ok(listed
            .lines()
            .find_map(|line| line.split_once('\t').filter(|(_, name)| *name == refname))
            .map(|(oid, _)| oid.to_string()))
    }

    /// Pushes `commit` to `remote` as `branch`, only while the remote's branch is at
    /// `expected` (`None`: only while it does not exist), so commits someone else pushed there
    /// are never overwritten. The repository's hooks are not run: they are files an agent
    /// could have written (the runner's own landing runs none either).
    pub fn push_commit(
        &self,
        remote: &str,
        commit: &str,
        branch: &str,
        expected: Option<&str>,
    ) -> Result<(), GitError> {
        let refname = format!("refs/heads/{branch}");
        let lease = format!("--force-with-lease={refname}:{}", expected.unwrap_or(""));
        git(
            self.root(),
            &[
                "push",
                "--quiet",
                "--no-verify",
                "--porcelain",
                &lease,
                remote,
                &format!("{commit}:{refname}"),
            ],
        )
        .map(|_| ())
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
