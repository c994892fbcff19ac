//! `[worktree]` of config.toml (DESIGN.md §10): a Python project whose tests import a package
//! that exists only in its git-ignored `.venv`. Linked into the task worktree, the `.venv` makes
//! the tests pass there; the link is never a change, never reverted by the read-only audit and
//! never committed, and the setup command runs once, with the project environment.

use crate::loop_fixture;

use std::fs;
use std::process::Command;

use loop_fixture::{assert_exit, Project, TASK};

const TEST_VENV: &str = r#"python -c "import greetlib; assert greetlib.NAME == 'venv-only'" || { echo "error: greetlib is not importable"; exit 1; }
"#;

/// The sample project plus a test that needs `greetlib`, installed only in the main checkout's
/// `.venv`, which `.gitignore` ignores as a directory (`.venv/`), as most projects write it.
fn python_project(extra_config: &str) -> Project {
    python_project_ignoring(".venv/\n", extra_config)
}

/// The same, with `gitignore` as the project's `.gitignore`.
fn python_project_ignoring(gitignore: &str, extra_config: &str) -> Project {
    let project = Project::new().config(extra_config);
    project.write(".gitignore", gitignore);
    project.write("tests/test_venv.sh", TEST_VENV);
    let status = Command::new("python3")
        .args(["-m", "venv", "--without-pip", ".venv"])
        .current_dir(&project.root)
        .status()
        .expect("python3 runs");
    assert!(status.success(), "python3 -m venv failed");
    let purelib = Command::new(project.root.join(".venv/bin/python"))
        .args([
            "-c",
            "import sysconfig; print(sysconfig.get_paths()['purelib'])",
        ])
        .output()
        .expect("the venv's python runs");
    let site = String::from_utf8(purelib.stdout).unwrap();
    let package = std::path::Path::new(site.trim()).join("greetlib");
    fs::create_dir_all(&package).unwrap();
    fs::write(package.join("__init__.py"), "NAME = 'venv-only'\n").unwrap();
    project.commit()
}

const LINKED: &str = r#"
[env]
path_prepend = [".venv/bin"]
vars = { SETUP_MARK = "from-the-project-env" }

[worktree]
link = [".venv"]
setup = "echo \"$SETUP_MARK\" >> .venv/setup-ran"
"#;

#[test]
fn a_linked_venv_makes_the_tests_pass_and_never_becomes_part_of_the_work() {
    let project = python_project(LINKED);
    assert!(project.show("main", ".gitignore").contains(".venv/"));

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], true);
    // `.venv/` matches directories only: git commands an agent runs would see the link.
    // Warnings go to stderr (issue 25).
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("warning: [worktree] link: .gitignore does not ignore `.venv` as a symlink"),
        "{stderr}"
    );
    // The coach is read-only: an audit that saw the link as a new file would have reverted it
    // and refused the turn.
    let coach = project.record("coach", 1);
    assert_eq!(coach["scope_violation"], serde_json::json!([]), "{coach}");
    let player = project.record("player", 1);
    let changed = player["files_changed"].to_string();
    assert!(!changed.contains(".venv"), "{changed}");
    // The link reached neither a checkpoint nor the merge; the main checkout's .venv survived
    // the worktree's removal.
    let files = project.git(&["log", "--all", "--name-only", "--format="]);
    assert!(!files.contains(".venv"), "{files}");
    assert!(project.root.join(".venv/bin/python").exists());
    // The setup command ran once, in the worktree, with the project environment (it wrote
    // through the link into the main checkout's .venv), and its log is in the run directory.
    assert_eq!(project.read(".venv/setup-ran"), "from-the-project-env\n");
    assert!(project.run_dir().join("logs/worktree_setup.log").is_file());
}

#[test]
fn a_link_git_does_not_ignore_at_all_is_still_never_part_of_the_work() {
    let project = python_project_ignoring("/.venv\n", LINKED);
    git_untrack(&project);
    let output = project.run(&["task", TASK, "--auto-merge"]);
    assert_exit(&output, 0);
    let coach = project.record("coach", 1);
    assert_eq!(coach["scope_violation"], serde_json::json!([]), "{coach}");
    let files = project.git(&["log", "--all", "--name-only", "--format="]);
    assert!(!files.contains(".venv"), "{files}");
}

/// Drops the `.venv` rule from the committed `.gitignore`, so nothing but autobuild's own
/// record of the link keeps it out of the worktree's changes.
fn git_untrack(project: &Project) {
    project.write(".gitignore", "*.pyc\n");
    project.git(&["commit", "-qam", "stop ignoring .venv"]);
}

#[test]
fn without_the_link_the_same_tests_fail() {
    let project = python_project("\n[env]\npath_prepend = [\".venv/bin\"]\n");
    let output = project.run(&["task", TASK, "--no-merge", "--max-turns", "1"]);
    assert_exit(&output, 3);
    let verify = project.record("verify", 1);
    assert_eq!(verify["checks"][0]["status"], "failed", "{verify}");
    assert_eq!(
        verify["checks"][0]["failure_class"], "infrastructure",
        "{verify}"
    );
}

#[test]
fn a_failing_setup_stops_the_run_as_an_infrastructure_failure_before_any_turn() {
    let project = python_project(
        "\n[worktree]\nlink = [\".venv\"]\nsetup = \"echo 'resolver: no matching version' >&2; exit 3\"\n",
    );
    let output = project.run(&["task", TASK, "--no-merge"]);
    assert_exit(&output, 1);
    assert!(!project.run_dir().join("player_turn_1.json").exists());
    let log = fs::read_to_string(project.run_dir().join("logs/worktree_setup.log")).unwrap();
    assert!(log.contains("resolver: no matching version"), "{log}");
    let report = project.report();
    assert!(
        report.contains("infrastructure — the worktree setup command"),
        "{report}"
    );
    assert!(report.contains("exited with status 3"), "{report}");
    assert!(report.contains("Fix the environment"), "{report}");
    assert!(
        report.contains("`autobuild task TASK-1 --resume`"),
        "{report}"
    );
    // The worktree is kept, with its link, for the user to try the command by hand.
    assert!(project.worktree().join(".venv").is_symlink());
}

#[test]
fn a_tracked_path_cannot_be_linked_and_nothing_is_created() {
    let project = Project::new()
        .config("\n[worktree]\nlink = [\"lib\"]\n")
        .commit();
    let output = project.run(&["task", TASK, "--no-merge"]);
    assert_exit(&output, 2);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("[worktree] link lists `lib`, which git tracks"),
        "{stderr}"
    );
    assert!(!project.branch_exists(&project.branch()));
    assert!(!project.worktree().exists());
}

#[test]
fn the_dry_run_shows_what_a_new_worktree_gets() {
    let project = python_project(LINKED);
    let output = project.run(&["task", TASK, "--dry-run"]);
    assert_exit(&output, 0);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "  prepare:    links .venv; then runs `echo \"$SETUP_MARK\" >> .venv/setup-ran` once\n"
        ),
        "{stdout}"
    );
    assert!(!project.run_dir().exists());
}

#[test]
fn continuing_after_a_failed_setup_runs_it_again_and_then_the_task() {
    let project = python_project(
        "\n[env]\npath_prepend = [\".venv/bin\"]\n\n[worktree]\nlink = [\".venv\"]\nsetup = \"test -f .venv/ready || { echo 'run make venv first' >&2; exit 3; }\"\n",
    );
    assert_exit(&project.run(&["task", TASK, "--auto-merge"]), 1);
    assert!(!project.run_dir().join("player_turn_1.json").exists());

    // The user fixes the environment; the worktree's link shows it at once.
    project.write(".venv/ready", "");
    let output = project.run(&["task", TASK, "--resume", "--auto-merge"]);

    assert_exit(&output, 0);
    assert_eq!(project.record("gate", 1)["approved"], true);
    assert_eq!(project.state()["status"], "merged");
}
