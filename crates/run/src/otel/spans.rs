//! A run session's spans, from its records alone (a pure function over the event stream and the
//! turn records, table-tested): the run, each turn, each step, each agent call and each check,
//! with the GenAI semantic conventions' attributes on agent calls (`gen_ai.operation.name`,
//! `gen_ai.agent.name`, `gen_ai.request.model`, `gen_ai.usage.input_tokens` / `output_tokens`)
//! and autobuild's own (`autobuild.turn`, `autobuild.gate.approved`,
//! `autobuild.stall.signature`, …).
//!
//! Steps run one after another, so each is placed where the one before it ended (or at its
//! start event, when that is later: time the run waited); a turn spans its steps; the checks of
//! a `verify` step are laid end to end inside it, as they ran.

use std::collections::BTreeMap;

use base::Keyword;
use sha2::{Digest, Sha256};

use super::proto::{Span, Value};
use crate::engine::events::{Event, EventKind};
use crate::engine::records::TurnRecords;
use model::workflow::kinds::Uses;

/// What the spans of one session are made from.
pub struct RunFacts<'a> {
    pub trace_id: [u8; 16],
    pub task: &'a str,
    pub workflow: &'a str,
    pub outcome: &'a str,
    /// The session's events, from its `run_started` on.
    pub events: &'a [Event],
    pub turns: &'a [TurnRecords],
    /// Each role's adapter and model.
    pub roles: &'a BTreeMap<String, (String, Option<String>)>,
}

/// A span id derived from the trace and a name unique in it.
pub fn span_id(trace: &[u8; 16], name: &str) -> [u8; 8] {
    let digest = Sha256::new()
        .chain_update(trace)
        .chain_update(name)
        .finalize();
    let mut id = [0u8; 8];
    id.copy_from_slice(&digest[..8]);
    id
}

/// The events of a run's last session: from its last `run_started` on.
pub fn last_session(events: &[Event]) -> &[Event] {
    let start = events
        .iter()
        .rposition(|e| matches!(e.kind, EventKind::RunStarted { .. }))
        .unwrap_or(0);
    &events[start..]
}

/// Milliseconds since the Unix epoch of an RFC 3339 time.
fn unix_ms(time: &str) -> Option<u64> {
    humantime::parse_rfc3339_weak(time)
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()
        .map(|d| d.as_millis() as u64)
}

fn ms(event: &Event) -> Option<u64> {
    unix_ms(&event.time)
}

fn attr(key: &str, value: Value) -> (String, Value) {
    (key.to_string(), value)
}

fn text(value: &str) -> Value {
    Value::Str(value.to_string())
}

/// The run span of the session `events` begin (from its `run_started`).
pub fn run_span_id(trace: &[u8; 16], events: &[Event]) -> [u8; 8] {
    span_id(trace, &format!("run@{}", session_start(events).0))
}

fn session_start(events: &[Event]) -> (u64, bool) {
    events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::RunStarted { resumed, .. } => Some((ms(e).unwrap_or(0), *resumed)),
            _ => None,
        })
        .unwrap_or((0, false))
}

/// A feature's spans: the feature, and one per task that ran, linked to the task's own trace
/// (`task_traces`: its trace and run span, when it was exported).
pub fn feature_spans(
    trace: [u8; 16],
    state: &crate::feature::state::FeatureState,
    task_traces: &BTreeMap<String, ([u8; 16], [u8; 8])>,
) -> Vec<Span> {
    let at = |text: &str| unix_ms(text).map(|ms| ms * 1_000_000);
    let start = at(&state.started_at).unwrap_or(0);
    let end = at(&state.updated_at).unwrap_or(start).max(start);
    let root = span_id(&trace, &format!("feature@{start}"));
    let mut spans = vec![Span {
        trace_id: trace,
        span_id: root,
        parent: None,
        name: format!("autobuild.feature {}", state.feature_id),
        client: false,
        start_unix_nano: start,
        end_unix_nano: end,
        attributes: vec![
            attr("autobuild.feature.id", text(&state.feature_id)),
            attr("autobuild.feature.status", text(state.status.as_str())),
            attr("autobuild.waves", Value::Int(state.waves.len() as i64)),
        ],
        links: Vec::new(),
        error: None,
    }];
    for (id, record) in state.tasks.iter() {
        let Some(began) = record.started_at.as_deref().and_then(at) else {
            continue;
        };
        let ended = record
            .finished_at
            .as_deref()
            .and_then(at)
            .unwrap_or(end)
            .max(began);
        spans.push(Span {
            trace_id: trace,
            span_id: span_id(&trace, &format!("task@{id}@{began}")),
            parent: Some(root),
            name: format!("task {id}"),
            client: false,
            start_unix_nano: began,
            end_unix_nano: ended,
            attributes: vec![
                attr("autobuild.task.id", text(id)),
                attr("autobuild.task.status", text(record.status.as_str())),
                attr("autobuild.wave", Value::Int(record.wave as i64)),
            ],
            links: task_traces.get(id).into_iter().copied().collect(),
            error: record
                .status
                .is_failure()
                .then(|| record.status.as_str().to_string()),
        });
    }
    spans
}

/// Every span of the session, the run's first.
pub fn run_spans(facts: &RunFacts<'_>) -> Vec<Span> {
    let trace = facts.trace_id;
    let (start, resumed) = session_start(facts.events);
    let run_id = run_span_id(&trace, facts.events);
    let mut cursor = start;
    let mut steps: Vec<Span> = Vec::new();
    let mut turns: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    let mut open: Option<(String, u64)> = None;
    for event in facts.events {
        match &event.kind {
            EventKind::StepStarted { step, .. } => {
                open = Some((step.clone(), cursor.max(ms(event).unwrap_or(cursor))));
            }
            EventKind::StepFinished {
                step,
                uses,
                turn,
                ok,
                duration_ms,
                summary,
                ..
            } => {
                let began = match open.take() {
                    Some((name, at)) if name == *step => at,
                    _ => cursor,
                };
                let end = began + duration_ms;
                cursor = cursor.max(end);
                let key = format!("{step}@{}@{began}", turn.unwrap_or(0));
                let id = span_id(&trace, &key);
                let parent = match turn {
                    Some(n) => {
                        let span = turns.entry(*n).or_insert((began, end));
                        span.0 = span.0.min(began);
                        span.1 = span.1.max(end);
                        span_id(&trace, &format!("turn@{n}"))
                    }
                    None => run_id,
                };
                let mut attributes = vec![
                    attr("autobuild.step.id", text(step)),
                    attr("autobuild.step.uses", text(uses.as_str())),
                ];
                if let Some(n) = turn {
                    attributes.push(attr("autobuild.turn", Value::Int(i64::from(*n))));
                }
                let record = turn.and_then(|n| {
                    facts
                        .turns
                        .iter()
                        .find(|t| t.turn == n && t.loop_id.is_empty())
                });
                if *uses == Uses::Gate {
                    if let Some(gate) = record.and_then(|t| t.gate.as_ref()) {
                        attributes.push(attr(
                            "autobuild.gate.approved",
                            Value::Bool(gate.decision.approved),
                        ));
                    }
                }
                steps.push(Span {
                    trace_id: trace,
                    span_id: id,
                    parent: Some(parent),
                    name: format!("step {step}"),
                    client: false,
                    start_unix_nano: began * 1_000_000,
                    end_unix_nano: end * 1_000_000,
                    attributes,
                    links: Vec::new(),
                    error: (!ok).then(|| summary.clone()),
                });
                if let Some(record) = record {
                    steps.extend(children(facts, record, step, *uses, id, began, end));
                }
            }
            _ => {}
        }
    }
    let end = facts
        .events
        .iter()
        .rev()
        .find_map(|e| match e.kind {
            EventKind::RunFinished { .. } => ms(e),
            _ => None,
        })
        .unwrap_or(cursor)
        .max(cursor);
    let mut spans = vec![Span {
        trace_id: trace,
        span_id: run_id,
        parent: None,
        name: format!("autobuild.run {}", facts.task),
        client: false,
        start_unix_nano: start * 1_000_000,
        end_unix_nano: end * 1_000_000,
        attributes: vec![
            attr("autobuild.task.id", text(facts.task)),
            attr("autobuild.workflow", text(facts.workflow)),
            attr("autobuild.outcome", text(facts.outcome)),
            attr("autobuild.resumed", Value::Bool(resumed)),
            attr("autobuild.turns", Value::Int(turns.len() as i64)),
        ],
        links: Vec::new(),
        error: None,
    }];
    for (n, (began, ended)) in &turns {
        let record = facts
            .turns
            .iter()
            .find(|t| t.turn == *n && t.loop_id.is_empty());
        let mut attributes = vec![attr("autobuild.turn", Value::Int(i64::from(*n)))];
        if let Some(gate) = record.and_then(|t| t.gate.as_ref()) {
            attributes.push(attr(
                "autobuild.gate.approved",
                Value::Bool(gate.decision.approved),
            ));
            attributes.push(attr("autobuild.stall.signature", text(&gate.signature)));
        }
        spans.push(Span {
            trace_id: trace,
            span_id: span_id(&trace, &format!("turn@{n}")),
            parent: Some(run_id),
            name: format!("turn {n}"),
            client: false,
            start_unix_nano: began * 1_000_000,
            end_unix_nano: ended * 1_000_000,
            attributes,
            links: Vec::new(),
            error: None,
        });
    }
    spans.extend(steps);
    spans
}

/// The agent call of an agent step, or the checks and criteria of a `verify` step.
fn children(
    facts: &RunFacts<'_>,
    record: &TurnRecords,
    step: &str,
    uses: Uses,
    parent: [u8; 8],
    began: u64,
    end: u64,
) -> Vec<Span> {
    let trace = facts.trace_id;
    match uses {
        Uses::Agent => {
            let called = record
                .player
                .iter()
                .filter(|p| p.step == step)
                .map(|p| (&p.role, &p.agent))
                .chain(
                    record
                        .reviews
                        .iter()
                        .filter(|r| r.step == step)
                        .map(|r| (&r.role, &r.agent)),
                );
            called
                .map(|(role, agent)| {
                    let (adapter, model) = facts.roles.get(role).cloned().unwrap_or_default();
                    let mut attributes = vec![
                        attr("gen_ai.operation.name", text("invoke_agent")),
                        attr("gen_ai.agent.name", text(role)),
                        attr("gen_ai.system", text(&adapter)),
                        attr(
                            "gen_ai.usage.input_tokens",
                            Value::Int(agent.usage.input as i64),
                        ),
                        attr(
                            "gen_ai.usage.output_tokens",
                            Value::Int(agent.usage.output as i64),
                        ),
                        attr("autobuild.turn", Value::Int(i64::from(record.turn))),
                    ];
                    if let Some(model) = model {
                        attributes.push(attr("gen_ai.request.model", text(&model)));
                    }
                    if let Some(cost) = agent.cost_usd {
                        attributes.push(attr("autobuild.cost_usd", Value::Double(cost)));
                    }
                    let failed = match &agent.status {
                        agents::AgentStatus::Succeeded => None,
                        other => Some(other.name().to_string()),
                    };
                    Span {
                        trace_id: trace,
                        span_id: span_id(&trace, &format!("agent@{step}@{began}@{role}")),
                        parent: Some(parent),
                        name: format!("invoke_agent {role}"),
                        client: true,
                        start_unix_nano: began * 1_000_000,
                        end_unix_nano: end * 1_000_000,
                        attributes,
                        links: Vec::new(),
                        error: failed,
                    }
                })
                .collect()
        }
        Uses::Verify => {
            let Some(verify) = &record.verify else {
                return Vec::new();
            };
            let mut at = began;
            verify
                .checks
                .iter()
                .map(|c| ("check", c))
                .chain(verify.criteria.iter().map(|c| ("criterion", c)))
                .map(|(kind, check)| {
                    let start = at;
                    at += check.duration_ms;
                    Span {
                        trace_id: trace,
                        span_id: span_id(&trace, &format!("{kind}@{step}@{began}@{}", check.name)),
                        parent: Some(parent),
                        name: format!("{kind} {}", check.name),
                        client: false,
                        start_unix_nano: start * 1_000_000,
                        end_unix_nano: at.min(end.max(start + check.duration_ms)) * 1_000_000,
                        attributes: vec![
                            attr("autobuild.check.name", text(&check.name)),
                            attr("autobuild.check.status", text(check.status.as_str())),
                            attr("autobuild.turn", Value::Int(i64::from(record.turn))),
                        ],
                        links: Vec::new(),
                        error: (!check.passed()).then(|| check.status.as_str().to_string()),
                    }
                })
                .collect()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
#[path = "spans_tests.rs"]
mod tests;
