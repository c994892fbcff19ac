//! Features that are interrupted or cannot be merged (DESIGN.md §5 "State", §7): a feature
//! killed during wave 2 resumes without re-running wave 1, and two tasks editing the same lines
//! produce the documented conflict report and can be recovered.

use crate::feature_fixture;

use std::fs;
use std::time::Duration;

use feature_fixture::{assert_exit, kill_group, live_group_members, stdout, wait_until, Project};

#[test]
fn a_feature_killed_during_wave_two_resumes_without_rerunning_wave_one() {
    let project = Project::new();
    let marker = project.outside("go-on");
    let pgid_file = project.outside("pgid");
    let project = project
        .task("TASK-A", "test -f lib/a.txt", "echo 'from A' > lib/a.txt")
        .task("TASK-B", "test -f lib/b.txt", "echo 'from B' > lib/b.txt")
        .task(
            "TASK-C",
            "test -f lib/c.txt",
            // Hangs (so the test can kill the feature) until the marker exists.
            "if [ ! -e \"$FEATURE_MARKER\" ]; then\n    cut -d' ' -f5 /proc/$$/stat > \"$FEATURE_PGID.tmp\"\n    mv \"$FEATURE_PGID.tmp\" \"$FEATURE_PGID\"\n    sleep 30\nfi\ncat lib/a.txt lib/b.txt > lib/c.txt\n",
        )
        .feature(
            "FEAT-K",
            "id: FEAT-K\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n  - id: TASK-C\n    dependencies: [TASK-A, TASK-B]\n",
        )
        .env("FEATURE_MARKER", marker.to_str().unwrap())
        .env("FEATURE_PGID", pgid_file.to_str().unwrap())
        .logged()
        // Unconfined: the player reports its own group, which inside the sandbox's process
        // namespace reads as the namespace's.
        .sandbox_mode("off")
        .commit();
    let mut runner = project.spawn(&["feature", "FEAT-K", "--max-turns", "2"]);
    wait_until(
        Duration::from_secs(30),
        "the wave 2 player to start",
        || pgid_file.exists(),
    );

    // A crash: the runner and its agents die at once, no cleanup.
    runner.kill().unwrap();
    runner.wait().unwrap();
    kill_group(
        fs::read_to_string(&pgid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap(),
    );
    assert_eq!(project.task_status("FEAT-K", "TASK-A"), "merged");
    assert_eq!(project.task_status("FEAT-K", "TASK-B"), "merged");
    assert_eq!(project.task_status("FEAT-K", "TASK-C"), "running");
    fs::write(&marker, "").unwrap();

    let output = project.run(&["resume", "FEAT-K"]);

    assert_exit(&output, 0);
    assert_eq!(project.starts("TASK-A"), 1, "wave 1 ran again");
    assert_eq!(project.starts("TASK-B"), 1, "wave 1 ran again");
    assert_eq!(project.feature_state("FEAT-K")["status"], "approved");
    let c = project.show("autobuild/FEAT-K", "lib/c.txt").unwrap();
    assert!(c.contains("from A") && c.contains("from B"), "{c}");
    // TASK-C's run continued: its records were not archived as an earlier run.
    assert!(!project.run_dir("TASK-C@1").exists());
    let events = fs::read_to_string(project.run_dir("TASK-C").join("events.jsonl")).unwrap();
    assert!(events.contains("\"resumed\":true"), "{events}");
}

fn conflicting_tasks() -> Project {
    greetings().commit()
}

/// X and Y both rewrite the greeting line of lib/greet.sh; Y copes with X's change if it runs
/// after it. Not committed yet.
fn greetings() -> Project {
    Project::new()
        .task(
            "TASK-X",
            "grep -q Hi lib/greet.sh",
            "sed -i 's/Hello/Hi/' lib/greet.sh",
        )
        .task(
            "TASK-Y",
            "grep -q Howdy lib/greet.sh",
            "sed -i -e 's/Hello/Howdy/' -e 's/Hi,/Howdy,/' lib/greet.sh",
        )
        .feature(
            "FEAT-C",
            "id: FEAT-C\nname: Two greetings\ntasks:\n  - id: TASK-X\n  - id: TASK-Y\n",
        )
}

#[test]
fn two_tasks_editing_the_same_lines_stop_the_feature_with_a_conflict_report() {
    let project = conflicting_tasks();

    let output = project.run(&["feature", "FEAT-C", "--max-turns", "1"]);

    assert_exit(&output, 1);
    let text = stdout(&output);
    assert!(
        text.contains("conflict: TASK-Y cannot be merged; it and TASK-X changed lib/greet.sh"),
        "{text}"
    );
    let state = project.feature_state("FEAT-C");
    assert_eq!(state["status"], "conflict");
    assert_eq!(state["tasks"]["TASK-X"]["status"], "merged");
    assert_eq!(state["tasks"]["TASK-Y"]["status"], "conflict");
    assert_eq!(
        state["conflict"],
        serde_json::json!({"task": "TASK-Y", "paths": ["lib/greet.sh"], "with_tasks": ["TASK-X"]})
    );
    let report = project.report("FEAT-C");
    assert!(report.contains("## Merge conflict"), "{report}");
    assert!(
        report.contains(
            "TASK-Y was approved but cannot be merged into `autobuild/FEAT-C`: it and TASK-X (merged before it) changed the same lines of:\n\n- `lib/greet.sh`"
        ),
        "{report}"
    );
    assert!(
        report.contains("`autobuild discard TASK-Y --yes`"),
        "{report}"
    );
    // Y's work is kept for the user.
    assert!(project.branch_exists("autobuild/TASK-Y"));
    assert!(project.root.join(".autobuild/worktrees/TASK-Y").is_dir());
    assert!(project
        .show("autobuild/FEAT-C", "lib/greet.sh")
        .unwrap()
        .contains("Hi,"));
}

#[test]
fn a_discarded_conflicting_task_runs_again_on_top_of_the_feature_branch() {
    let project = conflicting_tasks();
    assert_exit(&project.run(&["feature", "FEAT-C", "--max-turns", "1"]), 1);

    assert_exit(&project.run(&["discard", "TASK-Y", "--yes"]), 0);
    let output = project.run(&["resume", "FEAT-C"]);

    assert_exit(&output, 0);
    assert_eq!(project.task_status("FEAT-C", "TASK-Y"), "merged");
    let greet = project.show("autobuild/FEAT-C", "lib/greet.sh").unwrap();
    assert!(greet.contains("Howdy,"), "{greet}");

    // The resolved conflict and the discarded run stay on record, and so do that run's files.
    let state = project.feature_state("FEAT-C");
    assert_eq!(state["conflict"], serde_json::Value::Null);
    let history = state["history"].as_array().unwrap();
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[0]["event"], "conflict");
    assert_eq!(history[0]["task"], "TASK-Y");
    assert_eq!(history[0]["with_tasks"], serde_json::json!(["TASK-X"]));
    assert_eq!(history[0]["paths"], serde_json::json!(["lib/greet.sh"]));
    assert_eq!(history[1]["event"], "run_discarded");
    assert_eq!(history[1]["task"], "TASK-Y");
    assert_eq!(history[1]["status"], "conflict");
    assert_eq!(history[1]["kept_as"], "TASK-Y@1");
    let kept = project.run_dir("TASK-Y@1").join("state.json");
    let kept: serde_json::Value = serde_json::from_str(&fs::read_to_string(kept).unwrap()).unwrap();
    assert_eq!(kept["status"], "discarded");
    let report = project.report("FEAT-C");
    let history = report
        .split("## History")
        .nth(1)
        .expect("a history section");
    assert!(
        history.contains("TASK-Y conflicted with TASK-X"),
        "{report}"
    );
    assert!(history.contains("runs/TASK-Y@1"), "{report}");
}

#[test]
fn tasks_that_declare_the_same_file_run_a_wave_apart_and_land_without_a_conflict() {
    let project = greetings();
    for id in ["TASK-X", "TASK-Y"] {
        let path = format!(".autobuild/tasks/{id}.md");
        let text = fs::read_to_string(project.root.join(&path)).unwrap();
        let text = text.replacen("---\n", "---\nfiles_to_modify: [lib/greet.sh]\n", 1);
        project.write(&path, &text);
    }
    let project = project.commit();

    let plan = project.run(&["feature", "FEAT-C", "--dry-run"]);
    assert_exit(&plan, 0);
    assert!(
        stdout(&plan).contains("TASK-Y runs a wave after TASK-X: both write lib/greet.sh"),
        "{}",
        stdout(&plan)
    );

    let output = project.run(&["feature", "FEAT-C", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-C");
    assert_eq!(state["waves"], serde_json::json!([["TASK-X"], ["TASK-Y"]]));
    assert_eq!(state["tasks"]["TASK-Y"]["status"], "merged");
    assert_eq!(state["history"], serde_json::Value::Null);
    // Y was written against X's change: both landed.
    let greet = project.show("autobuild/FEAT-C", "lib/greet.sh").unwrap();
    assert!(greet.contains("Howdy,"), "{greet}");
    assert!(project
        .report("FEAT-C")
        .contains("planned: TASK-Y runs a wave after TASK-X: both write lib/greet.sh"));
}

#[test]
fn ctrl_c_cancels_the_running_tasks_and_resume_finishes_the_feature() {
    let project = Project::new();
    let marker = project.outside("go-on");
    let started = project.outside("started");
    let project = project
        .task(
            "TASK-SLOW",
            "test -f lib/slow.txt",
            "if [ ! -e \"$FEATURE_MARKER\" ]; then\n    touch \"$FEATURE_STARTED\"\n    sleep 30\nfi\necho slow > lib/slow.txt\n",
        )
        .task("TASK-NEXT", "test -f lib/next.txt", "echo next > lib/next.txt")
        .feature(
            "FEAT-I",
            "id: FEAT-I\ntasks:\n  - id: TASK-SLOW\n  - id: TASK-NEXT\n    dependencies: [TASK-SLOW]\n",
        )
        .env("FEATURE_MARKER", marker.to_str().unwrap())
        .env("FEATURE_STARTED", started.to_str().unwrap())
        .logged()
        .commit();
    let mut runner = project.spawn(&["feature", "FEAT-I", "--max-turns", "2"]);
    wait_until(Duration::from_secs(30), "the player to start", || {
        started.exists()
    });

    // SAFETY: plain kill(2) on the child this test started.
    unsafe {
        libc::kill(runner.id() as i32, libc::SIGINT);
    }
    let status = runner.wait().unwrap();

    assert_eq!(status.code(), Some(5));
    let state = project.feature_state("FEAT-I");
    assert_eq!(state["status"], "cancelled");
    assert_eq!(state["tasks"]["TASK-SLOW"]["status"], "cancelled");
    assert_eq!(state["tasks"]["TASK-NEXT"]["status"], "pending");
    assert_eq!(project.starts("TASK-NEXT"), 0);

    fs::write(&marker, "").unwrap();
    let output = project.run(&["resume", "FEAT-I"]);

    assert_exit(&output, 0);
    assert_eq!(project.task_status("FEAT-I", "TASK-NEXT"), "merged");
    assert!(project.show("autobuild/FEAT-I", "lib/next.txt").is_some());
}

#[test]
fn status_after_a_fresh_run_is_cancelled_shows_nothing_from_the_earlier_run() {
    let project = Project::new();
    let hold = project.outside("hold");
    let started = project.outside("started");
    let project = project
        .task(
            "TASK-SLOW",
            "test -f lib/slow.txt",
            "if [ -e \"$FEATURE_HOLD\" ]; then\n    touch \"$FEATURE_STARTED\"\n    sleep 30\nfi\necho slow > lib/slow.txt\n",
        )
        .task("TASK-NEXT", "test -f lib/next.txt", "echo next > lib/next.txt")
        .feature(
            "FEAT-F",
            "id: FEAT-F\ntasks:\n  - id: TASK-SLOW\n  - id: TASK-NEXT\n    dependencies: [TASK-SLOW]\n",
        )
        .env("FEATURE_HOLD", hold.to_str().unwrap())
        .env("FEATURE_STARTED", started.to_str().unwrap())
        .commit();
    assert_exit(&project.run(&["feature", "FEAT-F", "--no-merge"]), 0);
    // Timestamps have seconds precision: the fresh run starts in a later second.
    std::thread::sleep(Duration::from_millis(1100));

    fs::write(&hold, "").unwrap();
    let mut runner = project.spawn(&["feature", "FEAT-F", "--fresh", "--yes", "--no-merge"]);
    wait_until(Duration::from_secs(30), "the player to start", || {
        started.exists()
    });
    // SAFETY: plain kill(2) on the child this test started.
    unsafe {
        libc::kill(runner.id() as i32, libc::SIGINT);
    }
    assert_eq!(runner.wait().unwrap().code(), Some(5));

    let output = project.run(&["status", "FEAT-F"]);
    let status = stdout(&output);
    let next = status
        .lines()
        .find(|line| line.trim_start().starts_with("TASK-NEXT"))
        .unwrap_or_else(|| panic!("no TASK-NEXT line in:\n{status}"));
    assert_eq!(next.trim(), "TASK-NEXT  pending", "{status}");
    assert!(
        status.contains("cancelled; `autobuild resume FEAT-F` continues it"),
        "{status}"
    );
}

#[test]
fn a_task_timeout_stops_its_agent_and_nothing_outlives_the_feature() {
    let project = Project::new();
    let pgid_file = project.outside("pgid");
    let project = project
        .player_timeout("1s")
        // Unconfined: the agent reads its own pids and group, which inside the sandbox's
        // process namespace are the namespace's (and there the namespace itself ends them all:
        // suite::sandbox_process).
        .sandbox_mode("off")
        .task(
            "TASK-HANG",
            "test -f lib/hang.txt",
            "cut -d' ' -f5 /proc/$$/stat > \"$FEATURE_PGID.tmp\"\nmv \"$FEATURE_PGID.tmp\" \"$FEATURE_PGID\"\nsleep 30\n",
        )
        .task("TASK-FINE", "test -f lib/fine.txt", "echo fine > lib/fine.txt")
        .feature(
            "FEAT-T",
            "id: FEAT-T\ntasks:\n  - id: TASK-HANG\n  - id: TASK-FINE\n",
        )
        .env("FEATURE_PGID", pgid_file.to_str().unwrap())
        .commit();

    let output = project.run(&["feature", "FEAT-T", "--max-turns", "1"]);

    assert_exit(&output, 3);
    assert_eq!(project.task_status("FEAT-T", "TASK-HANG"), "blocked");
    assert_eq!(project.task_status("FEAT-T", "TASK-FINE"), "merged");
    let pgid: i32 = fs::read_to_string(&pgid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(live_group_members(pgid), Vec::<i32>::new());
}

#[test]
fn a_task_waiting_for_sign_off_holds_its_dependants_until_it_is_approved() {
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo 'from A' > lib/a.txt")
        .task("TASK-B", "test -f lib/b.txt", "echo 'from B' > lib/b.txt")
        .feature(
            "FEAT-W",
            "id: FEAT-W\nname: Sign-off\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n    dependencies: [TASK-A]\n",
        );
    project.write(
        ".autobuild/tasks/TASK-A.md",
        "---\nid: TASK-A\ntitle: Task TASK-A\ncomplexity: 8\n---\n# Task TASK-A\n\nDo TASK-A.\n\n\
         ## Acceptance Criteria\n- [ ] AC-001: TASK-A is done `verify: test -f lib/a.txt`\n",
    );
    let project = project.commit();

    let output = project.run(&[
        "feature",
        "FEAT-W",
        "--workflow",
        "guardkit",
        "--max-turns",
        "1",
    ]);

    assert_exit(&output, 6);
    assert_eq!(project.task_status("FEAT-W", "TASK-A"), "waiting");
    assert_eq!(project.task_status("FEAT-W", "TASK-B"), "skipped");
    assert!(project.show("autobuild/FEAT-W", "lib/a.txt").is_none());

    assert_exit(&project.run(&["approve", "TASK-A"]), 0);
    let output = project.run(&["resume", "FEAT-W"]);

    assert_exit(&output, 0);
    assert_eq!(project.task_status("FEAT-W", "TASK-A"), "merged");
    assert_eq!(project.task_status("FEAT-W", "TASK-B"), "merged");
    assert!(project.show("autobuild/FEAT-W", "lib/b.txt").is_some());
}

/// A feature killed after a landed task's worktree went to the trash and before git's record
/// of it was pruned: the resume empties the trash, prunes the record and finishes.
#[test]
fn a_feature_killed_with_a_landed_worktree_in_the_trash_resumes_clean() {
    use std::os::unix::process::ExitStatusExt;
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo 'from A' > lib/a.txt")
        .task("TASK-B", "test -f lib/b.txt", "echo 'from B' > lib/b.txt")
        .feature(
            "FEAT-T",
            "id: FEAT-T\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n",
        )
        .commit();

    let killed = project.run_with(
        &[("AUTOBUILD_FAILPOINT", "cleanup.trashed")],
        &["feature", "FEAT-T", "--max-turns", "1"],
    );

    assert_eq!(killed.status.signal(), Some(libc::SIGKILL), "{killed:?}");
    let trash = project.root.join(".autobuild/worktrees/.trash");
    assert_eq!(fs::read_dir(&trash).unwrap().count(), 1);
    let records = project.root.join(".git/worktrees");
    assert_eq!(fs::read_dir(&records).unwrap().count(), 2);

    let output = project.run(&["resume", "FEAT-T"]);

    assert_exit(&output, 0);
    assert_eq!(project.feature_state("FEAT-T")["status"], "approved");
    for task in ["TASK-A", "TASK-B"] {
        assert_eq!(project.task_status("FEAT-T", task), "merged", "{task}");
        assert!(
            !project.branch_exists(&format!("autobuild/{task}")),
            "{task}"
        );
    }
    assert_eq!(fs::read_dir(&trash).unwrap().count(), 0);
    assert!(!records.exists() || fs::read_dir(&records).unwrap().count() == 0);
    assert!(project.show("autobuild/FEAT-T", "lib/a.txt").is_some());
    assert!(project.show("autobuild/FEAT-T", "lib/b.txt").is_some());
}
