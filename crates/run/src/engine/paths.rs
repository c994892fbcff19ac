//! The run directory `.autobuild/runs/<ID>/` (docs/runs.md, "Run directory"): one place that names its files,
//! and the one check of run ids given on the command line.
//!
//! A run id is a task or feature id (the alphabet of [`model::task::validate_id`]), or the id
//! of an earlier run kept as `<ID>@<N>` (or `<ID>@archived`, see [`RunPaths::archive_target`]).
//! Run ids become paths under `.autobuild/runs/`, so a command that takes one validates it
//! before touching the filesystem ([`validate_run_id`]): `../../x`, `/abs/path` and `a/b` never
//! name a directory, and [`RunPaths::within`] refuses a run directory that is a link to
//! somewhere else. Nothing a run command reads or writes is outside `.autobuild/runs/`.

use std::path::{Path, PathBuf};

use base::error::{Class, Problem};
use model::task::validate_id;

/// What follows `@` in the id of an earlier run when no free number was found.
const ARCHIVED: &str = "archived";

/// Why a run id given by a user names no run directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunIdError {
    /// The part before `@` is not a task or feature id (in the words of [`validate_id`]).
    #[error("invalid run id: {0}")]
    NotAnId(String),
    /// What follows `@` is neither a number nor `archived`.
    #[error(
        "invalid run id: `@{earlier}` is not an earlier run: those are named `{task}@1`, `{task}@2`, …"
    )]
    NotEarlier { task: String, earlier: String },
    /// The run directory is a link leading out of the runs directory.
    #[error("{} leads to {}, outside {}; autobuild does not follow it", dir.display(), target.display(), runs_dir.display())]
    Outside {
        dir: PathBuf,
        target: PathBuf,
        runs_dir: PathBuf,
    },
}

impl Problem for RunIdError {
    fn class(&self) -> Class {
        Class::Usage
    }

    fn help(&self) -> Option<String> {
        match self {
            RunIdError::NotAnId(_) | RunIdError::NotEarlier { .. } => Some(
                "a run id is a task or feature id such as TASK-001, or an earlier run kept as TASK-001@1; `autobuild status` lists the runs".into(),
            ),
            RunIdError::Outside { .. } => None,
        }
    }
}

/// Checks a run id given by a user; the error says what is wrong with it.
pub fn validate_run_id(id: &str) -> Result<(), RunIdError> {
    let (task, earlier) = match id.split_once('@') {
        Some((task, n)) => (task, Some(n)),
        None => (id, None),
    };
    validate_id(task).map_err(RunIdError::NotAnId)?;
    match earlier {
        None => Ok(()),
        Some(n) if n == ARCHIVED || (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())) => {
            Ok(())
        }
        Some(n) => Err(RunIdError::NotEarlier {
            task: task.to_string(),
            earlier: n.to_string(),
        }),
    }
}

/// The task or feature a run id belongs to: `TASK-1` for `TASK-1@2`.
pub fn run_owner(run_id: &str) -> &str {
    run_id.split_once('@').map_or(run_id, |(owner, _)| owner)
}

#[derive(Debug, Clone)]
pub struct RunPaths {
    pub dir: PathBuf,
}

impl RunPaths {
    pub fn new(runs_dir: &Path, task_id: &str) -> RunPaths {
        RunPaths {
            dir: runs_dir.join(task_id),
        }
    }

    pub fn state(&self) -> PathBuf {
        self.dir.join("state.json")
    }

    pub fn events(&self) -> PathBuf {
        self.dir.join("events.jsonl")
    }

    /// The branch's net diff as the first report of its tip computed it (`report::records`).
    pub fn net_diff(&self) -> PathBuf {
        self.dir.join("net_diff.json")
    }

    pub fn workflow_resolved(&self) -> PathBuf {
        self.dir.join("workflow.resolved.toml")
    }

    pub fn workflow_hash(&self) -> PathBuf {
        self.dir.join("workflow.resolved.sha256")
    }

    pub fn prompts(&self) -> PathBuf {
        self.dir.join("prompts")
    }

    pub fn logs(&self) -> PathBuf {
        self.dir.join("logs")
    }

    pub fn report(&self) -> PathBuf {
        self.dir.join("report.md")
    }

    /// `player_turn_2.json`, `coach_turn_2.json`, `verify_turn_2.json`, `gate_turn_2.json`.
    pub fn turn_record(&self, kind: &str, turn: u32) -> PathBuf {
        self.dir.join(format!("{kind}_turn_{turn}.json"))
    }

    /// The rendered prompt of one agent invocation.
    pub fn prompt_file(&self, role: &str, turn: u32, attempt: u32) -> PathBuf {
        let retry = if attempt > 1 {
            format!("_retry{}", attempt - 1)
        } else {
            String::new()
        };
        self.prompts().join(format!("turn_{turn}_{role}{retry}.md"))
    }

    /// The transcript of one agent invocation.
    pub fn transcript(&self, role: &str, turn: u32, attempt: u32) -> PathBuf {
        let retry = if attempt > 1 {
            format!("_retry{}", attempt - 1)
        } else {
            String::new()
        };
        self.logs().join(format!("turn_{turn}_{role}{retry}.log"))
    }

    /// Where an earlier run of the same task is kept when a new run starts.
    /// `@` cannot appear in task ids, so archived names never collide with a task.
    pub fn archive_target(runs_dir: &Path, task_id: &str) -> PathBuf {
        (1..)
            .map(|n| runs_dir.join(format!("{task_id}@{n}")))
            .find(|p| !p.exists())
            .unwrap_or_else(|| runs_dir.join(format!("{task_id}@{ARCHIVED}")))
    }

    /// The run directory of a [validated](validate_run_id) `run_id`, refused when it is a link
    /// leading out of `runs_dir` (the error names where it leads). A directory that does not
    /// exist is fine: the caller reports that there is no such run.
    pub fn within(runs_dir: &Path, run_id: &str) -> Result<RunPaths, RunIdError> {
        let paths = RunPaths::new(runs_dir, run_id);
        if let (Ok(dir), Ok(runs)) = (paths.dir.canonicalize(), runs_dir.canonicalize()) {
            if dir.parent() != Some(runs.as_path()) {
                return Err(RunIdError::Outside {
                    dir: paths.dir,
                    target: dir,
                    runs_dir: runs_dir.to_path_buf(),
                });
            }
        }
        Ok(paths)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_are_task_ids_or_earlier_runs_of_one() {
        for id in [
            "TASK-1",
            "FEAT.2_x",
            "TASK-1@1",
            "TASK-1@12",
            "TASK-1@archived",
        ] {
            assert_eq!(validate_run_id(id), Ok(()), "{id}");
        }
        for id in ["", "../../x", "..", "/abs/path", "a/b", "a\\b", "@1"] {
            let err = validate_run_id(id).unwrap_err();
            assert!(matches!(err, RunIdError::NotAnId(_)), "{id}: {err}");
        }
        for (id, earlier) in [
            ("TASK-1@", ""),
            ("TASK-1@x", "x"),
            ("TASK-1@1/..", "1/.."),
            ("TASK-1@1@2", "1@2"),
        ] {
            assert_eq!(
                validate_run_id(id),
                Err(RunIdError::NotEarlier {
                    task: "TASK-1".into(),
                    earlier: earlier.into()
                }),
                "{id}"
            );
        }
        assert_eq!(run_owner("TASK-1@2"), "TASK-1");
        assert_eq!(run_owner("TASK-1"), "TASK-1");
    }

    #[test]
    fn a_run_directory_that_links_out_of_the_runs_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("runs");
        std::fs::create_dir_all(runs.join("TASK-1")).unwrap();
        std::fs::create_dir_all(dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), runs.join("TASK-2")).unwrap();
        assert!(RunPaths::within(&runs, "TASK-1").is_ok());
        assert!(RunPaths::within(&runs, "TASK-3").is_ok());
        let err = RunPaths::within(&runs, "TASK-2").unwrap_err();
        assert!(
            matches!(&err, RunIdError::Outside { dir, .. } if *dir == runs.join("TASK-2")),
            "{err}"
        );
    }
}
