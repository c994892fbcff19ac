use super::*;
use crate::{checkpoint, init_with_commit, Repo};

/// The repository and, in a directory of its own, the task worktree.
fn task_worktree() -> (tempfile::TempDir, tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "a\n").unwrap();
    init_with_commit(dir.path(), "main", "first").unwrap();
    let repo = Repo::discover(dir.path()).unwrap();
    let path = elsewhere.path().join("wt");
    repo.create_worktree("autobuild/T", "main", &path).unwrap();
    std::fs::write(path.join("b.txt"), "b\n").unwrap();
    checkpoint(&path, "turn 1").unwrap();
    (dir, elsewhere, path)
}

#[test]
fn a_base_branch_pointed_at_task_commits_is_put_back_and_kept() {
    let (dir, _elsewhere, wt) = task_worktree();
    let main = git2::Repository::open(dir.path()).unwrap();
    let before = main.refname_to_id("refs/heads/main").unwrap();
    let guard = RefGuard::capture(&wt, "autobuild/T").unwrap();
    let task = main.refname_to_id("refs/heads/autobuild/T").unwrap();
    main.reference("refs/heads/main", task, true, "agent")
        .unwrap();
    main.reference("refs/tags/v9", task, false, "agent")
        .unwrap();

    let restored = guard
        .restore(&wt, "autobuild/T", "refs/autobuild/backup/T", &|_| {
            RefOwner::Unowned
        })
        .unwrap();

    assert_eq!(restored.len(), 2, "{restored:?}");
    assert_eq!(main.refname_to_id("refs/heads/main").unwrap(), before);
    assert!(main.find_reference("refs/tags/v9").is_err());
    let kept = restored[0].kept_as.clone().unwrap();
    assert_eq!(main.refname_to_id(&kept).unwrap(), task);
}

#[test]
fn the_users_own_commits_on_main_are_left_alone() {
    let (dir, _elsewhere, wt) = task_worktree();
    let main = git2::Repository::open(dir.path()).unwrap();
    let guard = RefGuard::capture(&wt, "autobuild/T").unwrap();
    std::fs::write(dir.path().join("c.txt"), "c\n").unwrap();
    let mine = checkpoint(dir.path(), "my own work").unwrap();

    let restored = guard
        .restore(&wt, "autobuild/T", "refs/autobuild/backup/T", &|_| {
            RefOwner::Unowned
        })
        .unwrap();

    assert!(restored.is_empty());
    assert_eq!(
        main.refname_to_id("refs/heads/main").unwrap().to_string(),
        mine.commit
    );
}

/// A ref, before, after, the facts say the agent did it, its owner, and where it goes back.
type Case = (
    &'static str,
    Option<Oid>,
    Option<Oid>,
    bool,
    RefOwner,
    Option<Option<Oid>>,
);

#[test]
fn who_may_move_a_ref_decides_whether_it_is_put_back() {
    let (a, b, c) = (
        Oid::from_bytes(&[1; 20]).unwrap(),
        Oid::from_bytes(&[2; 20]).unwrap(),
        Oid::from_bytes(&[3; 20]).unwrap(),
    );
    let recorded = |tip, may_delete| RefOwner::Recorded {
        tips: vec![tip],
        may_delete,
    };
    let feature = "refs/heads/autobuild/FEAT";
    let landed_on = RefOwner::Recorded {
        tips: vec![a, b],
        may_delete: false,
    };
    let cases: [Case; 16] = [
        // Unchanged: nothing to do, whoever owns it.
        (feature, Some(a), Some(a), true, recorded(b, false), None),
        // User branches and tags: only what the facts say the agent did.
        (
            "refs/heads/main",
            Some(a),
            Some(b),
            false,
            RefOwner::Unowned,
            None,
        ),
        (
            "refs/heads/main",
            Some(a),
            Some(b),
            true,
            RefOwner::Unowned,
            Some(Some(a)),
        ),
        (
            "refs/tags/v9",
            None,
            Some(b),
            true,
            RefOwner::Unowned,
            Some(None),
        ),
        // Replace refs and notes: always.
        (
            "refs/replace/0123",
            None,
            Some(b),
            false,
            RefOwner::Unowned,
            Some(None),
        ),
        (
            "refs/notes/commits",
            Some(a),
            Some(b),
            false,
            RefOwner::Unowned,
            Some(Some(a)),
        ),
        // A runner's branch: where its record says, whatever the facts of the worktree.
        (
            feature,
            Some(a),
            Some(b),
            false,
            recorded(a, false),
            Some(Some(a)),
        ),
        (feature, Some(a), Some(b), false, recorded(b, false), None),
        (
            feature,
            Some(a),
            Some(c),
            true,
            recorded(b, false),
            Some(Some(b)),
        ),
        (
            feature,
            Some(a),
            None,
            false,
            recorded(a, false),
            Some(Some(a)),
        ),
        (
            "refs/heads/autobuild/T2",
            Some(a),
            None,
            false,
            recorded(a, true),
            None,
        ),
        // A recorded landing took it on; from a recorded place, back to where it was.
        (feature, Some(a), Some(b), false, landed_on.clone(), None),
        (feature, Some(b), Some(c), false, landed_on, Some(Some(b))),
        (
            "refs/heads/autobuild/T2",
            Some(a),
            Some(b),
            false,
            RefOwner::Vetted,
            None,
        ),
        // A branch no run owns: made (or moved) by the agent.
        (
            "refs/heads/autobuild/evil",
            None,
            Some(b),
            false,
            RefOwner::Unowned,
            Some(None),
        ),
        // Other namespaces are not guarded.
        (
            "refs/remotes/origin/main",
            Some(a),
            Some(b),
            true,
            RefOwner::Unowned,
            None,
        ),
    ];
    for (name, before, after, by_agent, owner, expected) in cases {
        assert_eq!(
            put_back_to(name, before, after, by_agent, owner.clone()),
            expected,
            "{name} {before:?} -> {after:?} ({owner:?})"
        );
    }
}

#[test]
fn replace_refs_notes_and_unowned_runner_branches_are_removed_and_kept() {
    let (dir, _elsewhere, wt) = task_worktree();
    let main = git2::Repository::open(dir.path()).unwrap();
    let guard = RefGuard::capture(&wt, "autobuild/T").unwrap();
    let first = main.refname_to_id("refs/heads/main").unwrap();
    let task = main.refname_to_id("refs/heads/autobuild/T").unwrap();
    main.reference(&format!("refs/replace/{first}"), task, false, "agent")
        .unwrap();
    main.reference("refs/notes/commits", task, false, "agent")
        .unwrap();
    main.reference("refs/heads/autobuild/evil", first, false, "agent")
        .unwrap();

    let restored = guard
        .restore(&wt, "autobuild/T", "refs/autobuild/backup/T", &|_| {
            RefOwner::Unowned
        })
        .unwrap();

    assert_eq!(restored.len(), 3, "{restored:?}");
    for gone in [
        format!("refs/replace/{first}"),
        "refs/notes/commits".to_string(),
        "refs/heads/autobuild/evil".to_string(),
    ] {
        assert!(main.find_reference(&gone).is_err(), "{gone}");
    }
    assert!(restored.iter().all(|r| r.kept_as.is_some()), "{restored:?}");
    // The task branch itself is the agent's to move.
    assert_eq!(main.refname_to_id("refs/heads/autobuild/T").unwrap(), task);
}
