//! Temporary git repositories for the git layer's integration tests: each test gets its own
//! repository on branch `main` with one initial commit, built with git2.

#![allow(dead_code)] // each test binary uses a different subset

use std::fs;
use std::path::{Path, PathBuf};

use git2::{IndexAddOption, Oid, Repository, RepositoryInitOptions, Signature};
use tempfile::TempDir;

pub struct Fixture {
    _dir: TempDir,
    pub root: PathBuf,
}

impl Fixture {
    /// A repository on `main` whose first commit holds `files` and, as in every autobuild
    /// project, `.autobuild/.gitignore` ignoring run state and worktrees.
    pub fn new(files: &[(&str, &str)]) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("project");
        let mut options = RepositoryInitOptions::new();
        options.initial_head("main");
        Repository::init_opts(&root, &options).unwrap();
        write(&root, ".autobuild/.gitignore", "runs/\nworktrees/\n");
        for (path, content) in files {
            write(&root, path, content);
        }
        commit_all(&root, "initial");
        Fixture { _dir: dir, root }
    }

    /// Where the runner puts the worktree of task `id`.
    pub fn worktree_path(&self, id: &str) -> PathBuf {
        self.root.join(".autobuild/worktrees").join(id)
    }

    pub fn git(&self) -> Repository {
        Repository::open(&self.root).unwrap()
    }

    pub fn branch_tip(&self, branch: &str) -> Oid {
        self.git()
            .find_branch(branch, git2::BranchType::Local)
            .unwrap()
            .get()
            .target()
            .unwrap()
    }
}

pub fn write(root: &Path, path: &str, content: &str) {
    let file = root.join(path);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, content).unwrap();
}

pub fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap()
}

/// `git add -A && git commit` in the checkout at `root`, independent of the code under test.
pub fn commit_all(root: &Path, message: &str) -> Oid {
    let repo = Repository::open(root).unwrap();
    let mut index = repo.index().unwrap();
    index.add_all(["*"], IndexAddOption::DEFAULT, None).unwrap();
    index.update_all(["*"], None).unwrap();
    index.write().unwrap();
    let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
    let signature = Signature::now("Test", "test@example.com").unwrap();
    let parent = repo.head().ok().and_then(|head| head.peel_to_commit().ok());
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &parents,
    )
    .unwrap()
}

/// Files in the commit's tree, with their contents.
pub fn tree_files(root: &Path, commit: &str) -> Vec<(String, String)> {
    let repo = Repository::open(root).unwrap();
    let tree = repo
        .revparse_single(commit)
        .unwrap()
        .peel_to_tree()
        .unwrap();
    let mut files = Vec::new();
    tree.walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
        if let Some(git2::ObjectType::Blob) = entry.kind() {
            let blob = repo.find_blob(entry.id()).unwrap();
            files.push((
                format!("{dir}{}", entry.name().unwrap()),
                String::from_utf8_lossy(blob.content()).into_owned(),
            ));
        }
        git2::TreeWalkResult::Ok
    })
    .unwrap();
    files.sort();
    files
}

/// Paths with uncommitted changes (staged, unstaged or untracked) in the checkout at `root`.
pub fn dirty_paths(root: &Path) -> Vec<String> {
    let repo = Repository::open(root).unwrap();
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true).recurse_untracked_dirs(true);
    let statuses = repo.statuses(Some(&mut options)).unwrap();
    let mut paths: Vec<String> = statuses
        .iter()
        .map(|entry| entry.path().unwrap().to_string())
        .collect();
    paths.sort();
    paths
}
