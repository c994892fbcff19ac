//! Other workflows than the default run end to end: the shipped `solo` workflow (no coach,
//! its gate waives the `coach` requirement) and a repo workflow with a `run` step whose
//! environment is filled from step outputs.

mod loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

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
}
