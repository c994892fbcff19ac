//! Which files a landing would bring a given string into: the check that keeps the value of a
//! secret-named variable an agent wrote into a file from being merged unnoticed. A file counts
//! when its landed content contains the string and its content on the base did not (a value
//! the user already committed is the user's business).

use git2::{Delta, Oid};

use super::error::{Context, GitError};
use super::landing::Landing;
use super::repo::Repo;

impl Repo {
    /// The paths (sorted) whose content at `landing.to` contains one of `needles` that their
    /// content at `landing.from` did not. Nothing to read when `needles` is empty.
    pub fn paths_gaining(
        &self,
        landing: &Landing,
        needles: &[String],
    ) -> Result<Vec<String>, GitError> {
        if needles.is_empty() {
            return Ok(Vec::new());
        }
        let from = self.tree_of(&landing.from)?;
        let to = self.tree_of(&landing.to)?;
        let diff = self
            .repo
            .diff_tree_to_tree(Some(&from), Some(&to), None)
            .context("diff the landing", self.root())?;
        let mut found = Vec::new();
        for delta in diff.deltas() {
            if !matches!(
                delta.status(),
                Delta::Added | Delta::Modified | Delta::Renamed | Delta::Copied | Delta::Typechange
            ) {
                continue;
            }
            let new = delta.new_file();
            let before = match delta.status() {
                Delta::Added => None,
                _ => Some(delta.old_file().id()),
            };
            let gained = needles.iter().any(|needle| {
                self.blob_contains(new.id(), needle)
                    && !before.is_some_and(|old| self.blob_contains(old, needle))
            });
            if gained {
                if let Some(path) = new.path() {
                    found.push(path.to_string_lossy().replace('\\', "/"));
                }
            }
        }
        found.sort();
        found.dedup();
        Ok(found)
    }

    fn blob_contains(&self, id: Oid, needle: &str) -> bool {
        let needle = needle.as_bytes();
        self.repo.find_blob(id).is_ok_and(|blob| {
            !needle.is_empty()
                && blob
                    .content()
                    .windows(needle.len())
                    .any(|window| window == needle)
        })
    }
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::MergeStrategy;

    use testkit::git;

    #[test]
    fn only_files_that_gain_the_value_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q", "-b", "main"]);
        std::fs::write(root.join("old.txt"), "token s3cr3t-value here\n").unwrap();
        std::fs::write(root.join("plain.txt"), "nothing\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "base"]);
        let from = git(root, &["rev-parse", "HEAD"]);
        std::fs::write(root.join("old.txt"), "token s3cr3t-value still\n").unwrap();
        std::fs::write(root.join("plain.txt"), "now s3cr3t-value\n").unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::write(root.join("src/new.rs"), "// s3cr3t-value\n").unwrap();
        std::fs::write(root.join("clean.txt"), "clean\n").unwrap();
        git(root, &["add", "-A"]);
        git(root, &["commit", "-q", "-m", "work"]);
        let to = git(root, &["rev-parse", "HEAD"]);
        let repo = Repo::discover(root).unwrap();
        let landing = Landing {
            branch: "main".into(),
            from,
            to,
            strategy: MergeStrategy::Squash,
        };
        let found = repo
            .paths_gaining(&landing, &["s3cr3t-value".to_string()])
            .unwrap();
        assert_eq!(found, ["plain.txt", "src/new.rs"]);
        assert!(repo.paths_gaining(&landing, &[]).unwrap().is_empty());
    }
}
