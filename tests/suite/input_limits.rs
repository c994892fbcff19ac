//! Files users write are read within bounds, and a bad one only fails the commands that need
//! it: a YAML alias bomb in a workflow, feature or task file is a located error (exit 2) that
//! comes quickly and in little memory; a file over 1 MiB is refused naming its size and the
//! cap; a file that is not UTF-8 is a located error naming it (exit 2, not 1); an unrelated
//! broken workflow is a warning for `task OTHER`. And one run reports every problem of
//! config.toml, `[roles]` included.

use crate::loop_fixture;

use std::fs;
use std::os::unix::process::CommandExt;
use std::process::{Command, Output, Stdio};

use loop_fixture::{assert_exit, stderr, stdout, Project, TASK};

/// Address space for a bounded run: far more than autobuild needs, far less than an expanded
/// alias bomb (9⁹ values) would take.
const MEMORY_LIMIT: u64 = 768 * 1024 * 1024;

/// `autobuild -C <root> ARGS…` with its address space limited to [`MEMORY_LIMIT`].
fn run_bounded(project: &Project, args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_autobuild"));
    command
        .arg("-C")
        .arg(&project.root)
        .args(args)
        .stdin(Stdio::null())
        .env(
            "AUTOBUILD_CONFIG_DIR",
            project.root.join("no-such-config-dir"),
        )
        .env_remove("RUST_LOG");
    // SAFETY: only setrlimit, which is async-signal-safe, runs between fork and exec.
    unsafe {
        command.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: MEMORY_LIMIT,
                rlim_max: MEMORY_LIMIT,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    command.output().unwrap()
}

/// A "billion laughs" document: ten levels, each a list of nine aliases of the one before,
/// expanding to 9⁹ values from a few hundred bytes.
fn laughs() -> String {
    let mut text = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"];
    for pair in names.windows(2) {
        let refs = vec![format!("*{}", pair[0]); 9].join(",");
        text.push_str(&format!("{name}: &{name} [{refs}]\n", name = pair[1]));
    }
    text
}

const FEATURE_OK: &str = "id: FEAT-OK\nname: The one task\ntasks:\n  - id: TASK-1\n";

#[test]
fn a_workflow_alias_bomb_fails_fast_and_only_the_commands_that_need_it() {
    let project = Project::new().commit();
    project.write(".autobuild/workflows/bomb.yaml", &laughs());

    for args in [
        &["workflows", "validate", "bomb"][..],
        &["workflows", "show", "bomb", "--resolved"],
        &["task", TASK, "--workflow", "bomb", "--dry-run"],
    ] {
        let output = run_bounded(&project, args);
        assert_exit(&output, 2);
        let err = stderr(&output);
        assert!(
            err.contains(".autobuild/workflows/bomb.yaml:5:8: too many aliases: expanding this one would copy more than 10000 values from anchors"),
            "{args:?}: {err}"
        );
        assert!(err.contains("billion laughs"), "{err}");
    }

    let output = run_bounded(&project, &["workflows", "list"]);
    assert_exit(&output, 0);
    assert!(stdout(&output).contains("bomb "), "{}", stdout(&output));

    let output = run_bounded(&project, &["task", TASK, "--dry-run"]);
    assert_exit(&output, 0);
    assert!(
        stderr(&output).contains(
            "warning: workflow file .autobuild/workflows/bomb.yaml:5:8 cannot be used and was skipped: too many aliases"
        ),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_feature_file_alias_bomb_is_a_located_error_and_other_features_still_plan() {
    let project = Project::new();
    project.write(".autobuild/features/FEAT-OK.yaml", FEATURE_OK);
    project.write(
        ".autobuild/features/FEAT-BOMB.yaml",
        &format!("id: FEAT-BOMB\n{}", laughs()),
    );
    let project = project.commit();

    let output = run_bounded(&project, &["feature", "FEAT-BOMB", "--dry-run"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(".autobuild/features/FEAT-BOMB.yaml:6:8: too many aliases"),
        "{}",
        stderr(&output)
    );

    let output = run_bounded(&project, &["feature", "FEAT-OK", "--dry-run"]);
    assert_exit(&output, 0);
}

#[test]
fn a_task_front_matter_alias_bomb_is_located_and_other_tasks_still_plan() {
    let project = Project::new().commit();
    project.write(
        ".autobuild/tasks/TASK-BOMB.md",
        &format!(
            "---\nid: TASK-BOMB\n{}---\n# Bomb\n\n## Acceptance Criteria\n- [ ] nothing\n",
            laughs()
        ),
    );

    let output = run_bounded(&project, &["task", "TASK-BOMB", "--dry-run"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(
            ".autobuild/tasks/TASK-BOMB.md:7:8: malformed YAML front matter: too many aliases"
        ),
        "{}",
        stderr(&output)
    );

    assert_exit(&run_bounded(&project, &["task", TASK, "--dry-run"]), 0);
}

#[test]
fn files_over_the_size_cap_are_refused_naming_the_file_its_size_and_the_cap() {
    let project = Project::new().commit();
    // 50 MiB, as in the report: refused from its size alone, never read.
    let huge = 50 * 1024 * 1024;
    let mut workflow = String::from("name: big\n");
    workflow.push_str(&"#".repeat(huge - workflow.len() - 1));
    workflow.push('\n');
    project.write(".autobuild/workflows/big.yaml", &workflow);

    let output = run_bounded(&project, &["workflows", "validate", "big"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(".autobuild/workflows/big.yaml: the file is 52428800 bytes (50 MiB); autobuild reads such files up to 1 MiB (1048576 bytes)"),
        "{}",
        stderr(&output)
    );
    let output = run_bounded(&project, &["workflows", "show", "big"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("up to 1 MiB"),
        "{}",
        stderr(&output)
    );
    let output = run_bounded(&project, &["task", TASK, "--dry-run"]);
    assert_exit(&output, 0);
    assert!(
        stderr(&output).contains("workflow file .autobuild/workflows/big.yaml cannot be used"),
        "{}",
        stderr(&output)
    );
    fs::remove_file(project.root.join(".autobuild/workflows/big.yaml")).unwrap();

    let over = |head: &str| format!("{head}\n# {}\n", "x".repeat(2 * 1024 * 1024));
    project.write(
        ".autobuild/tasks/TASK-BIG.md",
        &over("---\nid: TASK-BIG\n---"),
    );
    assert_exit(&run_bounded(&project, &["task", TASK, "--dry-run"]), 0);
    let output = run_bounded(&project, &["task", "TASK-BIG", "--dry-run"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output)
            .contains(".autobuild/tasks/TASK-BIG.md: the file is 2097176 bytes (2.0 MiB)"),
        "{}",
        stderr(&output)
    );
    let output = run_bounded(
        &project,
        &["task", ".autobuild/tasks/TASK-BIG.md", "--dry-run"],
    );
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains("up to 1 MiB"),
        "{}",
        stderr(&output)
    );

    project.write(".autobuild/features/FEAT-BIG.yaml", &over("id: FEAT-BIG"));
    let output = run_bounded(&project, &["feature", "FEAT-BIG", "--dry-run"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(".autobuild/features/FEAT-BIG.yaml: the file is"),
        "{}",
        stderr(&output)
    );

    let config = project.read(".autobuild/config.toml");
    project.write(".autobuild/config.toml", &over(&config));
    let output = run_bounded(&project, &["task", TASK, "--dry-run"]);
    assert_exit(&output, 2);
    assert!(
        stderr(&output).contains(".autobuild/config.toml: the file is"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn files_that_are_not_utf8_are_located_errors_naming_the_file() {
    let project = Project::new().commit();
    let task =
        "---\nid: TASK-BAD\ntitle: caf\u{e9}\n---\n# Bad\n\n## Acceptance Criteria\n- [ ] x\n";
    let bytes = task.replace('\u{e9}', "").into_bytes();
    let mut latin1 = bytes.clone();
    // `title: caf` + Latin-1 é: line 3, column 11.
    let at = task.find('\u{e9}').unwrap();
    latin1.insert(at, 0xE9);
    fs::write(project.root.join(".autobuild/tasks/TASK-BAD.md"), latin1).unwrap();

    for arg in ["TASK-BAD", ".autobuild/tasks/TASK-BAD.md"] {
        let output = run_bounded(&project, &["task", arg, "--dry-run"]);
        assert_exit(&output, 2);
        assert!(
            stderr(&output).contains(
                ".autobuild/tasks/TASK-BAD.md:3:11: the file is not valid UTF-8 (byte 0xE9 at offset 27)"
            ),
            "{arg}: {}",
            stderr(&output)
        );
    }
    assert_exit(&run_bounded(&project, &["task", TASK, "--dry-run"]), 0);

    let mut config = project.read(".autobuild/config.toml").into_bytes();
    config.extend_from_slice(b"\n[env]\nvars = { NAME = \"Ren\xe9\" }\n");
    fs::write(project.root.join(".autobuild/config.toml"), config).unwrap();
    let output = run_bounded(&project, &["task", TASK, "--dry-run"]);
    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(err.starts_with(".autobuild/config.toml:"), "{err}");
    assert!(
        err.contains(": the file is not valid UTF-8 (byte 0xE9"),
        "{err}"
    );
}

#[test]
fn one_run_reports_every_problem_of_the_config_roles_included() {
    let project = Project::new().commit();
    let config = r#"[checks.test]
cmdd = "sh tests/run.sh"

[env]
pth_prepend = [".venv/bin"]

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]

[roles.playr]
model = "opus"

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/agents/coach.sh"]
modle = "opus"
"#;
    project.write(".autobuild/config.toml", config);

    for args in [
        &["task", TASK, "--dry-run"][..],
        &["task", TASK],
        &["feature", ".autobuild/features/FEAT-OK.yaml", "--dry-run"],
    ] {
        if args[0] == "feature" {
            project.write(".autobuild/features/FEAT-OK.yaml", FEATURE_OK);
        }
        let output = run_bounded(&project, args);
        assert_exit(&output, 2);
        let err = stderr(&output);
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with(".autobuild/config.toml:"))
            .collect();
        assert_eq!(
            lines,
            [
                ".autobuild/config.toml:1:9: missing key `cmd`",
                ".autobuild/config.toml:2:1: unknown key `cmdd`",
                ".autobuild/config.toml:5:1: unknown key `pth_prepend`",
                ".autobuild/config.toml:11:8: no workflow has a role `playr`",
                ".autobuild/config.toml:17:1: unknown key `modle`",
            ],
            "{args:?}: {err}"
        );
    }
    assert!(!project.run_dir().exists());
}

/// `autobuild -C <root> ARGS…`, failing the test if it has not finished within 20 seconds (a
/// command blocked on a FIFO would never finish).
fn run_timed(project: &Project, args: &[&str]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_autobuild"))
        .arg("-C")
        .arg(&project.root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env(
            "AUTOBUILD_CONFIG_DIR",
            project.root.join("no-such-config-dir"),
        )
        .env_remove("RUST_LOG")
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(20) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("`autobuild {}` hung", args.join(" "));
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn mkfifo(path: &std::path::Path) {
    let _ = fs::remove_file(path);
    let c_path = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

#[test]
fn a_fifo_as_config_toml_is_refused_naming_it_not_waited_on() {
    let project = Project::new().commit();
    mkfifo(&project.root.join(".autobuild/config.toml"));

    let output = run_timed(&project, &["task", TASK, "--dry-run"]);

    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains(".autobuild/config.toml: it is a FIFO (named pipe), not a regular file"),
        "{err}"
    );
}

#[test]
fn fifos_among_the_projects_own_files_are_skipped_not_waited_on() {
    let project = Project::new().commit();
    // Files autobuild looks at to recognize the project and its ignore rules.
    for name in ["Cargo.toml", "package.json", ".gitignore"] {
        mkfifo(&project.root.join(name));
    }

    let output = run_timed(&project, &["task", TASK, "--dry-run"]);

    assert_exit(&output, 0);
}

/// A run directory of TASK-1 whose state.json is made by `make`.
fn run_record(project: &Project, make: impl Fn(&std::path::Path)) -> std::path::PathBuf {
    let dir = project.root.join(".autobuild/runs").join(TASK);
    fs::create_dir_all(&dir).unwrap();
    let state = dir.join("state.json");
    make(&state);
    state
}

#[test]
fn a_fifo_or_a_link_to_dev_zero_as_state_json_is_refused_by_every_command_naming_it() {
    let project = Project::new().commit();
    fn zero(path: &std::path::Path) {
        std::os::unix::fs::symlink("/dev/zero", path).unwrap();
    }
    type Make = fn(&std::path::Path);
    let cases: [(&str, Make); 2] = [
        ("it is a FIFO (named pipe)", mkfifo),
        ("it is a character device", zero),
    ];
    for (kind, make) in cases {
        let state = run_record(&project, |path| {
            let _ = fs::remove_file(path);
            make(path)
        });
        for args in [vec!["status"], vec!["status", TASK], vec!["approve", TASK]] {
            let output = run_timed(&project, &args);

            assert_exit(&output, 2);
            let err = stderr(&output);
            assert!(
                err.contains(&format!(
                    "{}: the run record is unreadable: {kind}",
                    state.display()
                )),
                "{args:?}: {err}"
            );
        }
    }
}

#[test]
fn a_truncated_state_json_is_listed_as_unreadable_not_as_no_runs() {
    let project = Project::new().commit();
    let state = run_record(&project, |path| {
        fs::write(path, "{\"task_id\": \"TASK-1\", \"sta").unwrap()
    });

    let output = run_timed(&project, &["status"]);

    assert_exit(&output, 2);
    let out = stdout(&output);
    assert!(!out.contains("no runs yet"), "{out}");
    assert!(out.contains("UNREADABLE"), "{out}");
    assert!(
        out.contains(&format!("{TASK:<20} {}", state.display())),
        "{out}"
    );
    assert!(stderr(&output).contains("the run record is unreadable"));

    let output = run_timed(&project, &["status", TASK]);

    assert_exit(&output, 2);
    let err = stderr(&output);
    assert!(
        err.contains(&format!(
            "{}: the run record is unreadable",
            state.display()
        )),
        "{err}"
    );
}
