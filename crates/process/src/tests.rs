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
