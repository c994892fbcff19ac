//! `--dry-run`: the resolved plan — task, workflow, profile, checks, environment, the effective
//! sandbox, each role's agent command line (and, confined, what its CLI writes for itself), the
//! steps with their bounds — and the rendered turn-1 Player prompt.
//! Nothing is created: no branch, no worktree, no run directory.

use std::fmt::Write as _;
use std::path::Path;

use crate::agents::{adapter_for, AgentRequest};
use crate::engine::plan::build_prompt_context;
use crate::engine::plan::Plan;
use crate::error::Error;
use crate::project::CheckOrigin;
use crate::sandbox::{Effective, Writable};
use crate::steps::verdict::VERDICT_SCHEMA;
use crate::ui;
use crate::workflow::context::WorktreeContext;
use crate::workflow::kinds::LoopStep;
use crate::workflow::model::{Access, Action, AgentKind, OutputKind, Step};
use base::Keyword;

/// The plan on stdout (as text, or as the `--json` document); its warnings on stderr.
pub fn print(plan: &Plan, json: bool) {
    let title = format!("plan for {}", plan.task.id);
    let group = (!json).then_some(title.as_str());
    let blockers = crate::engine::plan::blocker_lines(&plan.blockers);
    ui::result(group, &plan.warnings, &blockers, || {
        if json {
            super::json::print(&super::json::plan::TaskPlan::new(plan));
        } else {
            ui::line(&render(plan));
        }
    });
}

pub fn render(plan: &Plan) -> String {
    let mut out = String::new();
    let task = &plan.task;
    let rel = |p: &Path| {
        p.strip_prefix(&plan.root)
            .unwrap_or(p)
            .display()
            .to_string()
    };
    let _ = writeln!(
        out,
        "Plan for {}: {} (dry run: nothing is created)",
        task.id, task.title
    );
    let _ = writeln!(out, "  task file:  {}", rel(&task.path));
    let _ = writeln!(
        out,
        "  workflow:   {} ({})",
        plan.resolved.workflow.name,
        plan.resolved.source.display()
    );
    let requires: Vec<String> = plan
        .profile
        .requirements()
        .iter()
        .map(|r| r.to_string())
        .collect();
    let _ = writeln!(
        out,
        "  profile:    {} (task_type {}): requires {}",
        plan.profile.name,
        task.task_type,
        requires.join(", ")
    );
    let _ = writeln!(
        out,
        "  branch:     {} from {}{}",
        plan.branch,
        plan.base_branch,
        if plan.branch_exists {
            " (exists: the run would continue on it)"
        } else {
            ""
        }
    );
    let _ = writeln!(out, "  worktree:   {}", rel(&plan.worktree));
    render_worktree_files(&mut out, plan);
    let limits = &plan.resolved.workflow.limits;
    let mut bounds = vec![format!("up to {} turn(s)", plan.max_turns)];
    if let Some(t) = limits.max_wall_time {
        bounds.push(format!("max_wall_time {}", humantime::format_duration(t)));
    }
    if let Some(c) = limits.max_cost_usd {
        bounds.push(format!("max_cost_usd {c:.2}"));
    }
    let _ = writeln!(out, "  limits:     {}", bounds.join(", "));
    render_env(&mut out, plan);
    render_sandbox(&mut out, plan);
    for blocker in &plan.blockers {
        let _ = writeln!(out, "  CANNOT START: {blocker}");
    }

    let _ = writeln!(
        out,
        "\nChecks (run by the runner in the worktree, same environment as the agents):"
    );
    if plan.checks.is_empty() {
        let _ = writeln!(out, "  (none configured or detected)");
    }
    let required = plan.gate_requirements();
    for check in &plan.checks {
        let _ = writeln!(
            out,
            "  {:<8} {}  [timeout {}, {}{}]",
            check.name,
            check.cmd,
            humantime::format_duration(check.timeout),
            match check.origin {
                CheckOrigin::Configured if check.hidden && plan.hides() => {
                    "configured, hidden: runs sealed in the runner's copy with the hidden files \
                     (writes only that copy, no network), always required"
                        .to_string()
                }
                CheckOrigin::Configured => "configured".to_string(),
                CheckOrigin::Detected(reason) => format!("detected: {reason}"),
            },
            if check.gates(&required) {
                ""
            } else {
                ", advisory: its failure does not block approval"
            }
        );
    }
    if let (Some(coverage), Some(minimum)) = (&plan.config.coverage, plan.profile.coverage) {
        let _ = writeln!(
            out,
            "\nCoverage (the gate requires at least {minimum}% of lines):\n  {}  [timeout {}]\n  report: {} (Cobertura XML or LCOV)",
            coverage.cmd,
            humantime::format_duration(coverage.timeout()),
            coverage.report
        );
    }
    let _ = writeln!(out, "\nAcceptance criteria:");
    for criterion in &task.criteria {
        let text = indent_lines(&criterion.text, "          ");
        match &criterion.verify {
            Some(cmd) => {
                let _ = writeln!(
                    out,
                    "  {}  {text}\n          runner verifies: {cmd}",
                    criterion.id
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "  {}  {text}\n          judged by the coach",
                    criterion.id
                );
            }
        }
    }

    let _ = writeln!(out, "\nRoles:");
    for name in plan.used_roles() {
        let Some(role) = plan.resolved.workflow.roles.get(&name) else {
            continue;
        };
        let tools: Vec<&str> = role.tools.iter().map(|t| t.as_str()).collect();
        let overridden = plan.resolved.role_overrides(&name);
        // A `command` agent is a program of the user's: the model a workflow gives the role
        // means nothing to it; one set in the config or with --model reaches it as
        // $AUTOBUILD_MODEL and is shown.
        let model_set_here = overridden.iter().any(|o| o.starts_with("model from "));
        let model = if role.agent == AgentKind::Command && !model_set_here {
            String::new()
        } else {
            format!(
                " model {}",
                role.model.as_deref().unwrap_or("(adapter default)")
            )
        };
        let _ = writeln!(
            out,
            "  {name}: {}{model}, access {}, tools [{}]{}",
            role.agent,
            role.access.as_str(),
            tools.join(", "),
            role.timeout
                .map(|t| format!(", timeout {}", humantime::format_duration(t)))
                .unwrap_or_default()
        );
        if !overridden.is_empty() {
            let _ = writeln!(out, "      set here: {}", overridden.join(", "));
        }
        if let Some(writes) = &role.writes {
            let _ = writeln!(out, "      may change only: {}", globs(writes));
        }
        let _ = writeln!(out, "      $ {}", command_line(plan, &name));
        for note in adapter_for(role.agent)
            .map(|adapter| adapter.dry_run_notes(&name, role))
            .unwrap_or_default()
        {
            let _ = writeln!(out, "      {note}");
        }
        if let (Some(_), Some(adapter)) = (plan.sandbox.sandbox(), adapter_for(role.agent)) {
            let mut env = plan.project_env(&plan.worktree).vars();
            let run_dir = plan.layout.run_dir(&plan.task.id);
            env.extend(
                adapter
                    .private_state(&env, &run_dir)
                    .map(|p| p.env)
                    .unwrap_or_default(),
            );
            let own: Vec<String> = adapter
                .sandbox_state(&env)
                .iter()
                .map(|path| match path {
                    Writable::Dir(p) | Writable::File(p) => p.display().to_string(),
                })
                .collect();
            if !own.is_empty() {
                let _ = writeln!(out, "      sandbox: also writes {}", own.join(", "));
            }
        }
    }
    let _ = writeln!(
        out,
        "\nProtected (no agent may change): {}",
        globs(&plan.protected_paths())
    );
    let hidden = plan.hidden_paths();
    if !hidden.is_empty() {
        let _ = writeln!(
            out,
            "Hidden (no agent can see them; only hidden checks use them; reveal = {}): {}",
            plan.config.scope.reveal.as_str(),
            globs(&hidden)
        );
    }
    if !plan.context_files.is_empty() {
        let _ = writeln!(out, "\nContext files (shown to every role):");
        for file in &plan.context_files {
            let cut = if file.truncated { " (cut)" } else { "" };
            let _ = writeln!(out, "  {}{cut}", file.path);
        }
    }

    let _ = writeln!(out, "\nSteps:");
    render_steps(&mut out, &plan.resolved.workflow.steps, "  ", "");

    match player_prompt(plan) {
        Ok((name, prompt)) => {
            let _ = writeln!(out, "\n--- rendered prompt: turn 1, role {name} ---");
            out.push_str(prompt.trim_end());
        }
        Err(e) => {
            let _ = writeln!(out, "\n--- rendered prompt: turn 1 ---");
            let _ = write!(out, "(cannot render: {e})");
        }
    }
    out
}

/// What `[worktree]` adds to a new worktree, when anything.
fn render_worktree_files(out: &mut String, plan: &Plan) {
    let config = &plan.config.worktree;
    let mut parts = Vec::new();
    if !config.link.is_empty() {
        parts.push(format!("links {}", config.link.join(", ")));
    }
    if !config.copy.is_empty() {
        parts.push(format!("copies {}", config.copy.join(", ")));
    }
    if let Some(setup) = &config.setup {
        parts.push(format!("then runs `{setup}` once"));
    }
    if !parts.is_empty() {
        let _ = writeln!(out, "  prepare:    {}", parts.join("; "));
    }
}

fn render_env(out: &mut String, plan: &Plan) {
    let env = &plan.config.env;
    if env.vars.is_empty() && env.path_prepend.is_empty() && env.setup.is_none() {
        let _ = writeln!(
            out,
            "  env:        (inherited; no [env] in .autobuild/config.toml)"
        );
        return;
    }
    let names: Vec<&str> = env.vars.keys().map(String::as_str).collect();
    let _ = writeln!(
        out,
        "  env:        vars [{}], PATH prepends [{}]{}",
        names.join(", "),
        env.path_prepend.join(", "),
        env.setup
            .as_ref()
            .map(|s| format!(", setup `{s}`"))
            .unwrap_or_default()
    );
}

/// Whether agents and checks run confined, and what they may write.
fn render_sandbox(out: &mut String, plan: &Plan) {
    let line = match &plan.sandbox {
        Effective::Off(why) => format!("off ({why})"),
        Effective::On(sandbox) => {
            let tmp = match sandbox.backend {
                sandbox::Backend::Bwrap { .. } => "a private /tmp",
                sandbox::Backend::Landlock { .. } => "a private TMPDIR",
            };
            let mut writable = vec![
                "the worktree".to_string(),
                "its git index, objects and task branch".to_string(),
                "the run's scratch/".to_string(),
                tmp.to_string(),
            ];
            writable.extend(sandbox.declared.iter().cloned());
            format!(
                "on ({}: {}): agents and checks may write only {}; the rest is read-only; \
                 network \"{}\"",
                sandbox.backend.name(),
                sandbox.backend,
                writable.join(", "),
                sandbox.network.as_str()
            )
        }
    };
    let _ = writeln!(out, "  sandbox:    {line}");
}

fn render_steps(out: &mut String, steps: &[Step], indent: &str, number: &str) {
    for (i, step) in steps.iter().enumerate() {
        let n = format!("{number}{}", i + 1);
        let detail = step.action.describe();
        let mut extras = String::new();
        if let Some(cond) = &step.condition {
            extras.push_str(&format!(" if {cond}"));
        }
        if step.always {
            extras.push_str(" (always)");
        }
        let _ = writeln!(out, "{indent}{n}. {} — {detail}{extras}", step.id);
        if let Action::Loop(LoopStep { steps, .. }) = &step.action {
            render_steps(out, steps, &format!("{indent}   "), &format!("{n}."));
        }
    }
}

fn worktree_context(plan: &Plan) -> WorktreeContext {
    WorktreeContext {
        path: plan.worktree.display().to_string(),
        branch: plan.branch.clone(),
        base: plan.base_branch.clone(),
    }
}

fn globs(patterns: &[String]) -> String {
    if patterns.is_empty() {
        return "(nothing)".to_string();
    }
    patterns
        .iter()
        .map(|p| format!("`{p}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Why the dry run shows no turn-1 prompt.
#[derive(Debug, thiserror::Error)]
enum NoPrompt {
    #[error("no writing role in this workflow")]
    NoWriter,
    #[error("{0}")]
    Render(Error),
}

/// The first writing role's name and its rendered turn-1 prompt.
fn player_prompt(plan: &Plan) -> Result<(String, String), NoPrompt> {
    let (name, role) = plan
        .used_roles()
        .into_iter()
        .find_map(|name| {
            let role = plan
                .resolved
                .workflow
                .roles
                .get(&name)
                .filter(|r| r.access == Access::Write)
                .cloned();
            role.map(|role| (name, role))
        })
        .ok_or(NoPrompt::NoWriter)?;
    let mut context = build_prompt_context(plan, worktree_context(plan), None, None);
    context.scope.writes = role.writes.clone();
    context.steps = crate::workflow::kinds::placeholder_outputs(&plan.resolved.workflow.steps);
    plan.resolved
        .render_prompt(&role.prompt, &context)
        .map(|prompt| (name, prompt))
        .map_err(NoPrompt::Render)
}

fn command_line(plan: &Plan, role_name: &str) -> String {
    let Some(role) = plan.resolved.workflow.roles.get(role_name) else {
        return String::new();
    };
    let Some(adapter) = adapter_for(role.agent) else {
        return format!("({} adapter not available in this build)", role.agent);
    };
    let prompt_file = plan
        .layout
        .runs()
        .join(&plan.task.id)
        .join("prompts")
        .join(format!("turn_1_{role_name}.md"));
    let transcript = plan
        .layout
        .runs()
        .join(&plan.task.id)
        .join("logs")
        .join(format!("turn_1_{role_name}.log"));
    let env = plan.project_env(&plan.worktree).vars();
    let run_dir = plan.layout.runs().join(&plan.task.id);
    let request = AgentRequest {
        role_name,
        role,
        prompt: "",
        worktree: &plan.worktree,
        env: &env,
        run_dir: &run_dir,
        prompt_file: &prompt_file,
        transcript_path: &transcript,
        task_id: &plan.task.id,
        turn: 1,
        wants_verdict: role.output == Some(OutputKind::Verdict),
        verdict_schema: VERDICT_SCHEMA,
        pricing: Some(&plan.config.pricing),
        sandbox: None,
    };
    adapter
        .command_line(&request)
        .iter()
        .map(|arg| shell_quote(arg))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `text` with every line after the first indented by `pad`, blank lines left empty (no
/// trailing whitespace in the output).
fn indent_lines(text: &str, pad: &str) -> String {
    let mut lines = text.lines();
    let mut out = lines.next().unwrap_or_default().to_string();
    for line in lines {
        out.push('\n');
        if !line.trim().is_empty() {
            out.push_str(pad);
            out.push_str(line);
        }
    }
    out
}

/// An argument as a POSIX shell would need it written, so the printed line can be pasted.
fn shell_quote(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,@+%".contains(c));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::shell_quote;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(shell_quote("--model"), "--model");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
