//! Run ids given to `status`, `logs`, `resume`, `complete` and `discard` are checked like task
//! ids before anything is read: an id that is a path (`../../x`, `/abs/path`, `a/b`) or empty
//! is a usage error (exit 2), even when it leads to a `state.json` naming a real branch, and
//! nothing anywhere is read as a run, changed, created or deleted. Earlier runs, kept as
//! `<ID>@<N>`, keep working by that id.

use crate::loop_fixture;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use loop_fixture::{assert_exit, copy_tree, stderr, stdout, Project, TASK};

/// Every file and directory under `dir` (links not followed) with its length and mtime.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (u64, Option<SystemTime>)> {
    let mut all = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in fs::read_dir(&next).unwrap() {
            let entry = entry.unwrap();
            let meta = entry.path().symlink_metadata().unwrap();
            if meta.is_dir() {
                pending.push(entry.path());
            }
            all.insert(entry.path(), (meta.len(), meta.modified().ok()));
        }
    }
    all
}

/// An approved run of TASK-1 left for `complete`: its branch and worktree exist.
fn approved_project() -> Project {
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    assert!(project.branch_exists(&project.branch()));
    project
}

#[test]
fn run_ids_that_are_paths_or_empty_are_refused_and_nothing_is_touched() {
    let project = approved_project();
    let state = fs::read(project.run_dir().join("state.json")).unwrap();
    let runs = project.root.join(".autobuild/runs");
    let outside = project.root.parent().unwrap().to_path_buf();
    let absolute = outside.join("abs/path");
    // A decoy record where each id would lead, naming the run's real branch and worktree:
    // before the fix, `discard ../../x --yes` deleted that branch.
    let decoys = [
        ("../../x", project.root.join("x")),
        ("../../../x", outside.join("x")),
        (absolute.to_str().unwrap(), absolute.clone()),
        ("a/b", runs.join("a/b")),
        ("", runs.clone()),
    ];
    for (_, dir) in &decoys {
        fs::create_dir_all(dir).unwrap();
        if !dir.join("state.json").exists() {
            fs::write(dir.join("state.json"), &state).unwrap();
        }
    }
    let before = snapshot(&outside);

    for command in ["status", "logs", "resume", "complete", "discard"] {
        for (id, _) in &decoys {
            let mut args = vec![command, id];
            if command == "discard" {
                args.push("--yes");
            }
            let output = project.run(&args);
            assert_exit(&output, 2);
            let err = stderr(&output);
            assert!(
                err.starts_with("error: invalid run id: "),
                "{args:?}: {err}"
            );
            assert!(
                err.contains("help: a run id is a task or feature id"),
                "{err}"
            );
            assert_eq!(stdout(&output), "", "{args:?}");
        }
    }

    assert!(project.branch_exists(&project.branch()));
    assert!(project.worktree().is_dir());
    assert_eq!(snapshot(&outside), before, "a command changed a file");
}

#[test]
fn earlier_runs_keep_working_by_their_at_n_id() {
    let project = approved_project();
    let earlier = project.root.join(".autobuild/runs/TASK-1@1");
    fs::create_dir_all(&earlier).unwrap();
    copy_tree(&project.run_dir(), &earlier);

    let output = project.run(&["status", "TASK-1@1"]);
    assert_exit(&output, 0);
    assert!(
        stdout(&output).starts_with("TASK-1: "),
        "{}",
        stdout(&output)
    );
    assert!(stdout(&output).contains("TASK-1@1"), "{}", stdout(&output));

    let output = project.run(&["logs", "TASK-1@1", "--turn", "1"]);
    assert_exit(&output, 0);
    assert!(stdout(&output).contains("TASK-1@1/"), "{}", stdout(&output));

    let output = project.run(&["discard", "TASK-1@1", "--yes"]);
    assert_exit(&output, 0);
    assert!(!project.branch_exists(&project.branch()));
    assert_eq!(
        loop_fixture::json(&earlier.join("state.json"))["status"],
        "discarded"
    );
}

#[test]
fn a_record_of_another_task_is_not_acted_on() {
    let project = approved_project();
    let other = project.root.join(".autobuild/runs/TASK-2");
    fs::create_dir_all(&other).unwrap();
    fs::copy(
        project.run_dir().join("state.json"),
        other.join("state.json"),
    )
    .unwrap();

    let output = project.run(&["discard", "TASK-2", "--yes"]);

    // Run records are untrusted input: a foreign one is a problem in that file, exit 2
    // (issue 20; it was 1).
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("is of task `TASK-1`, not of TASK-2"),
        "{}",
        stderr(&output)
    );
    assert!(project.branch_exists(&project.branch()));
}

#[test]
fn a_run_directory_that_links_out_of_the_runs_directory_is_not_followed() {
    let project = approved_project();
    let outside = project.root.parent().unwrap().join("elsewhere");
    fs::create_dir_all(&outside).unwrap();
    fs::copy(
        project.run_dir().join("state.json"),
        outside.join("state.json"),
    )
    .unwrap();
    std::os::unix::fs::symlink(&outside, project.root.join(".autobuild/runs/TASK-3")).unwrap();

    let output = project.run(&["discard", "TASK-3", "--yes"]);

    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("autobuild does not follow it"),
        "{}",
        stderr(&output)
    );
    assert!(project.branch_exists(&project.branch()));
}

#[test]
fn a_record_naming_the_users_branch_and_worktree_is_refused_and_both_are_intact() {
    let project = approved_project();
    // The user's own branch, checked out in a linked worktree with uncommitted work.
    let mine = project.root.parent().unwrap().join("mine");
    project.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "mine",
        mine.to_str().unwrap(),
    ]);
    fs::write(mine.join("uncommitted.txt"), "my work\n").unwrap();
    let state_file = project.run_dir().join("state.json");
    let mut state = project.state();
    state["branch"] = "mine".into();
    state["worktree"] = mine.to_str().unwrap().into();
    fs::write(&state_file, serde_json::to_string_pretty(&state).unwrap()).unwrap();
    let before = snapshot(&mine);

    for args in [
        vec!["discard", TASK, "--yes"],
        vec!["complete", TASK],
        vec!["resume", TASK],
    ] {
        let output = project.run(&args);

        assert_exit(&output, 2);
        let err = stderr(&output);
        assert!(
            err.contains("autobuild does not act on this run record: it names branch `mine`, not `autobuild/TASK-1`; it names worktree"),
            "{args:?}: {err}"
        );
        assert!(err.contains(&state_file.display().to_string()), "{err}");
        assert!(project.branch_exists("mine"), "{args:?}");
        assert_eq!(snapshot(&mine), before, "{args:?}");
        assert!(project.branch_exists(&project.branch()), "{args:?}");
    }
    assert_eq!(
        fs::read_to_string(mine.join("uncommitted.txt")).unwrap(),
        "my work\n"
    );
}
