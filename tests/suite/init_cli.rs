//! `autobuild init` run as a user would: the built binary in a fresh git repository.
//!
//! Covered here rather than by trycmd because a case's `.in` directory cannot contain a `.git`
//! (git refuses to track one), and init needs a repository.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use autobuild::project::Config;
use autobuild::task::locate;

fn init(dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("init")
        .current_dir(dir)
        .env_remove("AUTOBUILD_LOG")
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    git2::Repository::init(dir.path()).unwrap();
    dir
}

#[test]
fn scaffolds_config_with_detected_test_example_task_and_gitignore() {
    let dir = repo();
    fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"x\"\n").unwrap();
    let output = init(dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert_eq!(
        stdout(&output),
        "created .autobuild/config.toml (checks.test = \"cargo test\": Cargo.toml found)\n\
         created .autobuild/tasks/TASK-EXAMPLE.md\n\
         created .autobuild/.gitignore\n\
         suggest: add target/ to .gitignore (caches and build output the project's tools write, \
         which a reviewer running the tests leaves behind); not changed\n\
         next: edit .autobuild/tasks/TASK-EXAMPLE.md, then run `autobuild task TASK-EXAMPLE --dry-run`; \
         the default agents need Claude Code logged in (`claude`), or run `autobuild init --agents \
         command` for example scripts that need no LLM\n"
    );

    let config = Config::load_file(&dir.path().join(".autobuild/config.toml")).unwrap();
    assert_eq!(config.checks["test"].cmd, "cargo test");
    let task = locate(dir.path(), "TASK-EXAMPLE").unwrap();
    assert_eq!(task.criteria.len(), 2);
    let gitignore = fs::read_to_string(dir.path().join(".autobuild/.gitignore")).unwrap();
    assert!(gitignore.lines().any(|l| l == "runs/"));
    assert!(gitignore.lines().any(|l| l == "worktrees/"));
}

#[test]
fn a_second_run_keeps_every_existing_file() {
    let dir = repo();
    assert!(init(dir.path()).status.success());
    let config_path = dir.path().join(".autobuild/config.toml");
    fs::write(&config_path, "[checks.test]\ncmd = \"make check\"\n").unwrap();
    fs::write(dir.path().join(".autobuild/.gitignore"), "runs/\n").unwrap();

    let output = init(dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    let text = stdout(&output);
    assert!(
        text.contains("kept .autobuild/config.toml (exists)\n"),
        "{text}"
    );
    assert!(
        text.contains("kept .autobuild/tasks/TASK-EXAMPLE.md (exists)\n"),
        "{text}"
    );
    assert!(
        text.contains("updated .autobuild/.gitignore (added worktrees/)\n"),
        "{text}"
    );
    assert_eq!(
        fs::read_to_string(&config_path).unwrap(),
        "[checks.test]\ncmd = \"make check\"\n"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join(".autobuild/.gitignore")).unwrap(),
        "runs/\nworktrees/\n"
    );
}

#[test]
fn without_a_detectable_test_command_the_config_shows_an_example() {
    let dir = repo();
    let output = init(dir.path());
    assert!(stdout(&output).starts_with(
        "created .autobuild/config.toml (no test command detected; set [checks.test] in it)\n"
    ));
    let config = Config::load_file(&dir.path().join(".autobuild/config.toml")).unwrap();
    assert!(config.checks.is_empty());
}

#[test]
fn from_a_subdirectory_it_scaffolds_the_repository_root() {
    let dir = repo();
    let sub = dir.path().join("src/deep");
    fs::create_dir_all(&sub).unwrap();
    let output = init(&sub);
    assert!(output.status.success(), "{output:?}");
    assert!(stdout(&output).starts_with("initializing autobuild in "));
    assert!(dir.path().join(".autobuild/config.toml").is_file());
    assert!(!sub.join(".autobuild").exists());
}

#[test]
fn outside_a_git_repository_it_fails_with_exit_2_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let output = init(dir.path());
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("is not inside a git repository"),
        "{stderr}"
    );
    assert!(stderr.contains("git init"), "{stderr}");
    assert!(!dir.path().join(".autobuild").exists());
}

#[test]
fn git_ignored_environment_directories_are_suggested_as_worktree_links() {
    let dir = repo();
    fs::write(dir.path().join(".gitignore"), ".venv/\nnode_modules/\n").unwrap();
    for env_dir in [".venv/bin", "node_modules/left-pad", "venv/bin"] {
        fs::create_dir_all(dir.path().join(env_dir)).unwrap();
    }
    let output = init(dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains(
            "[worktree] link = [\".venv\", \"node_modules\"]: git ignores them, so a worktree would not have them"
        ),
        "{}",
        stdout(&output)
    );
    // `venv/` is not ignored: git would check it out (or the user means to commit it).
    let config = Config::load_file(&dir.path().join(".autobuild/config.toml")).unwrap();
    assert_eq!(config.worktree.link, [".venv", "node_modules"]);
}

#[test]
fn the_usual_ignore_entries_of_a_python_project_are_proposed_not_written() {
    let dir = repo();
    fs::write(
        dir.path().join("pyproject.toml"),
        "[project]\nname = \"x\"\n",
    )
    .unwrap();
    fs::write(dir.path().join(".gitignore"), "*.pyc\n").unwrap();
    let output = init(dir.path());
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    assert!(
        stdout(&output).contains("suggest: add __pycache__/ .pytest_cache/ to .gitignore"),
        "{}",
        stdout(&output)
    );
    assert_eq!(
        fs::read_to_string(dir.path().join(".gitignore")).unwrap(),
        "*.pyc\n",
        "the user's .gitignore is not changed"
    );
}

/// `init --json`: what init did to each file, tagged by action, and the next command.
#[test]
fn init_json_lists_what_it_did_to_each_file() {
    let dir = repo();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_autobuild"))
            .args(args)
            .current_dir(dir.path())
            .env_remove("AUTOBUILD_LOG")
            .output()
            .unwrap()
    };
    let output = run(&["init", "--json"]);
    assert_eq!(output.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["version"], 1);
    let actions: Vec<(&str, String)> = doc["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let path = f["path"].as_str().unwrap_or_default();
            let name = Path::new(path)
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            (f["action"].as_str().unwrap(), name)
        })
        .collect();
    assert_eq!(
        actions,
        [
            ("created", "config.toml".to_string()),
            ("created", "TASK-EXAMPLE.md".to_string()),
            ("created", ".gitignore".to_string())
        ]
    );
    assert!(doc["next"]
        .as_str()
        .unwrap()
        .contains("autobuild task TASK-EXAMPLE"));

    let output = run(&["init", "--agents", "command", "--json"]);
    let doc: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(doc["files"][0]["action"], "updated");
    assert!(doc["files"][0]["note"]
        .as_str()
        .unwrap()
        .contains("[roles.player]"));
}
