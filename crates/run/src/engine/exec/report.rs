//! The `report` step: `report.md`, the run's summary — or, when the run did not get approved,
//! the blocked report a human reads next morning: attempts, recurring issues with counts, the
//! last feedback, the failure class, suggested actions and where the work is preserved.

use std::fmt::Write as _;

use crate::engine::closing::{closing, Closing};
use crate::engine::cx::RunCx;
use crate::engine::exec::StepDone;
use crate::engine::outcome::Outcome;
use crate::engine::paths::RunPaths;
use crate::engine::records::{load_turns, TurnRecords};
use crate::engine::state::{RunState, RunStatus};
use base::error::Error;
use model::workflow::kinds::ReportOutputs;
use process::Redactor;

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
    let text = Redactor::new(&[]).apply(&render(state, outcome, &turns, true));
    let path = paths.report();
    crate::engine::state::write_atomic(&path, text.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    crate::report::write_run(paths, state, &outcome.to_string(), Some(outcome))?;
    Ok(path)
}

/// The report's Markdown, from plain records. `here`: it is read where the run is (its
/// `report.md`), so it says where the worktree is kept and what to run next; elsewhere (a pull
/// request's text) neither means anything.
pub fn render(state: &RunState, outcome: &Outcome, turns: &[TurnRecords], here: bool) -> String {
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
    if let Some(sandbox) = &state.sandbox {
        let _ = writeln!(out, "- Sandbox: {sandbox}");
    }
    if let Some(pr) = &state.pr {
        let _ = writeln!(out, "- Pull request: [#{}]({})", pr.number, pr.url);
    }
    for signoff in &state.signoffs {
        let _ = writeln!(out, "- Sign-off `{}`: {}", signoff.step, signoff.describe());
    }
    if let Some(usd) = state.cost() {
        let estimate = if state.cost_estimated {
            " (partly estimated from token counts)"
        } else {
            ""
        };
        let shown = base::cost::shown(Some(usd), false);
        let _ = writeln!(out, "- Cost: {shown}{estimate}");
    }
    if state.tokens_in + state.tokens_out + state.tokens_cached > 0 {
        let _ = writeln!(
            out,
            "- Tokens: {} in, {} out{}",
            state.tokens_in,
            state.tokens_out,
            base::cost::cache_note(state.tokens_cached, state.tokens_cache_written)
        );
    }
    let discarded = state.status == RunStatus::Discarded;
    let preserved = here && !matches!(outcome, Outcome::Approved { merged: true }) && !discarded;
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
    let mut closing = closing(state, outcome, turns);
    if !here {
        closing.next_step = None;
    }
    render_closing(&mut out, &closing);
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
            if g.decision.approved {
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
    let measured: Vec<(String, &model::steps::coverage::CoverageResult)> = turns
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

/// The end of the run's story, as [`Closing`] holds it (the HTML report renders the same).
fn render_closing(out: &mut String, closing: &Closing) {
    if !closing.open_notes.is_empty() {
        let _ = writeln!(
            out,
            "## Reviewer notes\n\nApproved with these findings left for later (they do not block):\n"
        );
        for note in &closing.open_notes {
            let _ = writeln!(out, "- {note}");
        }
        out.push('\n');
    }
    if let Some(why) = &closing.why {
        let _ = writeln!(out, "## Why it stopped\n\n{why}\n");
    }
    if !closing.recurring.is_empty() {
        let _ = writeln!(out, "## Recurring issues\n");
        for recurring in &closing.recurring {
            let _ = writeln!(out, "- {}× {}", recurring.count, recurring.issue);
        }
        out.push('\n');
    }
    if let Some(feedback) = &closing.last_feedback {
        let _ = writeln!(out, "## Last feedback\n\n{}\n", feedback.summary);
        for check in &feedback.failing_checks {
            let _ = writeln!(
                out,
                "- check `{}` {} (log: `{}`)\n\n```text\n{}\n```\n",
                check.name,
                check.status,
                check.log_path,
                check.summary.trim_end()
            );
        }
        for criterion in &feedback.unmet_criteria {
            let _ = writeln!(out, "- {criterion}");
        }
        out.push('\n');
    }
    if let Some(class) = &closing.failure_class {
        let _ = writeln!(out, "## Failure class\n\n{class}\n");
    }
    if !closing.actions.is_empty() {
        let _ = writeln!(out, "## Suggested actions\n");
        for action in &closing.actions {
            let _ = writeln!(out, "- {action}");
        }
    }
    if let Some(next) = &closing.next_step {
        let _ = writeln!(out, "## Next step\n\n{next}");
    }
}
