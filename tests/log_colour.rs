//! Log lines (WARN, and DEBUG with `-v`) carry no ANSI colour codes when stderr is not a
//! terminal: in a CI log or a file they are noise.

mod loop_fixture;

use loop_fixture::{stderr, Project, TASK};

#[test]
fn warnings_on_a_pipe_are_plain_text() {
    // A resume after a kill during worktree creation logs a WARN as it discards the remains.
    let project = Project::new().commit();
    let killed = project.run_with_env(
        &["task", TASK, "--no-merge"],
        &[("AUTOBUILD_FAILPOINT", "worktree.added")],
    );
    assert!(!killed.status.success());

    let output = project.run(&["-v", "resume", TASK]);

    let err = stderr(&output);
    let warn = err
        .lines()
        .find(|line| line.contains("discarded a worktree"))
        .unwrap_or_else(|| panic!("no WARN line in:\n{err}"));
    assert!(warn.starts_with(" WARN "), "{warn:?}");
    assert!(err.lines().any(|line| line.starts_with("DEBUG ")), "{err}");
    assert!(!err.contains('\u{1b}'), "escape codes in:\n{err}");
}
