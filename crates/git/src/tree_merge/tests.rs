//! The one-sided merge against libgit2's full merge: wherever it answers, the same tree.

use std::collections::BTreeMap;

use git2::{Oid, Repository};

use super::*;
use crate::tree_diff::fixtures::{commit, file, insert, write_tree, Leaf, Random};
use crate::tree_diff::fixtures::{Exec, Link};

fn repo() -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init_bare(dir.path()).unwrap();
    (dir, repo)
}

fn tree(repo: &Repository, files: &BTreeMap<String, Leaf>) -> Oid {
    let entries: Vec<(String, Leaf)> = files.clone().into_iter().collect();
    write_tree(repo, &entries)
}

/// libgit2's merge of the three trees: the merged tree, or `None` on a conflict.
fn full_merge(repo: &Repository, ancestor: Oid, ours: Oid, theirs: Oid) -> Option<Oid> {
    let find = |id| repo.find_tree(id).unwrap();
    let mut index = repo
        .merge_trees(&find(ancestor), &find(ours), &find(theirs), None)
        .unwrap();
    (!index.has_conflicts()).then(|| index.write_tree_to(repo).unwrap())
}

/// What [`one_sided`] answers, checked against the full merge; whether it answered.
fn check(repo: &Repository, ancestor: Oid, ours: Oid, theirs: Oid, case: &str) -> bool {
    let find = |id| repo.find_tree(id).unwrap();
    let fast = one_sided(repo, &find(ancestor), &find(ours), &find(theirs)).unwrap();
    let full = full_merge(repo, ancestor, ours, theirs);
    if let Some(tree) = fast {
        assert_eq!(Some(tree), full, "{case}: the one-sided merge differs");
    }
    fast.is_some()
}

fn files(list: &[(&str, Leaf)]) -> BTreeMap<String, Leaf> {
    list.iter()
        .map(|(path, leaf)| (path.to_string(), leaf.clone()))
        .collect()
}

#[test]
fn each_kind_of_one_sided_change_merges_as_libgit2_does() {
    let (_dir, repo) = repo();
    let base = files(&[
        ("README", file("r\n")),
        ("out/a", file("a\n")),
        ("d/only", file("o\n")),
        ("src/lib.rs", file("fn a() {}\n")),
        ("link", Link("a")),
    ]);
    // (case, what ours changes, what theirs changes, the one-sided merge answers)
    type Change = fn(&mut BTreeMap<String, Leaf>);
    let cases: [(&str, Change, Change, bool); 10] = [
        (
            "adds beside each other",
            |t| insert(t, "out/b".into(), file("b\n")),
            |t| insert(t, "out/c".into(), file("c\n")),
            true,
        ),
        (
            "the last file of a directory removed",
            |t| insert(t, "out/b".into(), file("b\n")),
            |t| {
                t.remove("d/only");
            },
            true,
        ),
        (
            "a mode changed",
            |t| {
                t.remove("README");
            },
            |t| insert(t, "src/lib.rs".into(), Exec(b"fn a() {}\n".to_vec())),
            true,
        ),
        (
            "a file replaced by a link, a new nested directory",
            |t| insert(t, "out/b".into(), file("b\n")),
            |t| {
                insert(t, "README".into(), Link("b"));
                insert(t, "x/y/z".into(), file("z\n"));
            },
            true,
        ),
        (
            "a move on one side, an edit elsewhere on the other",
            |t| {
                let leaf = t.remove("out/a").unwrap();
                insert(t, "moved/a".into(), leaf);
            },
            |t| insert(t, "src/lib.rs".into(), file("fn b() {}\n")),
            true,
        ),
        (
            "the same file edited on both sides",
            |t| insert(t, "src/lib.rs".into(), file("fn a() {}\nfn b() {}\n")),
            |t| insert(t, "src/lib.rs".into(), file("fn z() {}\nfn a() {}\n")),
            false,
        ),
        (
            "a file where the other side adds a directory",
            |t| insert(t, "new".into(), file("f\n")),
            |t| insert(t, "new/x".into(), file("x\n")),
            false,
        ),
        (
            "a file replaced by a directory on one side",
            |t| insert(t, "out/b".into(), file("b\n")),
            |t| insert(t, "README/x".into(), file("x\n")),
            false,
        ),
        (
            "a directory removed under the other side's edit",
            |t| {
                t.remove("d/only");
            },
            |t| insert(t, "d/only".into(), file("edited\n")),
            false,
        ),
        (
            "the same file added on both sides",
            |t| insert(t, "same".into(), file("s\n")),
            |t| insert(t, "same".into(), file("s\n")),
            false,
        ),
    ];
    for (case, change_ours, change_theirs, answers) in cases {
        let (mut ours, mut theirs) = (base.clone(), base.clone());
        change_ours(&mut ours);
        change_theirs(&mut theirs);
        let (ancestor, ours, theirs) =
            (tree(&repo, &base), tree(&repo, &ours), tree(&repo, &theirs));
        assert_eq!(
            check(&repo, ancestor, ours, theirs, case),
            answers,
            "{case}"
        );
        assert_eq!(
            check(&repo, ancestor, theirs, ours, case),
            answers,
            "{case}, reversed"
        );
    }
}

#[test]
fn generated_merges_equal_libgit2s_wherever_one_sided() {
    const ROUNDS: usize = 400;
    let (_dir, repo) = repo();
    let mut random = Random(0x9e37_79b9_7f4a_7c15);
    let mut answered = 0;
    for round in 0..ROUNDS {
        let base = random.tree();
        let (mut ours, mut theirs) = (base.clone(), base.clone());
        for _ in 0..random.below(3) + 1 {
            random.mutate(&mut ours);
        }
        for _ in 0..random.below(2) + 1 {
            random.mutate(&mut theirs);
        }
        let (ancestor, ours, theirs) =
            (tree(&repo, &base), tree(&repo, &ours), tree(&repo, &theirs));
        if check(&repo, ancestor, ours, theirs, &format!("round {round}")) {
            answered += 1;
        }
    }
    // The generator must exercise the one-sided merge, not only the fallback.
    assert!(
        answered > 100,
        "only {answered} of {ROUNDS} merges were one-sided"
    );
}

/// Through [`merge_tree`]: commits with a merge base, and unrelated histories (over the
/// empty tree).
#[test]
fn merge_tree_gives_the_full_merges_tree_with_or_without_a_fork() {
    let (_dir, repo) = repo();
    let base = files(&[("a", file("a\n")), ("d/b", file("b\n"))]);
    let mut ours = base.clone();
    insert(&mut ours, "d/c".into(), file("c\n"));
    let mut theirs = base.clone();
    theirs.remove("a");
    let (fork, ours, theirs) = (
        commit(&repo, tree(&repo, &base)),
        commit(&repo, tree(&repo, &ours)),
        commit(&repo, tree(&repo, &theirs)),
    );
    let expected = full_merge(&repo, fork.tree_id(), ours.tree_id(), theirs.tree_id());
    let TreeMerge::Clean(merged) =
        merge_tree(&repo, Some(fork.id()), &ours, &theirs, Path::new("x")).unwrap()
    else {
        panic!("a clean merge conflicted");
    };
    assert_eq!(Some(merged), expected);

    let empty = repo.treebuilder(None).unwrap().write().unwrap();
    let unrelated = full_merge(&repo, empty, ours.tree_id(), theirs.tree_id());
    match merge_tree(&repo, None, &ours, &theirs, Path::new("x")).unwrap() {
        TreeMerge::Clean(tree) => assert_eq!(Some(tree), unrelated),
        TreeMerge::Conflicts(paths) => {
            assert_eq!(unrelated, None);
            assert!(!paths.is_empty());
        }
    }
}
