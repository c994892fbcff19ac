//! Log lines (WARN, and DEBUG with `-v`) carry no ANSI colour codes when stderr is not a
//! terminal: in a CI log or a file they are noise.

mod loop_fixture;

use std::path::Path;

use loop_fixture::{stderr, Project, TASK};

#[test]
fn warnings_on_a_pipe_are_plain_text() {
    // A codex player on a model without a known price logs a WARN on every invocation.
    let project = Project::new().commit();
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-codex");
    project.write(
        ".autobuild/config.toml",
        &format!(
            r#"[checks.test]
cmd = "sh tests/run.sh"
timeout = "30s"

[env]
path_prepend = ["{}"]

[roles.player]
agent = "codex"
model = "model-without-a-price"
timeout = "30s"

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/agents/coach.sh"]
timeout = "30s"
"#,
            fake.display()
        ),
    );
    project.git(&["commit", "-q", "-am", "player on codex"]);

    let output = project.run_with_env(
        &["-v", "task", TASK, "--max-turns", "1", "--no-merge"],
        &[("OPENAI_API_KEY", "sk-test")],
    );

    let err = stderr(&output);
    let warn = err
        .lines()
        .find(|line| line.contains("no token price"))
        .unwrap_or_else(|| panic!("no WARN line in:\n{err}"));
    assert!(warn.starts_with(" WARN "), "{warn:?}");
    assert!(err.lines().any(|line| line.starts_with("DEBUG ")), "{err}");
    assert!(!err.contains('\u{1b}'), "escape codes in:\n{err}");
}
