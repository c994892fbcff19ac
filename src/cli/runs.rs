//! The commands that look after runs once they exist: `status`, `resume`, `complete`,
//! `discard` and `logs`. They read the run directory; only `complete` and `discard` change
//! the repository, and only in the ways they name.
//!
//! Each checks the id through [`crate::cli::run_dir`] before anything is read, then calls one
//! operation of [`crate::engine::existing`] (or the feature's) and presents what it did.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::cli::command_error::CommandError;
use crate::cli::json::{
    self,
    results::{Completed, Discarded},
};
use crate::cli::logs;
use crate::cli::run_dir::checked_run;
use crate::cli::task::current_dir;
use crate::engine::existing::{self, locate_run};
use crate::engine::paths::{run_owner, validate_run_id, RunPaths};
use crate::engine::plan::repo_root;
use crate::engine::refusal::Refusal;
use crate::engine::state::{RunState, RunStatus};
use crate::engine::Outcome;
use crate::error::Error;
use crate::project::Layout;
use crate::ui;
use crate::ui::progress::Display;
use base::Keyword;

/// `interrupted` for a run recorded as running that no process holds any more. (A record
/// whose `task_id` is not an id names no lock file: its status is shown as recorded.)
fn shown_status(state: &RunState, runs_dir: &Path) -> &'static str {
    if state.status == RunStatus::Running
        && validate_run_id(&state.task_id).is_ok()
        && crate::engine::lock::holder(runs_dir, &state.task_id).is_none()
    {
        "interrupted"
    } else {
        state.status.as_str()
    }
}

/// `autobuild status [ID] [--all] [--json]`.
pub fn status(task_id: Option<String>, all: bool, json: bool) -> Result<u8, Error> {
    let root = match &task_id {
        Some(id) => checked_run(id)?,
        None => repo_root(&current_dir()?)?,
    };
    let runs_dir = Layout::new(&root).runs();
    let listing = || {
        super::status::read(&runs_dir, &|state| {
            shown_status(state, &runs_dir).to_string()
        })
    };
    if json {
        let mut listing = listing();
        if let Some(id) = &task_id {
            listing = of_run(listing, id)?;
        }
        let text = serde_json::to_string_pretty(&listing).map_err(CommandError::StatusJson)?;
        ui::line(&text);
        return unreadable_runs(&listing);
    }
    match task_id {
        Some(id) if crate::feature::run::is_feature_run(&root, &id) => {
            return Ok(ui::show(crate::feature::run::status(&root, &id)?))
        }
        Some(id) => {
            let run_ids: Vec<String> = if all {
                listing()
                    .tasks
                    .into_iter()
                    .filter(|t| t.task_id == run_owner(&id))
                    .flat_map(|t| t.runs.into_iter().map(|r| r.run_id))
                    .collect()
            } else {
                vec![id.clone()]
            };
            let mut shown = Vec::new();
            for run_id in run_ids.iter().chain(run_ids.is_empty().then_some(&id)) {
                let run = locate_run(&root, run_id)?;
                // Beside the run's state, the task's state on a GuardKit board, read now:
                // GuardKit may have moved the file since the run started.
                let board = crate::task::board_state(&root, &run.state.task_id);
                shown.push(status_detail(&run.state, &run.paths, &runs_dir, board));
            }
            ui::line(&shown.join("\n\n"));
        }
        None => {
            let listing = listing();
            ui::line(&super::status::render(&listing, all));
            return unreadable_runs(&listing);
        }
    }
    Ok(0)
}

/// What `status <ID> --json` prints: `listing` narrowed to the feature or task `id`.
fn of_run(mut listing: super::status::Listing, id: &str) -> Result<super::status::Listing, Error> {
    listing.features.retain(|f| f.feature_id == id);
    listing.tasks.retain(|t| t.task_id == run_owner(id));
    listing
        .unreadable
        .retain(|r| run_owner(&r.run_id) == run_owner(id));
    if listing.features.is_empty() && listing.tasks.is_empty() && listing.unreadable.is_empty() {
        return Err(Refusal::NoRun { id: id.to_string() }.into());
    }
    Ok(listing)
}

/// The `status <ID> --json` document of the run `id` in the repository at `root`.
pub fn status_document(root: &Path, id: &str) -> Result<String, Error> {
    let runs_dir = Layout::new(root).runs();
    let listing = super::status::read(&runs_dir, &|state| {
        shown_status(state, &runs_dir).to_string()
    });
    let listing = of_run(listing, id)?;
    Ok(serde_json::to_string_pretty(&listing).map_err(CommandError::StatusJson)?)
}

/// Exit 0, or the first unreadable run record of `listing` as the error (exit 2) once the
/// listing, which names them all, is printed.
fn unreadable_runs(listing: &super::status::Listing) -> Result<u8, Error> {
    match listing.unreadable.first() {
        None => Ok(0),
        Some(run) => Err(crate::engine::state::unreadable_record(
            &run.file,
            &std::io::Error::other(run.problem.clone()),
            &run.run_id,
        )),
    }
}

fn status_detail(
    state: &RunState,
    paths: &RunPaths,
    runs_dir: &Path,
    board: Option<(String, PathBuf)>,
) -> String {
    let mut out = format!("{}: {}\n", state.task_id, state.title);
    let _ = writeln!(
        out,
        "  status:    {}",
        crate::ui::colour::status(shown_status(state, runs_dir))
    );
    if let Some((board_state, file)) = board {
        let _ = writeln!(
            out,
            "  guardkit:  {board_state} ({}); this run: {}",
            file.display(),
            state.status.guardkit_state()
        );
    }
    if let Some(outcome) = &state.outcome {
        let _ = writeln!(out, "  outcome:   {outcome} (exit {})", outcome.exit_code());
    }
    let _ = writeln!(out, "  workflow:  {}", state.workflow);
    let _ = writeln!(
        out,
        "  branch:    {} (base {})",
        state.branch, state.base_branch
    );
    if let Some(pr) = &state.pr {
        let _ = writeln!(
            out,
            "  pr:        #{} {} ({} on {})",
            pr.number,
            pr.url,
            pr.branch,
            pr.head.get(..10).unwrap_or(&pr.head)
        );
    }
    let _ = writeln!(
        out,
        "  worktree:  {}{}",
        state.worktree.display(),
        if state.worktree.exists() {
            ""
        } else {
            " (removed)"
        }
    );
    let _ = writeln!(
        out,
        "  started:   {}, updated {}",
        state.started_at, state.updated_at
    );
    let _ = writeln!(
        out,
        "  cost:      {}${:.2} ({} tokens in, {} out)",
        if state.cost_estimated { "~" } else { "" },
        state.cost_usd,
        state.tokens_in,
        state.tokens_out
    );
    for turn in crate::engine::records::load_turns(paths, state) {
        let summary = crate::engine::records::turn_summary(&turn);
        let _ = writeln!(
            out,
            "  {}",
            crate::ui::progress::turn_line(turn.turn, state.max_turns, &summary)
        );
    }
    let _ = write!(out, "  records:   {}", paths.dir.display());
    out
}

/// `autobuild resume <ID>`.
pub fn resume(task_id: &str, json: bool, quiet: bool) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    if crate::feature::run::is_feature_run(&root, task_id) {
        let io = ui::feature::io(Display::choose(json, quiet));
        let code = crate::feature::run::resume(&root, task_id, None, io)?;
        super::notify::after_feature(&root, task_id, code);
        return Ok(code);
    }
    let never_ran = !Layout::new(&root)
        .run_dir(task_id)
        .join("state.json")
        .exists();
    if never_ran && crate::feature::locate::locate_feature(&root, task_id).is_ok() {
        return Err(Refusal::FeatureNotRun {
            id: task_id.to_string(),
        }
        .into());
    }
    let outcome = crate::engine::run::resume(
        &root,
        task_id,
        super::terminal_io(Display::choose(json, quiet))?,
    )?;
    let code = outcome.exit_code();
    super::notify::after_run(&root, task_id, code, outcome == Outcome::Cancelled);
    Ok(code)
}

/// `autobuild complete <ID>`: merge an approved run that was left for later.
pub fn complete(task_id: &str, allow_secret_in_diff: bool, json: bool) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    let (kind, done, suffix) = if crate::feature::run::is_feature_run(&root, task_id) {
        let done = crate::feature::run::complete(&root, task_id)?;
        ("feature", done, "; feature branch removed")
    } else {
        (
            "task",
            existing::complete(&root, task_id, allow_secret_in_diff)?,
            "",
        )
    };
    for warning in &done.warnings {
        ui::warn(warning);
    }
    if json {
        let id = task_id.to_string();
        json::print(&Completed {
            version: json::VERSION,
            id,
            kind,
            done,
        });
        return Ok(0);
    }
    ui::line(&format!(
        "merged {} into {} ({}){suffix}",
        done.branch,
        done.base_branch,
        crate::git::short_id(&done.commit)
    ));
    for note in &done.notes {
        ui::line(note);
    }
    Ok(0)
}

/// `complete <ID> --pr`: the approved run's branch is pushed and its pull request opened (or
/// updated); nothing is merged locally.
pub fn complete_as_pr(task_id: &str, json: bool) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    if crate::feature::run::is_feature_run(&root, task_id) {
        let pr = crate::feature::run::complete_as_pr(&root, task_id)?;
        print_pr(task_id, pr, json);
        return Ok(0);
    }
    let (pr, warnings) = existing::complete_as_pr(&root, task_id)?;
    for warning in &warnings {
        ui::warn(warning);
    }
    print_pr(task_id, pr, json);
    Ok(0)
}

/// `complete --pr`'s result: the JSON document, or the line.
fn print_pr(id: &str, pr: crate::forge::PullRequest, json: bool) {
    if json {
        json::print(&json::results::PrOpened {
            version: json::VERSION,
            id: id.to_string(),
            pr,
        });
    } else {
        ui::line(&crate::engine::exec::pull_request::describe(&pr));
    }
}

/// `autobuild discard <ID>`: remove a run's worktree and branch (its records are kept).
pub fn discard(task_id: &str, yes: bool, json: bool) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    let done = existing::discard(&root, task_id, yes, &ui::TerminalPrompter)?;
    for warning in &done.warnings {
        ui::warn(warning);
    }
    if json {
        let id = task_id.to_string();
        json::print(&Discarded {
            version: json::VERSION,
            id,
            done,
        });
    } else if done.discarded {
        ui::line(&format!(
            "discarded {} and its worktree; records kept in {}",
            done.branch,
            done.records.display()
        ));
    } else {
        ui::line(&format!(
            "nothing to discard: {} and its worktree are already gone",
            done.branch
        ));
    }
    Ok(0)
}

/// `autobuild logs <ID> [--turn N] [--step STEP] [--role ROLE] [--follow]`: the prompts,
/// transcripts, check logs and records of a run, in the order they were written.
pub fn logs(task_id: &str, options: LogsOptions) -> Result<u8, Error> {
    let root = checked_run(task_id)?;
    let run = locate_run(&root, task_id)?;
    let mut filter = logs::Filter {
        turn: options.turn,
        labels: Vec::new(),
    };
    if let Some(role) = &options.role {
        filter.labels.push(vec![regex::escape(role)]);
    }
    if let Some(step) = &options.step {
        filter.labels.push(step_labels(&run.paths, step)?);
    }
    if options.follow {
        let runs_dir = Layout::new(&root).runs();
        let owner = run_owner(task_id).to_string();
        let is_current = owner == task_id;
        logs::follow(&run.paths.dir, &filter, &|| {
            is_current && crate::engine::lock::holder(&runs_dir, &owner).is_some()
        })?;
        return Ok(0);
    }
    let shown: Vec<String> = logs::records(&run.paths.dir, &filter)?
        .iter()
        .map(|path| logs::show(path))
        .collect();
    if shown.is_empty() {
        let what = match options.turn {
            Some(n) => format!("turn {n} of {task_id}"),
            None => task_id.to_string(),
        };
        return Err(CommandError::NoRecords { what }.into());
    }
    ui::line(&shown.join("\n"));
    Ok(0)
}

/// What `logs` shows.
#[derive(Debug, Clone, Default)]
pub struct LogsOptions {
    pub turn: Option<u32>,
    pub step: Option<String>,
    pub role: Option<String>,
    pub follow: bool,
}

/// The labels of `step` in the run's resolved workflow; a usage error naming the steps when
/// it has no such step.
fn step_labels(paths: &RunPaths, step: &str) -> Result<Vec<String>, Error> {
    let file = paths.workflow_resolved();
    let text = crate::user_file::read_record_text(&file)
        .map_err(|e| Error::io("cannot read", &file, e))?;
    let workflow: toml::Value =
        toml::from_str(&text).map_err(|source| CommandError::UnreadableWorkflow {
            file: file.clone(),
            source,
        })?;
    logs::step_labels(&workflow, step).ok_or_else(|| {
        CommandError::NoStep {
            step: step.to_string(),
            steps: logs::step_ids(&workflow),
        }
        .into()
    })
}
