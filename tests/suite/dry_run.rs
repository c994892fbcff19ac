//! `--dry-run` never changes anything, and still shows the whole plan when the run could not
//! start, naming what blocks it.

use crate::loop_fixture;

use loop_fixture::{assert_exit, Project, TASK};

#[test]
fn a_blocked_dry_run_prints_the_plan_and_what_blocks_it() {
    let project = Project::new().commit();
    let before = project.git(&["for-each-ref"]);

    let output = project.run_with_env(
        &["task", TASK, "--dry-run", "--agent", "claude-code"],
        &[("PATH", "/usr/bin:/bin")],
    );

    assert_exit(&output, 2);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Plan for TASK-1"), "{stdout}");
    assert!(stdout.contains("CANNOT START: role `player`"), "{stdout}");
    assert!(
        stdout.contains("npm install -g @anthropic-ai/claude-code"),
        "{stdout}"
    );
    assert!(stdout.contains("rendered prompt: turn 1"), "{stdout}");
    // The way in without a logged-in agent CLI is named where it is missing.
    assert!(
        stdout.contains("autobuild init --agents command"),
        "{stdout}"
    );
    assert!(!project.run_dir().exists());
    assert!(!project.worktree().exists());
    assert_eq!(project.git(&["for-each-ref"]), before);
}

#[test]
fn a_custom_role_is_labelled_by_its_name_and_a_command_role_shows_no_model() {
    let project = Project::new();
    project.write(
        ".autobuild/workflows/alone.toml",
        r#"schema = 1
name = "alone"

[roles.implementer]
agent = "command"
prompt = "player.md"
command = ["sh", ".autobuild/agents/player.sh"]

[[steps]]
id = "worktree"
uses = "worktree"

[[steps]]
id = "implement"
uses = "agent"
role = "implementer"
"#,
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--dry-run", "--workflow", "alone"]);

    assert_exit(&output, 0);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("--- rendered prompt: turn 1, role implementer ---"),
        "{stdout}"
    );
    assert!(
        stdout.contains("  implementer: command, access write"),
        "{stdout}"
    );
}

#[test]
fn a_runnable_dry_run_exits_0_and_creates_nothing() {
    let project = Project::new().commit();
    let before = project.git(&["status", "--porcelain", "--ignored"]);

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 0);
    assert!(!project.run_dir().exists());
    assert_eq!(project.git(&["status", "--porcelain", "--ignored"]), before);
}

#[test]
fn a_required_check_that_does_not_exist_blocks_the_run() {
    let project = Project::new()
        .config("\n[profiles.feature]\nrequire = [\"checks.tset\", \"criteria\", \"coach\"]\n")
        .commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("requires check `tset` (did you mean `test`?)"),
        "{stdout}"
    );
    let output = project.run(&["task", TASK]);
    assert_exit(&output, 2);
    assert!(!project.run_dir().exists());
}

#[test]
fn an_agent_script_that_is_not_committed_blocks_the_run() {
    let project = Project::new().commit();
    project.write(
        ".autobuild/config.toml",
        &project.read(".autobuild/config.toml").replace(
            ".autobuild/agents/player.sh",
            ".autobuild/agents/new-player.sh",
        ),
    );
    project.write(".autobuild/agents/new-player.sh", "echo hi\n");

    let output = project.run(&["task", TASK]);

    assert_exit(&output, 2);
    let stderr = loop_fixture::stderr(&output);
    assert!(
        stderr.contains("new-player.sh`, which is not committed on main"),
        "{stderr}"
    );
    assert!(!project.run_dir().exists());
}

#[test]
fn a_dry_run_on_an_existing_branch_says_how_to_continue() {
    let project = Project::new().commit();
    project.git(&["branch", "autobuild/TASK-1"]);

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("add --resume"), "{stdout}");
    assert_exit(&project.run(&["task", TASK, "--dry-run", "--resume"]), 0);
}

#[test]
fn an_unreadable_run_record_is_named_not_mistaken_for_no_run() {
    let project = Project::new().commit();
    assert_exit(&project.run(&["task", TASK, "--no-merge"]), 0);
    std::fs::write(project.run_dir().join("state.json"), "{ torn").unwrap();

    let output = project.run(&["status", TASK]);

    // A corrupt record is a problem in a file, like any invalid input: exit 2 (issue 20).
    assert_exit(&output, 2);
    assert!(loop_fixture::stderr(&output).contains("is unreadable"));
}

#[test]
fn a_repository_without_commits_is_told_to_make_one() {
    let dir = tempfile::tempdir().unwrap();
    loop_fixture::git(dir.path(), &["init", "-q", "-b", "main"]);
    let task = "---\nid: T-1\n---\n# T\n\nDo it.\n\n## Acceptance Criteria\n- [ ] done\n";
    std::fs::create_dir_all(dir.path().join(".autobuild/tasks")).unwrap();
    std::fs::write(dir.path().join(".autobuild/tasks/T-1.md"), task).unwrap();

    let output = std::process::Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("-C")
        .arg(dir.path())
        .args(["task", "T-1", "--dry-run"])
        .env("AUTOBUILD_CONFIG_DIR", dir.path().join("none"))
        .output()
        .unwrap();

    assert_exit(&output, 2);
    assert!(loop_fixture::stderr(&output).contains("no commits yet"));
}

/// On GitHub Actions (`GITHUB_ACTIONS=true`) the plan is a collapsible group, its warnings and
/// what blocks it are annotations; `--json` keeps stdout a single JSON document.
#[test]
fn on_github_actions_the_plan_is_grouped_and_its_problems_are_annotations() {
    let project = Project::new().commit();
    let ci = [("GITHUB_ACTIONS", "true"), ("PATH", "/usr/bin:/bin")];

    let output = project.run_with_env(&["task", TASK, "--dry-run", "--agent", "claude-code"], &ci);

    assert_exit(&output, 2);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stdout.starts_with("::group::plan for TASK-1\n"), "{stdout}");
    assert!(stdout.trim_end().ends_with("::endgroup::"), "{stdout}");
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("::error::role `player`") && l.contains("claude")),
        "{stderr}"
    );

    let output = project.run_with_env(
        &[
            "task",
            TASK,
            "--dry-run",
            "--agent",
            "claude-code",
            "--json",
        ],
        &ci,
    );
    assert_exit(&output, 2);
    let plan: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(plan["version"], 1);
    assert_eq!(plan["task"]["id"], TASK);
    let blockers = plan["blockers"].as_array().unwrap();
    assert!(
        blockers
            .iter()
            .any(|b| b.as_str().unwrap().starts_with("role `player`")),
        "{plan}"
    );
}

/// `doctor --json` and `workflows validate --json` print one versioned document each.
#[test]
fn doctor_and_validate_print_versioned_json() {
    let project = Project::new().commit();

    let output = project.run(&["doctor", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(report["version"], 1);
    assert_eq!(report["workflow"], "player-coach");
    assert_eq!(
        report["ready"].as_bool(),
        Some(output.status.code() == Some(0)),
        "{report}"
    );
    assert!(report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["subject"] == "repository" && c["level"] == "ok"));

    let output = project.run(&["workflows", "validate", "--json"]);
    assert_exit(&output, 0);
    let validation: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(validation["version"], 1);
    assert_eq!(validation["valid"], true);
    assert!(validation["workflows"].as_array().unwrap().len() >= 3);
}

/// A task's `workflow:` naming no workflow and a `task_type:` that is a typo are problems in the
/// task file: both at once, each at its line with a suggestion; nothing is planned.
#[test]
fn a_task_naming_an_unknown_workflow_or_a_mistyped_task_type_is_told_where() {
    let project = Project::new();
    let task = project.read(".autobuild/tasks/TASK-1.md");
    project.write(
        ".autobuild/tasks/TASK-1.md",
        &task.replace(
            "task_type: feature\n",
            "task_type: bugfx\nworkflow: playr-coach\n",
        ),
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let expected = [
        ".autobuild/tasks/TASK-1.md:4:12: unknown task type `bugfx`",
        "help: did you mean `bugfix`?",
        ".autobuild/tasks/TASK-1.md:5:11: unknown workflow `playr-coach`",
        "help: did you mean `player-coach`?",
    ];
    for line in expected {
        assert!(stderr.contains(line), "no {line:?} in:\n{stderr}");
    }
    // A far-off task type (another tool's word: GuardKit's `investigation`, which "did you
    // mean" alone would take for `integration`) still runs, under the default profile, as
    // GuardKit runs it.
    for far in ["chore-ops-xyz", "investigation"] {
        let project = Project::new();
        let task = project.read(".autobuild/tasks/TASK-1.md");
        project.write(
            ".autobuild/tasks/TASK-1.md",
            &task.replace("task_type: feature\n", &format!("task_type: {far}\n")),
        );
        let project = project.commit();
        let output = project.run(&["task", TASK, "--dry-run"]);
        assert_exit(&output, 0);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains(&format!("unknown task type `{far}`")),
            "{stderr}"
        );
    }
}
