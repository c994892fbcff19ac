//! Merging an approved task branch into its base: strategies, conflicts, and the user's main
//! checkout, which is updated like `git merge` would and never loses local changes.

use crate::git_fixture;

use std::path::PathBuf;

use autobuild::git::{checkpoint, GitError, Repo};
use autobuild::workflow::model::MergeStrategy;
use git_fixture::{commit_all, dirty_paths, read, tree_files, write, Fixture};

const TASK: &str = "autobuild/TASK-1";

/// A repository with a task branch whose one checkpoint applies `changes` in its worktree.
fn with_task_changes(files: &[(&str, &str)], changes: &[(&str, &str)]) -> (Fixture, Repo, PathBuf) {
    let fixture = Fixture::new(files);
    let repo = Repo::discover(&fixture.root).unwrap();
    let worktree = fixture.worktree_path("TASK-1");
    repo.create_worktree(TASK, "main", &worktree).unwrap();
    for (path, content) in changes {
        write(&worktree, path, content);
    }
    checkpoint(&worktree, "autobuild: TASK-1 turn 1 (player)").unwrap();
    (fixture, repo, worktree)
}

#[test]
fn squash_into_the_checked_out_base_updates_the_main_checkout() {
    let (fixture, repo, _) = with_task_changes(
        &[("greet.py", "def greet():\n    pass\n")],
        &[
            (
                "greet.py",
                "def greet(name):\n    return f'Hello, {name}!'\n",
            ),
            ("test_greet.py", "assert greet('Ada') == 'Hello, Ada!'\n"),
        ],
    );
    let base_before = fixture.branch_tip("main");
    let task_tip = fixture.branch_tip(TASK);

    let outcome = repo
        .merge_into_base(TASK, "main", MergeStrategy::Squash, "TASK-1: Add greeting")
        .unwrap();

    assert!(!outcome.up_to_date);
    assert_eq!(outcome.strategy, MergeStrategy::Squash);
    let git = fixture.git();
    let merged = git.find_commit(fixture.branch_tip("main")).unwrap();
    assert_eq!(merged.id().to_string(), outcome.commit);
    assert_eq!(merged.parent_ids().collect::<Vec<_>>(), [base_before]);
    assert_eq!(merged.message().ok(), Some("TASK-1: Add greeting"));
    assert_eq!(
        merged.tree_id(),
        git.find_commit(task_tip).unwrap().tree_id()
    );
    assert_eq!(
        read(&fixture.root, "greet.py"),
        "def greet(name):\n    return f'Hello, {name}!'\n"
    );
    assert_eq!(
        read(&fixture.root, "test_greet.py"),
        "assert greet('Ada') == 'Hello, Ada!'\n"
    );
    assert!(dirty_paths(&fixture.root).is_empty());
    assert!(repo.is_merged(TASK, "main").unwrap());
}

#[test]
fn squash_and_merge_combine_with_a_base_that_moved_on() {
    for strategy in [MergeStrategy::Squash, MergeStrategy::Merge] {
        let (fixture, repo, _) = with_task_changes(
            &[("a.txt", "a\n"), ("b.txt", "b\n")],
            &[("a.txt", "a from task\n")],
        );
        write(&fixture.root, "b.txt", "b from main\n");
        let base_before = commit_all(&fixture.root, "main moved on");
        let task_tip = fixture.branch_tip(TASK);

        let outcome = repo
            .merge_into_base(TASK, "main", strategy, "TASK-1")
            .unwrap();

        let git = fixture.git();
        let merged = git.find_commit(fixture.branch_tip("main")).unwrap();
        assert_eq!(merged.id().to_string(), outcome.commit);
        let parents: Vec<_> = merged.parent_ids().collect();
        match strategy {
            MergeStrategy::Squash => assert_eq!(parents, [base_before]),
            _ => assert_eq!(parents, [base_before, task_tip]),
        }
        let files = tree_files(&fixture.root, &outcome.commit);
        assert!(
            files.contains(&("a.txt".into(), "a from task\n".into())),
            "{files:?}"
        );
        assert!(
            files.contains(&("b.txt".into(), "b from main\n".into())),
            "{files:?}"
        );
        assert_eq!(read(&fixture.root, "a.txt"), "a from task\n");
        assert!(dirty_paths(&fixture.root).is_empty());
    }
}

#[test]
fn merge_strategy_makes_a_merge_commit_even_when_fast_forward_is_possible() {
    let (fixture, repo, _) = with_task_changes(&[("a.txt", "a\n")], &[("a.txt", "b\n")]);
    let base_before = fixture.branch_tip("main");
    let task_tip = fixture.branch_tip(TASK);

    let outcome = repo
        .merge_into_base(TASK, "main", MergeStrategy::Merge, "TASK-1")
        .unwrap();

    let git = fixture.git();
    let merged = git.find_commit(outcome.commit.parse().unwrap()).unwrap();
    assert_eq!(
        merged.parent_ids().collect::<Vec<_>>(),
        [base_before, task_tip]
    );
}

#[test]
fn a_conflict_is_reported_with_its_paths_and_writes_nothing() {
    let (fixture, repo, _) = with_task_changes(
        &[("a.txt", "line\n"), ("b.txt", "b\n")],
        &[("a.txt", "task's line\n"), ("b.txt", "b from task\n")],
    );
    write(&fixture.root, "a.txt", "main's line\n");
    let base_before = commit_all(&fixture.root, "main edits the same line");

    for strategy in [MergeStrategy::Squash, MergeStrategy::Merge] {
        let error = repo
            .merge_into_base(TASK, "main", strategy, "TASK-1")
            .unwrap_err();

        assert!(
            matches!(&error, GitError::Conflict { paths, .. } if paths == &["a.txt"]),
            "{error:?}"
        );
        assert_eq!(fixture.branch_tip("main"), base_before);
        assert_eq!(read(&fixture.root, "a.txt"), "main's line\n");
        assert_eq!(read(&fixture.root, "b.txt"), "b\n");
        assert!(dirty_paths(&fixture.root).is_empty());
    }
}

#[test]
fn fast_forward_moves_the_base_or_is_refused_when_the_base_moved_on() {
    let (fixture, repo, _) = with_task_changes(&[("a.txt", "a\n")], &[("a.txt", "task\n")]);
    write(&fixture.root, "other.txt", "main\n");
    let base_before = commit_all(&fixture.root, "main moved on");

    let error = repo
        .merge_into_base(TASK, "main", MergeStrategy::Ff, "TASK-1")
        .unwrap_err();
    assert!(
        matches!(error, GitError::NotFastForward { .. }),
        "{error:?}"
    );
    assert_eq!(fixture.branch_tip("main"), base_before);

    let (fixture, repo, _) = with_task_changes(&[("a.txt", "a\n")], &[("a.txt", "task\n")]);
    let outcome = repo
        .merge_into_base(TASK, "main", MergeStrategy::Ff, "TASK-1")
        .unwrap();
    assert_eq!(fixture.branch_tip("main"), fixture.branch_tip(TASK));
    assert_eq!(outcome.commit, fixture.branch_tip(TASK).to_string());
    assert_eq!(read(&fixture.root, "a.txt"), "task\n");
}

#[test]
fn local_changes_in_files_the_merge_touches_refuse_the_merge_and_are_kept() {
    let (fixture, repo, _) = with_task_changes(
        &[("a.txt", "a\n"), ("b.txt", "b\n")],
        &[("a.txt", "task\n"), ("new.txt", "task adds\n")],
    );
    let base_before = fixture.branch_tip("main");
    write(&fixture.root, "a.txt", "my unsaved work\n");
    write(&fixture.root, "new.txt", "my own new file\n");

    let error = repo
        .merge_into_base(TASK, "main", MergeStrategy::Squash, "TASK-1")
        .unwrap_err();

    assert!(
        matches!(&error, GitError::DirtyCheckout { paths, .. } if paths == &["a.txt", "new.txt"]),
        "{error:?}"
    );
    assert_eq!(fixture.branch_tip("main"), base_before);
    assert_eq!(read(&fixture.root, "a.txt"), "my unsaved work\n");
    assert_eq!(read(&fixture.root, "new.txt"), "my own new file\n");
}

#[test]
fn staged_changes_in_files_the_merge_touches_refuse_the_merge() {
    let (fixture, repo, _) = with_task_changes(&[("a.txt", "a\n")], &[("a.txt", "task\n")]);
    write(&fixture.root, "a.txt", "staged by me\n");
    let git = fixture.git();
    let mut index = git.index().unwrap();
    index.add_path(std::path::Path::new("a.txt")).unwrap();
    index.write().unwrap();

    let error = repo
        .merge_into_base(TASK, "main", MergeStrategy::Squash, "TASK-1")
        .unwrap_err();

    assert!(matches!(error, GitError::DirtyCheckout { .. }), "{error:?}");
    assert_eq!(read(&fixture.root, "a.txt"), "staged by me\n");
}

#[test]
fn local_changes_elsewhere_survive_the_merge() {
    let (fixture, repo, _) = with_task_changes(
        &[("a.txt", "a\n"), ("b.txt", "b\n")],
        &[("a.txt", "task\n")],
    );
    write(&fixture.root, "b.txt", "my unsaved work\n");
    write(&fixture.root, "scratch.txt", "untracked\n");

    repo.merge_into_base(TASK, "main", MergeStrategy::Squash, "TASK-1")
        .unwrap();

    assert_eq!(read(&fixture.root, "a.txt"), "task\n");
    assert_eq!(read(&fixture.root, "b.txt"), "my unsaved work\n");
    assert_eq!(dirty_paths(&fixture.root), ["b.txt", "scratch.txt"]);
}

#[test]
fn a_base_that_is_not_checked_out_only_has_its_ref_moved() {
    let (fixture, repo, _) = with_task_changes(&[("a.txt", "a\n")], &[("a.txt", "task\n")]);
    let git = fixture.git();
    let main_tip = git.find_commit(fixture.branch_tip("main")).unwrap();
    git.branch("release", &main_tip, false).unwrap();

    let outcome = repo
        .merge_into_base(TASK, "release", MergeStrategy::Squash, "TASK-1")
        .unwrap();

    assert_eq!(fixture.branch_tip("release").to_string(), outcome.commit);
    assert_eq!(fixture.branch_tip("main"), main_tip.id());
    assert_eq!(read(&fixture.root, "a.txt"), "a\n");
    assert!(dirty_paths(&fixture.root).is_empty());
}

#[test]
fn merging_again_is_up_to_date_and_writes_nothing() {
    for strategy in [
        MergeStrategy::Squash,
        MergeStrategy::Merge,
        MergeStrategy::Ff,
    ] {
        let (fixture, repo, _) = with_task_changes(&[("a.txt", "a\n")], &[("a.txt", "task\n")]);
        let first = repo
            .merge_into_base(TASK, "main", strategy, "TASK-1")
            .unwrap();

        let second = repo
            .merge_into_base(TASK, "main", strategy, "TASK-1")
            .unwrap();

        assert!(second.up_to_date, "{strategy:?}");
        assert_eq!(second.commit, first.commit);
        assert_eq!(fixture.branch_tip("main").to_string(), first.commit);
    }
}
