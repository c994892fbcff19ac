//! The run report as one self-contained HTML page: a pure function from the loaded
//! [`RunRecords`] to a string. The page is a minijinja template with HTML auto-escaping (the
//! template's name ends in `.html`), so every string from an agent, a diff, a log or a file is
//! escaped where it is written; this module only shapes the records into what the template
//! shows (timeline rows, per-turn totals, coloured diff lines).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::engine::closing::Closing;
use crate::engine::turn::{CoachRecord, GateRecord, PlayerRecord, VerifyRecord};
use crate::report::records::{RunRecords, TurnData};
use crate::report::timeline::{self, Row};
use base::cost::shown as cost;
use base::error::Error;
use model::steps::check::CheckResult;

#[derive(Serialize)]
struct RunView<'a> {
    task_id: &'a str,
    title: &'a str,
    outcome: &'a str,
    status: &'a str,
    workflow: &'a str,
    branch: &'a str,
    base: &'a str,
    worktree: String,
    started: &'a str,
    updated: &'a str,
    turns_count: usize,
    /// A person's decisions: who, how, when (and a rejection's reason).
    signoffs: Vec<String>,
    cost: String,
    tokens_in: u64,
    tokens_out: u64,
    /// What the prompt caches did ([`base::cost::cache_note`]).
    cache: String,
    elapsed: String,
    timeline: Vec<Row>,
    timeline_total: String,
    turns: Vec<TurnView<'a>>,
    /// The branch's net change over all turns.
    net_diff: Vec<DiffLine<'a>>,
    /// Files the net change touches.
    net_files: usize,
    /// Why it stopped, recurring issues, failure class, actions, next step (as in report.md).
    closing: Option<&'a Closing>,
    /// Answers of agent steps outside loops (a planner's plan).
    answers: Vec<super::answers::Answer>,
    version: &'static str,
}

#[derive(Serialize)]
struct TurnView<'a> {
    anchor: String,
    heading: String,
    cost: String,
    tokens_in: u64,
    tokens_out: u64,
    cache: String,
    player: Option<&'a PlayerRecord>,
    player_status: String,
    player_duration: String,
    diff: Vec<DiffLine<'a>>,
    /// The project's checks, then the executable criteria.
    checks: Vec<CheckView<'a>>,
    /// The coverage measurement, when the profile sets a minimum.
    coverage: Option<CoverageView>,
    reviews: Vec<ReviewView<'a>>,
    gate: Option<&'a GateRecord>,
}

#[derive(Serialize)]
struct DiffLine<'a> {
    class: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
struct CheckView<'a> {
    check: &'a CheckResult,
    passed: bool,
    duration: String,
    log_tail: &'a str,
}

#[derive(Serialize)]
struct CoverageView {
    holds: bool,
    text: String,
}

#[derive(Serialize)]
struct ReviewView<'a> {
    record: &'a CoachRecord,
    decision: &'static str,
    status: String,
    cost: String,
}

/// The HTML page of one run.
pub fn render_run(records: &RunRecords) -> Result<String, Error> {
    let state = &records.state;
    let reviews: BTreeSet<String> = records
        .turns
        .iter()
        .flat_map(|t| t.reviews.iter().map(|r| r.step.clone()))
        .collect();
    let timeline = timeline::rows(
        &records.events,
        &reviews,
        &violations(&records.turns),
        state.status == crate::engine::state::RunStatus::Running,
    );
    let total_ms: u64 = timeline.iter().map(|r| r.duration_ms).sum();
    let view = RunView {
        task_id: &state.task_id,
        title: &state.title,
        outcome: &records.outcome,
        status: state.status.as_str(),
        workflow: &state.workflow,
        branch: &state.branch,
        base: &state.base_branch,
        worktree: state.worktree.display().to_string(),
        started: &state.started_at,
        updated: &state.updated_at,
        turns_count: records.turns.len(),
        signoffs: state
            .signoffs
            .iter()
            .map(|s| format!("`{}`: {}", s.step, s.describe()))
            .collect(),
        cost: cost(state.cost(), state.cost_estimated),
        tokens_in: state.tokens_in,
        tokens_out: state.tokens_out,
        cache: base::cost::cache_note(state.tokens_cached, state.tokens_cache_written),
        elapsed: duration(state.elapsed_ms),
        timeline,
        timeline_total: duration(total_ms),
        turns: records.turns.iter().map(turn_view).collect(),
        net_diff: diff_lines(&records.net_diff),
        net_files: records
            .net_diff
            .lines()
            .filter(|l| l.starts_with("diff "))
            .count(),
        closing: records.closing.as_ref(),
        answers: super::answers::answers(state),
        version: env!("CARGO_PKG_VERSION"),
    };
    super::render("run.html", &view)
}

/// Scope violations by step and turn, for the timeline's marks.
fn violations(turns: &[TurnData]) -> BTreeMap<(String, u32), Vec<String>> {
    let mut found = BTreeMap::new();
    for turn in turns {
        let player = turn.player.iter().map(|p| (&p.step, &p.scope_violation));
        let reviews = turn.reviews.iter().map(|r| (&r.step, &r.scope_violation));
        for (step, paths) in player.chain(reviews) {
            if !paths.is_empty() {
                found.insert((step.clone(), turn.turn), paths.clone());
            }
        }
    }
    found
}

fn turn_view<'a>(turn: &'a TurnData) -> TurnView<'a> {
    let agents = turn
        .player
        .iter()
        .map(|p| &p.agent)
        .chain(turn.reviews.iter().map(|r| &r.agent));
    let (mut spent, mut estimated, mut tokens) = (None, false, agents::TokenUsage::default());
    for agent in agents {
        if let Some(c) = agent.cost_usd {
            spent = Some(spent.unwrap_or(0.0) + c);
        }
        estimated |= agent.cost_estimated;
        tokens.add(agent.usage);
    }
    let heading = if turn.loop_id.is_empty() {
        format!("Turn {}", turn.turn)
    } else {
        format!("{} · turn {}", turn.loop_id, turn.turn)
    };
    let checks = |verify: Option<&'a VerifyRecord>| -> Vec<CheckView<'a>> {
        verify
            .into_iter()
            .flat_map(|v| {
                v.checks
                    .iter()
                    .chain(&v.criteria)
                    .chain(v.coverage.as_ref().map(|c| &c.check))
            })
            .map(|check| CheckView {
                check,
                passed: check.passed(),
                duration: duration(check.duration_ms),
                log_tail: turn
                    .log_tails
                    .get(&check.log_path.display().to_string())
                    .map_or("", String::as_str),
            })
            .collect()
    };
    TurnView {
        anchor: format!("{}turn-{}", loop_anchor(&turn.loop_id), turn.turn),
        heading,
        cost: cost(spent, estimated),
        tokens_in: tokens.input,
        tokens_out: tokens.output,
        cache: base::cost::cache_note(tokens.cached, tokens.cache_written),
        player: turn.player.as_ref(),
        player_status: turn
            .player
            .as_ref()
            .map(|p| agent_status(&p.agent))
            .unwrap_or_default(),
        player_duration: turn
            .player
            .as_ref()
            .map(|p| duration(p.agent.duration.as_millis() as u64))
            .unwrap_or_default(),
        diff: diff_lines(&turn.diff),
        checks: checks(turn.verify.as_ref()),
        coverage: turn
            .verify
            .as_ref()
            .and_then(|v| v.coverage.as_ref())
            .map(|c| CoverageView {
                holds: c.holds(),
                text: c.summary(),
            }),
        reviews: turn
            .reviews
            .iter()
            .map(|record| ReviewView {
                record,
                decision: record
                    .verdict
                    .as_ref()
                    .map_or("none", |v| v.decision.as_str()),
                status: agent_status(&record.agent),
                cost: cost(record.agent.cost_usd, record.agent.cost_estimated),
            })
            .collect(),
        gate: turn.gate.as_ref(),
    }
}

/// Anchors are ids: a loop id is a step id, but only its id-safe characters are kept.
fn loop_anchor(loop_id: &str) -> String {
    if loop_id.is_empty() {
        return String::new();
    }
    let safe: String = loop_id
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    format!("{safe}-")
}

fn agent_status(agent: &agents::AgentOutcome) -> String {
    if agent.status.is_success() {
        agent.status.name().to_string()
    } else {
        format!("{}: {}", agent.status.name(), agent.status.message())
    }
}

fn diff_lines(diff: &str) -> Vec<DiffLine<'_>> {
    diff.lines()
        .map(|text| DiffLine {
            class: if text.starts_with("+++") || text.starts_with("---") {
                "file"
            } else if text.starts_with('+') {
                "add"
            } else if text.starts_with('-') {
                "del"
            } else if text.starts_with("@@") {
                "hunk"
            } else if text.starts_with("diff ") {
                "file"
            } else {
                "ctx"
            },
            text,
        })
        .collect()
}

/// `850 ms`, `12.3 s`, `4 min 05 s`.
pub(crate) fn duration(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms} ms")
    } else if ms < 60_000 {
        format!("{:.1} s", ms as f64 / 1000.0)
    } else {
        format!("{} min {:02} s", ms / 60_000, (ms % 60_000) / 1000)
    }
}

#[cfg(test)]
#[path = "html_tests.rs"]
mod tests;
