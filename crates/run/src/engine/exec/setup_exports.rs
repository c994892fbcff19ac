//! What `[env] setup` exports, given to an agent process itself (issue 49, item 4): bash sources
//! the setup through `BASH_ENV`, but `sh`, `dash` and `zsh` source no such file, so an agent
//! whose tools use another shell saw none of it. Before each agent invocation the setup runs
//! once in the worktree, in the agent's confinement (it may source files an agent wrote), and
//! the variables it added or changed join the agent's environment
//! (`model::project::env::ProjectEnv::read_exports`). A setup that fails or cannot be read
//! gives the agent no variables and a warning; the checks, which run the setup inline, report
//! the failure as the environment's. The listing is never kept: its log is removed once read.

use std::path::Path;
use std::time::Duration;

use crate::engine::cx::RunCx;
use crate::engine::events::EventKind;
use model::project::env::ProjectEnv;
use process::{ProcessEnd, ProcessSpec};
use sandbox::Confinement;

/// The bound on running the setup to read its exports.
const TIMEOUT: Duration = Duration::from_secs(120);
/// Room for the environment listing (the default capture keeps 1 MiB).
const LISTING_LIMIT: usize = 4 * 1024 * 1024;

/// The setup's exports for an agent working in `worktree` with `env`; empty without a setup.
pub fn for_agent(
    cx: &mut RunCx,
    worktree: &Path,
    env: &[(String, String)],
    confinement: Option<&Confinement>,
) -> Vec<(String, String)> {
    let Some((program, args)) = cx.project_env.exports_command() else {
        return Vec::new();
    };
    let log_path = cx.paths.logs().join("env_setup_exports.log");
    let mut spec = ProcessSpec::new(program, worktree, &log_path);
    spec.args = args;
    spec.env = env.to_vec();
    spec.timeout = Some(cx.clamp(TIMEOUT));
    spec.capture_limit = LISTING_LIMIT;
    spec.group_file = Some(agents::command_group_file(&cx.paths.dir));
    spec.sandbox = confinement.map(Confinement::wrapper);
    let why = match process::run(&spec, &cx.cancel) {
        Ok(outcome) if outcome.end == ProcessEnd::Exited(0) && !outcome.stdout_truncated => {
            let before = |name: &str| {
                env.iter()
                    .rev()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| std::env::var(name).ok())
            };
            // The listing is the environment: it is not kept as a log.
            let _ = std::fs::remove_file(&log_path);
            match ProjectEnv::read_exports(&before, &outcome.stdout) {
                // The runner's own variables stay the runner's, a secret the setup exports
                // is not the agent's (it is stripped like any other), and a value the
                // capture redacted is not the value.
                Some(exports) => {
                    return exports
                        .into_iter()
                        .filter(|(name, value)| {
                            !name.starts_with("AUTOBUILD_")
                                && !process::is_secret_name(name)
                                && !value.contains(process::REDACTED)
                        })
                        .collect()
                }
                None => "its environment listing could not be read".to_string(),
            }
        }
        Ok(outcome) if outcome.end == ProcessEnd::Cancelled => return Vec::new(),
        Ok(outcome) => format!("it ended with {:?}", outcome.end),
        Err(error) => format!("it could not start: {error}"),
    };
    cx.emit(EventKind::Warning {
        message: format!(
            "[env] setup: the agent gets none of its variables ({why}; output in {}); only a \
             bash started by the agent runs the setup itself",
            log_path.display()
        ),
    });
    Vec::new()
}
