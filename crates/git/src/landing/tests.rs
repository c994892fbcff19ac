use super::*;
use crate::{checkpoint, init_with_commit};

/// A repository whose `main` is checked out, and a branch `task` that changes and adds
/// files.
fn repo_with_task() -> (tempfile::TempDir, Repo) {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    init_with_commit(dir.path(), "main", "first").unwrap();
    let repo = Repo::discover(dir.path()).unwrap();
    let wt = dir.path().join("wt");
    repo.create_worktree("task", "main", &wt).unwrap();
    fs::write(wt.join("a.txt"), "changed\n").unwrap();
    fs::create_dir_all(wt.join("new")).unwrap();
    fs::write(wt.join("new/b.txt"), "b\n").unwrap();
    fs::remove_file(wt.join("gone.txt")).unwrap();
    checkpoint(&wt, "work").unwrap();
    repo.remove_worktree(&wt, "task").unwrap();
    (dir, repo)
}

fn ready(repo: &Repo) -> Landing {
    match repo
        .prepare_landing("task", "main", MergeStrategy::Squash, "land")
        .unwrap()
    {
        Prepared::Ready(landing) => landing,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_checkout_left_behind_by_a_kill_after_the_ref_moved_is_brought_up_to_date() {
    let (dir, repo) = repo_with_task();
    let landing = ready(&repo);
    let since_ms = crate::now_ms();
    assert_eq!(repo.move_base(&landing).unwrap(), BaseMove::Moved);
    // Killed here: the journal is all that is left.
    let journal = repo.landing_journal("main");
    base::atomic_file::write_json_atomic(&journal, &JournaledLanding { landing, since_ms })
        .unwrap();
    fs::write(dir.path().join(".git/index.lock"), "").unwrap();

    let done = repo.finish_interrupted_landings().unwrap();

    assert_eq!(done.len(), 1, "{done:?}");
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "changed\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("new/b.txt")).unwrap(),
        "b\n"
    );
    assert!(!dir.path().join("gone.txt").exists());
    assert!(!journal.exists());
    assert!(!dir.path().join(".git/index.lock").exists());
    let main = git2::Repository::open(dir.path()).unwrap();
    let statuses = main
        .statuses(Some(&mut crate::repo::status_options()))
        .unwrap();
    assert!(statuses.is_empty(), "the checkout is clean");
}

#[test]
fn a_file_the_user_changed_after_the_kill_is_left_alone() {
    let (dir, repo) = repo_with_task();
    let landing = ready(&repo);
    repo.move_base(&landing).unwrap();
    fs::write(dir.path().join("a.txt"), "the user's own edit\n").unwrap();

    let kept = repo.update_checkouts(&landing, crate::now_ms()).unwrap();

    assert_eq!(kept, ["a.txt"]);
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "the user's own edit\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("new/b.txt")).unwrap(),
        "b\n"
    );
}

#[test]
fn nothing_is_written_through_a_link_in_the_users_checkout() {
    let (dir, repo) = repo_with_task();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("new")).unwrap();

    let refused = repo.prepare_landing("task", "main", MergeStrategy::Squash, "land");
    assert!(
        matches!(&refused, Err(GitError::BeyondSymlink { link, .. }) if link == "new"),
        "{refused:?}"
    );
    // Had the link appeared after the check (or a kill left the landing half done), the
    // checkout update leaves the path alone rather than write through it.
    fs::remove_file(dir.path().join("new")).unwrap();
    let landing = ready(&repo);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("new")).unwrap();
    repo.move_base(&landing).unwrap();
    let kept = repo.update_checkouts(&landing, crate::now_ms()).unwrap();

    assert_eq!(kept, ["new/b.txt"]);
    assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "changed\n"
    );
}

#[test]
fn moving_the_base_again_is_a_no_op_and_a_base_that_moved_elsewhere_refuses() {
    let (_dir, repo) = repo_with_task();
    let landing = ready(&repo);
    assert_eq!(repo.move_base(&landing).unwrap(), BaseMove::Moved);
    assert_eq!(repo.move_base(&landing).unwrap(), BaseMove::AlreadyThere);
    let holds_it = Landing {
        to: landing.from.clone(),
        ..landing.clone()
    };
    assert_eq!(repo.move_base(&holds_it).unwrap(), BaseMove::MovedOn);
    let elsewhere = Landing {
        from: "0000000000000000000000000000000000000001".into(),
        to: landing.to.clone(),
        ..landing.clone()
    };
    let old = git2::Oid::from_str(&landing.from).unwrap();
    repo.repo
        .reference("refs/heads/main", old, true, "the user reset main")
        .unwrap();
    assert!(matches!(
        repo.move_base(&elsewhere),
        Err(GitError::BaseMoved { .. })
    ));
}

#[test]
fn the_paths_a_landing_touched_are_both_sides_of_each_change_whichever_landing_is_asked() {
    let (_dir, repo) = repo_with_task();
    let landing = ready(&repo);
    let expected = ["a.txt", "gone.txt", "new/b.txt"];
    assert_eq!(repo.touched_paths(&landing).unwrap(), expected);
    // Asked again (answered from the last comparison): the same.
    assert_eq!(repo.touched_paths(&landing).unwrap(), expected);
    // Another pair of trees is compared afresh, and the first is still answered right.
    let back = Landing {
        from: landing.to.clone(),
        to: landing.from.clone(),
        ..landing.clone()
    };
    assert_eq!(repo.touched_paths(&back).unwrap(), expected);
    let none = Landing {
        to: landing.from.clone(),
        ..landing.clone()
    };
    assert!(repo.touched_paths(&none).unwrap().is_empty());
    assert_eq!(repo.touched_paths(&landing).unwrap(), expected);
}
