//! `[notify] command` (docs/notify.md): run when a run ends done, blocked or waiting, with the
//! run's `status --json` on stdin; whatever happens to it never changes the run's result.

use std::fs;

use crate::loop_fixture::{assert_exit, Project, TASK};

/// A project whose `[notify]` runs a script writing its stdin and environment beside the
/// repository, with `extra` appended to the table.
fn project(player: &str, extra: &str) -> (Project, std::path::PathBuf) {
    let project = Project::new().player(player);
    let out = project.outside("notified");
    let script = project.outside("notify.sh");
    fs::write(
        &script,
        "cat > \"$NOTIFY_OUT.json\"\nprintf '%s %s %s' \"$AUTOBUILD_EVENT\" \"$AUTOBUILD_RUN\" \"$AUTOBUILD_EXIT_CODE\" > \"$NOTIFY_OUT.env\"\n${NOTIFY_THEN:-true}\n",
    )
    .unwrap();
    let project = project
        .config(&format!(
            "\n[notify]\ncommand = [\"sh\", {:?}]\n{extra}",
            script.to_str().unwrap()
        ))
        .env("NOTIFY_OUT", out.to_str().unwrap())
        .commit();
    (project, out)
}

#[test]
fn an_approved_run_is_told_with_its_status_document() {
    let (project, out) = project("player_correct.sh", "");

    let output = project.run(&["task", TASK, "--no-merge"]);

    assert_exit(&output, 0);
    let env = fs::read_to_string(out.with_extension("env")).unwrap();
    assert_eq!(env, "done TASK-1 0");
    let document: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.with_extension("json")).unwrap()).unwrap();
    assert_eq!(document["version"], 1);
    assert_eq!(document["tasks"][0]["task_id"], "TASK-1");
    assert_eq!(document["tasks"][0]["status"], "approved");
    assert!(project.run_dir().join("logs/notify.log").is_file());
}

#[test]
fn a_failing_or_hanging_command_is_a_warning_and_the_result_stands() {
    let (project, out) = project("player_claims_pass.sh", "timeout = \"1s\"\n");

    let output = project.run_with_env(
        &["task", TASK, "--max-turns", "1"],
        &[("NOTIFY_THEN", "sleep 20")],
    );

    // Blocked at the turn limit, and told so; the hang past its timeout is only a warning.
    assert_exit(&output, 3);
    assert_eq!(
        fs::read_to_string(out.with_extension("env")).unwrap(),
        "blocked TASK-1 3"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("took longer than 1s"), "{stderr}");

    let output = project.run_with_env(
        &["task", TASK, "--fresh", "--yes", "--max-turns", "1"],
        &[("NOTIFY_THEN", "exit 9")],
    );

    assert_exit(&output, 3);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("exited with 9"), "{stderr}");
}

#[test]
fn a_feature_is_told_once_by_its_own_id() {
    let project = crate::feature_fixture::Project::new()
        .task("TASK-A", "test -f lib/a.txt", "echo a > lib/a.txt")
        .feature("FEAT-N", "id: FEAT-N\ntasks:\n  - id: TASK-A\n");
    let out = project.outside("notified");
    let config = project.root.join(".autobuild/config.toml");
    let text = fs::read_to_string(&config).unwrap();
    fs::write(
        &config,
        format!(
            "{text}\n[notify]\ncommand = [\"sh\", \"-c\", \"printf '%s %s %s\\\\n' \\\"$AUTOBUILD_EVENT\\\" \\\"$AUTOBUILD_RUN\\\" \\\"$AUTOBUILD_EXIT_CODE\\\" >> {}\"]\n",
            out.display()
        ),
    )
    .unwrap();
    let project = project.commit();

    // Named by its file: the notification still says the feature's id.
    let output = project.run(&[
        "feature",
        ".autobuild/features/FEAT-N.yaml",
        "--max-turns",
        "1",
    ]);

    crate::feature_fixture::assert_exit(&output, 0);
    assert_eq!(fs::read_to_string(&out).unwrap(), "done FEAT-N 0\n");
}
