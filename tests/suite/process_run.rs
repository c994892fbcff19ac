//! The process runner with real child processes: exit codes, stdin, env, bounds that stop the
//! whole process group, large outputs, missing programs and redaction.

use std::fs;
use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use autobuild::process::{run, CancelToken, ProcessEnd, ProcessError, ProcessSpec};

fn shell(dir: &Path, script: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new("sh", dir, dir.join("logs/transcript.log"));
    spec.args = vec!["-c".to_string(), script.to_string()];
    spec.capture_limit = 1 << 20;
    spec.kill_grace = Duration::from_millis(300);
    spec
}

fn group_is_gone(pgid: i32) -> bool {
    let result = unsafe { libc::kill(-pgid, 0) };
    result == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

fn read_pid(path: &Path) -> i32 {
    fs::read_to_string(path).unwrap().trim().parse().unwrap()
}

#[test]
fn reports_exit_codes() {
    let dir = tempfile::tempdir().unwrap();
    let ok = run(&shell(dir.path(), "exit 0"), &CancelToken::new()).unwrap();
    assert_eq!(ok.end, ProcessEnd::Exited(0));
    let failed = run(&shell(dir.path(), "exit 3"), &CancelToken::new()).unwrap();
    assert_eq!(failed.end, ProcessEnd::Exited(3));
    let killed = run(&shell(dir.path(), "kill -9 $$"), &CancelToken::new()).unwrap();
    assert_eq!(killed.end, ProcessEnd::Signaled(9));
}

#[test]
fn delivers_stdin_then_closes_it() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = shell(dir.path(), "cat; echo '<eof>'");
    spec.stdin = Some(b"the prompt\n".to_vec());
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.stdout, "the prompt\n<eof>\n");
}

#[test]
fn without_stdin_the_child_reads_dev_null() {
    let dir = tempfile::tempdir().unwrap();
    let outcome = run(&shell(dir.path(), "cat; echo done"), &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(outcome.stdout, "done\n");
}

#[test]
fn a_child_that_ignores_a_large_stdin_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = shell(dir.path(), "echo ignored");
    spec.stdin = Some(vec![b'x'; 4 << 20]);
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(outcome.stdout, "ignored\n");
}

#[test]
fn adds_and_removes_environment_variables() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = shell(dir.path(), "echo \"$AB_ADDED:${HOME-removed}\"");
    spec.env = vec![("AB_ADDED".to_string(), "added".to_string())];
    spec.env_remove = vec!["HOME".to_string()];
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.stdout, "added:removed\n");
}

#[test]
fn runs_in_the_working_directory_and_writes_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let spec = shell(dir.path(), "pwd; echo to-stderr >&2");
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    let cwd = fs::canonicalize(dir.path()).unwrap();
    assert_eq!(outcome.stdout.trim(), cwd.to_str().unwrap());
    assert_eq!(outcome.stderr_tail, "to-stderr\n");
    let transcript = fs::read_to_string(&spec.log_path).unwrap();
    assert!(transcript.contains(cwd.to_str().unwrap()));
    assert!(transcript.contains("to-stderr\n"));
    assert!(outcome.transcript_error.is_none());
}

#[test]
fn timeout_stops_the_whole_group_including_background_grandchildren() {
    let dir = tempfile::tempdir().unwrap();
    let script = "echo $$ > leader.pid; sleep 1000 & echo $! > grandchild.pid; sleep 1000";
    let mut spec = shell(dir.path(), script);
    spec.timeout = Some(Duration::from_millis(400));
    let started = Instant::now();
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::TimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));
    let pgid = read_pid(&dir.path().join("leader.pid"));
    assert!(group_is_gone(pgid), "process group {pgid} still exists");
    let grandchild = read_pid(&dir.path().join("grandchild.pid"));
    let alive = unsafe { libc::kill(grandchild, 0) } == 0;
    assert!(!alive, "background grandchild {grandchild} survived");
}

#[test]
fn escalates_to_sigkill_when_signals_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let script = "trap '' INT TERM; echo $$ > leader.pid; while :; do sleep 0.05; done";
    let mut spec = shell(dir.path(), script);
    spec.timeout = Some(Duration::from_millis(300));
    spec.kill_grace = Duration::from_millis(200);
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::TimedOut);
    assert!(group_is_gone(read_pid(&dir.path().join("leader.pid"))));
}

#[test]
fn leftover_background_processes_do_not_hold_up_a_finished_child() {
    let dir = tempfile::tempdir().unwrap();
    let script = "echo $$ > leader.pid; sleep 1000 & echo started";
    let started = Instant::now();
    let outcome = run(&shell(dir.path(), script), &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(outcome.stdout, "started\n");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(group_is_gone(read_pid(&dir.path().join("leader.pid"))));
}

#[test]
fn idle_timeout_fires_only_when_the_child_is_silent() {
    let dir = tempfile::tempdir().unwrap();
    let mut silent = shell(dir.path(), "echo hello; sleep 1000");
    silent.idle_timeout = Some(Duration::from_millis(400));
    let outcome = run(&silent, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::IdleTimedOut);
    assert_eq!(outcome.stdout, "hello\n");

    let mut chatty = shell(
        dir.path(),
        "for i in 1 2 3 4 5 6 7 8; do echo tick $i >&2; sleep 0.1; done",
    );
    chatty.idle_timeout = Some(Duration::from_millis(600));
    let outcome = run(&chatty, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
}

#[test]
fn cancel_stops_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        trigger.cancel();
    });
    let script = "echo $$ > leader.pid; sleep 1000";
    let outcome = run(&shell(dir.path(), script), &cancel).unwrap();
    canceller.join().unwrap();
    assert_eq!(outcome.end, ProcessEnd::Cancelled);
    assert!(outcome.duration < Duration::from_secs(10));
    assert!(group_is_gone(read_pid(&dir.path().join("leader.pid"))));
}

#[test]
fn a_five_megabyte_line_is_captured_and_logged_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = shell(dir.path(), "head -c 5000000 /dev/zero | tr '\\0' a; echo");
    spec.capture_limit = 8 << 20;
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(outcome.stdout.len(), 5_000_001);
    assert!(!outcome.stdout_truncated);
    assert_eq!(fs::metadata(&spec.log_path).unwrap().len(), 5_000_001);
}

#[test]
fn stdout_beyond_the_capture_limit_stays_on_disk_only() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = shell(dir.path(), "head -c 100000 /dev/zero | tr '\\0' b");
    spec.capture_limit = 1000;
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.stdout, "b".repeat(1000));
    assert!(outcome.stdout_truncated);
    assert_eq!(fs::metadata(&spec.log_path).unwrap().len(), 100_000);
}

#[test]
fn ten_megabytes_of_stderr_do_not_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let script = "head -c 10000000 /dev/zero | tr '\\0' e >&2; echo done";
    let mut spec = shell(dir.path(), script);
    spec.timeout = Some(Duration::from_secs(60));
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(outcome.stdout, "done\n");
    assert!(outcome.stderr_tail.len() <= 16 * 1024);
    assert_eq!(fs::metadata(&spec.log_path).unwrap().len(), 10_000_005);
}

#[test]
fn a_missing_program_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let spec = ProcessSpec::new("no-such-agent-cli", dir.path(), dir.path().join("t.log"));
    let error = run(&spec, &CancelToken::new()).unwrap_err();
    assert!(matches!(error, ProcessError::NotFound { .. }));
    assert_eq!(error.to_string(), "`no-such-agent-cli` not found on PATH");
    assert!(
        !dir.path().join("t.log").exists(),
        "nothing is written before the spawn"
    );
}

#[test]
fn programs_are_looked_up_on_the_childs_path() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    fs::create_dir(&bin).unwrap();
    let tool = bin.join("only-here");
    fs::write(&tool, "#!/bin/sh\necho found me\n").unwrap();
    fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut spec = ProcessSpec::new("only-here", dir.path(), dir.path().join("t.log"));
    spec.capture_limit = 1000;
    spec.env = vec![(
        "PATH".to_string(),
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    )];
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.stdout, "found me\n");

    let relative = ProcessSpec::new("./bin/only-here", dir.path(), dir.path().join("t.log"));
    assert_eq!(
        run(&relative, &CancelToken::new()).unwrap().end,
        ProcessEnd::Exited(0)
    );

    let script = dir.path().join("not-executable.sh");
    fs::write(&script, "echo hi\n").unwrap();
    let spec = ProcessSpec::new("./not-executable.sh", dir.path(), dir.path().join("t.log"));
    let error = run(&spec, &CancelToken::new()).unwrap_err();
    assert!(
        matches!(error, ProcessError::NotExecutable { .. }),
        "{error}"
    );
}

#[test]
fn a_missing_working_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = shell(&dir.path().join("gone"), "true");
    let error = run(&spec, &CancelToken::new()).unwrap_err();
    assert!(matches!(error, ProcessError::MissingCwd { .. }));
}

#[test]
fn secrets_never_reach_the_transcript() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "sk-test-0123456789abcdef";
    let mut spec = shell(
        dir.path(),
        "echo \"key is $AB_TEST_API_KEY\"; echo \"stderr $AB_TEST_API_KEY\" >&2",
    );
    spec.env = vec![("AB_TEST_API_KEY".to_string(), secret.to_string())];
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    let transcript = fs::read_to_string(&spec.log_path).unwrap();
    assert!(!transcript.contains(secret), "{transcript}");
    assert!(transcript.contains("key is [REDACTED]"));
    assert!(transcript.contains("stderr [REDACTED]"));
    assert_eq!(outcome.stdout, "key is [REDACTED]\n");
    assert!(!outcome.stderr_tail.contains(secret));
}

/// The group file names the child's group while it runs and is blanked, not removed, after:
/// the run's next child rewrites the same file. A blank file names no group to stop. A symlink,
/// a hard link to another file or a FIFO put in the file's place is neither written through nor
/// waited on.
#[test]
fn the_group_file_names_the_running_group_and_is_blanked_after() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().unwrap();
    let group_file = dir.path().join("agent.pgid");
    // The runner writes the file once the child is started, which may be after the child's
    // first command: the child waits for it (at most ~5 s).
    let mut spec = shell(
        dir.path(),
        "i=0; while ! grep -q '[0-9]' agent.pgid 2>/dev/null && [ $i -lt 500 ]; do sleep 0.01; i=$((i+1)); done; \
         cat agent.pgid > seen; echo $$ > pid",
    );
    spec.group_file = Some(group_file.clone());
    run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        read_pid(&dir.path().join("seen")),
        read_pid(&dir.path().join("pid"))
    );
    assert_eq!(fs::read_to_string(&group_file).unwrap().trim(), "");
    assert_eq!(
        autobuild::process::stop_leftover_group(&group_file, &[dir.path()]),
        None
    );
    let inode = fs::metadata(&group_file).unwrap().ino();
    run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(fs::metadata(&group_file).unwrap().ino(), inode);

    let elsewhere = dir.path().join("elsewhere");
    fs::write(&elsewhere, "kept").unwrap();
    fs::remove_file(&group_file).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &group_file).unwrap();
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "kept");

    fs::remove_file(&group_file).unwrap();
    fs::hard_link(&elsewhere, &group_file).unwrap();
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert_eq!(fs::read_to_string(&elsewhere).unwrap(), "kept");
    assert_eq!(fs::metadata(&group_file).unwrap().nlink(), 1);

    fs::remove_file(&group_file).unwrap();
    let fifo = std::ffi::CString::new(group_file.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: mkfifo with a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o644) }, 0);
    // Neither the write (no reader) nor the resume's read (no writer) waits on it.
    assert_eq!(
        autobuild::process::stop_leftover_group(&group_file, &[dir.path()]),
        None
    );
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    assert!(fs::metadata(&group_file).unwrap().is_file());
}
