//! `autobuild bench <SUITE>` (docs/bench.md): every task of a suite under each workflow, with
//! the same agents and budget, judged afterwards by the suite's own oracle that no run sees.
//!
//! A task is a directory `SUITE/<name>/` (a git repository, or plain files committed into a
//! fresh one) that is an autobuild project with one task, beside `SUITE/<name>.oracle/`, whose
//! files are laid over the tree a run approved and whose executable `run` (working directory:
//! that tree) decides by its exit code whether the approved work resolves the task. Each run is
//! this binary run again as a child (`autobuild -C <copy> task …`), in a copy of the task under
//! the output directory, so runs are isolated and several run at once. Each result is written
//! as it ends (`<out>/<workflow>/<task>.json`): a bench killed half-way goes on where it
//! stopped. The figures per workflow are a pure function of the results ([`summarize`]).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::Instant;

use clap::Args;
use serde::{Deserialize, Serialize};

use crate::engine::state::RunStatus;
use crate::error::Error;
use crate::tree_copy::copy_tree;
use crate::ui;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// The suite: a directory of tasks, each `<name>/` beside its `<name>.oracle/`.
    pub suite: PathBuf,
    /// A workflow to measure (repeatable; default: player-coach and solo).
    #[arg(long = "workflow", value_name = "NAME|PATH")]
    pub workflows: Vec<String>,
    /// Where the runs and results go (default: .autobuild-bench/<suite> in the current
    /// directory); results already there are kept, so a bench goes on where it stopped.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Runs at once (default: the machine's cores, at most 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// The figures as one JSON document (shape in docs/bench.md).
    #[arg(long)]
    pub json: bool,
}

/// `SUITE/suite.toml`: the budget every task runs with.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Budget {
    max_turns: Option<u32>,
    max_wall_time: Option<String>,
    max_cost_usd: Option<f64>,
    /// A directory of the suite whose files every task starts from, its own laid over them
    /// (tasks on one codebase need not each carry a copy of it).
    base: Option<PathBuf>,
}

/// One task under one workflow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    pub task: String,
    pub workflow: String,
    /// The run's status; `None` when the run recorded none (it did not start).
    pub status: Option<RunStatus>,
    pub exit_code: Option<i32>,
    pub approved: bool,
    /// Whether the oracle passes on the approved tree; `None` when nothing was approved.
    pub resolved: Option<bool>,
    pub turns: u32,
    pub tokens: u64,
    pub cost_usd: Option<f64>,
    pub wall_ms: u64,
}

/// The figures of one workflow.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub workflow: String,
    pub tasks: usize,
    pub approved: usize,
    pub resolved: usize,
    /// Approved, and the oracle fails.
    pub false_approvals: usize,
    pub median_turns: f64,
    pub tokens: u64,
    /// `None` when no run reported a cost.
    pub cost_usd: Option<f64>,
    pub wall_ms: u64,
}

/// The figures of each workflow over its results, in the order the workflows were given.
pub fn summarize(workflows: &[String], results: &[TaskResult]) -> Vec<Summary> {
    workflows
        .iter()
        .map(|workflow| {
            let mine: Vec<&TaskResult> =
                results.iter().filter(|r| &r.workflow == workflow).collect();
            let mut turns: Vec<u32> = mine.iter().map(|r| r.turns).collect();
            turns.sort_unstable();
            let median_turns = match turns.len() {
                0 => 0.0,
                n if n % 2 == 1 => f64::from(turns[n / 2]),
                n => (f64::from(turns[n / 2 - 1]) + f64::from(turns[n / 2])) / 2.0,
            };
            let costs: Vec<f64> = mine.iter().filter_map(|r| r.cost_usd).collect();
            Summary {
                workflow: workflow.clone(),
                tasks: mine.len(),
                approved: mine.iter().filter(|r| r.approved).count(),
                resolved: mine.iter().filter(|r| r.resolved == Some(true)).count(),
                false_approvals: mine.iter().filter(|r| r.resolved == Some(false)).count(),
                median_turns,
                tokens: mine.iter().map(|r| r.tokens).sum(),
                cost_usd: (!costs.is_empty()).then(|| costs.iter().sum()),
                wall_ms: mine.iter().map(|r| r.wall_ms).sum(),
            }
        })
        .collect()
}

#[derive(Serialize)]
struct Document<'a> {
    version: u32,
    suite: String,
    workflows: &'a [Summary],
    results: &'a [TaskResult],
}

pub fn run(args: BenchArgs) -> Result<u8, Error> {
    let suite = args
        .suite
        .canonicalize()
        .map_err(|e| Error::io("cannot read the suite", &args.suite, e))?;
    let tasks = suite_tasks(&suite)?;
    let budget = read_budget(&suite)?;
    let workflows = match args.workflows.is_empty() {
        true => vec!["player-coach".to_string(), "solo".to_string()],
        false => args.workflows.clone(),
    };
    let name = suite
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let out = match args.out {
        Some(out) => out,
        None => super::task::current_dir()?
            .join(".autobuild-bench")
            .join(&name),
    };
    let jobs: Vec<(String, String)> = workflows
        .iter()
        .flat_map(|w| tasks.iter().map(move |t| (w.clone(), t.clone())))
        .collect();
    let parallel = args.jobs.map(|n| n as usize).unwrap_or_else(|| {
        std::thread::available_parallelism()
            .map_or(1, |n| n.get())
            .min(4)
    });
    let queue = Mutex::new(jobs.into_iter());
    let results = Mutex::new(Vec::new());
    let failures = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..parallel {
            scope.spawn(|| loop {
                let next = queue.lock().ok().and_then(|mut q| q.next());
                let Some((workflow, task)) = next else {
                    break;
                };
                match bench_one(&suite, &out, &workflow, &task, &budget) {
                    Ok(result) => {
                        if let Ok(mut all) = results.lock() {
                            all.push(result);
                        }
                    }
                    Err(error) => {
                        if let Ok(mut all) = failures.lock() {
                            all.push(format!("{task} under {workflow}: {error}"));
                        }
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    let order = |r: &TaskResult| {
        (
            workflows.iter().position(|w| *w == r.workflow),
            tasks.iter().position(|t| *t == r.task),
        )
    };
    results.sort_by_key(order);
    let failures = failures.into_inner().unwrap_or_default();
    for failure in &failures {
        ui::warn(&format!("not measured: {failure}"));
    }
    let summaries = summarize(&workflows, &results);
    if args.json {
        super::json::print(&Document {
            version: super::json::VERSION,
            suite: name,
            workflows: &summaries,
            results: &results,
        });
    } else {
        ui::line(&render(&name, &summaries));
    }
    Ok(if failures.is_empty() {
        0
    } else {
        crate::error::exit::RUNTIME
    })
}

/// The table the terminal shows.
pub fn render(suite: &str, summaries: &[Summary]) -> String {
    let mut out = format!(
        "Bench {suite}\n  {:<14} {:>5} {:>8} {:>8} {:>15} {:>12} {:>8} {:>8} {:>8}\n",
        "workflow",
        "tasks",
        "approved",
        "resolved",
        "false approvals",
        "median turns",
        "tokens",
        "cost",
        "wall"
    );
    for s in summaries {
        out.push_str(&format!(
            "  {:<14} {:>5} {:>8} {:>8} {:>15} {:>12} {:>8} {:>8} {:>7.1}s\n",
            s.workflow,
            s.tasks,
            s.approved,
            s.resolved,
            s.false_approvals,
            s.median_turns,
            s.tokens,
            crate::cost::shown(s.cost_usd, false),
            s.wall_ms as f64 / 1000.0
        ));
    }
    out.trim_end().to_string()
}

/// The suite's tasks: every directory with a `<name>.oracle` beside it, by name.
fn suite_tasks(suite: &Path) -> Result<Vec<String>, Error> {
    let entries =
        std::fs::read_dir(suite).map_err(|e| Error::io("cannot read the suite", suite, e))?;
    let mut tasks: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| !name.ends_with(".oracle") && suite.join(format!("{name}.oracle")).is_dir())
        .collect();
    tasks.sort();
    if tasks.is_empty() {
        return Err(Error::usage(format!("{} holds no bench task", suite.display())).with_help(
            "a task is a directory `<name>/` (an autobuild project with one task) beside `<name>.oracle/` (the bench's own check, an executable `run`)",
        ));
    }
    Ok(tasks)
}

fn read_budget(suite: &Path) -> Result<Budget, Error> {
    let path = suite.join("suite.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| {
            Error::usage(format!("{}: {}", path.display(), e.message())).with_help(
                "suite.toml takes `max_turns`, `max_wall_time` (\"10m\") and `max_cost_usd`",
            )
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Budget::default()),
        Err(e) => Err(Error::io("cannot read", &path, e)),
    }
}

/// Runs `task` under `workflow` unless its result is there already; judges what it approved.
fn bench_one(
    suite: &Path,
    out: &Path,
    workflow: &str,
    task: &str,
    budget: &Budget,
) -> Result<TaskResult, Error> {
    let dir = out.join(workflow.replace(['/', '.'], "_"));
    let result_file = dir.join(format!("{task}.json"));
    if let Ok(text) = std::fs::read_to_string(&result_file) {
        if let Ok(result) = serde_json::from_str::<TaskResult>(&text) {
            return Ok(result);
        }
    }
    let work = dir.join(format!("{task}.work"));
    if work.exists() {
        // What a killed bench left of this run.
        std::fs::remove_dir_all(&work).map_err(|e| Error::io("cannot remove", &work, e))?;
    }
    let repo = work.join("repo");
    if let Some(base) = &budget.base {
        copy_tree(&suite.join(base), &repo, &|_| false)?;
    }
    copy_tree(&suite.join(task), &repo, &|_| false)?;
    if !repo.join(".git").exists() {
        crate::git::init_with_commit(&repo, "main", "bench task")?;
    }
    let scan = crate::task::list_tasks(&repo)?;
    let [only] = scan.tasks.as_slice() else {
        return Err(Error::usage(format!(
            "{task} must hold exactly one task, not {}",
            scan.tasks.len()
        )));
    };
    let mut args: Vec<String> = vec![
        "task".into(),
        only.id.clone(),
        "--workflow".into(),
        workflow.into(),
        "--no-merge".into(),
    ];
    if let Some(turns) = budget.max_turns {
        args.extend(["--max-turns".into(), turns.to_string()]);
    }
    if let Some(wall) = &budget.max_wall_time {
        args.extend(["--set".into(), format!("limits.max_wall_time={wall}")]);
    }
    if let Some(cost) = budget.max_cost_usd {
        args.extend(["--set".into(), format!("limits.max_cost_usd={cost}")]);
    }
    let log = std::fs::File::create(work.join("run.log"))
        .map_err(|e| Error::io("cannot write", work.join("run.log"), e))?;
    let err = log
        .try_clone()
        .map_err(|e| Error::io("cannot write", work.join("run.log"), e))?;
    let exe =
        std::env::current_exe().map_err(|e| Error::io("cannot find", Path::new("autobuild"), e))?;
    let started = Instant::now();
    let status = Command::new(exe)
        .arg("-C")
        .arg(&repo)
        .args(&args)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .status()
        .map_err(|e| Error::io("cannot run", &repo, e))?;
    let wall_ms = started.elapsed().as_millis() as u64;
    let state = crate::engine::state::RunState::load(
        &crate::project::Layout::new(&repo)
            .run_dir(&only.id)
            .join("state.json"),
    )
    .ok();
    let approved = state
        .as_ref()
        .is_some_and(|s| matches!(s.status, RunStatus::Approved | RunStatus::Merged));
    let resolved = match (&state, approved) {
        (Some(state), true) => Some(oracle_passes(suite, task, &work, &repo, state)?),
        _ => None,
    };
    let result = TaskResult {
        task: task.to_string(),
        workflow: workflow.to_string(),
        status: state.as_ref().map(|s| s.status),
        exit_code: status.code(),
        approved,
        resolved,
        turns: state.as_ref().map_or(0, |s| {
            s.loops.values().map(|l| l.iteration).max().unwrap_or(0)
        }),
        tokens: state.as_ref().map_or(0, |s| s.tokens_in + s.tokens_out),
        cost_usd: state.as_ref().and_then(|s| s.cost()),
        wall_ms,
    };
    let text = serde_json::to_string_pretty(&result).map_err(|e| Error::runtime(e.to_string()))?;
    crate::atomic_file::write_atomic(&result_file, text.as_bytes())
        .map_err(|e| Error::io("cannot write", &result_file, e))?;
    Ok(result)
}

/// Lays the oracle's files over the approved tree and runs its `run` there.
fn oracle_passes(
    suite: &Path,
    task: &str,
    work: &Path,
    repo: &Path,
    state: &crate::engine::state::RunState,
) -> Result<bool, Error> {
    let commit = state
        .last_checkpoint
        .clone()
        .ok_or_else(|| Error::runtime("the approved run records no commit"))?;
    let tree = work.join("approved");
    std::fs::create_dir_all(&tree).map_err(|e| Error::io("cannot create", &tree, e))?;
    let index = work.join("approved.index");
    let git_dir = repo.join(".git");
    for step in [
        vec!["read-tree", commit.as_str()],
        vec!["checkout-index", "-a", "-f"],
    ] {
        let status = Command::new("git")
            .arg("--git-dir")
            .arg(&git_dir)
            .arg("--work-tree")
            .arg(&tree)
            .args(&step)
            .env("GIT_INDEX_FILE", &index)
            .status()
            .map_err(|e| Error::io("cannot run git in", repo, e))?;
        if !status.success() {
            return Err(Error::runtime(format!(
                "cannot check out the approved commit {commit}"
            )));
        }
    }
    let oracle = suite.join(format!("{task}.oracle"));
    copy_tree(&oracle, &tree, &|_| false)?;
    let log = std::fs::File::create(work.join("oracle.log"))
        .map_err(|e| Error::io("cannot write", work.join("oracle.log"), e))?;
    let err = log
        .try_clone()
        .map_err(|e| Error::io("cannot write", work.join("oracle.log"), e))?;
    let status = Command::new(oracle.join("run"))
        .current_dir(&tree)
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(err)
        .status()
        .map_err(|e| Error::io("cannot run", oracle.join("run"), e))?;
    Ok(status.success())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn result(
        workflow: &str,
        turns: u32,
        approved: bool,
        resolved: Option<bool>,
        cost: Option<f64>,
    ) -> TaskResult {
        TaskResult {
            task: "t".into(),
            workflow: workflow.into(),
            status: Some(RunStatus::Approved),
            exit_code: Some(0),
            approved,
            resolved,
            turns,
            tokens: 10,
            cost_usd: cost,
            wall_ms: 1000,
        }
    }

    #[test]
    fn the_figures_count_resolved_and_false_approvals_per_workflow() {
        let results = [
            result("a", 1, true, Some(true), None),
            result("a", 2, true, Some(false), None),
            result("a", 3, false, None, None),
            result("a", 4, true, Some(true), None),
            result("b", 1, true, Some(true), Some(0.5)),
        ];
        let summaries = summarize(&["a".into(), "b".into(), "c".into()], &results);
        assert_eq!(
            (
                summaries[0].tasks,
                summaries[0].approved,
                summaries[0].resolved,
                summaries[0].false_approvals
            ),
            (4, 3, 2, 1)
        );
        assert_eq!(summaries[0].median_turns, 2.5);
        assert_eq!(summaries[0].cost_usd, None);
        assert_eq!(summaries[0].tokens, 40);
        assert_eq!(summaries[1].cost_usd, Some(0.5));
        assert_eq!(summaries[1].median_turns, 1.0);
        assert_eq!(summaries[2].tasks, 0);
    }
}
