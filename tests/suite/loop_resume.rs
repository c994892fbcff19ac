//! Runs that are interrupted, contended or refused (DESIGN.md §5 "State", "Preflight"): a
//! crash mid-turn is resumed from the last completed step, a second run of a task is refused
//! while the first holds its lock, and bad input leaves the repository untouched.

use crate::loop_fixture;

use std::fs;
use std::time::Duration;

use loop_fixture::{assert_exit, stderr, wait_until, Project, TASK};

#[test]
fn a_run_killed_mid_turn_resumes_from_its_last_completed_step() {
    let project = Project::new();
    let marker = project.outside("behave");
    let project = project
        .player("player_crash.sh")
        .env("LOOP_MARKER", marker.to_str().unwrap())
        // Unconfined: the player reports its own group, which inside the sandbox's process
        // namespace reads as the namespace's.
        .unconfined()
        .commit();
    let run_dir = project.run_dir();
    let mut runner = project.spawn(&["task", TASK, "--no-merge", "--max-turns", "3"]);
    let pgid_file = run_dir.join("scratch/crash_pgid");
    wait_until(
        Duration::from_secs(30),
        "the turn 2 player to start",
        || pgid_file.exists() && run_dir.join("prompts/turn_2_player.md").exists(),
    );
    // Give the pgid file's writer time to finish its one line.
    wait_until(Duration::from_secs(5), "the pgid to be written", || {
        fs::read_to_string(&pgid_file).is_ok_and(|s| s.ends_with('\n'))
    });

    // A machine crash: the runner and its agent die at once, no cleanup.
    runner.kill().unwrap();
    runner.wait().unwrap();
    loop_fixture::kill_group(loop_fixture::read_pid(&pgid_file));
    let turn_one: Vec<(String, Vec<u8>)> = ["player", "verify", "coach", "gate"]
        .iter()
        .map(|kind| {
            let path = run_dir.join(format!("{kind}_turn_1.json"));
            (kind.to_string(), fs::read(&path).unwrap())
        })
        .collect();
    assert_eq!(project.state()["status"], "running");
    fs::write(&marker, "").unwrap();

    let output = project.run(&["resume", TASK]);

    assert_exit(&output, 0);
    for (kind, bytes) in &turn_one {
        let now = fs::read(run_dir.join(format!("{kind}_turn_1.json"))).unwrap();
        assert_eq!(&now, bytes, "{kind}_turn_1.json changed on resume");
    }
    let events = fs::read_to_string(run_dir.join("events.jsonl")).unwrap();
    let turn_one_events = events
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event.to_string().contains("\"turn\":1"))
        .count();
    assert!(turn_one_events > 0, "events.jsonl lost turn 1:\n{events}");
    assert_eq!(project.record("gate", 2)["approved"], true);
    assert!(!run_dir.join("player_turn_3.json").exists());
    assert_eq!(project.state()["status"], "approved");
    let greet = project.show(&project.branch(), "lib/greet.sh");
    assert!(greet.contains("Hello, %s!"), "{greet}");
}

/// Starts a run whose player takes a few seconds and waits until it holds its lock.
fn start_slow_run(project: &Project) -> std::process::Child {
    let runner = project.spawn(&["task", TASK, "--no-merge"]);
    let state = project.run_dir().join("state.json");
    wait_until(Duration::from_secs(20), "run A's state.json", || {
        state.exists()
    });
    runner
}

#[test]
fn a_second_run_with_resume_is_refused_while_the_first_runs() {
    let project = Project::new().player("player_slow.sh").commit();
    let mut first = start_slow_run(&project);

    let second = project.run(&["task", TASK, "--no-merge", "--resume"]);

    assert_exit(&second, 2);
    assert!(
        stderr(&second).contains("already being run"),
        "{}",
        stderr(&second)
    );
    assert_eq!(first.wait().unwrap().code(), Some(0));
    assert_eq!(project.state()["status"], "approved");
    assert_eq!(project.record("gate", 1)["approved"], true);
}

#[test]
fn a_second_plain_run_is_told_the_task_is_already_being_run() {
    let project = Project::new().player("player_slow.sh").commit();
    let mut first = start_slow_run(&project);

    let second = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&second, 2);
    let message = stderr(&second);
    assert_eq!(first.wait().unwrap().code(), Some(0));
    assert!(message.contains("already being run"), "{message}");
}

#[test]
fn an_unknown_task_changes_nothing() {
    let project = Project::new().commit();
    let before = project.git(&["status", "--porcelain", "--ignored"]);

    let output = project.run(&["task", "TASK-404"]);

    assert_exit(&output, 2);
    assert!(!project.root.join(".autobuild/runs").exists());
    assert!(!project.root.join(".autobuild/worktrees").exists());
    assert_eq!(project.git(&["branch", "--list", "autobuild/*"]), "");
    assert_eq!(project.git(&["status", "--porcelain", "--ignored"]), before);
}

#[test]
fn an_existing_branch_without_resume_or_fresh_changes_nothing() {
    let project = Project::new().commit();
    project.git(&["branch", &project.branch()]);
    let tip = project.git(&["rev-parse", &project.branch()]);

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    assert!(stderr(&output).contains("--resume"), "{}", stderr(&output));
    assert!(!project.root.join(".autobuild/runs").exists());
    assert!(!project.worktree().exists());
    assert_eq!(project.git(&["rev-parse", &project.branch()]), tip);
}

#[test]
fn ctrl_c_cancels_with_exit_5_and_resume_finishes_the_run() {
    let project = Project::new()
        .player("player_slow.sh")
        .env("LOOP_PLAYER_DELAY", "30");
    let started = project.outside("player-started");
    let project = project
        .env("LOOP_PLAYER_STARTED", started.to_str().unwrap())
        .commit();
    let runner = project.spawn_captured(&["task", TASK, "--no-merge"]);
    wait_until(
        Duration::from_secs(60),
        "the turn 1 player to start",
        || started.exists(),
    );
    // SAFETY: sending a signal to a child we spawned.
    unsafe { libc::kill(runner.id() as i32, libc::SIGINT) };
    let started = std::time::Instant::now();
    let output = runner.wait_with_output().unwrap();

    assert_exit(&output, 5);
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "the cancelled player was not stopped promptly"
    );
    assert_eq!(project.state()["status"], "cancelled");
    assert!(project.report().contains("autobuild resume"));
    // The console says how to go on, too.
    assert!(
        String::from_utf8_lossy(&output.stdout).contains(&format!("`autobuild resume {TASK}`")),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );

    let output = project.run_with_env(&["resume", TASK], &[("LOOP_PLAYER_DELAY", "0")]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "approved");
    assert_eq!(project.record("gate", 1)["approved"], true);
}

#[test]
fn resume_stops_an_agent_the_killed_run_left_behind() {
    let project = Project::new();
    let marker = project.outside("behave");
    let project = project
        .player("player_orphan.sh")
        .env("LOOP_MARKER", marker.to_str().unwrap())
        // Unconfined: in the sandbox the child dies with the killed runner's process namespace
        // (suite::sandbox_process), so there would be nothing left for the resume to stop.
        .unconfined()
        .commit();
    let mut runner = project.spawn(&["task", TASK, "--no-merge"]);
    let orphan_file = project.run_dir().join("scratch/orphan_pid");
    wait_until(Duration::from_secs(20), "the player's child", || {
        fs::read_to_string(&orphan_file).is_ok_and(|s| s.ends_with('\n'))
    });
    let orphan = loop_fixture::read_pid(&orphan_file);
    runner.kill().unwrap();
    runner.wait().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        loop_fixture::process_alive(orphan),
        "the child should outlive a SIGKILLed runner for this test to mean anything"
    );
    fs::write(&marker, "").unwrap();

    let output = project.run(&["resume", TASK]);

    assert_exit(&output, 0);
    wait_until(Duration::from_secs(10), "the orphan to be stopped", || {
        !loop_fixture::process_alive(orphan)
    });
}

#[test]
fn a_blocked_run_continued_with_resume_goes_on_from_its_next_turn_with_its_feedback() {
    let project = Project::new();
    let fixed = project.outside("fixed");
    // Wrong (and a different wrong each turn, so it is blocked, not stalled) until the test
    // says the user has helped.
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
    assert_eq!(project.state()["status"], "blocked");

    fs::write(&fixed, "").unwrap();
    let output = project.run(&["task", TASK, "--resume", "--max-turns", "2", "--no-merge"]);

    assert_exit(&output, 0);
    let run_dir = project.run_dir();
    assert!(run_dir.join("player_turn_2.json").exists(), "turn 2 kept");
    assert_eq!(project.record("gate", 3)["approved"], true);
    assert!(!run_dir.join("player_turn_4.json").exists());
    let prompt = std::fs::read_to_string(run_dir.join("prompts/turn_3_player.md")).unwrap();
    assert!(
        prompt.contains("COACH-ISSUE-EXCLAMATION"),
        "the turn-2 feedback reaches turn 3:\n{prompt}"
    );
    assert_eq!(project.state()["max_turns"], 4);
    assert!(!project.root.join(".autobuild/runs/TASK-1@1").exists());
}
