//! How a feature run ends: the finished feature branch landing on the base, the feature's
//! `report.md`, and its exit code.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::paths::RunPaths;
use crate::feature::merge::{hold_feature_branch, land_feature, FeatureLanding};
use crate::feature::report::{html_page, render_report, task_infos};
use crate::feature::state::{FeatureState, FeatureStatus};
use base::error::{exit, Error};
use git::Repo;
use model::workflow::model::MergeStrategy;

/// Merges a finished feature into its base; `titles` name the tasks in the commit message.
/// The feature branch is first held at the tip the runner recorded ([`hold_feature_branch`]):
/// only what its tasks' gates approved lands.
pub fn land(
    repo: &Repo,
    runs_dir: &Path,
    state: &mut FeatureState,
    titles: &BTreeMap<String, String>,
    strategy: MergeStrategy,
) -> Result<String, Error> {
    hold_feature_branch(repo, runs_dir, state)?;
    let tasks: Vec<(&str, &str)> = state
        .waves
        .iter()
        .flatten()
        .map(|id| (id.as_str(), titles.get(id).map_or("", String::as_str)))
        .collect();
    land_feature(
        repo,
        &FeatureLanding {
            feature_id: &state.feature_id,
            name: &state.name,
            branch: &state.branch,
            base: &state.base_branch,
            strategy,
            tasks,
        },
    )
}

/// `--pr`: pushes the finished feature branch's tip — held first at the tip the runner
/// recorded, so only what its tasks' gates approved is pushed — and opens (or updates) its pull
/// request against the base, the feature's report as its text; records it in `state`.
pub fn open_pr(
    repo: &Repo,
    runs_dir: &Path,
    state: &mut FeatureState,
    config: &model::project::Config,
) -> Result<crate::forge::PullRequest, Error> {
    hold_feature_branch(repo, runs_dir, state)?;
    let commit = repo.resolve_branch(&state.branch)?;
    let infos = task_infos(runs_dir, state);
    let body = process::Redactor::new(&[]).apply(&render_report(state, &infos, false)?);
    let title = format!("{}: {}", state.feature_id, state.name);
    let pushed_before: Vec<String> = state.pr.iter().map(|pr| pr.head.clone()).collect();
    let pr = crate::forge::open_or_update(&crate::forge::PrRequest {
        repo,
        config,
        branch: &state.branch,
        base: &state.base_branch,
        commit: &commit,
        title: &title,
        body: &body,
        pushed_before: &pushed_before,
    })?;
    state.pr = Some(pr.clone());
    Ok(pr)
}

/// Writes `report.md` and `report.html` next to `feature.json`; returns the first's path.
pub fn write_report(
    state: &FeatureState,
    runs_dir: &Path,
    paths: &RunPaths,
) -> Result<PathBuf, Error> {
    let infos = task_infos(runs_dir, state);
    // The tasks' records are beside the feature's own (else: a landing's artifacts).
    let local = paths.dir.parent() == Some(runs_dir);
    let text = process::Redactor::new(&[]).apply(&render_report(state, &infos, local)?);
    let path = paths.report();
    crate::engine::state::write_atomic(&path, text.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    let links = match local {
        true => task_report_links(runs_dir, &infos),
        false => BTreeMap::new(),
    };
    let page = html_page(state, &infos, &links);
    crate::report::write(paths, &crate::report::feature::render_feature(&page)?)?;
    Ok(path)
}

/// Each task's report, relative to the feature's run directory: its `report.html`, or its
/// `report.md` when a run written before HTML reports existed has only that.
fn task_report_links(
    runs_dir: &Path,
    infos: &BTreeMap<String, crate::feature::report::TaskRunInfo>,
) -> BTreeMap<String, String> {
    infos
        .iter()
        .filter(|(_, info)| info.report.is_some())
        .map(|(id, _)| {
            let html = crate::report::html_path(&RunPaths::new(runs_dir, id));
            let file = if html.is_file() {
                crate::report::REPORT_HTML
            } else {
                "report.md"
            };
            (id.clone(), format!("../{id}/{file}"))
        })
        .collect()
}

/// A feature's exit code (docs/features.md): 0 when every task is approved, 5 when
/// cancelled, else the most serious task result (3 turn limit, 4 stalled, 1 failed or
/// conflict).
pub fn feature_exit_code(state: &FeatureState) -> u8 {
    match state.status {
        FeatureStatus::Approved | FeatureStatus::Merged => exit::APPROVED,
        FeatureStatus::Cancelled => exit::CANCELLED,
        _ => match state.exit_code() {
            exit::APPROVED => exit::RUNTIME,
            code => code,
        },
    }
}
