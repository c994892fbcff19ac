//! Other workflows than the default run end to end: the shipped `solo` workflow (no coach,
//! its gate waives the `coach` requirement) and a repo workflow with a `run` step whose
//! environment is filled from step outputs.

use crate::loop_fixture;

use loop_fixture::{assert_exit, fixture, workflow_fixture, Project, TASK};

#[test]
fn solo_workflow_is_approved_by_the_runner_gates_alone() {
    let project = Project::new().commit();

    let output = project.run(&["task", TASK, "--workflow", "solo", "--auto-merge"]);

    assert_exit(&output, 0);
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    assert!(!project.run_dir().join("coach_turn_1.json").exists());
    assert_eq!(project.record("gate", 1)["approved"], true);
}

#[test]
fn solo_workflow_still_blocks_failing_checks() {
    let project = Project::new().player("player_claims_pass.sh").commit();

    let output = project.run(&["task", TASK, "--workflow", "solo", "--max-turns", "1"]);

    assert_exit(&output, 3);
    assert_eq!(project.record("gate", 1)["approved"], false);
}

#[test]
fn run_step_env_reads_step_outputs() {
    let project = Project::new();
    let out_file = project.outside("turns.txt");
    project.write(
        ".autobuild/workflows/with-run.toml",
        &format!(
            r#"schema = 1
name = "with-run"
extends = "player-coach"

[[steps]]
id = "announce"
uses = "run"
if = "steps.cycle.outputs.exit == 'done'"
run = 'printf "%s %s" "$TURNS" "$EXIT" > "$OUT_FILE"'
env = {{ TURNS = "${{{{ steps.cycle.outputs.iterations }}}}", EXIT = "${{{{ steps.cycle.outputs.exit }}}}", OUT_FILE = "{}" }}
"#,
            out_file.display()
        ),
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "with-run", "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(std::fs::read_to_string(&out_file).unwrap(), "1 done");
}

#[test]
fn a_second_loop_keeps_its_own_records_and_never_reuses_the_first_loops_checks() {
    let project = Project::new();
    project.write(
        ".autobuild/agents/breaker.sh",
        "printf 'greeting() { echo \"Hello, $1?\"; }\\n' > lib/greet.sh\necho broke it\n",
    );
    project.write(
        ".autobuild/workflows/two-loops.toml",
        r#"schema = 1
name = "two-loops"
extends = "player-coach"

[roles.breaker]
agent = "command"
prompt = "player.md"
command = ["sh", ".autobuild/agents/breaker.sh"]

[[steps]]
id = "second"
uses = "loop"
max_iterations = 1
until = "steps.gate2.outputs.approved"
  [[steps.steps]]
  id = "implement2"
  uses = "agent"
  role = "breaker"
  [[steps.steps]]
  id = "review2"
  uses = "agent"
  role = "coach"
  [[steps.steps]]
  id = "gate2"
  uses = "gate"
"#,
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "two-loops", "--no-merge"]);

    assert_exit(&output, 3);
    assert_eq!(project.record("gate", 1)["approved"], true);
    assert_eq!(project.record("player", 1)["role"], "player");
    assert_eq!(project.record("second_player", 1)["role"], "breaker");
    assert_eq!(project.record("second_gate", 1)["approved"], false);
    assert!(!project.run_dir().join("second_verify_turn_1.json").exists());
    let report = project.report();
    assert!(
        report.contains("| second 1 |"),
        "the second loop's turn is in report.md:\n{report}"
    );
}

#[test]
fn every_reviewer_counts_a_rejecting_security_review_is_never_outvoted_by_the_lead() {
    let project = Project::new();
    project.write(
        ".autobuild/agents/security.sh",
        &fixture("coach_security.sh"),
    );
    project.write(
        ".autobuild/workflows/secure.toml",
        &workflow_fixture("secure.toml"),
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "secure", "--auto-merge"]);

    assert_ne!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let security = project.record("coach", 1);
    assert_eq!(security["step"], "security_review");
    assert_eq!(security["verdict"]["decision"], "feedback");
    let lead = project.record("coach_review", 1);
    assert_eq!(lead["verdict"]["decision"], "approve", "{lead}");
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false);
    assert!(
        gate.to_string()
            .contains("[security_review] SECURITY-FINDING"),
        "{gate}"
    );
    // The reviewer speaks as itself, not as "the coach".
    assert!(
        gate.to_string()
            .contains("the security reviewer did not approve (1 must-fix issue)"),
        "{gate}"
    );
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(prompt.contains("SECURITY-FINDING"), "{prompt}");
    let report = project.report();
    assert!(report.contains("SECURITY-FINDING"));
    assert!(
        report.contains("security_review: feedback (1 issue(s)); review: approve (0 issue(s))"),
        "both reviewers' decisions in the turn table:\n{report}"
    );
    assert!(!project.git(&["log", "--format=%s", "main"]).contains(TASK));
}

/// Issue 43, item 6: a reviewer of one concern (`criteria = "none"`) approves about its concern
/// without judging the task's criteria; the lead coach judges them.
#[test]
fn a_concern_only_reviewer_approves_without_judging_the_criteria() {
    let run = |criteria_key: &str| {
        let project = Project::new();
        project.write(
            ".autobuild/agents/security.sh",
            r#"cat > /dev/null
printf '```json\n{"decision": "approve", "summary": "no injection", "issues": [], "criteria": []}\n```\n'
"#,
        );
        project.write(
            ".autobuild/agents/coach.sh",
            r#"cat > /dev/null
printf '```json\n{"decision": "approve", "summary": "done", "issues": [], "criteria": [{"id": "AC-001", "status": "met", "evidence": "ran it"}, {"id": "AC-002", "status": "met", "evidence": "read it"}]}\n```\n'
"#,
        );
        project.write(
            ".autobuild/tasks/TASK-1.md",
            &format!(
                "{}- [ ] AC-002: the greeting is documented in lib/greet.sh\n",
                loop_fixture::task_file()
            ),
        );
        project.write(
            ".autobuild/workflows/secure.toml",
            &workflow_fixture("secure.toml").replace(
                "  role = \"security\"\n",
                &format!("  role = \"security\"\n{criteria_key}"),
            ),
        );
        let project = project.commit();
        let output = project.run(&[
            "task",
            TASK,
            "--workflow",
            "secure",
            "--auto-merge",
            "--max-turns",
            "1",
        ]);
        (project, output)
    };

    let (project, output) = run("  criteria = \"none\"\n");
    assert_exit(&output, 0);
    assert_eq!(project.record("coach", 1)["verdict"]["decision"], "approve");

    // Without the key the same answer leaves AC-002 unjudged: not an approval.
    let (project, output) = run("");
    assert_exit(&output, 3);
    assert!(project.record("coach", 1)["verdict_error"]
        .to_string()
        .contains("AC-002"));
}

#[test]
fn a_gate_that_names_its_reviews_weighs_only_those_verdicts() {
    let project = Project::new();
    project.write(
        ".autobuild/agents/security.sh",
        &fixture("coach_security.sh"),
    );
    let workflow = workflow_fixture("secure.toml").replace(
        "  id = \"gate\"\n  uses = \"gate\"",
        "  id = \"gate\"\n  uses = \"gate\"\n  reviews = [\"review\"]",
    );
    assert!(workflow.contains("reviews = [\"review\"]"));
    project.write(".autobuild/workflows/secure.toml", &workflow);
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "secure", "--auto-merge"]);

    assert_exit(&output, 0);
    // The security review still ran and is on record; the gate did not weigh it.
    assert_eq!(
        project.record("coach", 1)["verdict"]["decision"],
        "feedback"
    );
    assert_eq!(project.record("gate", 1)["approved"], true);
}

#[test]
fn a_prompt_that_cannot_render_on_turn_1_stops_the_run_before_anything_is_created() {
    let project = Project::new();
    project.write(
        ".autobuild/prompts/mine.md",
        "Fix this: {{ feedback.summary }}\n",
    );
    project.write(
        ".autobuild/workflows/mine.toml",
        "schema = 1\nname = \"mine\"\nextends = \"player-coach\"\n\n[roles.player]\nprompt = \"mine.md\"\n",
    );
    let project = project.commit();

    let dry = project.run(&["task", TASK, "--workflow", "mine", "--dry-run"]);
    assert_exit(&dry, 2);
    // Validation now renders the template for turn 1 itself: the error is located in it.
    let said = String::from_utf8_lossy(&dry.stderr);
    assert!(said.contains("rendering it for turn 1"), "{said}");

    let run = project.run(&["task", TASK, "--workflow", "mine"]);
    assert_exit(&run, 2);
    assert!(!project.worktree().exists());
    assert!(!project.branch_exists(&project.branch()));
}

/// The sample task with `extra` added to its front matter.
fn task_with(front_matter: &str) -> String {
    loop_fixture::task_file().replacen(
        "task_type: feature\n",
        &format!("task_type: feature\n{front_matter}"),
        1,
    )
}

#[test]
fn context_files_reach_every_prompt_and_the_dry_run() {
    let project = Project::new().config("\n[context]\nfiles = [\"docs/architecture.md\"]\n");
    project.write(
        "docs/architecture.md",
        "ARCH-NOTE: greetings live in lib/\n",
    );
    project.write("docs/style.md", "STYLE-NOTE: printf, never echo\n");
    project.write(
        ".autobuild/tasks/TASK-1.md",
        &task_with("context_files: [docs/style.md]\n"),
    );
    let project = project.commit();

    let dry = project.run(&["task", TASK, "--dry-run"]);
    assert_exit(&dry, 0);
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(
        said.contains(
            "Context files (shown to every role):\n  docs/architecture.md\n  docs/style.md\n"
        ),
        "{said}"
    );
    assert!(
        said.contains("ARCH-NOTE"),
        "the rendered prompt inlines them:\n{said}"
    );

    let output = project.run(&["task", TASK, "--no-merge"]);
    assert_exit(&output, 0);
    for prompt in ["turn_1_player.md", "turn_1_coach.md"] {
        let text = std::fs::read_to_string(project.run_dir().join("prompts").join(prompt)).unwrap();
        for expected in [
            "## `docs/architecture.md`",
            "ARCH-NOTE",
            "## `docs/style.md`",
            "STYLE-NOTE",
        ] {
            assert!(
                text.contains(expected),
                "{prompt} lacks {expected}:\n{text}"
            );
        }
    }
}

#[test]
fn a_missing_context_file_stops_the_run_before_anything_is_created_naming_where_it_is_listed() {
    let project = Project::new();
    project.write(
        ".autobuild/tasks/TASK-1.md",
        &task_with("context_files:\n  - docs/gone.md\n"),
    );
    let project = project.commit();

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        said.contains("context file `docs/gone.md` does not exist"),
        "{said}"
    );
    assert!(
        said.contains("TASK-1.md:5:1:"),
        "located at the key:\n{said}"
    );
    assert!(!project.worktree().exists());
}

/// The project with a scripted read-only planner for the shipped `planned` workflow.
fn planned_project() -> Project {
    let project = Project::new().config(
        "\n[roles.planner]\nagent = \"command\"\ncommand = [\"sh\", \".autobuild/agents/planner.sh\"]\ntimeout = \"20s\"\n",
    );
    project.write(
        ".autobuild/agents/planner.sh",
        "cat > /dev/null\nprintf '1. Approach: PLAN-MARKER add greeting to lib/greet.sh\\n2. Files: lib/greet.sh\\n' > \"$AUTOBUILD_OUTPUT\"\necho 'planned (see the output file)'\n",
    );
    project
}

#[test]
fn the_planned_workflow_hands_the_plan_to_the_player_and_the_coach() {
    let project = planned_project().commit();

    let output = project.run(&["task", TASK, "--workflow", "planned", "--no-merge"]);

    assert_exit(&output, 0);
    for prompt in ["turn_1_player.md", "turn_1_coach.md"] {
        let text = std::fs::read_to_string(project.run_dir().join("prompts").join(prompt)).unwrap();
        assert!(text.starts_with("# The plan"), "{prompt}:\n{text}");
        assert!(
            text.contains("PLAN-MARKER add greeting"),
            "{prompt}:\n{text}"
        );
        assert!(
            !text.contains("planned (see the output file)"),
            "the file wins: {prompt}"
        );
    }
    let state = project.state();
    assert_eq!(
        state["completed"]["plan"]["outputs"]["text"],
        "1. Approach: PLAN-MARKER add greeting to lib/greet.sh\n2. Files: lib/greet.sh\n"
    );
    let report = project.report();
    assert!(
        report.contains("## Step `plan`: its answer\n\n> 1. Approach: PLAN-MARKER"),
        "{report}"
    );
    let html = std::fs::read_to_string(project.run_dir().join("report.html")).unwrap();
    assert!(html.contains("PLAN-MARKER"));
    // The planner is read-only: the plan changed nothing on the branch before the player ran.
    assert_eq!(project.record("player", 1)["role"], "player");
}

#[test]
fn a_complex_task_waits_for_a_person_to_sign_off_the_plan_before_any_code_is_written() {
    let project = planned_project();
    project.write(".autobuild/tasks/TASK-1.md", &task_with("complexity: 8\n"));
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "planned", "--no-merge"]);

    assert_exit(&output, 6);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("Accept this plan for TASK-1"), "{said}");
    assert!(
        said.contains("PLAN-MARKER"),
        "the question shows the plan:\n{said}"
    );
    assert!(!project.run_dir().join("player_turn_1.json").exists());
}

/// A task without a `complexity:` is evaluated by its plan (GuardKit's Phase 2.7): a plan that
/// states 8/10 is signed off before any code; one that states 3/10 is not (issue 49, item 5).
#[test]
fn without_a_complexity_the_plans_own_decides_the_sign_off() {
    for (stated, exit) in [("8/10", 6), ("3/10", 0)] {
        let project = planned_project();
        project.write(
            ".autobuild/agents/planner.sh",
            &format!("cat > /dev/null\nprintf '1. Approach: add greeting\\n\\n**Complexity:** {stated}\\n'\n"),
        );
        let project = project.commit();

        let output = project.run(&["task", TASK, "--workflow", "planned", "--no-merge"]);

        assert_exit(&output, exit);
        let state = project.state();
        let complexity = stated.split('/').next().unwrap().parse::<u64>().unwrap();
        assert_eq!(
            state["completed"]["plan"]["outputs"]["complexity"],
            complexity
        );
    }
}

/// An empty plan is not a plan to follow: the run stops before the player is told to follow it.
#[test]
fn an_empty_plan_stops_the_run_before_the_player() {
    let project = planned_project();
    project.write(
        ".autobuild/agents/planner.sh",
        "cat > /dev/null\nprintf '   \\n'\n",
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "planned", "--no-merge"]);

    assert_exit(&output, 1);
    assert_eq!(project.state()["status"], "failed");
    assert!(
        project.report().contains("plan is empty"),
        "{}",
        project.report()
    );
    assert!(!project.run_dir().join("prompts/turn_1_player.md").exists());
}

/// The project with scripted test-first roles for the shipped `tdd` workflow; `test` is the
/// test file the tester writes.
fn tdd_project(test: &str) -> Project {
    let project = Project::new().config(
        "\n[roles.tester]\nagent = \"command\"\ncommand = [\"sh\", \".autobuild/agents/tester.sh\"]\ntimeout = \"20s\"\n\n[roles.test_coach]\nagent = \"command\"\ncommand = [\"sh\", \".autobuild/agents/test_coach.sh\"]\ntimeout = \"20s\"\n",
    );
    project.write(
        ".autobuild/agents/tester.sh",
        &format!("cat > /dev/null\ncat > tests/test_greet.sh <<'TEST'\n{test}TEST\necho 'wrote tests/test_greet.sh'\n"),
    );
    project.write(
        ".autobuild/agents/test_coach.sh",
        r#"cat > /dev/null
if [ -f tests/test_greet.sh ]; then d=approve; s=met; i='[]'; else d=feedback; s=not_met; i='[{"severity": "must_fix", "category": "tests", "description": "no test for AC-001", "location": "tests/", "suggestion": "write one"}]'; fi
printf '```json\n{"decision": "%s", "summary": "tests reviewed", "issues": %s, "criteria": [{"id": "AC-001", "status": "%s", "evidence": "tests/test_greet.sh"}]}\n```\n' "$d" "$i" "$s"
"#,
    );
    project
}

const RED_TEST: &str = ". ./lib/greet.sh\ngot=$(greeting Ada 2>/dev/null)\n[ \"$got\" = \"Hello, Ada!\" ] || { echo \"error: greeting Ada: expected \\\"Hello, Ada!\\\", got \\\"$got\\\"\"; exit 1; }\n";

/// Implements the greeting and leaves the tests alone.
const IMPLEMENTER: &str = r#"cat > /dev/null
cat > lib/greet.sh <<'IMPL'
farewell() { printf 'Goodbye, %s.\n' "$1"; }
greeting() { printf 'Hello, %s!\n' "$1"; }
IMPL
echo "implemented greeting"
"#;

#[test]
fn tdd_a_red_then_green_run_is_approved() {
    let project = tdd_project(RED_TEST);
    project.write(".autobuild/agents/player.sh", IMPLEMENTER);
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "tdd", "--auto-merge"]);

    assert_exit(&output, 0);
    // The red turn says what it witnessed, not "checks 1 passed" for a failing check.
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("red witness holds (1 check(s) fail as new tests should)"),
        "{said}"
    );
    let red = project.record("verify", 1);
    assert_eq!(red["expect_fail"], true, "{red}");
    assert_eq!(
        red["checks"][0]["status"], "passed",
        "red as it should be: {red}"
    );
    assert!(
        red["criteria"].as_array().unwrap().is_empty(),
        "no criteria in the red phase"
    );
    assert_eq!(project.record("gate", 1)["approved"], true);
    // The tester changed test files only; the implementation came in the second phase.
    assert_eq!(
        project.record("player", 1)["files_changed"],
        serde_json::json!(["tests/test_greet.sh"])
    );
    assert_eq!(project.record("cycle_gate", 1)["approved"], true);
    assert_eq!(
        project.state()["locked"],
        serde_json::json!(["tests/test_greet.sh"]),
        "the accepted test is locked"
    );
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    assert!(project
        .show("main", "tests/test_greet.sh")
        .contains("greeting Ada"));
}

/// Issue 43, item 7: the red phase judges the checks it runs; a second required check (here a
/// linter) is the implementation phase's, and the run reaches green.
#[test]
fn tdd_with_a_second_required_check_reaches_green() {
    let project = tdd_project(RED_TEST).config(
        r#"
[checks.lint]
cmd = "sh -n lib/greet.sh"

[profiles.feature]
require = ["checks.test", "checks.lint", "criteria", "coach", "changes"]
"#,
    );
    project.write(".autobuild/agents/player.sh", IMPLEMENTER);
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "tdd", "--auto-merge"]);

    assert_exit(&output, 0);
    let red = project.record("verify", 1);
    assert_eq!(red["checks"].as_array().unwrap().len(), 1, "{red}");
    assert_eq!(project.record("gate", 1)["approved"], true);
    let green = project.record("cycle_verify", 1);
    let names: Vec<&str> = green["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"lint") && names.contains(&"test"),
        "{green}"
    );
    assert_eq!(project.record("cycle_gate", 1)["approved"], true);
}

#[test]
fn tdd_tests_that_pass_on_the_base_are_rejected_as_not_red() {
    let passing = ". ./lib/greet.sh\n[ \"$(farewell Ada)\" = \"Goodbye, Ada.\" ] || exit 1\n";
    let project = tdd_project(passing).commit();

    let output = project.run(&["task", TASK, "--workflow", "tdd", "--max-turns", "1"]);

    assert_exit(&output, 3);
    let red = project.record("verify", 1);
    assert_eq!(red["checks"][0]["status"], "failed", "{red}");
    let gate = project.record("gate", 1);
    assert_eq!(gate["approved"], false);
    assert!(
        gate.to_string()
            .contains("not red: `test` passes on the code as it is"),
        "{gate}"
    );
    // Worded as what happened, never "failed (exit 0)".
    assert!(
        gate.to_string()
            .contains("exited 0 but the runner's verification refused it"),
        "{gate}"
    );
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("red witness: 0 as it should, 1 not red"),
        "{said}"
    );
    assert!(
        !project.run_dir().join("cycle_player_turn_1.json").exists(),
        "no implementation ran"
    );
}

#[test]
fn tdd_a_player_that_edits_a_locked_test_while_implementing_is_reverted_and_not_approved() {
    // The fixture's player implements the greeting correctly and also rewrites
    // tests/test_greet.sh, which the red witness accepted and locked.
    let project = tdd_project(RED_TEST).commit();

    let output = project.run(&["task", TASK, "--workflow", "tdd"]);

    // Every turn rewrites the test and is reverted, until the stall detector stops the loop.
    assert_exit(&output, 4);
    assert_eq!(
        project.record("gate", 1)["approved"],
        true,
        "the tests were accepted"
    );
    assert!(
        !project.show("main", "lib/greet.sh").contains("greeting()"),
        "nothing was merged"
    );
    let player = project.record("cycle_player", 1);
    let violation = player["scope_violation"].to_string();
    assert!(
        violation.contains("tests/test_greet.sh (a test the red witness accepted"),
        "{player}"
    );
    let gate = project.record("cycle_gate", 1);
    assert_eq!(gate["approved"], false, "{gate}");
    assert!(
        gate["reasons"].to_string().contains("the runner reverted"),
        "{gate}"
    );
    // The branch holds the tester's test, not the player's rewrite; the implementation stays.
    let branch = project.branch();
    assert_eq!(project.show(&branch, "tests/test_greet.sh"), RED_TEST);
    assert!(project.show(&branch, "lib/greet.sh").contains("greeting()"));
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_1_cycle_player.md")).unwrap();
    assert!(
        prompt.contains("`tests/test_greet.sh`"),
        "the player is told the test is locked:\n{prompt}"
    );
}

/// A check stopped in the middle of a git command (or one that plants it) leaves the
/// worktree's `index.lock`; with no reviewer between the checks and the next writer, the
/// runner's removal of what the checks left must not fail on it.
#[test]
fn a_lock_a_check_leaves_does_not_stop_the_next_turn_without_a_coach() {
    let project = Project::new().player("player_learns.sh");
    project.write(
        ".autobuild/leave_lock.sh",
        "touch \"$(git rev-parse --git-dir)/index.lock\"\necho '# touched' >> tests/test_farewell.sh\n",
    );
    let project = project
        .config("[checks.leave]\ncmd = \"sh .autobuild/leave_lock.sh\"\ntimeout = \"30s\"\n")
        .commit();

    let output = project.run(&["task", TASK, "--workflow", "solo", "--no-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
    assert_eq!(
        std::fs::read_to_string(project.worktree().join("tests/test_farewell.sh")).unwrap(),
        project.show(&project.branch(), "tests/test_farewell.sh")
    );
}
