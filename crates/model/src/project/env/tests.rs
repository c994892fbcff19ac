use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Output};

use super::*;

fn config(setup: Option<&str>, prepend: &[&str], vars: &[(&str, &str)]) -> EnvConfig {
    EnvConfig {
        vars: vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
        path_prepend: prepend.iter().map(|s| s.to_string()).collect(),
        setup: setup.map(str::to_string),
    }
}

/// Runs `cmd` the way the runner does: the shell command, the env's vars, cwd = worktree.
fn run(env: &ProjectEnv, worktree: &Path, cmd: &str) -> Output {
    let (program, args) = env.shell_command(cmd);
    Command::new(program)
        .args(args)
        .envs(env.vars())
        .env_remove(READY_VAR)
        .current_dir(worktree)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

#[test]
fn path_puts_resolved_prepends_before_the_base() {
    let env = ProjectEnv::with_base_path(
        &config(None, &[".venv/bin", "/opt/tool/bin"], &[]),
        Path::new("/work/tree"),
        Some(OsString::from("/usr/bin::/bin")),
    );
    assert_eq!(
        env.path(),
        "/work/tree/.venv/bin:/opt/tool/bin:/usr/bin:/bin"
    );
    let env = ProjectEnv::with_base_path(&config(None, &[], &[]), Path::new("/w"), None);
    assert_eq!(env.path(), "");
}

#[test]
fn vars_hold_config_vars_and_path_and_bash_env_only_with_setup() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = ProjectEnv::new(&config(None, &[], &[("A", "1")]), dir.path());
    env.write_bash_env(&dir.path().join("env.sh")).unwrap();
    let names: Vec<String> = env.vars().into_iter().map(|(k, _)| k).collect();
    assert_eq!(names, vec!["A", "PATH"]);
    assert!(!dir.path().join("env.sh").exists());

    let mut env = ProjectEnv::new(&config(Some("true"), &[], &[]), dir.path());
    let file = dir.path().join("run/bash_env.sh");
    env.write_bash_env(&file).unwrap();
    assert!(env
        .vars()
        .contains(&("BASH_ENV".to_string(), file.to_string_lossy().into_owned())));
    assert!(fs::read_to_string(&file).unwrap().contains("true"));
}

#[test]
fn a_tool_on_path_prepend_and_a_var_are_visible_to_commands() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("tools/bin");
    fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("project-tool");
    fs::write(&tool, "#!/bin/sh\necho tool says $GREETING\n").unwrap();
    fs::set_permissions(&tool, fs::Permissions::from_mode(0o755)).unwrap();

    let env = ProjectEnv::new(
        &config(None, &["tools/bin"], &[("GREETING", "hi")]),
        dir.path(),
    );
    let output = run(&env, dir.path(), "project-tool");
    assert!(output.status.success(), "{output:?}");
    assert_eq!(stdout(&output), "tool says hi");
}

#[test]
fn setup_runs_first_and_the_command_decides_the_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let env = ProjectEnv::new(&config(Some("export FROM_SETUP=yes"), &[], &[]), dir.path());
    let output = run(&env, dir.path(), "echo $FROM_SETUP; exit 3");
    assert_eq!(stdout(&output), "yes");
    assert_eq!(output.status.code(), Some(3));
}

#[test]
fn a_failing_setup_fails_the_command_with_the_marker() {
    let dir = tempfile::tempdir().unwrap();
    let env = ProjectEnv::new(
        &config(Some("source missing/activate"), &[], &[]),
        dir.path(),
    );
    let output = run(&env, dir.path(), "echo should-not-run");
    assert_eq!(output.status.code(), Some(SETUP_FAILED_EXIT));
    assert_eq!(stdout(&output), "");
    assert!(String::from_utf8_lossy(&output.stderr).contains(SETUP_FAILED_MARKER));
}

#[test]
fn bash_env_gives_agent_shells_the_setup_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let counter = dir.path().join("count");
    let setup = format!("echo ran >> {}; export FROM_SETUP=yes", counter.display());
    let mut env = ProjectEnv::new(&config(Some(&setup), &[], &[]), dir.path());
    env.write_bash_env(&dir.path().join("bash_env.sh")).unwrap();

    // An agent's bash tool: a plain non-interactive bash with the env's vars.
    let agent_shell = Command::new("bash")
        .args(["-c", "echo $FROM_SETUP; bash -c 'echo nested $FROM_SETUP'"])
        .envs(env.vars())
        .env_remove(READY_VAR)
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(stdout(&agent_shell), "yes\nnested yes");
    // A runner command with BASH_ENV set and the inline prelude.
    let runner = run(&env, dir.path(), "echo $FROM_SETUP");
    assert_eq!(stdout(&runner), "yes");
    assert_eq!(fs::read_to_string(&counter).unwrap().lines().count(), 2);
}

#[test]
fn a_failing_setup_in_bash_env_is_reported_to_agent_shells() {
    let dir = tempfile::tempdir().unwrap();
    let mut env = ProjectEnv::new(&config(Some("false"), &[], &[]), dir.path());
    env.write_bash_env(&dir.path().join("bash_env.sh")).unwrap();
    let output = Command::new("bash")
        .args(["-c", "echo should-not-run"])
        .envs(env.vars())
        .env_remove(READY_VAR)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(SETUP_FAILED_EXIT));
    assert!(String::from_utf8_lossy(&output.stderr).contains(SETUP_FAILED_MARKER));
}

#[test]
fn without_setup_the_script_is_the_command() {
    let env = ProjectEnv::new(&config(None, &[], &[]), Path::new("/"));
    let (program, args) = env.shell_command("make test");
    assert!(program.ends_with("bash") || program == "sh");
    assert_eq!(args, vec!["-c".to_string(), "make test".to_string()]);
}

#[test]
fn the_setups_exports_are_what_it_added_or_changed() {
    let before = |name: &str| match name {
        "PATH" => Some("/usr/bin".to_string()),
        "HOME" => Some("/home/u".to_string()),
        _ => None,
    };
    for (dump, expected) in [
        ("", Some(vec![])),
        ("PATH=/usr/bin\0HOME=/home/u\0", Some(vec![])),
        (
            "PATH=/w/.venv/bin:/usr/bin\0HOME=/home/u\0VIRTUAL_ENV=/w/.venv\0",
            Some(vec![
                ("PATH", "/w/.venv/bin:/usr/bin"),
                ("VIRTUAL_ENV", "/w/.venv"),
            ]),
        ),
        // The shell's own and the guard are not the setup's.
        (
            "PWD=/w\0SHLVL=2\0_=/usr/bin/env\0AUTOBUILD_ENV_READY=1\0",
            Some(vec![]),
        ),
        // A value holding `=` and a newline.
        ("A=x=y\nz\0", Some(vec![("A", "x=y\nz")])),
        // Not a listing.
        ("no equals sign here", None),
    ] {
        let got = ProjectEnv::read_exports(&before, dump);
        let expected: Option<Vec<(String, String)>> = expected.map(|v| {
            v.into_iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect()
        });
        assert_eq!(got, expected, "{dump:?}");
    }
}

#[test]
fn the_exports_command_prints_the_environment_the_setup_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let env = ProjectEnv::new(
        &config(Some("export FROM_SETUP='a b'"), &[], &[]),
        dir.path(),
    );
    let (program, args) = env.exports_command().unwrap();
    let output = Command::new(program)
        .args(args)
        .envs(env.vars())
        .current_dir(dir.path())
        .output()
        .unwrap();
    let dump = String::from_utf8(output.stdout).unwrap();
    let exports = ProjectEnv::read_exports(&|name| std::env::var(name).ok(), &dump).unwrap();
    assert!(
        exports.contains(&("FROM_SETUP".to_string(), "a b".to_string())),
        "{exports:?}"
    );
    assert!(ProjectEnv::new(&config(None, &[], &[]), dir.path())
        .exports_command()
        .is_none());
}
