//! Landing approved work: the user's main checkout is only ever changed by the merge, and never
//! over the user's own uncommitted edits; a merge that cannot happen leaves the run approved
//! and the work on its branch for `autobuild complete`.

use crate::loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

#[test]
fn a_merge_blocked_by_local_edits_keeps_them_and_complete_lands_it_later() {
    let project = Project::new().commit();
    project.write("lib/greet.sh", "# my local experiment\n");

    let output = project.run(&["task", TASK, "--auto-merge"]);

    // The merge that was asked for did not happen: not a silent 0 (issue 49, item 9).
    assert_exit(&output, 7);
    assert_eq!(project.state()["status"], "approved");
    assert_eq!(project.read("lib/greet.sh"), "# my local experiment\n");
    assert!(project.branch_exists(&project.branch()));
    assert!(project.worktree().exists());

    project.git(&["checkout", "--", "lib/greet.sh"]);
    let output = project.run(&["complete", TASK]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "merged");
    assert!(project.read("lib/greet.sh").contains("Hello, %s!"));
    assert!(!project.branch_exists(&project.branch()));
    assert!(!project.worktree().exists());
    // The landing stays on the run's record: a runner, not an agent, moved the base.
    let landed = &project.state()["landed"];
    assert_eq!(landed["branch"], "main", "{landed}");
    assert_eq!(
        landed["to"],
        project.git(&["rev-parse", "main"]).trim(),
        "{landed}"
    );
}

#[test]
fn without_a_terminal_or_auto_merge_the_run_waits_for_complete() {
    let project = Project::new().commit();

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "approved");
    assert!(!project.read("lib/greet.sh").contains("greeting()"));
    assert!(project.report().contains("autobuild complete"));
}

/// `complete --json` and `discard --json` say what they did as facts; a run's last NDJSON event
/// names its branch and, when it merged, the landing (issue 49, item 11).
#[test]
fn complete_discard_and_the_last_event_report_the_landing_as_json() {
    let project = Project::new().commit();

    let run = project.run(&["task", TASK, "--auto-merge", "--json"]);

    assert_exit(&run, 0);
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&run.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "run_finished");
    assert_eq!(last["branch"], project.branch());
    assert_eq!(last["landed"]["branch"], "main");
    assert_eq!(
        last["landed"]["to"],
        project.git(&["rev-parse", "main"]).trim()
    );
    assert_eq!(last["landed"]["strategy"], "squash");

    // A run left approved: no landing in its event; `complete --json` lands it.
    let project = Project::new().commit();
    let run = project.run(&["task", TASK, "--no-merge", "--json"]);
    assert_exit(&run, 0);
    let last: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&run.stdout).lines().last().unwrap()).unwrap();
    assert_eq!(last["landed"], serde_json::Value::Null);
    let complete = project.run(&["complete", TASK, "--json"]);
    assert_exit(&complete, 0);
    let done: serde_json::Value = serde_json::from_slice(&complete.stdout).unwrap();
    assert_eq!(done["version"], 1);
    assert_eq!(done["kind"], "task");
    assert_eq!(done["id"], TASK);
    assert_eq!(done["branch"], project.branch());
    assert_eq!(done["commit"], project.git(&["rev-parse", "main"]).trim());

    // Discard, twice: the second finds nothing to do.
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    for discarded in [true, false] {
        let output = project.run(&["discard", TASK, "--yes", "--json"]);
        assert_exit(&output, 0);
        let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_eq!(doc["discarded"], discarded, "{doc}");
        assert_eq!(doc["branch"], project.branch());
        assert!(doc["records"]
            .as_str()
            .unwrap()
            .ends_with(&format!(".autobuild/runs/{TASK}")));
    }
    assert!(!project.branch_exists(&project.branch()));
}
