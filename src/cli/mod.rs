//! The command line: argument definitions and dispatch, one file per subcommand.
//!
//! [`main`] is the only place that turns a result into an exit code and prints errors.

pub mod approval;
pub mod bench;
pub mod command_error;
pub mod complete;
pub mod demo;
pub mod doctor;
pub mod dry_run;
pub mod feature;
pub mod generate;
pub mod init;
pub mod json;
pub mod logs;
pub mod notify;
pub mod profiles;
pub mod prompts;
pub mod replay;
pub mod report;
pub mod run_dir;
pub mod runs;
pub mod schema;
pub mod status;
pub mod task;
pub mod workflows;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::parser::ValueSource;
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use clap_complete::engine::ArgValueCandidates;

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
    /// Colour: auto (on a terminal, unless NO_COLOR is set), always, never.
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    pub color: ColorWhen,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scaffold .autobuild/ (detected checks, an example task, .gitignore).
    Init {
        /// The agents to set up: the workflow's default (Claude Code), or example `command`
        /// scripts for a first run without any LLM.
        #[arg(long, value_enum, value_name = "KIND", default_value_t = init::InitAgents::ClaudeCode)]
        agents: init::InitAgents,
        /// What init did as one JSON document (shape in README.md).
        #[arg(long)]
        json: bool,
    },
    /// Run a workflow on one task (or print its plan with --dry-run).
    Task(task::TaskArgs),
    /// Run a feature's tasks in dependency waves (or print the waves with --dry-run).
    Feature(feature::FeatureArgs),
    /// Runs at a glance (with totals), or one run in detail.
    Status {
        /// Task or feature id (all runs when absent).
        id: Option<String>,
        /// Every run of each task, earlier ones (`ID@N`) included.
        #[arg(long)]
        all: bool,
        /// The runs as JSON, for scripts (shape documented in README.md).
        #[arg(long)]
        json: bool,
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
        #[arg(add = ArgValueCandidates::new(complete::task_ids))]
        id: String,
        /// Merge right after the approval (the run lands in one step, even without a terminal).
        #[arg(long)]
        merge: bool,
        /// Print events as NDJSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Reject the work of a run waiting at an `approval` step; the run ends blocked.
    Reject {
        /// Task id of the waiting run.
        #[arg(add = ArgValueCandidates::new(complete::task_ids))]
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
        /// Merge even when the diff holds the value of a secret-named variable (refused
        /// otherwise).
        #[arg(long)]
        allow_secret_in_diff: bool,
        /// Push the approved branch to `[forge] remote` and open (or update) its pull request
        /// instead of merging locally.
        #[arg(long, conflicts_with = "allow_secret_in_diff")]
        pr: bool,
        /// The landing as one JSON document (shape in README.md).
        #[arg(long)]
        json: bool,
    },
    /// Remove a run's worktree and branch (its records are kept).
    Discard {
        /// Task id of the run.
        id: String,
        /// Do not ask for confirmation.
        #[arg(long, short = 'y')]
        yes: bool,
        /// What was discarded as one JSON document (shape in README.md).
        #[arg(long)]
        json: bool,
    },
    /// Show a run's prompts, transcripts, check logs and verdicts, in run order.
    Logs {
        /// Task id of the run.
        id: String,
        /// Only this turn (of every loop).
        #[arg(long, value_name = "N")]
        turn: Option<u32>,
        /// Only this step's records (a step id of the run's workflow: implement, verify, …).
        #[arg(long, value_name = "STEP")]
        step: Option<String>,
        /// Only this role's prompts, transcripts and records (player, coach, …).
        #[arg(long, value_name = "ROLE")]
        role: Option<String>,
        /// Keep printing what the run writes until it ends (Ctrl-C stops).
        #[arg(long, short = 'f')]
        follow: bool,
    },
    /// Run a suite's tasks under each workflow with the same agents and budget, and judge what
    /// each approved with the suite's own oracle.
    Bench(bench::BenchArgs),
    /// Judge a recorded run again under other rules, without the player: checks, criteria,
    /// reviewers and gate per turn, beside the recorded decisions.
    Replay(replay::ReplayArgs),
    /// Write a run's report.md and report.html again from its records.
    Report {
        /// Task or feature id of the run (or an earlier run, TASK@N).
        id: String,
        /// Open report.html with the platform's opener (xdg-open, open).
        #[arg(long)]
        open: bool,
    },
    /// Run the default workflow on a bundled sample project with scripted agents, in a temp dir
    /// (not with -C: the demo makes its own repository).
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
    /// Print the JSON Schema of a file kind, for editor completion and checking.
    Schema {
        /// workflow, config, profile or feature.
        #[arg(add = ArgValueCandidates::new(complete::schema_kinds))]
        kind: String,
    },
    /// Check git, the agent CLIs and their credentials, and the config and workflows.
    Doctor(doctor::DoctorArgs),
    /// Print the shell completion script for SHELL on stdout.
    Completions {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write man pages (autobuild.1 and one per command), generated from these definitions.
    Man {
        /// Directory to write the pages in (created if missing; default: the current one).
        #[arg(long, short = 'o', value_name = "DIR")]
        output: Option<PathBuf>,
    },
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorWhen {
    Auto,
    Always,
    Never,
}

impl From<ColorWhen> for ui::colour::When {
    fn from(when: ColorWhen) -> Self {
        match when {
            ColorWhen::Auto => ui::colour::When::Auto,
            ColorWhen::Always => ui::colour::When::Always,
            ColorWhen::Never => ui::colour::When::Never,
        }
    }
}

/// Flags shared by the commands that run a workflow.
#[derive(Debug, Clone, Default, Args)]
pub struct RunFlags {
    /// Workflow name or file (default: the task's `workflow`, else player-coach).
    #[arg(long, value_name = "NAME|PATH", add = ArgValueCandidates::new(complete::workflow_names))]
    pub workflow: Option<String>,
    /// Bound on the loop's iterations (the first loop's max_iterations; a --set of the same
    /// key is refused).
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
    // Adapter for every role; the help names every adapter of the registry.
    #[arg(long, value_name = "ADAPTER", help = crate::agents::description::agent_flag_help())]
    pub agent: Option<String>,
    /// Override any workflow value, e.g. --set roles.coach.model=opus (repeatable; the last
    /// --set of a key wins; one a flag also sets is refused).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Resolve everything and print the plan and the first prompt; change nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print events as NDJSON on stdout (with --dry-run: the plan as one JSON document).
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
            allow_secret_in_diff: false,
            pr: false,
            profile: None,
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
    crate::git::process_opts::configure();
    // With COMPLETE=<shell> set (by the script `completions` prints), answer the shell's
    // completion request and exit.
    clap_complete::CompleteEnv::with_factory(Cli::command).complete();
    let matches = Cli::command().get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    ui::colour::init(cli.color.into());
    ui::init_logging(cli.verbose, cli.quiet);
    // `demo` makes its own repository, so a `-C` typed for it would be silently ignored; the
    // environment's AUTOBUILD_DIR is ambient and does not concern it.
    if matches!(cli.command, Command::Demo { .. })
        && matches.value_source("directory") == Some(ValueSource::CommandLine)
    {
        let error = Error::from(command_error::CommandError::DemoWithDirectory);
        ui::print_error(&error);
        return ExitCode::from(error.exit_code());
    }
    if let Some(dir) = &cli.directory {
        if let Err(e) = std::env::set_current_dir(dir) {
            ui::print_error(&Error::io("cannot enter directory", dir, e));
            return ExitCode::from(exit::USAGE);
        }
    }
    let result = run(cli);
    // Every child ended with its step; an orphan handed to autobuild after that (a helper's
    // daemon) must not outlive it either (docs/sandbox.md, "No process outlives its step").
    let swept = crate::process::sweep();
    if !swept.left.is_empty() {
        let left: Vec<String> = swept.left.iter().map(ToString::to_string).collect();
        ui::warn(&format!(
            "processes still running at exit: {}",
            left.join(", ")
        ));
    }
    match result {
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
        Command::Init { agents, json } => init::run(agents, json),
        Command::Task(args) => task::run(args, quiet),
        Command::Feature(args) => feature::run(args, quiet),
        Command::Status { id, all, json } => runs::status(id, all, json),
        Command::Resume { id, json } => runs::resume(&id, json, quiet),
        Command::Approve { id, merge, json } => approval::answer(
            &id,
            Answer {
                approved: true,
                ..Answer::default()
            },
            merge,
            json,
            quiet,
        ),
        Command::Reject { id, reason, json } => approval::answer(
            &id,
            Answer {
                approved: false,
                reason,
                ..Answer::default()
            },
            false,
            json,
            quiet,
        ),
        Command::Complete {
            id,
            allow_secret_in_diff,
            pr,
            json,
        } => match pr {
            true => runs::complete_as_pr(&id, json),
            false => runs::complete(&id, allow_secret_in_diff, json),
        },
        Command::Discard { id, yes, json } => runs::discard(&id, yes, json),
        Command::Report { id, open } => report::run(&id, open),
        Command::Replay(args) => replay::run(args, quiet),
        Command::Bench(args) => bench::run(args),
        Command::Logs {
            id,
            turn,
            step,
            role,
            follow,
        } => runs::logs(
            &id,
            runs::LogsOptions {
                turn,
                step,
                role,
                follow,
            },
        ),
        Command::Demo { json } => demo::run(json, quiet),
        Command::Workflows(cmd) => workflows::run(cmd),
        Command::Profiles(cmd) => profiles::run(cmd),
        Command::Prompts(cmd) => prompts::run(cmd),
        Command::Doctor(args) => doctor::run(args),
        Command::Completions { shell } => generate::completions(shell),
        Command::Man { output } => generate::man(output),
        Command::Schema { kind } => schema::run(&kind),
    }
}
