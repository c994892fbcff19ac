//! The `approval` step, a person's sign-off: the shipped `guardkit` workflow asks for it when a
//! task's complexity is 7 or more. Without a terminal the run stops waiting (exit 6) with
//! nothing merged; `autobuild approve` continues it to the merge, `autobuild reject` ends it
//! blocked with the reason in its report and the worktree kept.

use crate::loop_fixture;

use loop_fixture::{assert_exit, stdout, Project, TASK};

fn task_with_complexity(complexity: Option<u32>) -> String {
    let line = complexity.map_or(String::new(), |c| format!("complexity: {c}\n"));
    format!(
        "---\nid: TASK-1\ntitle: Add a greeting function\ntask_type: feature\n{line}---\n\
         # Add a greeting function\n\nAdd `greeting NAME` to `lib/greet.sh`; it prints `Hello, NAME!`.\n\n\
         ## Acceptance Criteria\n- [ ] AC-001: `greeting Ada` prints \"Hello, Ada!\" \
         `verify: sh -c '. ./lib/greet.sh && test \"$(greeting Ada)\" = \"Hello, Ada!\"'`\n"
    )
}

fn project(complexity: Option<u32>) -> Project {
    let project = Project::new();
    project.write(
        ".autobuild/tasks/TASK-1.md",
        &task_with_complexity(complexity),
    );
    project.commit()
}

#[test]
fn a_complex_task_waits_for_a_sign_off_and_approve_merges_it() {
    let project = project(Some(8));
    let initial = project.git(&["rev-parse", "main"]);

    let output = project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]);

    assert_exit(&output, 6);
    assert_eq!(project.state()["status"], "waiting");
    // Waiting is not a failure, and the line says how to answer.
    let shown = format!("{}{}", stdout(&output), loop_fixture::stderr(&output));
    assert!(
        shown.contains("signoff: waiting for a person — `autobuild approve TASK-1`"),
        "{shown}"
    );
    assert!(!shown.contains("signoff FAILED"), "{shown}");
    assert_eq!(
        project.git(&["rev-parse", "main"]),
        initial,
        "nothing merged"
    );
    let report = project.report();
    assert!(report.contains("autobuild approve TASK-1"), "{report}");

    let output = project.run(&["approve", TASK]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "merged");
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    let signoff = &project.state()["completed"]["signoff"]["outputs"];
    assert_eq!(signoff["approved"], true, "{signoff}");
    assert_eq!(signoff["by"], "command");
    // Who and when are typed fields of the record, and the report names them.
    assert!(!signoff["person"].as_str().unwrap().is_empty(), "{signoff}");
    assert!(signoff["at"].as_str().unwrap().ends_with('Z'), "{signoff}");
    let report = project.report();
    assert!(report.contains("approved by "), "{report}");
}

#[test]
fn approve_with_merge_lands_a_run_started_without_auto_merge_in_one_step() {
    let project = project(Some(8));

    let output = project.run(&["task", TASK, "--workflow", "guardkit"]);

    assert_exit(&output, 6);
    // The outcome names the exact command, with the id.
    assert!(
        project.state()["outcome"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("autobuild approve TASK-1")
            || stdout(&output).contains("`autobuild approve TASK-1`"),
        "{}",
        project.state()["outcome"]
    );

    let output = project.run_with_env(&["approve", TASK, "--merge"], &[("USER", "ada")]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "merged");
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
}

#[test]
fn a_rejection_blocks_the_run_with_its_reason_and_keeps_the_work() {
    let project = project(Some(9));
    let initial = project.git(&["rev-parse", "main"]);
    assert_exit(
        &project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]),
        6,
    );

    let output = project.run(&["reject", TASK, "--reason", "the greeting must be localised"]);

    assert_exit(&output, 3);
    assert_eq!(project.state()["status"], "blocked");
    assert_eq!(project.state()["outcome"]["outcome"], "rejected");
    assert!(project
        .report()
        .contains("rejected at sign-off: the greeting must be localised"));
    assert_eq!(project.git(&["rev-parse", "main"]), initial);
    assert!(project.worktree().join("lib/greet.sh").exists());
}

#[test]
fn answering_a_run_that_is_not_waiting_is_refused() {
    let project = project(Some(2));

    let output = project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]);
    assert_exit(&output, 0);
    assert!(!project.state()["completed"]
        .as_object()
        .unwrap()
        .contains_key("signoff"));

    let output = project.run(&["approve", TASK]);
    assert_exit(&output, 2);
    let output = project.run(&["reject", TASK, "--reason", " "]);
    assert_exit(&output, 2);
}

#[test]
fn a_task_without_a_complexity_is_not_held_for_sign_off() {
    let project = project(None);

    let output = project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]);

    assert_exit(&output, 0);
    assert!(
        project.show("main", "lib/greet.sh").contains("Hello, %s!"),
        "{}",
        stdout(&output)
    );
}

#[test]
fn a_resumed_waiting_run_waits_again_until_answered() {
    let project = project(Some(7));
    assert_exit(
        &project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]),
        6,
    );

    let output = project.run(&["resume", TASK]);

    assert_exit(&output, 6);
    assert_eq!(project.state()["status"], "waiting");
}

#[test]
fn a_rejected_run_continued_with_resume_gives_the_player_the_reason() {
    let project = project(Some(9));
    assert_exit(
        &project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]),
        6,
    );
    assert_exit(
        &project.run(&["reject", TASK, "--reason", "the greeting must be localised"]),
        3,
    );

    let output = project.run(&[
        "task",
        TASK,
        "--workflow",
        "guardkit",
        "--resume",
        "--max-turns",
        "1",
        "--auto-merge",
    ]);

    // The player (scripted) leaves the work as it was; the branch still holds it against the
    // base, so the loop approves turn 2 and the person is asked again (exit 6): only the person
    // can sign off. What matters is that the player was told why the person said no.
    assert_exit(&output, 6);
    assert_eq!(project.state()["status"], "waiting");
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(
        prompt.contains("the greeting must be localised"),
        "{prompt}"
    );
}

/// A reviewer's `critical` issue in a workflow with an approval step: the person answers there.
/// The run waits (exit 6) with the issue in its question; `autobuild approve` lets the loop go
/// on with the issue as feedback, and the next turn is approved as usual.
#[test]
fn a_critical_issue_waits_for_a_person_where_the_workflow_has_an_approval_step() {
    let project = Project::new()
        .player("player_learns.sh")
        .coach("coach_answers.sh");
    project.write(".autobuild/tasks/TASK-1.md", &task_with_complexity(Some(2)));
    project.write(
        ".autobuild/agents/answers/turn_1.txt",
        "```json\n{\"decision\": \"feedback\", \"summary\": \"Unsafe.\", \"issues\": \
         [{\"severity\": \"critical\", \"category\": \"security\", \"description\": \
         \"CRITICAL-EVAL: the greeting evals its argument\"}], \"criteria\": {\"AC-001\": \"not_met\"}}\n```\n",
    );
    project.write(
        ".autobuild/agents/answers/default.txt",
        "```json\n{\"decision\": \"approve\", \"summary\": \"Done.\", \"issues\": [], \
         \"criteria\": {\"AC-001\": \"met\"}}\n```\n",
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--workflow", "guardkit", "--auto-merge"]);

    assert_exit(&output, 6);
    let state = project.state();
    assert_eq!(state["status"], "waiting");
    let message = state["outcome"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("CRITICAL-EVAL"), "{message}");
    assert!(!project.run_dir().join("player_turn_2.json").exists());

    let output = project.run(&["approve", TASK]);

    assert_exit(&output, 0);
    assert_eq!(project.state()["status"], "merged");
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(project.record("gate", 2)["approved"], true);
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(prompt.contains("CRITICAL-EVAL"), "{prompt}");
}

/// A person at the terminal, as the engine sees one: answers the questions in order (each
/// after `thinking`) and remembers what it was asked.
struct ScriptedPerson {
    answers: std::sync::Mutex<Vec<bool>>,
    asked: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    thinking: std::time::Duration,
}

impl autobuild::engine::io::Prompter for ScriptedPerson {
    fn is_interactive(&self) -> bool {
        true
    }

    fn confirm(&self, question: &str, _cancel: &autobuild::process::CancelToken) -> Option<bool> {
        self.asked.lock().unwrap().push(question.to_string());
        std::thread::sleep(self.thinking);
        let mut answers = self.answers.lock().unwrap();
        // A question beyond the script is answered "no", so an extra question shows as a run
        // that did not merge, besides the list of questions the test compares.
        Some(!answers.is_empty() && answers.remove(0))
    }
}

struct NoDisplay;

impl autobuild::engine::events::EventSink for NoDisplay {
    fn emit(&mut self, _event: &autobuild::engine::events::Event) {}
}

/// Runs `autobuild task TASK --workflow guardkit` in this process with a person answering
/// `answers`; returns the outcome and the questions asked.
fn run_at_a_terminal(
    project: &Project,
    no_merge: bool,
    answers: &[bool],
) -> (autobuild::engine::Outcome, Vec<String>) {
    run_with_person(
        project,
        Some("guardkit"),
        no_merge,
        answers,
        Default::default(),
    )
}

/// [`run_at_a_terminal`] with any workflow and a person who takes `thinking` to answer.
fn run_with_person(
    project: &Project,
    workflow: Option<&str>,
    no_merge: bool,
    answers: &[bool],
    thinking: std::time::Duration,
) -> (autobuild::engine::Outcome, Vec<String>) {
    use autobuild::engine::{io::RunIo, plan::BranchPolicy, run, state::RunSettings};
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let person = ScriptedPerson {
        answers: std::sync::Mutex::new(answers.to_vec()),
        asked: asked.clone(),
        thinking,
    };
    let settings = RunSettings {
        workflow_arg: workflow.map(str::to_string),
        no_merge,
        ..RunSettings::default()
    };
    let options = run::StartOptions {
        policy: BranchPolicy::New,
        yes: false,
        moved_checkout: false,
        io: RunIo {
            sink: Box::new(NoDisplay),
            prompter: Box::new(person),
            cancel: autobuild::process::CancelToken::new(),
        },
    };
    let outcome = run::start(&project.root, TASK, settings, options).unwrap();
    let asked = asked.lock().unwrap().clone();
    (outcome, asked)
}

/// The merge step's time is the runner's, not the person's: the seconds spent answering the
/// merge question are left out of its duration (issue 49, item 10).
#[test]
fn the_time_a_person_takes_to_answer_is_not_the_merge_steps() {
    let project = project(None);
    let thinking = std::time::Duration::from_secs(3);

    let (outcome, asked) = run_with_person(&project, None, false, &[true], thinking);

    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: true }
    );
    let events = std::fs::read_to_string(project.run_dir().join("events.jsonl")).unwrap();
    let merge: serde_json::Value = events
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|e| e["event"] == "step_finished" && e["step"] == "merge")
        .unwrap();
    let ms = merge["duration_ms"].as_u64().unwrap();
    assert!(
        ms < thinking.as_millis() as u64,
        "the merge step took {ms} ms"
    );
}

#[test]
fn yes_to_the_sign_off_question_at_a_terminal_merges_without_a_second_question() {
    let project = project(Some(8));

    let (outcome, asked) = run_at_a_terminal(&project, false, &[true]);

    assert_eq!(
        asked,
        ["Approve the work on TASK-1 (Add a greeting function) for merge?"]
    );
    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: true }
    );
    assert_eq!(project.state()["status"], "merged");
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s!"));
    assert_eq!(
        project.state()["completed"]["signoff"]["outputs"]["by"],
        "terminal"
    );
}

#[test]
fn with_no_merge_the_terminal_sign_off_does_not_ask_for_the_merge_nor_merge() {
    let project = project(Some(8));
    let initial = project.git(&["rev-parse", "main"]);

    let (outcome, asked) = run_at_a_terminal(&project, true, &[true]);

    assert_eq!(
        asked,
        ["Approve the work on TASK-1 (Add a greeting function)?"]
    );
    assert_eq!(
        outcome,
        autobuild::engine::Outcome::Approved { merged: false }
    );
    assert_eq!(project.git(&["rev-parse", "main"]), initial);
}

#[test]
fn no_to_the_sign_off_question_at_a_terminal_blocks_without_merging() {
    let project = project(Some(8));
    let initial = project.git(&["rev-parse", "main"]);

    let (outcome, asked) = run_at_a_terminal(&project, false, &[false]);

    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        matches!(outcome, autobuild::engine::Outcome::Rejected { .. }),
        "{outcome:?}"
    );
    assert_eq!(project.git(&["rev-parse", "main"]), initial);
}
