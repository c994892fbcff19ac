//! Colour on the command line: log lines (WARN, and DEBUG with `-v`), errors and warnings carry
//! no ANSI colour codes when stderr is not a terminal — in a CI log or a file they are noise —
//! nor with `NO_COLOR` or `--color never`; `--color always` colours them anyway.

use crate::loop_fixture;

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

/// An error and its help line, as `status` of an unknown run prints them.
fn error_output(project: &Project, colour: &[&str], env: &[(&str, &str)]) -> String {
    let mut args = colour.to_vec();
    args.extend(["status", "TASK-NOPE"]);
    let output = project.run_with_env(&args, env);
    assert_eq!(output.status.code(), Some(2));
    stderr(&output)
}

#[test]
fn color_always_paints_errors_even_on_a_pipe_and_even_with_no_color() {
    let project = Project::new().commit();
    let err = error_output(&project, &["--color", "always"], &[]);
    assert!(err.starts_with("\u{1b}["), "{err:?}");
    assert!(
        err.contains("error:\u{1b}[0m no run of TASK-NOPE here"),
        "{err:?}"
    );
    // An explicit choice on the command line beats the environment.
    let err = error_output(&project, &["--color", "always"], &[("NO_COLOR", "1")]);
    assert!(err.contains('\u{1b}'), "{err:?}");
}

#[test]
fn color_never_and_auto_on_a_pipe_print_plain_text() {
    let project = Project::new().commit();
    for (colour, env) in [
        (&["--color", "never"][..], &[][..]),
        (&[][..], &[][..]),
        (&["--color", "auto"][..], &[("NO_COLOR", "1")][..]),
    ] {
        let err = error_output(&project, colour, env);
        assert!(
            err.starts_with("error: no run of TASK-NOPE here\n  help: "),
            "{colour:?} {env:?}: {err:?}"
        );
    }
}

#[test]
fn color_always_colours_the_log_lines_too() {
    let project = Project::new().commit();
    let output = project.run(&["--color", "always", "-v", "doctor"]);
    let err = stderr(&output);
    let debug = err
        .lines()
        .find(|line| line.contains("DEBUG"))
        .unwrap_or_else(|| panic!("no DEBUG line in:\n{err}"));
    assert!(debug.contains('\u{1b}'), "{debug:?}");
}
