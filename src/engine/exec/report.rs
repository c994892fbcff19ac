//! The `report` step: `report.md`, the run's summary — or, when the run did not get approved,
//! the blocked report a human reads next morning: attempts, recurring issues with counts, the
//! last feedback, the failure class, suggested actions and where the work is preserved.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use crate::engine::outcome::Outcome;
use crate::engine::paths::RunPaths;
use crate::engine::records::{load_turns, TurnRecords};
use crate::engine::state::{RunState, RunStatus};
use crate::engine::turn::GateRecord;
use crate::error::Error;
use crate::process::Redactor;
use crate::workflow::kinds::ReportOutputs;

pub fn execute(cx: &mut RunCx) -> Result<StepDone, Error> {
    let outcome = cx
        .outcome_so_far
        .clone()
        .unwrap_or(Outcome::Approved { merged: false });
    let path = write_report(&cx.paths, &cx.state, &outcome)?;
    Ok(StepDone::ok(
        path.display().to_string(),
        ReportOutputs {
            path: path.display().to_string(),
        },
    ))
}

/// Writes `report.md` for the run as it stands, returning its path.
pub fn write_report(
    paths: &RunPaths,
    state: &RunState,
    outcome: &Outcome,
) -> Result<std::path::PathBuf, Error> {
    let turns = load_turns(paths, state);
    // Redacted: the report quotes records and diffs that may hold a secret's value.
    let text = Redactor::new(&[]).apply(&render(state, outcome, &turns));
    let path = paths.report();
    crate::engine::state::write_atomic(&path, text.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    crate::report::write_run(paths, state, &outcome.to_string())?;
    Ok(path)
}

/// The report's Markdown, from plain records.
pub fn render(state: &RunState, outcome: &Outcome, turns: &[TurnRecords]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {}: {}\n", state.task_id, state.title);
    let _ = writeln!(out, "**Outcome:** {outcome}\n");
    let _ = writeln!(out, "- Workflow: `{}`", state.workflow);
    let _ = writeln!(
        out,
        "- Branch: `{}` (base `{}`)",
        state.branch, state.base_branch
    );
    let _ = writeln!(out, "- Turns: {}", turns.len());
    for signoff in &state.signoffs {
        let _ = writeln!(out, "- Sign-off `{}`: {}", signoff.step, signoff.describe());
    }
    if state.cost_usd > 0.0 {
        let estimate = if state.cost_estimated {
            " (partly estimated from token counts)"
        } else {
            ""
        };
        let _ = writeln!(out, "- Cost: ${:.2}{estimate}", state.cost_usd);
    }
    if state.tokens_in + state.tokens_out > 0 {
        let _ = writeln!(
            out,
            "- Tokens: {} in, {} out",
            state.tokens_in, state.tokens_out
        );
    }
    let discarded = state.status == RunStatus::Discarded;
    let preserved = !matches!(outcome, Outcome::Approved { merged: true }) && !discarded;
    if discarded {
        let _ = writeln!(
            out,
            "- Discarded: the branch and the worktree are removed; these records are kept"
        );
    }
    if preserved {
        let _ = writeln!(
            out,
            "- Worktree (preserved): `{}`",
            state.worktree.display()
        );
    }
    out.push('\n');
    for answer in crate::report::answers::answers(state) {
        let _ = writeln!(
            out,
            "## Step `{}`: its answer\n\n{}\n",
            answer.step,
            quoted(&answer.text)
        );
    }
    render_history(&mut out, turns);
    if let Outcome::Waiting { step, .. } = outcome {
        let _ = writeln!(
            out,
            "## Next step

The run waits at the sign-off step `{step}`. Approve it with `autobuild approve {id}` (the run continues), or reject it with `autobuild reject {id} --reason \"…\"`.",
            id = state.task_id
        );
    } else if !matches!(outcome, Outcome::Approved { .. }) {
        render_blocked(&mut out, state, outcome, turns);
    } else if matches!(outcome, Outcome::Approved { merged: false }) && !discarded {
        let _ = writeln!(
            out,
            "## Next step\n\nMerge with `autobuild complete {}`, or throw the work away with `autobuild discard {}`.",
            state.task_id, state.task_id
        );
    }
    out
}

/// `text` as a Markdown block quote.
fn quoted(text: &str) -> String {
    text.lines()
        .map(|line| match line.is_empty() {
            true => ">".to_string(),
            false => format!("> {line}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn render_history(out: &mut String, turns: &[TurnRecords]) {
    if turns.is_empty() {
        let _ = writeln!(out, "No turn ran.\n");
        return;
    }
    let _ = writeln!(out, "## Turns\n");
    let _ = writeln!(out, "| turn | player | checks | criteria | coach | gate |");
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for t in turns {
        let player = t.player.as_ref().map_or("-".to_string(), |p| {
            if p.succeeded() {
                format!("{} file(s) changed", p.files_changed.len())
            } else {
                format!("failed ({})", p.agent.status.name())
            }
        });
        let checks = t.verify.as_ref().map_or("-".to_string(), |v| {
            let failed: Vec<String> = v
                .checks
                .iter()
                .filter(|c| !c.passed())
                .map(|c| match c.advisory {
                    true => format!("{} (advisory)", c.name),
                    false => c.name.clone(),
                })
                .collect();
            if failed.is_empty() {
                format!("{} passed", v.checks.len())
            } else {
                format!("failed: {}", failed.join(", "))
            }
        });
        // As the gate counted them: executable criteria by the runner, the rest by the coach.
        let criteria = t.gate.as_ref().map_or("-".to_string(), |g| {
            format!("{}/{} met", g.criteria_met, g.criteria_total)
        });
        // Every reviewer's decision, by its step when there are several.
        let reviews: Vec<String> = t
            .reviews
            .iter()
            .filter_map(|c| c.verdict.as_ref().map(|v| (c, v)))
            .map(|(c, v)| {
                let decision = format!("{} ({} issue(s))", v.decision.as_str(), v.issues.len());
                match t.reviews.len() {
                    1 => decision,
                    _ => format!("{}: {decision}", c.step),
                }
            })
            .collect();
        let coach = match reviews.is_empty() {
            true => "-".to_string(),
            false => reviews.join("; "),
        };
        let gate = t.gate.as_ref().map_or("-", |g| {
            if g.approved {
                "approved"
            } else {
                "not approved"
            }
        });
        let _ = writeln!(
            out,
            "| {} | {player} | {checks} | {criteria} | {coach} | {gate} |",
            t.label()
        );
    }
    out.push('\n');
    render_coverage(out, turns);
}

/// Each turn's line coverage, when the profile sets a minimum.
fn render_coverage(out: &mut String, turns: &[TurnRecords]) {
    let measured: Vec<(String, &crate::steps::coverage::CoverageResult)> = turns
        .iter()
        .filter_map(|t| Some((t.label(), t.verify.as_ref()?.coverage.as_ref()?)))
        .collect();
    if measured.is_empty() {
        return;
    }
    let _ = writeln!(out, "## Coverage\n");
    for (turn, coverage) in measured {
        let _ = writeln!(out, "- turn {turn}: {}", coverage.summary());
    }
    out.push('\n');
}

fn render_blocked(out: &mut String, state: &RunState, outcome: &Outcome, turns: &[TurnRecords]) {
    let _ = writeln!(out, "## Why it stopped\n\n{outcome}\n");
    let recurring = recurring_issues(turns);
    if !recurring.is_empty() {
        let _ = writeln!(out, "## Recurring issues\n");
        for (issue, count) in &recurring {
            let _ = writeln!(out, "- {count}× {issue}");
        }
        out.push('\n');
    }
    let last_gate = turns.iter().rev().find_map(|t| t.gate.as_ref());
    if let Some(gate) = last_gate {
        let _ = writeln!(out, "## Last feedback\n\n{}\n", gate.feedback.summary);
        for check in &gate.feedback.failing_checks {
            let _ = writeln!(
                out,
                "- check `{}` {} (log: `{}`)\n\n```text\n{}\n```\n",
                check.name,
                check.status,
                check.log_path,
                check.summary.trim_end()
            );
        }
        for criterion in &gate.feedback.unmet_criteria {
            let _ = writeln!(
                out,
                "- {} not met: {} — {}",
                criterion.id, criterion.text, criterion.reason
            );
        }
        out.push('\n');
    }
    let class = match outcome {
        Outcome::AgentUnusable(stop) => format!(
            "agent setup ({}) — the `{}` agent ({}) {}; nothing is wrong with the task or its \
             code. Its transcript is {}",
            stop.class.as_str(),
            stop.role,
            stop.agent,
            stop.class.describe(),
            stop.transcript.display()
        ),
        // A failure of the environment before any turn (the [worktree] setup command) says
        // so itself.
        Outcome::Failed {
            message,
            infrastructure: true,
        } => message.clone(),
        Outcome::Rejected { reason } => format!("rejected at sign-off: {reason}"),
        Outcome::NeedsPerson { issue } => format!(
            "needs a person — a reviewer raised a critical issue, which stops the loop at once: \
             {issue}"
        ),
        _ => failure_class(turns.last(), last_gate),
    };
    let _ = writeln!(out, "## Failure class\n\n{class}\n");
    if state.status == RunStatus::Discarded {
        return;
    }
    let _ = writeln!(out, "## Suggested actions\n");
    if let Outcome::AgentUnusable(_) = outcome {
        let _ = writeln!(
            out,
            "- Fix the agent's setup as the message above says (`autobuild doctor` checks the \
             agent CLIs' logins)."
        );
    }
    if let Outcome::NeedsPerson { .. } = outcome {
        let _ = writeln!(
            out,
            "- Decide about the critical issue above: fix it on the branch yourself, change the \
             task, or throw the attempt away; the loop does not go on by itself."
        );
    }
    if class.starts_with("infrastructure") {
        let _ = writeln!(out, "- Fix the environment the runner and the agents share (`[env]` in `.autobuild/config.toml`), then resume.");
    }
    let _ = writeln!(
        out,
        "- Inspect the work in `{}` and the logs under `.autobuild/runs/{}/logs/`.",
        state.worktree.display(),
        state.task_id
    );
    if matches!(outcome, Outcome::TurnLimit | Outcome::Stalled { .. }) {
        let _ = writeln!(
            out,
            "- Clarify the task's requirements or criteria if the feedback shows a misunderstanding."
        );
    }
    match outcome {
        Outcome::AgentUnusable(_) => {
            let _ = writeln!(
                out,
                "- Once that is fixed, continue where it stopped: `autobuild resume {}` (the \
                 worktree and the branch are kept; the interrupted step runs again).",
                state.task_id
            );
        }
        Outcome::Cancelled | Outcome::TimedOut | Outcome::Failed { .. } => {
            let _ = writeln!(
                out,
                "- Continue where it stopped: `autobuild resume {}`.",
                state.task_id
            );
        }
        _ => {
            let _ = writeln!(
                out,
                "- Give it more turns on the same branch: `autobuild task {} --resume --max-turns N`.",
                state.task_id
            );
        }
    }
    let _ = writeln!(
        out,
        "- Throw the attempt away: `autobuild discard {}`.",
        state.task_id
    );
}

/// Coach issues and failing checks, counted across turns, most frequent first.
fn recurring_issues(turns: &[TurnRecords]) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for gate in turns.iter().filter_map(|t| t.gate.as_ref()) {
        for issue in &gate.feedback.issues {
            *counts
                .entry(format!("[{}] {}", issue.severity, issue.description))
                .or_default() += 1;
        }
        for check in &gate.feedback.failing_checks {
            *counts
                .entry(format!("check `{}` {}", check.name, check.status))
                .or_default() += 1;
        }
    }
    let mut list: Vec<(String, usize)> = counts.into_iter().filter(|(_, n)| *n > 1).collect();
    list.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    list
}

fn failure_class(last: Option<&TurnRecords>, gate: Option<&GateRecord>) -> String {
    // An agent that could not do its job is neither the code's fault nor the environment's
    // checks': say which agent and where its transcript is.
    if let Some(turn) = last {
        let failed_agent = [
            turn.player
                .as_ref()
                .filter(|p| !p.succeeded())
                .map(|p| ("player", &p.agent, &p.transcript)),
            turn.reviews
                .iter()
                .find(|c| !c.agent.status.is_success())
                .map(|c| (c.role.as_str(), &c.agent, &c.transcript)),
        ]
        .into_iter()
        .flatten()
        .next();
        if let Some((role, agent, transcript)) = failed_agent {
            return format!(
                "agent — the {role} agent did not finish its turn ({}): {}; its transcript is {}",
                agent.status.name(),
                agent.status.message(),
                transcript.display()
            );
        }
    }
    let Some(gate) = gate else {
        return "unknown: no turn reached the gate".into();
    };
    let infrastructure = gate
        .feedback
        .failing_checks
        .iter()
        .filter(|c| c.failure_class.as_deref() == Some("infrastructure"))
        .collect::<Vec<_>>();
    if let Some(check) = infrastructure.first() {
        let advice = check.advice.clone().unwrap_or_default();
        return format!("infrastructure — {advice}");
    }
    if gate.feedback.failing_checks.is_empty() && gate.feedback.issues.is_empty() {
        "process — see the reasons above".into()
    } else {
        "code — the implementation does not yet meet the requirements".into()
    }
}
