//! Task worktrees and branches: creation from the base, refusals, reopening for resume,
//! removal and branch deletion that never loses unmerged work.

use crate::git_fixture;

use std::time::Instant;

use crate::support;
use autobuild::git::{checkpoint, GitError, Repo};
use autobuild::workflow::model::MergeStrategy;
use git_fixture::{read, write, Fixture};

#[test]
fn create_worktree_branches_from_the_base_tip_and_checks_it_out() {
    let fixture = Fixture::new(&[("src/lib.rs", "fn main() {}\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");

    let info = repo
        .create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();

    assert_eq!(info.path, path);
    assert_eq!(info.branch, "autobuild/TASK-1");
    assert_eq!(info.base, "main");
    assert_eq!(info.base_commit, fixture.branch_tip("main").to_string());
    assert_eq!(
        fixture.branch_tip("autobuild/TASK-1"),
        fixture.branch_tip("main")
    );
    assert_eq!(read(&path, "src/lib.rs"), "fn main() {}\n");
    let opened = repo.open_worktree(&path, "autobuild/TASK-1").unwrap();
    assert_eq!(opened.head, info.base_commit);
    assert_eq!(repo.current_branch().as_deref(), Some("main"));
}

#[test]
fn discover_from_inside_a_worktree_finds_the_main_checkout() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();

    let from_worktree = Repo::discover(&path).unwrap();

    assert_eq!(
        from_worktree.root().canonicalize().unwrap(),
        fixture.root.canonicalize().unwrap()
    );
    assert_eq!(from_worktree.current_branch().as_deref(), Some("main"));
}

#[test]
fn create_worktree_refuses_an_existing_branch_and_creates_nothing() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let git = fixture.git();
    let head = git.head().unwrap().peel_to_commit().unwrap();
    git.branch("autobuild/TASK-1", &head, false).unwrap();
    let path = fixture.worktree_path("TASK-1");

    let error = repo
        .create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap_err();

    assert!(
        matches!(&error, GitError::BranchExists { branch } if branch == "autobuild/TASK-1"),
        "{error:?}"
    );
    assert!(!path.exists());
    assert!(fixture.git().worktrees().unwrap().is_empty());
}

#[test]
fn create_worktree_with_a_missing_base_names_the_base_and_creates_nothing() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();

    let error = repo
        .create_worktree(
            "autobuild/TASK-1",
            "develop",
            &fixture.worktree_path("TASK-1"),
        )
        .unwrap_err();

    assert_eq!(error.to_string(), "base branch `develop` not found");
    assert!(!repo.branch_exists("autobuild/TASK-1"));
    assert!(matches!(
        repo.resolve_base("develop"),
        Err(GitError::BaseBranchNotFound { .. })
    ));
}

#[test]
fn create_worktree_refuses_an_occupied_directory() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    write(&path, "notes.txt", "mine\n");

    let error = repo
        .create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap_err();

    assert!(
        matches!(error, GitError::WorktreePathExists { .. }),
        "{error:?}"
    );
    assert_eq!(read(&path, "notes.txt"), "mine\n");
    assert!(!repo.branch_exists("autobuild/TASK-1"));
}

#[test]
fn open_worktree_checks_the_branch_and_the_repository() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();

    let wrong = repo.open_worktree(&path, "autobuild/TASK-2").unwrap_err();
    assert!(
        matches!(&wrong, GitError::WrongBranch { actual: Some(actual), .. } if actual == "autobuild/TASK-1"),
        "{wrong:?}"
    );

    let elsewhere = tempfile::tempdir().unwrap();
    let not_ours = repo
        .open_worktree(elsewhere.path(), "autobuild/TASK-1")
        .unwrap_err();
    assert!(
        matches!(not_ours, GitError::NotAWorktree { .. }),
        "{not_ours:?}"
    );
}

#[test]
fn worktree_names_with_the_same_directory_name_do_not_collide() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let first = fixture.root.join("one/TASK-1");
    let second = fixture.root.join("two/TASK-1");

    repo.create_worktree("autobuild/one", "main", &first)
        .unwrap();
    repo.create_worktree("autobuild/two", "main", &second)
        .unwrap();

    assert_eq!(fixture.git().worktrees().unwrap().len(), 2);
    assert!(repo.open_worktree(&second, "autobuild/two").is_ok());
}

#[test]
fn remove_worktree_then_delete_the_merged_branch() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();
    write(&path, "b.txt", "b\n");
    checkpoint(&path, "autobuild: TASK-1 turn 1 (player)").unwrap();
    repo.merge_into_base("autobuild/TASK-1", "main", MergeStrategy::Squash, "TASK-1")
        .unwrap();

    repo.remove_worktree(&path, "autobuild/TASK-1").unwrap();
    repo.delete_branch("autobuild/TASK-1", "main", false)
        .unwrap();

    assert!(!path.exists());
    assert!(fixture.git().worktrees().unwrap().is_empty());
    assert!(!repo.branch_exists("autobuild/TASK-1"));
}

#[test]
fn delete_branch_refuses_unmerged_work_unless_forced() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();
    write(&path, "b.txt", "b\n");
    checkpoint(&path, "turn 1").unwrap();
    repo.remove_worktree(&path, "autobuild/TASK-1").unwrap();

    let error = repo
        .delete_branch("autobuild/TASK-1", "main", false)
        .unwrap_err();

    assert!(
        matches!(error, GitError::Unmerged { commits: 1, .. }),
        "{error:?}"
    );
    assert!(repo.branch_exists("autobuild/TASK-1"));
    assert!(!repo.is_merged("autobuild/TASK-1", "main").unwrap());
    assert_eq!(repo.commits_ahead("autobuild/TASK-1", "main").unwrap(), 1);

    repo.delete_branch("autobuild/TASK-1", "main", true)
        .unwrap();
    assert!(!repo.branch_exists("autobuild/TASK-1"));
}

#[test]
fn remove_worktree_prunes_a_worktree_whose_directory_was_deleted_by_hand() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();
    std::fs::remove_dir_all(&path).unwrap();

    repo.remove_worktree(&path, "autobuild/TASK-1").unwrap();

    assert!(fixture.git().worktrees().unwrap().is_empty());
    repo.delete_branch("autobuild/TASK-1", "main", false)
        .unwrap();
}

#[test]
fn remove_worktree_never_deletes_a_directory_that_is_not_a_worktree() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.root.join("precious");
    write(&path, "data.txt", "keep\n");

    let error = repo.remove_worktree(&path, "autobuild/TASK-1").unwrap_err();

    assert!(matches!(error, GitError::NotAWorktree { .. }), "{error:?}");
    assert_eq!(read(&path, "data.txt"), "keep\n");
}

#[test]
fn current_branch_is_none_when_detached() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let git = fixture.git();
    git.set_head_detached(fixture.branch_tip("main")).unwrap();

    let repo = Repo::discover(&fixture.root).unwrap();

    assert_eq!(repo.current_branch(), None);
    assert!(repo.resolve_branch("main").is_ok());
}

/// Performance target: ≤ 1.5 s for a repository of 10,000 files on a 2-core machine.
/// `cargo test --test suite git_worktree:: -- --ignored --nocapture` prints the figure.
#[test]
#[ignore]
fn create_worktree_of_ten_thousand_files_timing() {
    let fixture = Fixture::new(&[]);
    for dir in 0..100 {
        for file in 0..100 {
            write(
                &fixture.root,
                &format!("src/d{dir:03}/f{file:03}.txt"),
                &format!("file {dir} {file}\n").repeat(20),
            );
        }
    }
    git_fixture::commit_all(&fixture.root, "10k files");
    let repo = Repo::discover(&fixture.root).unwrap();

    let started = Instant::now();
    repo.create_worktree("autobuild/BIG", "main", &fixture.worktree_path("BIG"))
        .unwrap();
    let elapsed = started.elapsed();

    println!("create_worktree with 10,000 files: {elapsed:?}");
    assert!(elapsed.as_secs_f64() <= 1.5, "took {elapsed:?}");
}

/// The runner writes a worktree's record itself (libgit2's add opens every other worktree's
/// repository): git's own commands must see exactly what `git worktree add` would have made.
#[test]
fn a_worktree_the_runner_adds_is_one_git_itself_knows() {
    let fixture = Fixture::new(&[("src/lib.rs", "fn main() {}\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();

    let listed = support::git(&fixture.root, &["worktree", "list", "--porcelain"]);
    let real = path.canonicalize().unwrap();
    assert!(
        listed.contains(&format!(
            "worktree {}\nHEAD {}\nbranch refs/heads/autobuild/TASK-1\n",
            real.display(),
            fixture.branch_tip("main")
        )),
        "{listed}"
    );
    assert_eq!(support::git(&path, &["status", "--porcelain"]), "");
    assert_eq!(
        support::git(&path, &["rev-parse", "--git-common-dir"]).trim(),
        fixture
            .root
            .join(".git")
            .canonicalize()
            .unwrap()
            .display()
            .to_string()
    );
    // And git removes it as one of its own.
    support::git(
        &fixture.root,
        &["worktree", "remove", real.to_str().unwrap()],
    );
    assert!(!path.exists());
}

/// A branch some worktree's HEAD names is refused, even before it has a commit, and the
/// failed start leaves nothing behind.
#[test]
fn create_worktree_refuses_a_branch_another_worktree_has_checked_out() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let other = fixture.worktree_path("OTHER");
    repo.create_worktree("autobuild/OTHER", "main", &other)
        .unwrap();
    support::git(
        &other,
        &["symbolic-ref", "HEAD", "refs/heads/autobuild/TASK-2"],
    );
    let path = fixture.worktree_path("TASK-2");

    let error = repo
        .create_worktree("autobuild/TASK-2", "main", &path)
        .unwrap_err();

    assert!(
        matches!(&error, GitError::CheckedOut { path: at, .. } if at == &other),
        "{error:?}"
    );
    assert!(!repo.branch_exists("autobuild/TASK-2"));
    assert!(!path.exists());
    assert_eq!(fixture.git().worktrees().unwrap().len(), 1);
}

/// An empty directory where the worktree goes is used; one that is a link to an empty
/// directory is not written through.
#[test]
fn create_worktree_takes_an_empty_directory_but_not_a_link_to_one() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    std::fs::create_dir_all(&path).unwrap();
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();
    assert_eq!(read(&path, "a.txt"), "a\n");

    let elsewhere = fixture.root.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let linked = fixture.worktree_path("TASK-2");
    std::os::unix::fs::symlink(&elsewhere, &linked).unwrap();
    let error = repo
        .create_worktree("autobuild/TASK-2", "main", &linked)
        .unwrap_err();
    assert!(
        matches!(error, GitError::WorktreePathExists { .. }),
        "{error:?}"
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    assert!(!repo.branch_exists("autobuild/TASK-2"));
    assert_eq!(fixture.git().worktrees().unwrap().len(), 1);
}

/// A branch checked out in a worktree is not deleted, even forced; once it is not, deleting
/// it drops its own `branch.<name>.*` settings and no other branch's.
#[test]
fn delete_branch_refuses_a_checked_out_branch_and_drops_its_settings() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();

    let error = repo
        .delete_branch("autobuild/TASK-1", "main", true)
        .unwrap_err();
    assert!(
        matches!(&error, GitError::CheckedOut { path: at, .. } if at == &path),
        "{error:?}"
    );
    let error = repo.delete_branch("main", "main", true).unwrap_err();
    assert!(matches!(error, GitError::CheckedOut { .. }), "{error:?}");
    assert!(repo.branch_exists("autobuild/TASK-1"));

    repo.remove_worktree(&path, "autobuild/TASK-1").unwrap();
    let config = |args: &[&str]| {
        let mut all = vec!["config"];
        all.extend_from_slice(args);
        support::git(&fixture.root, &all)
    };
    config(&["branch.autobuild/TASK-1.remote", "origin"]);
    config(&["--add", "branch.autobuild/TASK-1.push", "a"]);
    config(&["--add", "branch.autobuild/TASK-1.push", "b"]);
    config(&["branch.autobuild/TASK-10.remote", "origin"]);
    repo.delete_branch("autobuild/TASK-1", "main", true)
        .unwrap();

    assert!(!repo.branch_exists("autobuild/TASK-1"));
    let left = config(&["--list", "--local"]);
    assert!(!left.contains("branch.autobuild/TASK-1."), "{left}");
    assert!(
        left.contains("branch.autobuild/TASK-10.remote=origin"),
        "{left}"
    );
}

/// git 2.48 can record a worktree by relative paths (`worktree.useRelativePaths`), and a
/// record need not be named after its directory: such a worktree is still found by its path
/// and removed with its record.
#[test]
fn a_worktree_recorded_by_relative_paths_under_another_name_is_found_and_removed() {
    let fixture = Fixture::new(&[("a.txt", "a\n")]);
    let repo = Repo::discover(&fixture.root).unwrap();
    let path = fixture.worktree_path("TASK-1");
    repo.create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();
    let records = fixture.root.join(".git/worktrees");
    std::fs::rename(records.join("TASK-1"), records.join("renamed")).unwrap();
    std::fs::write(
        path.join(".git"),
        "gitdir: ../../../.git/worktrees/renamed\n",
    )
    .unwrap();
    std::fs::write(
        records.join("renamed/gitdir"),
        "../../../.autobuild/worktrees/TASK-1/.git\n",
    )
    .unwrap();
    assert_eq!(
        support::git(&path, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(),
        "autobuild/TASK-1"
    );

    let admin = repo.worktree_admin(&path, "autobuild/OTHER").unwrap();
    assert_eq!(
        admin.map(|dir| dir.canonicalize().unwrap()),
        Some(records.join("renamed").canonicalize().unwrap())
    );
    repo.remove_worktree(&path, "autobuild/TASK-1").unwrap();
    assert!(!path.exists());
    assert!(!records.join("renamed").exists());
}
