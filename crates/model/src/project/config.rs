//! The project config `.autobuild/config.toml`: project facts that every run of every
//! workflow shares — the base branch, the environment given to agents and checks alike, the
//! checks, overrides for roles and profiles, per-model token prices for adapters that estimate
//! cost themselves, what a task's worktree needs besides its checked-out files, the sandbox
//! settings, and the coverage command.
//!
//! The types below are the file's one description: the reader decodes them (through
//! [`base::user_file::parse_toml`] and [`base::user_file::typed::decode`], which locate every
//! problem and suggest a near key), `autobuild schema config` derives the JSON Schema from them
//! (their doc comments are its descriptions), and each value's rule lives on the type the key
//! is decoded through ([`values`]). What needs more than one value, or where a value was
//! written, is the small pass in [`finish`].
//!
//! An absent file means defaults. One load reports every problem the file has, so a user fixes
//! them in one edit instead of one rerun per mistake. `[roles]` and `[profiles]` are only
//! checked to be tables of tables here: the workflow and profile loaders read them against
//! their own models. Diagnostics name the file relative to the repository root
//! (`.autobuild/config.toml:3:1`), like every other message about it. A file over the input
//! size cap, not UTF-8 or not a regular file is such a problem too (exit 2), see
//! [`base::user_file`].

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::{Deserialize, Deserializer};

use super::layout::Layout;
use crate::workflow::model::MergeStrategy;
use base::diagnostic::{Diagnostic, Diagnostics};
use base::error::Error;
use base::user_file::rule::Rule;
use base::user_file::source::{Layer, Source};
use base::user_file::{self, parse_toml, typed, ReadError};

mod coverage;
mod feature;
mod finish;
pub mod forge;
pub mod notify;
pub mod values;
mod worktree;

pub use coverage::CoverageConfig;
pub use feature::{FeatureConfig, Integration};
pub use forge::{ForgeConfig, ForgeKind};
pub use notify::NotifyConfig;
pub use worktree::WorktreeConfig;

use values::{
    Amount, BranchName, CheckName, ContextPath, EnvValue, EnvVarName, PathEntry, ScopeGlob,
    ShellCommand, Timeout,
};

/// `.autobuild/config.toml`: project facts every run of every workflow shares.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(title = "autobuild config.toml")]
pub struct Config {
    pub project: ProjectConfig,
    pub env: EnvConfig,
    /// Runner checks by name (lowercase letters, digits, `_` and `-`, starting with a letter);
    /// profiles require them as `checks.<name>`.
    #[serde(deserialize_with = "checks")]
    #[schemars(with = "BTreeMap<CheckName, CheckConfig>")]
    pub checks: BTreeMap<String, CheckConfig>,
    /// Overrides of the roles of that name in every workflow (only the keys that change).
    // Each entry's schema (a role's keys) is filled in by `schema`, which knows workflows.
    #[schemars(with = "BTreeMap<String, serde_json::Map<String, serde_json::Value>>")]
    pub roles: BTreeMap<String, toml::Table>,
    /// Overrides of profiles, or new profiles (a new one needs `require`).
    // Each entry's schema (a profile's keys) is filled in by `schema`, which knows profiles.
    #[schemars(with = "BTreeMap<String, serde_json::Map<String, serde_json::Value>>")]
    pub profiles: BTreeMap<String, toml::Table>,
    /// Token prices by model name, for adapters that estimate cost themselves (codex).
    pub pricing: PriceTable,
    pub scope: ScopeConfig,
    pub tests: TestsConfig,
    pub worktree: WorktreeConfig,
    pub sandbox: sandbox::Settings,
    pub feature: FeatureConfig,
    pub context: ContextConfig,
    pub coverage: Option<CoverageConfig>,
    /// Where `--pr` pushes the approved branch and opens its pull (merge) request.
    pub forge: Option<ForgeConfig>,
    /// A command run when a run ends approved, blocked, or waiting for a person.
    pub notify: Option<NotifyConfig>,
}

/// `[context]`: files every role is shown.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Context")]
pub struct ContextConfig {
    /// Files (relative to the repository root) every role's prompt lists with their contents
    /// (each cut at 16 KiB); a task's `context_files:` adds to them. Each must exist.
    #[serde(deserialize_with = "ContextPath::each")]
    #[schemars(with = "Vec<ContextPath>")]
    pub files: Vec<crate::project::context_files::ContextFile>,
}

/// `[scope]`: paths agents may not change, or not see.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Scope")]
pub struct ScopeConfig {
    /// Globs (relative to the repository root) no agent may create, change or delete; a task's
    /// `protect:` adds to them.
    #[serde(deserialize_with = "ScopeGlob::each")]
    #[schemars(with = "Vec<ScopeGlob>")]
    pub protect: Vec<String>,
    /// Globs no agent can see (worktree, checkout, git); only checks with `hidden = true` use
    /// them. A task's `hidden:` adds to them. Needs the sandbox.
    #[serde(deserialize_with = "ScopeGlob::each")]
    #[schemars(with = "Vec<ScopeGlob>")]
    pub hidden: Vec<String>,
    /// What agents learn of a failing hidden check (default `names`).
    pub reveal: crate::steps::reveal::Reveal,
}

/// `[tests]`: what counts as the project's tests.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Tests")]
pub struct TestsConfig {
    /// Globs of test infrastructure beyond the built-in ones (`conftest.py`, `pytest.ini`,
    /// `tox.ini`, `setup.cfg`, `pyproject.toml`, `package.json`, jest and vitest configs,
    /// `Cargo.toml`, …): a change to them is a test change, shown to every reviewer under
    /// "Tests changed".
    #[serde(deserialize_with = "ScopeGlob::each")]
    #[schemars(with = "Vec<ScopeGlob>")]
    pub infra: Vec<String>,
    /// The regression oracle (default `base`): the tests that passed at the base must still
    /// pass, and a test that failed there may not be made to pass by changing it, judged with
    /// the base's versions of the test files and infrastructure (`model::steps::oracle`).
    pub oracle: Oracle,
}

/// `[tests] oracle`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Oracle {
    /// The base's tests judge every turn.
    #[default]
    Base,
    /// Only the checks' exit codes (and the reviewers).
    Off,
}

/// Token prices by model name.
pub type PriceTable = BTreeMap<String, ModelPrice>;

/// `[pricing."<model>"]`: what one model costs, in USD per million tokens. Used by adapters
/// whose agent CLI reports tokens but no cost (codex), so the cost is an estimate.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Price")]
pub struct ModelPrice {
    /// Per million input tokens not served from the prompt cache.
    #[serde(deserialize_with = "Amount::one")]
    #[schemars(with = "Amount")]
    pub input: f64,
    /// Per million input tokens served from the prompt cache (default: `input`).
    #[serde(default, deserialize_with = "Amount::some")]
    #[schemars(with = "Option<Amount>")]
    pub cached_input: Option<f64>,
    /// Per million output tokens.
    #[serde(deserialize_with = "Amount::one")]
    #[schemars(with = "Amount")]
    pub output: f64,
}

impl ModelPrice {
    /// The price of cached input tokens; without one, they are not assumed cheaper.
    pub fn cached_input(&self) -> f64 {
        self.cached_input.unwrap_or(self.input)
    }
}

/// `[project]`
#[derive(Debug, Clone, Default, PartialEq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Project")]
pub struct ProjectConfig {
    /// The branch runs start from and merge into (default: the branch checked out).
    #[serde(deserialize_with = "BranchName::some")]
    #[schemars(with = "Option<BranchName>")]
    pub base_branch: Option<String>,
    /// How an approved branch lands on the base branch.
    pub merge_strategy: Option<MergeStrategy>,
}

/// `[env]`: the environment given to agent processes and runner checks alike.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Env")]
pub struct EnvConfig {
    /// Literal values by variable name (letters, digits and `_`, not starting with a digit;
    /// not `PATH`); no expansion is applied.
    #[serde(deserialize_with = "vars")]
    #[schemars(
        with = "BTreeMap<EnvVarName, EnvValue>",
        extend("propertyNames" = {"not": {"const": values::RESERVED_VAR}})
    )]
    pub vars: BTreeMap<String, String>,
    /// Directories put in front of PATH; relative entries are relative to the worktree.
    #[serde(deserialize_with = "PathEntry::each")]
    #[schemars(with = "Vec<PathEntry>")]
    pub path_prepend: Vec<String>,
    /// A shell prelude run before every runner command and every agent bash command.
    #[serde(deserialize_with = "ShellCommand::some")]
    #[schemars(with = "Option<ShellCommand>")]
    pub setup: Option<String>,
}

/// `[checks.<name>]`
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(rename = "Check")]
pub struct CheckConfig {
    /// The command, run by `sh -c` in the worktree.
    #[serde(deserialize_with = "ShellCommand::one")]
    #[schemars(with = "ShellCommand")]
    pub cmd: String,
    /// How long it may run (default: 10 minutes).
    #[serde(default, deserialize_with = "Timeout::some")]
    #[schemars(with = "Option<Timeout>")]
    pub timeout: Option<Duration>,
    /// Runs in the runner's own copy of the worktree with the `[scope] hidden` files; agents
    /// learn of its result only what `[scope] reveal` allows.
    #[serde(default)]
    pub hidden: bool,
    /// Whether a failure blocks approval (default `true`). `false` makes the check advisory —
    /// reported, never blocking — unless the profile requires it by name
    /// (`require = ["checks.<name>"]`); a hidden check always blocks.
    #[serde(default)]
    pub required: Option<bool>,
    /// The JUnit XML file the command writes (relative to the worktree): the runner reads the
    /// test counts from it instead of from the output. A passing check that wrote none, or one
    /// that cannot be read, is an environment failure naming the path.
    #[serde(default)]
    pub results: Option<String>,
}

/// `[checks]`, by names that follow [`CheckName`]'s rule.
fn checks<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, CheckConfig>, D::Error> {
    let checks = BTreeMap::<CheckName, CheckConfig>::deserialize(d)?;
    Ok(checks
        .into_iter()
        .map(|(name, check)| (name.into_value(), check))
        .collect())
}

/// `[env] vars`, by names that follow [`EnvVarName`]'s rule.
fn vars<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<String, String>, D::Error> {
    let vars = BTreeMap::<EnvVarName, EnvValue>::deserialize(d)?;
    Ok(vars
        .into_iter()
        .map(|(name, value)| (name.into_value(), value.into_value()))
        .collect())
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

    /// Parses and validates the text of the config file at `path`, reporting every problem,
    /// in the order they are written.
    pub fn parse(path: &Path, text: &str) -> Result<Config, Diagnostics> {
        let source = Source::new(path, text, Layer::Config);
        let tree = parse_toml::parse(&source).map_err(in_order)?;
        let mut config: Config = typed::decode_tables(&tree).map_err(in_order)?;
        let problems = finish::finish(&mut config, &tree);
        if problems.is_empty() {
            // The forge's token never reaches an agent, a check or a command.
            if let Some(forge) = &config.forge {
                process::secrets::withhold(forge.token_env());
            }
            Ok(config)
        } else {
            Err(in_order(problems))
        }
    }
}

fn in_order(mut problems: Vec<Diagnostic>) -> Diagnostics {
    problems.sort_by_key(|d| d.location);
    Diagnostics(problems)
}

#[cfg(test)]
mod tests;
