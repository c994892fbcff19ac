//! The comparison that skips equal subtrees against libgit2's full tree-to-tree diff, and the
//! diffs built on it against the full-diff implementation they replaced, on hand-picked and on
//! generated pairs of trees.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

use git2::{Commit, Oid, Repository, Signature};

use super::fixtures::*;
use super::*;
use crate::diff::{diff_stat_in, diff_text_in, DiffStat};

/// Every answer of the new code equals the full diff's, for `old` -> `new`; returns the paths.
fn assert_same_as_full_diff(repo: &Repository, old: Oid, new: Oid, case: &str) -> Vec<String> {
    let leaves = changed_leaves_in(repo, old, new).unwrap();
    assert_eq!(
        leaves,
        full_diff_paths(repo, old, new),
        "{case}: changed paths"
    );
    let (from, to) = (commit(repo, old), commit(repo, new));
    let here = Path::new(".");
    let stat = diff_stat_in(repo, &from, &to, here).unwrap();
    assert_eq!(stat, reference_stat(repo, &from, &to), "{case}: stat");
    let filters: [&dyn Fn(&str) -> bool; 3] =
        [&|_| true, &|p| p.starts_with("t"), &|p| !p.contains('/')];
    for (i, wanted) in filters.iter().enumerate() {
        for limit in [usize::MAX, 40] {
            let text = diff_text_in(repo, &from, &to, *wanted, limit, here).unwrap();
            let reference = reference_text(repo, &from, &to, *wanted, limit);
            assert_eq!(text, reference, "{case}: text, filter {i}, limit {limit}");
        }
    }
    leaves
        .iter()
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

fn repo() -> (tempfile::TempDir, Repository) {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init_bare(dir.path()).unwrap();
    (dir, repo)
}

#[test]
fn equals_the_full_diff_on_each_kind_of_change() {
    let (_dir, repo) = repo();
    let lines =
        |n: usize, tag: &str| -> String { (0..n).map(|i| format!("{tag} {i}\n")).collect() };
    let base = [
        ("README", file("hello\n")),
        ("src/a/b/c/deep.rs", file(&lines(20, "deep"))),
        ("src/a/b/other.rs", file("other\n")),
        ("src/z.rs", file("z\n")),
        ("foo", file("foo\n")),
        ("foo.c", file("foo.c\n")),
        ("foo-bar/x", file("x\n")),
        ("foo0", file("foo0\n")),
        ("dir/inner/one", file("one\n")),
        ("dir/two", file("two\n")),
        ("run.sh", file("echo\n")),
        ("link", Link("README")),
        ("sub", Gitlink(1)),
        ("t/keep", file("keep\n")),
        ("image.png", File(b"\x89PNG\0\0\x01".to_vec())),
        ("moved.txt", file(&lines(30, "moved"))),
    ];
    let with = |changes: &[(&'static str, Option<Leaf>)]| {
        let mut files: BTreeMap<&str, Leaf> = base.iter().cloned().collect();
        for (path, leaf) in changes {
            match leaf {
                Some(leaf) => files.insert(*path, leaf.clone()),
                None => files.remove(*path),
            };
        }
        files.into_iter().collect::<Vec<_>>()
    };
    // A case: its name, the old and the new tree, the changed paths.
    type Files = Vec<(&'static str, Leaf)>;
    let cases: Vec<(&str, Files, Files, &[&str])> = vec![
        ("no change", with(&[]), with(&[]), &[]),
        ("empty to empty", vec![], vec![], &[]),
        (
            "empty to files",
            vec![],
            vec![("a/b", file("b\n")), ("c", file("c\n"))],
            &["a/b", "c"],
        ),
        (
            "files to empty",
            vec![("a/b", file("b\n")), ("c", file("c\n"))],
            vec![],
            &["a/b", "c"],
        ),
        (
            "modified deep in the tree",
            with(&[]),
            with(&[("src/a/b/c/deep.rs", Some(file(&lines(21, "deep"))))]),
            &["src/a/b/c/deep.rs"],
        ),
        (
            "added and deleted deep",
            with(&[]),
            with(&[
                ("src/a/b/c/new.rs", Some(file("new\n"))),
                ("src/a/b/other.rs", None),
            ]),
            &["src/a/b/c/new.rs", "src/a/b/other.rs"],
        ),
        (
            "file to directory beside names that sort around it",
            with(&[]),
            with(&[
                ("foo", None),
                ("foo/x", Some(file("x\n"))),
                ("foo/y/z", Some(file("z\n"))),
            ]),
            &["foo", "foo/x", "foo/y/z"],
        ),
        (
            "directory to file",
            with(&[]),
            with(&[
                ("dir/inner/one", None),
                ("dir/two", None),
                ("dir", Some(file("dir\n"))),
            ]),
            &["dir", "dir/inner/one", "dir/two"],
        ),
        (
            "mode change only",
            with(&[]),
            with(&[("run.sh", Some(Exec(b"echo\n".to_vec())))]),
            &["run.sh"],
        ),
        (
            "file to symlink with the same bytes",
            with(&[("link", Some(file("README")))]),
            with(&[]),
            &["link"],
        ),
        (
            "symlink target",
            with(&[]),
            with(&[("link", Some(Link("src")))]),
            &["link"],
        ),
        (
            "gitlink moved",
            with(&[]),
            with(&[("sub", Some(Gitlink(2)))]),
            &["sub"],
        ),
        (
            "gitlink to directory",
            with(&[]),
            with(&[("sub", None), ("sub/file", Some(file("f\n")))]),
            &["sub", "sub/file"],
        ),
        (
            "file to gitlink",
            with(&[]),
            with(&[("README", Some(Gitlink(3)))]),
            &["README"],
        ),
        (
            "renamed, and renamed with an edit",
            with(&[]),
            with(&[
                ("moved.txt", None),
                ("elsewhere/moved.txt", Some(file(&lines(30, "moved")))),
                ("src/a/b/c/deep.rs", None),
                (
                    "src/deep.rs",
                    Some(file(&(lines(20, "deep") + "one more\n"))),
                ),
            ]),
            &[
                "elsewhere/moved.txt",
                "moved.txt",
                "src/a/b/c/deep.rs",
                "src/deep.rs",
            ],
        ),
        (
            "binary modified",
            with(&[]),
            with(&[("image.png", Some(File(b"\x89PNG\0\0\x02".to_vec())))]),
            &["image.png"],
        ),
        (
            "a wanted file replaced by a directory the filter does not want",
            with(&[]),
            with(&[("t/keep", None), ("t", Some(file("t\n"))), ("README", None)]),
            &["README", "t", "t/keep"],
        ),
    ];
    for (case, old, new, expected) in cases {
        let (old, new) = (write_tree(&repo, &old), write_tree(&repo, &new));
        let paths = assert_same_as_full_diff(&repo, old, new, case);
        assert_eq!(paths, expected, "{case}");
        assert_eq!(
            assert_same_as_full_diff(&repo, new, old, case),
            expected,
            "{case}, reversed"
        );
    }
}

#[test]
fn equals_the_full_diff_on_generated_trees() {
    let (_dir, repo) = repo();
    let mut random = Random(0x2545_f491_4f6c_dd1d);
    for round in 0..150 {
        let old = random.tree();
        let mut new = old.clone();
        for _ in 0..random.below(4) + 1 {
            random.mutate(&mut new);
        }
        let entries = |t: BTreeMap<String, Leaf>| t.into_iter().collect::<Vec<_>>();
        let (old, new) = (
            write_tree(&repo, &entries(old)),
            write_tree(&repo, &entries(new)),
        );
        assert_same_as_full_diff(&repo, old, new, &format!("round {round}"));
    }
}

#[test]
fn reads_only_the_subtrees_on_the_way_to_a_change() {
    let (_dir, repo) = repo();
    let mut files: Vec<(String, Leaf)> = (0..2_000)
        .map(|i| {
            (
                format!("src/d{}/e{}/f{i}.txt", i / 100, i / 10),
                file(&i.to_string()),
            )
        })
        .collect();
    let old = write_tree(&repo, &files);
    files[1_234].1 = file("changed");
    let new = write_tree(&repo, &files);
    let reads = RefCell::new(0);
    let paths = changed_leaves(old, new, &mut |id| {
        *reads.borrow_mut() += 1;
        let tree = repo.find_tree(id)?;
        Ok::<_, git2::Error>(
            tree.iter()
                .map(|e| Entry {
                    name: e.name_bytes().to_vec(),
                    mode: e.filemode_raw(),
                    id: e.id(),
                })
                .collect(),
        )
    })
    .unwrap();
    assert_eq!(paths, [b"src/d12/e123/f1234.txt".to_vec()]);
    // Root, src, d12 and e123, on both sides: none of the other 200 directories.
    assert_eq!(reads.into_inner(), 8);
    assert!(changed_leaves_in(&repo, old, old).unwrap().is_empty());
}

#[test]
fn an_unsorted_tree_is_compared_by_name() {
    let id = |n: u8| Oid::from_bytes(&[n; 20]).unwrap();
    let entry = |name: &str, mode: i32, n: u8| Entry {
        name: name.as_bytes().to_vec(),
        mode,
        id: id(n),
    };
    let trees: BTreeMap<Oid, Vec<Entry>> = [
        (
            id(1),
            vec![
                entry("b", 0o100_644, 10),
                entry("a", 0o040_000, 3),
                entry("a.c", 0o100_644, 11),
            ],
        ),
        (
            id(2),
            vec![
                entry("a.c", 0o100_644, 11),
                entry("a", 0o040_000, 4),
                entry("b", 0o100_644, 10),
            ],
        ),
        (id(3), vec![entry("x", 0o100_644, 20)]),
        (id(4), vec![entry("x", 0o100_755, 20)]),
    ]
    .into_iter()
    .collect();
    let mut read = |tree: Oid| trees.get(&tree).cloned().ok_or(tree);
    assert_eq!(
        changed_leaves(id(1), id(2), &mut read),
        Ok(vec![b"a/x".to_vec()])
    );
    assert_eq!(changed_leaves(id(1), id(9), &mut read), Err(id(9)));
}

#[test]
fn no_paths_means_no_diff_rather_than_every_path() {
    let (_dir, repo) = repo();
    let tree = repo
        .find_tree(write_tree(&repo, &[("a", file("a\n"))]))
        .unwrap();
    let empty = repo.find_tree(write_tree::<&str>(&repo, &[])).unwrap();
    assert!(diff_of(&repo, &empty, &tree, &[]).unwrap().is_none());
    let diff = diff_of(&repo, &empty, &tree, &[b"a".to_vec()])
        .unwrap()
        .unwrap();
    assert_eq!(diff.deltas().len(), 1);
}

#[test]
fn attributes_never_make_a_text_file_binary_in_the_runners_diffs() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repository::init(dir.path()).unwrap();
    let commit_files = |files: &[(&str, &str)], parent: Option<Oid>| -> Oid {
        let tree = write_tree(
            &repo,
            &files.iter().map(|(p, t)| (*p, file(t))).collect::<Vec<_>>(),
        );
        let sig = Signature::new("t", "t@example.com", &git2::Time::new(0, 0)).unwrap();
        let parents: Vec<Commit<'_>> = parent
            .map(|p| repo.find_commit(p).unwrap())
            .into_iter()
            .collect();
        let parents: Vec<&Commit<'_>> = parents.iter().collect();
        repo.commit(
            None,
            &sig,
            &sig,
            "m",
            &repo.find_tree(tree).unwrap(),
            &parents,
        )
        .unwrap()
    };
    let one = commit_files(&[("data.dat", "a\n"), ("text.txt", "a\n")], None);
    let two = commit_files(&[("data.dat", "b\n"), ("text.txt", "b\n")], Some(one));
    // Binary flags of data.dat and text.txt: through the diff handle, and through a handle
    // that reads the index (the full diff's reference).
    let binary = || -> (Vec<bool>, Vec<bool>) {
        let stat = crate::diff_stat(dir.path(), &one.to_string(), &two.to_string()).unwrap();
        let (from, to) = (
            repo.find_commit(one).unwrap(),
            repo.find_commit(two).unwrap(),
        );
        let reference = reference_stat(&repo, &from, &to);
        let flags = |s: &DiffStat| s.files.iter().map(|f| f.binary).collect::<Vec<_>>();
        (flags(&stat), flags(&reference))
    };
    assert_eq!(
        binary(),
        (vec![false, false], vec![false, false]),
        "no attributes"
    );
    // Binary or not is the content's: a `.gitattributes` saying `binary` (or `-diff`), in the
    // working tree or staged, no longer hides a text file's lines (full libgit2 diffs obey it).
    std::fs::write(dir.path().join(".gitattributes"), "*.dat binary\n").unwrap();
    assert_eq!(
        binary(),
        (vec![false, false], vec![true, false]),
        "in the working tree"
    );
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(".gitattributes")).unwrap();
    index.write().unwrap();
    assert_eq!(binary(), (vec![false, false], vec![true, false]), "staged");
    let text = crate::diff_text(
        dir.path(),
        &one.to_string(),
        &two.to_string(),
        &|_| true,
        usize::MAX,
    )
    .unwrap();
    assert!(text.contains("-a\n+b\n"), "{text}");
}
