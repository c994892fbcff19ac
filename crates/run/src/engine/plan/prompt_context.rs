//! Builds the context a prompt template sees (docs/workflows.md) from runner records only: the
//! plan, the turn in progress and the loop's state. Preflight renders every prompt with it
//! before a run starts; the agent step renders the live one.

use crate::engine::plan::Plan;
use crate::engine::state::LoopState;
use crate::engine::turn::Turn;
use model::steps::feedback::check_context;
use model::steps::verdict::VERDICT_SCHEMA;
use model::workflow::context::{
    CheckCommandContext, CriterionContext, PlayerContext, ProfileContext, PromptContext,
    ScopeContext, TaskContext, VerifyContext, WorktreeContext,
};

/// The context from plain parts; `--dry-run` uses it with no turn and no loop state.
pub fn build_prompt_context(
    plan: &Plan,
    worktree: WorktreeContext,
    turn: Option<&Turn>,
    loop_state: Option<&LoopState>,
) -> PromptContext {
    let task = &plan.task;
    let feedback = loop_state.and_then(|l| l.feedback.clone());
    PromptContext {
        task: TaskContext {
            id: task.id.clone(),
            title: task.title.clone(),
            requirements: task.requirements.clone(),
            criteria: task
                .criteria
                .iter()
                .map(|c| CriterionContext {
                    id: c.id.clone(),
                    text: c.text.clone(),
                    verify: c.verify.clone(),
                    preamble: c.preamble.clone(),
                })
                .collect(),
            criteria_epilogue: task.criteria_epilogue.clone(),
            task_type: task.task_type.clone(),
            complexity: task.complexity,
            path: display_path(&plan.root, &task.path),
        },
        turn: turn.map_or(1, |t| t.number),
        max_turns: turn.map_or(plan.max_turns, |t| t.max),
        worktree,
        profile: profile_context(plan),
        feedback,
        verify: turn.and_then(|t| t.verify.as_ref()).map(|v| VerifyContext {
            passed: v.passed,
            checks: v.checks.iter().map(check_context).collect(),
            criteria: v.criteria.iter().map(check_context).collect(),
        }),
        player: turn.and_then(|t| t.player.as_ref()).map(|p| PlayerContext {
            succeeded: p.succeeded(),
            // Names are the agent's: one with a newline could forge the runner's lines.
            files_changed: p
                .files_changed
                .iter()
                .map(|f| base::quoted::path(f).into_owned())
                .collect(),
            diff_stat: p.diff_stat.clone(),
            final_message: p.agent.final_message.clone(),
            disputed: model::steps::dispute::disputed_section(&p.agent.final_message),
            // Stored with the record since issue 24; older records are diffed again.
            branch_diff_stat: p
                .branch_diff_stat
                .clone()
                .unwrap_or_else(|| branch_diff_stat(plan, p)),
            tests_diff: p.tests_diff.clone().unwrap_or_else(|| tests_diff(plan, p)),
        }),
        stall_notice: loop_state.and_then(|l| l.stall_notice.clone()),
        scope: ScopeContext {
            protect: plan.protected_paths(),
            writes: None,
        },
        inputs: plan.inputs.clone(),
        verdict_schema: VERDICT_SCHEMA.to_string(),
        structured_verdict: false,
        steps: serde_json::Map::new(),
        output_file: String::new(),
        context_files: plan.context_files.clone(),
    }
}

/// The profile's name, its gate requirements, and the checks the runner runs with their exact
/// commands.
fn profile_context(plan: &Plan) -> ProfileContext {
    let requirements = plan.gate_requirements();
    ProfileContext {
        name: plan.profile.name.clone(),
        require: requirements.iter().map(|r| r.to_string()).collect(),
        checks: plan
            .checks
            .iter()
            .map(|check| CheckCommandContext {
                name: check.name.clone(),
                command: if check.hidden && plan.hides() {
                    model::steps::reveal::HIDDEN_COMMAND.to_string()
                } else {
                    check.cmd.clone()
                },
                required: check.gates(&requirements),
            })
            // The coverage command, which the gate requires where the profile sets a minimum.
            .chain(
                plan.config
                    .coverage
                    .as_ref()
                    .filter(|_| {
                        requirements
                            .iter()
                            .any(|r| matches!(r, model::profile::Requirement::Coverage { .. }))
                    })
                    .map(|coverage| CheckCommandContext {
                        name: model::steps::coverage::CHECK_NAME.to_string(),
                        command: coverage.cmd.clone(),
                        required: true,
                    }),
            )
            .collect(),
    }
}

/// The diff stat of the task branch against the commit it forked from. One that cannot be
/// computed is said so in its place.
fn branch_diff_stat(plan: &Plan, player: &crate::engine::turn::PlayerRecord) -> String {
    let commit = &player.checkpoint.commit;
    let stat = git::Repo::discover(&plan.root)
        .and_then(|repo| repo.fork_point(&plan.base_branch, commit))
        .and_then(|base| git::diff_stat(&plan.worktree, &base, commit));
    match stat {
        Ok(stat) => stat.render(),
        Err(e) => format!("(the diff of the branch could not be computed: {e})"),
    }
}

fn display_path(root: &std::path::Path, path: &std::path::Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// The diff of test files between the task's base and the player's checkpoint. A diff that
/// cannot be computed is said so in its place rather than silently left out.
fn tests_diff(plan: &Plan, player: &crate::engine::turn::PlayerRecord) -> String {
    let base = git::Repo::discover(&plan.root)
        .and_then(|repo| repo.fork_point(&plan.base_branch, &player.checkpoint.commit));
    let tests = match plan.test_paths() {
        Ok(tests) => tests,
        Err(e) => return format!("(the diff of the test files could not be computed: {e})"),
    };
    match base.and_then(|base| {
        git::diff_text(
            &plan.worktree,
            &base,
            &player.checkpoint.commit,
            &|path: &str| tests.contains(path),
            git::TESTS_DIFF_LIMIT,
        )
    }) {
        Ok(text) => text,
        Err(e) => format!("(the diff of the test files could not be computed: {e})"),
    }
}
