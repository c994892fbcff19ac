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

/// The live panel on a real terminal: tmux runs a two-turn run of the demo project, and its
/// scrollback afterwards holds every finished line once and no frozen spinner frame (indicatif
/// forgets what it drew when its draw target is swapped, which left one frame per step).
#[test]
#[ignore = "needs tmux: run scripts/tmux-panel.sh"]
fn the_live_panel_leaves_no_residue_in_the_scrollback() {
    use std::path::Path;
    use std::process::Command;
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("project");
    std::fs::create_dir_all(&repo).unwrap();
    loop_fixture::copy_tree(Path::new("demo/project"), &repo);
    autobuild::git::init_with_commit(&repo, "main", "demo").unwrap();
    let done = dir.path().join("exit-code");
    let script = dir.path().join("run.sh");
    std::fs::write(
        &script,
        format!(
            "AUTOBUILD_CONFIG_DIR=/nonexistent/autobuild-config '{}' -C '{}' task TASK-DEMO-001 \
             --auto-merge\necho $? > '{}'\nsleep 600\n",
            env!("CARGO_BIN_EXE_autobuild"),
            repo.display(),
            done.display()
        ),
    )
    .unwrap();
    // A private server: the session gets this process's environment, not a running server's.
    let socket = format!("autobuild-panel-{}", std::process::id());
    let tmux = |args: &[&str]| {
        let output = Command::new("tmux")
            .args(["-L", &socket])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "tmux {args:?}: {output:?}");
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let shell = format!("sh '{}'", script.display());
    tmux(&[
        "new-session",
        "-d",
        "-s",
        "panel",
        "-x",
        "160",
        "-y",
        "50",
        &shell,
    ]);
    loop_fixture::wait_until(Duration::from_secs(120), "the run to end", || done.exists());
    // -J joins wrapped lines; -S - starts at the top of the scrollback.
    let screen = tmux(&["capture-pane", "-p", "-J", "-S", "-", "-t", "panel"]);
    let _ = Command::new("tmux")
        .args(["-L", &socket, "kill-server"])
        .status();
    assert_eq!(
        std::fs::read_to_string(&done).unwrap().trim(),
        "0",
        "{screen}"
    );
    let spinner = |line: &&str| line.chars().any(|c| ('\u{2800}'..='\u{28ff}').contains(&c));
    let frames: Vec<&str> = screen.lines().filter(spinner).collect();
    assert!(frames.is_empty(), "spinner frames left:\n{screen}");
    for once in [
        "turn 1/5:",
        "turn 2/5:",
        "merge: squash",
        "result: approved and merged",
    ] {
        let count = screen.lines().filter(|l| l.starts_with(once)).count();
        assert_eq!(count, 1, "`{once}` {count} times in:\n{screen}");
    }
    assert_eq!(
        screen.matches("cannot enforce the tool allowlist").count(),
        1,
        "{screen}"
    );
}
