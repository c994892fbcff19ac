//! The comparison that skips equal subtrees against libgit2's full tree-to-tree diff, and the
//! diffs built on it against the full-diff implementation they replaced, on hand-picked and on
//! generated pairs of trees.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use git2::{Commit, DiffFindOptions, Oid, Patch, Repository, Signature};

use super::*;
use crate::git::diff::{diff_stat_in, diff_text_in, file_change, DiffStat};

/// What a generated tree holds at a path.
#[derive(Debug, Clone, PartialEq)]
enum Leaf {
    File(Vec<u8>),
    Exec(Vec<u8>),
    Link(&'static str),
    /// A submodule's commit (mode 160000) made of this byte (not 0); it need not exist.
    Gitlink(u8),
}
use Leaf::*;

fn file(text: &str) -> Leaf {
    File(text.as_bytes().to_vec())
}

/// Nested directories of a tree under construction.
#[derive(Default)]
struct Dir(BTreeMap<String, Node>);
enum Node {
    Leaf(Leaf),
    Dir(Dir),
}

fn write_tree<P: AsRef<str>>(repo: &Repository, files: &[(P, Leaf)]) -> Oid {
    let mut root = Dir::default();
    for (path, leaf) in files {
        let path = path.as_ref();
        let mut dir = &mut root;
        let mut parts: Vec<&str> = path.split('/').collect();
        let name = parts.pop().unwrap();
        for part in parts {
            dir = match dir
                .0
                .entry(part.to_string())
                .or_insert(Node::Dir(Dir::default()))
            {
                Node::Dir(d) => d,
                Node::Leaf(_) => panic!("{path}: a file is on its way"),
            };
        }
        dir.0.insert(name.to_string(), Node::Leaf(leaf.clone()));
    }
    write_dir(repo, &root)
}

fn write_dir(repo: &Repository, dir: &Dir) -> Oid {
    let mut builder = repo.treebuilder(None).unwrap();
    for (name, node) in &dir.0 {
        let (id, mode) = match node {
            Node::Dir(d) => (write_dir(repo, d), 0o040_000),
            Node::Leaf(File(b)) => (repo.blob(b).unwrap(), 0o100_644),
            Node::Leaf(Exec(b)) => (repo.blob(b).unwrap(), 0o100_755),
            Node::Leaf(Link(t)) => (repo.blob(t.as_bytes()).unwrap(), 0o120_000),
            Node::Leaf(Gitlink(n)) => (Oid::from_bytes(&[*n; 20]).unwrap(), 0o160_000),
        };
        builder.insert(name, id, mode).unwrap();
    }
    builder.write().unwrap()
}

/// Both sides of every delta of libgit2's full diff: what `changed_paths` returned before.
fn full_diff_paths(repo: &Repository, old: Oid, new: Oid) -> Vec<Vec<u8>> {
    let (old, new) = (repo.find_tree(old).unwrap(), repo.find_tree(new).unwrap());
    let diff = repo
        .diff_tree_to_tree(Some(&old), Some(&new), None)
        .unwrap();
    let paths: BTreeSet<Vec<u8>> = diff
        .deltas()
        .flat_map(|d| [d.old_file().path_bytes(), d.new_file().path_bytes()])
        .flatten()
        .map(<[u8]>::to_vec)
        .collect();
    paths.into_iter().collect()
}

/// `diff_stat_in` as it was, on libgit2's full diff.
fn reference_stat(repo: &Repository, from: &Commit<'_>, to: &Commit<'_>) -> DiffStat {
    let (from, to) = (from.tree().unwrap(), to.tree().unwrap());
    let mut diff = repo
        .diff_tree_to_tree(Some(&from), Some(&to), None)
        .unwrap();
    diff.find_similar(Some(DiffFindOptions::new().renames(true)))
        .unwrap();
    let mut files = Vec::new();
    for (index, delta) in diff.deltas().enumerate() {
        let patch = Patch::from_diff(&diff, index).unwrap();
        let (insertions, deletions) = match &patch {
            Some(patch) => {
                let (_, i, d) = patch.line_stats().unwrap();
                (i, d)
            }
            None => (0, 0),
        };
        let binary = delta.flags().is_binary() || patch.is_none();
        files.push(file_change(&delta, insertions, deletions, binary));
    }
    DiffStat::from_files(files)
}

/// `diff_text_in` as it was, on libgit2's full diff (limit applied the same way).
fn reference_text(
    repo: &Repository,
    from: &Commit<'_>,
    to: &Commit<'_>,
    wanted: &dyn Fn(&str) -> bool,
    limit: usize,
) -> String {
    let (from, to) = (from.tree().unwrap(), to.tree().unwrap());
    let diff = repo
        .diff_tree_to_tree(Some(&from), Some(&to), None)
        .unwrap();
    let mut text = Vec::new();
    for (index, delta) in diff.deltas().enumerate() {
        let path = delta.new_file().path().or_else(|| delta.old_file().path());
        if !wanted(&path.unwrap().to_string_lossy()) {
            continue;
        }
        let Some(mut patch) = Patch::from_diff(&diff, index).unwrap() else {
            continue;
        };
        patch
            .print(&mut |_, _, line| {
                if matches!(line.origin(), '+' | '-' | ' ') {
                    text.push(line.origin() as u8);
                }
                text.extend_from_slice(line.content());
                true
            })
            .unwrap();
    }
    let text = String::from_utf8_lossy(&text).into_owned();
    if text.len() <= limit {
        return text;
    }
    let mut cut = limit;
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n… ({} more bytes of diff left out)\n",
        &text[..cut],
        text.len() - cut
    )
}

fn commit<'r>(repo: &'r Repository, tree: Oid) -> Commit<'r> {
    let sig = Signature::new("t", "t@example.com", &git2::Time::new(0, 0)).unwrap();
    let tree = repo.find_tree(tree).unwrap();
    let id = repo.commit(None, &sig, &sig, "m", &tree, &[]).unwrap();
    repo.find_commit(id).unwrap()
}

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
    let cases: Vec<(&str, Vec<(&str, Leaf)>, Vec<(&str, Leaf)>, &[&str])> = vec![
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

/// A small deterministic generator (xorshift64) of well-formed trees and changes to them.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Names chosen to sort around each other in git's order (`a` < `a-` < `a.b` < `a/` < `a0`).
    fn path(&mut self) -> String {
        const NAMES: [&str; 6] = ["a", "a-", "a.b", "a0", "b", "tests"];
        let depth = self.below(3) + 1;
        (0..depth)
            .map(|_| NAMES[self.below(NAMES.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join("/")
    }

    fn leaf(&mut self) -> Leaf {
        let text = format!("line {}\n", self.below(3)).repeat(self.below(3) as usize + 1);
        match self.below(8) {
            0 => Exec(text.into_bytes()),
            1 => Link(["a", "b"][self.below(2) as usize]),
            2 => Gitlink(1 + self.below(3) as u8),
            3 => File(b"\0bin".to_vec()),
            _ => File(text.into_bytes()),
        }
    }

    fn tree(&mut self) -> BTreeMap<String, Leaf> {
        let mut tree = BTreeMap::new();
        for _ in 0..self.below(12) {
            let (path, leaf) = (self.path(), self.leaf());
            insert(&mut tree, path, leaf);
        }
        tree
    }

    fn mutate(&mut self, tree: &mut BTreeMap<String, Leaf>) {
        let existing: Vec<String> = tree.keys().cloned().collect();
        match (self.below(5), existing.is_empty()) {
            (0, false) => {
                let path = &existing[self.below(existing.len() as u64) as usize];
                tree.remove(path);
            }
            (1, false) => {
                // A move, so rename detection has something to find.
                let path = existing[self.below(existing.len() as u64) as usize].clone();
                let leaf = tree.remove(&path).unwrap();
                let to = self.path();
                insert(tree, to, leaf);
            }
            (2, false) => {
                let path = existing[self.below(existing.len() as u64) as usize].clone();
                let leaf = self.leaf();
                tree.insert(path, leaf);
            }
            (3, false) => {
                // The same bytes under another mode.
                let path = &existing[self.below(existing.len() as u64) as usize];
                let leaf = tree.get_mut(path).unwrap();
                *leaf = match leaf.clone() {
                    File(b) => Exec(b),
                    Exec(_) | Gitlink(_) => Link("a"),
                    Link(t) => File(t.as_bytes().to_vec()),
                };
            }
            _ => {
                let (path, leaf) = (self.path(), self.leaf());
                insert(tree, path, leaf);
            }
        }
    }
}

/// Adds `path`, first removing whatever would make the tree ill-formed (a file where the path
/// needs a directory, or files under where it puts a file).
fn insert(tree: &mut BTreeMap<String, Leaf>, path: String, leaf: Leaf) {
    let mut prefix = String::new();
    for part in path.split('/') {
        if !prefix.is_empty() {
            tree.remove(&prefix);
        }
        prefix = if prefix.is_empty() {
            part.to_string()
        } else {
            format!("{prefix}/{part}")
        };
    }
    let under = format!("{path}/");
    tree.retain(|p, _| !p.starts_with(&under));
    tree.insert(path, leaf);
}

#[test]
fn the_diff_handle_takes_attributes_from_the_working_tree_not_from_the_index() {
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
        let stat = crate::git::diff_stat(dir.path(), &one.to_string(), &two.to_string()).unwrap();
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
    // A .gitattributes in the working tree applies, staged or not.
    std::fs::write(dir.path().join(".gitattributes"), "*.dat binary\n").unwrap();
    assert_eq!(
        binary(),
        (vec![true, false], vec![true, false]),
        "in the working tree"
    );
    let mut index = repo.index().unwrap();
    index.add_path(Path::new(".gitattributes")).unwrap();
    index.write().unwrap();
    assert_eq!(binary(), (vec![true, false], vec![true, false]), "staged");
    // Staged but deleted from the working tree: the one case where the diff handle differs
    // from a handle that reads the index.
    std::fs::remove_file(dir.path().join(".gitattributes")).unwrap();
    assert_eq!(
        binary(),
        (vec![false, false], vec![true, false]),
        "staged, deleted"
    );
}
