//! `autobuild status`: the runs of a repository at a glance, every attempt of a task with
//! `--all`, and the same facts as JSON for scripts with `--json`.
//!
//! A task may have run several times: each new run keeps the earlier one as `<ID>@1`, `@2`, …
//! Showing only the current run hides what happened before — a task whose first run merged and
//! whose second was discarded is not "discarded". So each task's row counts its runs, sums their
//! turns, tokens and cost, and names an earlier run that merged; `--all` lists every attempt.
//! Reading the run directories is kept apart from the pure grouping and rendering below.

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use base::Keyword;
use serde::Serialize;

use crate::engine::paths::run_owner;
use crate::engine::state::{RunState, RunStatus};
use crate::feature::state::{FeatureState, TaskStatus};
use crate::ui::colour;

/// The version of the `--json` shape; raised when a field changes meaning or goes away.
pub const JSON_VERSION: u32 = 1;

/// One run of a task, current or earlier.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attempt {
    /// `TASK-001` for the current run, `TASK-001@1` for an earlier one.
    pub run_id: String,
    pub status: String,
    pub title: String,
    pub turns: u32,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    /// Some of the cost is an estimate (codex: token counts and a price table).
    pub cost_estimated: bool,
    /// Some agent reported a cost; without one `cost_usd` is unknown, shown as `–`.
    pub cost_reported: bool,
    pub started_at: String,
    pub updated_at: String,
    /// The pull (merge) request the run landed as (`--pr`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pr: Option<crate::forge::PullRequest>,
}

/// Sums over runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    pub runs: usize,
    pub turns: u64,
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub cost_usd: f64,
    pub cost_estimated: bool,
    /// Some run's agents reported a cost ([`crate::cost`]: unknown otherwise).
    pub cost_reported: bool,
}

impl Totals {
    fn add(&mut self, attempt: &Attempt) {
        self.runs += 1;
        self.turns += u64::from(attempt.turns);
        self.tokens_in += attempt.tokens_in;
        self.tokens_out += attempt.tokens_out;
        self.cost_usd += attempt.cost_usd;
        self.cost_estimated |= attempt.cost_estimated;
        self.cost_reported |= attempt.cost_reported;
    }

    fn merge(&mut self, other: &Totals) {
        self.runs += other.runs;
        self.turns += other.turns;
        self.tokens_in += other.tokens_in;
        self.tokens_out += other.tokens_out;
        self.cost_usd += other.cost_usd;
        self.cost_estimated |= other.cost_estimated;
        self.cost_reported |= other.cost_reported;
    }
}

/// Every run of one task, oldest first, the current one last.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskRuns {
    pub task_id: String,
    pub title: String,
    /// The latest run's status.
    pub status: String,
    /// An earlier run that merged while the latest did not (`TASK-001@1`).
    pub merged_run: Option<String>,
    pub runs: Vec<Attempt>,
    pub totals: Totals,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FeatureRow {
    pub feature_id: String,
    pub name: String,
    pub status: String,
    pub tasks_merged: usize,
    pub tasks_total: usize,
}

/// A run directory whose record exists but cannot be read (truncated, corrupt, a FIFO): shown
/// by name, never hidden, never counted as "no runs".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnreadableRun {
    pub run_id: String,
    pub file: PathBuf,
    pub problem: String,
}

/// What `status` shows, and `status --json` prints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Listing {
    pub version: u32,
    pub features: Vec<FeatureRow>,
    pub tasks: Vec<TaskRuns>,
    pub totals: Totals,
    /// Runs whose records cannot be read; the command then exits 2.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<UnreadableRun>,
}

/// Reads every run directory under `runs_dir`; `shown_status` says how a run's status is shown
/// (a run recorded as running that nobody holds is `interrupted`).
pub fn read(runs_dir: &Path, shown_status: &dyn Fn(&RunState) -> String) -> Listing {
    let dirs: Vec<_> = fs::read_dir(runs_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().to_string(), e.path()))
        .collect();
    let mut unreadable = Vec::new();
    let mut note = |name: &str, file: PathBuf, error: std::io::Error| {
        if error.kind() != std::io::ErrorKind::NotFound {
            unreadable.push(UnreadableRun {
                run_id: name.to_string(),
                problem: match crate::user_file::NotRegular::of(&error) {
                    Some(special) => special.to_string(),
                    None => error.to_string(),
                },
                file,
            });
        }
    };
    let mut attempts = Vec::new();
    let mut feature_states = Vec::new();
    for (name, dir) in dirs.iter().filter(|(name, _)| !name.starts_with('.')) {
        let file = dir.join("state.json");
        match RunState::load(&file) {
            Ok(state) => attempts.push(attempt(name, &state, shown_status(&state))),
            Err(error) => note(name, file, error),
        }
        if name.contains('@') {
            continue;
        }
        let file = dir.join("feature.json");
        match FeatureState::load(&file) {
            Ok(feature) => feature_states.push(feature),
            Err(error) => note(name, file, error),
        }
    }
    let features = feature_states
        .into_iter()
        .map(|f| FeatureRow {
            tasks_merged: f
                .tasks
                .keys()
                .filter(|t| f.status_of(t) == TaskStatus::Merged)
                .count(),
            tasks_total: f.tasks.len(),
            feature_id: f.feature_id,
            name: f.name,
            status: f.status.as_str().to_string(),
        })
        .collect();
    let mut listing = group(attempts, features);
    unreadable.sort_by(|a, b| a.file.cmp(&b.file));
    listing.unreadable = unreadable;
    listing
}

fn attempt(run_id: &str, state: &RunState, status: String) -> Attempt {
    Attempt {
        run_id: run_id.to_string(),
        status,
        title: state.title.clone(),
        turns: state.loops.values().map(|l| l.iteration).max().unwrap_or(0),
        tokens_in: state.tokens_in,
        tokens_out: state.tokens_out,
        cost_usd: state.cost_usd,
        cost_estimated: state.cost_estimated,
        cost_reported: state.cost().is_some(),
        started_at: state.started_at.clone(),
        updated_at: state.updated_at.clone(),
        pr: state.pr.clone(),
    }
}

/// Where a run sorts among its task's runs: `@1`, `@2`, …, `@archived`, then the current one.
fn attempt_order(run_id: &str) -> (u8, u64) {
    match run_id.split_once('@') {
        None => (2, 0),
        Some((_, n)) => n.parse().map_or((1, 0), |n| (0, n)),
    }
}

/// Groups runs by task (tasks by id, runs oldest first) and sums them.
pub fn group(mut attempts: Vec<Attempt>, mut features: Vec<FeatureRow>) -> Listing {
    attempts.sort_by(|a, b| {
        run_owner(&a.run_id)
            .cmp(run_owner(&b.run_id))
            .then(attempt_order(&a.run_id).cmp(&attempt_order(&b.run_id)))
    });
    features.sort_by(|a, b| a.feature_id.cmp(&b.feature_id));
    let mut tasks: Vec<TaskRuns> = Vec::new();
    let mut totals = Totals::default();
    for attempt in attempts {
        let owner = run_owner(&attempt.run_id).to_string();
        if tasks.last().is_none_or(|t| t.task_id != owner) {
            tasks.push(TaskRuns {
                task_id: owner,
                title: String::new(),
                status: String::new(),
                merged_run: None,
                runs: Vec::new(),
                totals: Totals::default(),
            });
        }
        if let Some(task) = tasks.last_mut() {
            task.totals.add(&attempt);
            task.runs.push(attempt);
        }
    }
    for task in &mut tasks {
        if let Some(latest) = task.runs.last() {
            task.title = latest.title.clone();
            task.status = latest.status.clone();
        }
        let merged = RunStatus::Merged.as_str();
        if task.status != merged {
            task.merged_run = task
                .runs
                .iter()
                .rev()
                .find(|r| r.status == merged)
                .map(|r| r.run_id.clone());
        }
        totals.merge(&task.totals);
    }
    Listing {
        version: JSON_VERSION,
        features,
        tasks,
        totals,
        unreadable: Vec::new(),
    }
}

/// The table: features, then one row per task (its runs summed), each earlier run on its own
/// row under its task with `all`, and the totals.
pub fn render(listing: &Listing, all: bool) -> String {
    let table = render_runs(listing, all);
    if listing.unreadable.is_empty() {
        return table
            .unwrap_or_else(|| "no runs yet (start one with `autobuild task <ID>`)".into());
    }
    let mut out = table.map(|t| format!("{t}\n\n")).unwrap_or_default();
    out.push_str("UNREADABLE (autobuild does not act on these runs)");
    for run in &listing.unreadable {
        let _ = write!(
            out,
            "\n{:<20} {}: {}",
            run.run_id,
            run.file.display(),
            run.problem
        );
    }
    out
}

/// The features and tasks table, `None` when there are neither.
fn render_runs(listing: &Listing, all: bool) -> Option<String> {
    if listing.tasks.is_empty() && listing.features.is_empty() {
        return None;
    }
    let mut out = String::new();
    if !listing.features.is_empty() {
        out = format!(
            "{:<20} {:<10} {:>7}  {}",
            "FEATURE", "STATUS", "MERGED", "NAME"
        );
        for f in &listing.features {
            let _ = write!(
                out,
                "\n{:<20} {:<10} {:>7}  {}",
                f.feature_id,
                f.status,
                format!("{}/{}", f.tasks_merged, f.tasks_total),
                f.name
            );
        }
        if listing.tasks.is_empty() {
            return Some(out);
        }
        out.push_str("\n\n");
    }
    let _ = write!(
        out,
        "{:<20} {:<11} {:>4} {:>5} {:>9} {:>8}  TITLE",
        "TASK", "STATUS", "RUNS", "TURNS", "TOKENS", "COST"
    );
    for task in &listing.tasks {
        let note = task
            .merged_run
            .as_ref()
            .map(|id| format!(" ({id} merged)"))
            .unwrap_or_default();
        let _ = write!(
            out,
            "\n{:<20} {} {:>4} {}  {}{note}",
            task.task_id,
            colour::status_padded(&task.status, 11),
            task.totals.runs,
            figures(&task.totals),
            task.title
        );
        if all && task.runs.len() > 1 {
            for run in &task.runs {
                let mut one = Totals::default();
                one.add(run);
                let _ = write!(
                    out,
                    "\n  {:<18} {} {:>4} {}  {}",
                    run.run_id,
                    colour::status_padded(&run.status, 11),
                    "",
                    figures(&one),
                    run.started_at
                );
            }
        }
    }
    let _ = write!(
        out,
        "\n{:<20} {:<11} {:>4} {}",
        "total",
        "",
        listing.totals.runs,
        figures(&listing.totals)
    );
    Some(out)
}

/// `TURNS TOKENS COST`, right-aligned.
fn figures(totals: &Totals) -> String {
    format!(
        "{:>5} {:>9} {:>8}",
        totals.turns,
        tokens(totals.tokens_in + totals.tokens_out),
        crate::cost::shown(
            totals.cost_reported.then_some(totals.cost_usd),
            totals.cost_estimated
        )
    )
}

/// `950`, `12.3k`, `4.5M`: wide enough to compare at a glance.
fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(id: &str, status: &str, turns: u32, tokens: u64, cost: Option<f64>) -> Attempt {
        Attempt {
            run_id: id.into(),
            status: status.into(),
            title: format!("title of {}", run_owner(id)),
            turns,
            tokens_in: tokens,
            tokens_out: tokens / 2,
            cost_usd: cost.unwrap_or(0.0),
            cost_estimated: false,
            cost_reported: cost.is_some(),
            started_at: format!("start of {id}"),
            updated_at: String::new(),
            pr: None,
        }
    }

    fn listing() -> Listing {
        group(
            vec![
                run("TASK-2", "blocked", 5, 2000, Some(1.0)),
                run("TASK-1", "discarded", 1, 100, Some(0.25)),
                run("TASK-1@2", "stalled", 3, 300, Some(0.5)),
                run("TASK-1@1", "merged", 2, 200, Some(0.25)),
            ],
            Vec::new(),
        )
    }

    #[test]
    fn runs_group_by_task_oldest_first_and_add_up() {
        let listing = listing();
        let ids: Vec<&str> = listing.tasks[0]
            .runs
            .iter()
            .map(|r| r.run_id.as_str())
            .collect();
        assert_eq!(ids, ["TASK-1@1", "TASK-1@2", "TASK-1"]);
        let task = &listing.tasks[0];
        assert_eq!(task.status, "discarded");
        assert_eq!(task.merged_run.as_deref(), Some("TASK-1@1"));
        assert_eq!(
            task.totals,
            Totals {
                runs: 3,
                turns: 6,
                tokens_in: 600,
                tokens_out: 300,
                cost_usd: 1.0,
                cost_estimated: false,
                cost_reported: true
            }
        );
        assert_eq!(listing.tasks[1].merged_run, None);
        assert_eq!(listing.totals.runs, 4);
        assert_eq!(listing.totals.turns, 11);
        assert_eq!(listing.totals.cost_usd, 2.0);
    }

    #[test]
    fn the_table_names_an_earlier_merge_and_lists_attempts_with_all() {
        let listing = listing();
        assert_eq!(
            render(&listing, false),
            "TASK                 STATUS      RUNS TURNS    TOKENS     COST  TITLE\n\
             TASK-1               discarded      3     6       900    $1.00  title of TASK-1 (TASK-1@1 merged)\n\
             TASK-2               blocked        1     5      3.0k    $1.00  title of TASK-2\n\
             total                               4    11      3.9k    $2.00"
        );
        let all = render(&listing, true);
        assert!(
            all.contains("\n  TASK-1@1           merged               2       300    $0.25  start of TASK-1@1\n"),
            "{all}"
        );
        assert!(!all.contains("\n  TASK-2 "), "{all}");
    }

    #[test]
    fn an_archived_run_sorts_after_the_numbered_ones() {
        let listing = group(
            vec![
                run("T-1@archived", "failed", 1, 0, None),
                run("T-1@10", "failed", 1, 0, None),
                run("T-1@9", "failed", 1, 0, None),
            ],
            Vec::new(),
        );
        let ids: Vec<&str> = listing.tasks[0]
            .runs
            .iter()
            .map(|r| r.run_id.as_str())
            .collect();
        assert_eq!(ids, ["T-1@9", "T-1@10", "T-1@archived"]);
    }

    #[test]
    fn the_json_shape_is_stable() {
        let value = serde_json::to_value(listing()).unwrap();
        assert_eq!(value["version"], 1);
        assert_eq!(value["tasks"][0]["task_id"], "TASK-1");
        assert_eq!(value["tasks"][0]["merged_run"], "TASK-1@1");
        assert_eq!(value["tasks"][0]["runs"][0]["run_id"], "TASK-1@1");
        assert_eq!(value["tasks"][0]["totals"]["tokens_in"], 600);
        assert_eq!(value["totals"]["runs"], 4);
        let text = serde_json::to_string(&listing().tasks[0].runs[0]).unwrap();
        assert_eq!(
            text,
            r#"{"run_id":"TASK-1@1","status":"merged","title":"title of TASK-1","turns":2,"tokens_in":200,"tokens_out":100,"cost_usd":0.25,"cost_estimated":false,"cost_reported":true,"started_at":"start of TASK-1@1","updated_at":""}"#
        );
    }

    #[test]
    fn an_unknown_cost_is_a_dash_and_a_reported_zero_is_dollars_with_the_one_cost_rule() {
        let listing = group(
            vec![
                run("T-1", "approved", 1, 0, None),
                run("T-2", "approved", 1, 0, Some(0.0)),
                run("T-3@1", "failed", 1, 0, None),
                run("T-3", "approved", 1, 0, Some(0.5)),
            ],
            Vec::new(),
        );
        let all = render(&listing, true);
        let cost_of = |row: &str| {
            let line = all
                .lines()
                .find(|l| l.trim_start().starts_with(row))
                .unwrap_or_else(|| panic!("{row} in {all}"));
            line.split_whitespace()
                .nth(if row.starts_with("total") { 4 } else { 5 })
                .unwrap()
                .to_string()
        };
        assert_eq!(cost_of("T-1 "), crate::cost::shown(None, false), "{all}");
        assert_eq!(cost_of("T-2 "), "$0.00", "{all}");
        // A task is unknown only when none of its runs reported a cost.
        assert_eq!(cost_of("T-3 "), "$0.50", "{all}");
        assert!(
            all.contains("\n  T-3@1 ")
                && all
                    .lines()
                    .any(|l| l.starts_with("  T-3@1") && l.contains(" –  ")),
            "{all}"
        );
        assert_eq!(cost_of("total"), "$0.50", "{all}");
        let unknown = group(vec![run("T-1", "approved", 1, 0, None)], Vec::new());
        assert!(render(&unknown, false)
            .lines()
            .last()
            .unwrap()
            .ends_with(" –"));
    }

    #[test]
    fn no_runs_says_how_to_start_one() {
        assert_eq!(
            render(&group(Vec::new(), Vec::new()), false),
            "no runs yet (start one with `autobuild task <ID>`)"
        );
    }
}
