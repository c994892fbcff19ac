//! Command-line cases: every user-visible command, README examples included, is checked
//! against its recorded output so documentation cannot drift from behaviour.

use std::path::Path;

use crate::support;

use support::copy_tree;

#[test]
fn cli_cases() {
    trycmd::TestCases::new()
        .env("AUTOBUILD_CONFIG_DIR", "/nonexistent/autobuild-config")
        // Outputs as a terminal or a CI log shows them, not as GitHub Actions annotations.
        .env("GITHUB_ACTIONS", "")
        .case("tests/cmd/*.toml")
        .case("README.md")
        .case("docs/*.md")
        // Its examples need a repository; `cli_cases_in_a_repository` runs them.
        .skip("docs/features.md");
}

/// Cases that need a git repository: trycmd cannot keep a `.git` in a `.in` directory, so the
/// demo's sample project (plus the feature of tests/fixtures/features/demo) is committed into a
/// temp repository and the cases run there through `AUTOBUILD_DIR` (the environment form of
/// `-C`).
#[test]
fn cli_cases_in_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("demo/project"), dir.path());
    copy_tree(Path::new("tests/fixtures/features/demo"), dir.path());
    copy_tree(Path::new("tests/fixtures/tasks/guardkit"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/*.toml", "docs/features.md"]);
}

/// A run's life, one command after another in one repository (a `.trycmd` file runs its
/// commands in order): docs/runs.md's `status`, `logs --turn`, `complete` and `discard --yes`
/// examples on a real run of the demo task, and `status` showing an earlier run that merged.
#[test]
fn cli_cases_after_a_run() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("demo/project"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/lifecycle/*.trycmd"]);
}

/// The README's first steps in a repository of your own: `init`, then the example task's dry run.
#[test]
fn cli_cases_in_a_new_repository() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("tests/cmd-repo/new-project"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/init/*.trycmd"]);
}

/// `init` in a project whose own `.gitignore` ignores `.autobuild/` (`.*`): it says so.
#[test]
fn cli_cases_in_a_project_that_ignores_dotfiles() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("tests/cmd-repo/dotfiles-project"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/init-ignored/*.trycmd"]);
}

/// Mistakes a newcomer makes (a `command` role whose program this machine lacks, a task whose
/// front matter is not YAML): refused, naming the line and the fix.
#[test]
fn cli_cases_in_a_project_with_mistakes() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("tests/cmd-repo/mistakes-project"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/mistakes/*.trycmd"]);
}

/// A feature whose tasks declare the same file: the plan runs them a wave apart.
#[test]
fn cli_cases_in_a_project_whose_tasks_write_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("tests/cmd-repo/overlap-project"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/overlap/*.trycmd"]);
}

/// README's "Try it on your own repository, without an LLM": `init --agents command`, then the example task runs to approval
/// with the example scripts, then lands.
#[test]
fn cli_cases_in_a_new_repository_without_an_llm() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("tests/cmd-repo/new-project"), dir.path());
    in_repository(dir.path(), &["tests/cmd-repo/init-command/*.trycmd"]);
}

/// Commits `dir` as a repository on `main` and runs the `cases` in it.
fn in_repository(dir: &Path, cases: &[&str]) {
    autobuild::git::init_with_commit(dir, "main", "sample project").unwrap();
    let repo = dir.canonicalize().unwrap();
    // The fake agent CLIs stand in for `claude` and `codex`, so `--dry-run --agent …` examples
    // pass preflight and show the real command lines.
    let fakes = ["tests/fixtures/fake-claude", "tests/fixtures/fake-codex"]
        .map(|d| Path::new(d).canonicalize().unwrap().display().to_string());
    let path = format!(
        "{}:{}:{}",
        fakes[0],
        fakes[1],
        std::env::var("PATH").unwrap_or_default()
    );
    let fake_bwrap = Path::new("tests/fixtures/fake-bwrap/bwrap")
        .canonicalize()
        .unwrap();
    // `demo` keeps its temporary project for the user to look at; here it goes away with `dir`.
    let temp = dir.join("tmp");
    std::fs::create_dir_all(&temp).unwrap();
    let runner = trycmd::TestCases::new();
    runner
        .env("PATH", path)
        // The fakes say they are logged in, whatever the machine's own logins are.
        .env("FAKE_CLAUDE_AUTH", "logged_in")
        .env("FAKE_CODEX_AUTH", "logged_in")
        .env("TMPDIR", temp.display().to_string())
        .insert_var("[TMPDIR]", temp.display().to_string())
        .unwrap()
        // Outputs must not depend on whether this machine has a working bubblewrap: the cases
        // get a stand-in that runs programs unconfined.
        .env("AUTOBUILD_BWRAP", fake_bwrap.display().to_string())
        .env("AUTOBUILD_DIR", repo.display().to_string())
        .env("AUTOBUILD_CONFIG_DIR", "/nonexistent/autobuild-config")
        // Outputs as a terminal or a CI log shows them, not as GitHub Actions annotations.
        .env("GITHUB_ACTIONS", "")
        .insert_var("[REPO]", repo.display().to_string())
        .unwrap();
    for case in cases {
        runner.case(case);
    }
}

/// Cases about a run that exists: the demo's sample project with its scripted agents, run once
/// to approval and merge in a temp repository before the cases look at it.
#[test]
fn cli_cases_about_a_merged_run() {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(Path::new("demo/project"), dir.path());
    autobuild::git::init_with_commit(dir.path(), "main", "sample project").unwrap();
    let repo = dir.path().canonicalize().unwrap();
    let fake_bwrap = Path::new("tests/fixtures/fake-bwrap/bwrap")
        .canonicalize()
        .unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .args(["task", "TASK-DEMO-001", "--auto-merge", "--quiet"])
        .env("AUTOBUILD_DIR", &repo)
        .env("AUTOBUILD_CONFIG_DIR", "/nonexistent/autobuild-config")
        // Outputs as a terminal or a CI log shows them, not as GitHub Actions annotations.
        .env("GITHUB_ACTIONS", "")
        .env("AUTOBUILD_BWRAP", &fake_bwrap)
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    trycmd::TestCases::new()
        .env("AUTOBUILD_BWRAP", fake_bwrap.display().to_string())
        .env("AUTOBUILD_DIR", repo.display().to_string())
        .env("AUTOBUILD_CONFIG_DIR", "/nonexistent/autobuild-config")
        // Outputs as a terminal or a CI log shows them, not as GitHub Actions annotations.
        .env("GITHUB_ACTIONS", "")
        .insert_var("[REPO]", repo.display().to_string())
        .unwrap()
        .case("tests/cmd-run/*.toml");
}
