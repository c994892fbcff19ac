//! The typed form of `.autobuild/config.toml`, used only for its JSON Schema.
//!
//! The real reader ([`crate::project::config`]) walks the file key by key so that one load
//! reports every problem; it has no serde types to derive a schema from. These types mirror
//! its tables and keys, and a test feeds every key of this schema, and a key it does not have,
//! to the real reader to keep the two in agreement.

use std::collections::BTreeMap;

use schemars::JsonSchema;

use super::Patch;
use crate::profile::set::ProfileFile;
use crate::project::Integration;
use crate::sandbox::Mode;
use crate::workflow::model::{opt_duration, MergeStrategy, Role};

/// `.autobuild/config.toml`: project facts every run of every workflow shares.
#[derive(JsonSchema)]
#[schemars(title = "autobuild config.toml")]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    pub project: Option<Project>,
    pub env: Option<Env>,
    /// Runner checks by name (lowercase letters, digits, `_` and `-`, starting with a letter);
    /// profiles require them as `checks.<name>`.
    #[schemars(extend("propertyNames" = {"pattern": "^[a-z][a-z0-9_-]*$"}))]
    pub checks: Option<BTreeMap<String, Check>>,
    /// Overrides of the roles of that name in every workflow (only the keys that change).
    pub roles: Option<BTreeMap<String, Patch<Role>>>,
    /// Overrides of profiles, or new profiles (a new one needs `require`).
    pub profiles: Option<BTreeMap<String, Patch<ProfileFile>>>,
    /// Token prices by model name, for adapters that estimate cost themselves (codex).
    pub pricing: Option<BTreeMap<String, Price>>,
    pub scope: Option<Scope>,
    pub worktree: Option<Worktree>,
    pub sandbox: Option<Sandbox>,
    pub feature: Option<Feature>,
    pub context: Option<Context>,
    pub coverage: Option<Coverage>,
}

/// `[coverage]`: the command that measures line coverage, run like a check for tasks whose
/// profile sets `coverage` (the minimum line percentage).
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Coverage {
    /// The command, run by `sh -c` in the worktree (e.g. `pytest --cov
    /// --cov-report=xml:coverage.xml`).
    pub cmd: String,
    /// The report it writes, relative to the worktree: Cobertura XML or LCOV, recognised from
    /// its content.
    pub report: String,
    #[schemars(with = "Option<opt_duration::Written>")]
    pub timeout: Option<String>,
}

/// `[context]`: files every role is shown.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Context {
    /// Files (relative to the repository root) every role's prompt lists with their contents
    /// (each cut at 16 KiB); a task's `context_files:` adds to them. Each must exist.
    pub files: Option<Vec<String>>,
}

/// `[project]`
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Project {
    /// The branch runs start from and merge into (default: the branch checked out).
    pub base_branch: Option<String>,
    /// How an approved branch lands on the base branch.
    pub merge_strategy: Option<MergeStrategy>,
}

/// `[env]`: the environment given to agent processes and runner checks alike.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// Literal values by variable name (letters, digits and `_`, not starting with a digit;
    /// not `PATH`); no expansion is applied.
    #[schemars(extend("propertyNames" = {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$", "not": {"const": "PATH"}}))]
    pub vars: Option<BTreeMap<String, String>>,
    /// Directories put in front of PATH; relative entries are relative to the worktree.
    pub path_prepend: Option<Vec<String>>,
    /// A shell prelude run before every runner command and every agent bash command.
    pub setup: Option<String>,
}

/// `[checks.<name>]`
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// The command, run by `sh -c` in the worktree.
    pub cmd: String,
    #[schemars(with = "Option<opt_duration::Written>")]
    pub timeout: Option<String>,
    /// Runs in the runner's own copy of the worktree with the `[scope] hidden` files; agents
    /// learn of its result only what `[scope] reveal` allows.
    pub hidden: Option<bool>,
}

/// `[pricing."<model>"]`, in USD per million tokens.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens not served from the prompt cache.
    #[schemars(range(min = 0))]
    pub input: f64,
    /// Per million input tokens served from the prompt cache (default: `input`).
    #[schemars(range(min = 0))]
    pub cached_input: Option<f64>,
    /// Per million output tokens.
    #[schemars(range(min = 0))]
    pub output: f64,
}

/// `[scope]`
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scope {
    /// Globs (relative to the repository root) no agent may create, change or delete.
    pub protect: Option<Vec<String>>,
    /// Globs no agent can see (worktree, checkout, git); only checks with `hidden = true` use
    /// them. Needs the sandbox.
    pub hidden: Option<Vec<String>>,
    /// What agents learn of a failing hidden check (default `names`).
    pub reveal: Option<crate::steps::reveal::Reveal>,
}

/// `[worktree]`: what a task's worktree needs besides the checked-out files.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Worktree {
    /// Paths symlinked to the main checkout's copies (e.g. a git-ignored `.venv`).
    pub link: Option<Vec<String>>,
    /// Paths copied from the main checkout when the worktree is created.
    pub copy: Option<Vec<String>>,
    /// A shell command run once in a new worktree, with the project environment.
    pub setup: Option<String>,
}

/// `[sandbox]`: OS confinement of agents and checks.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Sandbox {
    pub mode: Option<Mode>,
    /// Absolute paths (or `~/…`) agents and checks may write besides the worktree.
    pub writable: Option<Vec<String>>,
}

/// `[feature]`: what a feature run does after each wave.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Feature {
    /// After each wave: run the profiles' checks on the feature branch's tip (`check`, the
    /// default), also hand a failure to the player (`integrate`), or skip it (`off`).
    pub integration: Option<Integration>,
}
