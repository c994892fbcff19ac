//! Features run end to end (DESIGN.md §3.3, §7): waves of tasks in parallel worktrees branched
//! from one feature branch, approved tasks merged into it after their wave, failures blocking
//! only their dependants, and the finished feature landing on the base.

use crate::feature_fixture;

use feature_fixture::{assert_exit, stdout, Project};
use scraper::{Html, Selector};

/// A and B are independent; C needs both and copies what they wrote into lib/c.txt.
fn three_tasks() -> Project {
    Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo 'from A' > lib/a.txt")
        .task("TASK-B", "test -f lib/b.txt", "echo 'from B' > lib/b.txt")
        .task(
            "TASK-C",
            "grep -q 'from A' lib/c.txt && grep -q 'from B' lib/c.txt",
            "cat lib/a.txt lib/b.txt > lib/c.txt 2>/dev/null || true",
        )
        .feature(
            "FEAT-1",
            "id: FEAT-1\nname: Three tasks\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n  - id: TASK-C\n    dependencies: [TASK-A, TASK-B]\n",
        )
}

#[test]
fn independent_tasks_then_their_dependant_are_all_approved_and_merged() {
    let project = three_tasks().commit();

    let output = project.run(&["feature", "FEAT-1", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-1");
    assert_eq!(state["status"], "merged");
    for task in ["TASK-A", "TASK-B", "TASK-C"] {
        assert_eq!(state["tasks"][task]["status"], "merged", "{task}");
        assert!(
            !project.branch_exists(&format!("autobuild/{task}")),
            "{task}"
        );
    }
    assert_eq!(
        state["waves"],
        serde_json::json!([["TASK-A", "TASK-B"], ["TASK-C"]])
    );
    // The dependant ran on top of both: it copied their content.
    let c = project.show("main", "lib/c.txt").unwrap();
    assert!(c.contains("from A") && c.contains("from B"), "{c}");
    assert!(project.show("main", "lib/a.txt").is_some());
    assert!(project.show("main", "lib/b.txt").is_some());
    assert!(!project.branch_exists("autobuild/FEAT-1"));
    // One squashed commit on main for the feature.
    let log = project.git(&["log", "--format=%s", "main"]);
    assert_eq!(
        log.lines().collect::<Vec<_>>(),
        ["FEAT-1: Three tasks", "initial"]
    );
    let report = project.report("FEAT-1");
    assert!(report.contains("[report](../TASK-C/report.md)"), "{report}");
    assert!(project.run_dir("TASK-C").join("report.md").is_file());
}

#[test]
fn without_auto_merge_the_feature_branch_holds_all_three_tasks_for_complete() {
    let project = three_tasks().commit();

    let output = project.run(&["feature", "FEAT-1", "--max-turns", "1"]);

    assert_exit(&output, 0);
    assert_eq!(project.feature_state("FEAT-1")["status"], "approved");
    // The feature lands its tasks: no task tells the user to `complete` it.
    let progress = stdout(&output);
    assert!(
        progress.contains("[TASK-A] approved; lands on autobuild/FEAT-1 after its wave"),
        "{progress}"
    );
    assert!(!progress.contains("merge later"), "{progress}");
    assert!(
        project.show("main", "lib/a.txt").is_none(),
        "main is untouched"
    );
    let feature_log = project.git(&["log", "--format=%s", "autobuild/FEAT-1"]);
    for task in ["TASK-A", "TASK-B", "TASK-C"] {
        assert!(
            feature_log.contains(&format!("{task}: Task {task}")),
            "{feature_log}"
        );
    }
    let status = project.run(&["status", "FEAT-1"]);
    assert_exit(&status, 0);
    let text = stdout(&status);
    assert!(text.contains("status:    approved (exit 0)"), "{text}");
    assert!(text.contains("wave 2:"), "{text}");

    let complete = project.run(&["complete", "FEAT-1", "--json"]);

    assert_exit(&complete, 0);
    let done: serde_json::Value = serde_json::from_slice(&complete.stdout).unwrap();
    assert_eq!(done["version"], 1);
    assert_eq!(done["kind"], "feature");
    assert_eq!(done["branch"], "autobuild/FEAT-1");
    assert_eq!(done["base_branch"], "main");
    assert_eq!(done["commit"], project.git(&["rev-parse", "main"]).trim());
    assert!(project.show("main", "lib/c.txt").is_some());
    assert_eq!(project.feature_state("FEAT-1")["status"], "merged");
    assert!(!project.branch_exists("autobuild/FEAT-1"));
}

#[test]
fn a_failing_task_blocks_its_dependant_but_not_an_independent_task() {
    let project = Project::new()
        .task("TASK-OK", "test -f lib/ok.txt", "echo ok > lib/ok.txt")
        .task("TASK-BAD", "test -f lib/bad.txt", "true")
        .task("TASK-AFTER-BAD", "test -f lib/after.txt", "echo after > lib/after.txt")
        .task("TASK-AFTER-OK", "test -f lib/after-ok.txt", "echo after > lib/after-ok.txt")
        .feature(
            "FEAT-2",
            "id: FEAT-2\ntasks:\n  - id: TASK-OK\n  - id: TASK-BAD\n  - id: TASK-AFTER-BAD\n    dependencies: [TASK-BAD]\n  - id: TASK-AFTER-OK\n    dependencies: [TASK-OK]\n",
        )
        .logged()
        .commit();

    let output = project.run(&["feature", "FEAT-2", "--max-turns", "1", "--auto-merge"]);

    assert_exit(&output, 3);
    let state = project.feature_state("FEAT-2");
    assert_eq!(state["status"], "blocked");
    assert_eq!(state["tasks"]["TASK-OK"]["status"], "merged");
    assert_eq!(state["tasks"]["TASK-BAD"]["status"], "blocked");
    assert_eq!(state["tasks"]["TASK-AFTER-BAD"]["status"], "skipped");
    assert_eq!(state["tasks"]["TASK-AFTER-OK"]["status"], "merged");
    assert_eq!(
        project.starts("TASK-AFTER-BAD"),
        0,
        "a skipped task never runs"
    );
    assert!(
        project.show("main", "lib/ok.txt").is_none(),
        "not merged into main"
    );
    assert!(project
        .show("autobuild/FEAT-2", "lib/after-ok.txt")
        .is_some());
    let report = project.report("FEAT-2");
    assert!(
        report.contains("**TASK-AFTER-BAD**: blocked by TASK-BAD (blocked)"),
        "{report}"
    );
}

#[test]
fn stop_on_failure_starts_no_further_task() {
    let project = Project::new()
        .task("TASK-BAD", "test -f lib/bad.txt", "true")
        .task(
            "TASK-LATER",
            "test -f lib/later.txt",
            "echo later > lib/later.txt",
        )
        .feature(
            "FEAT-3",
            "id: FEAT-3\ntasks:\n  - id: TASK-BAD\n  - id: TASK-LATER\n",
        )
        .logged()
        .commit();

    let output = project.run(&[
        "feature",
        "FEAT-3",
        "--max-turns",
        "1",
        "--max-parallel",
        "1",
        "--stop-on-failure",
    ]);

    assert_exit(&output, 3);
    assert_eq!(project.task_status("FEAT-3", "TASK-LATER"), "pending");
    assert_eq!(project.starts("TASK-LATER"), 0);
}

#[test]
fn stop_on_failure_lets_running_tasks_finish() {
    let project = Project::new()
        .task("TASK-BAD", "test -f lib/bad.txt", "true")
        .task(
            "TASK-SLOW",
            "test -f lib/slow.txt",
            "sleep 1; echo slow > lib/slow.txt",
        )
        .feature(
            "FEAT-4",
            "id: FEAT-4\ntasks:\n  - id: TASK-BAD\n  - id: TASK-SLOW\n",
        )
        .logged()
        .commit();

    let output = project.run(&[
        "feature",
        "FEAT-4",
        "--max-turns",
        "1",
        "--max-parallel",
        "2",
        "--stop-on-failure",
    ]);

    // A failure is not a cancellation: exit 3, and the task already running was approved.
    assert_exit(&output, 3);
    assert_ne!(project.task_status("FEAT-4", "TASK-SLOW"), "cancelled");
    assert_ne!(project.task_status("FEAT-4", "TASK-SLOW"), "pending");
}

#[test]
fn tasks_of_a_wave_run_in_parallel() {
    let project = Project::new()
        .task(
            "TASK-S1",
            "test -f lib/s1.txt",
            "sleep 2; echo 1 > lib/s1.txt",
        )
        .task(
            "TASK-S2",
            "test -f lib/s2.txt",
            "sleep 2; echo 2 > lib/s2.txt",
        )
        .feature(
            "FEAT-P",
            "id: FEAT-P\ntasks:\n  - id: TASK-S1\n  - id: TASK-S2\n",
        )
        .logged()
        .commit();

    let output = project.run(&[
        "feature",
        "FEAT-P",
        "--max-turns",
        "1",
        "--max-parallel",
        "2",
        "--json",
    ]);

    assert_exit(&output, 0);
    let events: Vec<serde_json::Value> = stdout(&output)
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect();
    assert!(events
        .iter()
        .any(|e| e["event"] == "feature_started" && e["feature"] == "FEAT-P"));
    assert!(events
        .iter()
        .any(|e| e["event"] == "turn_finished" && e["run"] == "TASK-S2"));
    assert!(project
        .feature_events("FEAT-P")
        .iter()
        .any(|e| e["event"] == "wave_finished"));
    // Parallel, told from the order of events rather than a wall-clock bound (which a loaded
    // machine breaks): each task's player started before the other one's ended.
    let log = project.log();
    let at = |event: &str, task: &str| {
        log.iter()
            .find(|(e, t, _, _)| e == event && t == task)
            .map(|(_, _, _, s)| *s)
            .unwrap()
    };
    assert!(at("start", "TASK-S2") < at("end", "TASK-S1"), "{log:?}");
    assert!(at("start", "TASK-S1") < at("end", "TASK-S2"), "{log:?}");
}

#[test]
fn the_feature_html_report_draws_its_waves_and_links_every_tasks_report() {
    let project = three_tasks().commit();
    assert_exit(
        &project.run(&["feature", "FEAT-1", "--auto-merge", "--max-turns", "1"]),
        0,
    );
    let feature_page = project.run_dir("FEAT-1").join("report.html");
    std::fs::remove_file(&feature_page).unwrap();

    assert_exit(&project.run(&["report", "FEAT-1"]), 0);

    let html = Html::parse_document(&std::fs::read_to_string(&feature_page).unwrap());
    let select = |css: &str| -> Vec<scraper::ElementRef<'_>> {
        html.select(&Selector::parse(css).unwrap()).collect()
    };
    let waves: Vec<Vec<String>> = select(".wave")
        .iter()
        .map(|wave| {
            wave.select(&Selector::parse(".card").unwrap())
                .map(|c| c.value().attr("data-task").unwrap().to_string())
                .collect()
        })
        .collect();
    assert_eq!(waves, [vec!["TASK-A", "TASK-B"], vec!["TASK-C"]]);
    for task in ["TASK-A", "TASK-B", "TASK-C"] {
        let link = format!("../{task}/report.html");
        assert!(
            !select(&format!(".card[data-task={task}] a[href='{link}']")).is_empty(),
            "{task}"
        );
        assert!(project.run_dir("FEAT-1").join(&link).is_file(), "{task}");
    }
    // The timeline: one bar per task, waves in order, each with its duration.
    let rows: Vec<String> = select("#timeline + p + .timeline .row")
        .iter()
        .map(|r| r.value().attr("data-task").unwrap().to_string())
        .collect();
    assert_eq!(rows, ["TASK-A", "TASK-B", "TASK-C"]);
    for row in select(".timeline .row") {
        let text: String = row.text().collect();
        assert!(
            text.contains(" ms") || text.contains(" s"),
            "no duration: {text}"
        );
        assert_eq!(row.select(&Selector::parse(".bar").unwrap()).count(), 1);
    }
    // command agents report no cost: "–" on the feature page as on each task's page.
    let text = |css: &str| -> String { select(css)[0].text().collect() };
    assert!(
        text(".facts").contains("Cost– (no agent reported a cost)"),
        "{}",
        text(".facts")
    );
    assert!(text(".card[data-task=TASK-A] .meta").contains("cost –"));
    let task_page = Html::parse_document(
        &std::fs::read_to_string(project.run_dir("TASK-A").join("report.html")).unwrap(),
    );
    let facts: String = task_page
        .select(&Selector::parse(".facts").unwrap())
        .next()
        .unwrap()
        .text()
        .collect();
    assert!(
        facts.contains("Cost– (no agent reported a cost) ·"),
        "{facts}"
    );
}

/// On its first turn, TASK-A's Player also points the feature branch at a commit of its own
/// holding `lib/forged.txt`, and creates a branch `autobuild/evil`.
const FORGE_FEATURE_BRANCH: &str = r#"echo "from A, turn $AUTOBUILD_TURN" > lib/a.txt
if [ "$AUTOBUILD_TURN" = 1 ]; then
    export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com
    export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
    index="${TMPDIR:-/tmp}/forge-index-$$"
    base=$(git rev-parse refs/heads/autobuild/FEAT-F)
    blob=$(echo forged | git hash-object -w --stdin)
    GIT_INDEX_FILE="$index" git read-tree "$base"
    GIT_INDEX_FILE="$index" git update-index --add --cacheinfo "100644,$blob,lib/forged.txt"
    tree=$(GIT_INDEX_FILE="$index" git write-tree)
    rm -f "$index"
    forged=$(git commit-tree "$tree" -p "$base" -m forged)
    git update-ref refs/heads/autobuild/FEAT-F "$forged"
    git update-ref refs/heads/autobuild/evil "$forged"
fi
"#;

/// A feature whose first task forges the feature branch; B runs after A, on the branch.
fn forging_feature(sandbox: &str) -> Project {
    Project::new()
        .sandbox_mode(sandbox)
        .task("TASK-A", "test -f lib/a.txt", FORGE_FEATURE_BRANCH)
        .task("TASK-B", "test -f lib/b.txt", "echo 'from B' > lib/b.txt")
        .feature(
            "FEAT-F",
            "id: FEAT-F\nname: Forged\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n    dependencies: [TASK-A]\n",
        )
        .commit()
}

fn a_player_forging_the_feature_branch_lands_nothing_of_it(project: Project) {
    let output = project.run(&["feature", "FEAT-F", "--auto-merge", "--max-turns", "2"]);

    assert_exit(&output, 0);
    assert_eq!(project.feature_state("FEAT-F")["status"], "merged");
    assert!(project.show("main", "lib/a.txt").is_some());
    assert!(project.show("main", "lib/b.txt").is_some());
    assert_eq!(project.show("main", "lib/forged.txt"), None);
    assert!(!project.branch_exists("autobuild/evil"));
    // The violation is on the record of the turn that made it, and the forged commit is kept.
    let player = feature_fixture::json(&project.run_dir("TASK-A").join("player_turn_1.json"));
    let violation = player["scope_violation"].to_string();
    assert!(
        violation.contains("refs/heads/autobuild/FEAT-F was moved")
            && violation.contains("refs/heads/autobuild/evil was moved"),
        "{violation}"
    );
    let backups = project.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/autobuild/backup/TASK-A",
    ]);
    let forged = backups
        .lines()
        .any(|backup| project.show(backup, "lib/forged.txt").as_deref() == Some("forged\n"));
    assert!(forged, "{backups}");
}

#[test]
fn a_player_forging_the_feature_branch_unconfined_lands_nothing_of_it() {
    a_player_forging_the_feature_branch_lands_nothing_of_it(forging_feature("off"));
}

#[test]
#[ignore = "needs bubblewrap: run with --ignored (.ci/run does where bwrap works)"]
fn a_player_forging_the_feature_branch_in_the_sandbox_lands_nothing_of_it() {
    crate::support::require_sandbox();
    a_player_forging_the_feature_branch_lands_nothing_of_it(forging_feature("on"));
}

/// Integration after every wave (issue 26): see [`Project::contract_clash`].
fn contract_clash(feature: &str) -> Project {
    Project::new().contract_clash(feature)
}

#[test]
fn tasks_that_pass_alone_and_fail_together_stop_the_feature_after_their_wave() {
    let project = contract_clash("FEAT-9").logged().commit();

    let output = project.run(&["feature", "FEAT-9", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 1);
    let state = project.feature_state("FEAT-9");
    assert_eq!(state["status"], "integration_failed");
    assert_eq!(state["tasks"]["TASK-A"]["status"], "merged");
    assert_eq!(state["tasks"]["TASK-B"]["status"], "merged");
    assert_eq!(project.starts("TASK-C"), 0, "the next wave never started");
    assert_eq!(state["tasks"]["TASK-C"]["status"], "pending");
    let records = state["integration"].as_array().unwrap();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["wave"], 1);
    assert_eq!(records[0]["outcome"], "failed");
    assert_eq!(records[0]["tasks"], serde_json::json!(["TASK-A", "TASK-B"]));
    assert_eq!(records[0]["checks"][0]["name"], "test");
    assert_eq!(records[0]["checks"][0]["status"], "failed");
    // Nothing landed on the base; the runner's worktree and branch are gone.
    assert!(project.show("main", "lib/welcome.sh").is_none());
    assert!(project.branch_exists("autobuild/FEAT-9"));
    assert!(!project.branch_exists("autobuild/integration-FEAT-9"));
    assert!(!project
        .root
        .join(".autobuild/worktrees/integration-FEAT-9")
        .exists());
    let message = state["message"].as_str().unwrap();
    assert!(
        message.contains("integration failed after wave 1: check `test` failed")
            && message.contains("TASK-A, TASK-B")
            && message.contains("FAIL"),
        "{message}"
    );
    let report = project.report("FEAT-9");
    assert!(report.contains("## Integration checks"), "{report}");
    assert!(
        report.contains("wave 1 (TASK-A, TASK-B)") && report.contains("failed: test failed"),
        "{report}"
    );
    let html = std::fs::read_to_string(project.run_dir("FEAT-9").join("report.html")).unwrap();
    assert!(html.contains("Integration checks") && html.contains("TASK-A, TASK-B"));
    let status = project.run(&["status", "FEAT-9"]);
    assert!(
        stdout(&status).contains("integration: wave 1 (TASK-A, TASK-B)"),
        "{}",
        stdout(&status)
    );
    // Nothing can land it by hand either.
    let complete = project.run(&["complete", "FEAT-9"]);
    assert_exit(&complete, 2);
    assert!(project.show("main", "lib/welcome.sh").is_none());
    // Resuming checks the tip again (it still fails: nothing was fixed).
    let again = project.run(&["feature", "FEAT-9", "--resume", "--auto-merge"]);
    assert_exit(&again, 1);
    let state = project.feature_state("FEAT-9");
    assert_eq!(state["integration"].as_array().unwrap().len(), 2);
    assert_eq!(
        project.starts("TASK-A"),
        1,
        "merged tasks are not run again"
    );
}

#[test]
fn with_integrate_the_player_repairs_the_clash_and_the_feature_lands() {
    let project = contract_clash("FEAT-8")
        .integration("integrate")
        // The integration task's Player moves `welcome` to the new contract.
        .behaviour(
            "FEAT-8-integration-1",
            "printf 'welcome() {\\n    greeting Hello \"$1\"\\n}\\n' > lib/welcome.sh\n",
        )
        .logged()
        .commit();

    let output = project.run(&["feature", "FEAT-8", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-8");
    assert_eq!(state["status"], "merged", "{}", stdout(&output));
    assert_eq!(project.starts("FEAT-8-integration-1"), 1);
    let records = state["integration"].as_array().unwrap();
    let outcomes: Vec<&str> = records
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    // Wave 1 fails, is repaired and passes; wave 2 passes.
    assert_eq!(outcomes, ["failed", "passed", "passed"], "{records:?}");
    assert_eq!(records[0]["repair"]["task"], "FEAT-8-integration-1");
    assert_eq!(records[0]["repair"]["status"], "merged");
    let welcome = project.show("main", "lib/welcome.sh").unwrap();
    assert!(welcome.contains("greeting Hello"), "{welcome}");
    assert!(project.show("main", "lib/c.txt").is_some());
    // The repair ran with the usual records.
    assert!(project
        .run_dir("FEAT-8-integration-1")
        .join("report.md")
        .is_file());
}

#[test]
fn waves_that_integrate_cleanly_cost_one_check_run_each() {
    let project = three_tasks();
    let counter = project.outside("checks.log");
    let project = project
        .env("CHECK_RUNS", counter.to_str().unwrap())
        .commit();
    // Every run of the test check (task verify steps and integration checks) logs where it ran.
    project.write(
        "tests/test_count.sh",
        "[ -z \"$CHECK_RUNS\" ] || echo \"$PWD\" >> \"$CHECK_RUNS\"\n",
    );
    project.git(&["add", "-A"]);
    project.git(&["commit", "-q", "-m", "count check runs"]);

    let output = project.run(&["feature", "FEAT-1", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let log = std::fs::read_to_string(&counter).unwrap();
    let integration_runs = log
        .lines()
        .filter(|l| l.contains("worktrees/integration-FEAT-1"))
        .count();
    assert_eq!(integration_runs, 2, "one per wave:\n{log}");
    let state = project.feature_state("FEAT-1");
    assert_eq!(state["status"], "merged");
    let records = state["integration"].as_array().unwrap();
    assert_eq!(records.len(), 2);
    assert!(records.iter().all(|r| r["outcome"] == "passed"));
}
