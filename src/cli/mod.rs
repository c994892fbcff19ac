//! The command line: argument definitions and dispatch, one file per subcommand.
//!
//! [`main`] is the only place that turns a result into an exit code and prints errors.

pub mod approval;
pub mod demo;
pub mod doctor;
pub mod dry_run;
pub mod feature;
pub mod init;
pub mod profiles;
pub mod prompts;
pub mod report;
pub mod runs;
pub mod schema;
pub mod task;
pub mod workflows;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::engine::io::RunIo;
use crate::engine::state::{Answer, RunSettings};
use crate::error::{exit, Error};
use crate::ui;

#[derive(Debug, Parser)]
#[command(
    name = "autobuild",
    version,
    about = "Dialectical autocoding: a Player implements, a read-only Coach reviews, the runner verifies.",
    propagate_version = true
)]
pub struct Cli {
    /// Run as if started in DIR.
    #[arg(short = 'C', global = true, value_name = "DIR", env = "AUTOBUILD_DIR")]
    pub directory: Option<PathBuf>,
    /// More detail (debug logs on stderr).
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Only errors and the final result.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scaffold .autobuild/ (detected checks, an example task, .gitignore).
    Init,
    /// Run a workflow on one task (or print its plan with --dry-run).
    Task(task::TaskArgs),
    /// Run a feature's tasks in dependency waves (or print the waves with --dry-run).
    Feature(feature::FeatureArgs),
    /// Runs at a glance, or one run in detail.
    Status {
        /// Task or feature id (all runs when absent).
        id: Option<String>,
    },
    /// Continue an interrupted run from its last completed step.
    Resume {
        /// Task or feature id of the interrupted run.
        id: String,
        /// Print events as NDJSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Sign off a run waiting at an `approval` step, and continue it.
    Approve {
        /// Task id of the waiting run.
        id: String,
        /// Print events as NDJSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Reject the work of a run waiting at an `approval` step; the run ends blocked.
    Reject {
        /// Task id of the waiting run.
        id: String,
        /// What must change (recorded in the report).
        #[arg(long, value_name = "TEXT")]
        reason: String,
        /// Print events as NDJSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Merge an approved run into its base and clean up.
    Complete {
        /// Task or feature id of the approved run.
        id: String,
    },
    /// Remove a run's worktree and branch (its records are kept).
    Discard {
        /// Task id of the run.
        id: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
    },
    /// Show a run's prompts, verdicts and check logs.
    Logs {
        /// Task id of the run.
        id: String,
        /// Only this turn.
        #[arg(long, value_name = "N")]
        turn: Option<u32>,
    },
    /// Write a run's report.md and report.html again from its records.
    Report {
        /// Task or feature id of the run (or an earlier run, TASK@N).
        id: String,
        /// Open report.html with the platform's opener (xdg-open, open).
        #[arg(long)]
        open: bool,
    },
    /// Run the default workflow on a bundled sample project with scripted agents, in a temp dir.
    Demo {
        /// Print events as NDJSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Inspect and validate workflows.
    #[command(subcommand)]
    Workflows(workflows::WorkflowsCommand),
    /// Inspect quality-gate profiles.
    #[command(subcommand)]
    Profiles(profiles::ProfilesCommand),
    /// Print the built-in prompt templates, to start your own from.
    #[command(subcommand)]
    Prompts(prompts::PromptsCommand),
    /// Check git, the agent CLIs and their credentials, and the config and workflows.
    Doctor(doctor::DoctorArgs),
    /// Print the JSON Schema of a file kind, for editor completion and checking.
    Schema {
        /// workflow, config, profile or feature.
        kind: String,
    },
}

/// Flags shared by the commands that run a workflow.
#[derive(Debug, Clone, Default, Args)]
pub struct RunFlags {
    /// Workflow name or file (default: the task's `workflow`, else player-coach).
    #[arg(long, value_name = "NAME|PATH")]
    pub workflow: Option<String>,
    /// Bound on the loop's iterations (the first loop's max_iterations).
    #[arg(long, value_name = "N")]
    pub max_turns: Option<u32>,
    /// Merge into the base without asking when approved.
    #[arg(long, conflicts_with = "no_merge")]
    pub auto_merge: bool,
    /// Never merge; leave an approved run for `autobuild complete`.
    #[arg(long)]
    pub no_merge: bool,
    /// Model for a role, e.g. --model security=opus (repeatable; any role of the workflow).
    #[arg(long = "model", value_name = "ROLE=MODEL")]
    pub model: Vec<String>,
    /// Model for the player role (same as --model player=MODEL).
    #[arg(long, value_name = "MODEL")]
    pub player_model: Option<String>,
    /// Model for the coach role (same as --model coach=MODEL).
    #[arg(long, value_name = "MODEL")]
    pub coach_model: Option<String>,
    /// Adapter for every role (claude-code, codex, command).
    #[arg(long, value_name = "ADAPTER")]
    pub agent: Option<String>,
    /// Override any workflow value, e.g. --set roles.coach.model=opus (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Resolve everything and print the plan and the first prompt; change nothing.
    #[arg(long, conflicts_with = "json")]
    pub dry_run: bool,
    /// Print events as NDJSON on stdout.
    #[arg(long)]
    pub json: bool,
}

impl RunFlags {
    /// The run settings these flags ask for.
    pub fn settings(&self) -> RunSettings {
        RunSettings {
            workflow_arg: self.workflow.clone(),
            auto_merge: self.auto_merge,
            no_merge: self.no_merge,
            overrides: self.set.clone(),
            max_turns: self.max_turns,
            player_model: self.player_model.clone(),
            coach_model: self.coach_model.clone(),
            models: self.model.clone(),
            agent: self.agent.clone(),
            base_branch: None,
        }
    }
}

/// The connections of a run started from the command line: progress on the chosen display,
/// questions on the terminal, Ctrl-C and SIGTERM cancel it.
pub fn terminal_io(display: ui::progress::Display) -> Result<RunIo, Error> {
    RunIo::from_signals(display.sink(), Box::new(ui::TerminalPrompter))
}

/// Parses the command line, runs it, and maps the result to an exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    ui::init_logging(cli.verbose, cli.quiet);
    if let Some(dir) = &cli.directory {
        if let Err(e) = std::env::set_current_dir(dir) {
            ui::print_error(&Error::io("cannot enter directory", dir, e));
            return ExitCode::from(exit::USAGE);
        }
    }
    match run(cli) {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            ui::print_error(&error);
            ExitCode::from(error.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<u8, Error> {
    let quiet = cli.quiet;
    match cli.command {
        Command::Init => init::run(),
        Command::Task(args) => task::run(args, quiet),
        Command::Feature(args) => feature::run(args, quiet),
        Command::Status { id } => runs::status(id),
        Command::Resume { id, json } => runs::resume(&id, json, quiet),
        Command::Approve { id, json } => approval::answer(
            &id,
            Answer {
                approved: true,
                reason: String::new(),
            },
            json,
            quiet,
        ),
        Command::Reject { id, reason, json } => approval::answer(
            &id,
            Answer {
                approved: false,
                reason,
            },
            json,
            quiet,
        ),
        Command::Complete { id } => runs::complete(&id),
        Command::Discard { id, yes } => runs::discard(&id, yes),
        Command::Logs { id, turn } => runs::logs(&id, turn),
        Command::Report { id, open } => report::run(&id, open),
        Command::Demo { json } => demo::run(json, quiet),
        Command::Workflows(cmd) => workflows::run(cmd),
        Command::Profiles(cmd) => profiles::run(cmd),
        Command::Prompts(cmd) => prompts::run(cmd),
        Command::Doctor(args) => doctor::run(args),
        Command::Schema { kind } => schema::run(&kind),
    }
}
