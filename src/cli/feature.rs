//! `autobuild feature <ID|PATH>`: run a feature's tasks in dependency waves, or print the
//! waves (`--dry-run`). Also the feature side of `status`, `resume` and `complete`, which
//! delegate here when the id names a feature run.

use std::path::PathBuf;

use clap::Args;

use crate::cli::task::current_dir;
use crate::cli::RunFlags;
use crate::engine::plan::repo_root;
use crate::error::Error;
use crate::feature::emit::{self, EmitPlan, Source};
use crate::feature::land::{self, LandOptions};
use crate::feature::preflight::{preflight, Intent};
use crate::feature::schedule::parallelism;
use crate::feature::state::FeatureSettings;
use crate::feature::{self, show};
use crate::ui;

#[derive(Debug, Args)]
pub struct FeatureArgs {
    /// Feature id (file name or `id`) or path to the feature file.
    #[arg(value_name = "ID|PATH")]
    pub feature: String,
    /// Run at most N tasks at once (default: the feature's recommended_parallel, else the wave size up to 4).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_parallel: Option<u32>,
    /// Stop the feature at the first task that is not approved (no further task starts).
    #[arg(long)]
    pub stop_on_failure: bool,
    /// Continue the feature's earlier run: merged tasks are skipped, interrupted ones resume.
    #[arg(long, conflicts_with = "fresh")]
    pub resume: bool,
    /// Discard the earlier run's feature branch and task branches first (asks; --yes to skip).
    #[arg(long)]
    pub fresh: bool,
    /// Answer yes to confirmations.
    #[arg(long, short = 'y')]
    pub yes: bool,
    /// Land tasks that ran elsewhere: squash each approved task (whose dependencies are on the
    /// feature branch) onto it, in dependency order; tasks already there are left alone.
    #[arg(long, conflicts_with_all = ["resume", "fresh", "ready"])]
    pub land: bool,
    /// With --land: fetch the `autobuild/<TASK-ID>` branches from REMOTE.
    #[arg(long, value_name = "REMOTE", requires = "land")]
    pub from_remote: Option<String>,
    /// With --land: read each task's run record from DIR/<TASK-ID>/state.json.
    #[arg(long, value_name = "DIR", requires = "land")]
    pub artifacts: Option<PathBuf>,
    /// With --land: the branch the feature is merged into by a later `autobuild complete`
    /// (default: `[project] base_branch`, else the current branch).
    #[arg(long, value_name = "BRANCH", requires = "land")]
    pub into: Option<String>,
    /// Once every task is on the feature branch, push it to `[forge] remote` and open (or
    /// update) its pull request against the base instead of merging locally.
    #[arg(long, conflicts_with_all = ["auto_merge", "no_merge", "land", "ready", "emit"])]
    pub pr: bool,
    /// Write a CI workflow that runs the feature's tasks as jobs (one per task, waves as job
    /// dependencies, landing with --land) instead of running it here.
    #[arg(long, value_enum, value_name = "FORMAT", conflicts_with_all = ["land", "ready", "resume", "fresh", "dry_run"])]
    pub emit: Option<EmitFormat>,
    /// With --emit: the file to write (default: .github/workflows/autobuild-<feat>.yml for
    /// github-actions, .gitlab-ci.yml for gitlab-ci).
    #[arg(long, value_name = "PATH", requires = "emit")]
    pub output: Option<PathBuf>,
    /// With --emit: the `cargo install` arguments of the exact autobuild the jobs install, e.g.
    /// "--git URL --rev COMMIT autobuild" (default: this checkout in autobuild's own
    /// repository, else the repository and commit this binary was built from when it knows
    /// them; refused otherwise).
    #[arg(
        long,
        value_name = "ARGS",
        requires = "emit",
        allow_hyphen_values = true
    )]
    pub ci_install: Option<String>,
    /// With --emit: replace a file autobuild did not generate.
    #[arg(long, requires = "emit")]
    pub force: bool,
    /// Whether a feature that ran as CI jobs fully landed: reads DIR/feature.json (the last
    /// landing job's record), names every task that did not land and exits 1 if any.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["land", "ready", "resume", "fresh", "emit"])]
    pub outcome: Option<PathBuf>,
    /// With --outcome or --land: tasks given up on (ids separated by spaces or commas): never
    /// landed, whatever their records say; they and their dependants do not count as unfinished.
    #[arg(long, value_name = "IDS", allow_hyphen_values = true)]
    pub abandon: Option<String>,
    /// Print `ready=true` when TASK should run now (not on the feature branch yet, its
    /// dependencies are), else `ready=false`, then `waits_for=IDS`: the dependencies not on
    /// the feature branch (empty unless any); the reason goes to stderr.
    #[arg(long, value_name = "TASK", conflicts_with_all = ["resume", "fresh"])]
    pub ready: Option<String>,
    #[command(flatten)]
    pub flags: RunFlags,
}

/// `--emit`'s formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmitFormat {
    GithubActions,
    GitlabCi,
}

pub fn run(args: FeatureArgs, quiet: bool) -> Result<u8, Error> {
    let root = repo_root(&current_dir()?)?;
    if args.emit.is_some() {
        return emit(&root, &args);
    }
    if args.abandon.is_some() && args.outcome.is_none() && !args.land {
        return Err(Error::usage("--abandon goes with --land or --outcome")
            .with_help("give up tasks where a landing or the final outcome reads the records: `autobuild feature FEAT --land --abandon TASK-3`"));
    }
    if let Some(dir) = &args.outcome {
        let abandon = args.abandon.as_deref().unwrap_or("");
        return Ok(ui::show(crate::feature::outcome::outcome(
            &root,
            &args.feature,
            dir,
            abandon,
        )?));
    }
    if args.land {
        let options = LandOptions {
            remote: args.from_remote,
            artifacts: args.artifacts,
            into: args.into,
            abandon: crate::feature::outcome::ids(args.abandon.as_deref().unwrap_or("")),
        };
        return Ok(ui::show(land::land(&root, &args.feature, &options)?));
    }
    if let Some(task) = &args.ready {
        let (readiness, why) = crate::feature::ready::ready(&root, &args.feature, task)?;
        ui::line(&readiness.lines());
        ui::note(&why);
        return Ok(0);
    }
    let mut run = args.flags.settings();
    run.pr = args.pr;
    let settings = FeatureSettings {
        run,
        max_parallel: args.max_parallel,
        stop_on_failure: args.stop_on_failure,
    };
    if args.flags.dry_run {
        let setup = preflight(&root, &args.feature, settings, Intent::DryRun)?;
        let title = format!("plan for {}", setup.plan.id);
        let group = (!args.flags.json).then_some(title.as_str());
        ui::result(group, &setup.warnings, &[], || {
            if args.flags.json {
                super::json::print(&super::json::plan::FeaturePlan::new(&setup));
            } else {
                ui::line(&show::render_plan(&setup));
            }
        });
        return Ok(0);
    }
    let io = ui::feature::io(crate::ui::progress::Display::choose(args.flags.json, quiet));
    let code = if args.resume {
        feature::run::resume(&root, &args.feature, Some(settings), io)?
    } else {
        let intent = if args.fresh {
            Intent::Fresh
        } else {
            Intent::Start
        };
        feature::run::start(&root, &args.feature, settings, intent, args.yes, io)?
    };
    super::notify::after_feature(&root, &args.feature, code);
    Ok(code)
}

/// `--emit github-actions|gitlab-ci`: the CI file from the same plan a local run uses.
fn emit(root: &std::path::Path, args: &FeatureArgs) -> Result<u8, Error> {
    let settings = FeatureSettings {
        run: args.flags.settings(),
        max_parallel: args.max_parallel,
        stop_on_failure: args.stop_on_failure,
    };
    let setup = preflight(root, &args.feature, settings, Intent::DryRun)?;
    if let Some(warning) = emit::limits::integrate_warning(&setup.config) {
        ui::warn(warning);
    }
    let mut agents = Vec::new();
    for agent in setup.checks.iter().flat_map(|c| c.agents.iter()) {
        if !agents.contains(agent) {
            agents.push(*agent);
        }
    }
    let widest = setup.plan.waves.iter().map(Vec::len).max().unwrap_or(1);
    let plan = EmitPlan {
        feature_id: setup.plan.id.clone(),
        file: setup.plan.file.display().to_string(),
        waves: setup.plan.waves.clone(),
        max_parallel: parallelism(args.max_parallel, setup.plan.recommended_parallel, widest),
        agents,
        wall_times: setup
            .checks
            .iter()
            .filter_map(|c| Some((c.task.clone(), c.max_wall_time?)))
            .collect(),
        source: Source::resolve(root, args.ci_install.as_deref())?,
        sandboxed: emit::sandbox::hiding(&setup.config, &setup.plan),
    };
    let (default, text) = match args.emit {
        Some(EmitFormat::GitlabCi) => (root.join(".gitlab-ci.yml"), emit::gitlab::render(&plan)),
        _ => (
            root.join(format!(
                ".github/workflows/autobuild-{}.yml",
                setup.plan.id.to_lowercase()
            )),
            emit::github::render(&plan),
        ),
    };
    let path = args.output.clone().unwrap_or(default);
    emit::write(&path, &text, args.force)?;
    let shown = path.strip_prefix(root).unwrap_or(&path);
    ui::line(&format!(
        "wrote {} ({} wave(s), {} task(s)); set-up: docs/scale-out.md",
        shown.display(),
        plan.waves.len(),
        setup.plan.tasks.len()
    ));
    Ok(0)
}
