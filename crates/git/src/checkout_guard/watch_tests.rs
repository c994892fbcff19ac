//! The guard with a watch examines only what the kernel says was written, and must find what
//! a walk finds: each step below is run against a watched guard and an unwatched one on two
//! copies of one checkout, and both must report and leave the same.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::{CheckoutGuard, Guarded};
use crate::{init_with_commit, walks_of, Repo};

/// The runner's inputs in these tests.
fn input(path: &str) -> bool {
    path.starts_with(".autobuild/")
}

/// A checkout with tracked files, a runner input, an ignored file, an empty untracked
/// directory and the user's own uncommitted edit.
fn checkout(root: &Path) {
    fs::create_dir_all(root.join("src/deep")).unwrap();
    fs::create_dir_all(root.join(".autobuild/workflows")).unwrap();
    fs::write(root.join("src/a.txt"), "a\n").unwrap();
    fs::write(root.join("src/deep/b.txt"), "b\n").unwrap();
    fs::write(root.join("run.sh"), "echo\n").unwrap();
    fs::write(root.join(".gitignore"), "*.log\n").unwrap();
    fs::write(root.join(".autobuild/config.toml"), "[checks.test]\n").unwrap();
    fs::write(root.join(".autobuild/workflows/w.toml"), "# w\n").unwrap();
    init_with_commit(root, "main", "first").unwrap();
    fs::write(root.join("build.log"), "ignored\n").unwrap();
    fs::create_dir_all(root.join(".autobuild/prompts")).unwrap();
    fs::write(root.join("src/a.txt"), "the user's edit\n").unwrap();
}

type Step = fn(&Path);

const STEPS: &[(&str, Step)] = &[
    ("nothing", |_| {}),
    ("edit a tracked file", |r| {
        fs::write(r.join("src/deep/b.txt"), "agent\n").unwrap()
    }),
    ("edit the user's edited file", |r| {
        fs::write(r.join("src/a.txt"), "agent\n").unwrap()
    }),
    ("weaken the config", |r| {
        fs::write(r.join(".autobuild/config.toml"), "# no checks\n").unwrap()
    }),
    ("add a workflow", |r| {
        fs::write(r.join(".autobuild/workflows/evil.toml"), "#\n").unwrap()
    }),
    ("fill an empty directory", |r| {
        fs::write(r.join(".autobuild/prompts/p.md"), "#\n").unwrap()
    }),
    ("make a directory of inputs", |r| {
        fs::create_dir_all(r.join(".autobuild/profiles")).unwrap();
        fs::write(r.join(".autobuild/profiles/p.toml"), "#\n").unwrap();
    }),
    ("remove a tracked file", |r| {
        fs::remove_file(r.join("run.sh")).unwrap()
    }),
    ("make a file executable", |r| {
        fs::set_permissions(r.join("run.sh"), fs::Permissions::from_mode(0o755)).unwrap()
    }),
    ("rename a directory", |r| {
        fs::rename(r.join("src/deep"), r.join("src/flat")).unwrap()
    }),
    ("unignore a file", |r| {
        fs::write(r.join(".gitignore"), "\n").unwrap()
    }),
    ("write an ignored file", |r| {
        fs::write(r.join("build.log"), "agent\n").unwrap()
    }),
    ("replace the config by a link", |r| {
        fs::remove_file(r.join(".autobuild/config.toml")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", r.join(".autobuild/config.toml")).unwrap();
    }),
    ("write in the runner's own directory", |r| {
        fs::create_dir_all(r.join(".autobuild/runs/T")).unwrap();
        fs::write(r.join(".autobuild/runs/T/state.json"), "{}\n").unwrap();
    }),
];

/// What a restore reported and left, with the backup's directory named alike for both.
fn after_step(dir: &Path, watched: bool, step: Step) -> (Guarded, Vec<(String, String)>) {
    let root = dir.join("repo");
    checkout(&root);
    let guard = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &input).unwrap();
    let guard = if watched { guard } else { guard.unwatched() };
    step(&root);
    let backup = dir.join("backup");
    let (mut guarded, _) = guard
        .restore(&Repo::discover(&root).unwrap(), &backup, &input)
        .unwrap();
    let named = |lines: &mut Vec<String>| {
        for line in lines {
            *line = line.replace(&backup.display().to_string(), "BACKUP");
        }
    };
    named(&mut guarded.kept);
    named(&mut guarded.reverted);
    (guarded, files(&root))
}

/// Every file below `root` but `.git`, with its content (a link's target).
fn files(root: &Path) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut pending = vec![root.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            let name = path.strip_prefix(root).unwrap().display().to_string();
            let kind = entry.file_type().unwrap();
            if name == ".git" {
                continue;
            } else if kind.is_dir() {
                pending.push(path);
            } else if kind.is_symlink() {
                found.push((
                    name,
                    format!("-> {}", fs::read_link(&path).unwrap().display()),
                ));
            } else {
                let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o111;
                found.push((
                    name,
                    format!("{mode:o} {}", fs::read_to_string(&path).unwrap()),
                ));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn what_the_watch_hears_is_what_a_walk_finds() {
    for (name, step) in STEPS {
        let (watched, unwatched) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let heard = after_step(watched.path(), true, *step);
        let walked = after_step(unwatched.path(), false, *step);
        assert_eq!(heard, walked, "{name}");
    }
}

/// A step that wrote nothing in the checkout, or one file, costs no walk of it: only the
/// capture walks.
#[test]
fn a_watched_step_does_not_walk_the_checkout() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    checkout(&root);
    let guard = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &input).unwrap();
    let walks = walks_of(&root);
    let backup = dir.path().join("backup");

    let (guarded, next) = guard
        .restore(&Repo::discover(&root).unwrap(), &backup, &input)
        .unwrap();
    assert_eq!(guarded, Guarded::default());
    fs::write(root.join(".autobuild/config.toml"), "# weakened\n").unwrap();
    let (guarded, _) = next
        .restore(&Repo::discover(&root).unwrap(), &backup, &input)
        .unwrap();

    assert_eq!(guarded.reverted.len(), 1, "{guarded:?}");
    assert_eq!(
        fs::read_to_string(root.join(".autobuild/config.toml")).unwrap(),
        "[checks.test]\n"
    );
    assert_eq!(walks_of(&root), walks, "no walk after the capture");
}

/// A directory's watch hears only what is written through a name in it: a hard link made in
/// one step, elsewhere, to a runner input, and written through in the next, is heard by the
/// input's own watch.
#[test]
fn an_input_written_through_a_hard_link_from_elsewhere_is_put_back() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("repo");
    checkout(&root);
    let backup = dir.path().join("backup");
    let outside = dir.path().join("elsewhere.toml");
    let guard = CheckoutGuard::capture(&Repo::discover(&root).unwrap(), &input).unwrap();
    fs::hard_link(root.join(".autobuild/config.toml"), &outside).unwrap();
    let (guarded, next) = guard
        .restore(&Repo::discover(&root).unwrap(), &backup, &input)
        .unwrap();
    assert_eq!(guarded, Guarded::default());

    fs::write(&outside, "# weakened through the link\n").unwrap();
    let (guarded, _) = next
        .restore(&Repo::discover(&root).unwrap(), &backup, &input)
        .unwrap();

    assert_eq!(guarded.reverted.len(), 1, "{guarded:?}");
    assert_eq!(
        fs::read_to_string(root.join(".autobuild/config.toml")).unwrap(),
        "[checks.test]\n"
    );
}
