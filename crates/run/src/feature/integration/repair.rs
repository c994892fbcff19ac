//! `integration = "integrate"`: a failed integration check becomes a task of its own, run on
//! the feature branch by the task workflow like any other (the usual loop, gates and records,
//! `runs/<id>/`). Its task file is written by the runner into the feature's run directory
//! (`runs/<FEAT-ID>/integration/<id>.md`): the failure as its description, and one criterion,
//! "the checks pass", which its gate holds it to (the same profile as the wave's tasks, so the
//! same required checks). Once it is approved it lands on the feature branch like a task, the
//! tip is checked again, and the feature goes on when that check passes.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::IntegrationRecord;
use base::error::Error;
use base::Keyword;

/// The id of the integration task after `wave` (1-based).
pub fn repair_id(feature_id: &str, wave: usize) -> String {
    format!("{feature_id}-integration-{wave}")
}

/// Where the runner writes its task file.
pub fn repair_file(run_dir: &Path, id: &str) -> PathBuf {
    run_dir.join("integration").join(format!("{id}.md"))
}

/// What the integration task is about.
pub struct RepairTask<'a> {
    pub id: &'a str,
    pub feature_id: &'a str,
    pub branch: &'a str,
    /// The profile of the wave's tasks (their `task_type`).
    pub task_type: &'a str,
    /// The wave's tasks' own hidden paths (front matter `hidden:`): the integration task hides
    /// them too. The project's `[scope] hidden` applies to it as to every task.
    pub hidden: &'a [String],
    /// The failure as the integration task's agents may learn it: a hidden check's summary
    /// already reduced to what `[scope] reveal` allows ([`conceal`]).
    pub failed: &'a IntegrationRecord,
}

/// `record` as agents may read it: the summary of each check in `hidden_checks` replaced by
/// what `reveal` lets agents learn of it (read from its log), never its output.
pub fn conceal(
    record: &IntegrationRecord,
    hidden_checks: &[String],
    reveal: model::steps::reveal::Reveal,
) -> IntegrationRecord {
    let mut concealed = record.clone();
    for check in &mut concealed.checks {
        if hidden_checks.contains(&check.name) {
            let output = std::fs::read_to_string(&check.log).unwrap_or_default();
            let passed = check.status == model::steps::check::CheckStatus::Passed;
            check.summary = model::steps::reveal::revealed(reveal, &check.name, passed, &output);
            check.log = PathBuf::new();
            // As for a task's hidden check (`reveal::conceal`): only `names` tells a timeout.
            if !passed && reveal != model::steps::reveal::Reveal::Names {
                check.status = model::steps::check::CheckStatus::Failed;
            }
        }
    }
    concealed
}

/// The task file's text.
pub fn render(task: &RepairTask<'_>) -> String {
    let failed = task.failed;
    let mut out = String::new();
    let _ = writeln!(out, "---");
    let _ = writeln!(out, "id: {}", task.id);
    let _ = writeln!(
        out,
        "title: Make wave {} of {} pass its checks together",
        failed.wave, task.feature_id
    );
    let _ = writeln!(out, "task_type: {}", yaml_scalar(task.task_type));
    if !task.hidden.is_empty() {
        let globs: Vec<String> = task.hidden.iter().map(|g| yaml_scalar(g)).collect();
        let _ = writeln!(out, "hidden: [{}]", globs.join(", "));
    }
    let _ = writeln!(out, "---");
    let _ = writeln!(
        out,
        "# Integrate wave {} of {}\n",
        failed.wave, task.feature_id
    );
    let _ = writeln!(
        out,
        "Each of the tasks {} passed its checks on its own branch, but together on `{}` \
         (commit {}) these checks fail:\n",
        failed.tasks.join(", "),
        task.branch,
        failed.commit.get(..10).unwrap_or(&failed.commit)
    );
    for check in failed.failing() {
        let _ = writeln!(
            out,
            "## Check `{}` ({})\n",
            check.name,
            check.status.as_str()
        );
        let _ = writeln!(out, "```text\n{}\n```\n", check.summary.trim_end());
    }
    let _ = writeln!(
        out,
        "Change the code so the checks pass with the work of every task kept: what each task \
         set out to do must still hold. Do not weaken or delete tests to make them pass.\n"
    );
    let names: Vec<String> = failed
        .checks
        .iter()
        .map(|c| format!("`{}`", c.name))
        .collect();
    let _ = writeln!(out, "## Acceptance Criteria");
    let _ = writeln!(
        out,
        "- [ ] AC-001: The profile's checks ({}) pass on the feature branch with every task of \
         the wave kept",
        names.join(", ")
    );
    out
}

/// Writes the task file; returns its path.
pub fn write(run_dir: &Path, task: &RepairTask<'_>) -> Result<PathBuf, Error> {
    let path = repair_file(run_dir, task.id);
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    }
    crate::engine::state::write_atomic(&path, render(task).as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    Ok(path)
}

/// A YAML scalar safe whatever the text (task types are plain words; quoting costs nothing).
fn yaml_scalar(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_else(|_| "feature".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::integration::{IntegrationCheck, IntegrationOutcome};
    use model::steps::check::CheckStatus;

    #[test]
    fn the_task_file_parses_and_says_what_failed() {
        let failed = IntegrationRecord {
            wave: 2,
            commit: "0123456789abcdef".into(),
            outcome: IntegrationOutcome::Failed,
            tasks: vec!["A".into(), "B".into()],
            checks: vec![IntegrationCheck {
                name: "test".into(),
                status: CheckStatus::Failed,
                summary: "FAIL tests/test_a.sh\n1 passed, 1 failed\n".into(),
                log: "x".into(),
            }],
            repair: None,
        };
        let id = repair_id("FEAT-1", 2);
        let task = RepairTask {
            id: &id,
            feature_id: "FEAT-1",
            branch: "autobuild/FEAT-1",
            task_type: "feature",
            hidden: &[],
            failed: &failed,
        };
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), &task).unwrap();
        let parsed = model::task::Task::load(&path).unwrap();
        assert_eq!(parsed.id, "FEAT-1-integration-2");
        assert_eq!(parsed.task_type, "feature");
        assert_eq!(parsed.criteria.len(), 1);
        let text = render(&task);
        assert!(text.contains("Each of the tasks A, B passed"), "{text}");
        assert!(text.contains("FAIL tests/test_a.sh"), "{text}");
        assert!(text.contains("commit 0123456789)"), "{text}");
    }

    #[test]
    fn a_hidden_check_reaches_the_integration_task_only_as_its_reveal_level_allows() {
        use model::steps::reveal::Reveal;
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("acceptance.log");
        std::fs::write(
            &log,
            "def test_secret():\n    assert add(2, 2) == 5  # SECRET-ORACLE\n\
             FAILED tests/acceptance/test_a.py::test_secret - AssertionError\n\
             === 1 failed, 3 passed in 0.1s ===\n",
        )
        .unwrap();
        let check = |name: &str, summary: &str| IntegrationCheck {
            name: name.into(),
            status: CheckStatus::Failed,
            summary: summary.into(),
            log: log.clone(),
        };
        let record = IntegrationRecord {
            wave: 1,
            commit: "0123456789abcdef".into(),
            outcome: IntegrationOutcome::Failed,
            tasks: vec!["A".into(), "B".into()],
            checks: vec![
                check("acceptance", "assert add(2, 2) == 5  # SECRET-ORACLE"),
                check("test", "FAIL unit: visible"),
            ],
            repair: None,
        };
        let hidden = ["acceptance".to_string()];
        for (level, shown) in [
            (
                Reveal::Names,
                "hidden check `acceptance` failed (1 failed, 3 passed); failing tests: \
                 tests/acceptance/test_a.py::test_secret",
            ),
            (Reveal::Summary, "hidden check failed (1 failed, 3 passed)"),
            (
                Reveal::None,
                "a hidden check failed (the project reveals nothing more)",
            ),
        ] {
            let concealed = conceal(&record, &hidden, level);
            assert_eq!(concealed.checks[0].summary, shown, "{level:?}");
            assert_eq!(concealed.checks[0].log, PathBuf::new());
            assert_eq!(concealed.checks[1].summary, "FAIL unit: visible");
            let id = repair_id("F", 1);
            let globs = ["tests/acceptance/**".to_string()];
            let text = render(&RepairTask {
                id: &id,
                feature_id: "F",
                branch: "autobuild/F",
                task_type: "feature",
                hidden: &globs,
                failed: &concealed,
            });
            assert!(!text.contains("SECRET-ORACLE"), "{text}");
            let path = write(
                dir.path(),
                &RepairTask {
                    id: &id,
                    feature_id: "F",
                    branch: "autobuild/F",
                    task_type: "feature",
                    hidden: &globs,
                    failed: &concealed,
                },
            )
            .unwrap();
            let parsed = model::task::Task::load(&path).unwrap();
            assert_eq!(parsed.hidden, globs);
        }
    }
}
