//! Commits never fail for lack of a git identity. This is its own test binary because hiding
//! the user's global git configuration changes libgit2's process-wide search paths.

use crate::git_fixture;

use autobuild::git::checkpoint;
use autobuild::git::Repo;
use git2::ConfigLevel;
use git_fixture::{write, Fixture};

#[test]
fn commits_use_the_repository_identity_else_autobuilds_own() {
    let no_config = tempfile::tempdir().unwrap();
    for level in [ConfigLevel::System, ConfigLevel::Global, ConfigLevel::XDG] {
        // SAFETY: this binary has a single test, so nothing else touches libgit2 concurrently.
        unsafe { git2::opts::set_search_path(level, no_config.path()) }.unwrap();
    }
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let worktree = fixture.worktree_path("TASK-1");
    Repo::discover(&fixture.root)
        .unwrap()
        .create_worktree("autobuild/TASK-1", "main", &worktree)
        .unwrap();

    write(&worktree, "a.txt", "anonymous\n");
    let anonymous = checkpoint(&worktree, "turn 1").unwrap();
    let git = fixture.git();
    let commit = git.find_commit(anonymous.commit.parse().unwrap()).unwrap();
    assert_eq!(commit.author().name().ok(), Some("autobuild"));
    assert_eq!(commit.author().email().ok(), Some("autobuild@localhost"));

    let mut config = git.config().unwrap();
    config.set_str("user.name", "Ada Lovelace").unwrap();
    config.set_str("user.email", "ada@example.com").unwrap();
    write(&worktree, "a.txt", "configured\n");
    let configured = checkpoint(&worktree, "turn 2").unwrap();
    let commit = git.find_commit(configured.commit.parse().unwrap()).unwrap();
    assert_eq!(commit.author().name().ok(), Some("Ada Lovelace"));
    assert_eq!(commit.committer().email().ok(), Some("ada@example.com"));
}
