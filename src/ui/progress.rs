//! Run progress, three ways (README.md): a live panel on a terminal (task, turn N/M, the
//! current step with its elapsed time, one line per finished turn), one plain line per event
//! without a terminal, and the raw event stream as NDJSON with `--json`.

use std::io::{self, Write};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::colour;
use crate::engine::events::{Event, EventKind, EventSink, TurnSummary};

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Display {
    Panel,
    Plain,
    Json,
    Quiet,
}

impl Display {
    /// `--json` wins; then a terminal on stderr gets the panel; otherwise plain lines.
    pub fn choose(json: bool, quiet: bool) -> Display {
        if json {
            Display::Json
        } else if quiet {
            Display::Quiet
        } else if super::stderr_is_terminal() {
            Display::Panel
        } else {
            Display::Plain
        }
    }

    pub fn sink(self) -> Box<dyn EventSink + Send> {
        match self {
            Display::Panel => Box::new(Panel::new()),
            Display::Plain => Box::new(Plain),
            Display::Json => Box::new(Json),
            Display::Quiet => Box::new(Quiet),
        }
    }
}

const MAX_REASONS_SHOWN: usize = 4;
const MAX_REASON_CHARS: usize = 300;

/// One finished turn as a line, then why it was not approved.
pub fn turn_line(turn: u32, max: u32, s: &TurnSummary) -> String {
    let player = if s.player_ok {
        format!("player ok, {} file(s)", s.files_changed)
    } else {
        "player failed".to_string()
    };
    let checks = if s.red && s.checks_failed == 0 {
        format!(
            "red witness holds ({} check(s) fail as new tests should)",
            s.checks_passed
        )
    } else if s.red {
        format!(
            "red witness: {} as it should, {}",
            s.checks_passed,
            colour::paint(colour::BAD, &format!("{} not red", s.checks_failed))
        )
    } else if s.checks_failed == 0 {
        format!("checks {} passed", s.checks_passed)
    } else {
        format!(
            "checks {} passed, {}",
            s.checks_passed,
            colour::paint(colour::BAD, &format!("{} failed", s.checks_failed))
        )
    };
    let coach = if s.decision.is_empty() {
        String::new()
    } else {
        format!(
            " · coach {} ({} issue(s))",
            colour::status(&s.decision),
            s.issues
        )
    };
    let cost = s
        .cost_usd
        .map(|c| format!(" · ${c:.2}"))
        .unwrap_or_default();
    let gate = if s.approved {
        colour::paint(colour::GOOD, "approved")
    } else {
        colour::paint(colour::BAD, "not approved")
    };
    let mut line = format!(
        "turn {turn}/{max}: {player} · {checks} · criteria {}/{}{coach} · {gate}{cost}",
        s.criteria_met, s.criteria_total
    );
    for reason in s.reasons.iter().take(MAX_REASONS_SHOWN) {
        line.push_str("\n    - ");
        line.push_str(&base::text::elide(reason, MAX_REASON_CHARS));
    }
    if s.reasons.len() > MAX_REASONS_SHOWN {
        line.push_str(&format!(
            "\n    - … and {} more (see the report)",
            s.reasons.len() - MAX_REASONS_SHOWN
        ));
    }
    line
}

/// The plain line for an event, or nothing for events too chatty to print.
pub fn plain_line(event: &Event) -> Option<String> {
    match &event.kind {
        EventKind::RunStarted {
            task,
            title,
            workflow,
            max_turns,
            resumed,
        } => Some(format!(
            "{} {task}: {title} (workflow {workflow}, up to {max_turns} turns)",
            if *resumed { "resuming" } else { "running" }
        )),
        EventKind::StepStarted { .. } => None,
        EventKind::StepFinished {
            step,
            turn,
            ok,
            duration_ms,
            summary,
            waiting,
            ..
        } => {
            let at = turn.map(|t| format!("[turn {t}] ")).unwrap_or_default();
            if *waiting {
                // Not a failure: the run stops until a person answers.
                return Some(format!(
                    "{at}{step}: {} — `autobuild approve {}` (or `autobuild reject {} --reason …`)",
                    colour::paint(colour::WARNING, "waiting for a person"),
                    event.run,
                    event.run
                ));
            }
            let mark = if *ok {
                String::new()
            } else {
                format!(" {}", colour::paint(colour::BAD, "FAILED"))
            };
            Some(format!(
                "{at}{step}{mark}: {summary} ({})",
                format_ms(*duration_ms)
            ))
        }
        EventKind::StepSkipped { step, reason } => Some(format!("{step}: skipped ({reason})")),
        EventKind::TurnFinished {
            turn,
            max_turns,
            summary,
        } => Some(turn_line(*turn, *max_turns, summary)),
        EventKind::Warning { message } => Some(format!(
            "{} {message}",
            colour::paint(colour::WARNING, "warning:")
        )),
        // The question itself is asked on the terminal.
        EventKind::AwaitingAnswer { .. } => None,
        EventKind::RunFinished {
            outcome,
            message,
            report,
            worktree,
            exit_code,
            ..
        } => {
            let style = if *exit_code == 0 {
                colour::GOOD
            } else {
                colour::BAD
            };
            let mut line = format!("result: {}", colour::paint(style, message));
            if let Some(report) = report {
                line.push_str(&format!("\nreport: {}", report.display()));
            }
            if let Some(worktree) = worktree {
                line.push_str(&format!("\nworktree: {}", worktree.display()));
            }
            // Stopped by the person (Ctrl-C): nothing is lost, and this is how to go on.
            if outcome == "cancelled" {
                line.push_str(&format!(
                    "\nnext: `autobuild resume {}` continues from the last completed step",
                    event.run
                ));
            }
            Some(line)
        }
    }
}

fn format_ms(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

struct Plain;

impl EventSink for Plain {
    fn emit(&mut self, event: &Event) {
        let Some(line) = plain_line(event) else {
            return;
        };
        // Warnings are commentary: stderr, so stdout carries the run's lines only.
        if let EventKind::Warning { .. } = event.kind {
            super::note(&line);
        } else {
            super::line(&line);
        }
    }
}

struct Json;

impl EventSink for Json {
    fn emit(&mut self, event: &Event) {
        if let Ok(line) = serde_json::to_string(event) {
            let _ = writeln!(io::stdout().lock(), "{line}");
        }
    }
}

struct Quiet;

impl EventSink for Quiet {
    fn emit(&mut self, event: &Event) {
        if let EventKind::RunFinished { .. } = event.kind {
            Plain.emit(event);
        }
    }
}

/// The live panel: finished lines scroll above a spinner showing the current step.
///
/// The spinner keeps one draw target for its whole life: indicatif remembers on its target how
/// many lines it drew, so swapping targets (to hide it during a question) would leave the last
/// frame in the scrollback. While a question is asked the spinner is cleared and dropped; the
/// next step starts a new one.
struct Panel {
    bar: Option<ProgressBar>,
    turn: Option<(u32, u32)>,
    max_turns: u32,
}

impl Panel {
    fn new() -> Panel {
        Panel {
            bar: None,
            turn: None,
            max_turns: 0,
        }
    }

    fn spinner() -> ProgressBar {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        bar.set_style(
            ProgressStyle::with_template("{spinner} {prefix} {msg} {elapsed}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        bar
    }

    /// A finished line above the spinner (or alone, when there is none).
    fn println(&self, line: &str) {
        let line = super::for_panel(line);
        match &self.bar {
            Some(bar) => bar.println(line),
            None => {
                let _ = writeln!(io::stderr().lock(), "{line}");
            }
        }
    }

    fn clear(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

/// A run that ends without its last event (an error, a question cancelled with Ctrl-C) must
/// not leave the spinner's last frame frozen on the terminal.
impl Drop for Panel {
    fn drop(&mut self) {
        self.clear();
    }
}

impl EventSink for Panel {
    fn emit(&mut self, event: &Event) {
        match &event.kind {
            EventKind::RunStarted { max_turns, .. } => {
                self.max_turns = *max_turns;
                if let Some(line) = plain_line(event) {
                    self.println(&line);
                }
            }
            // The spinner would draw over the question.
            EventKind::AwaitingAnswer { .. } => self.clear(),
            EventKind::StepStarted { step, uses, turn } => {
                self.turn = turn.map(|t| (t, self.max_turns));
                let prefix = self
                    .turn
                    .map(|(t, m)| format!("turn {t}/{m}"))
                    .unwrap_or_default();
                let bar = self.bar.get_or_insert_with(Panel::spinner);
                bar.set_prefix(prefix);
                bar.set_message(format!("{step} ({uses})"));
                bar.reset_elapsed();
                bar.enable_steady_tick(Duration::from_millis(120));
            }
            EventKind::StepFinished { .. } | EventKind::StepSkipped { .. } => {
                if self.turn.is_none() {
                    if let Some(line) = plain_line(event) {
                        self.println(&line);
                    }
                }
            }
            EventKind::TurnFinished { .. } | EventKind::Warning { .. } => {
                if let Some(line) = plain_line(event) {
                    self.println(&line);
                }
            }
            EventKind::RunFinished { .. } => {
                self.clear();
                if let Some(line) = plain_line(event) {
                    super::line(&line);
                }
            }
        }
    }
}
