//! `autobuild replay <RUN>` (docs/replay.md): a recorded run judged again under
//! today's — or other — rules, without the player.
//!
//! The replay is an ordinary run of the task's workflow, with the production steps: a fresh
//! worktree from the commit the recorded run forked from, the runner's checks, criteria, base
//! oracle, reviewers and gate, each turn's records in a run directory of its own. Only the
//! agents differ ([`Recorded::stand_in`]): the player is never invoked — its adapter is replaced
//! by one that writes the recorded turn's checkpoint into the worktree, as if the player had
//! written it — and with `--recorded-reviews` the reviewers' recorded answers are read again
//! (under the current verdict rules) instead of asking them. The replay runs at most as many
//! turns as were recorded, merges nothing, and leaves the recorded run, its branch and the
//! user's checkout as they were: its worktree and branches are removed when it ends; its
//! records stay under `.autobuild/runs/.replays/<RUN>/<N>/`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base::Keyword;
use serde::Serialize;

use crate::engine::io::RunIo;
use crate::engine::lock::RunLock;
use crate::engine::paths::RunPaths;
use crate::engine::plan::{preflight, BranchPolicy};
use crate::engine::records::{load_turns, TurnRecords};
use crate::engine::state::RunState;
use crate::engine::turn::{CoachRecord, PlayerRecord};
use crate::engine::Outcome;
use agents::{Adapter, AgentOutcome, AgentRequest, AgentStatus, Capabilities, Description};
use base::error::Error;
use model::project::Layout;
use model::steps::gate::GateDecision;
use model::workflow::model::{Access, Role};

/// What to replay under.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub workflow: Option<String>,
    pub profile: Option<String>,
    pub set: Vec<String>,
    /// Read the reviewers' recorded answers again instead of asking them.
    pub recorded_reviews: bool,
}

/// The recorded run's agents, standing in for the roles' adapters during a replay.
#[derive(Debug)]
pub struct Recorded {
    players: Vec<PlayerRecord>,
    reviews: Vec<CoachRecord>,
    recorded_reviews: bool,
}

impl Recorded {
    /// The adapter `role_name` runs with in the replay: the writer's recorded work always; a
    /// reader's recorded answer with `--recorded-reviews`; else `real`.
    pub fn stand_in(
        &self,
        role_name: &str,
        role: &Role,
        real: Box<dyn Adapter>,
    ) -> Box<dyn Adapter> {
        match role.access {
            Access::Write => Box::new(RecordedAgent {
                real,
                answers: self
                    .players
                    .iter()
                    .filter(|p| p.role == role_name)
                    .map(|p| (p.turn, p.agent.clone(), Some(p.checkpoint.commit.clone())))
                    .collect(),
            }),
            Access::ReadOnly if self.recorded_reviews => Box::new(RecordedAgent {
                real,
                answers: self
                    .reviews
                    .iter()
                    .filter(|r| r.role == role_name)
                    .map(|r| (r.turn, r.agent.clone(), None))
                    .collect(),
            }),
            Access::ReadOnly => real,
        }
    }
}

/// A role whose answers (and, for a writer, the commits its work is in) are recorded.
struct RecordedAgent {
    real: Box<dyn Adapter>,
    answers: Vec<(u32, AgentOutcome, Option<String>)>,
}

impl Adapter for RecordedAgent {
    fn description(&self) -> &'static Description {
        self.real.description()
    }

    fn capabilities(&self) -> Capabilities {
        self.real.capabilities()
    }

    fn command_line(&self, req: &AgentRequest<'_>) -> Vec<String> {
        self.real.command_line(req)
    }

    fn invoke(
        &self,
        req: &AgentRequest<'_>,
        _cancel: &process::CancelToken,
    ) -> Result<AgentOutcome, agents::AgentError> {
        let failed = |message: String| {
            AgentOutcome::new(
                AgentStatus::Failed {
                    class: agents::AgentErrorClass::Other,
                    message,
                },
                String::new(),
                std::time::Duration::ZERO,
            )
        };
        let Some((_, answer, commit)) = self.answers.iter().find(|(turn, ..)| *turn == req.turn)
        else {
            return Ok(failed(format!(
                "the recorded run has no turn {} of `{}` to replay",
                req.turn, req.role_name
            )));
        };
        if let Some(commit) = commit {
            if let Err(error) = git::write_commit_files(req.worktree, commit) {
                return Ok(failed(format!(
                    "cannot put back turn {}'s work (commit {commit}): {error}",
                    req.turn
                )));
            }
        }
        Ok(answer.clone())
    }
}

/// One turn, as recorded and as replayed: each gate's decision, `None` where no gate ran.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TurnComparison {
    pub turn: u32,
    pub recorded: Option<GateDecision>,
    pub replayed: Option<GateDecision>,
}

impl TurnComparison {
    pub fn differs(&self) -> bool {
        self.recorded.as_ref().map(|j| j.approved) != self.replayed.as_ref().map(|j| j.approved)
    }
}

/// What a replay found.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    pub run: String,
    pub task: String,
    pub workflow: String,
    pub profile: String,
    pub recorded_reviews: bool,
    pub turns: Vec<TurnComparison>,
    /// How the recorded run and the replay ended.
    pub recorded_outcome: String,
    pub replayed_outcome: String,
    /// The replay's run directory.
    pub records: PathBuf,
}

/// Replays the recorded run `run_id` of the repository at `root`.
pub fn replay(
    root: &Path,
    run_id: &str,
    options: ReplayOptions,
    io: RunIo,
) -> Result<ReplayReport, Error> {
    let layout = Layout::new(root);
    let recorded_paths =
        RunPaths::within(&layout.runs(), run_id).map_err(|e| Error::usage(e.to_string()))?;
    if !recorded_paths.state().exists() {
        return Err(crate::engine::refusal::Refusal::NoRun {
            id: run_id.to_string(),
        }
        .into());
    }
    let recorded = RunState::load(&recorded_paths.state()).map_err(|e| {
        crate::engine::state::unreadable_record(&recorded_paths.state(), &e, run_id)
    })?;
    if git::task_repo::of_worktree(&recorded.worktree).is_some()
        || layout.task_repo(&recorded.task_id).join(".git").exists()
    {
        return Err(Error::usage(format!(
            "{run_id} hid paths from its agents; replaying such a run is not supported yet"
        )));
    }
    let turns = load_turns(&recorded_paths, &recorded);
    let first: Vec<&TurnRecords> = turns.iter().filter(|t| t.loop_id.is_empty()).collect();
    let repo = git::Repo::discover(root)?;
    let fork = fork_commit(&repo, &first)?.ok_or_else(|| {
        Error::usage(format!("{run_id} recorded no player turn to replay"))
            .with_help("only turns whose player's work was checkpointed can be replayed")
    })?;
    let replays = layout.runs().join(".replays").join(run_id);
    let number = (1..)
        .find(|n| !replays.join(n.to_string()).exists())
        .unwrap_or(1);
    let runs_dir = replays.join(number.to_string());
    let base = format!("autobuild-replay/{}-{number}-base", recorded.task_id);
    repo.create_branch_at(&base, &fork)?;
    let branch = format!("autobuild-replay/{}-{number}", recorded.task_id);
    let worktree = layout
        .worktrees()
        .join(format!("{}@replay-{number}", recorded.task_id));
    let result = (|| {
        let mut settings = recorded.settings.clone();
        if options.workflow.is_some() {
            settings.workflow_arg = options.workflow.clone();
        }
        settings.overrides.extend(options.set.iter().cloned());
        if options.profile.is_some() {
            settings.profile = options.profile.clone();
        }
        settings.auto_merge = false;
        settings.no_merge = true;
        settings.pr = false;
        settings.max_turns = Some(first.len() as u32);
        settings.base_branch = Some(base.clone());
        let mut plan = preflight(
            root,
            &recorded.task_path.display().to_string(),
            settings,
            BranchPolicy::Resume,
        )?;
        plan.branch = branch.clone();
        plan.worktree = worktree.clone();
        plan.branch_exists = false;
        plan.ensure_startable()?;
        std::fs::create_dir_all(&runs_dir).map_err(|e| Error::io("cannot create", &runs_dir, e))?;
        let paths = RunPaths::new(&runs_dir, &plan.task.id);
        let lock = RunLock::acquire(&runs_dir, &plan.task.id)
            .map_err(|e| Error::runtime(format!("cannot lock the replay: {e}")))?;
        let stand_ins = Arc::new(Recorded {
            players: first.iter().filter_map(|t| t.player.clone()).collect(),
            reviews: first.iter().flat_map(|t| t.reviews.clone()).collect(),
            recorded_reviews: options.recorded_reviews,
        });
        let outcome = crate::engine::run::replay_run(
            &plan,
            paths.clone(),
            git::Repo::discover(root)?,
            io,
            lock,
            stand_ins,
        )?;
        let replayed_state = RunState::load(&paths.state())
            .map_err(|e| Error::io("cannot read", paths.state(), e))?;
        let replayed = load_turns(&paths, &replayed_state);
        Ok(ReplayReport {
            run: run_id.to_string(),
            task: recorded.task_id.clone(),
            workflow: plan.resolved.workflow.name.clone(),
            profile: plan.profile.name.clone(),
            recorded_reviews: options.recorded_reviews,
            turns: compare(&first, &replayed),
            recorded_outcome: recorded
                .outcome
                .as_ref()
                .map_or_else(|| recorded.status.as_str().to_string(), Outcome::to_string),
            replayed_outcome: outcome.to_string(),
            records: paths.dir,
        })
    })();
    // Nothing of the replay is left in the repository but its records.
    if worktree.exists() {
        if let Err(e) = repo.remove_worktree(&worktree, &branch) {
            tracing::warn!(
                "cannot remove the replay's worktree {}: {e}",
                worktree.display()
            );
        }
    }
    for name in [&branch, &base] {
        if repo.branch_exists(name) {
            if let Err(e) = repo.delete_branch(name, &recorded.base_branch, true) {
                tracing::warn!("cannot delete the replay's branch {name}: {e}");
            }
        }
    }
    result
}

/// The commit the recorded run's branch forked from: the first checkpoint's parent when its
/// player changed something, else the checkpoint itself (the worktree's starting commit).
fn fork_commit(repo: &git::Repo, first: &[&TurnRecords]) -> Result<Option<String>, Error> {
    let Some(player) = first.iter().find_map(|t| t.player.as_ref()) else {
        return Ok(None);
    };
    let checkpoint = &player.checkpoint;
    let missing = |e: git::GitError| {
        Error::runtime(format!(
            "the recorded checkpoint {} is no longer in this repository ({e}); the run cannot be replayed",
            checkpoint.commit
        ))
    };
    match checkpoint.changed {
        true => repo.parent_of(&checkpoint.commit).map_err(missing),
        false => Ok(Some(checkpoint.commit.clone())),
    }
}

/// The recorded and the replayed gate of each turn, in turn order.
pub fn compare(recorded: &[&TurnRecords], replayed: &[TurnRecords]) -> Vec<TurnComparison> {
    let judged = |t: &TurnRecords| t.gate.as_ref().map(|g| g.decision.clone());
    let last = recorded
        .iter()
        .map(|t| t.turn)
        .chain(
            replayed
                .iter()
                .filter(|t| t.loop_id.is_empty())
                .map(|t| t.turn),
        )
        .max()
        .unwrap_or(0);
    (1..=last)
        .map(|turn| TurnComparison {
            turn,
            recorded: recorded
                .iter()
                .find(|t| t.turn == turn)
                .and_then(|t| judged(t)),
            replayed: replayed
                .iter()
                .find(|t| t.loop_id.is_empty() && t.turn == turn)
                .and_then(judged),
        })
        .collect()
}
