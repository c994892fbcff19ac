use super::*;

use testkit::git;

fn write(dir: &Path, path: &str, text: &str) {
    let file = dir.join(path);
    fs::create_dir_all(file.parent().unwrap()).unwrap();
    fs::write(file, text).unwrap();
}

/// A user repository whose history and tip hold a hidden test, and its task repository.
fn setup() -> (tempfile::TempDir, PathBuf, PathBuf, TaskBase) {
    let dir = tempfile::tempdir().unwrap();
    let user = dir.path().join("user");
    fs::create_dir_all(&user).unwrap();
    git(&user, &["init", "-q", "-b", "main"]);
    write(&user, "tests/acceptance/test_a.sh", "OLD-SECRET\n");
    git(&user, &["add", "-A"]);
    git(&user, &["commit", "-q", "-m", "first"]);
    write(&user, "src/a.txt", "a\n");
    write(&user, "src/gone.txt", "gone\n");
    write(&user, "tests/acceptance/test_a.sh", "SECRET\n");
    write(&user, "tests/unit.sh", "unit\n");
    git(&user, &["add", "-A"]);
    git(&user, &["commit", "-q", "-m", "second"]);
    let base = git(&user, &["rev-parse", "main"]);
    let task = dir.path().join("task");
    let made = create_task_repo(
        &user,
        &task,
        &base,
        "main",
        &["tests/acceptance/**".to_string()],
    )
    .unwrap();
    (dir, user, task, made)
}

#[test]
fn the_task_repository_holds_the_base_without_hidden_paths_and_no_history() {
    let (_dir, _user, task, made) = setup();
    assert_eq!(task_base(&task).unwrap(), made);
    let files = git(&task, &["ls-tree", "-r", "--name-only", "main"]);
    assert_eq!(files, "src/a.txt\nsrc/gone.txt\ntests/unit.sh");
    assert_eq!(git(&task, &["rev-list", "--all", "--count"]), "1");
    let objects = git(&task, &["cat-file", "--batch-all-objects", "--batch-check"]);
    for line in objects.lines() {
        let id = line.split(' ').next().unwrap();
        let content = git(&task, &["cat-file", "-p", id]);
        assert!(!content.contains("SECRET"), "{line}: {content}");
    }
}

#[test]
fn the_transplant_applies_exactly_the_work_onto_the_real_base() {
    let (_dir, user, task, made) = setup();
    let worktree = task.parent().unwrap().join("wt");
    git(
        &task,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "autobuild/T",
            worktree.to_str().unwrap(),
        ],
    );
    write(&worktree, "src/a.txt", "changed\n");
    write(&worktree, "src/new.txt", "new\n");
    fs::remove_file(worktree.join("src/gone.txt")).unwrap();
    // Never carried over, whatever the task branch holds.
    write(&worktree, "tests/acceptance/test_a.sh", "weakened\n");
    git(&worktree, &["add", "-A"]);
    git(&worktree, &["commit", "-q", "-m", "work"]);
    let approved = git(&worktree, &["rev-parse", "HEAD"]);
    let hidden = hidden_globs(&task).unwrap();

    let commit = transplant(&user, &worktree, &made, &approved, "autobuild/T", &hidden).unwrap();

    // A landing tried again after a kill writes the same commit (the branch is held there):
    // author and committer, times included, are the approved commit's, not the clock's.
    let who = "--format=%an %ae %at | %cn %ce %ct";
    assert_eq!(
        git(&user, &["show", "-s", who, &commit]),
        git(&worktree, &["show", "-s", who, &approved])
    );
    assert_eq!(
        transplanted(&user, &worktree, &made, &approved, &hidden).unwrap(),
        commit
    );
    // Edits made after approval are kept in the user's repository, hidden paths left out.
    write(&worktree, "src/late.txt", "late\n");
    write(&worktree, "tests/acceptance/late.sh", "planted\n");
    let kept = keep_unreviewed(
        &user,
        &worktree,
        &made,
        &approved,
        "refs/autobuild/backup/T",
        "kept",
        &hidden,
    )
    .unwrap()
    .unwrap();
    assert!(kept.starts_with("refs/autobuild/backup/T/"), "{kept}");
    let files = git(&user, &["ls-tree", "-r", "--name-only", &kept]);
    assert!(files.contains("src/late.txt"), "{files}");
    assert!(!files.contains("late.sh"), "{files}");
    assert_eq!(
        git(&user, &["show", &format!("{kept}:src/late.txt")]),
        "late"
    );

    assert_eq!(git(&user, &["rev-parse", "autobuild/T"]), commit);
    assert_eq!(
        git(&user, &["rev-parse", "autobuild/T~1"]),
        made.real.to_string()
    );
    assert_eq!(
        git(&user, &["ls-tree", "-r", "--name-only", "autobuild/T"]),
        "src/a.txt\nsrc/new.txt\ntests/acceptance/test_a.sh\ntests/unit.sh"
    );
    assert_eq!(git(&user, &["show", "autobuild/T:src/a.txt"]), "changed");
    assert_eq!(
        git(&user, &["show", "autobuild/T:tests/acceptance/test_a.sh"]),
        "SECRET"
    );
    let files = hidden_files(&user, made.real, &hidden).unwrap();
    assert_eq!(
        files,
        vec![(
            "tests/acceptance/test_a.sh".to_string(),
            b"SECRET\n".to_vec(),
            false
        )]
    );
    assert_eq!(of_worktree(&worktree), None);
}
