//! Checkpoints, state tree hashes, the audit-and-restore after read-only steps, and diffs.

use crate::git_fixture;

use std::fs;
use std::path::PathBuf;

use autobuild::git::{
    changed_files_since, checkpoint, diff_stat, head_commit, restore, worktree_state_tree,
    ChangeStatus, Repo,
};
use git_fixture::{commit_all, read, tree_files, write, Fixture};

/// A fixture with a task worktree, returned with the worktree's path.
fn task_worktree(files: &[(&str, &str)]) -> (Fixture, PathBuf) {
    let fixture = Fixture::new(files);
    let path = fixture.worktree_path("TASK-1");
    Repo::discover(&fixture.root)
        .unwrap()
        .create_worktree("autobuild/TASK-1", "main", &path)
        .unwrap();
    (fixture, path)
}

#[test]
fn checkpoint_commits_new_modified_and_deleted_files_but_not_ignored_ones() {
    let (fixture, worktree) = task_worktree(&[
        (".gitignore", "target/\n*.log\n"),
        ("keep.txt", "keep\n"),
        ("edit.txt", "old\n"),
        ("gone.txt", "bye\n"),
    ]);
    write(&worktree, "edit.txt", "new\n");
    fs::remove_file(worktree.join("gone.txt")).unwrap();
    write(&worktree, "src/new.rs", "pub fn f() {}\n");
    write(&worktree, ".env.example", "A=1\n");
    write(&worktree, "target/debug/out", "binary\n");
    write(&worktree, "run.log", "noise\n");
    let before = head_commit(&worktree).unwrap();

    let result = checkpoint(&worktree, "autobuild: TASK-1 turn 1 (player)").unwrap();

    assert!(result.changed);
    assert_ne!(result.commit, before);
    assert_eq!(head_commit(&worktree).unwrap(), result.commit);
    assert_eq!(
        fixture.branch_tip("autobuild/TASK-1").to_string(),
        result.commit
    );
    let files: Vec<String> = tree_files(&worktree, &result.commit)
        .into_iter()
        .map(|(path, _)| path)
        .collect();
    assert_eq!(
        files,
        [
            ".autobuild/.gitignore",
            ".env.example",
            ".gitignore",
            "edit.txt",
            "keep.txt",
            "src/new.rs"
        ]
    );
    let git = fixture.git();
    let commit = git.find_commit(result.commit.parse().unwrap()).unwrap();
    assert_eq!(
        commit.message().ok(),
        Some("autobuild: TASK-1 turn 1 (player)")
    );
    assert_eq!(commit.parent_id(0).unwrap().to_string(), before);
    assert_eq!(commit.tree_id().to_string(), result.tree);
    assert!(git_fixture::dirty_paths(&worktree).is_empty());
    assert_eq!(fixture.branch_tip("main").to_string(), before);
}

#[test]
fn checkpoint_without_changes_makes_no_commit() {
    let (_fixture, worktree) = task_worktree(&[(".gitignore", "*.log\n"), ("a.txt", "a\n")]);
    write(&worktree, "ignored.log", "noise\n");
    let before = head_commit(&worktree).unwrap();

    let result = checkpoint(&worktree, "turn 1").unwrap();

    assert!(!result.changed);
    assert_eq!(result.commit, before);
    assert_eq!(head_commit(&worktree).unwrap(), before);
}

#[test]
fn state_tree_matches_the_checkpoint_and_changes_with_the_files() {
    let (_fixture, worktree) = task_worktree(&[("a.txt", "a\n")]);
    write(&worktree, "b.txt", "b\n");

    let before_commit = worktree_state_tree(&worktree).unwrap();
    let result = checkpoint(&worktree, "turn 1").unwrap();
    assert_eq!(before_commit, result.tree);
    assert_eq!(worktree_state_tree(&worktree).unwrap(), result.tree);

    write(&worktree, "a.txt", "changed\n");
    write(&worktree, "c.txt", "untracked\n");
    let edited = worktree_state_tree(&worktree).unwrap();
    assert_ne!(edited, result.tree);

    // Computing the state tree must not stage anything in the real index.
    assert_eq!(git_fixture::dirty_paths(&worktree), ["a.txt", "c.txt"]);
    let index = fixture_index_paths(&worktree);
    assert!(!index.contains(&"c.txt".to_string()), "{index:?}");

    fs::remove_file(worktree.join("c.txt")).unwrap();
    write(&worktree, "a.txt", "a\n");
    assert_eq!(worktree_state_tree(&worktree).unwrap(), result.tree);
}

fn fixture_index_paths(worktree: &std::path::Path) -> Vec<String> {
    let repo = git2::Repository::open(worktree).unwrap();
    let index = repo.index().unwrap();
    index
        .iter()
        .map(|entry| String::from_utf8(entry.path).unwrap())
        .collect()
}

#[test]
fn restore_reverts_edits_deletions_and_new_files_and_reports_exactly_those() {
    let (_fixture, worktree) = task_worktree(&[
        (".gitignore", "__pycache__/\n"),
        ("edit.txt", "original\n"),
        ("gone.txt", "keep me\n"),
        ("same.txt", "same\n"),
    ]);
    let checkpoint_commit = head_commit(&worktree).unwrap();
    write(&worktree, "edit.txt", "tampered\n");
    fs::remove_file(worktree.join("gone.txt")).unwrap();
    write(&worktree, "notes/new.md", "scribble\n");
    write(&worktree, "__pycache__/mod.pyc", "cache\n");

    let reverted = restore(&worktree, &checkpoint_commit).unwrap();

    assert_eq!(reverted, ["edit.txt", "gone.txt", "notes/new.md"]);
    assert_eq!(read(&worktree, "edit.txt"), "original\n");
    assert_eq!(read(&worktree, "gone.txt"), "keep me\n");
    assert!(!worktree.join("notes/new.md").exists());
    assert_eq!(read(&worktree, "__pycache__/mod.pyc"), "cache\n");
    assert!(git_fixture::dirty_paths(&worktree).is_empty());
    assert_eq!(head_commit(&worktree).unwrap(), checkpoint_commit);

    assert!(restore(&worktree, &checkpoint_commit).unwrap().is_empty());
}

/// A read-only step that puts a hard link to a file outside the worktree in place of a tracked
/// file: the restore writes the committed content to a new file there, never through the link,
/// so the outside file keeps its content.
#[test]
fn restore_never_writes_through_a_hard_link_the_step_made() {
    let (fixture, worktree) = task_worktree(&[("lib/greet.sh", "original\n")]);
    let checkpoint_commit = head_commit(&worktree).unwrap();
    let outside = fixture.root.parent().unwrap().join("outside-profile");
    fs::write(&outside, "the user's own file\n").unwrap();
    fs::remove_file(worktree.join("lib/greet.sh")).unwrap();
    fs::hard_link(&outside, worktree.join("lib/greet.sh")).unwrap();

    let reverted = restore(&worktree, &checkpoint_commit).unwrap();

    assert_eq!(reverted, ["lib/greet.sh"]);
    assert_eq!(read(&worktree, "lib/greet.sh"), "original\n");
    assert_eq!(
        fs::read_to_string(&outside).unwrap(),
        "the user's own file\n"
    );
}

#[test]
fn restore_undoes_commits_and_staged_changes_made_by_a_read_only_step() {
    let (fixture, worktree) = task_worktree(&[("a.txt", "a\n")]);
    let checkpoint_commit = head_commit(&worktree).unwrap();
    write(&worktree, "a.txt", "committed by the coach\n");
    commit_all(&worktree, "coach was here");
    write(&worktree, "b.txt", "staged\n");
    let repo = git2::Repository::open(&worktree).unwrap();
    let mut index = repo.index().unwrap();
    index.add_path(std::path::Path::new("b.txt")).unwrap();
    index.write().unwrap();

    let reverted = restore(&worktree, &checkpoint_commit).unwrap();

    assert_eq!(reverted, ["a.txt", "b.txt"]);
    assert_eq!(
        fixture.branch_tip("autobuild/TASK-1").to_string(),
        checkpoint_commit
    );
    assert_eq!(read(&worktree, "a.txt"), "a\n");
    assert!(git_fixture::dirty_paths(&worktree).is_empty());
}

#[test]
fn changed_files_since_counts_uncommitted_and_untracked_files() {
    let (_fixture, worktree) = task_worktree(&[("a.txt", "a\n"), ("b.txt", "b\n")]);
    let start = head_commit(&worktree).unwrap();
    write(&worktree, "a.txt", "changed\n");
    checkpoint(&worktree, "turn 1").unwrap();
    fs::remove_file(worktree.join("b.txt")).unwrap();
    write(&worktree, "dir/c.txt", "c\n");

    assert_eq!(
        changed_files_since(&worktree, &start).unwrap(),
        ["a.txt", "b.txt", "dir/c.txt"]
    );
}

#[test]
fn diff_stat_counts_lines_per_file_and_in_total() {
    let (fixture, worktree) = task_worktree(&[
        ("src/app.py", "one\ntwo\nthree\n"),
        (
            "old_name.txt",
            "a fairly long line so rename detection has content\nsecond line\n",
        ),
        ("obsolete.txt", "x\ny\n"),
    ]);
    let start = head_commit(&worktree).unwrap();
    write(&worktree, "src/app.py", "one\nTWO\nthree\nfour\n");
    write(&worktree, "tests/test_app.py", "t1\nt2\nt3\n");
    fs::remove_file(worktree.join("obsolete.txt")).unwrap();
    fs::rename(worktree.join("old_name.txt"), worktree.join("new_name.txt")).unwrap();
    let end = checkpoint(&worktree, "turn 1").unwrap().commit;

    let stat = diff_stat(&fixture.root, &start, &end).unwrap();

    let summary: Vec<(&str, ChangeStatus, usize, usize)> = stat
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.status, f.insertions, f.deletions))
        .collect();
    assert_eq!(
        summary,
        [
            ("new_name.txt", ChangeStatus::Renamed, 0, 0),
            ("obsolete.txt", ChangeStatus::Deleted, 0, 2),
            ("src/app.py", ChangeStatus::Modified, 2, 1),
            ("tests/test_app.py", ChangeStatus::Added, 3, 0),
        ]
    );
    assert_eq!(stat.files[0].old_path.as_deref(), Some("old_name.txt"));
    assert_eq!((stat.insertions, stat.deletions), (5, 3));
    assert_eq!(
        stat.render().lines().last(),
        Some(" 4 files changed, 5 insertions(+), 3 deletions(-)")
    );
    assert_eq!(diff_stat(&worktree, &start, &end).unwrap(), stat);
    assert!(diff_stat(&worktree, &end, &end).unwrap().is_empty());
}
