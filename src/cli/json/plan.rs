//! `task --dry-run --json` and `feature --dry-run --json`.

use base::Keyword;
use serde::Serialize;

use crate::engine::plan::Plan;
use crate::feature::preflight::FeatureSetup;
use crate::project::CheckOrigin;

#[derive(Debug, Serialize)]
pub struct TaskPlan {
    pub version: u32,
    pub task: TaskInfo,
    pub workflow: WorkflowInfo,
    pub profile: ProfileInfo,
    pub branch: String,
    pub base_branch: String,
    /// The branch exists already (the run would continue on it).
    pub branch_exists: bool,
    pub worktree: String,
    pub max_turns: u32,
    pub checks: Vec<Check>,
    /// The coverage command and minimum, when the profile sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<Coverage>,
    pub criteria: Vec<Criterion>,
    pub roles: Vec<Role>,
    /// Things to know that do not stop the run (also printed on stderr).
    pub warnings: Vec<String>,
    /// Why the run cannot start; empty when it can (the exit code says so too).
    pub blockers: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct TaskInfo {
    pub id: String,
    pub title: String,
    pub file: String,
    pub task_type: String,
}

#[derive(Debug, Serialize)]
pub struct WorkflowInfo {
    pub name: String,
    pub source: String,
}

#[derive(Debug, Serialize)]
pub struct ProfileInfo {
    pub name: String,
    pub requires: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub cmd: String,
    pub timeout_secs: u64,
    /// `configured`, or `detected: <why>`.
    pub origin: String,
}

#[derive(Debug, Serialize)]
pub struct Coverage {
    pub cmd: String,
    pub report: String,
    /// The minimum line coverage, in percent.
    pub minimum: u8,
    pub timeout_secs: u64,
}

#[derive(Debug, Serialize)]
pub struct Criterion {
    pub id: String,
    pub text: String,
    /// The command that decides it; `null` = judged by the reviewer.
    pub verify: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Role {
    pub name: String,
    pub agent: String,
    /// `null` = the adapter's default (and always for `command`).
    pub model: Option<String>,
    pub access: String,
    pub tools: Vec<String>,
}

impl TaskPlan {
    pub fn new(plan: &Plan) -> TaskPlan {
        let rel = |p: &std::path::Path| {
            p.strip_prefix(&plan.root)
                .unwrap_or(p)
                .display()
                .to_string()
        };
        let task = &plan.task;
        TaskPlan {
            version: super::VERSION,
            task: TaskInfo {
                id: task.id.clone(),
                title: task.title.clone(),
                file: rel(&task.path),
                task_type: task.task_type.to_string(),
            },
            workflow: WorkflowInfo {
                name: plan.resolved.workflow.name.clone(),
                source: plan.resolved.source.display().to_string(),
            },
            profile: ProfileInfo {
                name: plan.profile.name.clone(),
                requires: plan
                    .profile
                    .requirements()
                    .iter()
                    .map(|r| r.to_string())
                    .collect(),
            },
            branch: plan.branch.clone(),
            base_branch: plan.base_branch.clone(),
            branch_exists: plan.branch_exists,
            worktree: rel(&plan.worktree),
            max_turns: plan.max_turns,
            checks: plan
                .checks
                .iter()
                .map(|c| Check {
                    name: c.name.clone(),
                    cmd: c.cmd.clone(),
                    timeout_secs: c.timeout.as_secs(),
                    origin: match c.origin {
                        CheckOrigin::Configured => "configured".to_string(),
                        CheckOrigin::Detected(why) => format!("detected: {why}"),
                    },
                })
                .collect(),
            coverage: plan
                .config
                .coverage
                .as_ref()
                .zip(plan.profile.coverage)
                .map(|(c, minimum)| Coverage {
                    cmd: c.cmd.clone(),
                    report: c.report.clone(),
                    minimum,
                    timeout_secs: c.timeout().as_secs(),
                }),
            criteria: task
                .criteria
                .iter()
                .map(|c| Criterion {
                    id: c.id.clone(),
                    text: c.text.clone(),
                    verify: c.verify.clone(),
                })
                .collect(),
            roles: plan
                .used_roles()
                .into_iter()
                .filter_map(|name| {
                    let role = plan.resolved.workflow.roles.get(&name)?;
                    Some(Role {
                        agent: role.agent.to_string(),
                        model: role.model.clone(),
                        access: role.access.as_str().to_string(),
                        tools: role.tools.iter().map(|t| t.as_str().to_string()).collect(),
                        name,
                    })
                })
                .collect(),
            warnings: plan.warnings.clone(),
            blockers: crate::engine::plan::blocker_lines(&plan.blockers),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct FeaturePlan {
    pub version: u32,
    pub id: String,
    pub name: String,
    pub file: String,
    pub branch: String,
    pub base_branch: String,
    pub branch_exists: bool,
    /// Task ids per wave, in order.
    pub waves: Vec<Vec<String>>,
    /// Tasks moved a wave later because they write the same files as a task of their wave.
    pub separated: Vec<crate::feature::overlap::Separated>,
    pub tasks: Vec<FeatureTask>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct FeatureTask {
    pub id: String,
    pub title: String,
    pub file: String,
    pub wave: usize,
    pub dependencies: Vec<String>,
    /// `null` when the task's own plan could not be made (see `warnings`).
    pub workflow: Option<String>,
    pub max_turns: Option<u32>,
    /// The finished state folder (`completed`, `archived`, `obsolete`) of a task done before
    /// the feature: it does not run. `null` for a task that runs.
    pub done: Option<String>,
}

impl FeaturePlan {
    pub fn new(setup: &FeatureSetup) -> FeaturePlan {
        let plan = &setup.plan;
        let mut tasks = Vec::new();
        for (w, wave) in plan.waves.iter().enumerate() {
            for id in wave {
                let Some(task) = plan.task(id) else {
                    continue;
                };
                let check = setup.check(id);
                tasks.push(FeatureTask {
                    id: id.clone(),
                    title: task.task.title.clone(),
                    file: plan.shown_path(&task.task.path).display().to_string(),
                    wave: w + 1,
                    dependencies: task.dependencies.clone(),
                    workflow: check.map(|c| c.workflow.clone()),
                    max_turns: check.map(|c| c.max_turns),
                    done: task.done.clone(),
                });
            }
        }
        FeaturePlan {
            version: super::VERSION,
            id: plan.id.clone(),
            name: plan.name.clone(),
            file: plan.file.display().to_string(),
            branch: setup.branch.clone(),
            base_branch: setup.base_branch.clone(),
            branch_exists: setup.branch_exists,
            waves: plan.waves.clone(),
            separated: plan.separated.clone(),
            tasks,
            warnings: setup.warnings.clone(),
        }
    }
}
