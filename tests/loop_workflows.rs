//! Other workflows than the default run end to end: the shipped `solo` workflow (no coach,
//! its gate waives the `coach` requirement) and a repo workflow with a `run` step whose
//! environment is filled from step outputs.

mod loop_fixture;

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
