use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use git2::{Repository, TreeWalkMode, TreeWalkResult};

use super::{check_out_head, parts};
use testkit::git;

/// A repository whose tree has files at the root and in nested directories, a directory of
/// its own `.gitattributes` (text files there get CRLF endings when checked out), an
/// executable, a link and a name that is not UTF-8.
fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    };
    write("a.txt", "a\n");
    write("b.txt", "b\n");
    for n in 0..5 {
        write(&format!("big/f{n}.txt"), &format!("line {n}\nnext\n"));
    }
    for n in 0..3 {
        write(&format!("big/sub/g{n}.txt"), &format!("g {n}\n"));
    }
    write("crlf/.gitattributes", "*.txt text eol=crlf\n");
    write("crlf/one.txt", "one\ntwo\n");
    write("crlf/two.txt", "three\n");
    write("small/only.txt", "only\n");
    write("tool.sh", "#!/bin/sh\n");
    fs::set_permissions(root.join("tool.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    symlink("a.txt", root.join("link")).unwrap();
    fs::write(root.join(OsStr::from_bytes(b"odd-\xff.txt")), "odd\n").unwrap();
    git(&root, &["init", "-q", "-b", "main"]);
    git(&root, &["add", "-A"]);
    git(&root, &["commit", "-q", "-m", "files"]);
    dir
}

/// Every file's path under `tree`, in tree order.
fn files_of(repo: &Repository) -> Vec<Vec<u8>> {
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let mut files = Vec::new();
    tree.walk(TreeWalkMode::PreOrder, |dir, entry| {
        if entry.kind() != Some(git2::ObjectType::Tree) {
            files.push([dir.as_bytes(), entry.name_bytes()].concat());
        }
        TreeWalkResult::Ok
    })
    .unwrap();
    files
}

#[test]
fn parts_hold_every_file_once_in_tree_order_and_at_most_max_files_each() {
    let dir = repository();
    let repo = Repository::open(dir.path().join("repo")).unwrap();
    let tree = repo.head().unwrap().peel_to_tree().unwrap();
    let files = files_of(&repo);
    assert_eq!(files.len(), 17);
    for max in [1, 2, 3, 5, 8, 17, 100] {
        let parts = parts(&repo, &tree, max).unwrap();
        // Each path stands for itself or for every file under it.
        let expanded: Vec<Vec<Vec<u8>>> = parts
            .iter()
            .map(|part| {
                part.iter()
                    .flat_map(|path| {
                        let under = [path.as_slice(), b"/"].concat();
                        files
                            .iter()
                            .filter(move |file| *file == path || file.starts_with(&under))
                            .cloned()
                    })
                    .collect()
            })
            .collect();
        assert_eq!(expanded.concat(), files, "max {max}");
        for part in &expanded {
            assert!(!part.is_empty() && part.len() <= max, "max {max}: {part:?}");
        }
        if max >= files.len() {
            assert_eq!(parts.len(), 1);
        }
    }
}

/// Records a worktree of `main` on a new branch with git, without checking anything out.
fn record_worktree(repo: &Path, path: &Path, branch: &str) -> Repository {
    git(
        repo,
        &[
            "worktree",
            "add",
            "-q",
            "--no-checkout",
            "-b",
            branch,
            path.to_str().unwrap(),
            "main",
        ],
    );
    Repository::open(path).unwrap()
}

/// A file as a checkout left it: its path, mode and bytes (a link's target).
type File = (Vec<u8>, u32, Vec<u8>);
/// An index entry: its path, mode, object and size.
type Entry = (Vec<u8>, u32, git2::Oid, u32);

/// What a checkout left: its files, and its index's entries.
fn checkout_of(worktree: &Path) -> (Vec<File>, Vec<Entry>) {
    let repo = Repository::open(worktree).unwrap();
    let index = repo.index().unwrap();
    let entries: Vec<_> = index
        .iter()
        .map(|e| (e.path.clone(), e.mode, e.id, e.file_size))
        .collect();
    let files = entries
        .iter()
        .map(|(path, _, _, _)| {
            let on_disk = worktree.join(OsStr::from_bytes(path));
            let meta = fs::symlink_metadata(&on_disk).unwrap();
            let bytes = if meta.file_type().is_symlink() {
                fs::read_link(&on_disk)
                    .unwrap()
                    .as_os_str()
                    .as_bytes()
                    .to_vec()
            } else {
                fs::read(&on_disk).unwrap()
            };
            (path.clone(), meta.permissions().mode(), bytes)
        })
        .collect();
    (files, entries)
}

#[test]
fn a_worktree_checked_out_in_parts_is_the_worktree_one_checkout_makes() {
    let dir = repository();
    let root = dir.path().join("repo");
    let whole = dir.path().join("whole");
    let parted = dir.path().join("parted");
    check_out_head(&record_worktree(&root, &whole, "whole"), usize::MAX).unwrap();
    check_out_head(&record_worktree(&root, &parted, "parted"), 2).unwrap();

    let (files, entries) = checkout_of(&parted);
    assert_eq!(entries.len(), 17);
    assert_eq!((files.clone(), entries), checkout_of(&whole));
    // The filter of the directory's own `.gitattributes` applied in both.
    let crlf = files
        .iter()
        .find(|(path, _, _)| path == b"crlf/one.txt")
        .unwrap();
    assert_eq!(crlf.2, b"one\r\ntwo\r\n");
    // git sees nothing changed, staged or untracked.
    assert_eq!(
        git(&parted, &["status", "--porcelain", "--untracked-files=all"]),
        ""
    );
}
