//! The feature page's timeline: one bar per task that started, from its start to its end (or
//! to the feature's last update while it runs), placed on one time axis from the first task's
//! start, so the waves and the parallel tasks within a wave show as they ran. A pure function
//! of the feature's state.

use std::time::SystemTime;

use crate::feature::state::{FeatureState, TaskStatus};
use crate::report::feature::TaskSpan;
use base::Keyword;

/// The narrowest bar, in percent, so that a task of a few milliseconds is still seen.
const MIN_WIDTH: f64 = 0.6;

/// The bars of every task that started, wave by wave in run order, and the time from the
/// first start to the last end in milliseconds.
pub fn spans(state: &FeatureState) -> (Vec<TaskSpan>, u64) {
    let now = parse(&state.updated_at);
    let ran: Vec<(String, usize, TaskStatus, SystemTime, SystemTime, bool)> = state
        .waves
        .iter()
        .flatten()
        .filter_map(|id| {
            let record = state.tasks.get(id)?;
            let start = parse(record.started_at.as_deref()?)?;
            let (end, running) = match record.finished_at.as_deref().and_then(parse) {
                Some(end) => (end, false),
                None => (now.unwrap_or(start).max(start), true),
            };
            Some((
                id.clone(),
                record.wave,
                record.status,
                start,
                end.max(start),
                running,
            ))
        })
        .collect();
    let Some(first) = ran.iter().map(|r| r.3).min() else {
        return (Vec::new(), 0);
    };
    let last = ran.iter().map(|r| r.4).max().unwrap_or(first);
    let total = millis(first, last);
    let spans = ran
        .into_iter()
        .map(|(id, wave, status, start, end, running)| {
            let (left, width) = match total {
                0 => (0.0, 100.0),
                total => (
                    millis(first, start) as f64 * 100.0 / total as f64,
                    (millis(start, end) as f64 * 100.0 / total as f64).max(MIN_WIDTH),
                ),
            };
            TaskSpan {
                id,
                wave,
                status: status.as_str().to_string(),
                left: left.min(100.0 - MIN_WIDTH),
                width,
                duration_ms: millis(start, end),
                running,
            }
        })
        .collect();
    (spans, total)
}

fn parse(text: &str) -> Option<SystemTime> {
    humantime::parse_rfc3339_weak(text).ok()
}

fn millis(from: SystemTime, to: SystemTime) -> u64 {
    to.duration_since(from).map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feature::state::TaskRecord;

    fn task(wave: usize, status: TaskStatus, start: &str, end: Option<&str>) -> TaskRecord {
        TaskRecord {
            wave,
            status,
            started_at: Some(start.into()),
            finished_at: end.map(String::from),
            ..TaskRecord::default()
        }
    }

    #[test]
    fn tasks_are_placed_on_one_axis_with_their_durations_and_a_running_task_ends_now() {
        let mut state = crate::feature::state::sample_state(&[]);
        state.updated_at = "2026-01-01T10:10:00Z".into();
        state.waves = vec![
            vec!["A".into(), "B".into()],
            vec!["C".into(), "D".into(), "E".into()],
        ];
        let t = "2026-01-01T10:0";
        state.tasks.insert(
            "A".into(),
            task(
                1,
                TaskStatus::Merged,
                &format!("{t}0:00Z"),
                Some(&format!("{t}4:00Z")),
            ),
        );
        state.tasks.insert(
            "B".into(),
            task(
                1,
                TaskStatus::Blocked,
                &format!("{t}0:00Z"),
                Some(&format!("{t}2:00Z")),
            ),
        );
        state.tasks.insert(
            "C".into(),
            task(2, TaskStatus::Running, &format!("{t}5:00Z"), None),
        );
        // D never started (skipped); E has an unreadable time.
        state.tasks.insert("D".into(), TaskRecord::default());
        state
            .tasks
            .insert("E".into(), task(2, TaskStatus::Failed, "yesterday", None));

        let (spans, total) = spans(&state);

        assert_eq!(total, 600_000);
        let shown: Vec<(&str, usize, u64, bool)> = spans
            .iter()
            .map(|s| (s.id.as_str(), s.wave, s.duration_ms, s.running))
            .collect();
        assert_eq!(
            shown,
            [
                ("A", 1, 240_000, false),
                ("B", 1, 120_000, false),
                ("C", 2, 300_000, true)
            ]
        );
        assert_eq!((spans[0].left, spans[0].width), (0.0, 40.0));
        assert_eq!((spans[2].left, spans[2].width), (50.0, 50.0));
    }

    #[test]
    fn no_task_started_draws_nothing() {
        assert_eq!(
            spans(&crate::feature::state::sample_state(&[TaskStatus::Pending])),
            (Vec::new(), 0)
        );
    }
}
