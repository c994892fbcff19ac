//! The workflow interpreter: walks the steps in order, evaluates `if`/`until`, runs loops with
//! their bound and stall detection, enforces run limits, and persists after every step.
//!
//! Resuming is the same walk over a loaded [`RunState`]: a step whose path is recorded as
//! completed is not executed again, its outputs are restored into the expression context.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::Deserialize;
use serde_json::{json, Map, Value};

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use crate::engine::exec;
use crate::engine::outcome::{skip_reason, Outcome};
use crate::engine::state::StepRecord;
use crate::engine::turn::Turn;
use crate::engine::walk_error::WalkError;
use base::error::Error;
use model::steps::stall::{self, StallAction, StallPolicy, TurnFacts};
use model::workflow::expr;
use model::workflow::kinds::LoopStep;
use model::workflow::kinds::{GateOutputs, LoopExit, LoopOutputs, MergeOutputs};
use model::workflow::model::{Action, Step};

/// Why the walk stops running ordinary steps (`always` steps still run).
#[derive(Debug, Clone)]
enum Stop {
    Outcome(Outcome),
}

/// Outputs visible to expressions, one frame per loop nesting level.
#[derive(Debug, Default, Clone)]
struct Frame {
    prefix: String,
    outputs: Map<String, Value>,
    prev: Map<String, Value>,
}

pub struct Interpreter<'a, 'p> {
    cx: &'a mut RunCx<'p>,
    frames: Vec<Frame>,
    stop: Option<Stop>,
    /// The last loop's exit, which decides blocked vs stalled.
    loop_exits: Vec<LoopExit>,
    last_gate_approved: Option<bool>,
    merged: bool,
    /// Events about a finished turn (the turn itself, a stall nudge) that wait for the state
    /// recording them to be saved: they are logged after that save, so a kill in between
    /// cannot log them twice. The turn's facts are saved together with the next iteration's
    /// start or the loop's end, rather than in a save of their own.
    unsaved_events: Vec<EventKind>,
}

impl<'a, 'p> Interpreter<'a, 'p> {
    pub fn new(cx: &'a mut RunCx<'p>) -> Self {
        Interpreter {
            cx,
            frames: vec![Frame::default()],
            stop: None,
            loop_exits: Vec::new(),
            last_gate_approved: None,
            merged: false,
            unsaved_events: Vec::new(),
        }
    }

    /// Saves the state, then logs the events that waited for it.
    fn save_state(&mut self) -> Result<(), Error> {
        self.cx.save_state()?;
        for event in std::mem::take(&mut self.unsaved_events) {
            self.cx.emit(event);
        }
        Ok(())
    }

    /// Runs the whole workflow and says how it ended.
    pub fn run(mut self) -> Result<Outcome, Error> {
        let steps = self.cx.plan.resolved.workflow.steps.clone();
        self.walk(&steps)?;
        // The worktree is left as checkpointed, whatever the last step was.
        if let Err(error) = exec::leftovers::remove(self.cx) {
            self.cx.emit(EventKind::Warning {
                message: format!(
                    "cannot remove what the last checks left in the worktree: {error}"
                ),
            });
        }
        Ok(self.outcome())
    }

    fn outcome(&self) -> Outcome {
        if let Some(Stop::Outcome(outcome)) = &self.stop {
            return outcome.clone();
        }
        match self.loop_exits.last() {
            Some(LoopExit::Stalled) => {
                return Outcome::Stalled {
                    reason: self.cx.stall_reason.clone().unwrap_or_default(),
                }
            }
            Some(LoopExit::Exhausted) => return Outcome::TurnLimit,
            _ => {}
        }
        match self.last_gate_approved {
            Some(false) => Outcome::TurnLimit,
            _ => Outcome::Approved {
                merged: self.merged,
            },
        }
    }

    fn walk(&mut self, steps: &[Step]) -> Result<(), Error> {
        for step in steps {
            if let Some(stop) = self.limit_stop(&step.action) {
                self.stop.get_or_insert(stop);
            }
            let path = self.path_of(&step.id);
            if self.stop.is_some() && !step.always {
                continue;
            }
            if let Some(record) = self.cx.state.completed.get(&path).cloned() {
                self.note_outcome(step, &record.outputs);
                self.record_outputs(step, record.outputs);
                if let Action::Loop(_) = step.action {
                    self.note_loop_exit(&step.id);
                }
                continue;
            }
            if let Some(condition) = &step.condition {
                let holds =
                    expr::eval_bool(condition, self.expression_context()).map_err(|source| {
                        WalkError::Condition {
                            step: step.id.clone(),
                            source,
                        }
                    })?;
                if !holds {
                    let is_merge = matches!(step.action, Action::Merge(_));
                    let reason = skip_reason(is_merge, condition, &self.outcome());
                    self.cx.emit(EventKind::StepSkipped {
                        step: step.id.clone(),
                        reason,
                    });
                    continue;
                }
            }
            match &step.action {
                Action::Loop(LoopStep {
                    max_iterations,
                    until,
                    stall,
                    steps: body,
                }) => {
                    // A continued blocked run counts its bound on from the turns it already ran.
                    let earlier = self.cx.state.loops.get(&step.id).map_or(0, |l| l.earlier);
                    let max = earlier + *max_iterations;
                    self.run_loop(step, max, until.as_deref(), stall.as_ref(), body)?;
                }
                _ => self.run_step(step, &path)?,
            }
        }
        Ok(())
    }

    fn run_step(&mut self, step: &Step, path: &str) -> Result<(), Error> {
        self.cx.outcome_so_far = Some(self.outcome());
        let turn = self.cx.turn.as_ref().map(|t| t.number);
        self.cx.emit(EventKind::StepStarted {
            step: step.id.clone(),
            uses: step.action.uses(),
            turn,
        });
        let clock = Instant::now();
        self.cx.answering = std::time::Duration::ZERO;
        let context = self.expression_context();
        let result = exec::execute(self.cx, step, &context);
        let duration_ms = clock
            .elapsed()
            .saturating_sub(self.cx.answering)
            .as_millis() as u64;
        let done = match result {
            Ok(done) => done,
            Err(error) => {
                self.cx.emit(EventKind::StepFinished {
                    step: step.id.clone(),
                    uses: step.action.uses(),
                    turn,
                    ok: false,
                    duration_ms,
                    summary: error.to_string(),
                    waiting: false,
                });
                self.stop.get_or_insert(Stop::Outcome(Outcome::Failed {
                    message: format!("step `{}`: {error}", step.id),
                    infrastructure: false,
                }));
                return Ok(());
            }
        };
        self.cx.emit(EventKind::StepFinished {
            step: step.id.clone(),
            uses: step.action.uses(),
            turn,
            ok: done.ok,
            duration_ms,
            summary: done.summary.clone(),
            waiting: matches!(done.stop, Some(Outcome::Waiting { .. })),
        });
        if done.cancelled {
            self.stop
                .get_or_insert(Stop::Outcome(self.cx.cancel_outcome()));
            return Ok(());
        }
        if let Some(outcome) = done.stop {
            // Not recorded as completed: a resumed run performs the step again.
            self.stop.get_or_insert(Stop::Outcome(outcome));
            self.cx.save_state()?;
            return Ok(());
        }
        let outputs = Value::Object(done.outputs);
        self.note_outcome(step, &outputs);
        // An `always` step that ran because the run is stopping runs again after a resume.
        if self.stop.is_none() {
            self.cx.state.completed.insert(
                path.to_string(),
                StepRecord {
                    ok: done.ok,
                    outputs: outputs.clone(),
                },
            );
        }
        self.cx.save_state()?;
        self.record_outputs(step, outputs);
        if !done.ok && self.cx.turn.is_none() {
            self.stop.get_or_insert(Stop::Outcome(Outcome::Failed {
                message: format!("step `{}`: {}", step.id, done.summary),
                infrastructure: false,
            }));
        }
        Ok(())
    }

    fn run_loop(
        &mut self,
        step: &Step,
        max: u32,
        until: Option<&str>,
        stall_config: Option<&model::workflow::model::StallConfig>,
        body: &[Step],
    ) -> Result<(), Error> {
        let loop_id = step.id.clone();
        let loop_path = self.path_of(&loop_id);
        let first = self
            .cx
            .state
            .loops
            .get(&loop_id)
            .map_or(1, |l| l.iteration.max(1));
        let mut exit = LoopExit::Exhausted;
        let mut iterations = first.saturating_sub(1);
        let mut prev = self.restore_prev(&loop_path, first);
        for iteration in first..=max {
            if self.stop.is_some() {
                break;
            }
            iterations = iteration;
            self.cx
                .state
                .loops
                .entry(loop_id.clone())
                .or_default()
                .iteration = iteration;
            self.cx.start_turn(&loop_id, iteration, max);
            self.save_state()?;
            self.frames.push(Frame {
                prefix: format!("{loop_path}/{iteration}/"),
                outputs: Map::new(),
                prev: std::mem::take(&mut prev),
            });
            let walked = self.walk(body);
            let done: Result<bool, Error> = match (&walked, until, self.stop.is_some()) {
                (Ok(()), Some(expression), false) => {
                    self.finish_turn(iteration, max)?;
                    expr::eval_bool(expression, self.expression_context()).map_err(|source| {
                        WalkError::Until {
                            id: loop_id.to_string(),
                            source,
                        }
                        .into()
                    })
                }
                (Ok(()), None, false) => {
                    self.finish_turn(iteration, max)?;
                    Ok(false)
                }
                _ => Ok(false),
            };
            if let Some(frame) = self.frames.pop() {
                prev = frame.outputs;
            }
            walked?;
            let done = match done {
                Ok(done) => done,
                Err(error) => {
                    self.save_state()?;
                    return Err(error);
                }
            };
            if self.stop.is_some() {
                self.cx.end_turn();
                break;
            }
            if done {
                exit = LoopExit::Done;
                self.cx.end_turn();
                break;
            }
            if let Some(config) = stall_config {
                if let Some(reason) = self.check_stall(&loop_id, config, iteration >= max) {
                    exit = LoopExit::Stalled;
                    self.cx.stall_reason = Some(reason);
                    self.cx.end_turn();
                    break;
                }
            }
            self.cx.end_turn();
        }
        if self.stop.is_some() {
            self.save_state()?;
            return Ok(());
        }
        if let Some(state) = self.cx.state.loops.get_mut(&loop_id) {
            state.exit = Some(exit);
        }
        let outputs = serde_json::to_value(LoopOutputs { iterations, exit }).unwrap_or_default();
        self.cx.state.completed.insert(
            loop_path,
            StepRecord {
                ok: exit == LoopExit::Done,
                outputs: outputs.clone(),
            },
        );
        self.save_state()?;
        self.record_outputs(step, outputs);
        self.loop_exits.push(exit);
        Ok(())
    }

    /// On resume, the previous iteration's outputs come back from the state.
    fn restore_prev(&self, loop_path: &str, iteration: u32) -> Map<String, Value> {
        let prefix = format!("{loop_path}/{}/", iteration.saturating_sub(1));
        self.cx
            .state
            .completed
            .iter()
            .filter_map(|(path, record)| {
                let id = path.strip_prefix(&prefix)?;
                (!id.contains('/')).then(|| (id.to_string(), json!({"outputs": record.outputs})))
            })
            .collect()
    }

    /// What a gate or merge step's outputs say about the run's outcome (live or restored).
    fn note_outcome(&mut self, step: &Step, outputs: &Value) {
        match step.action {
            Action::Gate(_) => {
                self.last_gate_approved = GateOutputs::deserialize(outputs)
                    .ok()
                    .map(|gate| gate.approved)
            }
            Action::Merge(_) => {
                self.merged = MergeOutputs::deserialize(outputs).is_ok_and(|merge| merge.merged)
            }
            _ => {}
        }
    }

    fn note_loop_exit(&mut self, loop_id: &str) {
        if let Some(exit) = self.cx.state.loops.get(loop_id).and_then(|l| l.exit) {
            self.loop_exits.push(exit);
        }
    }

    /// Records the turn's facts for stall detection and tells the display.
    fn finish_turn(&mut self, iteration: u32, max: u32) -> Result<(), Error> {
        let Some(turn) = self.cx.turn.as_ref() else {
            return Ok(());
        };
        let summary = turn.summary();
        let facts = turn.facts();
        if let Some(approved) = turn.gate.as_ref().map(|g| g.decision.approved) {
            self.last_gate_approved = Some(approved);
        }
        let loop_id = turn.loop_id.clone();
        let mut finished_before = false;
        if let Some(state) = self.cx.state.loops.get_mut(&loop_id) {
            // A resumed run may finish the same turn twice; stall detection and the event log
            // count it once.
            finished_before = state.history.iter().any(|f| f.turn == facts.turn);
            state.history.retain(|f| f.turn != facts.turn);
            state.history.push(facts);
        }
        // Logged once the state holding the turn's facts is saved (`unsaved_events`).
        if !finished_before {
            self.unsaved_events.push(EventKind::TurnFinished {
                turn: iteration,
                max_turns: max,
                summary,
            });
        }
        Ok(())
    }

    fn check_stall(
        &mut self,
        loop_id: &str,
        config: &model::workflow::model::StallConfig,
        last_turn: bool,
    ) -> Option<String> {
        let state = self.cx.state.loops.get_mut(loop_id)?;
        let reason = stall::detect_stall(&state.history, config.window);
        let policy = StallPolicy {
            nudge: config.nudge,
        };
        match stall::decide(policy, state.nudged, reason) {
            StallAction::Continue => None,
            // A nudge is a notice for the next turn's prompt: after the last turn nobody reads
            // it, and the loop ends as exhausted anyway.
            StallAction::Nudge(_) if last_turn => None,
            StallAction::Nudge(notice) => {
                state.nudged = true;
                state.stall_notice = Some(notice.clone());
                self.unsaved_events.push(EventKind::Warning {
                    message: format!("stall detected; nudging the player: {notice}"),
                });
                None
            }
            StallAction::Stop(reason) => Some(reason.to_string()),
        }
    }

    /// Cancellation before any step; wall time and budget only before a step that spends them
    /// (an agent, a command, a new loop iteration), so the gate, merge and report of a turn
    /// that already finished within the limits still happen: success on the last allowed turn
    /// counts.
    fn limit_stop(&self, next: &Action) -> Option<Stop> {
        if self.cx.cancel.is_cancelled() {
            return Some(Stop::Outcome(Outcome::Cancelled));
        }
        if !next.kind().spends_budget {
            return None;
        }
        let limits = &self.cx.plan.resolved.workflow.limits;
        if let Some(max) = limits.max_wall_time {
            if self.cx.elapsed() >= max {
                return Some(Stop::Outcome(Outcome::TimedOut));
            }
        }
        if let Some(limit) = limits.max_cost_usd {
            if self.cx.state.cost_usd > limit {
                return Some(Stop::Outcome(Outcome::OverBudget {
                    spent: self.cx.state.cost_usd,
                    limit,
                }));
            }
        }
        None
    }

    fn path_of(&self, id: &str) -> String {
        let prefix = self.frames.last().map_or("", |f| f.prefix.as_str());
        format!("{prefix}{id}")
    }

    fn record_outputs(&mut self, step: &Step, outputs: Value) {
        if let Some(frame) = self.frames.last_mut() {
            frame
                .outputs
                .insert(step.id.clone(), json!({ "outputs": outputs }));
        }
    }

    /// `steps`, `prev`, `inputs`, `task`, `turn` for `if`/`until`.
    fn expression_context(&self) -> Value {
        let mut visible = Map::new();
        for frame in &self.frames {
            for (k, v) in &frame.outputs {
                visible.insert(k.clone(), v.clone());
            }
        }
        let prev = self
            .frames
            .last()
            .map(|f| f.prev.clone())
            .unwrap_or_default();
        let task = &self.cx.plan.task;
        json!({
            "steps": visible,
            "prev": prev,
            "inputs": self.cx.plan.inputs.clone().into_iter().collect::<BTreeMap<_, _>>(),
            "task": {
                "id": task.id,
                "title": task.title,
                "task_type": task.task_type,
                "complexity": task.complexity,
            },
            "turn": self.cx.turn.as_ref().map_or(0, |t| t.number),
        })
    }
}

impl Turn {
    /// The facts stall detection compares across turns.
    pub fn facts(&self) -> TurnFacts {
        TurnFacts {
            turn: self.number,
            tree: self
                .player
                .as_ref()
                .map(|p| p.checkpoint.tree.clone())
                .unwrap_or_default(),
            feedback_signature: self
                .gate
                .as_ref()
                .map(|g| g.signature.clone())
                .unwrap_or_default(),
            criteria_met: self.criteria_progress().0,
            approved: self.gate.as_ref().is_some_and(|g| g.decision.approved),
            infrastructure: self
                .gate
                .as_ref()
                .map(|g| model::steps::feedback::infrastructure_lines(&g.feedback))
                .unwrap_or_default(),
        }
    }
}
