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

    assert_exit(&output, 0);
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
