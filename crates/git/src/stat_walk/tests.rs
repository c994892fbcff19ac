use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::*;
use crate::repo::open_checkout;
use crate::snapshot::changes_among;

/// What the index recorded for a file in the table below.
fn recorded() -> Stat {
    Stat {
        mode: 0o100644,
        mtime: (100, 5),
        ctime: (100, 5),
        ino: 7,
        uid: 1,
        gid: 1,
        size: 3,
    }
}

#[test]
fn any_metadata_difference_or_a_racy_record_makes_a_candidate() {
    let written = (200, 0);
    let table: Vec<(&str, Stat, (i32, u32), bool)> = vec![
        ("same", recorded(), written, false),
        (
            "mode",
            Stat {
                mode: 0o100755,
                ..recorded()
            },
            written,
            true,
        ),
        (
            "symlink",
            Stat {
                mode: 0o120000,
                ..recorded()
            },
            written,
            true,
        ),
        (
            "mtime ns",
            Stat {
                mtime: (100, 6),
                ..recorded()
            },
            written,
            true,
        ),
        (
            "ctime s",
            Stat {
                ctime: (101, 5),
                ..recorded()
            },
            written,
            true,
        ),
        (
            "inode",
            Stat {
                ino: 8,
                ..recorded()
            },
            written,
            true,
        ),
        (
            "owner",
            Stat {
                uid: 2,
                ..recorded()
            },
            written,
            true,
        ),
        (
            "group",
            Stat {
                gid: 2,
                ..recorded()
            },
            written,
            true,
        ),
        (
            "size",
            Stat {
                size: 4,
                ..recorded()
            },
            written,
            true,
        ),
        ("index written in the same tick", recorded(), (100, 5), true),
        ("index written before the record", recorded(), (99, 0), true),
        ("index written just after", recorded(), (100, 6), false),
    ];
    for (name, found, written, expected) in table {
        assert_eq!(may_differ(&recorded(), &found, written), expected, "{name}");
    }
}

/// A committed repository with tracked files in nested directories, ignore rules, and an
/// index written well after its files were (so no entry is racily clean).
fn settled_repo(extra_files: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut files = vec![
        ("a.txt", "a\n".to_string()),
        ("src/lib.rs", "lib\n".into()),
        ("src/deep/er/mod.rs", "mod\n".into()),
        ("src/deep/other.rs", "other\n".into()),
        ("tool.sh", "echo\n".into()),
        ("build/keep.txt", "keep\n".into()),
        (".gitignore", "ignored/\n*.log\nbuild/*.o\n".into()),
        // Names that sort between a directory's name and its entries in the index.
        ("src.rs", "top\n".into()),
        ("src-x/y.rs", "y\n".into()),
        ("src/deep.txt", "beside\n".into()),
    ];
    for i in 0..extra_files {
        files.push((
            Box::leak(format!("many/d{}/f{i}.txt", i / 50).into_boxed_str()),
            format!("{i}\n"),
        ));
    }
    for (path, text) in &files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
    crate::init_with_commit(root, "main", "first").unwrap();
    // Rewrite the index once every file's stamp is in the past.
    std::thread::sleep(std::time::Duration::from_millis(30));
    crate::checkpoint(root, "settle").unwrap();
    dir
}

/// Paths with whether each is present, as `changes_among` lists them.
type Changes = Vec<(Vec<u8>, bool)>;

/// The changes the fast path reports and whether it was taken, next to libgit2's full walk.
fn both_ways(root: &Path) -> (Changes, Changes, bool) {
    let repo = open_checkout(root).unwrap();
    let mut index = repo.index().unwrap();
    let file = index.path().unwrap().to_path_buf();
    // Three threads even on a small tree, so their sharing of the work is tested too.
    let candidates = candidates_on(&index, &file, root, 3);
    let fast = candidates.is_some();
    let mut quick = changes_among(&repo, &mut index, root, candidates).unwrap();
    index.read(true).unwrap();
    let mut full = changes_among(&repo, &mut index, root, None).unwrap();
    quick.sort();
    full.sort();
    (quick, full, fast)
}

fn write(root: &Path, path: &str, text: &str) {
    let path = root.join(path);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

#[test]
fn the_fast_path_finds_exactly_what_the_full_walk_finds() {
    type Change = fn(&Path);
    let table: Vec<(&str, Change, usize)> = vec![
        ("nothing", |_| {}, 0),
        ("same-size edit", |r| write(r, "a.txt", "b\n"), 1),
        ("deep edit", |r| write(r, "src/deep/er/mod.rs", "MOD\n"), 1),
        ("new file", |r| write(r, "src/new.rs", "new\n"), 1),
        (
            "new nested directory",
            |r| write(r, "fresh/x/y.rs", "y\n"),
            1,
        ),
        (
            "ignored file and directory",
            |r| {
                write(r, "debug.log", "log\n");
                write(r, "ignored/a/b.txt", "b\n");
                write(r, "build/out.o", "o\n");
            },
            0,
        ),
        (
            "un-ignored by an edited .gitignore",
            |r| {
                write(r, "build/out.o", "o\n");
                write(r, ".gitignore", "ignored/\n*.log\n");
            },
            2,
        ),
        (
            "deleted file",
            |r| fs::remove_file(r.join("src/lib.rs")).unwrap(),
            1,
        ),
        (
            "deleted directory",
            |r| fs::remove_dir_all(r.join("src/deep")).unwrap(),
            2,
        ),
        (
            "file becomes a directory",
            |r| {
                fs::remove_file(r.join("a.txt")).unwrap();
                write(r, "a.txt/inside", "i\n");
            },
            2,
        ),
        (
            "directory becomes a file",
            |r| {
                fs::remove_dir_all(r.join("src/deep/er")).unwrap();
                write(r, "src/deep/er", "file\n");
            },
            2,
        ),
        (
            "made executable",
            |r| fs::set_permissions(r.join("tool.sh"), fs::Permissions::from_mode(0o755)).unwrap(),
            1,
        ),
        (
            "file becomes a symlink",
            |r| {
                fs::remove_file(r.join("src/lib.rs")).unwrap();
                std::os::unix::fs::symlink("/etc/passwd", r.join("src/lib.rs")).unwrap();
            },
            1,
        ),
        (
            "symlink retargeted",
            |r| {
                fs::remove_file(r.join("link")).unwrap();
                std::os::unix::fs::symlink("src", r.join("link")).unwrap();
            },
            1,
        ),
        (
            "touched, content kept",
            |r| write(r, "src/deep/other.rs", "other\n"),
            0,
        ),
        (
            "empty new directory",
            |r| fs::create_dir_all(r.join("empty/dir")).unwrap(),
            0,
        ),
        (
            "edits beside directories of the same name",
            |r| {
                write(r, "src.rs", "TOP\n");
                write(r, "src-x/y.rs", "Y\n");
                write(r, "src/deep.txt", "BESIDE\n");
            },
            3,
        ),
        (
            "a file beside a directory of the same name becomes one",
            |r| {
                fs::remove_file(r.join("src/deep.txt")).unwrap();
                write(r, "src/deep.txt/x", "x\n");
            },
            2,
        ),
        (
            "edit among many",
            |r| write(r, "many/d3/f150.txt", "changed\n"),
            1,
        ),
    ];
    for (name, change, expected) in table {
        let dir = settled_repo(300);
        change(dir.path());
        let (quick, full, fast) = both_ways(dir.path());
        assert!(fast, "{name}: the fast path gave up");
        assert_eq!(quick, full, "{name}");
        assert_eq!(full.len(), expected, "{name}: {full:?}");
    }
}

#[test]
fn a_change_in_the_tick_the_index_was_written_is_found() {
    for round in 0..10 {
        let dir = settled_repo(0);
        let root = dir.path();
        write(root, "a.txt", "1\n");
        crate::checkpoint(root, "turn").unwrap();
        // At once, same size: every stamp may equal what the index just recorded.
        write(root, "a.txt", "2\n");
        let (quick, full, _) = both_ways(root);
        assert_eq!(quick, full, "round {round}");
        assert_eq!(full.len(), 1, "round {round}");
    }
}

#[test]
fn what_it_does_not_model_makes_it_give_up() {
    let dir = settled_repo(0);
    let root = dir.path();
    // Untracked, it is a candidate like any untracked directory; inside a tracked one the
    // walk cannot tell what libgit2 makes of it.
    write(root, "fresh/inner/.git/HEAD", "ref: refs/heads/main\n");
    let (quick, full, fast) = both_ways(root);
    assert!(fast);
    assert_eq!(quick, full);
    write(root, "src/deep/.git/HEAD", "ref: refs/heads/main\n");
    let (quick, full, fast) = both_ways(root);
    assert!(
        !fast,
        "a repository inside a tracked directory is libgit2's to judge"
    );
    assert_eq!(quick, full);

    let dir = settled_repo(0);
    let root = dir.path();
    let repo = open_checkout(root).unwrap();
    let index = repo.index().unwrap();
    let file = index.path().unwrap().to_path_buf();
    fs::remove_file(&file).unwrap();
    assert!(candidates(&index, &file, root).is_none(), "no index file");
}

#[test]
fn the_flags_it_gives_up_on_are_git_s_conflict_stage_assume_valid_skip_worktree_and_intent_to_add()
{
    // Stage bits 12-13 and assume-valid bit 15; extended: intent-to-add 13, skip-worktree 14.
    assert_eq!(UNMODELLED_FLAGS, 0xb000);
    assert_eq!(UNMODELLED_EXTENDED, 0x6000);
}
