//! Preflight: everything that can fail early is resolved and checked here, before any branch,
//! worktree, run directory or file exists — workflow and config validation, the task, the
//! profile, the checks, every role's agent program and whether its CLI is logged in (module
//! [`agents::login`]; `AUTOBUILD_SKIP_LOGIN_CHECK=1` skips that), that every agent's
//! cost can be counted against the budget (module `budget`), whether agents and checks can be
//! confined as `[sandbox]` asks (module [`sandbox`]), the base branch, the task branch.
//! A run that cannot start leaves the repository exactly as it found it.
//! `--dry-run` prints the plan.

mod allowlist;
mod blocker;
mod budget;
mod hidden;
mod profile_checks;
mod prompt_context;
mod prompts;
mod shared;
mod start_error;
mod task_keys;

pub use blocker::{lines as blocker_lines, Blocker};
pub use profile_checks::gate_checks;
pub use prompt_context::build_prompt_context;
pub use shared::Shared;
pub use start_error::StartError;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::engine::inputs::{self, RunInputs};
use crate::engine::refusal::{Refusal, Subject};
use crate::engine::state::RunSettings;
use agents::adapter_for;
use agents::login::{self, Login};
use base::error::Error;
use git::Repo;
use model::profile::Profile;
use model::project::{effective_checks, Config, EffectiveCheck, Layout, ProjectEnv};
use model::task::{self, Task};
use model::workflow::kinds::{AgentStep, LoopStep};
use model::workflow::model::{Action, AgentKind};
use model::workflow::{Overrides, ResolvedWorkflow};
use process::locate;

/// The default workflow when neither the command line nor the task names one.
pub const DEFAULT_WORKFLOW: &str = "player-coach";

/// A fully resolved run, ready to start.
pub struct Plan {
    pub root: PathBuf,
    pub layout: Layout,
    pub config: Config,
    pub task: Task,
    pub resolved: ResolvedWorkflow,
    pub profile: Profile,
    pub checks: Vec<EffectiveCheck>,
    pub base_branch: String,
    pub branch: String,
    pub worktree: PathBuf,
    pub settings: RunSettings,
    pub inputs: BTreeMap<String, String>,
    /// The first loop's bound: what "turn N/M" counts against.
    pub max_turns: u32,
    /// The first loop's id: its turn records carry no prefix (`player_turn_2.json`).
    pub first_loop: Option<String>,
    /// Whether the task branch already exists (a resumed run continues on it).
    pub branch_exists: bool,
    /// Things the user should know that do not stop the run.
    pub warnings: Vec<String>,
    /// What stops the run from starting (a missing agent program, an unusable model). A dry
    /// run still shows the plan with these listed.
    pub blockers: Vec<Blocker>,
    /// Whether agents and checks run confined (`[sandbox]`, module [`sandbox`]).
    pub sandbox: sandbox::Effective,
    /// `[context] files` and the task's `context_files:`, read: shown to every role.
    pub context_files: Vec<model::workflow::context::ContextFileContext>,
}

/// What the caller intends, which decides how an existing task branch is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BranchPolicy {
    /// A new run: an existing branch is an error.
    New,
    /// Continue on an existing branch (`--resume`, `autobuild resume`).
    Resume,
    /// The caller will discard the existing branch (`--fresh`).
    Fresh,
}

impl RunSettings {
    fn overrides(&self) -> Overrides {
        Overrides {
            set: self.overrides.clone(),
            max_turns: self.max_turns,
            models: self.model_flags(),
            agent: self.agent.clone(),
        }
    }
}

/// Finds the repository root from `cwd`.
pub fn repo_root(cwd: &Path) -> Result<PathBuf, Error> {
    model::project::find_repo_root(cwd).ok_or_else(|| {
        StartError::NotInRepository {
            dir: cwd.to_path_buf(),
        }
        .into()
    })
}

pub fn preflight(
    root: &Path,
    task_arg: &str,
    settings: RunSettings,
    policy: BranchPolicy,
) -> Result<Plan, Error> {
    preflight_sharing(root, task_arg, settings, policy, &mut Shared::default())
}

/// [`preflight`] reading what the tasks of one feature share through `shared`.
pub fn preflight_sharing(
    root: &Path,
    task_arg: &str,
    settings: RunSettings,
    policy: BranchPolicy,
    shared: &mut Shared,
) -> Result<Plan, Error> {
    let repo = Repo::discover(root).map_err(StartError::Repository)?;
    let layout = Layout::new(root);
    // An invalid config is reported with the problems the workflow loader finds in its
    // `[roles]` (see `inputs`), so it is not returned before the workflow is resolved.
    let config = Shared::config(&mut shared.config, &layout);
    if let Ok(config) = &config {
        sandbox::start_probe(&config.sandbox);
    }
    let task = match task::locate(root, task_arg) {
        Ok(task) => task,
        Err(error) => return Err(config.err().unwrap_or(error)),
    };
    let workflow_name = settings
        .workflow_arg
        .clone()
        .or_else(|| task.workflow.clone())
        .unwrap_or_else(|| DEFAULT_WORKFLOW.to_string());
    let task_type = settings.profile.as_deref().unwrap_or(&task.task_type);
    let key = (workflow_name.clone(), task_type.to_string());
    let loaded = match config {
        Ok(config) => {
            let catalog = Shared::catalog(&mut shared.catalog, root)?;
            task_keys::check(root, catalog, &task, settings.workflow_arg.is_some())?;
            match shared.inputs.get(&key) {
                Some(inputs) => Ok(inputs.clone()),
                None => {
                    let loaded = inputs::load_from(
                        catalog,
                        Ok(config.clone()),
                        &workflow_name,
                        &settings.overrides(),
                        task_type,
                    );
                    if let Ok(inputs) = &loaded {
                        shared.inputs.insert(key, inputs.clone());
                    }
                    loaded
                }
            }
        }
        Err(error) => inputs::load(
            root,
            Err(error),
            &workflow_name,
            &settings.overrides(),
            task_type,
        ),
    };
    let RunInputs {
        config,
        resolved,
        profile,
        mut warnings,
    } = loaded?;
    // What the task file's reader accepted but the user should know (a repeated key, a stale
    // copy in another state folder) comes first: it is about the file the user wrote.
    warnings.splice(0..0, task.warnings.iter().map(|w| w.headline()));
    let checks = effective_checks(&config, root);
    let mut blockers = check_agents(&resolved, root, &config, &mut warnings);
    let unpriced = budget::check(&resolved, &config.pricing);
    blockers.extend(unpriced.blockers);
    warnings.extend(unpriced.warnings);
    let sandbox = sandbox::decide(&config.sandbox);
    blockers.extend(sandbox.blocker.map(Blocker::Sandbox));
    warnings.extend(sandbox.warning);

    let base_branch = match settings
        .base_branch
        .as_ref()
        .or(config.project.base_branch.as_ref())
    {
        Some(base) => base.clone(),
        None => match (repo.current_branch(), repo.unborn_branch()) {
            (Some(branch), _) => branch,
            (None, Some(unborn)) => return Err(StartError::NoCommits { branch: unborn }.into()),
            (None, None) => return Err(StartError::DetachedHead.into()),
        },
    };
    repo.resolve_base(&base_branch)?;
    let worktree_files =
        model::project::worktree_files::preflight(root, &base_branch, &config.worktree);
    blockers.extend(
        worktree_files
            .blockers
            .into_iter()
            .map(Blocker::WorktreeFiles),
    );
    warnings.extend(worktree_files.warnings);
    blockers.extend(missing_required_checks(&resolved, &profile, &checks));
    let (checks, unselectable) = profile_checks::select(
        checks,
        &profile,
        &resolved.workflow.gate_requirements(&profile.requirements()),
    );
    blockers.extend(unselectable);
    blockers.extend(uncommitted_agent_files(&resolved, root, &base_branch));
    let wanted: Vec<_> = config
        .context
        .files
        .iter()
        .chain(&task.context_files)
        .cloned()
        .collect();
    let (context_files, missing) = model::project::context_files::load(root, &wanted);
    blockers.extend(missing.into_iter().map(Blocker::ContextFile));
    let branch = format!("autobuild/{}", task.id);
    // A run with hidden paths keeps its branch in its task repository until it lands.
    let hides = !(config.scope.hidden.is_empty() && task.hidden.is_empty());
    let branch_exists =
        repo.branch_exists(&branch) || (hides && layout.task_repo(&task.id).join(".git").is_dir());
    if let Some(holder) = crate::engine::lock::holder(&layout.runs(), &task.id) {
        return Err(Refusal::AlreadyRunning {
            subject: Subject::Task(task.id.clone()),
            holder,
        }
        .into());
    }
    if branch_exists && policy == BranchPolicy::New {
        return Err(Refusal::BranchExists {
            subject: Subject::Task(task.id.clone()),
            branch,
        }
        .into());
    }
    let worktree = layout.worktrees().join(&task.id);
    let max_turns = first_loop_bound(&resolved).unwrap_or(1);
    let first_loop = resolved
        .workflow
        .all_steps()
        .into_iter()
        .find(|step| matches!(step.action, Action::Loop(_)))
        .map(|step| step.id.clone());
    let inputs = resolved
        .workflow
        .inputs
        .iter()
        .filter_map(|(name, input)| input.default.clone().map(|d| (name.clone(), d)))
        .collect();
    let mut plan = Plan {
        root: root.to_path_buf(),
        layout,
        config,
        task,
        resolved,
        profile,
        checks,
        base_branch,
        branch,
        worktree,
        settings,
        inputs,
        max_turns,
        first_loop,
        branch_exists,
        warnings,
        blockers,
        sandbox: sandbox.effective,
        context_files,
    };
    let unrenderable = prompts::unrenderable(&plan);
    plan.blockers.extend(unrenderable);
    // A hidden check runs sealed, without a network (`exec::hidden_check`): that too must work.
    let sealable = match &plan.sandbox {
        sandbox::Effective::On(on) if plan.hides() && plan.checks.iter().any(|c| c.hidden) => {
            sandbox::probe::offline_works(&on.backend).map_err(|why| {
                format!(
                    "{} cannot take a hidden check's network away here: {why}",
                    on.backend.name()
                )
            })
        }
        _ => Ok(()),
    };
    let confined = match (&plan.sandbox, &sealable) {
        (sandbox::Effective::Off(why), _) => Err(why.as_str()),
        (sandbox::Effective::On(_), Err(why)) => Err(why.as_str()),
        (sandbox::Effective::On(_), Ok(())) => Ok(()),
    };
    let (blockers, warnings) =
        hidden::check(&plan.task.id, &plan.hidden_paths(), confined, &plan.checks);
    plan.blockers.extend(blockers);
    if let Ok(Some(hidden)) = plan.hidden_set() {
        let links =
            model::project::worktree_files::hidden_links(root, &plan.config.worktree, &hidden);
        plan.blockers
            .extend(links.into_iter().map(Blocker::WorktreeFiles));
    }
    plan.warnings.extend(warnings);
    Ok(plan)
}

impl Plan {
    /// Which paths are tests and test infrastructure ([`model::steps::scope::TestPaths`]).
    pub fn test_paths(&self) -> Result<model::steps::scope::TestPaths, Error> {
        model::steps::scope::TestPaths::new(&self.config.tests.infra)
            .map_err(|why| Error::runtime(format!("[tests] infra: {why}")))
    }

    /// What this run's gate requires ([`profile_checks::gate_requirements`]).
    pub fn gate_requirements(&self) -> Vec<model::profile::Requirement> {
        profile_checks::gate_requirements(&self.resolved.workflow, &self.profile, &self.checks)
    }

    /// What no agent of this run may change: autobuild's own directory, the task file,
    /// `[scope] protect` and the task's `protect:`, and the hidden paths (an agent that creates
    /// a file there is out of scope), as globs relative to the repository root.
    pub fn protected_paths(&self) -> Vec<String> {
        let task_file = self
            .task
            .path
            .strip_prefix(&self.root)
            .ok()
            .map(|relative| globset::escape(&relative.to_string_lossy()));
        let always: Vec<String> = model::steps::scope::ALWAYS_PROTECTED
            .iter()
            .map(|p| p.to_string())
            .collect();
        // The task file usually lives under `.autobuild/`, already covered.
        let covered = |file: &String| {
            model::steps::scope::PathScope::new(&always, None)
                .is_ok_and(|scope| !scope.out_of_scope(std::slice::from_ref(file)).is_empty())
        };
        let task_file = task_file.filter(|file| !covered(file));
        let mut patterns: Vec<String> = Vec::new();
        let all = always
            .iter()
            .cloned()
            .chain(task_file)
            .chain(self.config.scope.protect.iter().cloned())
            .chain(self.task.protect.iter().cloned())
            .chain(self.hidden_paths());
        for pattern in all {
            if !patterns.contains(&pattern) {
                patterns.push(pattern);
            }
        }
        patterns
    }

    /// Refuses to start while anything blocks the run.
    pub fn ensure_startable(&self) -> Result<(), Error> {
        if self.blockers.is_empty() {
            Ok(())
        } else {
            Err(StartError::Blocked(self.blockers.clone()).into())
        }
    }

    /// The project environment for a worktree path.
    pub fn project_env(&self, worktree: &Path) -> ProjectEnv {
        ProjectEnv::new(&self.config.env, worktree)
    }

    /// Roles that agent steps use, in step order, without repeats.
    pub fn used_roles(&self) -> Vec<String> {
        let mut roles = Vec::new();
        for step in self.resolved.workflow.all_steps() {
            if let Action::Agent(AgentStep { role, .. }) = &step.action {
                if !roles.contains(role) {
                    roles.push(role.clone());
                }
            }
        }
        roles
    }
}

fn first_loop_bound(resolved: &ResolvedWorkflow) -> Option<u32> {
    resolved
        .workflow
        .all_steps()
        .into_iter()
        .find_map(|step| match step.action {
            Action::Loop(LoopStep { max_iterations, .. }) => Some(max_iterations),
            _ => None,
        })
}

/// Every role an agent step uses must have an adapter and a program that can be found; returns
/// what is missing.
fn check_agents(
    resolved: &ResolvedWorkflow,
    root: &Path,
    config: &Config,
    warnings: &mut Vec<String>,
) -> Vec<Blocker> {
    let env = ProjectEnv::new(&config.env, root).vars();
    let mut problems = Vec::new();
    // Each agent CLI found, and the roles that use it, for the login check.
    let mut clis: Vec<(AgentKind, PathBuf, Vec<String>)> = Vec::new();
    let mut unenforced = allowlist::Unenforced::default();
    for (role_name, role) in resolved.workflow.agent_roles() {
        let Some(adapter) = adapter_for(role.agent) else {
            problems.push(Blocker::NoAdapter {
                role: role_name.clone(),
                agent: role.agent,
            });
            continue;
        };
        match adapter
            .program(role)
            .map(|program| locate(&program, root, &env))
        {
            Some(Ok(path)) => match clis.iter_mut().find(|(kind, ..)| *kind == role.agent) {
                Some((.., roles)) if roles.contains(role_name) => {}
                Some((.., roles)) => roles.push(role_name.clone()),
                None => clis.push((role.agent, path, vec![role_name.clone()])),
            },
            Some(Err(e)) => problems.push(Blocker::ProgramNotFound {
                role: role_name.clone(),
                agent: role.agent,
                error: e.to_string(),
                install_hint: adapter.install_hint().to_string(),
                declared: (role.agent == AgentKind::Command)
                    .then(|| resolved.role_key_declared(role_name, "command"))
                    .flatten(),
            }),
            None => {}
        }
        problems.extend(
            adapter
                .preflight(role_name, role, &env)
                .into_iter()
                .map(Blocker::Adapter),
        );
        problems.extend(
            role.command
                .as_deref()
                .and_then(|argv| agents::command::missing_script(argv, root))
                .map(|why| Blocker::MissingScript {
                    role: role_name.clone(),
                    why,
                }),
        );
        if !adapter.capabilities().enforces_tool_allowlist && !role.tools.is_empty() {
            unenforced.add(role.agent, role_name, role.access);
        }
    }
    warnings.extend(unenforced.warnings());
    if !login::skipped() {
        for (kind, program, roles) in &clis {
            match login::check_once(*kind, program, &env) {
                Some(Login::No { detail, fix }) => problems.push(Blocker::NotLoggedIn {
                    roles: roles.clone(),
                    agent: *kind,
                    detail,
                    fix,
                    skip_env: login::SKIP_ENV,
                }),
                Some(Login::Unknown(why)) => warnings.push(format!(
                    "{} ({kind}): could not check the login: {why}",
                    blocker::role_names(roles)
                )),
                Some(Login::Yes(_)) | None => {}
            }
        }
    }
    // In the order of their words, each once.
    problems.sort_by_cached_key(ToString::to_string);
    problems.dedup();
    problems
}

/// Profile requirements on checks that no configured or detected check can meet: the run could
/// never be approved, so it does not start.
fn missing_required_checks(
    resolved: &ResolvedWorkflow,
    profile: &Profile,
    checks: &[EffectiveCheck],
) -> Vec<Blocker> {
    let has_gate = resolved
        .workflow
        .all_steps()
        .iter()
        .any(|step| matches!(step.action, Action::Gate(_)));
    if !has_gate {
        return Vec::new();
    }
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    resolved
        .workflow
        .gate_requirements(&profile.requirements())
        .iter()
        .filter_map(|requirement| match requirement {
            model::profile::Requirement::Check(name) if !names.contains(&name.as_str()) => {
                Some(Blocker::MissingRequiredCheck {
                    profile: profile.name.clone(),
                    check: name.clone(),
                    close: base::diagnostic::did_you_mean(name, names.iter().copied())
                        .map(str::to_string),
                })
            }
            _ => None,
        })
        .collect()
}

/// A `command` agent's script given as a path relative to the repository must be committed on
/// the base branch: the worktree is a checkout of that branch, not of the main checkout's files.
fn uncommitted_agent_files(resolved: &ResolvedWorkflow, root: &Path, base: &str) -> Vec<Blocker> {
    let mut problems = Vec::new();
    for (role_name, role) in &resolved.workflow.roles {
        let Some(argv) = role.command.as_ref() else {
            continue;
        };
        if role.agent != AgentKind::Command {
            continue;
        }
        for arg in argv {
            let relative = Path::new(arg);
            if relative.is_absolute() || !root.join(relative).is_file() {
                continue;
            }
            let path = arg.trim_start_matches("./");
            if let Ok(false) = git::path_in_branch(root, base, path) {
                problems.push(Blocker::UncommittedScript {
                    role: role_name.clone(),
                    script: arg.clone(),
                    base: base.to_string(),
                });
            }
        }
    }
    problems
}
