//! A feature run in words: `runs/<FEAT-ID>/report.md` (waves, each task's result with a link to
//! its own report, a conflict's files and tasks, what to do next), what its `report.html`
//! shows, and `autobuild status <FEAT-ID>`. All render from `feature.json` plus what each
//! task's run directory says.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::engine::paths::RunPaths;
use crate::engine::records::{load_turns, turn_summary};
use crate::engine::state::RunState;
use crate::feature::integration;
use crate::feature::state::{FeatureState, FeatureStatus, HistoryEntry, TaskRecord, TaskStatus};
use crate::report::feature::{FeaturePage, TaskCard};
use base::Keyword;

/// What a task's own run directory says, for reports and status.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskRunInfo {
    pub turn: u32,
    pub max_turns: u32,
    /// `None` when no agent reported a cost ([`base::cost`]).
    pub cost: Option<f64>,
    pub cost_estimated: bool,
    /// The last coach decision, empty when no coach ran.
    pub decision: String,
    /// The task's `report.md`, when it exists.
    pub report: Option<PathBuf>,
}

/// Reads the latest run of `task_id`, when there is one and it started at or after `since`
/// (RFC 3339): the run directory may still hold a run from an earlier feature run, whose turns
/// and verdicts say nothing about this one.
pub fn task_run_info(runs_dir: &Path, task_id: &str, since: &str) -> Option<TaskRunInfo> {
    let paths = RunPaths::new(runs_dir, task_id);
    let state = RunState::load(&paths.state()).ok()?;
    if !started_since(&state.started_at, since) {
        return None;
    }
    let decision = load_turns(&paths, &state)
        .iter()
        .rev()
        .map(|t| turn_summary(t).decision)
        .find(|d| !d.is_empty())
        .unwrap_or_default();
    Some(TaskRunInfo {
        turn: state.loops.values().map(|l| l.iteration).max().unwrap_or(0),
        max_turns: state.max_turns,
        cost: state.cost(),
        cost_estimated: state.cost_estimated,
        decision,
        report: Some(paths.report()).filter(|p| p.is_file()),
    })
}

/// The run info of every task this feature run started, by id.
pub fn task_infos(runs_dir: &Path, state: &FeatureState) -> BTreeMap<String, TaskRunInfo> {
    state
        .tasks
        .iter()
        .filter(|(_, record)| record.started_at.is_some())
        .filter_map(|(id, _)| {
            task_run_info(runs_dir, id, &state.started_at).map(|info| (id.clone(), info))
        })
        .collect()
}

/// Whether a run that started at `started` (RFC 3339) began at or after `since`. A timestamp
/// that does not parse belongs to no known run.
fn started_since(started: &str, since: &str) -> bool {
    match (
        humantime::parse_rfc3339_weak(started),
        humantime::parse_rfc3339_weak(since),
    ) {
        (Ok(started), Ok(since)) => started >= since,
        _ => false,
    }
}

/// One sentence on a finished feature run.
pub fn outcome_message(state: &FeatureState) -> String {
    let count = |status: TaskStatus| state.tasks.values().filter(|t| t.status == status).count();
    let total = state.tasks.len();
    // Tasks done before the feature ran are not on its branch: said apart.
    let done = count(TaskStatus::Done);
    let ran = total - done;
    let before = format!("{done} done before this feature ran (not run again)");
    match state.status {
        FeatureStatus::Merged if done > 0 => format!(
            "{ran} task(s) approved, {before}; the feature is merged into {}",
            state.base_branch
        ),
        FeatureStatus::Merged => format!(
            "all {total} task(s) approved; the feature is merged into {}",
            state.base_branch
        ),
        FeatureStatus::Approved if state.pr.is_some() => {
            let pr = state
                .pr
                .as_ref()
                .map_or(String::new(), |pr| format!("#{} {}", pr.number, pr.url));
            format!(
                "all {total} task(s) approved and on {}; its pull request is {pr}",
                state.branch
            )
        }
        FeatureStatus::Approved if done > 0 => format!(
            "{ran} task(s) approved and on {}, {before}; merge it with `autobuild complete {}`",
            state.branch, state.feature_id
        ),
        FeatureStatus::Approved => format!(
            "all {total} task(s) approved and on {}; merge it with `autobuild complete {}`",
            state.branch, state.feature_id
        ),
        FeatureStatus::Conflict => match &state.conflict {
            Some(conflict) => format!(
                "stopped: {} conflicts with the feature branch in {}",
                conflict.task,
                conflict.paths.join(", ")
            ),
            None => "stopped by a merge conflict".to_string(),
        },
        FeatureStatus::IntegrationFailed => match state.integration_failure() {
            Some(failed) => format!(
                "stopped: {}; nothing landed on {}",
                failed.failure_message(&state.branch),
                state.base_branch
            ),
            None => "stopped: integration failed".to_string(),
        },
        FeatureStatus::Cancelled => format!(
            "cancelled; `autobuild resume {}` continues it",
            state.feature_id
        ),
        FeatureStatus::Blocked | FeatureStatus::Running | FeatureStatus::Discarded => {
            let not_approved: Vec<String> = state
                .tasks
                .iter()
                .filter(|(_, t)| t.status.is_failure() && t.status != TaskStatus::Skipped)
                .map(|(id, t)| format!("{id} {}", t.status.as_str()))
                .collect();
            let mut sentence = format!(
                "blocked: {} of {total} task(s) merged",
                count(TaskStatus::Merged)
            );
            if !not_approved.is_empty() {
                sentence.push_str(&format!("; {}", not_approved.join(", ")));
            }
            let skipped = count(TaskStatus::Skipped);
            if skipped > 0 {
                sentence.push_str(&format!("; {skipped} skipped"));
            }
            let pending = count(TaskStatus::Pending);
            if pending > 0 {
                sentence.push_str(&format!("; {pending} not started"));
            }
            sentence
        }
    }
}

/// `report.md`.
/// `links`: the tasks' reports are beside the feature's run directory (a local run), so each
/// row links to its report; elsewhere (a CI landing reading the jobs' artifacts, a pull
/// request's text) each names the task run's `report.md` instead.
pub fn render_report(
    state: &FeatureState,
    infos: &BTreeMap<String, TaskRunInfo>,
    links: bool,
) -> Result<String, base::error::Error> {
    let mut integration = String::new();
    integration::view::render_markdown(&mut integration, state);
    let page = html_page(state, infos, &BTreeMap::new());
    crate::report::feature::render_markdown(&page, links, integration)
}

/// What the feature's `report.html` shows; `links` are the task reports to link, by task id,
/// relative to the feature's run directory.
pub fn html_page(
    state: &FeatureState,
    infos: &BTreeMap<String, TaskRunInfo>,
    links: &BTreeMap<String, String>,
) -> FeaturePage {
    let card = |id: &String| {
        let record = state.tasks.get(id).cloned().unwrap_or_default();
        let info = infos.get(id).cloned().unwrap_or_default();
        TaskCard {
            id: id.clone(),
            turns: if info.max_turns > 0 {
                format!("{}/{}", info.turn, info.max_turns)
            } else {
                String::new()
            },
            cost: base::cost::shown(info.cost, info.cost_estimated),
            decision: info.decision,
            message: record
                .message
                .filter(|_| record.status != TaskStatus::Merged),
            link: links.get(id).cloned(),
            has_report: info.report.is_some(),
            title: record.title,
            status: record.status.as_str().to_string(),
        }
    };
    let (timeline, timeline_ms) = crate::feature::timeline::spans(state);
    FeaturePage {
        timeline,
        timeline_ms,
        feature_id: state.feature_id.clone(),
        name: state.name.clone(),
        outcome: state
            .message
            .clone()
            .unwrap_or_else(|| outcome_message(state)),
        status: state.status.as_str().to_string(),
        file: state.file.display().to_string(),
        branch: state.branch.clone(),
        base: state.base_branch.clone(),
        merged_commit: state.merged_commit.clone(),
        // `~` when any task's cost is estimated.
        cost: base::cost::shown(
            base::cost::sum(infos.values().map(|i| i.cost)),
            infos.values().any(|i| i.cost_estimated),
        ),
        waves: state
            .waves
            .iter()
            .map(|wave| wave.iter().map(card).collect())
            .collect(),
        conflict: state.conflict.clone(),
        integration: integration::view::views(state),
        history: history_lines(state),
        next_steps: next_steps(state),
    }
}

/// The plan's separations and what happened on the way ([`FeatureState::history`]), one
/// sentence each, oldest first: conflicts and discarded runs stay in the report after they
/// were resolved.
pub fn history_lines(state: &FeatureState) -> Vec<String> {
    let planned = state
        .separated
        .iter()
        .map(|s| format!("planned: {}", s.sentence()));
    let happened = state.history.iter().map(|entry| match entry {
        HistoryEntry::Conflict { at, conflict } => {
            let with = if conflict.with_tasks.is_empty() {
                String::new()
            } else {
                format!(" with {}", conflict.with_tasks.join(", "))
            };
            format!(
                "{at}: {} conflicted{with} when merged into {}, in {}",
                conflict.task,
                state.branch,
                conflict.paths.join(", ")
            )
        }
        HistoryEntry::RunDiscarded {
            at,
            task,
            status,
            kept_as,
        } => {
            let kept = kept_as
                .as_ref()
                .map(|dir| format!("; its records are kept in runs/{dir}"))
                .unwrap_or_default();
            format!(
                "{at}: {task}'s run ({}) was discarded and the task ran again{kept}",
                status.as_str()
            )
        }
    });
    planned.chain(happened).collect()
}

fn next_steps(state: &FeatureState) -> Vec<String> {
    let id = &state.feature_id;
    match state.status {
        FeatureStatus::Merged | FeatureStatus::Discarded | FeatureStatus::Running => Vec::new(),
        FeatureStatus::Approved => vec![format!(
            "merge the feature into {} with `autobuild complete {id}`",
            state.base_branch
        )],
        FeatureStatus::Cancelled => vec![format!(
            "continue with `autobuild resume {id}`: merged tasks are kept, interrupted ones continue from their last completed step"
        )],
        FeatureStatus::IntegrationFailed => integration::view::next_steps(state),
        FeatureStatus::Conflict => {
            let task = state
                .conflict
                .as_ref()
                .map_or("the task", |c| c.task.as_str());
            vec![
                format!(
                    "either merge `autobuild/{task}` into `{}` by hand and commit, then `autobuild resume {id}`",
                    state.branch
                ),
                format!(
                    "or discard it with `autobuild discard {task} --yes`, then `autobuild resume {id}`: it runs again on top of the feature branch"
                ),
                "next time, list the files both tasks write under `files_to_modify:` in their task files: tasks of a wave that write the same files run one wave apart (docs/features.md)".to_string(),
            ]
        }
        FeatureStatus::Blocked => {
            let mut steps = Vec::new();
            for (task, record) in &state.tasks {
                if record.status.is_failure() && record.status != TaskStatus::Skipped {
                    steps.push(format!(
                        "read `.autobuild/runs/{task}/report.md` ({})",
                        record.status.as_str()
                    ));
                }
            }
            steps.push(format!(
                "fix the task files if needed, then `autobuild feature {id} --resume` (add `--max-turns N` for more turns): merged tasks are not run again"
            ));
            steps
        }
    }
}

/// `autobuild status <FEAT-ID>`.
pub fn render_status(
    state: &FeatureState,
    infos: &BTreeMap<String, TaskRunInfo>,
    run_dir: &Path,
) -> String {
    let mut out = format!("{}: {}\n", state.feature_id, state.name);
    let _ = writeln!(
        out,
        "  status:    {} (exit {})",
        state.status.as_str(),
        state.exit_code()
    );
    if let Some(message) = &state.message {
        let _ = writeln!(out, "  outcome:   {message}");
    }
    let _ = writeln!(out, "  file:      {}", state.file.display());
    let _ = writeln!(
        out,
        "  branch:    {} (base {})",
        state.branch, state.base_branch
    );
    let _ = writeln!(
        out,
        "  started:   {}, updated {}",
        state.started_at, state.updated_at
    );
    if let Some(last) = state.integration.last() {
        let _ = writeln!(out, "  integration: {}", integration::view::line(last));
    }
    let width = state.tasks.keys().map(String::len).max().unwrap_or(0);
    for (w, wave) in state.waves.iter().enumerate() {
        let _ = writeln!(out, "  wave {}:", w + 1);
        for id in wave {
            let record = state.tasks.get(id).cloned().unwrap_or_default();
            let info = infos.get(id).cloned().unwrap_or_default();
            let _ = writeln!(
                out,
                "    {id:<width$}  {}",
                task_status_line(&record, &info)
            );
        }
    }
    let _ = write!(out, "  records:   {}", run_dir.display());
    out
}

fn task_status_line(record: &TaskRecord, info: &TaskRunInfo) -> String {
    let mut parts = vec![format!("{:<9}", record.status.as_str())];
    if info.max_turns > 0 && record.status != TaskStatus::Skipped {
        parts.push(format!("turn {}/{}", info.turn, info.max_turns));
    }
    if !info.decision.is_empty() {
        parts.push(format!("coach {}", info.decision));
    }
    if info.cost.is_some() {
        parts.push(base::cost::shown(info.cost, info.cost_estimated));
    }
    if record.status == TaskStatus::Skipped {
        if let Some(message) = &record.message {
            parts.push(format!("({message})"));
        }
    }
    parts.join("  ").trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::state::{sample_state, ConflictRecord};

    #[test]
    fn tasks_done_before_the_feature_are_not_said_to_be_on_its_branch() {
        let mut state = sample_state(&[TaskStatus::Merged, TaskStatus::Done, TaskStatus::Done]);
        state.status = FeatureStatus::Approved;
        let message = outcome_message(&state);
        assert!(
            message.starts_with("1 task(s) approved and on ")
                && message.contains(", 2 done before this feature ran (not run again); merge it"),
            "{message}"
        );
        state.status = FeatureStatus::Merged;
        assert!(
            outcome_message(&state)
                .starts_with("1 task(s) approved, 2 done before this feature ran (not run again); the feature is merged"),
            "{}",
            outcome_message(&state)
        );
        let mut all_ran = sample_state(&[TaskStatus::Merged, TaskStatus::Merged]);
        all_ran.status = FeatureStatus::Approved;
        assert!(outcome_message(&all_ran).starts_with("all 2 task(s) approved and on "));
    }

    #[test]
    fn the_report_links_task_reports_and_explains_a_conflict() {
        let mut state = sample_state(&[TaskStatus::Merged, TaskStatus::Conflict]);
        state.status = FeatureStatus::Conflict;
        state.conflict = Some(ConflictRecord {
            task: "T1".into(),
            paths: vec!["lib/greet.sh".into()],
            with_tasks: vec!["T0".into()],
        });
        let infos = BTreeMap::from([(
            "T0".to_string(),
            TaskRunInfo {
                turn: 2,
                max_turns: 5,
                report: Some(PathBuf::from("runs/T0/report.md")),
                ..Default::default()
            },
        )]);

        let report = render_report(&state, &infos, true).unwrap();

        assert!(
            report.contains(
                "**Outcome:** stopped: T1 conflicts with the feature branch in lib/greet.sh"
            ),
            "{report}"
        );
        assert!(
            report.contains("| T0 |  | merged | 2/5 | – | [report](../T0/report.md) |"),
            "{report}"
        );
        assert!(
            report.contains("it and T0 (merged before it) changed"),
            "{report}"
        );
        assert!(
            report.contains("`autobuild discard T1 --yes`, then `autobuild resume F`"),
            "{report}"
        );
    }

    #[test]
    fn only_runs_started_during_the_feature_run_count() {
        let since = "2025-01-02T10:00:00Z";
        assert!(started_since("2025-01-02T10:00:00Z", since));
        assert!(started_since("2025-01-02T10:05:00Z", since));
        assert!(!started_since("2025-01-02T09:59:59Z", since));
        assert!(!started_since("", since));
    }

    #[test]
    fn status_lists_tasks_by_wave() {
        let mut state = sample_state(&[TaskStatus::Merged, TaskStatus::Skipped]);
        state.tasks.get_mut("T1").unwrap().message = Some("blocked by X (stalled)".into());
        let text = render_status(&state, &BTreeMap::new(), Path::new(".autobuild/runs/F"));
        assert!(
            text.contains("  wave 1:\n    T0  merged\n    T1  skipped    (blocked by X (stalled))"),
            "{text}"
        );
        assert!(text.ends_with("records:   .autobuild/runs/F"), "{text}");
    }
}
