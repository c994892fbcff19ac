//! `autobuild replay <RUN>`: the recorded run judged again (module `engine::replay`); prints, per
//! turn, the recorded decision beside the replayed one, and why a replayed turn was not
//! approved.

use clap::Args;

use crate::cli::run_dir::checked_run;
use crate::engine::events::{Event, EventKind, EventSink};
use crate::engine::replay::{replay, ReplayOptions, ReplayReport};
use crate::error::Error;
use crate::steps::gate::GateDecision;
use crate::ui;
use crate::ui::progress::Display;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The run to replay: a task id (its latest run) or an earlier run, TASK@N.
    pub run: String,
    /// Judge under this workflow (default: the one the run used).
    #[arg(long, value_name = "NAME|PATH")]
    pub workflow: Option<String>,
    /// Judge under this quality-gate profile (default: the one the task's type selects).
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Override a workflow value, as for `task` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Read the reviewers' recorded answers again under today's verdict rules instead of
    /// asking them.
    #[arg(long)]
    pub recorded_reviews: bool,
    /// The comparison as one JSON document (shape in docs/replay.md).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ReplayArgs, quiet: bool) -> Result<u8, Error> {
    let root = checked_run(&args.run)?;
    // Progress as a run shows it, but not a run's last lines: the replay's table ends it.
    let display = Display::choose(false, quiet || args.json).sink();
    let io = crate::engine::io::RunIo::from_signals(
        Box::new(WithoutEnd(display)),
        Box::new(ui::TerminalPrompter),
    )?;
    let options = ReplayOptions {
        workflow: args.workflow,
        profile: args.profile,
        set: args.set,
        recorded_reviews: args.recorded_reviews,
    };
    let report = replay(&root, &args.run, options, io)?;
    if args.json {
        super::json::print(&report);
    } else {
        ui::line(&render(&report));
    }
    Ok(0)
}

/// Shows a replay's events but its `run_finished` (whose worktree is removed by then).
struct WithoutEnd(Box<dyn EventSink + Send>);

impl EventSink for WithoutEnd {
    fn emit(&mut self, event: &Event) {
        if !matches!(event.kind, EventKind::RunFinished { .. }) {
            self.0.emit(event);
        }
    }
}

/// The comparison as the terminal shows it.
pub fn render(report: &ReplayReport) -> String {
    let reviewers = if report.recorded_reviews {
        "the reviewers' recorded answers read again"
    } else {
        "the reviewers asked again"
    };
    let mut out = format!(
        "Replay of {} (workflow {}, profile {}; the player's recorded work, {reviewers})\n",
        report.run, report.workflow, report.profile
    );
    let shown = |judged: &Option<GateDecision>| match judged {
        None => "–".to_string(),
        Some(j) if j.approved => "approved".to_string(),
        Some(_) => "not approved".to_string(),
    };
    for turn in &report.turns {
        let mark = if turn.differs() { "  ← differs" } else { "" };
        out.push_str(&format!(
            "  turn {}: recorded {}, replayed {}{mark}\n",
            turn.turn,
            shown(&turn.recorded),
            shown(&turn.replayed)
        ));
        if let Some(replayed) = turn.replayed.as_ref().filter(|j| !j.approved) {
            for reason in &replayed.reasons {
                out.push_str(&format!("      - {reason}\n"));
            }
        }
    }
    out.push_str(&format!(
        "recorded: {}\nreplayed: {}\nrecords:  {}",
        report.recorded_outcome,
        report.replayed_outcome,
        report.records.display()
    ));
    out
}
