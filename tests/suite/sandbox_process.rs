//! The process runner with a confinement: what the kernel lets a confined child write, that it
//! is stopped as gracefully as an unconfined one, and that a confined group left behind is
//! found by its working directory. Needs bwrap: ignored by a plain `cargo test`, run by `.ci/run` with `--ignored sandbox`.

use crate::support;

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use autobuild::process::{run, stop_leftover_group, CancelToken, ProcessEnd, ProcessSpec};
use autobuild::sandbox::{denials, Confinement, Mounts};

/// A directory outside `/tmp` (which the sandbox replaces), so that what lies beside the
/// writable directory is read-only rather than hidden.
fn outside_tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(support::outside_system_tmp()).unwrap()
}

/// `sh -c script` in `dir/wt`, which is the only writable directory.
fn confined(bwrap: &Path, dir: &Path, script: &str) -> ProcessSpec {
    let worktree = dir.join("wt");
    fs::create_dir_all(&worktree).unwrap();
    let mut spec = ProcessSpec::new("sh", &worktree, dir.join("logs/transcript.log"));
    spec.args = vec!["-c".to_string(), script.to_string()];
    spec.capture_limit = 1 << 20;
    spec.kill_grace = Duration::from_secs(2);
    spec.timeout = Some(Duration::from_secs(30));
    spec.sandbox = Some(
        Confinement::new(
            bwrap.to_path_buf(),
            Mounts {
                writable: vec![worktree.canonicalize().unwrap()],
                ..Mounts::default()
            },
        )
        .wrapper(),
    );
    spec
}

fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn only_the_writable_paths_and_a_private_tmp_can_be_written() {
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let private = format!("autobuild-sandbox-test-{}", std::process::id());
    let spec = confined(
        &bwrap,
        dir.path(),
        &format!(
            "echo a > inside.txt; echo b > ../beside.txt; echo beside=$?; \
             echo c > /tmp/{private} && echo tmp=$(cat /tmp/{private}); echo TMPDIR=$TMPDIR"
        ),
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert!(dir.path().join("wt/inside.txt").is_file());
    assert!(!dir.path().join("beside.txt").exists());
    assert!(outcome.stdout.contains("beside=2"), "{}", outcome.stdout);
    assert!(outcome.stdout.contains("tmp=c\n"), "{}", outcome.stdout);
    assert!(
        outcome.stdout.contains("TMPDIR=/tmp\n"),
        "{}",
        outcome.stdout
    );
    assert!(!Path::new("/tmp").join(&private).exists());
    let refused = denials::in_file(&spec.log_path);
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(refused[0].contains("beside.txt"), "{refused:?}");
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn exit_codes_pass_through_the_sandbox() {
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let outcome = run(&confined(&bwrap, dir.path(), "exit 7"), &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(7));
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_cancelled_confined_program_still_gets_to_clean_up() {
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let mut spec = confined(
        &bwrap,
        dir.path(),
        "trap 'sleep 0.3; echo saved > saved; exit 3' INT; echo > started; \
         while :; do sleep 0.05; done",
    );
    // A grace far beyond what the trap needs, so a loaded machine cannot turn the graceful stop
    // into a kill (the test ends as soon as the trap exits, not after the grace).
    spec.kill_grace = Duration::from_secs(60);
    let cancel = CancelToken::new();
    let started = dir.path().join("wt/started");
    let handle = {
        let cancel = cancel.clone();
        thread::spawn(move || run(&spec, &cancel).unwrap())
    };
    wait_for(&started);
    cancel.cancel();
    let outcome = handle.join().unwrap();
    assert_eq!(outcome.end, ProcessEnd::Cancelled);
    // Had the wrapper been sent SIGINT too, it would have died at once and taken the program
    // with it (SIGKILL) before its trap ran.
    assert!(dir.path().join("wt/saved").is_file());
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_group_left_behind_is_found_by_its_worktree() {
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let mut spec = confined(&bwrap, dir.path(), "sleep 30");
    let group_file = dir.path().join("agent.pgid");
    spec.group_file = Some(group_file.clone());
    let worktree = spec.cwd.clone();
    let handle = thread::spawn(move || run(&spec, &CancelToken::new()).unwrap());
    wait_for(&group_file);
    // bwrap needs a moment to start the program in the worktree.
    let deadline = Instant::now() + Duration::from_secs(10);
    let stopped = loop {
        let copy = dir.path().join("copy.pgid");
        fs::copy(&group_file, &copy).unwrap();
        if let Some(pgid) = stop_leftover_group(&copy, &[&worktree]) {
            break pgid;
        }
        assert!(
            Instant::now() < deadline,
            "the confined program was never found"
        );
        thread::sleep(Duration::from_millis(50));
    };
    // Emptied once the run saw its group end.
    let recorded: i32 = fs::read_to_string(&group_file)
        .ok()
        .filter(|text| !text.trim().is_empty())
        .map(|text| text.trim().parse().unwrap())
        .unwrap_or(stopped);
    assert_eq!(stopped, recorded);
    let outcome = handle.join().unwrap();
    assert_ne!(outcome.end, ProcessEnd::Exited(0));
    assert!(outcome.duration < Duration::from_secs(20));
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_program_cannot_make_the_read_only_binds_writable() {
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let spec = confined(
        &bwrap,
        dir.path(),
        "mount -o remount,bind,rw / 2>/dev/null; mount -o remount,bind,rw .. 2>/dev/null; \
         echo b > ../beside.txt; exit 0",
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert!(!dir.path().join("beside.txt").exists());
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_confined_agent_cli_can_start_its_own_bubblewrap_sandbox() {
    // codex runs the model's commands under bubblewrap itself, in a user namespace.
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let spec = confined(
        &bwrap,
        dir.path(),
        &format!(
            "{} --unshare-user --ro-bind / / --dev /dev --proc /proc --bind \"$PWD\" \"$PWD\" \
             --chdir \"$PWD\" sh -c 'echo inner > inner.txt'",
            bwrap.display()
        ),
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert!(dir.path().join("wt/inner.txt").is_file());
}

/// The pids of the processes whose command line mentions `needle`.
fn processes_running(needle: &str) -> Vec<String> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().parse::<u32>().is_ok())
        .filter(|entry| {
            fs::read(entry.path().join("cmdline"))
                .is_ok_and(|line| String::from_utf8_lossy(&line).contains(needle))
        })
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn nothing_a_confined_program_started_outlives_it() {
    let bwrap = crate::support::require_bwrap();
    let dir = outside_tmp();
    let worktree = dir.path().join("wt");
    fs::create_dir_all(&worktree).unwrap();
    // A program of a name no other test runs, so what is left of it can be found in /proc.
    let sleeper = worktree.join("left-behind-sleeper");
    fs::copy("/bin/sleep", &sleeper).unwrap();
    let sleeper = sleeper.display().to_string();
    let script = format!(
        "setsid {sleeper} 30 & sh -c '{sleeper} 30 &' ; \
         while [ \"$(ls /proc | grep -c '^[0-9]')\" -lt 4 ]; do sleep 0.01; done"
    );
    let spec = confined(&bwrap, dir.path(), &script);
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::Exited(0),
        "{}",
        outcome.stderr_tail
    );
    assert_eq!(processes_running(&sleeper), Vec::<String>::new());
}
