//! Trees built from path lists, a generator of well-formed trees and changes to them, and the
//! full-diff implementation the tree comparison replaced (the tests' reference). The tree merge's
//! tests use them too.

use std::collections::{BTreeMap, BTreeSet};

use git2::{Commit, DiffFindOptions, Oid, Patch, Repository, Signature};

use crate::diff::{file_change, DiffStat};

/// What a generated tree holds at a path.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Leaf {
    File(Vec<u8>),
    Exec(Vec<u8>),
    Link(&'static str),
    /// A submodule's commit (mode 160000) made of this byte (not 0); it need not exist.
    Gitlink(u8),
}
pub(crate) use Leaf::*;

pub(crate) fn file(text: &str) -> Leaf {
    File(text.as_bytes().to_vec())
}

/// Nested directories of a tree under construction.
#[derive(Default)]
struct Dir(BTreeMap<String, Node>);
enum Node {
    Leaf(Leaf),
    Dir(Dir),
}

pub(crate) fn write_tree<P: AsRef<str>>(repo: &Repository, files: &[(P, Leaf)]) -> Oid {
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
pub(crate) fn full_diff_paths(repo: &Repository, old: Oid, new: Oid) -> Vec<Vec<u8>> {
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
pub(crate) fn reference_stat(repo: &Repository, from: &Commit<'_>, to: &Commit<'_>) -> DiffStat {
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

/// `diff_text_in` as it was, on libgit2's full diff (each file's patch, shared out the same
/// way).
pub(crate) fn reference_text(
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
    let mut files = Vec::new();
    for (index, delta) in diff.deltas().enumerate() {
        let path = delta.new_file().path().or_else(|| delta.old_file().path());
        let path = path.unwrap().to_string_lossy().into_owned();
        if !wanted(&path) {
            continue;
        }
        let Some(mut patch) = Patch::from_diff(&diff, index).unwrap() else {
            continue;
        };
        let mut text = Vec::new();
        patch
            .print(&mut |_, _, line| {
                if matches!(line.origin(), '+' | '-' | ' ') {
                    text.push(line.origin() as u8);
                }
                text.extend_from_slice(line.content());
                true
            })
            .unwrap();
        files.push((path, text));
    }
    crate::diff::within_budget(&files, limit)
}

pub(crate) fn commit<'r>(repo: &'r Repository, tree: Oid) -> Commit<'r> {
    let sig = Signature::new("t", "t@example.com", &git2::Time::new(0, 0)).unwrap();
    let tree = repo.find_tree(tree).unwrap();
    let id = repo.commit(None, &sig, &sig, "m", &tree, &[]).unwrap();
    repo.find_commit(id).unwrap()
}

/// A small deterministic generator (xorshift64) of well-formed trees and changes to them.
pub(crate) struct Random(pub(crate) u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Names chosen to sort around each other in git's order (`a` < `a-` < `a.b` < `a/` < `a0`).
    pub(crate) fn path(&mut self) -> String {
        const NAMES: [&str; 6] = ["a", "a-", "a.b", "a0", "b", "tests"];
        let depth = self.below(3) + 1;
        (0..depth)
            .map(|_| NAMES[self.below(NAMES.len() as u64) as usize])
            .collect::<Vec<_>>()
            .join("/")
    }

    pub(crate) fn leaf(&mut self) -> Leaf {
        let text = format!("line {}\n", self.below(3)).repeat(self.below(3) as usize + 1);
        match self.below(8) {
            0 => Exec(text.into_bytes()),
            1 => Link(["a", "b"][self.below(2) as usize]),
            2 => Gitlink(1 + self.below(3) as u8),
            3 => File(b"\0bin".to_vec()),
            _ => File(text.into_bytes()),
        }
    }

    pub(crate) fn tree(&mut self) -> BTreeMap<String, Leaf> {
        let mut tree = BTreeMap::new();
        for _ in 0..self.below(12) {
            let (path, leaf) = (self.path(), self.leaf());
            insert(&mut tree, path, leaf);
        }
        tree
    }

    pub(crate) fn mutate(&mut self, tree: &mut BTreeMap<String, Leaf>) {
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
pub(crate) fn insert(tree: &mut BTreeMap<String, Leaf>, path: String, leaf: Leaf) {
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
