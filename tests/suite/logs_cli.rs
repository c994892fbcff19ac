//! `autobuild logs` on a real run: records in the order they were written, the `--step` and
//! `--role` filters, and `--follow` printing what a live run writes until its lock is released.

use crate::loop_fixture;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use autobuild::engine::lock::RunLock;
use loop_fixture::{assert_exit, stdout, Project, TASK};

fn approved_project() -> Project {
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    project
}

/// The record files `logs` printed, by name, in its order.
fn shown(output: &str) -> Vec<String> {
    output
        .lines()
        .filter_map(|line| line.strip_prefix("==> ")?.strip_suffix(" <=="))
        .map(|path| path.rsplit('/').next().unwrap_or(path).to_string())
        .collect()
}

#[test]
fn a_turn_is_shown_in_the_order_it_happened_and_filters_narrow_it() {
    let project = approved_project();

    let turn = project.run(&["logs", TASK, "--turn", "1"]);
    assert_exit(&turn, 0);
    let names = shown(&stdout(&turn));
    let position = |name: &str| {
        names
            .iter()
            .position(|n| n == name)
            .unwrap_or_else(|| panic!("{name} not in {names:?}"))
    };
    assert!(position("turn_1_player.md") < position("player_turn_1.json"));
    assert!(position("player_turn_1.json") < position("verify_turn_1.json"));
    assert!(position("verify_turn_1.json") < position("coach_turn_1.json"));
    assert!(position("coach_turn_1.json") < position("gate_turn_1.json"));

    let verify = shown(&stdout(&project.run(&["logs", TASK, "--step", "verify"])));
    assert!(!verify.is_empty());
    assert!(
        verify
            .iter()
            .all(|n| n.starts_with("verify_turn_") || n.contains("check_")),
        "{verify:?}"
    );

    let coach = shown(&stdout(
        &project.run(&["logs", TASK, "--role", "coach", "--turn", "1"]),
    ));
    assert!(coach.contains(&"turn_1_coach.md".to_string()), "{coach:?}");
    assert!(coach.iter().all(|n| n.contains("coach")), "{coach:?}");

    let unknown = project.run(&["logs", TASK, "--step", "nope"]);
    assert_exit(&unknown, 2);
}

#[test]
fn follow_prints_what_a_live_run_writes_and_stops_when_it_ends() {
    let project = approved_project();
    // Stand in for a live run: hold the task's lock as a run does.
    let lock = RunLock::acquire(&project.root.join(".autobuild/runs"), TASK).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("-C")
        .arg(&project.root)
        .args(["logs", TASK, "--follow"])
        .env(
            "AUTOBUILD_CONFIG_DIR",
            project.root.join("no-such-config-dir"),
        )
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let out = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let seen = std::cell::RefCell::new(Vec::new());
    let wait_for = |text: &str| {
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(line) = rx.recv_timeout(Duration::from_millis(100)) {
                seen.borrow_mut().push(line.clone());
                if line.contains(text) {
                    return;
                }
            }
        }
        panic!("`logs --follow` never printed {text:?}");
    };
    // Transcripts and check logs only: the run's records are not followed (issue 25).
    wait_for("logs/turn_1_player.log");

    let transcript = project.run_dir().join("logs/turn_3_player.log");
    std::fs::write(&transcript, "first line\n").unwrap();
    wait_for("first line");
    std::fs::write(&transcript, "first line\nsecond line\n").unwrap();
    wait_for("second line");

    drop(lock);
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "`logs --follow` did not stop");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success());
    let mut seen = seen.into_inner();
    seen.extend(rx.try_iter());
    let headers: Vec<&String> = seen.iter().filter(|l| l.starts_with("==> ")).collect();
    assert!(
        headers.iter().all(|h| h.contains("/logs/")),
        "only transcripts and check logs are followed: {headers:#?}"
    );
}

/// An agent's carriage return and escape sequences reach the terminal written out, never raw:
/// nothing it printed can overwrite a line of `logs` or drive the terminal.
#[test]
fn an_agents_control_characters_are_shown_not_sent_to_the_terminal() {
    let project = Project::new().player("player_prints_controls.sh").commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);

    let output = project.run(&["logs", TASK, "--role", "player", "--turn", "1"]);

    assert_exit(&output, 0);
    let text = stdout(&output);
    assert!(!text.contains('\r') && !text.contains('\u{1b}') && !text.contains('\u{7}'));
    assert!(
        text.contains("all tests FAILED\\rall tests passed \\u{1b}]52;c;cGF5bG9hZA==\\u{7}"),
        "{text}"
    );
}
