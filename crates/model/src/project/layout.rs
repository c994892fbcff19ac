//! Where autobuild keeps its files in a repository (README.md): one struct that knows every
//! path, so no other module spells `.autobuild/...` itself.

use std::fs;
use std::path::{Path, PathBuf};

use base::error::Error;

/// The lines `.autobuild/.gitignore` must contain: run records and worktrees are local state.
pub const IGNORED_DIRS: [&str; 2] = ["runs/", "worktrees/"];

/// The paths of a repository's `.autobuild/` directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    root: PathBuf,
}

/// What [`Layout::ensure_gitignore`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitignoreUpdate {
    Created,
    /// The file existed; these lines were appended.
    Appended(Vec<String>),
    Unchanged,
}

impl Layout {
    pub fn new(repo_root: impl Into<PathBuf>) -> Layout {
        Layout {
            root: repo_root.into(),
        }
    }

    /// The repository root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `.autobuild/`
    pub fn dir(&self) -> PathBuf {
        self.root.join(".autobuild")
    }

    pub fn config(&self) -> PathBuf {
        self.dir().join("config.toml")
    }

    pub fn tasks(&self) -> PathBuf {
        self.dir().join("tasks")
    }

    pub fn features(&self) -> PathBuf {
        self.dir().join("features")
    }

    pub fn workflows(&self) -> PathBuf {
        self.dir().join("workflows")
    }

    pub fn prompts(&self) -> PathBuf {
        self.dir().join("prompts")
    }

    /// What a run takes its rules from: the config, the workflows, prompts and profiles, and
    /// the `command` agents' scripts (`.autobuild/agents/`). An unconfined agent's change there
    /// would change what the runner enforces, so the main-checkout guard puts it back.
    pub fn runner_inputs(&self) -> [PathBuf; 5] {
        [
            self.config(),
            self.workflows(),
            self.prompts(),
            self.dir().join("profiles"),
            self.dir().join("agents"),
        ]
    }

    pub fn runs(&self) -> PathBuf {
        self.dir().join("runs")
    }

    pub fn worktrees(&self) -> PathBuf {
        self.dir().join("worktrees")
    }

    pub fn gitignore(&self) -> PathBuf {
        self.dir().join(".gitignore")
    }

    /// `.autobuild/runs/<run_id>/`
    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.runs().join(run_id)
    }

    /// The repository root a run directory ([`Layout::run_dir`]) belongs to, when `run_dir` has
    /// that shape.
    pub fn root_of_run_dir(run_dir: &Path) -> Option<&Path> {
        let runs = run_dir.parent()?;
        let dir = runs.parent()?;
        let shaped = runs.file_name()? == "runs" && dir.file_name()? == ".autobuild";
        shaped.then(|| dir.parent()).flatten()
    }

    /// `.autobuild/worktrees/<task_id>/`
    pub fn worktree(&self, task_id: &str) -> PathBuf {
        self.worktrees().join(task_id)
    }

    /// `.autobuild/worktrees/.repos/<task_id>/`: the task repository of a run with hidden
    /// paths (module [`git::task_repo`]), ignored with the worktrees.
    pub fn task_repo(&self, task_id: &str) -> PathBuf {
        self.worktrees().join(".repos").join(task_id)
    }

    /// `path` relative to the repository root when it is inside it, for messages.
    pub fn display<'a>(&self, path: &'a Path) -> std::path::Display<'a> {
        path.strip_prefix(&self.root).unwrap_or(path).display()
    }

    /// Makes `.autobuild/.gitignore` ignore [`IGNORED_DIRS`]: creates it when absent, appends
    /// the missing lines when present. Lines a user wrote are never removed.
    pub fn ensure_gitignore(&self) -> Result<GitignoreUpdate, Error> {
        let path = self.gitignore();
        let existing = match base::user_file::read(&path, &path) {
            Ok(text) => Some(text),
            Err(base::user_file::ReadError::NotFound(_)) => None,
            Err(e) => return Err(e.into_error("cannot read", &path)),
        };
        let missing = missing_ignore_lines(existing.as_deref().unwrap_or(""));
        if missing.is_empty() {
            return Ok(GitignoreUpdate::Unchanged);
        }
        let mut text = existing.clone().unwrap_or_else(|| {
            "# Local autobuild state: run records and task worktrees.\n".to_string()
        });
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        for line in &missing {
            text.push_str(line);
            text.push('\n');
        }
        fs::create_dir_all(self.dir()).map_err(|e| Error::io("cannot create", self.dir(), e))?;
        fs::write(&path, text).map_err(|e| Error::io("cannot write", &path, e))?;
        Ok(match existing {
            None => GitignoreUpdate::Created,
            Some(_) => GitignoreUpdate::Appended(missing),
        })
    }
}

/// The [`IGNORED_DIRS`] that `gitignore` does not already ignore (`runs`, `/runs/` … count).
fn missing_ignore_lines(gitignore: &str) -> Vec<String> {
    IGNORED_DIRS
        .iter()
        .filter(|wanted| {
            let bare = wanted.trim_end_matches('/');
            !gitignore.lines().any(|line| {
                let line = line.trim();
                let line = line.strip_prefix('/').unwrap_or(line);
                line.trim_end_matches('/') == bare
            })
        })
        .map(|s| s.to_string())
        .collect()
}

/// The nearest directory at or above `start` that contains `.git` (a directory, or a file as
/// in linked worktrees and submodules).
pub fn find_repo_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_documented_layout() {
        let layout = Layout::new("/repo");
        assert_eq!(layout.config(), Path::new("/repo/.autobuild/config.toml"));
        assert_eq!(layout.tasks(), Path::new("/repo/.autobuild/tasks"));
        assert_eq!(layout.run_dir("R1"), Path::new("/repo/.autobuild/runs/R1"));
        assert_eq!(
            layout.worktree("T"),
            Path::new("/repo/.autobuild/worktrees/T")
        );
        assert_eq!(layout.gitignore(), Path::new("/repo/.autobuild/.gitignore"));
        assert_eq!(
            Layout::root_of_run_dir(&layout.run_dir("R1")),
            Some(Path::new("/repo"))
        );
        assert_eq!(Layout::root_of_run_dir(Path::new("/tmp/run")), None);
        assert_eq!(
            layout
                .display(Path::new("/repo/.autobuild/tasks/A.md"))
                .to_string(),
            ".autobuild/tasks/A.md"
        );
    }

    #[test]
    fn gitignore_is_created_then_completed_without_losing_user_lines() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        assert_eq!(layout.ensure_gitignore().unwrap(), GitignoreUpdate::Created);
        let text = fs::read_to_string(layout.gitignore()).unwrap();
        assert!(text.lines().any(|l| l == "runs/"));
        assert!(text.lines().any(|l| l == "worktrees/"));
        assert_eq!(
            layout.ensure_gitignore().unwrap(),
            GitignoreUpdate::Unchanged
        );

        fs::write(layout.gitignore(), "scratch/\n/runs").unwrap();
        assert_eq!(
            layout.ensure_gitignore().unwrap(),
            GitignoreUpdate::Appended(vec!["worktrees/".to_string()])
        );
        assert_eq!(
            fs::read_to_string(layout.gitignore()).unwrap(),
            "scratch/\n/runs\nworktrees/\n"
        );
    }

    #[test]
    fn repo_root_is_found_from_a_subdirectory_and_through_a_git_file() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("a/b");
        fs::create_dir_all(&nested).unwrap();
        assert_eq!(find_repo_root(&nested), None);
        fs::write(dir.path().join(".git"), "gitdir: elsewhere\n").unwrap();
        assert_eq!(find_repo_root(&nested), Some(dir.path().to_path_buf()));
        fs::create_dir(nested.join(".git")).unwrap();
        assert_eq!(find_repo_root(&nested), Some(nested.clone()));
    }
}
