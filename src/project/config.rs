//! The project config `.autobuild/config.toml` (README.md): project facts that every run of
//! every workflow shares — the base branch, the environment given to agents and checks alike,
//! the checks, overrides for roles and profiles, per-model token prices for adapters that
//! estimate cost themselves, what a task's worktree needs besides its checked-out files, and
//! the sandbox settings, and the coverage command.
//!
//! An absent file means defaults. One load reports every problem the file has — unknown keys
//! (with a "did you mean") in every table, values of the wrong type, invalid values — so a user
//! fixes them in one edit instead of one rerun per mistake. That is why the file is not handed
//! to serde (which stops at the first error) but read from its spanned TOML document by
//! [`sections`], which knows the structure. `[roles]` and `[profiles]` are kept as opaque tables:
//! the workflow loader validates them against its own models. Diagnostics name the file
//! relative to the repository root (`.autobuild/config.toml:3:1`), like every other message
//! about it. A file over the input size cap or not UTF-8 is such a problem too (exit 2), see
//! [`crate::user_file`].

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use toml::de::DeTable;

use super::layout::Layout;
use crate::diagnostic::{Diagnostic, Diagnostics};
use crate::error::Error;
use crate::user_file::{self, ReadError};
use crate::workflow::model::MergeStrategy;

mod coverage;
mod feature;
mod reader;
mod sandbox;
mod sections;
mod worktree;

pub use coverage::CoverageConfig;
pub use feature::{FeatureConfig, Integration};

/// The whole project config.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Config {
    pub project: ProjectConfig,
    pub env: EnvConfig,
    /// Runner checks by name (`test`, `lint`, …).
    pub checks: BTreeMap<String, CheckConfig>,
    /// `[roles.<name>]` overrides, validated by the workflow loader.
    pub roles: toml::Table,
    /// `[profiles.<name>]` overrides, validated by the profile loader.
    pub profiles: toml::Table,
    /// `[pricing."<model>"]`: token prices that replace an adapter's built-in estimates.
    pub pricing: PriceTable,
    /// `[scope]`: paths no agent may change.
    pub scope: ScopeConfig,
    /// `[worktree]`: what a task's worktree needs besides the checked-out files.
    pub worktree: WorktreeConfig,
    /// `[sandbox]`: OS confinement of agents and checks.
    pub sandbox: crate::sandbox::Settings,
    /// `[feature]`: what a feature run does after each wave.
    pub feature: FeatureConfig,
    /// `[context]`: files every role is shown.
    pub context: ContextConfig,
    /// `[coverage]`: the command that measures line coverage, for profiles with `coverage`.
    pub coverage: Option<CoverageConfig>,
}

/// `[context]` of config.toml.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextConfig {
    /// Files (relative to the repository root) every role is shown; a task's
    /// `context_files:` adds to them.
    pub files: Vec<crate::project::context_files::ContextFile>,
}

/// `[scope]` of config.toml.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeConfig {
    /// Globs (relative to the repository root) no agent may create, change or delete; a task's
    /// `protect:` adds to them.
    pub protect: Vec<String>,
    /// Globs no agent can see at all (worktree, checkout, git); only the runner's hidden checks
    /// use them. A task's `hidden:` adds to them. They need the sandbox.
    pub hidden: Vec<String>,
    /// What agents learn of a failing hidden check.
    pub reveal: crate::steps::reveal::Reveal,
}

/// `[worktree]`: git-ignored paths a worktree needs from the main checkout, and a setup
/// command (README.md).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorktreeConfig {
    /// Paths (relative to the repository root) symlinked to the main checkout's copies.
    pub link: Vec<String>,
    /// Paths copied from the main checkout when the worktree is created.
    pub copy: Vec<String>,
    /// A shell command run once in a new worktree, with the project environment.
    pub setup: Option<String>,
}

/// Token prices by model name.
pub type PriceTable = BTreeMap<String, ModelPrice>;

/// `[pricing."<model>"]`: what one model costs, in USD per million tokens. Used by adapters
/// whose agent CLI reports tokens but no cost (codex), so the cost is an estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModelPrice {
    /// Per million input tokens not served from the prompt cache.
    pub input: f64,
    /// Per million input tokens served from the prompt cache.
    pub cached_input: f64,
    pub output: f64,
}

/// `[project]`
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProjectConfig {
    /// Default: the branch checked out when the run starts.
    pub base_branch: Option<String>,
    pub merge_strategy: Option<MergeStrategy>,
}

/// `[env]`: the environment given to agent processes and runner checks alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvConfig {
    /// Literal values; no expansion is applied.
    pub vars: BTreeMap<String, String>,
    /// Directories put in front of PATH; relative entries are relative to the worktree.
    pub path_prepend: Vec<String>,
    /// A shell prelude run before every runner command and every agent bash command.
    pub setup: Option<String>,
}

/// `[checks.<name>]`
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckConfig {
    pub cmd: String,
    pub timeout: Option<Duration>,
    /// Runs in the runner's copy with the `[scope] hidden` files; agents learn of its result
    /// only what `[scope] reveal` allows.
    pub hidden: bool,
}

impl Config {
    /// The config of the repository laid out by `layout`; defaults when the file is absent.
    /// Problems are reported against the path relative to the repository root.
    pub fn load(layout: &Layout) -> Result<Config, Error> {
        let path = layout.config();
        let shown = path.strip_prefix(layout.root()).unwrap_or(&path);
        Config::read(&path, shown)
    }

    /// The config in `path`; defaults when the file is absent.
    pub fn load_file(path: &Path) -> Result<Config, Error> {
        Config::read(path, path)
    }

    fn read(path: &Path, shown: &Path) -> Result<Config, Error> {
        match user_file::read(path, shown) {
            Ok(source) => Config::parse(shown, &source).map_err(Error::Invalid),
            Err(ReadError::NotFound(_)) => Ok(Config::default()),
            Err(e) => Err(e.into_error("cannot read config", path)),
        }
    }

    /// Parses and validates the text of the config file at `path`, reporting every problem.
    pub fn parse(path: &Path, source: &str) -> Result<Config, Diagnostics> {
        let (document, syntax_errors) = DeTable::parse_recoverable(source);
        if !syntax_errors.is_empty() {
            return Err(Diagnostics(
                syntax_errors
                    .iter()
                    .map(|e| {
                        let message = format!("invalid TOML: {}", e.message().trim());
                        match e.span() {
                            Some(span) => Diagnostic::at_offset(path, source, span.start, message),
                            None => Diagnostic::new(path, message),
                        }
                    })
                    .collect(),
            ));
        }
        let (config, mut problems) = sections::read(path, source, document.get_ref());
        if problems.is_empty() {
            Ok(config)
        } else {
            problems.sort_by_key(|d| d.location);
            Err(Diagnostics(problems))
        }
    }
}

#[cfg(test)]
mod tests;
