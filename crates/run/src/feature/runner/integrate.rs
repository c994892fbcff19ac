//! The runner's integration check after a wave ([`crate::feature::integration`]): check the
//! feature branch's tip when the wave's tasks moved it, record the result in `feature.json`,
//! and on a failure either stop the feature (`check`) or first run the integration task
//! (`integrate`), land it like a task and check again.

use std::sync::mpsc;

use super::Runner;
use crate::engine::cx::now;
use crate::engine::plan::BranchPolicy;
use crate::engine::Outcome;
use crate::feature::events::FeatureEventKind;
use crate::feature::integration::check::{self, Target};
use crate::feature::integration::repair::{self, RepairTask};
use crate::feature::integration::{needs_check, IntegrationRecord, RepairRecord};
use crate::feature::merge::{approved_commit, merge_task, ApprovedTask, TaskMerge};
use crate::feature::state::{ConflictRecord, FeatureState, HistoryEntry, TaskStatus};
use crate::feature::task_thread::{spawn_task, Message, TaskRun, ThreadError};
use base::error::Error;
use base::Keyword;
use model::project::Integration;

impl Runner {
    /// After wave `wave` (0-based) landed its tasks.
    pub(super) fn integrate(&mut self, wave: usize) -> Result<(), Error> {
        let mode = self.setup.config.feature.integration;
        let on_branch: Vec<String> = self.state.waves[wave]
            .iter()
            .filter(|id| self.state.status_of(id) == TaskStatus::Merged)
            .cloned()
            .collect();
        let tip = self.repo.resolve_branch(&self.state.branch)?;
        if !needs_check(mode, !on_branch.is_empty(), &tip, &self.state.integration) {
            return Ok(());
        }
        let Some(passed) = self.check_tip(wave + 1, on_branch.clone())? else {
            return Ok(());
        };
        if passed || self.cancel.is_cancelled() {
            return Ok(());
        }
        if mode == Integration::Integrate && self.repair(wave + 1, &on_branch)? {
            return Ok(());
        }
        // A cancelled repair leaves the failure recorded for the resume to check again.
        if !self.cancel.is_cancelled() {
            self.integration_failed = true;
        }
        Ok(())
    }

    /// Runs the checks on the tip, records and announces the result; `None` when there is
    /// no check to run (no task's gate requires one).
    fn check_tip(&mut self, wave: usize, tasks: Vec<String>) -> Result<Option<bool>, Error> {
        let merged: Vec<&model::task::Task> = self
            .setup
            .plan
            .tasks
            .iter()
            .filter(|t| self.state.status_of(t.id()) == TaskStatus::Merged)
            .map(|t| &t.task)
            .collect();
        let checks = check::checks_for(
            &self.setup.plan.root,
            &self.setup.config,
            &merged,
            &self.setup.task_settings(),
        )?;
        if checks.is_empty() && self.setup.config.worktree.setup.is_none() {
            return Ok(None);
        }
        let target = Target {
            repo: &self.repo,
            layout: &self.setup.layout,
            config: &self.setup.config,
            feature_id: &self.state.feature_id,
            branch: &self.state.branch,
            run_dir: &self.paths.dir,
            wave,
            cancel: &self.cancel,
        };
        let (commit, results) = check::run(&target, &checks)?;
        let record = IntegrationRecord::new(wave, commit, tasks, &results);
        let passed = record.passed();
        let message = if passed {
            format!(
                "wave {wave} integrated: the checks pass on {}",
                self.state.branch
            )
        } else {
            record.failure_message(&self.state.branch)
        };
        let event = FeatureEventKind::Integration {
            wave,
            commit: record.commit.clone(),
            passed,
            failed: record.failing().iter().map(|c| c.name.clone()).collect(),
            message,
        };
        self.state.integration.push(record);
        self.save()?;
        self.emit(event);
        Ok(Some(passed))
    }

    /// `integrate`: runs the integration task on the failure, lands it when approved and
    /// checks the tip again; whether the checks pass now.
    fn repair(&mut self, wave: usize, tasks: &[String]) -> Result<bool, Error> {
        let id = repair::repair_id(&self.state.feature_id, wave);
        let task_type = tasks
            .first()
            .and_then(|t| self.setup.plan.task(t))
            .map_or_else(|| "feature".to_string(), |t| t.task.task_type.clone());
        let Some(failed) = self.state.integration.last().cloned() else {
            return Ok(false);
        };
        // The integration task's agents must not learn more of a hidden check than the
        // wave's tasks' agents did, nor see the hidden paths any of those tasks hid.
        let mut hidden: Vec<String> = Vec::new();
        for task in tasks.iter().filter_map(|t| self.setup.plan.task(t)) {
            for glob in &task.task.hidden {
                if !hidden.contains(glob) {
                    hidden.push(glob.clone());
                }
            }
        }
        let hidden_checks: Vec<String> = self
            .setup
            .config
            .checks
            .iter()
            .filter(|(_, check)| check.hidden)
            .map(|(name, _)| name.clone())
            .collect();
        let hides = !(hidden.is_empty() && self.setup.config.scope.hidden.is_empty());
        let told = if hides {
            repair::conceal(&failed, &hidden_checks, self.setup.config.scope.reveal)
        } else {
            failed.clone()
        };
        let path = repair::write(
            &self.paths.dir,
            &RepairTask {
                id: &id,
                feature_id: &self.state.feature_id,
                branch: &self.state.branch,
                task_type: &task_type,
                hidden: &hidden,
                failed: &told,
            },
        )?;
        self.emit(FeatureEventKind::IntegrationRepair {
            wave,
            task: id.clone(),
        });
        let outcome = self.run_repair(&id, &path.display().to_string());
        let (status, message) = match &outcome {
            Ok(Outcome::Approved { .. }) => (TaskStatus::Approved, None),
            Ok(outcome) => (TaskStatus::from_outcome(outcome), Some(outcome.to_string())),
            Err(error) => (TaskStatus::Failed, Some(format!("failed: {error}"))),
        };
        let landed = if status == TaskStatus::Approved {
            self.land_repair(&id, &failed)?
        } else {
            None
        };
        let (status, message) = match landed {
            Some(message @ Some(_)) => (TaskStatus::Conflict, message),
            Some(None) => (TaskStatus::Merged, None),
            None => (status, message),
        };
        if let Some(last) = self.state.integration.last_mut() {
            last.repair = Some(RepairRecord {
                task: id.clone(),
                status: status.as_str().to_string(),
                message: message.clone(),
            });
        }
        self.save()?;
        self.emit(FeatureEventKind::TaskFinished {
            task: id.clone(),
            status: status.as_str().to_string(),
            message: message.unwrap_or_else(|| format!("merged into {}", self.state.branch)),
            report: None,
        });
        if status != TaskStatus::Merged {
            return Ok(false);
        }
        Ok(self.check_tip(wave, tasks.to_vec())? == Some(true))
    }

    /// Runs the integration task's workflow on the feature branch and waits for it.
    fn run_repair(&mut self, id: &str, task_path: &str) -> Result<Outcome, Error> {
        // A run with hidden paths keeps its branch in its task repository until it lands.
        let branch_exists = self.repo.branch_exists(&format!("autobuild/{id}"))
            || self.setup.layout.task_repo(id).join(".git").is_dir();
        let (tx, rx) = mpsc::channel();
        let handle = spawn_task(TaskRun {
            root: self.setup.plan.root.clone(),
            task: id.to_string(),
            task_path: task_path.to_string(),
            settings: self.setup.task_settings(),
            policy: if branch_exists {
                BranchPolicy::Resume
            } else {
                BranchPolicy::New
            },
            cancel: self.cancel.clone(),
            tx,
        })?;
        let result = loop {
            match rx.recv() {
                Ok(Message::Event(event)) => self.sink.task(&event),
                Ok(Message::Done(_, result)) => break result,
                Err(_) => break Err(ThreadError::Unreported(id.to_string()).into()),
            }
        };
        let _ = handle.join();
        result
    }

    /// Squashes the approved integration task onto the feature branch. `None`: not landed;
    /// `Some(None)`: landed; `Some(Some(why))`: it conflicted.
    fn land_repair(
        &mut self,
        id: &str,
        failed: &IntegrationRecord,
    ) -> Result<Option<Option<String>>, Error> {
        let runs = self.setup.runs_dir();
        let approved = approved_commit(&runs, id)?;
        let worktree = self.setup.layout.worktree(id);
        let title = format!(
            "Integrate wave {} of {}",
            failed.wave, self.state.feature_id
        );
        let task = ApprovedTask {
            id,
            title: &title,
            worktree: &worktree,
            approved: &approved,
            // The integration repair has no task file of its own.
            task_file: None,
        };
        let file = &mut self.file;
        let mut save = |state: &mut FeatureState| {
            file.save(state)
                .map_err(|e| Error::io("cannot write", file.path(), e))
        };
        let seen = self.state.violations.len();
        let merged = merge_task(&self.repo, &runs, &task, &mut self.state, &mut save, None)?;
        self.warn_violations(seen);
        Ok(Some(match merged {
            TaskMerge::Merged { commit, paths } => {
                self.emit(FeatureEventKind::TaskMerged {
                    task: id.to_string(),
                    commit,
                    files: paths.len(),
                });
                None
            }
            TaskMerge::Conflict { paths } => {
                let message = format!(
                    "approved, but merging it into {} conflicts in {}",
                    self.state.branch,
                    paths.join(", ")
                );
                self.state.history.push(HistoryEntry::Conflict {
                    at: now(),
                    conflict: ConflictRecord {
                        task: id.to_string(),
                        paths,
                        with_tasks: Vec::new(),
                    },
                });
                self.save()?;
                Some(message)
            }
        }))
    }
}
