//! The run report as one self-contained HTML page: a pure function from the loaded
//! [`RunRecords`] to a string. The page is a minijinja template with HTML auto-escaping (the
//! template's name ends in `.html`), so every string from an agent, a diff, a log or a file is
//! escaped where it is written; this module only shapes the records into what the template
//! shows (timeline rows, per-turn totals, coloured diff lines).

use std::collections::{BTreeMap, BTreeSet};

use base::Keyword;
use serde::Serialize;

use crate::engine::closing::Closing;
use crate::engine::state::{RunState, RunStatus};
use crate::engine::turn::{CoachRecord, GateRecord, PlayerRecord, VerifyRecord};
use crate::engine::Outcome;
use crate::report::records::{all_checks, RunRecords, TurnData};
use crate::report::timeline::{self, Row};
use base::cost::shown as cost;
use base::error::Error;
use model::steps::check::CheckResult;

#[derive(Serialize)]
struct RunView<'a> {
    state: &'a RunState,
    outcome: &'a str,
    status: &'a str,
    worktree: String,
    turns_count: usize,
    /// A person's decisions: who, how, when (and a rejection's reason).
    signoffs: Vec<String>,
    cost: String,
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

/// What `report.md` says beyond the page's facts.
#[derive(Serialize)]
struct MarkdownView<'a> {
    #[serde(flatten)]
    run: RunView<'a>,
    /// The outcome as recorded (the page puts a discarded run's in its sentence).
    ended: String,
    sandbox: Option<String>,
    /// The cost without an estimate's `~`: report.md says that in words.
    exact_cost: Option<String>,
    /// Read where the run is (not a pull request's text): the next step means something.
    here: bool,
    /// Where the worktree is kept means something.
    preserved: bool,
}

#[derive(Serialize)]
struct TurnView<'a> {
    anchor: String,
    heading: String,
    /// `3`, or `polish 3` in a later loop: the turn in report.md's table.
    label: String,
    /// report.md's cells of the player, the project's checks and the reviewers.
    player_cell: String,
    checks_cell: String,
    coach_cell: String,
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
    super::render("run.html", &run_view(records))
}

/// `report.md` of one run that ended with `ended`. `here`: it is read where the run is (its
/// `report.md`), so it says where the worktree is kept and what to run next; elsewhere (a pull
/// request's text) neither means anything.
pub fn render_markdown(records: &RunRecords, ended: &Outcome, here: bool) -> Result<String, Error> {
    let state = &records.state;
    let discarded = state.status == RunStatus::Discarded;
    let view = MarkdownView {
        run: run_view(records),
        ended: ended.to_string(),
        sandbox: state.sandbox.as_ref().map(ToString::to_string),
        exact_cost: state.cost().map(|usd| cost(Some(usd), false)),
        here,
        preserved: here && !matches!(ended, Outcome::Approved { merged: true }) && !discarded,
    };
    super::render("run.md", &view)
}

fn run_view(records: &RunRecords) -> RunView<'_> {
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
        state.status == RunStatus::Running,
    );
    let total_ms: u64 = timeline.iter().map(|r| r.duration_ms).sum();
    RunView {
        state,
        outcome: &records.outcome,
        status: state.status.as_str(),
        worktree: state.worktree.display().to_string(),
        turns_count: records.turns.len(),
        signoffs: state
            .signoffs
            .iter()
            .map(|s| format!("`{}`: {}", s.step, s.describe()))
            .collect(),
        cost: cost(state.cost(), state.cost_estimated),
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
    }
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
    TurnView {
        anchor: format!("{}turn-{}", loop_anchor(&turn.loop_id), turn.turn),
        heading,
        label: turn.label(),
        player_cell: turn.player.as_ref().map_or("-".to_string(), player_cell),
        checks_cell: turn.verify.as_ref().map_or("-".to_string(), checks_cell),
        coach_cell: coach_cell(&turn.reviews),
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
        checks: all_checks(turn.verify.as_ref())
            .map(|check| CheckView {
                check,
                passed: check.passed(),
                duration: duration(check.duration_ms),
                log_tail: turn
                    .log_tails
                    .get(&check.log_path.display().to_string())
                    .map_or("", String::as_str),
            })
            .collect(),
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

fn player_cell(player: &PlayerRecord) -> String {
    if player.succeeded() {
        format!("{} file(s) changed", player.files_changed.len())
    } else {
        format!("failed ({})", player.agent.status.name())
    }
}

/// The project's checks (the criteria have a column of their own).
fn checks_cell(verify: &VerifyRecord) -> String {
    let failed: Vec<String> = verify
        .checks
        .iter()
        .filter(|c| !c.passed())
        .map(|c| match c.advisory {
            true => format!("{} (advisory)", c.name),
            false => c.name.clone(),
        })
        .collect();
    if failed.is_empty() {
        format!("{} passed", verify.checks.len())
    } else {
        format!("failed: {}", failed.join(", "))
    }
}

/// Every reviewer's decision, by its step when there are several.
fn coach_cell(reviews: &[CoachRecord]) -> String {
    let decisions: Vec<String> = reviews
        .iter()
        .filter_map(|c| c.verdict.as_ref().map(|v| (c, v)))
        .map(|(c, v)| {
            let decision = format!("{} ({} issue(s))", v.decision.as_str(), v.issues.len());
            match reviews.len() {
                1 => decision,
                _ => format!("{}: {decision}", c.step),
            }
        })
        .collect();
    match decisions.is_empty() {
        true => "-".to_string(),
        false => decisions.join("; "),
    }
}

/// `text` as a Markdown block quote.
pub(crate) fn quoted(text: String) -> String {
    text.lines()
        .map(|line| match line.is_empty() {
            true => ">".to_string(),
            false => format!("> {line}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
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
