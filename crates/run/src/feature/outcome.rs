//! `autobuild feature <FEAT> --outcome DIR [--abandon IDS]`: the end of a feature that ran as
//! CI jobs. DIR holds the `feature.json` the last landing job recorded; every task must be on
//! the feature branch, except the ones the person gave up on (`--abandon`) and the tasks that
//! depend on them. Anything else — blocked, failed, skipped, still pending (not run by this
//! dispatch) — is named and the exit code is 1, so the emitted workflow's last job is red
//! whenever the feature did not fully land.
//!
//! [`unfinished`] is the pure decision, table-tested below; [`outcome`] reads the files.

use std::collections::BTreeSet;
use std::path::Path;

use crate::feature::events::Shown;
use crate::feature::feature_error::FeatureError;
use crate::feature::plan;
use crate::feature::state::{FeatureState, TaskStatus};
use base::error::{exit, Error};
use base::Keyword;

/// A task that did not land and was not given up on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfinished {
    pub id: String,
    pub status: TaskStatus,
    pub message: Option<String>,
}

/// The tasks (in `order`) that are not merged, leaving out `abandoned` ones and every task
/// that depends on one of them, directly or not; `dependencies` maps a task to its own.
pub fn unfinished(
    order: &[String],
    dependencies: &dyn Fn(&str) -> Vec<String>,
    state: &FeatureState,
    abandoned: &[String],
) -> Vec<Unfinished> {
    let mut given_up: BTreeSet<&str> = abandoned.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    // Dependency order: a task's dependencies are decided before it.
    for id in order {
        if given_up.contains(id.as_str()) {
            continue;
        }
        if dependencies(id)
            .iter()
            .any(|d| given_up.contains(d.as_str()))
        {
            given_up.insert(id);
            continue;
        }
        let record = state.tasks.get(id);
        let status = record.map_or(TaskStatus::Pending, |r| r.status);
        if !status.is_landed() {
            out.push(Unfinished {
                id: id.clone(),
                status,
                message: record.and_then(|r| r.message.clone()),
            });
        }
    }
    out
}

/// One line: every unfinished task grouped by status, or that everything landed.
pub fn summary(feature: &str, unfinished: &[Unfinished], abandoned: &[String]) -> String {
    let given_up = if abandoned.is_empty() {
        String::new()
    } else {
        format!(" (abandoned: {})", abandoned.join(", "))
    };
    if unfinished.is_empty() {
        return format!("{feature}: every task landed{given_up}");
    }
    let mut groups: Vec<(TaskStatus, Vec<String>)> = Vec::new();
    for task in unfinished {
        let shown = match &task.message {
            Some(message) => format!("{} ({message})", task.id),
            None => task.id.clone(),
        };
        match groups.iter_mut().find(|(s, _)| *s == task.status) {
            Some((_, ids)) => ids.push(shown),
            None => groups.push((task.status, vec![shown])),
        }
    }
    let parts: Vec<String> = groups
        .into_iter()
        .map(|(status, ids)| format!("{}: {}", status.as_str(), ids.join(", ")))
        .collect();
    format!(
        "{feature}: {} task(s) did not land{given_up}; {}",
        unfinished.len(),
        parts.join("; ")
    )
}

/// Task ids from a list separated by spaces or commas.
pub fn ids(list: &str) -> Vec<String> {
    list.split([' ', ',', '\n', '\t'])
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// Reads DIR/feature.json: [`summary`], and 0 when every task landed (or was
/// abandoned), else 1.
pub fn outcome(root: &Path, feature_arg: &str, dir: &Path, abandon: &str) -> Result<Shown, Error> {
    let plan = plan::load(root, feature_arg)?;
    let file = dir.join("feature.json");
    let state = FeatureState::load(&file).map_err(|source| FeatureError::LandingRecord {
        file: file.clone(),
        source,
    })?;
    let abandoned = ids(abandon);
    if let Some(unknown) = abandoned.iter().find(|id| plan.task(id).is_none()) {
        return Err(FeatureError::NotATask {
            task: unknown.clone(),
            feature: plan.id.clone(),
        }
        .into());
    }
    let order: Vec<String> = plan.waves.iter().flatten().cloned().collect();
    let dependencies = |id: &str| {
        plan.task(id)
            .map(|t| t.dependencies.clone())
            .unwrap_or_default()
    };
    let left = unfinished(&order, &dependencies, &state, &abandoned);
    Ok(Shown {
        lines: vec![summary(&plan.id, &left, &abandoned)],
        exit_code: if left.is_empty() {
            exit::APPROVED
        } else {
            exit::RUNTIME
        },
        ..Shown::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::state::sample_state;

    /// T0 … T3 from `sample_state`; T2 depends on T0, T3 on T2.
    fn deps(id: &str) -> Vec<String> {
        match id {
            "T2" => vec!["T0".into()],
            "T3" => vec!["T2".into()],
            _ => Vec::new(),
        }
    }

    fn order() -> Vec<String> {
        (0..4).map(|i| format!("T{i}")).collect()
    }

    fn left(statuses: &[TaskStatus], abandoned: &[&str]) -> Vec<(String, TaskStatus)> {
        let state = sample_state(statuses);
        let abandoned: Vec<String> = abandoned.iter().map(|s| s.to_string()).collect();
        unfinished(&order(), &deps, &state, &abandoned)
            .into_iter()
            .map(|u| (u.id, u.status))
            .collect()
    }

    /// Statuses of T0…T3, the abandoned tasks, and what is left unfinished.
    type Case<'a> = (&'a [TaskStatus], &'a [&'a str], &'a [(&'a str, TaskStatus)]);

    #[test]
    fn only_merged_or_abandoned_tasks_count_as_done() {
        use TaskStatus::*;
        let cases: [Case; 5] = [
            (&[Merged, Merged, Merged, Merged], &[], &[]),
            (
                &[Blocked, Merged, Skipped, Skipped],
                &[],
                &[("T0", Blocked), ("T2", Skipped), ("T3", Skipped)],
            ),
            // Abandoning T0 gives up its dependants too, directly or not.
            (&[Blocked, Merged, Skipped, Skipped], &["T0"], &[]),
            // A task the dispatch did not run is pending, and that is not success.
            (&[Merged, Pending, Merged, Merged], &[], &[("T1", Pending)]),
            (
                &[Merged, Failed, Merged, Pending],
                &["T1"],
                &[("T3", Pending)],
            ),
        ];
        for (statuses, abandoned, expected) in cases {
            let expected: Vec<(String, TaskStatus)> =
                expected.iter().map(|(i, s)| (i.to_string(), *s)).collect();
            assert_eq!(
                left(statuses, abandoned),
                expected,
                "{statuses:?} {abandoned:?}"
            );
        }
    }

    #[test]
    fn the_summary_names_every_unfinished_task_by_status() {
        let unfinished = vec![
            Unfinished {
                id: "A".into(),
                status: TaskStatus::Blocked,
                message: None,
            },
            Unfinished {
                id: "D".into(),
                status: TaskStatus::Skipped,
                message: Some("blocked by A (blocked)".into()),
            },
            Unfinished {
                id: "C".into(),
                status: TaskStatus::Pending,
                message: None,
            },
        ];
        assert_eq!(
            summary("F", &unfinished, &["X".into()]),
            "F: 3 task(s) did not land (abandoned: X); blocked: A; skipped: D (blocked by A (blocked)); pending: C"
        );
        assert_eq!(summary("F", &[], &[]), "F: every task landed");
    }

    #[test]
    fn id_lists_take_spaces_and_commas() {
        assert_eq!(ids(" A,B  C\n"), ["A", "B", "C"]);
        assert!(ids("").is_empty());
    }
}
