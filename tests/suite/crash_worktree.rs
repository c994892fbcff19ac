//! Crash safety around the task worktree, with faults made to happen for real: a SIGKILL in the
//! middle of checking out a 20,000-file worktree, a write limit that makes the checkout fail
//! (as a full disk does), two runs starting at the same instant, and a check left running by a
//! killed runner.

use crate::loop_fixture;

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use loop_fixture::*;

const BULK_FILES: usize = 20_000;

fn bulk_name(n: usize) -> String {
    format!("bulk/f{n:05}.txt")
}

/// The sample project plus `BULK_FILES` small files under `bulk/`.
fn bulk_project() -> Project {
    let project = Project::new();
    let bulk = project.root.join("bulk");
    std::fs::create_dir_all(&bulk).unwrap();
    for n in 0..BULK_FILES {
        std::fs::write(project.root.join(bulk_name(n)), format!("{n}\n")).unwrap();
    }
    project.commit()
}

/// Item 1 of the crash-safety issue: resume used to continue on the half-checked-out tree, and
/// the player's checkpoint committed the deletion of every file not yet written.
#[test]
fn a_kill_in_the_middle_of_the_worktree_checkout_loses_nothing() {
    let project = bulk_project();
    let mut runner = project.spawn(&["task", TASK, "--auto-merge"]);
    let halfway = project.worktree().join(bulk_name(BULK_FILES / 4));
    let start = Instant::now();
    while !halfway.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "the checkout never got a quarter of the way"
        );
        if runner.try_wait().unwrap().is_some() {
            panic!("the run ended before the checkout was a quarter done");
        }
        std::thread::sleep(Duration::from_micros(200));
    }
    runner.kill().unwrap();
    runner.wait().unwrap();
    let last = project.worktree().join(bulk_name(BULK_FILES - 1));
    assert!(
        !last.exists(),
        "the kill was meant to land mid-checkout, but the checkout had finished"
    );

    assert_exit(&project.run(&["resume", TASK]), 0);

    assert_eq!(project.state()["status"], "merged");
    let files = project.git(&["ls-tree", "-r", "--name-only", "main", "bulk"]);
    assert_eq!(
        files.lines().count(),
        BULK_FILES,
        "every file is still on main"
    );
    assert_eq!(project.git(&["rev-list", "--count", "main"]).trim(), "2");
    assert!(project
        .git(&["show", "--stat", "--format=", "main"])
        .contains("greet"));
    assert_eq!(project.git(&["status", "--porcelain"]), "");
}

/// Item 12: a checkout that fails for lack of space (here: a file-size limit, which fails the
/// write the same way) leaves no branch, worktree or git record behind.
#[test]
fn a_checkout_that_fails_to_write_leaves_the_repository_as_it_was() {
    let project = Project::new();
    project.write("assets/big.bin", &"x".repeat(2 * 1024 * 1024));
    let project = project.commit();
    let mut command = Command::new(env!("CARGO_BIN_EXE_autobuild"));
    command
        .arg("-C")
        .arg(&project.root)
        .args(["task", TASK])
        .env(
            "AUTOBUILD_CONFIG_DIR",
            project.root.join("no-such-config-dir"),
        )
        .stdin(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 1024 * 1024,
                rlim_max: 1024 * 1024,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &limit);
            // Over the limit a write fails with EFBIG instead of killing the writer.
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let output = command.output().unwrap();

    assert_exit(&output, 1);
    assert!(!project.branch_exists(&project.branch()), "branch left");
    assert!(!project.worktree().exists(), "worktree directory left");
    let records = project.root.join(".git/worktrees");
    assert!(
        !records.exists() || std::fs::read_dir(&records).unwrap().next().is_none(),
        "git still records a worktree"
    );
    assert_eq!(project.git(&["status", "--porcelain"]), "");
}

/// Item 13: runs of different tasks started at the same instant in a repository that has no
/// worktree yet used to race on creating `.git/worktrees`.
#[test]
fn runs_started_at_the_same_instant_do_not_race_on_git_administration() {
    for attempt in 0..4 {
        let project = Project::new();
        let second = project
            .read(".autobuild/tasks/TASK-1.md")
            .replace("TASK-1", "TASK-2");
        project.write(".autobuild/tasks/TASK-2.md", &second);
        let project = project.commit();
        let runners: Vec<_> = ["TASK-1", "TASK-2"]
            .iter()
            .map(|task| project.spawn(&["task", task, "--no-merge"]))
            .collect();
        for mut runner in runners {
            let status = runner.wait().unwrap();
            assert_eq!(status.code(), Some(0), "attempt {attempt}: a run failed");
        }
    }
}

/// Item 7: a check the killed runner left running is stopped before resume does anything, so
/// whatever it would still write never becomes the player's work.
#[test]
fn a_check_left_running_by_a_killed_run_is_stopped_on_resume() {
    let project = Project::new();
    let marker = project.outside("killed-once");
    let project = project
        .config(&format!(
            r#"
[checks.slow]
cmd = "if [ -e '{marker}' ]; then exit 0; fi; touch '{marker}'; (sleep 2; echo late > late.txt) & sleep 30"
timeout = "60s"
"#,
            marker = marker.display()
        ))
        // Unconfined: in the sandbox the check dies with the killed runner's process namespace
        // (suite::sandbox_process), so there would be nothing left for the resume to stop.
        .unconfined()
        .commit();
    let mut runner = project.spawn(&["task", TASK, "--auto-merge"]);
    let group_file = project.run_dir().join("command.pgid");
    wait_until(Duration::from_secs(60), "the slow check to start", || {
        marker.exists() && group_file.exists()
    });
    let pgid: i32 = std::fs::read_to_string(&group_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: sending a signal to a child we spawned.
    unsafe { libc::kill(runner.id() as i32, libc::SIGKILL) };
    runner.wait().unwrap();
    assert!(
        !live_group_members(pgid).is_empty(),
        "the check outlived its runner"
    );

    assert_exit(&project.run(&["resume", TASK]), 0);

    assert!(
        live_group_members(pgid).is_empty(),
        "the leftover check is still running"
    );
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!project.root.join("late.txt").exists());
    assert!(!exists_in_main(&project, "late.txt"));
    assert_eq!(project.state()["status"], "merged");
}

fn exists_in_main(project: &Project, path: &str) -> bool {
    project
        .git(&["ls-tree", "-r", "--name-only", "main"])
        .lines()
        .any(|line| Path::new(line) == Path::new(path))
}
