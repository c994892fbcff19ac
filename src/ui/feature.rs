//! Feature progress, three ways (README.md): on a terminal a live panel with one line per
//! task (wave, state, turn N/M, current step, last coach decision, elapsed, cost); without a
//! terminal one plain line per event, prefixed with the task id; with `--json` every feature
//! and task event as NDJSON on stdout.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use crate::engine::events::{Event, EventKind};
use crate::feature::events::{FeatureEvent, FeatureEventKind, FeatureIo, FeatureSink};
use crate::ui;
use crate::ui::colour;
use crate::ui::progress::{plain_line, Display};
use crate::workflow::kinds::Uses;

/// A feature run's display for the way progress is shown (chosen as for a task run), and the
/// terminal to answer its questions.
pub fn io(display: Display) -> FeatureIo {
    FeatureIo {
        sink: sink(display),
        prompter: Box::new(ui::TerminalPrompter),
        warn: ui::warn,
    }
}

/// The feature's display for the way progress is shown.
fn sink(display: Display) -> Box<dyn FeatureSink> {
    match display {
        Display::Panel => Box::new(Panel::default()),
        Display::Plain => Box::new(Plain::default()),
        Display::Json => Box::new(Json),
        Display::Quiet => Box::new(Quiet),
    }
}

/// The plain line for a feature event.
pub fn feature_line(event: &FeatureEvent) -> String {
    match &event.kind {
        FeatureEventKind::FeatureStarted {
            name,
            branch,
            base,
            waves,
            resumed,
            ..
        } => {
            let tasks: usize = waves.iter().map(Vec::len).sum();
            format!(
                "{} {}: {name} ({tasks} task(s) in {} wave(s) on {branch}, from {base})",
                if *resumed { "resuming" } else { "running" },
                event.feature,
                waves.len()
            )
        }
        FeatureEventKind::WaveStarted {
            wave,
            tasks,
            max_parallel,
        } => format!(
            "wave {wave}: {} (up to {max_parallel} at once)",
            tasks.join(", ")
        ),
        FeatureEventKind::TaskStarted {
            task,
            wave,
            resumed,
        } => format!(
            "[{task}] {} (wave {wave})",
            if *resumed { "resuming" } else { "started" }
        ),
        FeatureEventKind::TaskFinished {
            task,
            message,
            report,
            ..
        } => match report {
            Some(report) => format!("[{task}] {message}\n[{task}] report: {}", report.display()),
            None => format!("[{task}] {message}"),
        },
        FeatureEventKind::TaskSkipped { task, reason } => format!("[{task}] skipped: {reason}"),
        FeatureEventKind::TaskMerged {
            task,
            commit,
            files,
        } => format!(
            "[{task}] merged into the feature branch ({files} file(s), {})",
            commit.get(..10).unwrap_or(commit)
        ),
        FeatureEventKind::WaveFinished { wave, duration_ms } => {
            format!("wave {wave} done in {:.1}s", *duration_ms as f64 / 1000.0)
        }
        FeatureEventKind::Conflict {
            task,
            with_tasks,
            paths,
        } => {
            let with = if with_tasks.is_empty() {
                "the feature branch".to_string()
            } else {
                with_tasks.join(", ")
            };
            format!(
                "conflict: {task} cannot be merged; it and {with} changed {}",
                paths.join(", ")
            )
        }
        FeatureEventKind::Integration { message, .. } => message.clone(),
        FeatureEventKind::IntegrationRepair { wave, task } => {
            format!("[{task}] started: the player integrates wave {wave}")
        }
        FeatureEventKind::Warning { message } => format!("warning: {message}"),
        FeatureEventKind::FeatureFinished {
            message, report, ..
        } => format!("result: {message}\nreport: {}", report.display()),
    }
}

/// A task event as plain lines prefixed with its task, or nothing for chatty events.
pub fn task_lines(event: &Event) -> Option<String> {
    plain_line(event).map(|text| {
        text.lines()
            .map(|line| format!("[{}] {line}", event.run))
            .collect::<Vec<_>>()
            .join("\n")
    })
}

/// Plain lines. A task's own final lines and its merge step's line are left out: the feature
/// lands its tasks itself, and its `TaskFinished` line says how each ended in the feature's
/// terms (a task's "merge later with `autobuild complete`" would be wrong advice). Task
/// warnings the feature already printed are left out too.
#[derive(Default)]
struct Plain {
    warnings: Vec<String>,
}

impl Plain {
    /// Whether a task event says something the feature's own lines say (better).
    fn covered_by_feature(&self, event: &Event) -> bool {
        match &event.kind {
            EventKind::Warning { message } => self.warnings.contains(message),
            EventKind::RunFinished { .. } => true,
            EventKind::StepFinished { uses, .. } => *uses == Uses::Merge,
            _ => false,
        }
    }
}

impl FeatureSink for Plain {
    fn feature(&mut self, event: &FeatureEvent) {
        if let FeatureEventKind::Warning { message } = &event.kind {
            self.warnings.push(message.clone());
            // Commentary goes to stderr; stdout carries the run's lines.
            ui::note(&feature_line(event));
            return;
        }
        ui::line(&feature_line(event));
    }

    fn task(&mut self, event: &Event) {
        if self.covered_by_feature(event) {
            return;
        }
        if let Some(lines) = task_lines(event) {
            if let EventKind::Warning { .. } = event.kind {
                ui::note(&lines);
            } else {
                ui::line(&lines);
            }
        }
    }
}

struct Json;

impl FeatureSink for Json {
    fn feature(&mut self, event: &FeatureEvent) {
        if let Ok(line) = serde_json::to_string(event) {
            ui::line(&line);
        }
    }

    fn task(&mut self, event: &Event) {
        if let Ok(line) = serde_json::to_string(event) {
            ui::line(&line);
        }
    }
}

struct Quiet;

impl FeatureSink for Quiet {
    fn feature(&mut self, event: &FeatureEvent) {
        if let FeatureEventKind::FeatureFinished { .. } = event.kind {
            ui::line(&feature_line(event));
        }
    }

    fn task(&mut self, _event: &Event) {}
}

/// What the panel shows for one task.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskLine {
    pub wave: usize,
    pub state: String,
    pub turn: u32,
    pub max_turns: u32,
    pub step: Option<String>,
    pub decision: String,
    pub cost: f64,
}

impl TaskLine {
    /// Follows a task's engine event.
    pub fn apply(&mut self, event: &Event) {
        match &event.kind {
            EventKind::RunStarted { max_turns, .. } => {
                self.max_turns = *max_turns;
                self.state = "running".into();
            }
            EventKind::StepStarted { step, turn, .. } => {
                if let Some(turn) = turn {
                    self.turn = *turn;
                }
                self.step = Some(step.clone());
            }
            EventKind::TurnFinished { turn, summary, .. } => {
                self.turn = *turn;
                if !summary.decision.is_empty() {
                    self.decision = summary.decision.clone();
                }
                self.cost += summary.cost_usd.unwrap_or(0.0);
            }
            EventKind::RunFinished { outcome, .. } => {
                self.state = outcome.clone();
                self.step = None;
            }
            EventKind::StepFinished { .. }
            | EventKind::StepSkipped { .. }
            | EventKind::Warning { .. }
            | EventKind::AwaitingAnswer { .. } => {}
        }
    }

    /// `wave 1  running  turn 2/5  review  coach feedback  $0.12`.
    pub fn render(&self) -> String {
        // Coloured like the task panel's status words (stripped where stderr shows none).
        let mut parts = vec![
            format!("wave {}", self.wave),
            colour::status_padded(&self.state, 9),
        ];
        if self.turn > 0 {
            parts.push(format!("turn {}/{}", self.turn, self.max_turns));
        }
        if let Some(step) = &self.step {
            parts.push(step.clone());
        }
        if !self.decision.is_empty() {
            parts.push(format!("coach {}", colour::status(&self.decision)));
        }
        if self.cost > 0.0 {
            parts.push(format!("${:.2}", self.cost));
        }
        parts.join("  ")
    }
}

/// One task's row of the panel.
struct Row {
    bar: ProgressBar,
    line: TaskLine,
    started: Option<Instant>,
    /// How long its run took, once it ended (`12s`).
    took: Option<String>,
    /// Why it was skipped.
    note: Option<String>,
}

impl Row {
    fn text(&self) -> String {
        let mut text = self.line.render();
        for extra in [&self.took, &self.note].into_iter().flatten() {
            text.push_str("  ");
            text.push_str(extra);
        }
        text
    }

    fn show(&self) {
        self.bar.set_message(ui::for_panel(&self.text()));
    }

    /// Stops the spinner and freezes the row.
    fn settle(&self) {
        self.bar.set_style(idle_style());
        self.bar.finish_with_message(ui::for_panel(&self.text()));
    }
}

fn idle_style() -> ProgressStyle {
    ProgressStyle::with_template("  {prefix} {msg}")
        .unwrap_or_else(|_| ProgressStyle::default_bar())
}

fn busy_style() -> ProgressStyle {
    ProgressStyle::with_template("{spinner} {prefix} {msg}  {elapsed}")
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// The live panel: one row per task; feature lines scroll above.
#[derive(Default)]
struct Panel {
    multi: MultiProgress,
    rows: BTreeMap<String, Row>,
    warnings: Vec<String>,
}

impl FeatureSink for Panel {
    fn feature(&mut self, event: &FeatureEvent) {
        match &event.kind {
            FeatureEventKind::FeatureStarted {
                waves, statuses, ..
            } => {
                let width = waves.iter().flatten().map(String::len).max().unwrap_or(0);
                for (w, wave) in waves.iter().enumerate() {
                    for task in wave {
                        let bar = self.multi.add(ProgressBar::new_spinner());
                        bar.set_style(idle_style());
                        bar.set_prefix(format!("{task:<width$}"));
                        let row = Row {
                            bar,
                            line: TaskLine {
                                wave: w + 1,
                                state: statuses
                                    .get(task)
                                    .cloned()
                                    .unwrap_or_else(|| "pending".into()),
                                ..TaskLine::default()
                            },
                            started: None,
                            took: None,
                            note: None,
                        };
                        row.show();
                        self.rows.insert(task.clone(), row);
                    }
                }
                let _ = self.multi.println(ui::for_panel(&feature_line(event)));
            }
            FeatureEventKind::TaskStarted { task, .. } => {
                if let Some(row) = self.rows.get_mut(task) {
                    row.line.state = "starting".into();
                    row.started = Some(Instant::now());
                    row.bar.set_style(busy_style());
                    row.bar.reset_elapsed();
                    row.bar.enable_steady_tick(Duration::from_millis(200));
                    row.show();
                }
            }
            FeatureEventKind::TaskFinished { task, status, .. } => {
                if let Some(row) = self.rows.get_mut(task) {
                    row.line.state = status.clone();
                    row.line.step = None;
                    row.took = row.started.map(|s| format!("{}s", s.elapsed().as_secs()));
                    row.settle();
                }
            }
            FeatureEventKind::TaskSkipped { task, reason } => {
                if let Some(row) = self.rows.get_mut(task) {
                    row.line.state = "skipped".into();
                    row.note = Some(format!("({reason})"));
                    row.settle();
                }
            }
            FeatureEventKind::TaskMerged { task, .. } => {
                if let Some(row) = self.rows.get_mut(task) {
                    row.line.state = "merged".into();
                    row.settle();
                }
            }
            FeatureEventKind::FeatureFinished { .. } => {
                for row in self.rows.values() {
                    if !row.bar.is_finished() {
                        row.settle();
                    }
                }
                ui::line(&feature_line(event));
            }
            FeatureEventKind::Warning { message } => {
                self.warnings.push(message.clone());
                let _ = self.multi.println(ui::for_panel(&feature_line(event)));
            }
            _ => {
                let _ = self.multi.println(ui::for_panel(&feature_line(event)));
            }
        }
    }

    fn task(&mut self, event: &Event) {
        if let Some(row) = self.rows.get_mut(&event.run) {
            row.line.apply(event);
            row.show();
        }
        if let EventKind::Warning { message } = &event.kind {
            if !self.warnings.contains(message) {
                if let Some(lines) = task_lines(event) {
                    let _ = self.multi.println(ui::for_panel(&lines));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::events::TurnSummary;

    fn event(kind: EventKind) -> Event {
        Event::now("TASK-1", kind)
    }

    #[test]
    fn a_task_line_follows_its_run() {
        let mut line = TaskLine {
            wave: 2,
            state: "pending".into(),
            ..Default::default()
        };
        line.apply(&event(EventKind::RunStarted {
            task: "TASK-1".into(),
            title: "t".into(),
            workflow: "player-coach".into(),
            max_turns: 5,
            resumed: false,
        }));
        line.apply(&event(EventKind::StepStarted {
            step: "review".into(),
            uses: Uses::Agent,
            turn: Some(2),
        }));
        line.apply(&event(EventKind::TurnFinished {
            turn: 2,
            max_turns: 5,
            summary: TurnSummary {
                decision: "feedback".into(),
                cost_usd: Some(0.25),
                ..Default::default()
            },
        }));
        assert_eq!(
            line.render(),
            "wave 2  running    turn 2/5  review  coach feedback  $0.25"
        );
    }

    #[test]
    fn plain_lines_leave_out_what_the_feature_says_itself() {
        let plain = Plain {
            warnings: vec!["shared".into()],
        };
        let step = |uses: Uses| {
            event(EventKind::StepFinished {
                step: uses.to_string(),
                uses,
                turn: None,
                ok: true,
                duration_ms: 5,
                summary: "approved; merge later with `autobuild complete TASK-1`".into(),
                waiting: false,
            })
        };
        assert!(plain.covered_by_feature(&step(Uses::Merge)));
        assert!(!plain.covered_by_feature(&step(Uses::Report)));
        let warning = |message: &str| {
            event(EventKind::Warning {
                message: message.into(),
            })
        };
        assert!(plain.covered_by_feature(&warning("shared")));
        assert!(!plain.covered_by_feature(&warning("only the task's")));
    }

    #[test]
    fn plain_task_lines_are_prefixed_with_the_task() {
        let finished = event(EventKind::RunFinished {
            outcome: "approved".into(),
            exit_code: 0,
            message: "approved; not merged yet".into(),
            report: Some("r.md".into()),
            worktree: None,
            branch: "autobuild/TASK-1".into(),
            landed: None,
        });
        assert_eq!(
            task_lines(&finished).unwrap(),
            "[TASK-1] result: approved; not merged yet\n[TASK-1] report: r.md"
        );
    }
}
