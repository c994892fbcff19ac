//! Runner checks with real processes: pass, fail, timeout, the project environment (vars and
//! prepended PATH), classification, log files, spawn failures and cancellation.

use std::fs;
use std::path::{Path, PathBuf};
use std::thread;
use std::time::{Duration, Instant};

use autobuild::process::CancelToken;
use autobuild::project::{EnvConfig, ProjectEnv};
use autobuild::steps::check::{CheckResult, CheckStatus, FailureClass};
use autobuild::steps::verify::{run_checks, CheckSpec};

fn check(name: &str, command: &str) -> CheckSpec {
    CheckSpec {
        name: name.to_string(),
        command: command.to_string(),
        timeout: Duration::from_secs(30),
        results: None,
    }
}

/// [`check`] that writes its JUnit XML results to `results`.
fn with_results(name: &str, command: &str, results: &str) -> CheckSpec {
    CheckSpec {
        results: Some(results.to_string()),
        ..check(name, command)
    }
}

fn plain_shell(command: &str) -> (String, Vec<String>) {
    (
        "sh".to_string(),
        vec!["-c".to_string(), command.to_string()],
    )
}

struct Dirs {
    _root: tempfile::TempDir,
    worktree: PathBuf,
    logs: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let worktree = root.path().join("worktree");
    fs::create_dir(&worktree).unwrap();
    Dirs {
        logs: root.path().join("run/logs"),
        worktree,
        _root: root,
    }
}

fn run(dirs: &Dirs, specs: &[CheckSpec], env: &[(String, String)]) -> Vec<CheckResult> {
    run_checks(
        specs,
        &plain_shell,
        env,
        &dirs.worktree,
        &dirs.logs,
        "turn_2_",
        &CancelToken::new(),
        None,
        None,
    )
}

#[test]
fn a_passing_and_a_failing_check_in_order() {
    let dirs = dirs();
    fs::write(dirs.worktree.join("marker.txt"), "here").unwrap();
    let specs = [
        check("test", "cat marker.txt; echo; echo '3 passed'"),
        check(
            "AC-001",
            "echo 'collected 1 item'; echo; echo 'E       assert 1 == 2'; echo; echo '1 failed in 0.01s'; exit 1",
        ),
    ];
    let results = run(&dirs, &specs, &[]);
    assert_eq!(results.len(), 2);

    let passed = &results[0];
    assert_eq!(passed.name, "test");
    assert_eq!(passed.status, CheckStatus::Passed);
    assert_eq!(passed.exit_code, Some(0));
    assert_eq!(passed.summary, "here\n3 passed");
    assert_eq!(passed.failure_class, None);
    assert_eq!(passed.log_path, dirs.logs.join("turn_2_check_test.log"));
    assert_eq!(
        fs::read_to_string(&passed.log_path).unwrap(),
        "here\n3 passed\n"
    );

    let failed = &results[1];
    assert_eq!(failed.status, CheckStatus::Failed);
    assert_eq!(failed.exit_code, Some(1));
    assert_eq!(failed.command, specs[1].command);
    assert_eq!(failed.log_path, dirs.logs.join("turn_2_check_AC-001.log"));
    assert!(
        failed.summary.contains("E       assert 1 == 2"),
        "{}",
        failed.summary
    );
    assert!(
        failed.summary.contains("1 failed in 0.01s"),
        "{}",
        failed.summary
    );
    assert_eq!(failed.failure_class, Some(FailureClass::Code));
    assert!(failed.advice.as_deref().unwrap().starts_with("tests fail"));
}

#[test]
fn a_check_over_its_timeout_is_stopped() {
    let dirs = dirs();
    let mut slow = check(
        "test",
        "echo $$ > ../leader.pid; echo 'running 1 test'; sleep 1000",
    );
    slow.timeout = Duration::from_millis(500);
    let started = Instant::now();
    let results = run(&dirs, &[slow], &[]);
    assert!(started.elapsed() < Duration::from_secs(10));
    let result = &results[0];
    assert_eq!(result.status, CheckStatus::TimedOut);
    assert_eq!(result.exit_code, None);
    assert!(result.duration_ms >= 500);
    assert_eq!(result.failure_class, Some(FailureClass::Code));
    assert!(result
        .advice
        .as_deref()
        .unwrap()
        .contains("did not finish within 500ms"));
    assert!(result.summary.contains("running 1 test"));
    let pid: i32 = fs::read_to_string(dirs.worktree.join("../leader.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_ne!(
        unsafe { libc::kill(-pid, 0) },
        0,
        "the check's group is gone"
    );
}

#[test]
fn a_variable_only_in_the_project_env_makes_the_check_pass() {
    let dirs = dirs();
    let spec = check("test", "test \"$AB_DATABASE_URL\" = sqlite:///tmp/dev.db");
    assert_eq!(
        run(&dirs, std::slice::from_ref(&spec), &[])[0].status,
        CheckStatus::Failed
    );
    let env = vec![(
        "AB_DATABASE_URL".to_string(),
        "sqlite:///tmp/dev.db".to_string(),
    )];
    assert_eq!(run(&dirs, &[spec], &env)[0].status, CheckStatus::Passed);
}

#[test]
fn a_tool_on_a_prepended_path_dir_is_found() {
    let dirs = dirs();
    let bin = dirs.worktree.join(".venv/bin");
    fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("ab-fake-pytest");
    fs::write(&tool, "#!/bin/sh\necho '1 passed in 0.01s'\n").unwrap();
    fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let spec = check("test", "ab-fake-pytest -q");

    let without = &run(&dirs, std::slice::from_ref(&spec), &[])[0];
    assert_eq!(without.status, CheckStatus::Failed);
    assert_eq!(without.exit_code, Some(127));
    assert_eq!(without.failure_class, Some(FailureClass::Infrastructure));
    let advice = without.advice.as_deref().unwrap();
    assert!(
        advice.starts_with("`ab-fake-pytest` is not installed"),
        "{advice}"
    );

    let env = vec![(
        "PATH".to_string(),
        format!("{}:{}", bin.display(), std::env::var("PATH").unwrap()),
    )];
    let with = &run(&dirs, &[spec], &env)[0];
    assert_eq!(with.status, CheckStatus::Passed, "{}", with.summary);
    assert_eq!(with.summary, "1 passed in 0.01s");
}

#[test]
fn a_check_that_cannot_start_is_an_error_not_a_pass() {
    let dirs = dirs();
    let missing_shell = |command: &str| ("ab-no-such-shell".to_string(), vec![command.to_string()]);
    let results = run_checks(
        &[check("lint", "ruff check .")],
        &missing_shell,
        &[],
        &dirs.worktree,
        &dirs.logs,
        "turn_1_",
        &CancelToken::new(),
        None,
        None,
    );
    let result = &results[0];
    assert_eq!(result.status, CheckStatus::Error);
    assert!(!result.passed());
    assert!(
        result
            .summary
            .contains("`ab-no-such-shell` not found on PATH"),
        "{}",
        result.summary
    );
    assert_eq!(result.failure_class, Some(FailureClass::Infrastructure));
    assert!(fs::read_to_string(&result.log_path)
        .unwrap()
        .contains("ab-no-such-shell"));
}

#[test]
fn cancelling_stops_the_running_check_and_skips_the_rest() {
    let dirs = dirs();
    let cancel = CancelToken::new();
    let trigger = cancel.clone();
    let canceller = thread::spawn(move || {
        thread::sleep(Duration::from_millis(300));
        trigger.cancel();
    });
    let results = run_checks(
        &[check("test", "sleep 1000"), check("lint", "true")],
        &plain_shell,
        &[],
        &dirs.worktree,
        &dirs.logs,
        "turn_3_",
        &cancel,
        None,
        None,
    );
    canceller.join().unwrap();
    assert_eq!(results.len(), 2);
    assert!(results.iter().all(|r| r.status == CheckStatus::Error));
    assert!(results[0].summary.starts_with("cancelled while running"));
    assert_eq!(results[1].summary, "cancelled before it ran");
    assert!(Path::new(&results[1].log_path).exists());
}

#[test]
fn criteria_ids_become_safe_log_names() {
    let dirs = dirs();
    let results = run(
        &dirs,
        &[check("../AC 1", "true"), check("/AC 1", "true")],
        &[],
    );
    assert_eq!(
        results[0].log_path,
        dirs.logs.join("turn_2_check__AC_1.log")
    );
    assert_eq!(
        results[1].log_path,
        dirs.logs.join("turn_2_check__AC_1_2.log")
    );
    assert!(results.iter().all(|r| r.log_path.exists()));
}

#[test]
fn the_project_environment_gives_checks_vars_path_and_setup() {
    let dirs = dirs();
    let bin = dirs.worktree.join(".venv/bin");
    fs::create_dir_all(&bin).unwrap();
    let tool = bin.join("ab-venv-tool");
    fs::write(&tool, "#!/bin/sh\necho from venv\n").unwrap();
    fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let config = EnvConfig {
        vars: [("AB_DB".to_string(), "sqlite:///tmp/dev.db".to_string())].into(),
        path_prepend: vec![".venv/bin".to_string()],
        setup: Some("export AB_FROM_SETUP=yes".to_string()),
    };
    let project = ProjectEnv::new(&config, &dirs.worktree);
    let shell = |command: &str| project.shell_command(command);
    let spec = check(
        "test",
        "ab-venv-tool && test \"$AB_DB\" = sqlite:///tmp/dev.db && test \"$AB_FROM_SETUP\" = yes",
    );
    let results = run_checks(
        &[spec],
        &shell,
        &project.vars(),
        &dirs.worktree,
        &dirs.logs,
        "",
        &CancelToken::new(),
        None,
        None,
    );
    assert_eq!(
        results[0].status,
        CheckStatus::Passed,
        "{}",
        results[0].summary
    );
    assert_eq!(results[0].summary, "from venv");

    let broken = EnvConfig {
        setup: Some("false".to_string()),
        ..EnvConfig::default()
    };
    let project = ProjectEnv::new(&broken, &dirs.worktree);
    let shell = |command: &str| project.shell_command(command);
    let results = run_checks(
        &[check("test", "true")],
        &shell,
        &project.vars(),
        &dirs.worktree,
        &dirs.logs,
        "",
        &CancelToken::new(),
        None,
        None,
    );
    assert_eq!(results[0].status, CheckStatus::Failed);
    assert_eq!(results[0].failure_class, Some(FailureClass::Infrastructure));
    assert!(results[0]
        .advice
        .as_deref()
        .unwrap()
        .contains("`[env] setup`"));
}

#[test]
fn a_check_whose_test_runner_ran_nothing_passes_with_a_warning() {
    let dirs = dirs();
    let specs = [
        check(
            "AC-001",
            "printf 'running 0 tests\\n\\ntest result: ok. 0 passed; 0 failed; 4 filtered out\\n'",
        ),
        check(
            "test",
            "printf 'running 2 tests\\ntest result: ok. 2 passed\\n'",
        ),
    ];
    let results = run(&dirs, &specs, &[]);

    let empty = &results[0];
    assert_eq!(empty.status, CheckStatus::Passed);
    let warning = empty.warning.as_deref().expect("a warning for 0 tests");
    assert!(warning.contains("cargo test ran no tests"), "{warning}");
    assert!(
        empty.summary.ends_with(&format!("(warning: {warning})")),
        "{}",
        empty.summary
    );
    assert_eq!(results[1].warning, None);
}

/// Issue 42: `[checks.<name>] results` — the counts come from the JUnit XML the check writes;
/// a passing check whose file is missing or is a link is an environment error, not a pass; a
/// failing one stays failed.
#[test]
fn a_results_file_gives_the_counts_and_a_missing_one_is_no_pass() {
    let dirs = dirs();
    let xml = "<testsuite><testcase classname='t' name='a'/><testcase classname='t' name='b'>\
               <skipped/></testcase></testsuite>";
    fs::write(dirs.worktree.join("outside.xml"), xml).unwrap();
    std::os::unix::fs::symlink(
        dirs.worktree.join("outside.xml"),
        dirs.worktree.join("link.xml"),
    )
    .unwrap();
    let specs = [
        with_results("read", &format!("printf \"{xml}\" > out.xml"), "out.xml"),
        with_results("missing", "true", "none.xml"),
        with_results("linked", "true", "link.xml"),
        with_results("failing", "exit 1", "none.xml"),
    ];
    let results = run(&dirs, &specs, &[]);
    let tally = results[0].tests.expect("counts from the results file");
    assert_eq!((tally.counts.passed, tally.counts.skipped), (1, 1));
    assert_eq!(results[0].status, CheckStatus::Passed);
    for result in &results[1..3] {
        assert_eq!(result.status, CheckStatus::Error, "{}", result.name);
        assert_eq!(result.failure_class, Some(FailureClass::Infrastructure));
        assert!(
            result.summary.starts_with("the results file: "),
            "{}",
            result.summary
        );
    }
    assert!(results[1].summary.contains("none.xml"));
    assert!(results[2].summary.contains("symbolic link"));
    assert_eq!(results[3].status, CheckStatus::Failed);
}
