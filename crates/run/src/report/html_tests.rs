//! The run page from hand-made records: parsed back with an HTML parser, never matched as text.

use scraper::{Html, Selector};
use serde_json::json;

use super::*;
use crate::engine::events::{Event, EventKind};
use crate::engine::records::TurnRecords;
use model::workflow::kinds::Uses;

fn state() -> crate::engine::state::RunState {
    serde_json::from_value(json!({
        "version": 1, "task_id": "TASK-1", "task_path": "t.md",
        "title": "Greet <b>everyone</b>", "workflow": "secure", "workflow_hash": "x",
        "status": "blocked", "started_at": "2026-01-01T00:00:00Z",
        "updated_at": "2026-01-01T00:01:00Z", "base_branch": "main",
        "branch": "autobuild/TASK-1", "worktree": "/w", "settings": {
            "workflow_arg": null, "auto_merge": false, "no_merge": false, "overrides": [],
            "max_turns": null, "player_model": null, "coach_model": null, "agent": null},
        "max_turns": 2, "completed": {}, "loops": {}, "last_checkpoint": null,
        "cost_usd": 0.5, "tokens_in": 100, "tokens_out": 20, "outcome": null
    }))
    .unwrap()
}

fn agent(message: &str, cost: f64) -> serde_json::Value {
    json!({"final_message": message, "structured_output": null, "session_id": null,
        "usage": {"input": 40, "output": 5, "cached": 0}, "cost_usd": cost,
        "duration_ms": 1200, "agent_turns": null, "permission_denials": [],
        "status": {"status": "succeeded"}})
}

fn review(step: &str, decision: &str, issue: &str) -> CoachRecord {
    serde_json::from_value(json!({
        "turn": 1, "step": step, "role": step, "agent": agent("</pre><script>alert(2)</script>", 0.1),
        "verdict": {"decision": decision, "summary": format!("{step} says {decision}"),
            "issues": [{"severity": "must_fix", "category": "security",
                "description": issue, "location": "lib/greet.sh:5", "suggestion": ""}],
            "criteria": []},
        "verdict_error": null, "retried": false, "scope_violation": [],
        "prompt": "p", "transcript": "t"
    }))
    .unwrap()
}

fn player() -> PlayerRecord {
    serde_json::from_value(json!({
        "turn": 1, "step": "implement", "role": "player", "agent": agent("done", 0.3),
        "changed": true, "checkpoint": {"commit": "abc", "tree": "def", "changed": true},
        "files_changed": ["lib/greet.sh"], "diff_stat": " lib/greet.sh | 1 +",
        "scope_violation": [".git/hooks/pre-commit"], "prompt": "p", "transcript": "t"
    }))
    .unwrap()
}

fn event(kind: EventKind) -> Event {
    Event {
        time: "2026-01-01T00:00:00Z".into(),
        run: "TASK-1".into(),
        kind,
    }
}

fn finished(step: &str, uses: Uses, ms: u64) -> Event {
    event(EventKind::StepFinished {
        step: step.into(),
        uses,
        turn: Some(1),
        ok: true,
        duration_ms: ms,
        summary: format!("{step} <done>"),
        waiting: false,
    })
}

fn records() -> RunRecords {
    RunRecords {
        state: state(),
        outcome: "blocked: the turn limit was reached without approval".into(),
        events: vec![
            finished("implement", Uses::Agent, 900),
            finished("verify", Uses::Verify, 100),
            finished("security_review", Uses::Agent, 50),
            finished("review", Uses::Agent, 50),
            event(EventKind::Warning {
                message: "stall detected; nudging the player: change approach".into(),
            }),
            finished("gate", Uses::Gate, 1),
        ],
        turns: vec![TurnData {
            records: TurnRecords {
                loop_id: String::new(),
                turn: 1,
                player: Some(player()),
                verify: None,
                reviews: vec![
                    review(
                        "security_review",
                        "feedback",
                        "unsafe <img src=x onerror=alert(3)>",
                    ),
                    review("review", "approve", "looks fine"),
                ],
                gate: None,
            },
            diff: "diff --git a/lib/greet.sh b/lib/greet.sh\n+<script>alert(1)</script>\n".into(),
            log_tails: BTreeMap::new(),
        }],
        net_diff: "diff --git a/lib/greet.sh b/lib/greet.sh\n+<b>net</b>\n".into(),
        computed_net_diff: None,
        closing: None,
    }
}

fn select<'a>(page: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    page.select(&Selector::parse(css).unwrap()).collect()
}

#[test]
fn one_bar_per_step_coloured_by_kind_with_the_nudge_and_the_violation_marked() {
    let page = Html::parse_document(&render_run(&records()).unwrap());
    let kinds: Vec<&str> = select(&page, ".timeline .row.step")
        .iter()
        .map(|row| row.value().attr("data-kind").unwrap())
        .collect();
    assert_eq!(kinds, ["agent", "check", "review", "review", "gate"]);
    assert_eq!(select(&page, ".timeline .bar").len(), 5);
    assert_eq!(
        select(&page, ".timeline .row.mark[data-mark=nudge]").len(),
        1
    );
    let flagged = select(&page, ".row.step[data-step=implement] .flag");
    assert_eq!(flagged.len(), 1);
    assert!(flagged[0]
        .value()
        .attr("title")
        .unwrap()
        .contains(".git/hooks/pre-commit"));
}

#[test]
fn every_reviewers_verdict_and_issues_appear() {
    let page = Html::parse_document(&render_run(&records()).unwrap());
    let verdicts: Vec<(String, String)> = select(&page, ".review")
        .iter()
        .map(|r| {
            let decision = r
                .select(&Selector::parse("[data-decision]").unwrap())
                .next()
                .unwrap();
            (
                r.value().attr("data-review").unwrap().to_string(),
                decision.value().attr("data-decision").unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        verdicts,
        [
            ("security_review".to_string(), "feedback".to_string()),
            ("review".to_string(), "approve".to_string())
        ]
    );
    let issues: Vec<String> = select(&page, ".review .issue")
        .iter()
        .map(|i| i.text().collect())
        .collect();
    assert!(
        issues[0].contains("unsafe <img src=x onerror=alert(3)>"),
        "{issues:?}"
    );
}

#[test]
fn nothing_from_records_becomes_markup() {
    let html = render_run(&records()).unwrap();
    let page = Html::parse_document(&html);
    assert!(select(&page, "script").is_empty(), "{html}");
    assert!(select(&page, "img").is_empty(), "{html}");
    assert!(select(&page, "b").is_empty(), "{html}");
    let diff: String = select(&page, "#turn-1 .diff")[0].text().collect();
    assert!(diff.contains("+<script>alert(1)</script>"), "{diff}");
    let title: String = select(&page, "h1")[0].text().collect();
    assert_eq!(title, "TASK-1: Greet <b>everyone</b>");
}

#[test]
fn per_turn_cost_and_tokens_add_up_every_agent_of_the_turn() {
    let page = Html::parse_document(&render_run(&records()).unwrap());
    let spend: String = select(&page, "#turn-1 .spend")[0].text().collect();
    assert_eq!(spend, "cost $0.50 · 120 tokens in, 15 out");
}

#[test]
fn durations_read_as_a_person_would_say_them() {
    assert_eq!(duration(850), "850 ms");
    assert_eq!(duration(12_340), "12.3 s");
    assert_eq!(duration(245_000), "4 min 05 s");
}

#[test]
fn a_second_loops_turns_and_reviewers_are_loaded_and_shown_apart() {
    use crate::engine::turn::write_record;
    let dir = tempfile::tempdir().unwrap();
    let paths = crate::engine::paths::RunPaths::new(dir.path(), "TASK-1");
    std::fs::create_dir_all(&paths.dir).unwrap();
    let mut state = state();
    for id in ["cycle", "second"] {
        state.loops.insert(id.into(), Default::default());
    }
    let mut first = player();
    first.checkpoint.changed = false;
    write_record(&paths.turn_record("player", 1), &first).unwrap();
    let second = PlayerRecord {
        step: "implement2".into(),
        ..first
    };
    write_record(&paths.turn_record("second_player", 1), &second).unwrap();
    write_record(
        &paths.turn_record("second_coach", 1),
        &review("review2", "approve", "fine"),
    )
    .unwrap();
    write_record(
        &paths.dir.join("second_coach_security2_turn_1.json"),
        &review("security2", "feedback", "unsafe"),
    )
    .unwrap();

    let records = RunRecords::load(&paths, state, "blocked".into(), None);

    let loaded: Vec<(&str, u32, usize)> = records
        .turns
        .iter()
        .map(|t| (t.loop_id.as_str(), t.turn, t.reviews.len()))
        .collect();
    assert_eq!(loaded, [("", 1, 0), ("second", 1, 2)]);
    let page = Html::parse_document(&render_run(&records).unwrap());
    let heading: String = select(&page, "#second-turn-1 h2")[0].text().collect();
    assert!(heading.starts_with("second · turn 1"), "{heading}");
    let reviews: Vec<&str> = select(&page, "#second-turn-1 .review")
        .iter()
        .map(|r| r.value().attr("data-review").unwrap())
        .collect();
    assert_eq!(reviews, ["review2", "security2"]);
}

#[test]
fn the_page_names_who_signed_off_and_when() {
    let mut records = records();
    records.state.signoffs = vec![crate::engine::state::SignOff {
        step: "signoff".into(),
        answer: crate::engine::state::Answer {
            approved: false,
            by: "command".into(),
            person: "Ada <Lovelace>".into(),
            at: "2026-01-01T00:02:00Z".into(),
            reason: "needs a test".into(),
        },
    }];
    let page = Html::parse_document(&render_run(&records).unwrap());
    let shown: Vec<String> = select(&page, "dd.signoff")
        .iter()
        .map(|dd| dd.text().collect())
        .collect();
    assert_eq!(
        shown,
        ["signoff: rejected by Ada <Lovelace> (command) at 2026-01-01T00:02:00Z: needs a test"]
    );
}

#[test]
fn the_closing_sections_and_the_net_diff_are_shown_escaped_and_uncollapsed() {
    use crate::engine::closing::{Closing, LastFeedback, Recurring};
    let mut records = records();
    records.closing = Some(Closing {
        why: Some("blocked: the turn limit was reached without approval".into()),
        recurring: vec![Recurring {
            issue: "[must_fix] <i>escape</i> the name".into(),
            count: 2,
        }],
        last_feedback: Some(LastFeedback {
            summary: "Fix the greeting".into(),
            failing_checks: Vec::new(),
            unmet_criteria: vec!["AC-001 not met: greets — prints nothing".into()],
        }),
        failure_class: Some("code — the implementation does not yet meet the requirements".into()),
        actions: vec!["Throw the attempt away: `autobuild discard TASK-1`.".into()],
        next_step: None,
        open_notes: Vec::new(),
    });
    let html = render_run(&records).unwrap();
    let page = Html::parse_document(&html);
    let text = |css: &str| -> String { select(&page, css)[0].text().collect() };
    assert!(text("#why").contains("turn limit"));
    assert!(text("#recurring").contains("2× [must_fix] <i>escape</i> the name"));
    assert!(select(&page, "i").is_empty(), "{html}");
    assert!(text("#last-feedback").contains("AC-001 not met"));
    assert!(text("#failure-class").contains("code — "));
    let action: Vec<String> = select(&page, "#actions li code")
        .iter()
        .map(|c| c.text().collect())
        .collect();
    assert_eq!(action, ["autobuild discard TASK-1"]);
    assert!(select(&page, "#next-step").is_empty());
    // The net diff is never collapsed, and printing opens every collapsed block.
    let net = &select(&page, "#net-diff .diff")[0];
    assert!(net
        .ancestors()
        .all(|a| a.value().as_element().is_none_or(|e| e.name() != "details")));
    assert!(text("#net-diff .diff").contains("+<b>net</b>"));
    assert!(select(&page, "b").is_empty(), "{html}");
    let style = text("style");
    let print = &style[style.find("@media print").expect("a print style")..];
    assert!(print.contains("details::details-content"), "{print}");
}

#[test]
fn an_unknown_cost_and_a_zero_cost_are_shown_apart() {
    let mut records = records();
    let turn = &mut records.turns[0].records;
    for review in &mut turn.reviews {
        review.agent.cost_usd = None;
    }
    if let Some(player) = &mut turn.player {
        player.agent.cost_usd = None;
    }
    records.state.cost_usd = 0.0;
    let page = Html::parse_document(&render_run(&records).unwrap());
    let spend: String = select(&page, "#turn-1 .spend")[0].text().collect();
    assert!(spend.starts_with("cost – ·"), "{spend}");
    records.turns[0].records.reviews[0].agent.cost_usd = Some(0.0);
    records.state.cost_reported = true;
    let page = Html::parse_document(&render_run(&records).unwrap());
    let spend: String = select(&page, "#turn-1 .spend")[0].text().collect();
    assert!(spend.starts_with("cost $0.00 ·"), "{spend}");
    let facts: String = select(&page, ".facts")[0].text().collect();
    assert!(facts.contains("$0.00 · 100 tokens in"), "{facts}");
}

#[test]
fn report_md_names_the_pull_request_and_an_estimated_cost_in_words() {
    let mut records = records();
    let markdown = render_markdown(&records, &crate::engine::Outcome::TurnLimit, true).unwrap();
    assert!(
        markdown.contains("- Turns: 1\n- Cost: $0.50\n- Tokens: 100 in, 20 out\n"),
        "{markdown}"
    );
    records.state.cost_estimated = true;
    records.state.pr = serde_json::from_value(json!({"forge": "github", "number": 7,
        "url": "https://x/pull/7", "branch": "b", "base": "main", "head": "h", "opened": true}))
    .unwrap();
    let markdown = render_markdown(&records, &crate::engine::Outcome::TurnLimit, true).unwrap();
    assert!(
        markdown.contains(
            "- Pull request: [#7](https://x/pull/7)\n- Cost: $0.50 (partly estimated from token counts)\n"
        ),
        "{markdown}"
    );
    assert!(markdown.contains("| 1 | 1 file(s) changed | - | - | security_review: feedback (1 issue(s)); review: approve (1 issue(s)) | - |\n"), "{markdown}");
}
