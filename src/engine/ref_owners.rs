//! Who owns a runner branch (`autobuild/<ID>`), from the run records under `.autobuild/runs/`:
//! the facts the ref guard ([`crate::git::RefGuard`]) decides by when a branch other than the
//! step's own moved during an agent step. Inside the sandbox the records are read-only to
//! agents (only the run's `scratch/` is writable).
//!
//! - `runs/<ID>/feature.json` naming the branch: a feature; its branch must be at the tip the
//!   feature runner recorded before its last landing (a merged or discarded feature may have
//!   deleted it).
//! - `runs/<ID>/state.json` naming the branch: a task. A task in progress vets its own branch
//!   (checkpoint, review, read-only audit); a finished one's branch must stay at its last
//!   checkpoint — for an approved task, the approved commit — and may be deleted (a landing
//!   does that).
//! - Anything else is no run's: an agent made it.

use std::path::Path;

use git2::Oid;

use crate::engine::paths::{validate_run_id, RunPaths};
use crate::engine::state::{RunState, RunStatus};
use crate::feature::state::{state_file, FeatureState, FeatureStatus};
use crate::git::RefOwner;

/// The owner of `branch` (`autobuild/<ID>`, without `refs/heads/`).
pub fn owner_of(runs_dir: &Path, branch: &str) -> RefOwner {
    let Some(id) = branch.strip_prefix("autobuild/") else {
        return RefOwner::Unowned;
    };
    if validate_run_id(id).is_err() {
        return RefOwner::Unowned;
    }
    let paths = RunPaths::new(runs_dir, id);
    if let Ok(feature) = FeatureState::load(&state_file(&paths)) {
        if feature.branch == branch {
            return feature_owner(&feature);
        }
    }
    match RunState::load(&paths.state()) {
        Ok(run) if run.branch == branch => task_owner(&run),
        _ => RefOwner::Unowned,
    }
}

fn feature_owner(feature: &FeatureState) -> RefOwner {
    let done = matches!(
        feature.status,
        FeatureStatus::Merged | FeatureStatus::Discarded
    );
    match feature.tip.as_deref().and_then(|tip| Oid::from_str(tip).ok()) {
        Some(tip) => RefOwner::Recorded {
            tip,
            may_delete: done,
        },
        // A run recorded before tips were: no record to hold the branch to.
        None if done => RefOwner::Vetted,
        None => RefOwner::Unowned,
    }
}

fn task_owner(run: &RunState) -> RefOwner {
    if matches!(
        run.status,
        RunStatus::Running | RunStatus::Merged | RunStatus::Discarded
    ) {
        return RefOwner::Vetted;
    }
    match run
        .last_checkpoint
        .as_deref()
        .and_then(|tip| Oid::from_str(tip).ok())
    {
        Some(tip) => RefOwner::Recorded {
            tip,
            may_delete: true,
        },
        None => RefOwner::Vetted,
    }
}
