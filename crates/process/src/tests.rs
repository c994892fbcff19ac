//! Running processes for real: the stdout copy, and the idle watchdog with and without a line
//! watch.

use super::*;

#[test]
fn stdout_alone_is_copied_whole_and_redacted() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = ProcessSpec::new("sh", dir.path(), dir.path().join("logs/all.log"));
    // A line several times the in-memory bound while stderr is written concurrently: in the
    // combined transcript stderr may land inside it, in the stdout copy it may not.
    spec.args = vec![
        "-c".into(),
        "(for i in 1 2 3 4 5 6 7 8; do echo err$i >&2; done) &\n\
         printf 'key=%s ' \"$STREAM_TOKEN\"; head -c 3000000 /dev/zero | tr '\\0' a; echo; \
         echo second; wait"
            .into(),
    ];
    spec.env = vec![("STREAM_TOKEN".into(), "tok-1234567890".into())];
    spec.stdout_path = Some(dir.path().join("logs/out.jsonl"));
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
    let copy = std::fs::read_to_string(dir.path().join("logs/out.jsonl")).unwrap();
    let expected = format!("key={REDACTED} {}\nsecond\n", "a".repeat(3_000_000));
    assert!(copy == expected, "the stdout copy differs from stdout");
    let transcript = std::fs::read_to_string(dir.path().join("logs/all.log")).unwrap();
    assert!(transcript.contains("err8"));
    assert!(!transcript.contains("tok-1234567890"));
}

/// A shell child that prints `line` every 100 ms, forever.
fn chatty(dir: &Path, line: &str) -> ProcessSpec {
    let mut spec = ProcessSpec::new("sh", dir, dir.join("chatty.log"));
    spec.args = vec![
        "-c".into(),
        format!("while true; do echo '{line}'; sleep 0.1; done"),
    ];
    spec.timeout = Some(Duration::from_secs(30));
    spec.idle_timeout = Some(Duration::from_millis(800));
    spec.kill_grace = Duration::from_millis(200);
    spec
}

fn judge(line: &str) -> LineSignal {
    match line {
        "reconnecting" => LineSignal::Waiting,
        "refused" => LineSignal::Hopeless,
        _ => LineSignal::Progress,
    }
}

#[test]
fn lines_the_watch_calls_waiting_do_not_keep_the_idle_watchdog_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = chatty(dir.path(), "reconnecting");
    spec.watch = Some(LineWatch::new(judge));
    let started = Instant::now();
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::IdleTimedOut);
    assert!(started.elapsed() < Duration::from_secs(10));
    let log = std::fs::read_to_string(dir.path().join("chatty.log")).unwrap();
    assert!(log.contains("reconnecting"), "the lines are still logged");
}

#[test]
fn lines_the_watch_calls_progress_keep_it_quiet() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = chatty(dir.path(), "working");
    spec.watch = Some(LineWatch::new(judge));
    spec.timeout = Some(Duration::from_secs(2));
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(
        outcome.end,
        ProcessEnd::TimedOut,
        "not idle: it made progress"
    );
}

#[test]
fn a_hopeless_line_stops_the_child_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = chatty(dir.path(), "refused");
    spec.idle_timeout = None;
    spec.watch = Some(LineWatch::new(judge));
    let started = Instant::now();
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Aborted);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn without_a_watch_any_output_is_progress_even_without_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = ProcessSpec::new("sh", dir.path(), dir.path().join("dots.log"));
    spec.args = vec![
        "-c".into(),
        "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do printf .; sleep 0.1; done".into(),
    ];
    spec.idle_timeout = Some(Duration::from_millis(800));
    let outcome = run(&spec, &CancelToken::new()).unwrap();
    assert_eq!(outcome.end, ProcessEnd::Exited(0));
}

/// Whether process `pid` exists (a zombie counts: it has not been reaped yet).
fn alive(pid: i32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Runs `script` with `sh -c` in a fresh directory; it writes the pids it wants checked to
/// `pids`, one per line. Returns them with the outcome.
fn run_leaving(script: &str) -> (Result<ProcessOutcome, ProcessError>, Vec<i32>) {
    let dir = tempfile::tempdir().unwrap();
    let mut spec = ProcessSpec::new("sh", dir.path(), dir.path().join("run.log"));
    spec.args = vec!["-c".into(), script.into()];
    spec.kill_grace = Duration::from_millis(200);
    spec.timeout = Some(Duration::from_secs(20));
    let outcome = run(&spec, &CancelToken::new());
    let pids = std::fs::read_to_string(dir.path().join("pids")).unwrap_or_default();
    let pids = pids
        .lines()
        .filter_map(|line| line.trim().parse().ok())
        .collect();
    (outcome, pids)
}

#[test]
fn nothing_a_child_started_outside_its_group_outlives_it() {
    // A new session (setsid) and a double fork whose middle process exits at once: both leave
    // the child's process group, and both are reparented to the runner.
    let (outcome, pids) = run_leaving(
        ": > pids; setsid sh -c 'echo $$ >> pids; exec sleep 30' & \
         sh -c 'sh -c \"echo \\$\\$ >> pids; exec sleep 30\" &' ; \
         while [ \"$(wc -l < pids)\" -lt 2 ]; do sleep 0.01; done",
    );
    assert_eq!(outcome.unwrap().end, ProcessEnd::Exited(0));
    assert_eq!(pids.len(), 2, "{pids:?}");
    for pid in pids {
        assert!(
            !alive(pid),
            "process {pid} outlived the child that started it"
        );
    }
}

#[test]
fn a_child_of_the_runner_outside_any_run_is_not_swept() {
    // Started with a plain Command, as the runner starts `git`: it stays in the runner's
    // session, so no sweep takes it for an orphan.
    let mut helper = Command::new("sleep").arg("30").spawn().unwrap();
    let (outcome, _) = run_leaving("setsid sleep 30 & echo $! > pids");
    assert!(outcome.is_ok());
    assert_eq!(
        helper.try_wait().unwrap(),
        None,
        "the runner's own helper was killed"
    );
    helper.kill().unwrap();
    helper.wait().unwrap();
}
