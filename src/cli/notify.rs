//! `[notify] command` (docs/notify.md): told when a run ends approved (`done`), blocked (turn
//! limit, stall, failure, rejection, conflict) or waiting for a person (`waiting`) — not when
//! the person is there and pressed Ctrl-C. It reads the run's `status <ID> --json` document on
//! stdin; `AUTOBUILD_EVENT`, `AUTOBUILD_RUN` and `AUTOBUILD_EXIT_CODE` are in its environment.
//! It runs as the user's own program (not confined; CI and forge tokens withheld like from
//! every child), its output is kept in the run's `logs/notify.log`, and whatever happens to it
//! is at most a warning: it never changes the run's result or exit code.

use std::path::Path;

use crate::engine::paths::RunPaths;
use crate::error::exit;
use crate::project::{Config, Layout};
use crate::ui;

/// What a run's end is called for the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Done,
    Blocked,
    Waiting,
}

impl Event {
    /// The event of a run that ended with `exit_code`; `None` for one the person stopped
    /// (Ctrl-C) or that did not start (a usage error).
    pub fn of_exit(exit_code: u8, interrupted: bool) -> Option<Event> {
        match exit_code {
            exit::APPROVED | exit::NOT_MERGED => Some(Event::Done),
            exit::WAITING => Some(Event::Waiting),
            exit::USAGE => None,
            exit::CANCELLED if interrupted => None,
            _ => Some(Event::Blocked),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Event::Done => "done",
            Event::Blocked => "blocked",
            Event::Waiting => "waiting",
        }
    }
}

/// Runs the project's `[notify] command` for the run `id` that ended with `exit_code`, when
/// the project has one and the end is worth telling.
pub fn after_run(root: &Path, id: &str, exit_code: u8, interrupted: bool) {
    let Some(event) = Event::of_exit(exit_code, interrupted) else {
        return;
    };
    let layout = Layout::new(root);
    let Ok(Config {
        notify: Some(notify),
        ..
    }) = Config::load(&layout)
    else {
        return;
    };
    let document = match super::runs::status_document(root, id) {
        Ok(document) => document,
        Err(error) => {
            ui::warn(&format!(
                "[notify] was not run: the status of {id} cannot be read: {error}"
            ));
            return;
        }
    };
    let paths = RunPaths::new(&layout.runs(), id);
    let log = paths.logs().join("notify.log");
    if let Err(error) = std::fs::create_dir_all(paths.logs()) {
        ui::warn(&format!(
            "[notify] was not run: cannot create {}: {error}",
            paths.logs().display()
        ));
        return;
    }
    let mut spec = crate::process::ProcessSpec::new(&notify.command[0], root, &log);
    spec.args = notify.command[1..].to_vec();
    spec.stdin = Some(document.into_bytes());
    spec.timeout = Some(notify.timeout());
    spec.env = vec![
        ("AUTOBUILD_EVENT".into(), event.as_str().into()),
        ("AUTOBUILD_RUN".into(), id.into()),
        ("AUTOBUILD_EXIT_CODE".into(), exit_code.to_string()),
    ];
    let shown = notify.command.join(" ");
    match crate::process::run(&spec, &crate::process::CancelToken::new()) {
        Ok(outcome) => match outcome.end {
            crate::process::ProcessEnd::Exited(0) => {}
            end => ui::warn(&format!(
                "the [notify] command `{shown}` {} (its output: {}); the run's result stands",
                describe(end, notify.timeout()),
                log.display()
            )),
        },
        Err(error) => ui::warn(&format!(
            "the [notify] command `{shown}` could not be run: {error}; the run's result stands"
        )),
    }
}

/// [`after_run`] for a feature run started as `feature_arg` (an id or a path), whose record
/// says whether the person stopped it.
pub fn after_feature(root: &Path, feature_arg: &str, exit_code: u8) {
    // The feature file's own id (one file read, not the plan's look-up of every task).
    let id = crate::feature::locate::locate_feature(root, feature_arg)
        .and_then(|found| crate::feature::file::FeatureFile::load(&found.path, &found.shown))
        .map(|file| file.id.value)
        .unwrap_or_else(|_| feature_arg.to_string());
    let paths = RunPaths::new(&Layout::new(root).runs(), &id);
    let interrupted =
        crate::feature::state::FeatureState::load(&crate::feature::state::state_file(&paths))
            .is_ok_and(|state| state.status == crate::feature::state::FeatureStatus::Cancelled);
    after_run(root, &id, exit_code, interrupted);
}

fn describe(end: crate::process::ProcessEnd, timeout: std::time::Duration) -> String {
    use crate::process::ProcessEnd;
    match end {
        ProcessEnd::Exited(code) => format!("exited with {code}"),
        ProcessEnd::Signaled(signal) => format!("was killed by signal {signal}"),
        ProcessEnd::TimedOut | ProcessEnd::IdleTimedOut => {
            format!("took longer than {}s and was stopped", timeout.as_secs())
        }
        ProcessEnd::Cancelled | ProcessEnd::Aborted => "was stopped".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_that_need_someone_are_told_and_a_ctrl_c_is_not() {
        let cases = [
            (0, false, Some(Event::Done)),
            (7, false, Some(Event::Done)),
            (6, false, Some(Event::Waiting)),
            (3, false, Some(Event::Blocked)),
            (4, false, Some(Event::Blocked)),
            (1, false, Some(Event::Blocked)),
            (5, false, Some(Event::Blocked)),
            (5, true, None),
            (2, false, None),
        ];
        for (code, interrupted, expected) in cases {
            assert_eq!(
                Event::of_exit(code, interrupted),
                expected,
                "{code} {interrupted}"
            );
        }
    }
}
