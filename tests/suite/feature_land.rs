//! `autobuild feature <FEAT> --land`: tasks that ran in other clones (as CI jobs do) land on
//! the feature branch from their pushed branches and downloaded run records, in dependency
//! order, once; `--ready` tells a task's job whether to run it.

use crate::feature_fixture;

use std::fs;
use std::path::{Path, PathBuf};

use feature_fixture::{assert_exit, copy_files, git, json, stdout, Project};

const FEAT: &str = "autobuild/FEAT-L";

/// A and B independent; C after A, D after B. B's criterion never holds.
fn project() -> Project {
    Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .task("TASK-B", "test -f lib/never.txt", "echo b > lib/b.txt")
        .task("TASK-C", "test -f lib/c.txt", "echo c > lib/c.txt")
        .task("TASK-D", "test -f lib/d.txt", "echo d > lib/d.txt")
        .feature(
            "FEAT-L",
            "id: FEAT-L\nname: Landing\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n  - id: TASK-C\n    dependencies: [TASK-A]\n  - id: TASK-D\n    dependencies: [TASK-B]\n",
        )
        .commit()
}

/// Creates the feature branch on the remote, as the workflow's plan job does.
fn push_feature_branch(project: &Project, remote: &Path) {
    let plan = project.clone_remote(remote, "plan", "main");
    git(
        &plan,
        &["push", "-q", "origin", &format!("main:refs/heads/{FEAT}")],
    );
}

/// Runs `task` in its own clone of the feature branch, pushes its branch and keeps its run
/// directory under `artifacts/<TASK>` — one matrix job.
fn task_job(project: &Project, remote: &Path, artifacts: &Path, task: &str, push: bool) {
    let clone = project.clone_remote(remote, &format!("job-{task}"), FEAT);
    let output = project.run_in(
        &clone,
        &[
            "task",
            task,
            "--base",
            FEAT,
            "--no-merge",
            "--max-turns",
            "1",
        ],
    );
    assert!(output.status.code().is_some(), "{task} ran");
    if push {
        let refspec = format!("refs/heads/autobuild/{task}:refs/heads/autobuild/{task}");
        git(&clone, &["push", "-q", "--force", "origin", &refspec]);
    }
    copy_files(
        &clone.join(".autobuild/runs").join(task),
        &artifacts.join(task),
    );
}

/// A landing job: a fresh clone of the feature branch, `--land`, push.
fn landing_job(
    project: &Project,
    remote: &Path,
    artifacts: &Path,
    name: &str,
) -> (PathBuf, std::process::Output) {
    let clone = project.clone_remote(remote, name, FEAT);
    let output = project.run_in(
        &clone,
        &[
            "feature",
            "FEAT-L",
            "--land",
            "--from-remote",
            "origin",
            "--artifacts",
            artifacts.to_str().unwrap(),
        ],
    );
    git(&clone, &["push", "-q", "origin", FEAT]);
    (clone, output)
}

fn subjects(dir: &Path, rev: &str) -> Vec<String> {
    git(dir, &["log", "--first-parent", "--format=%s", rev])
        .lines()
        .map(String::from)
        .collect()
}

#[test]
fn approved_tasks_land_blocked_ones_skip_their_dependants_and_landing_again_changes_nothing() {
    let project = project();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-A", true);
    task_job(&project, &remote, &artifacts, "TASK-B", true);

    let (clone, output) = landing_job(&project, &remote, &artifacts, "land-1");

    assert_exit(&output, 0);
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["tasks"]["TASK-A"]["status"], "merged");
    assert_eq!(state["tasks"]["TASK-B"]["status"], "blocked");
    assert_eq!(state["tasks"]["TASK-C"]["status"], "pending");
    assert_eq!(state["tasks"]["TASK-D"]["status"], "skipped");
    assert_eq!(state["status"], "running");
    // The landing's report (the CI job summary) has each task's turns from its job's record
    // and names where its own report is.
    let report = fs::read_to_string(clone.join(".autobuild/runs/FEAT-L/report.md")).unwrap();
    assert!(
        report.contains("| TASK-A | Task TASK-A | merged | 1/1 |"),
        "{report}"
    );
    assert!(report.contains("`TASK-A/report.md`"), "{report}");
    assert!(!report.contains("](../TASK-A/report.md)"), "{report}");
    let bare = remote.as_path();
    assert_eq!(subjects(bare, FEAT), ["TASK-A: Task TASK-A", "initial"]);
    assert!(
        stdout(&output).contains("skipped: TASK-D (blocked by TASK-B (blocked))"),
        "{}",
        stdout(&output)
    );

    // The next wave's jobs ask whether to run.
    let ready = project.run_in(&clone, &["feature", "FEAT-L", "--ready", "TASK-C"]);
    assert_exit(&ready, 0);
    assert_eq!(stdout(&ready).trim(), "ready=true\nwaits_for=");
    let not_ready = project.run_in(&clone, &["feature", "FEAT-L", "--ready", "TASK-D"]);
    assert_eq!(stdout(&not_ready).trim(), "ready=false\nwaits_for=TASK-B");
    let done = project.run_in(&clone, &["feature", "FEAT-L", "--ready", "TASK-A"]);
    assert_eq!(stdout(&done).trim(), "ready=false\nwaits_for=");

    // Landing again (a re-run of the landing job) lands nothing twice.
    let (_, again) = landing_job(&project, &remote, &artifacts, "land-1-again");
    assert_exit(&again, 0);
    assert_eq!(subjects(bare, FEAT), ["TASK-A: Task TASK-A", "initial"]);

    task_job(&project, &remote, &artifacts, "TASK-C", true);
    let (clone, last) = landing_job(&project, &remote, &artifacts, "land-2");

    // Every task is decided: the feature's own exit code (a task blocked).
    assert_exit(&last, 3);
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["tasks"]["TASK-C"]["status"], "merged");
    assert_eq!(state["status"], "blocked");
    assert_eq!(
        subjects(bare, FEAT),
        ["TASK-C: Task TASK-C", "TASK-A: Task TASK-A", "initial"]
    );
}

#[test]
fn an_abandoned_task_is_not_landed_from_the_approved_record_a_runner_kept() {
    let project = project();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-A", true);
    let clone = project.clone_remote(&remote, "land-abandon", FEAT);

    let output = project.run_in(
        &clone,
        &[
            "feature",
            "FEAT-L",
            "--land",
            "--from-remote",
            "origin",
            "--artifacts",
            artifacts.to_str().unwrap(),
            "--abandon",
            "TASK-A",
        ],
    );

    assert_exit(&output, 0);
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["tasks"]["TASK-A"]["status"], "skipped");
    assert_eq!(
        state["tasks"]["TASK-A"]["message"],
        "abandoned (--abandon): not landed"
    );
    // Its dependant is skipped with it; the branch holds nothing of A.
    assert_eq!(state["tasks"]["TASK-C"]["status"], "skipped");
    assert_eq!(subjects(&clone, FEAT), ["initial"]);

    let alone = project.run_in(&clone, &["feature", "FEAT-L", "--abandon", "TASK-A"]);
    assert_exit(&alone, 2);

    // What is left is named as unfinished, not as "running".
    let complete = project.run_in(&clone, &["complete", "FEAT-L"]);
    assert_exit(&complete, 2);
    let stderr = String::from_utf8_lossy(&complete.stderr);
    assert!(stderr.contains("is unfinished"), "{stderr}");
    assert!(stderr.contains("TASK-B (pending)"), "{stderr}");
    assert!(!stderr.contains("FEAT-L is running"), "{stderr}");
}

#[test]
fn an_approved_task_whose_branch_was_not_pushed_is_reported_not_landed() {
    let project = project();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-A", false);

    let (clone, output) = landing_job(&project, &remote, &artifacts, "land");

    assert_exit(&output, 0);
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["tasks"]["TASK-A"]["status"], "failed");
    let message = state["tasks"]["TASK-A"]["message"].as_str().unwrap();
    assert!(
        message.contains("autobuild/TASK-A is not in origin"),
        "{message}"
    );
    assert_eq!(state["tasks"]["TASK-C"]["status"], "skipped");
    assert_eq!(subjects(remote.as_path(), FEAT), ["initial"]);
}

#[test]
fn a_conflict_stops_the_landing_and_names_the_task_already_landed() {
    let project = Project::new()
        .task(
            "TASK-X",
            "grep -q X lib/greet.sh",
            "echo '# X' >> lib/greet.sh",
        )
        .task(
            "TASK-Y",
            "grep -q Y lib/greet.sh",
            "echo '# Y' >> lib/greet.sh",
        )
        .feature(
            "FEAT-L",
            "id: FEAT-L\ntasks:\n  - id: TASK-X\n  - id: TASK-Y\n",
        )
        .commit();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-X", true);
    task_job(&project, &remote, &artifacts, "TASK-Y", true);

    let (clone, output) = landing_job(&project, &remote, &artifacts, "land");

    assert_exit(&output, 1);
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["status"], "conflict");
    assert_eq!(state["tasks"]["TASK-X"]["status"], "merged");
    assert_eq!(state["tasks"]["TASK-Y"]["status"], "conflict");
    assert_eq!(
        state["conflict"]["with_tasks"],
        serde_json::json!(["TASK-X"])
    );
    assert_eq!(
        state["conflict"]["paths"],
        serde_json::json!(["lib/greet.sh"])
    );
    // What landed before the conflict is pushed; the conflicting task is not on the branch.
    assert_eq!(
        subjects(remote.as_path(), FEAT),
        ["TASK-X: Task TASK-X", "initial"]
    );
}

#[test]
fn a_commit_added_to_a_task_branch_after_approval_is_refused_and_nothing_of_it_lands() {
    let project = project();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-A", false);
    // After approval, a commit on top of the approved one is pushed with the task branch.
    let clone = project.temp().join("clones/job-TASK-A");
    let worktree = clone.join(".autobuild/worktrees/TASK-A");
    fs::write(worktree.join("lib/unreviewed.txt"), "not reviewed\n").unwrap();
    git(&worktree, &["add", "-A"]);
    git(&worktree, &["commit", "-q", "-m", "after approval"]);
    git(
        &clone,
        &[
            "push",
            "-q",
            "origin",
            "refs/heads/autobuild/TASK-A:refs/heads/autobuild/TASK-A",
        ],
    );

    let (clone, output) = landing_job(&project, &remote, &artifacts, "land");

    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["tasks"]["TASK-A"]["status"], "failed", "{state}");
    let message = state["tasks"]["TASK-A"]["message"].as_str().unwrap();
    assert!(
        message.contains("not at the approved commit")
            && message.contains("work added after approval is never landed"),
        "{message}"
    );
    assert!(
        stdout(&output).contains("not at the approved commit"),
        "{}",
        stdout(&output)
    );
    assert_eq!(state["tasks"]["TASK-C"]["status"], "skipped");
    // Nothing of the task landed: neither the added commit nor the approved work.
    assert_eq!(subjects(remote.as_path(), FEAT), ["initial"]);
    let listed = git(remote.as_path(), &["ls-tree", "-r", "--name-only", FEAT]);
    assert!(!listed.contains("unreviewed.txt"), "{listed}");
}

/// The landing job runs the integration check (issue 26): tasks that pass alone and fail
/// together land on the feature branch, the check fails, the landing exits 1 (so the job's
/// `autobuild complete` step never runs) and `complete` refuses anyway.
#[test]
fn a_landing_whose_tasks_fail_together_fails_its_integration_check() {
    let project = Project::new().contract_clash("FEAT-L").commit();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-A", true);
    task_job(&project, &remote, &artifacts, "TASK-B", true);

    let (clone, output) = landing_job(&project, &remote, &artifacts, "land-1");

    assert_exit(&output, 1);
    assert!(
        stdout(&output).contains("integration failed after wave 1: check `test` failed"),
        "{}",
        stdout(&output)
    );
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["status"], "integration_failed");
    assert_eq!(
        state["integration"][0]["tasks"],
        serde_json::json!(["TASK-A", "TASK-B"])
    );
    assert_eq!(state["integration"][0]["outcome"], "failed");
    let complete = project.run_in(&clone, &["complete", "FEAT-L"]);
    assert_exit(&complete, 2);
    assert!(!clone
        .join(".autobuild/worktrees/integration-FEAT-L")
        .exists());
}

/// With `integrate`, a landing job still only checks (no player runs there) and says so.
#[test]
fn with_integrate_a_landing_job_only_checks_and_says_so() {
    let project = Project::new()
        .contract_clash("FEAT-L")
        .integration("integrate")
        .commit();
    let remote = project.bare_remote();
    let artifacts = project.temp().join("artifacts");
    fs::create_dir_all(&artifacts).unwrap();
    push_feature_branch(&project, &remote);
    task_job(&project, &remote, &artifacts, "TASK-A", true);
    task_job(&project, &remote, &artifacts, "TASK-B", true);

    let (clone, output) = landing_job(&project, &remote, &artifacts, "land-1");

    assert_exit(&output, 1);
    let out = stdout(&output);
    assert!(
        out.contains("integration failed after wave 1: check `test` failed")
            && out.contains("only checks in `autobuild feature --land`"),
        "{out}"
    );
    let state = json(&clone.join(".autobuild/runs/FEAT-L/feature.json"));
    assert_eq!(state["status"], "integration_failed");
    assert_eq!(state["integration"][0]["repair"], serde_json::Value::Null);
    assert!(!clone.join(".autobuild/runs/FEAT-L-integration-1").exists());
}
