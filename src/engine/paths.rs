//! The run directory `.autobuild/runs/<ID>/` (DESIGN.md §5.1): one place that names its files.

use std::path::{Path, PathBuf};

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
            .unwrap_or_else(|| runs_dir.join(format!("{task_id}@archived")))
    }
}
