//! The integration check of `autobuild feature <FEAT> --land` (the landing job of the emitted
//! CI workflows, one per wave): once the tasks this landing squashed are on the feature
//! branch, the tip is checked as a local feature run checks it after a wave. Landing keeps no
//! memory between jobs but the branch, so it checks whenever it landed something, and when
//! the feature is complete (a re-run after a fix checks again); a failure makes the landing
//! exit non-zero, so the job's later steps (`autobuild complete`) do not run, and
//! `feature.json` records it for `complete` and `status`.

use std::path::Path;

use super::check::{self, Target};
use super::IntegrationRecord;
use crate::feature::plan::FeaturePlan;
use crate::feature::preflight::task_settings;
use crate::feature::state::{FeatureSettings, FeatureState, TaskStatus};
use base::error::Error;
use git::Repo;
use model::project::{Config, Integration, Layout};

/// What the landing did.
pub struct Landed<'a> {
    pub repo: &'a Repo,
    pub layout: &'a Layout,
    pub config: &'a Config,
    pub plan: &'a FeaturePlan,
    pub run_dir: &'a Path,
    /// The tasks this landing put on the feature branch.
    pub landed: &'a [String],
}

/// Checks the tip when the landing calls for it and records the result in `state`; the
/// message to print, when a check ran.
pub fn check_after_landing(
    landed: &Landed<'_>,
    state: &mut FeatureState,
) -> Result<Option<String>, Error> {
    let complete = state.tasks.values().all(|t| t.status.is_landed());
    if landed.config.feature.integration == Integration::Off
        || (landed.landed.is_empty() && !complete)
    {
        return Ok(None);
    }
    let wave = landed
        .landed
        .iter()
        .filter_map(|id| state.tasks.get(id).map(|t| t.wave))
        .max()
        .unwrap_or(state.waves.len());
    let tasks: Vec<String> = if landed.landed.is_empty() {
        wave.checked_sub(1)
            .and_then(|w| state.waves.get(w))
            .cloned()
            .unwrap_or_default()
    } else {
        landed.landed.to_vec()
    };
    let merged: Vec<&model::task::Task> = landed
        .plan
        .tasks
        .iter()
        .filter(|t| state.status_of(t.id()) == TaskStatus::Merged)
        .map(|t| &t.task)
        .collect();
    let root = landed.layout.root();
    let settings = task_settings(&FeatureSettings::default().run, &state.branch);
    let checks = check::checks_for(root, landed.config, &merged, &settings)?;
    if checks.is_empty() && landed.config.worktree.setup.is_none() {
        return Ok(None);
    }
    let cancel = crate::engine::io::cancel_on_signals()?;
    let target = Target {
        repo: landed.repo,
        layout: landed.layout,
        config: landed.config,
        feature_id: &state.feature_id,
        branch: &state.branch,
        run_dir: landed.run_dir,
        wave,
        cancel: &cancel,
    };
    let (commit, results) = check::run(&target, &checks)?;
    let record = IntegrationRecord::new(wave, commit, tasks, &results);
    let message = if record.passed() {
        format!(
            "wave {wave} integrated: the checks pass on {}",
            state.branch
        )
    } else if landed.config.feature.integration == Integration::Integrate {
        format!(
            "{}; {}",
            record.failure_message(&state.branch),
            crate::feature::emit::limits::INTEGRATE_IN_CI
        )
    } else {
        record.failure_message(&state.branch)
    };
    state.integration.push(record);
    Ok(Some(message))
}
