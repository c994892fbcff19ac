//! Holding a runner branch at the tip the runner recorded for it, before anything lands from
//! it or onto it: "only what the gate approved lands" needs the branch to be exactly the
//! recorded commit, not whatever an agent or a push left there. A branch elsewhere is put back
//! to the recorded tip, and what it pointed at is kept under a new backup ref.

use git2::Oid;

use super::error::{Context, GitError};
use super::integrity::save_under_new_ref;
use super::repo::Repo;
use crate::short_id as short;

/// What holding a branch at its recorded tip found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// It was there.
    AtTip,
    /// It was behind it (a landing recorded its tip and was stopped before the branch moved):
    /// moved forward, nothing lost.
    MovedForward,
    /// It was elsewhere: put back, what it pointed at kept as `kept_as`.
    PutBack { moved_to: String, kept_as: String },
}

impl Held {
    /// A line for the record when the branch had been moved by someone else, or `None`.
    pub fn violation(&self, branch: &str, tip: &str) -> Option<String> {
        match self {
            Held::AtTip | Held::MovedForward => None,
            Held::PutBack { moved_to, kept_as } => Some(format!(
                "{branch} was moved to {} instead of the recorded {}; put back, the moved version kept as {kept_as}",
                short(moved_to),
                short(tip)
            )),
        }
    }
}

impl Repo {
    /// Makes `branch` point at `tip` (hex); a version of the branch that is not an ancestor of
    /// `tip` is kept under `<backup_prefix>/<time>` first.
    pub fn hold_branch(
        &self,
        branch: &str,
        tip: &str,
        backup_prefix: &str,
    ) -> Result<Held, GitError> {
        let refname = format!("refs/heads/{branch}");
        let wanted =
            Oid::from_str(tip).context(format_args!("read commit id {tip}"), self.root())?;
        self.repo.find_commit(wanted).context(
            format_args!("read the recorded tip {tip} of {branch}"),
            self.root(),
        )?;
        let current = self.branch_tip(branch)?.id();
        if current == wanted {
            return Ok(Held::AtTip);
        }
        let behind = self
            .repo
            .graph_descendant_of(wanted, current)
            .context("compare branch histories", self.root())?;
        let held = if behind {
            Held::MovedForward
        } else {
            let kept_as = save_under_new_ref(
                &self.repo,
                backup_prefix,
                current,
                &format!("autobuild: {branch} as it was moved, instead of the recorded {tip}"),
                self.root(),
            )?;
            Held::PutBack {
                moved_to: current.to_string(),
                kept_as,
            }
        };
        self.repo
            .reference_matching(
                &refname,
                wanted,
                true,
                current,
                "autobuild: put back to the recorded tip",
            )
            .context(format_args!("put {branch} back to {tip}"), self.root())?;
        tracing::debug!(branch, tip, ?held, "held a branch at its recorded tip");
        Ok(held)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{checkpoint, init_with_commit};

    #[test]
    fn a_branch_is_put_back_to_its_recorded_tip_and_the_moved_version_kept() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
        init_with_commit(dir.path(), "main", "first").unwrap();
        let repo = Repo::discover(dir.path()).unwrap();
        let first = repo.resolve_branch("main").unwrap();
        repo.create_branch("autobuild/F", "main").unwrap();
        std::fs::write(dir.path().join("b.txt"), "b\n").unwrap();
        let second = checkpoint(dir.path(), "second").unwrap().commit;
        let git = git2::Repository::open(dir.path()).unwrap();
        let set = |to: &str| {
            git.reference(
                "refs/heads/autobuild/F",
                Oid::from_str(to).unwrap(),
                true,
                "test",
            )
            .unwrap();
        };

        assert_eq!(
            repo.hold_branch("autobuild/F", &first, "refs/autobuild/backup/F")
                .unwrap(),
            Held::AtTip
        );
        assert_eq!(
            repo.hold_branch("autobuild/F", &second, "refs/autobuild/backup/F")
                .unwrap(),
            Held::MovedForward
        );
        set(&first);
        std::fs::write(dir.path().join("c.txt"), "c\n").unwrap();
        let elsewhere = checkpoint(dir.path(), "third").unwrap().commit;
        set(&elsewhere);
        let held = repo
            .hold_branch("autobuild/F", &first, "refs/autobuild/backup/F")
            .unwrap();

        let Held::PutBack { moved_to, kept_as } = &held else {
            panic!("{held:?}")
        };
        assert_eq!(moved_to, &elsewhere);
        assert_eq!(repo.resolve_branch("autobuild/F").unwrap(), first);
        assert_eq!(git.refname_to_id(kept_as).unwrap().to_string(), elsewhere);
        assert!(held.violation("autobuild/F", &first).is_some());
    }
}
