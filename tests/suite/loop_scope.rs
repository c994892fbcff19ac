//! Runner-enforced path scopes (`[scope] protect`, a task's `protect:`, a role's `writes`): a
//! player that rewrites a protected test to pass wrong code is never approved, out-of-scope
//! writes are reverted byte for byte and reported, and nothing in scope is touched.

use crate::loop_fixture;

use loop_fixture::*;

/// The test the task is judged by, committed on the base: `greeting Ada` must print
/// `Hello, Ada!`.
const GREETING_TEST: &str = r#". ./lib/greet.sh
got=$(greeting Ada)
[ "$got" = "Hello, Ada!" ] || { echo "expected Hello, Ada!, got $got"; exit 1; }
"#;

/// A task judged only by its tests and the reviewer (no executable criterion), as in the
/// report that motivated scopes.
const TASK_WITHOUT_VERIFY: &str = "---\nid: TASK-1\ntitle: Add a greeting function\n---\n\
# Add a greeting function\n\nAdd `greeting NAME` to `lib/greet.sh`; it prints `Hello, NAME!`.\n\n\
## Acceptance Criteria\n- [ ] AC-001: `greeting Ada` prints \"Hello, Ada!\"\n";

/// A player that writes the wrong greeting and weakens the test until it passes.
const WEAKENING_PLAYER: &str = r#"set -eu
cat > lib/greet.sh <<'IMPL'
greeting() { printf 'Hello, %s.\n' "$1"; }
farewell() { printf 'Goodbye, %s.\n' "$1"; }
IMPL
cat > tests/test_greeting.sh <<'TEST'
. ./lib/greet.sh
[ "$(greeting Ada)" = "Hello, Ada." ]
TEST
echo "All tests pass."
"#;

/// A reviewer that approves whatever it sees.
const LENIENT_COACH: &str = r#"cat <<'VERDICT'
```json
{"decision": "approve", "summary": "looks fine", "issues": [], "criteria": [{"id": "AC-001", "status": "met", "evidence": "tests pass"}]}
```
VERDICT
"#;

fn weakened_test_project(scope: &str) -> Project {
    let project = Project::new().config(scope);
    project.write(".autobuild/tasks/TASK-1.md", TASK_WITHOUT_VERIFY);
    project.write("tests/test_greeting.sh", GREETING_TEST);
    project.write(".autobuild/agents/player.sh", WEAKENING_PLAYER);
    project.write(".autobuild/agents/coach.sh", LENIENT_COACH);
    project.commit()
}

#[test]
fn without_a_scope_the_weakened_test_and_the_wrong_code_are_merged() {
    // The baseline the scope exists for: checks pass, the reviewer approves, main is wrong.
    let project = weakened_test_project("");

    let output = project.run(&["task", TASK, "--auto-merge"]);

    assert_exit(&output, 0);
    assert!(project.show("main", "lib/greet.sh").contains("Hello, %s."));
}

#[test]
fn a_weakened_protected_test_is_reverted_and_the_run_is_never_approved() {
    let project = weakened_test_project("\n[scope]\nprotect = [\"tests/**\"]\n");
    let initial = project.git(&["rev-parse", "main"]);

    let output = project.run(&["task", TASK, "--auto-merge", "--max-turns", "2"]);

    assert_ne!(output.status.code(), Some(0), "{}", stdout(&output));
    let player = project.record("player", 1);
    let violation = player["scope_violation"].to_string();
    assert!(
        violation.contains("tests/test_greeting.sh (protected)"),
        "{violation}"
    );
    assert_eq!(project.record("gate", 1)["approved"], false);
    assert_eq!(
        project.git(&["rev-parse", "main"]),
        initial,
        "nothing merged"
    );
    let branch = project.branch();
    assert_eq!(
        project.show(&branch, "tests/test_greeting.sh"),
        GREETING_TEST
    );
    assert!(
        project.show(&branch, "lib/greet.sh").contains("Hello, %s."),
        "the in-scope change stays for the reviewer to judge"
    );
    let prompt =
        std::fs::read_to_string(project.run_dir().join("prompts/turn_2_player.md")).unwrap();
    assert!(
        prompt.contains("`tests/**`"),
        "the player is told: {prompt}"
    );
}

#[test]
fn a_task_can_protect_paths_too() {
    let project = Project::new();
    let task = project.read(".autobuild/tasks/TASK-1.md").replacen(
        "task_type: feature\n",
        "task_type: feature\nprotect: [\"tests/test_farewell.sh\"]\n",
        1,
    );
    project.write(".autobuild/tasks/TASK-1.md", &task);
    project.write(
        ".autobuild/agents/player.sh",
        "set -eu\n. .autobuild/agents/write_greeting.sh\nwrite_greeting '!'\necho broken > tests/test_farewell.sh\n",
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let violation = project.record("player", 1)["scope_violation"].to_string();
    assert!(
        violation.contains("tests/test_farewell.sh (protected)"),
        "{violation}"
    );
}

/// Modified, deleted and new protected files all come back exactly as committed; in-scope
/// work is left alone, and ignored files are no scope violation.
#[test]
fn protected_paths_are_restored_byte_for_byte_and_nothing_else_is_touched() {
    let project = Project::new().config("\n[scope]\nprotect = [\"guarded/**\"]\n");
    project.write("guarded/keep.txt", "exactly\r\nthese bytes\n");
    project.write("guarded/gone.txt", "do not delete\n");
    project.write(".gitignore", "build/\n");
    project.write(
        ".autobuild/agents/player.sh",
        "set -eu\n. .autobuild/agents/write_greeting.sh\nwrite_greeting '!'\n\
         printf 'changed' > guarded/keep.txt\nrm guarded/gone.txt\n\
         echo new > guarded/new.txt\nmkdir -p build && echo out > build/artifact\n",
    );
    let project = project.commit();

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let worktree = project.worktree();
    assert_eq!(
        std::fs::read(worktree.join("guarded/keep.txt")).unwrap(),
        b"exactly\r\nthese bytes\n"
    );
    assert_eq!(
        std::fs::read_to_string(worktree.join("guarded/gone.txt")).unwrap(),
        "do not delete\n"
    );
    assert!(!worktree.join("guarded/new.txt").exists());
    assert!(project
        .show(&project.branch(), "lib/greet.sh")
        .contains("Hello, %s!"));
    // Ignored files are not the scope's business (no violation below), but no check may see
    // them: they are removed after the checkpoint (issue 42).
    assert!(!worktree.join("build/artifact").exists());
    let mut violation: Vec<String> = project.record("player", 1)["scope_violation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    violation.sort();
    assert_eq!(
        violation,
        [
            "guarded/gone.txt (protected)",
            "guarded/keep.txt (protected)",
            "guarded/new.txt (protected)"
        ]
    );
}

#[test]
fn a_write_outside_the_roles_scope_is_reverted_and_reported() {
    let project = Project::new();
    project.write(
        ".autobuild/agents/player.sh",
        "set -eu\n. .autobuild/agents/write_greeting.sh\nwrite_greeting '!'\necho notes > NOTES.md\n",
    );
    let project = project
        .config("") // keeps the default roles; `writes` is added below
        .commit();
    let config = project
        .read(".autobuild/config.toml")
        .replacen(
            "command = [\"sh\", \".autobuild/agents/player.sh\"]\n",
            "command = [\"sh\", \".autobuild/agents/player.sh\"]\nwrites = [\"lib/**\", \"tests/**\"]\n",
            1,
        );
    project.write(".autobuild/config.toml", &config);
    project.git(&["commit", "-q", "-am", "player writes lib and tests only"]);

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let violation = project.record("player", 1)["scope_violation"].to_string();
    assert!(
        violation.contains("NOTES.md (outside the role's `writes`)"),
        "{violation}"
    );
    assert!(!project.worktree().join("NOTES.md").exists());
    assert!(project
        .show(&project.branch(), "lib/greet.sh")
        .contains("Hello, %s!"));
}

#[test]
fn a_player_editing_the_check_configuration_is_a_violation_not_a_way_to_pass() {
    let project = Project::new();
    project.write(
        ".autobuild/agents/player.sh",
        "set -eu\nprintf '[checks.test]\\ncmd = \"true\"\\n' > .autobuild/config.toml\n\
         . .autobuild/agents/write_greeting.sh\nwrite_greeting '!'\n",
    );
    let project = project.commit();
    let config = project.read(".autobuild/config.toml");

    let output = project.run(&["task", TASK, "--max-turns", "1"]);

    assert_exit(&output, 3);
    let violation = project.record("player", 1)["scope_violation"].to_string();
    assert!(
        violation.contains(".autobuild/config.toml (protected)"),
        "{violation}"
    );
    assert_eq!(
        std::fs::read_to_string(project.worktree().join(".autobuild/config.toml")).unwrap(),
        config
    );
}

#[test]
fn scope_patterns_that_do_not_parse_are_located() {
    let project = Project::new()
        .config("\n[scope]\nprotect = [\"tests/[\"]\n")
        .commit();

    let output = project.run(&["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(err.contains("config.toml:"), "{err}");
    assert!(err.contains("not a valid glob"), "{err}");
}
