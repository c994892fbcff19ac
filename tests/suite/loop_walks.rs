//! The runner's walks of the worktree (issue 24): each costs about one `git status`, so a turn
//! of the default loop makes two — after the player (scope check, checkpoint and diff
//! together) and after the checks and the reviewer (their leftovers and the reviewer's audit
//! together) — and what the checks left is still told apart from what the reviewer changed.

use crate::loop_fixture;

use loop_fixture::*;

struct NoDisplay;

impl autobuild::engine::events::EventSink for NoDisplay {
    fn emit(&mut self, _event: &autobuild::engine::events::Event) {}
}

struct NoPerson;

impl autobuild::engine::io::Prompter for NoPerson {
    fn is_interactive(&self) -> bool {
        false
    }

    fn confirm(&self, _question: &str, _cancel: &autobuild::process::CancelToken) -> Option<bool> {
        None
    }
}

/// Runs `autobuild task TASK --no-merge` in this process (the walks are counted per thread);
/// returns the outcome and the walks of the run's worktree.
fn run_counting_walks(project: &Project) -> (autobuild::engine::Outcome, u64) {
    use autobuild::engine::{io::RunIo, plan::BranchPolicy, run, state::RunSettings};
    let settings = RunSettings {
        no_merge: true,
        ..RunSettings::default()
    };
    let options = run::StartOptions {
        policy: BranchPolicy::New,
        yes: true,
        moved_checkout: false,
        io: RunIo {
            sink: Box::new(NoDisplay),
            prompter: Box::new(NoPerson),
            cancel: autobuild::process::CancelToken::new(),
        },
    };
    let outcome = run::start(&project.root, TASK, settings, options).unwrap();
    (outcome, autobuild::git::walks_of(&project.worktree()))
}

fn warnings(project: &Project) -> String {
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    events
        .lines()
        .filter(|line| line.contains("\"warning\""))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn a_turn_walks_the_worktree_twice() {
    // Wrong first, right after the feedback: two full turns of player, checks, coach, gate.
    let project = Project::new().player("player_learns.sh").commit();

    let (outcome, walks) = run_counting_walks(&project);

    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: false }
    );
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
    // The worktree step checks the checkout it made once; then each turn walks twice.
    assert_eq!(walks, 1 + 2 * 2, "two turns");
}

/// Unconfined, the main checkout is guarded around every agent step; what one step's restore
/// left guards the next, and the kernel tells the restore what was written there, so the
/// capture at the start is the run's only walk of it while nothing changes it.
#[test]
fn unconfined_the_main_checkout_is_walked_once_a_run() {
    let project = Project::new()
        .unconfined()
        .player("player_learns.sh")
        .commit();

    let (outcome, _) = run_counting_walks(&project);

    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: false }
    );
    let main = autobuild::git::walks_of(&project.root);
    assert_eq!(main, 1, "two turns of player and coach, one capture");
}

/// A check that leaves a report and appends a comment to a tracked test, then takes a moment to
/// finish (so its writes are clearly older than the reviewer's start).
const LEAVING_CHECK: &str = "
[checks.leave]
cmd = \"sh .autobuild/leave.sh\"
timeout = \"30s\"
";

const LEAVE: &str = "echo report > coverage.out
echo '# touched' >> tests/test_farewell.sh
sleep 0.2
";

fn leaving_checks(project: Project) -> Project {
    project.write(".autobuild/leave.sh", LEAVE);
    project.config(LEAVING_CHECK)
}

#[test]
fn what_the_checks_leave_is_theirs_even_when_the_reviewers_audit_removes_it() {
    let project = leaving_checks(Project::new()).commit();

    let (outcome, _) = run_counting_walks(&project);

    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: false }
    );
    let coach = project.record("coach", 1);
    assert_eq!(coach["removed_files"], serde_json::json!([]), "{coach}");
    assert_eq!(coach["reverted_edits"], serde_json::json!([]), "{coach}");
    assert!(
        !project
            .run_dir()
            .join("prompts/turn_1_coach_retry1.md")
            .exists(),
        "the coach was asked again for what the checks did"
    );
    let warnings = warnings(&project);
    assert!(
        warnings.contains(
            "`verify` left files in the worktree; removed them: coverage.out, tests/test_farewell.sh"
        ),
        "{warnings}"
    );
    assert!(!project.worktree().join("coverage.out").exists());
    assert_eq!(
        std::fs::read_to_string(project.worktree().join("tests/test_farewell.sh")).unwrap(),
        project.show(&project.branch(), "tests/test_farewell.sh")
    );
}

#[test]
fn a_reviewer_editing_after_the_checks_is_still_caught_on_the_shared_walk() {
    let project = leaving_checks(Project::new().coach("coach_edits_once.sh"));
    project.write(
        ".autobuild/agents/coach_checks.sh",
        &fixture("coach_checks.sh"),
    );
    let project = project.commit();

    let (outcome, _) = run_counting_walks(&project);

    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: false }
    );
    let coach = project.record("coach", 1);
    assert_eq!(
        coach["reverted_edits"],
        serde_json::json!(["lib/greet.sh", "tests/test_farewell.sh"]),
        "{coach}"
    );
    let warnings = warnings(&project);
    assert!(
        warnings.contains("`verify` left files in the worktree; removed them: coverage.out"),
        "{warnings}"
    );
    assert!(warnings.contains("runs the review once more"), "{warnings}");
}

/// A check that commits moves the task branch: put back before the reviewer starts (the
/// reviewer may not move refs, so it must not be blamed for the check's commit), and the
/// check's commit never lands.
#[test]
fn a_check_that_commits_is_undone_before_the_reviewer_and_never_blamed_on_it() {
    let project = Project::new();
    project.write(
        ".autobuild/commit.sh",
        "echo '# by the check' >> lib/greet.sh\n\
         git -c user.name=check -c user.email=check@example.com commit -qam 'check commit'\n",
    );
    let project = project
        .config("[checks.commits]\ncmd = \"sh .autobuild/commit.sh\"\ntimeout = \"30s\"\n")
        .commit();

    let (outcome, _) = run_counting_walks(&project);

    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: false }
    );
    let coach = project.record("coach", 1);
    assert_eq!(coach["reverted_edits"], serde_json::json!([]), "{coach}");
    assert!(
        !project
            .run_dir()
            .join("prompts/turn_1_coach_retry1.md")
            .exists(),
        "the coach was asked again for what the check did"
    );
    let log = project.git(&["log", "--format=%s", &project.branch()]);
    assert!(!log.contains("check commit"), "{log}");
    assert!(!project
        .show(&project.branch(), "lib/greet.sh")
        .contains("by the check"));
}
