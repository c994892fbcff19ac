//! `autobuild task <ID|PATH>`: run a workflow on one task, or print its plan (`--dry-run`).

use std::path::Path;

use clap::Args;

use crate::cli::command_error::CommandError;
use crate::cli::{dry_run, RunFlags};
use crate::engine::plan::{preflight, repo_root, Blocker, BranchPolicy};
use crate::engine::run::{start, StartOptions};
use crate::error::Error;
use crate::ui::progress::Display;

#[derive(Debug, Args)]
pub struct TaskArgs {
    /// Task id (front-matter `id`) or path to the task file.
    #[arg(value_name = "ID|PATH", add = clap_complete::engine::ArgValueCandidates::new(crate::cli::complete::task_ids))]
    pub task: String,
    /// Continue on the existing task branch instead of refusing.
    #[arg(long, conflicts_with = "fresh")]
    pub resume: bool,
    /// With --resume: the kept run was made in another checkout of this repository (a CI
    /// job's workspace); take it over when it names only this run's own branch and worktree.
    #[arg(long, requires = "resume")]
    pub moved_checkout: bool,
    /// Discard the existing task branch and worktree first (asks; --yes to skip).
    #[arg(long)]
    pub fresh: bool,
    /// Answer yes to confirmations.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Branch the task from BRANCH (and merge into it) instead of `[project] base_branch` or
    /// the current branch; a feature's jobs use it to run a task on the feature branch.
    #[arg(long, value_name = "BRANCH")]
    pub base: Option<String>,
    /// Merge even when the diff holds the value of a secret-named variable (refused otherwise).
    #[arg(long)]
    pub allow_secret_in_diff: bool,
    /// Once approved, push the branch to `[forge] remote` and open (or update) a pull request
    /// against the base instead of merging locally.
    #[arg(long, conflicts_with_all = ["auto_merge", "no_merge"])]
    pub pr: bool,
    #[command(flatten)]
    pub flags: RunFlags,
}

pub fn run(args: TaskArgs, quiet: bool) -> Result<u8, Error> {
    let cwd = current_dir()?;
    let root = repo_root(&cwd)?;
    let policy = if args.resume {
        BranchPolicy::Resume
    } else if args.fresh {
        BranchPolicy::Fresh
    } else {
        BranchPolicy::New
    };
    let mut settings = args.flags.settings();
    settings.allow_secret_in_diff = args.allow_secret_in_diff;
    settings.pr = args.pr;
    if let Some(base) = args.base {
        check_base(&root, &base)?;
        settings.base_branch = Some(base);
    }
    if args.flags.dry_run {
        let dry_policy = if policy == BranchPolicy::New {
            BranchPolicy::Resume
        } else {
            policy
        };
        let mut plan = preflight(&root, &args.task, settings, dry_policy)?;
        if policy == BranchPolicy::New && plan.branch_exists {
            plan.blockers.push(Blocker::BranchExists {
                branch: plan.branch.clone(),
            });
        }
        dry_run::print(&plan, args.flags.json);
        // A plan that could not start says so in its exit code too.
        return Ok(if plan.blockers.is_empty() {
            0
        } else {
            crate::error::exit::USAGE
        });
    }
    let options = StartOptions {
        policy,
        yes: args.yes,
        moved_checkout: args.moved_checkout,
        io: super::terminal_io(Display::choose(args.flags.json, quiet))?,
    };
    let merge_asked = settings.auto_merge;
    let pr_asked = settings.pr;
    let outcome = start(&root, &args.task, settings, options)?;
    let id = run_id_of(&root, &args.task);
    let code = match pr_asked {
        true => outcome.exit_code_when_merge_asked(!opened_a_pr(&root, &id)),
        false => outcome.exit_code_when_merge_asked(merge_asked),
    };
    super::notify::after_run(
        &root,
        &id,
        code,
        outcome == crate::engine::Outcome::Cancelled,
    );
    Ok(code)
}

/// The run id of `task`, an id or a task file's path.
fn run_id_of(root: &Path, task: &str) -> String {
    crate::task::locate(root, task)
        .map(|t| t.id)
        .unwrap_or_else(|_| task.to_string())
}

/// Whether the run `id` recorded a pull request: an approved
/// `--pr` run that could not open one exits 7, like a merge that could not land.
fn opened_a_pr(root: &Path, id: &str) -> bool {
    let layout = crate::project::Layout::new(root);
    let paths = crate::engine::paths::RunPaths::new(&layout.runs(), id);
    crate::engine::state::RunState::load(&paths.state()).is_ok_and(|s| s.pr.is_some())
}

/// `--base` names a branch of this repository; a typo is refused before anything is prepared.
fn check_base(root: &Path, base: &str) -> Result<(), Error> {
    if crate::git::Repo::discover(root)?.branch_exists(base) {
        return Ok(());
    }
    Err(CommandError::NoBaseBranch(base.to_string()).into())
}

pub fn current_dir() -> Result<std::path::PathBuf, Error> {
    std::env::current_dir()
        .map_err(|e| Error::io("cannot read the current directory", Path::new("."), e))
}
