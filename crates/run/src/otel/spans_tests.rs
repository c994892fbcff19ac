//! The spans of a session, from hand-made events.

use super::*;

fn event(time: &str, kind: EventKind) -> Event {
    Event {
        time: time.into(),
        run: "T".into(),
        kind,
    }
}

fn finished(time: &str, step: &str, uses: Uses, turn: Option<u32>, ms: u64, ok: bool) -> Event {
    event(
        time,
        EventKind::StepFinished {
            step: step.into(),
            uses,
            turn,
            ok,
            duration_ms: ms,
            summary: "s".into(),
            waiting: false,
        },
    )
}

fn started(time: &str, step: &str, uses: Uses, turn: Option<u32>) -> Event {
    event(
        time,
        EventKind::StepStarted {
            step: step.into(),
            uses,
            turn,
        },
    )
}

#[test]
fn steps_are_laid_end_to_end_under_their_turn_and_the_run() {
    let events = [
        event(
            "2026-12-02T10:00:00Z",
            EventKind::RunStarted {
                task: "T".into(),
                title: "t".into(),
                workflow: "w".into(),
                max_turns: 2,
                resumed: false,
            },
        ),
        started("2026-12-02T10:00:00Z", "worktree", Uses::Worktree, None),
        finished(
            "2026-12-02T10:00:00Z",
            "worktree",
            Uses::Worktree,
            None,
            300,
            true,
        ),
        started("2026-12-02T10:00:00Z", "verify", Uses::Verify, Some(1)),
        finished(
            "2026-12-02T10:00:01Z",
            "verify",
            Uses::Verify,
            Some(1),
            700,
            false,
        ),
        // The run waited (a question) before the next step.
        started("2026-12-02T10:00:05Z", "gate", Uses::Gate, Some(1)),
        finished(
            "2026-12-02T10:00:05Z",
            "gate",
            Uses::Gate,
            Some(1),
            10,
            true,
        ),
    ];
    let roles = BTreeMap::new();
    let spans = run_spans(&RunFacts {
        trace_id: [7; 16],
        task: "T",
        workflow: "w",
        outcome: "approved",
        events: &events,
        turns: &[],
        roles: &roles,
    });
    let by = |name: &str| spans.iter().find(|s| s.name == name).unwrap();
    let start = by("autobuild.run T").start_unix_nano;
    let ms = |ns: u64| (ns - start) / 1_000_000;
    assert_eq!(
        by("step worktree").parent,
        Some(by("autobuild.run T").span_id)
    );
    assert_eq!(by("step verify").parent, Some(by("turn 1").span_id));
    assert_eq!(
        (
            ms(by("step worktree").start_unix_nano),
            ms(by("step worktree").end_unix_nano)
        ),
        (0, 300)
    );
    assert_eq!(
        (
            ms(by("step verify").start_unix_nano),
            ms(by("step verify").end_unix_nano)
        ),
        (300, 1000)
    );
    assert_eq!(ms(by("step gate").start_unix_nano), 5000);
    assert_eq!(
        (
            ms(by("turn 1").start_unix_nano),
            ms(by("turn 1").end_unix_nano)
        ),
        (300, 5010)
    );
    assert_eq!(by("step verify").error.as_deref(), Some("s"));
    assert!(spans.iter().all(|s| s.trace_id == [7; 16]));
}
