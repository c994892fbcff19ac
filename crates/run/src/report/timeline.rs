//! The run's timeline, from its event stream: one row per step that ran (a bar as long as the
//! step took, placed after the steps before it) and marker rows for what happened between
//! steps (a stall nudge, a resume, a skipped step). Steps run one after another, so the bars'
//! positions are their cumulative durations; time the run spent stopped is not drawn.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::events::{Event, EventKind};
use model::workflow::kinds::Uses;

/// What a step is, for its colour and label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// An agent that writes (the player).
    Agent,
    /// A read-only agent that returns a verdict (a coach, a reviewer).
    Review,
    /// Commands the runner runs (`verify`, `run`).
    Check,
    /// A decision (`gate`, a person's `approval`).
    Gate,
    /// The runner's own bookkeeping (worktree, merge, report).
    Runner,
}

impl StepKind {
    /// `reviews` are the step ids whose records are verdicts.
    pub fn of(uses: Uses, step: &str, reviews: &BTreeSet<String>) -> StepKind {
        match uses {
            Uses::Agent if reviews.contains(step) => StepKind::Review,
            Uses::Agent => StepKind::Agent,
            Uses::Verify | Uses::Run => StepKind::Check,
            Uses::Gate | Uses::Approval => StepKind::Gate,
            Uses::Worktree | Uses::Loop | Uses::Merge | Uses::Report => StepKind::Runner,
        }
    }
}

/// One row of the timeline.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// `None` for a marker row.
    pub kind: Option<StepKind>,
    /// `nudge`, `resume`, `skip` for a marker row.
    pub mark: Option<&'static str>,
    pub step: String,
    pub turn: Option<u32>,
    pub ok: bool,
    /// The step has not finished: `running` or `interrupted`.
    pub unfinished: Option<&'static str>,
    pub duration_ms: u64,
    /// Where the bar starts and how wide it is, in percent of the track.
    pub left: f64,
    pub width: f64,
    /// The runner's one-line summary of the step, or the marker's text.
    pub text: String,
    /// Paths the step changed outside its scope (reverted by the runner).
    pub scope_violation: Vec<String>,
    /// The first step of a turn (or of the steps outside any turn) after other steps.
    pub first_of_turn: bool,
}

/// The narrowest bar, in percent, so that a step of a few milliseconds is still seen.
const MIN_WIDTH: f64 = 0.6;

/// The rows of `events`. `reviews` names the verdict steps; `violations` the scope violations
/// by step and turn; `running` says whether a step still open at the end is running now (or
/// was interrupted).
pub fn rows(
    events: &[Event],
    reviews: &BTreeSet<String>,
    violations: &BTreeMap<(String, u32), Vec<String>>,
    running: bool,
) -> Vec<Row> {
    let mut rows = Vec::new();
    let mut open: Option<(String, Uses, Option<u32>)> = None;
    let bar = |step: &str, uses: Uses, turn: Option<u32>| Row {
        kind: Some(StepKind::of(uses, step, reviews)),
        step: step.to_string(),
        turn,
        ok: true,
        scope_violation: turn
            .and_then(|t| violations.get(&(step.to_string(), t)).cloned())
            .unwrap_or_default(),
        ..Row::default()
    };
    let mark = |mark: &'static str, text: String| Row {
        mark: Some(mark),
        ok: true,
        text,
        ..Row::default()
    };
    for event in events {
        match &event.kind {
            EventKind::RunStarted { resumed: true, .. } => {
                if let Some((step, uses, turn)) = open.take() {
                    rows.push(Row {
                        unfinished: Some("interrupted"),
                        ..bar(&step, uses, turn)
                    });
                }
                rows.push(mark("resume", format!("resumed at {}", event.time)));
            }
            EventKind::StepStarted { step, uses, turn } => {
                open = Some((step.clone(), *uses, *turn));
            }
            EventKind::StepFinished {
                step,
                uses,
                turn,
                ok,
                duration_ms,
                summary,
                waiting,
            } => {
                open = None;
                rows.push(Row {
                    // Waiting for a person is not a failure.
                    ok: *ok || *waiting,
                    unfinished: waiting.then_some("waiting"),
                    duration_ms: *duration_ms,
                    text: summary.clone(),
                    ..bar(step, *uses, *turn)
                });
            }
            EventKind::StepSkipped { step, reason } => {
                rows.push(mark("skip", format!("{step} skipped: {reason}")));
            }
            EventKind::Warning { message } if message.starts_with("stall detected") => {
                rows.push(mark("nudge", message.clone()));
            }
            _ => {}
        }
    }
    if let Some((step, uses, turn)) = open {
        rows.push(Row {
            unfinished: Some(if running { "running" } else { "interrupted" }),
            ..bar(&step, uses, turn)
        });
    }
    place(&mut rows);
    rows
}

/// Lays the bars end to end across the track, and marks where a turn begins.
fn place(rows: &mut [Row]) {
    let total: u64 = rows.iter().map(|r| r.duration_ms).sum();
    let mut elapsed = 0u64;
    let mut previous_turn = None;
    for (index, row) in rows.iter_mut().filter(|r| r.kind.is_some()).enumerate() {
        row.first_of_turn = index > 0 && row.turn != previous_turn;
        previous_turn = row.turn;
        let share = |ms: u64| {
            if total == 0 {
                0.0
            } else {
                ms as f64 * 100.0 / total as f64
            }
        };
        row.width = share(row.duration_ms).max(MIN_WIDTH);
        row.left = share(elapsed).min(100.0 - row.width);
        elapsed += row.duration_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(kind: EventKind) -> Event {
        Event {
            time: "2026-01-01T00:00:00Z".into(),
            run: "T".into(),
            kind,
        }
    }

    fn finished(step: &str, uses: Uses, turn: u32, ms: u64) -> Event {
        event(EventKind::StepFinished {
            step: step.into(),
            uses,
            turn: Some(turn),
            ok: true,
            duration_ms: ms,
            summary: format!("{step} done"),
            waiting: false,
        })
    }

    fn started(step: &str, uses: Uses, turn: u32) -> Event {
        event(EventKind::StepStarted {
            step: step.into(),
            uses,
            turn: Some(turn),
        })
    }

    #[test]
    fn bars_follow_each_other_by_duration_and_are_told_apart_by_kind() {
        let events = vec![
            started("implement", Uses::Agent, 1),
            finished("implement", Uses::Agent, 1, 600),
            finished("verify", Uses::Verify, 1, 200),
            finished("review", Uses::Agent, 1, 200),
            finished("gate", Uses::Gate, 1, 0),
        ];
        let reviews = BTreeSet::from(["review".to_string()]);
        let rows = rows(&events, &reviews, &BTreeMap::new(), false);
        let kinds: Vec<_> = rows.iter().map(|r| r.kind).collect();
        assert_eq!(
            kinds,
            [
                Some(StepKind::Agent),
                Some(StepKind::Check),
                Some(StepKind::Review),
                Some(StepKind::Gate)
            ]
        );
        assert_eq!((rows[0].left, rows[0].width), (0.0, 60.0));
        assert_eq!((rows[1].left, rows[1].width), (60.0, 20.0));
        assert_eq!(rows[3].width, MIN_WIDTH);
        assert!(rows.iter().all(|r| !r.first_of_turn));
        assert!(rows[3].left + rows[3].width <= 100.0);
    }

    #[test]
    fn nudges_resumes_violations_and_unfinished_steps_are_marked() {
        let events = vec![
            finished("implement", Uses::Agent, 1, 10),
            event(EventKind::Warning {
                message: "stall detected; nudging the player: try something else".into(),
            }),
            event(EventKind::Warning {
                message: "some other warning".into(),
            }),
            started("implement", Uses::Agent, 2),
            event(EventKind::RunStarted {
                task: "T".into(),
                title: "t".into(),
                workflow: "w".into(),
                max_turns: 3,
                resumed: true,
            }),
            started("implement", Uses::Agent, 2),
        ];
        let violations = BTreeMap::from([(
            ("implement".to_string(), 1),
            vec![".git/hooks/x".to_string()],
        )]);
        let rows = rows(&events, &BTreeSet::new(), &violations, true);
        let shape: Vec<_> = rows.iter().map(|r| (r.mark, r.unfinished)).collect();
        assert_eq!(
            shape,
            [
                (None, None),
                (Some("nudge"), None),
                (None, Some("interrupted")),
                (Some("resume"), None),
                (None, Some("running")),
            ]
        );
        assert_eq!(rows[0].scope_violation, [".git/hooks/x"]);
        let starts: Vec<bool> = rows.iter().map(|r| r.first_of_turn).collect();
        assert_eq!(starts, [false, false, true, false, false]);
        assert!(rows[2].scope_violation.is_empty());
    }

    #[test]
    fn a_step_waiting_for_a_person_is_shown_waiting_not_failed() {
        let events = vec![event(EventKind::StepFinished {
            step: "signoff".into(),
            uses: Uses::Approval,
            turn: None,
            ok: false,
            duration_ms: 1,
            summary: "waiting for a person: ship it?".into(),
            waiting: true,
        })];
        let rows = rows(&events, &BTreeSet::new(), &BTreeMap::new(), false);
        assert!(rows[0].ok);
        assert_eq!(rows[0].unfinished, Some("waiting"));
    }
}
