//! A blocked run kept in one checkout and resumed in another (`task --resume
//! --moved-checkout`): what a CI job does when every job has a new workspace path (act,
//! docs/scale-out.md). The run record names the first checkout's worktree; taken over, the run
//! goes on from its next turn in the second checkout. An edited record is still refused.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::loop_fixture::{self, assert_exit, Project, TASK};

/// A project whose run of TASK-1 ends blocked after two turns (a different wrong answer each
/// turn) until `fixed` exists; and a second checkout of it that has the task branch and the
/// run directory, as the workflow's restore step leaves them.
fn blocked_in_one_checkout() -> (Project, PathBuf, PathBuf) {
    let project = Project::new();
    let fixed = project.outside("fixed");
    project.write(
        ".autobuild/agents/player.sh",
        &format!(
            ". .autobuild/agents/write_greeting.sh\n\
             if [ -e '{}' ]; then write_greeting '!'; else write_greeting \"?$AUTOBUILD_TURN\"; fi\n\
             echo \"Turn $AUTOBUILD_TURN: all tests pass.\"\n",
            fixed.display()
        ),
    );
    let project = project.commit();
    assert_exit(&project.run(&["task", TASK, "--max-turns", "2"]), 3);

    let other = project.root.parent().unwrap().join("other-checkout");
    let git = |dir: &Path, args: &[&str]| loop_fixture::git(dir, args);
    git(
        project.root.parent().unwrap(),
        &[
            "clone",
            "-q",
            project.root.to_str().unwrap(),
            other.to_str().unwrap(),
        ],
    );
    let branch = format!("+refs/heads/autobuild/{TASK}:refs/heads/autobuild/{TASK}");
    git(&other, &["fetch", "-q", "origin", &branch]);
    copy_dir(
        &project.run_dir(),
        &other.join(".autobuild/runs").join(TASK),
    );
    (project, other, fixed)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn autobuild(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .env("AUTOBUILD_CONFIG_DIR", dir.join("no-such-config-dir"))
        .env_remove("RUST_LOG")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
}

fn state(dir: &Path) -> serde_json::Value {
    let file = dir.join(".autobuild/runs").join(TASK).join("state.json");
    serde_json::from_str(&fs::read_to_string(file).unwrap()).unwrap()
}

const RESUME: &[&str] = &["task", TASK, "--resume", "--max-turns", "2", "--no-merge"];

#[test]
fn a_blocked_run_kept_in_another_checkout_goes_on_from_its_next_turn_there() {
    let (project, other, fixed) = blocked_in_one_checkout();
    fs::write(&fixed, "").unwrap();
    let first_tip = project.git(&["rev-parse", &project.branch()]);

    // Without --moved-checkout the record naming the other checkout's worktree is refused.
    assert_exit(&autobuild(&other, RESUME), 2);
    assert!(!other.join(".autobuild/worktrees").join(TASK).exists());

    let moved: Vec<&str> = RESUME.iter().copied().chain(["--moved-checkout"]).collect();
    let output = autobuild(&other, &moved);

    assert_exit(&output, 0);
    let runs = other.join(".autobuild/runs").join(TASK);
    for turn in [1, 2] {
        assert!(runs.join(format!("player_turn_{turn}.json")).exists());
    }
    assert!(runs.join("player_turn_3.json").exists(), "the turns go on");
    let state = state(&other);
    assert_eq!(state["status"], "approved");
    let worktree = other.join(".autobuild/worktrees").join(TASK);
    assert_eq!(state["worktree"], worktree.display().to_string());
    assert!(worktree.join("lib/greet.sh").is_file());
    // The first checkout's worktree and branch are not touched.
    assert!(project.worktree().is_dir());
    assert_eq!(project.git(&["rev-parse", &project.branch()]), first_tip);
    // The kept branch goes on: its turns are on top of the first checkout's.
    let history = loop_fixture::git(&other, &["rev-list", &project.branch()]);
    assert!(history.contains(first_tip.trim()), "{history}");
}

#[test]
fn an_edited_record_is_not_taken_over() {
    let (_project, other, _) = blocked_in_one_checkout();
    let file = other.join(".autobuild/runs").join(TASK).join("state.json");
    let edits = [
        ("worktree", "/home/me/work".to_string()),
        ("branch", "main".to_string()),
    ];
    for (field, value) in edits {
        let mut record = state(&other);
        let kept = record.clone();
        record[field] = value.clone().into();
        fs::write(&file, record.to_string()).unwrap();

        let output = autobuild(&other, &["task", TASK, "--resume", "--moved-checkout"]);

        assert_exit(&output, 2);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&value), "{field}: {stderr}");
        assert!(!other.join(".autobuild/worktrees").join(TASK).exists());
        assert_eq!(state(&other)[field], serde_json::Value::from(value));
        fs::write(&file, kept.to_string()).unwrap();
    }
}
