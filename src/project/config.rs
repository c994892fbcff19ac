//! The project config `.autobuild/config.toml` (DESIGN.md §3.2): project facts that every run of
//! every workflow shares — the base branch, the environment given to agents and checks alike,
//! the checks, overrides for roles and profiles, and per-model token prices for adapters that
//! estimate cost themselves.
//!
//! An absent file means defaults. Unknown keys are errors (with the location and a "did you
//! mean"), except inside `[roles]` and `[profiles]`, which are kept as opaque tables because the
//! workflow loader validates role and profile overrides against its own models. Validation
//! reports every problem at once.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use toml::Spanned;

use super::layout::Layout;
use crate::diagnostic::{did_you_mean, Diagnostic, Diagnostics};
use crate::error::Error;
use crate::workflow::model::{opt_duration, MergeStrategy};

static CHECK_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9_-]*$").expect("check-name pattern is valid"));
static ENV_VAR_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("env-name pattern is valid"));
static BACKTICKED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"`([^`]+)`").expect("backtick pattern is valid"));

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
}

impl Config {
    /// The config of the repository laid out by `layout`; defaults when the file is absent.
    pub fn load(layout: &Layout) -> Result<Config, Error> {
        Config::load_file(&layout.config())
    }

    /// The config in `path`; defaults when the file is absent.
    pub fn load_file(path: &Path) -> Result<Config, Error> {
        match fs::read_to_string(path) {
            Ok(source) => Config::parse(path, &source).map_err(Error::Invalid),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Config::default()),
            Err(e) => Err(Error::io("cannot read config", path, e)),
        }
    }

    /// Parses and validates the text of the config file at `path`.
    pub fn parse(path: &Path, source: &str) -> Result<Config, Diagnostics> {
        let raw: RawConfig = toml::from_str(source)
            .map_err(|e| Diagnostics(vec![toml_diagnostic(path, source, &e)]))?;
        let mut problems = Vec::new();
        let config = raw.validate(&mut |span: std::ops::Range<usize>, message: String| {
            problems.push(Diagnostic::at_offset(path, source, span.start, message));
        });
        if problems.is_empty() {
            Ok(config)
        } else {
            problems.sort_by_key(|d| d.location);
            Err(Diagnostics(problems))
        }
    }
}

/// The file as written, with spans for validation messages.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    project: RawProject,
    #[serde(default)]
    env: RawEnv,
    #[serde(default)]
    checks: BTreeMap<Spanned<String>, RawCheck>,
    #[serde(default)]
    roles: toml::Table,
    #[serde(default)]
    profiles: toml::Table,
    #[serde(default)]
    pricing: BTreeMap<Spanned<String>, RawPrice>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProject {
    base_branch: Option<Spanned<String>>,
    merge_strategy: Option<MergeStrategy>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnv {
    #[serde(default)]
    vars: BTreeMap<Spanned<String>, String>,
    #[serde(default)]
    path_prepend: Vec<Spanned<String>>,
    setup: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheck {
    cmd: Spanned<String>,
    timeout: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPrice {
    input: Spanned<Amount>,
    /// Defaults to `input`: without a cache price, cached tokens are not assumed cheaper.
    cached_input: Option<Spanned<Amount>>,
    output: Spanned<Amount>,
}

/// A price as written: TOML integers (`output = 10`) are accepted as well as floats.
#[derive(Debug, Clone, Copy)]
struct Amount(f64);

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct AmountVisitor;

        impl serde::de::Visitor<'_> for AmountVisitor {
            type Value = Amount;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number (USD per million tokens)")
            }

            fn visit_f64<E>(self, value: f64) -> Result<Amount, E> {
                Ok(Amount(value))
            }

            fn visit_i64<E>(self, value: i64) -> Result<Amount, E> {
                // Prices are small; nobody writes one beyond f64's exact integer range.
                Ok(Amount(value as f64))
            }

            fn visit_u64<E>(self, value: u64) -> Result<Amount, E> {
                Ok(Amount(value as f64))
            }
        }

        deserializer.deserialize_any(AmountVisitor)
    }
}

type Report<'a> = dyn FnMut(std::ops::Range<usize>, String) + 'a;

impl RawConfig {
    fn validate(self, report: &mut Report<'_>) -> Config {
        let base_branch = self.project.base_branch.and_then(|b| {
            non_blank(
                b,
                report,
                "`base_branch` is empty; remove it to use the current branch",
            )
        });
        let mut vars = BTreeMap::new();
        for (name, value) in self.env.vars {
            if name.get_ref() == "PATH" {
                report(
                    name.span(),
                    "`PATH` cannot be set in `env.vars`; list directories in `env.path_prepend` instead".to_string(),
                );
            } else if !ENV_VAR_NAME.is_match(name.get_ref()) {
                report(
                    name.span(),
                    format!(
                        "`{}` is not a valid environment variable name (letters, digits and `_`, not starting with a digit)",
                        name.get_ref()
                    ),
                );
            } else {
                vars.insert(name.into_inner(), value);
            }
        }
        let path_prepend = self
            .env
            .path_prepend
            .into_iter()
            .filter_map(|dir| {
                if dir.get_ref().contains(':') {
                    report(
                        dir.span(),
                        "a `path_prepend` entry cannot contain `:` (it separates PATH entries); list each directory separately".to_string(),
                    );
                    return None;
                }
                non_blank(dir, report, "empty `path_prepend` entry")
            })
            .collect();
        let setup = self.env.setup.and_then(|s| {
            non_blank(
                s,
                report,
                "`setup` is empty; remove it or give a shell command",
            )
        });

        let mut checks = BTreeMap::new();
        for (name, check) in self.checks {
            let valid_name = CHECK_NAME.is_match(name.get_ref());
            if !valid_name {
                report(
                    name.span(),
                    format!(
                        "check name `{}` is invalid: use lowercase letters, digits, `_` and `-`, starting with a letter (profiles refer to it as `checks.<name>`)",
                        name.get_ref()
                    ),
                );
            }
            let cmd = non_blank(check.cmd, report, "`cmd` is empty; give the command to run");
            let timeout = check.timeout.and_then(|t| {
                let span = t.span();
                match opt_duration::parse(t.get_ref()) {
                    Ok(d) if d.is_zero() => {
                        report(span, "`timeout` must be greater than zero".to_string());
                        None
                    }
                    Ok(d) => Some(d),
                    Err(message) => {
                        report(span, message);
                        None
                    }
                }
            });
            if let (true, Some(cmd)) = (valid_name, cmd) {
                checks.insert(name.into_inner(), CheckConfig { cmd, timeout });
            }
        }

        let pricing = self
            .pricing
            .into_iter()
            .filter_map(|(model, price)| {
                let price = price.validate(report)?;
                if model.get_ref().trim().is_empty() {
                    report(
                        model.span(),
                        "empty model name in `[pricing]`; write `[pricing.\"<model>\"]`"
                            .to_string(),
                    );
                    return None;
                }
                Some((model.into_inner(), price))
            })
            .collect();

        Config {
            project: ProjectConfig {
                base_branch,
                merge_strategy: self.project.merge_strategy,
            },
            env: EnvConfig {
                vars,
                path_prepend,
                setup,
            },
            checks,
            roles: self.roles,
            profiles: self.profiles,
            pricing,
        }
    }
}

impl RawPrice {
    /// The price, or `None` after reporting every amount that is negative or not finite.
    fn validate(self, report: &mut Report<'_>) -> Option<ModelPrice> {
        let mut valid = true;
        let mut amount = |name: &str, value: Spanned<Amount>| {
            let number = value.get_ref().0;
            if !(number.is_finite() && number >= 0.0) {
                report(
                    value.span(),
                    format!(
                        "`{name}` must be a price in USD per million tokens (0 or more), found {number}"
                    ),
                );
                valid = false;
            }
            number
        };
        let input = amount("input", self.input);
        let cached_input = self
            .cached_input
            .map_or(input, |value| amount("cached_input", value));
        let output = amount("output", self.output);
        valid.then_some(ModelPrice {
            input,
            cached_input,
            output,
        })
    }
}

/// The trimmed string, or `None` after reporting `message` when it is blank.
fn non_blank(value: Spanned<String>, report: &mut Report<'_>, message: &str) -> Option<String> {
    if value.get_ref().trim().is_empty() {
        report(value.span(), message.to_string());
        None
    } else {
        Some(value.into_inner().trim().to_string())
    }
}

/// A TOML or deserialization error as a located diagnostic, with a "did you mean" for unknown
/// keys.
fn toml_diagnostic(path: &Path, source: &str, error: &toml::de::Error) -> Diagnostic {
    let message = error.message().trim().to_string();
    let mut diagnostic = match error.span() {
        Some(span) => Diagnostic::at_offset(path, source, span.start, message.clone()),
        None => Diagnostic::new(path, message.clone()),
    };
    if let Some(rest) = message.strip_prefix("unknown field ") {
        let names: Vec<&str> = BACKTICKED
            .captures_iter(rest)
            .filter_map(|c| c.get(1).map(|m| m.as_str()))
            .collect();
        if let Some((unknown, expected)) = names.split_first() {
            if let Some(suggestion) = did_you_mean(unknown, expected.iter().copied()) {
                diagnostic = diagnostic.with_help(format!("did you mean `{suggestion}`?"));
            }
        }
    }
    diagnostic
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(source: &str) -> Result<Config, String> {
        Config::parse(Path::new("config.toml"), source).map_err(|d| d.to_string())
    }

    #[test]
    fn reads_the_documented_example() {
        let config = parse(
            r#"
[project]
base_branch = "main"
merge_strategy = "ff"

[env]
vars = { DATABASE_URL = "sqlite:///tmp/dev.db" }
path_prepend = [".venv/bin"]
setup = "source .venv/bin/activate"

[checks.test]
cmd = "python -m pytest -q"
timeout = "10m"
[checks.lint]
cmd = "ruff check ."

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]

[profiles.feature]
require = ["checks.test", "checks.lint", "criteria", "coach"]
"#,
        )
        .unwrap();
        assert_eq!(config.project.base_branch.as_deref(), Some("main"));
        assert_eq!(config.project.merge_strategy, Some(MergeStrategy::Ff));
        assert_eq!(config.env.vars["DATABASE_URL"], "sqlite:///tmp/dev.db");
        assert_eq!(config.env.path_prepend, vec![".venv/bin"]);
        assert_eq!(
            config.checks["test"].timeout,
            Some(Duration::from_secs(600))
        );
        assert_eq!(config.checks["lint"].timeout, None);
        assert!(config.roles["player"]
            .as_table()
            .unwrap()
            .contains_key("command"));
        assert!(config.profiles.contains_key("feature"));
    }

    #[test]
    fn empty_and_absent_files_mean_defaults() {
        assert_eq!(parse("").unwrap(), Config::default());
        let dir = tempfile::tempdir().unwrap();
        let config = Config::load(&Layout::new(dir.path())).unwrap();
        assert_eq!(config, Config::default());
    }

    #[test]
    fn unknown_key_is_located_with_a_suggestion() {
        let err = parse("[project]\nbase_brnch = \"main\"\n").unwrap_err();
        assert!(
            err.starts_with("config.toml:2:1: unknown field `base_brnch`"),
            "{err}"
        );
        assert!(err.contains("help: did you mean `base_branch`?"), "{err}");

        let err = parse("[chekcs.test]\ncmd = \"x\"\n").unwrap_err();
        assert!(
            err.starts_with("config.toml:1:2: unknown field `chekcs`"),
            "{err}"
        );
        assert!(err.contains("did you mean `checks`?"), "{err}");
    }

    #[test]
    fn reports_every_invalid_value_at_its_place() {
        let err = parse(
            "[env]\nvars = { \"BAD-NAME\" = \"1\", PATH = \"/bin\" }\n\n[checks.Test]\ncmd = \"x\"\n\n[checks.lint]\ncmd = \"  \"\ntimeout = \"0s\"\n\n[checks.slow]\ncmd = \"x\"\ntimeout = \"ten minutes\"\n",
        )
        .unwrap_err();
        let headers: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("config.toml:"))
            .collect();
        assert_eq!(headers.len(), 6, "{err}");
        assert!(headers[0]
            .starts_with("config.toml:2:10: `BAD-NAME` is not a valid environment variable name"));
        assert!(headers[1].starts_with("config.toml:2:28: `PATH` cannot be set"));
        assert!(headers[2].starts_with("config.toml:4:9: check name `Test` is invalid"));
        assert!(headers[3].starts_with("config.toml:8:7: `cmd` is empty"));
        assert!(headers[4].starts_with("config.toml:9:11: `timeout` must be greater than zero"));
        assert!(headers[5].starts_with("config.toml:13:11: invalid duration `ten minutes`"));
    }

    #[test]
    fn path_prepend_entries_are_single_directories() {
        let err = parse("[env]\npath_prepend = [\"bin\", \"a:b\", \"\"]\n").unwrap_err();
        let headers: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("config.toml:"))
            .collect();
        assert_eq!(headers.len(), 2, "{err}");
        assert!(
            headers[0].starts_with("config.toml:2:24: a `path_prepend` entry cannot contain `:`")
        );
        assert!(headers[1].starts_with("config.toml:2:31: empty `path_prepend` entry"));
    }

    #[test]
    fn reads_model_prices() {
        let config = parse(
            "[pricing.\"gpt-5-codex\"]\ninput = 1.25\ncached_input = 0.125\noutput = 10\n\n[pricing.o3]\ninput = 2\noutput = 8.0\n",
        )
        .unwrap();
        assert_eq!(
            config.pricing["gpt-5-codex"],
            ModelPrice {
                input: 1.25,
                cached_input: 0.125,
                output: 10.0
            }
        );
        assert_eq!(
            config.pricing["o3"],
            ModelPrice {
                input: 2.0,
                cached_input: 2.0,
                output: 8.0
            },
            "without a cache price, cached input costs as much as input"
        );
    }

    #[test]
    fn invalid_prices_are_located() {
        let err = parse("[pricing.m]\ninput = -1\noutput = 10\ncahced_input = 0.1\n").unwrap_err();
        assert!(
            err.starts_with("config.toml:4:1: unknown field `cahced_input`"),
            "{err}"
        );
        assert!(err.contains("did you mean `cached_input`?"), "{err}");

        let err = parse("[pricing.m]\ninput = -1\noutput = nan\n").unwrap_err();
        let headers: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("config.toml:"))
            .collect();
        assert_eq!(headers.len(), 2, "{err}");
        assert!(headers[0].starts_with("config.toml:2:9: `input` must be a price"));
        assert!(headers[1].starts_with("config.toml:3:10: `output` must be a price"));

        let err = parse("[pricing.m]\ninput = 1.0\n").unwrap_err();
        assert!(err.contains("missing field `output`"), "{err}");
        let err = parse("[pricing.m]\ninput = \"cheap\"\noutput = 1\n").unwrap_err();
        assert!(
            err.starts_with("config.toml:2:9: invalid type: string \"cheap\", expected a number"),
            "{err}"
        );
    }

    #[test]
    fn a_check_without_cmd_is_located() {
        let err = parse("[checks.test]\ntimeout = \"1m\"\n").unwrap_err();
        assert!(err.starts_with("config.toml:1:"), "{err}");
        assert!(err.contains("missing field `cmd`"), "{err}");
    }
}
