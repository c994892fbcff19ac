//! Feature files as users write them (DESIGN.md §3.3): a GuardKit feature with
//! `parallel_groups` under `.guardkit/features/` loads and runs without being written to, and
//! invalid features are rejected with located messages before anything is created.

use crate::feature_fixture;

use std::fs;
use std::path::Path;

use feature_fixture::{assert_exit, stderr, Project};

#[test]
fn a_guardkit_feature_with_parallel_groups_loads_and_runs() {
    let project = Project::new()
        .fixture_tree("guardkit")
        .behaviour(
            "TASK-GK-001",
            "printf 'en() { echo Hello; }\\n' > lib/en.sh",
        )
        .behaviour("TASK-GK-002", "printf 'es() { echo Hola; }\\n' > lib/es.sh")
        .behaviour(
            "TASK-GK-003",
            "mkdir -p bin\nprintf '. lib/en.sh\\n. lib/es.sh\\nen\\nes\\n' > bin/greet\n",
        )
        .commit();
    let feature_file = project.root.join(".guardkit/features/FEAT-A1B2.yaml");
    let before = fs::read(&feature_file).unwrap();

    let output = project.run(&["feature", "FEAT-A1B2", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-A1B2");
    assert_eq!(
        state["waves"],
        serde_json::json!([["TASK-GK-001", "TASK-GK-002"], ["TASK-GK-003"]])
    );
    assert_eq!(state["status"], "merged");
    assert_eq!(state["tasks"]["TASK-GK-003"]["title"], "Add greeting CLI");
    assert!(project.show("main", "bin/greet").is_some());
    assert_eq!(
        fs::read(&feature_file).unwrap(),
        before,
        "the feature file is never written"
    );
}

#[test]
fn a_dependency_cycle_is_rejected_with_the_cycle_and_nothing_is_created() {
    let project = Project::new()
        .task("TASK-A", "true", "true")
        .task("TASK-B", "true", "true")
        .feature(
            "FEAT-CYCLE",
            "id: FEAT-CYCLE\ntasks:\n  - id: TASK-A\n    dependencies: [TASK-B]\n  - id: TASK-B\n    dependencies: [TASK-A]\n",
        )
        .commit();

    let output = project.run(&["feature", "FEAT-CYCLE"]);

    assert_exit(&output, 2);
    let text = stderr(&output);
    assert!(
        text.starts_with(
            ".autobuild/features/FEAT-CYCLE.yaml:4:20: dependency cycle: TASK-A → TASK-B → TASK-A"
        ),
        "{text}"
    );
    assert!(!project.branch_exists("autobuild/FEAT-CYCLE"));
    assert!(!project.root.join(".autobuild/runs").exists());
}

#[test]
fn an_unknown_dependency_is_rejected_with_a_suggestion() {
    let project = Project::new()
        .task("TASK-LOGIN", "true", "true")
        .task("TASK-LOGOUT", "true", "true")
        .feature(
            "FEAT-U",
            "id: FEAT-U\ntasks:\n  - id: TASK-LOGIN\n  - id: TASK-LOGOUT\n    dependencies: [TASK-LOGN]\n",
        )
        .commit();

    let output = project.run(&["feature", "FEAT-U", "--dry-run"]);

    assert_exit(&output, 2);
    let text = stderr(&output);
    assert!(
        text.contains(
            ".autobuild/features/FEAT-U.yaml:5:20: `TASK-LOGOUT` depends on `TASK-LOGN`, which is not a task of this feature"
        ),
        "{text}"
    );
    assert!(text.contains("help: did you mean `TASK-LOGIN`?"), "{text}");
}

#[test]
fn an_existing_feature_branch_is_refused_unless_resumed() {
    let project = Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .feature("FEAT-R", "id: FEAT-R\ntasks:\n  - id: TASK-A\n")
        .commit();
    assert_exit(&project.run(&["feature", "FEAT-R", "--max-turns", "1"]), 0);

    let again = project.run(&["feature", "FEAT-R"]);

    assert_exit(&again, 2);
    let text = stderr(&again);
    assert!(
        text.contains("branch `autobuild/FEAT-R` already exists from an earlier run of FEAT-R"),
        "{text}"
    );
    let resumed = project.run(&["feature", "FEAT-R", "--resume"]);
    assert_exit(&resumed, 2);
    assert!(
        stderr(&resumed).contains("every task of FEAT-R is approved"),
        "{}",
        stderr(&resumed)
    );
}

/// docs/features.md shows the `--dry-run` plan exactly as printed: its block is the stdout of
/// tests/cmd-repo/feature-dry-run.toml, which trycmd checks against the real command. (A
/// `console` block cannot be exact: trycmd drops a block's last newline, so the block would
/// need a blank line the real output does not have.)
#[test]
fn the_documented_dry_run_plan_is_the_checked_output() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let case: toml::Table = toml::from_str(
        &fs::read_to_string(root.join("tests/cmd-repo/feature-dry-run.toml")).unwrap(),
    )
    .unwrap();
    let args: Vec<&str> = case["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let command = format!("$ autobuild {}\n", args.join(" "));
    let docs = fs::read_to_string(root.join("docs/features.md")).unwrap();
    let start = docs
        .find(&command)
        .expect("the docs show the checked command")
        + command.len();
    let block = &docs[start..start + docs[start..].find("```").unwrap()];
    assert_eq!(block, case["stdout"].as_str().unwrap());
}

/// A GuardKit task file under `.guardkit/tasks/backlog/`, named after its id.
fn guardkit_task(project: &Project, id: &str, verify: &str) {
    project.write(
        &format!(".guardkit/tasks/backlog/{id}-do-it.md"),
        &format!(
            "---\nid: {id}\ntitle: Task {id}\nstatus: backlog\n---\n# Task {id}\n\n## Acceptance Criteria\n1. [ ] {id} is done `verify: {verify}`\n"
        ),
    );
}

#[test]
fn a_wrapped_feature_ordered_only_by_waves_runs_wave_by_wave() {
    let project = Project::new()
        .behaviour("TASK-W1", "echo one > one.txt")
        .behaviour("TASK-W2", "test -f one.txt && echo two > two.txt")
        .behaviour("TASK-W3", "echo three > three.txt");
    guardkit_task(&project, "TASK-W1", "test -f one.txt");
    guardkit_task(&project, "TASK-W2", "test -f two.txt");
    guardkit_task(&project, "TASK-W3", "test -f three.txt");
    // A stale copy GuardKit left in another state folder: the backlog copy is more current.
    project.write(
        "tasks/blocked/TASK-W3-old.md",
        "---\nid: TASK-W3\n---\n## Acceptance Criteria\n- stale\n",
    );
    project.write(
        ".guardkit/features/FEAT-WAVES.yaml",
        "feature:\n  id: FEAT-WAVES\n  name: Ordered by waves\ntasks:\n  - id: TASK-W2\n    wave: 2\n  - id: TASK-W1\n    wave: 1\n  - id: TASK-W3\n    wave: 1\n",
    );
    let project = project.commit();

    let plan = project.run(&["feature", "FEAT-WAVES", "--dry-run"]);
    assert_exit(&plan, 0);
    let shown = String::from_utf8_lossy(&plan.stdout);
    assert!(
        shown.contains("waves:         2, as declared by the tasks' `wave:` keys"),
        "{shown}"
    );
    // Warnings go to stderr (issue 25).
    let warned = String::from_utf8_lossy(&plan.stderr);
    assert!(
        warned.contains("task `TASK-W3` is also declared by tasks/blocked/TASK-W3-old.md (blocked); using this copy"),
        "{warned}"
    );

    let output = project.run(&["feature", "FEAT-WAVES", "--auto-merge", "--max-turns", "1"]);

    assert_exit(&output, 0);
    let state = project.feature_state("FEAT-WAVES");
    assert_eq!(
        state["waves"],
        serde_json::json!([["TASK-W1", "TASK-W3"], ["TASK-W2"]])
    );
    assert!(project.show("main", "two.txt").is_some());
}

#[test]
fn problems_in_a_feature_task_file_are_shown_relative_to_the_repository() {
    let project = Project::new();
    project.write(
        "tasks/backlog/TASK-BAD.md",
        "---\nid: TASK-BAD\ncomplexity: 11\n---\n## Acceptance Criteria\n- a\n",
    );
    let project = project
        .feature(
            "FEAT-BAD",
            "id: FEAT-BAD\ntasks:\n  - id: TASK-BAD\n    file_path: tasks/backlog/TASK-BAD.md\n",
        )
        .commit();

    let output = project.run(&["feature", "FEAT-BAD"]);

    assert_exit(&output, 2);
    let text = stderr(&output);
    assert!(
        text.starts_with("tasks/backlog/TASK-BAD.md:3:13: `complexity` must be"),
        "{text}"
    );
    assert!(
        !text.contains(&project.root.display().to_string()),
        "{text}"
    );
}

/// Issue 49, item 2: GuardKit's own layout keeps a task directly in `.guardkit/tasks/`; a
/// feature finds it as `autobuild task` does.
#[test]
fn a_feature_finds_a_task_that_sits_directly_in_the_guardkit_tasks_folder() {
    let project = Project::new().behaviour("TASK-TOP", "echo top > top.txt");
    project.write(
        ".guardkit/tasks/TASK-TOP-at-the-top.md",
        "---\nid: TASK-TOP\ntitle: Task at the top\n---\n# Task at the top\n\n## Acceptance Criteria\n1. [ ] top.txt exists `verify: test -f top.txt`\n",
    );
    project.write(
        ".guardkit/features/FEAT-TOP.yaml",
        "feature:\n  id: FEAT-TOP\n  name: One task at the top\ntasks:\n  - id: TASK-TOP\n",
    );
    let project = project.commit();

    let plan = project.run(&["feature", "FEAT-TOP", "--dry-run"]);

    assert_exit(&plan, 0);
    assert!(String::from_utf8_lossy(&plan.stdout).contains("TASK-TOP"));
    let output = project.run(&["feature", "FEAT-TOP", "--auto-merge", "--max-turns", "1"]);
    assert_exit(&output, 0);
    assert!(project.show("main", "top.txt").is_some());
}

/// Issue 46, item 5: a feature's preflight reads the config and the workflows once for all its
/// tasks, yet each task is still checked with its own `workflow:` and `task_type:`.
#[test]
fn each_task_of_a_feature_is_preflighted_with_its_own_workflow_and_type() {
    let task = |id: &str, keys: &str| {
        format!("---\nid: {id}\ntitle: Task {id}\n{keys}---\n# Task {id}\n\n## Acceptance Criteria\n- [ ] AC-001: done `verify: true`\n")
    };
    let project = Project::new();
    project.write(".autobuild/tasks/TASK-A.md", &task("TASK-A", ""));
    project.write(
        ".autobuild/tasks/TASK-B.md",
        &task("TASK-B", "task_type: bugfix\nworkflow: solo\n"),
    );
    project.write(".autobuild/tasks/TASK-C.md", &task("TASK-C", ""));
    let tasks = "  - id: TASK-A\n  - id: TASK-B\n  - id: TASK-C\n";
    let project = project
        .feature("FEAT-MIX", &format!("id: FEAT-MIX\ntasks:\n{tasks}"))
        .commit();

    let plan = project.run(&["feature", "FEAT-MIX", "--dry-run"]);

    assert_exit(&plan, 0);
    let out = String::from_utf8_lossy(&plan.stdout);
    let workflow_of = |id: &str| {
        let line = out
            .lines()
            .skip_while(|line| !line.trim_start().starts_with(id))
            .nth(1)
            .unwrap_or_default();
        line.split("workflow ")
            .nth(1)
            .and_then(|w| w.split(',').next())
            .map(str::to_string)
    };
    assert_eq!(
        workflow_of("TASK-A").as_deref(),
        Some("player-coach"),
        "{out}"
    );
    assert_eq!(workflow_of("TASK-B").as_deref(), Some("solo"), "{out}");
    assert_eq!(
        workflow_of("TASK-C").as_deref(),
        Some("player-coach"),
        "{out}"
    );

    // A typo in a later task's keys is found although an earlier task's inputs were read.
    project.write(
        ".autobuild/tasks/TASK-C.md",
        &task("TASK-C", "task_type: bugfx\nworkflow: sollo\n"),
    );
    let output = project.run(&["feature", "FEAT-MIX", "--dry-run"]);

    assert_exit(&output, 2);
    let text = stderr(&output);
    assert!(text.contains(".autobuild/tasks/TASK-C.md:4:"), "{text}");
    assert!(
        text.contains("`sollo`") && text.contains("`solo`"),
        "{text}"
    );
}
