//! Who owns a runner branch (`autobuild/<ID>`), from the run records under `.autobuild/runs/`:
//! the facts the ref guard ([`git::RefGuard`]) decides by when a branch other than the
//! step's own moved during an agent step. Inside the sandbox the records are read-only to
//! agents (only the run's `scratch/` is writable).
//!
//! - `runs/<ID>/feature.json` naming the branch: a feature; its branch must be at the tip the
//!   feature runner recorded before its last landing, or where landings of its tasks recorded
//!   in their own run records (`autobuild complete` of a task that waited for sign-off) took
//!   it from there ([`feature_tips`]). A merged or discarded feature may have deleted it.
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
use git::{Landing, RefOwner};

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
            return feature_owner(runs_dir, &feature);
        }
    }
    match RunState::load(&paths.state()) {
        Ok(run) if run.branch == branch => task_owner(&run),
        _ => RefOwner::Unowned,
    }
}

fn feature_owner(runs_dir: &Path, feature: &FeatureState) -> RefOwner {
    let done = matches!(
        feature.status,
        FeatureStatus::Merged | FeatureStatus::Discarded
    );
    let tips: Vec<Oid> = feature_tips(runs_dir, feature)
        .iter()
        .filter_map(|tip| Oid::from_str(tip).ok())
        .collect();
    match tips.is_empty() {
        false => RefOwner::Recorded {
            tips,
            may_delete: done,
        },
        // A run recorded before tips were: no record to hold the branch to.
        true if done => RefOwner::Vetted,
        true => RefOwner::Unowned,
    }
}

/// Where a runner may have put the feature branch: its recorded tip, then every commit a
/// landing of one of its tasks (recorded in the task's run record before the branch moved)
/// took the branch to from a commit already in the list. Empty when no tip is recorded.
pub fn feature_tips(runs_dir: &Path, feature: &FeatureState) -> Vec<String> {
    let Some(tip) = feature.tip.clone() else {
        return Vec::new();
    };
    let landings: Vec<Landing> = feature
        .tasks
        .keys()
        .filter_map(|id| RunState::load(&RunPaths::new(runs_dir, id).state()).ok())
        .filter_map(|run| run.landed)
        .filter(|landing| landing.branch == feature.branch)
        .collect();
    reachable(tip, &landings)
}

/// `tip` and every `to` reachable from it through landings' `from`.
fn reachable(tip: String, landings: &[Landing]) -> Vec<String> {
    let mut tips = vec![tip];
    let mut i = 0;
    while i < tips.len() {
        for landing in landings {
            if landing.from == tips[i] && !tips.contains(&landing.to) {
                tips.push(landing.to.clone());
            }
        }
        i += 1;
    }
    tips
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
            tips: vec![tip],
            may_delete: true,
        },
        None => RefOwner::Vetted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use git::MergeStrategy;

    fn landing(from: &str, to: &str) -> Landing {
        Landing {
            branch: "autobuild/F".into(),
            from: from.into(),
            to: to.into(),
            strategy: MergeStrategy::Squash,
        }
    }

    #[test]
    fn the_feature_branch_may_be_wherever_recorded_landings_took_it_from_its_tip() {
        let landings = [landing("b", "c"), landing("a", "b"), landing("x", "y")];
        assert_eq!(reachable("a".into(), &landings), ["a", "b", "c"]);
        assert_eq!(reachable("c".into(), &landings), ["c"]);
    }
}
