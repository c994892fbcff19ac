//! Process, file and git helpers shared by the integration-test fixtures (`loop_fixture`,
//! `feature_fixture`) and the CLI cases: running git with a fixed identity, waiting for a
//! condition, checking exit codes, and looking at process groups in /proc.

#![allow(dead_code)] // each test binary uses a different subset

use std::fs;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Copies the directory tree `from` into `to`.
pub fn copy_tree(from: &Path, to: &Path) {
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Copies the regular files and directories of `from` into `to` (created), as a CI artifact
/// upload or download does: a run's lock or scratch links do not travel.
pub fn copy_files(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            copy_files(&entry.path(), &target);
        } else if kind.is_file() {
            fs::copy(entry.path(), &target).unwrap();
        }
    }
}

pub fn json(path: &Path) -> Value {
    let text =
        fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Runs git with a fixed identity; panics with git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// Polls until `condition` holds; panics after `limit`.
pub fn wait_until(limit: Duration, what: &str, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The exit code, with the process's output in the panic message when it is not `expected`.
pub fn assert_exit(output: &Output, expected: i32) {
    assert_eq!(
        output.status.code(),
        Some(expected),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Live (non-zombie) processes of process group `pgid`, from /proc.
pub fn live_group_members(pgid: i32) -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            let Ok(stat) = fs::read_to_string(format!("/proc/{pid}/stat")) else {
                return false;
            };
            // Fields after the parenthesised command name: state, ppid, pgrp, …
            let after_name = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
            let fields: Vec<&str> = after_name.split_whitespace().collect();
            fields.first() != Some(&"Z") && fields.get(2) == Some(&pgid.to_string().as_str())
        })
        .collect()
}

/// Whether `pid` is a live (non-zombie) process.
pub fn process_alive(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            let after_name = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
            !after_name.starts_with('Z')
        })
        .unwrap_or(false)
}

/// Kills every process of group `pgid` (a simulated crash takes the agents down too).
pub fn kill_group(pgid: i32) {
    // 0 would be this test's own group (a pid read inside a process namespace reads 0).
    assert!(pgid > 1, "not a process group of the runner's: {pgid}");
    // SAFETY: plain kill(2) on a process group this test's runner started.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

pub fn read_pid(path: &Path) -> i32 {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .trim()
        .parse()
        .unwrap()
}

/// A directory for test files that is not under the system's temporary directory: the
/// sandbox gives agents a private `/tmp`, so a write to a path under `/tmp` lands there
/// instead of being refused, and codex will not put its helpers under a temporary directory.
/// The build's own temp dir when it is outside `/tmp` (a checkout under `/tmp` puts it there
/// too), else `~/.cache/autobuild-tests`.
pub fn outside_system_tmp() -> std::path::PathBuf {
    let target = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let system = std::env::temp_dir();
    let dir = if !target.starts_with(&system) {
        target
    } else {
        std::env::var_os("HOME")
            .map(|home| std::path::PathBuf::from(home).join(".cache/autobuild-tests"))
            .unwrap_or(target)
    };
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// The backend a sandbox test confines with (`[sandbox] backend = "auto"`: bwrap, else
/// Landlock). Every test that needs one is `#[ignore = "needs bubblewrap: …"]`, so a plain
/// `cargo test` reports it ignored rather than passed, and `.ci/run` runs them (`--ignored
/// sandbox`) where bwrap works, then again with bwrap hidden (Landlock); reaching this without
/// a working backend is a failure with the reason and the fix, never a silent pass.
pub fn require_sandbox() -> autobuild::sandbox::Backend {
    use autobuild::sandbox::probe::{availability, Availability};
    use autobuild::sandbox::BackendChoice;
    match availability(BackendChoice::Auto) {
        Availability::Available(backend) => backend,
        Availability::Unavailable { reason, fix } => {
            panic!("this test needs a working sandbox: {reason} (fix: {fix})")
        }
    }
}

/// The bwrap of a test about bubblewrap itself (`.ci/run` skips those in its Landlock pass).
pub fn require_bwrap() -> std::path::PathBuf {
    match require_sandbox() {
        autobuild::sandbox::Backend::Bwrap { path, .. } => path,
        other => panic!("a bubblewrap-only test ran under {other}"),
    }
}

/// Whether the sandbox tests run under Landlock (bwrap hidden by `AUTOBUILD_BWRAP`, as the
/// second pass of `.ci/run` does).
pub fn under_landlock() -> bool {
    matches!(
        require_sandbox(),
        autobuild::sandbox::Backend::Landlock { .. }
    )
}

/// Every file below `dir`, recursively.
pub fn files_below(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_below(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A coach's verdict approving the greeting task's one criterion, AC-001.
pub fn approve() -> Value {
    serde_json::json!({
        "decision": "approve",
        "summary": "greeting works and is tested",
        "issues": [],
        "criteria": [{"id": "AC-001", "status": "met", "evidence": "ran it"}],
    })
}
