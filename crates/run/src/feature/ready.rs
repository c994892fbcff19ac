//! `autobuild feature <FEAT> --ready <TASK>`: whether a workflow's task job should run its task
//! — not on the feature branch yet, every dependency on it — read from the feature branch's
//! first-parent history like the landing ([`holds_task`]).

use std::path::Path;

use crate::feature::feature_error::FeatureError;
use crate::feature::land::holds_task;
use crate::feature::plan;
use crate::feature::preflight::feature_branch;
use base::error::Error;
use git::Repo;

/// What `--ready` answers about a task's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// Not on the feature branch yet, every dependency is: run it.
    Ready,
    /// On the feature branch already: nothing to do.
    Landed,
    /// These dependencies are not on the feature branch. In a workflow's wave they ran (or were
    /// left out) before this one and did not land, so the task is skipped.
    Waits(Vec<String>),
}

impl Readiness {
    /// The `key=value` lines a CI step reads (`$GITHUB_OUTPUT` style): `ready=true|false` and
    /// `waits_for=<ids separated by commas>` (empty unless it waits).
    pub fn lines(&self) -> String {
        let waits = match self {
            Readiness::Waits(ids) => ids.join(","),
            _ => String::new(),
        };
        format!(
            "ready={}\nwaits_for={waits}",
            matches!(self, Readiness::Ready)
        )
    }

    /// Why, for a person.
    pub fn reason(&self, task: &str, branch: &str) -> String {
        match self {
            Readiness::Ready => format!("{task} is ready to run"),
            Readiness::Landed => format!("{task} is on {branch} already"),
            Readiness::Waits(ids) => {
                format!(
                    "{task} waits for {} (not on the feature branch)",
                    ids.join(", ")
                )
            }
        }
    }
}

/// `autobuild feature <FEAT> --ready <TASK>`: whether the task's job should run it — not on the
/// feature branch yet, every dependency on it — and why.
pub fn ready(root: &Path, feature_arg: &str, task: &str) -> Result<(Readiness, String), Error> {
    let plan = plan::load(root, feature_arg)?;
    let Some(planned) = plan.task(task) else {
        return Err(FeatureError::NotATask {
            task: task.to_string(),
            feature: plan.id.clone(),
        }
        .into());
    };
    let repo = Repo::discover(root)?;
    let branch = feature_branch(&plan.id);
    let messages = repo.first_parent_messages(&branch)?;
    let readiness = readiness(&messages, task, &planned.dependencies);
    let why = readiness.reason(task, &branch);
    Ok((readiness, why))
}

/// [`Readiness`] of `task` with `dependencies`, from the feature branch's history.
pub fn readiness(messages: &[String], task: &str, dependencies: &[String]) -> Readiness {
    if holds_task(messages, task) {
        return Readiness::Landed;
    }
    let missing: Vec<String> = dependencies
        .iter()
        .filter(|d| !holds_task(messages, d))
        .cloned()
        .collect();
    if missing.is_empty() {
        Readiness::Ready
    } else {
        Readiness::Waits(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_ready_landed_or_waits_for_the_dependencies_not_on_the_branch() {
        let on = |ids: &[&str]| -> Vec<String> {
            ids.iter()
                .map(|id| format!("{id}: t\n\nApproved by autobuild on autobuild/{id}."))
                .collect()
        };
        let deps = |ids: &[&str]| -> Vec<String> { ids.iter().map(|s| s.to_string()).collect() };
        let cases = [
            (
                on(&[]),
                "A",
                deps(&[]),
                Readiness::Ready,
                "ready=true\nwaits_for=",
            ),
            (
                on(&["A"]),
                "A",
                deps(&[]),
                Readiness::Landed,
                "ready=false\nwaits_for=",
            ),
            (
                on(&["A"]),
                "C",
                deps(&["A"]),
                Readiness::Ready,
                "ready=true\nwaits_for=",
            ),
            (
                on(&["A"]),
                "D",
                deps(&["A", "B", "X"]),
                Readiness::Waits(deps(&["B", "X"])),
                "ready=false\nwaits_for=B,X",
            ),
        ];
        for (messages, task, dependencies, expected, lines) in cases {
            let found = readiness(&messages, task, &dependencies);
            assert_eq!(found, expected, "{task}");
            assert_eq!(found.lines(), lines, "{task}");
        }
    }
}
