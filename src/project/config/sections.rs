//! The structure of `config.toml`: which tables and keys exist, their types and their rules.
//!
//! Each table is walked entry by entry: a known key is read with its type and rules checked, an
//! unknown key is reported with a "did you mean" and skipped, and reading goes on. A value that
//! is wrong leaves its field at the default, so the caller only uses the result when no problem
//! was found.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;
use strum::IntoEnumIterator;

use regex::Regex;
use toml::de::{DeTable, DeValue};

use super::reader::{describe, plain_text, Item, Key, Reader};
use super::{CheckConfig, Config, EnvConfig, ModelPrice, PriceTable, ProjectConfig, ScopeConfig};
use crate::diagnostic::Diagnostic;
use crate::steps::reveal::Reveal;
use crate::workflow::model::MergeStrategy;

const ROOT_KEYS: [&str; 12] = [
    "project", "env", "checks", "roles", "profiles", "pricing", "scope", "worktree", "sandbox",
    "context", "feature", "coverage",
];
const CONTEXT_KEYS: [&str; 1] = ["files"];
const SCOPE_KEYS: [&str; 3] = ["protect", "hidden", "reveal"];
const PROJECT_KEYS: [&str; 2] = ["base_branch", "merge_strategy"];
const ENV_KEYS: [&str; 3] = ["vars", "path_prepend", "setup"];
const CHECK_KEYS: [&str; 3] = ["cmd", "timeout", "hidden"];
const PRICE_KEYS: [&str; 3] = ["input", "cached_input", "output"];
const MERGE_STRATEGIES: [MergeStrategy; 3] = [
    MergeStrategy::Squash,
    MergeStrategy::Merge,
    MergeStrategy::Ff,
];

static CHECK_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9_-]*$").expect("check-name pattern is valid"));
static ENV_VAR_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("env-name pattern is valid"));

/// The config `document` describes and every problem found in it (the config is only
/// meaningful when there is none).
pub(super) fn read(path: &Path, source: &str, document: &DeTable<'_>) -> (Config, Vec<Diagnostic>) {
    let mut reader = Reader::new(path, source);
    let config = config(&mut reader, document);
    (config, reader.into_problems())
}

fn config(reader: &mut Reader<'_>, document: &DeTable<'_>) -> Config {
    let mut config = Config::default();
    for (key, item) in document {
        match key.get_ref().as_ref() {
            "project" => {
                if let Some(table) = reader.table("project", item) {
                    config.project = project(reader, table);
                }
            }
            "env" => {
                if let Some(table) = reader.table("env", item) {
                    config.env = env(reader, table);
                }
            }
            "checks" => {
                if let Some(table) = reader.table("checks", item) {
                    config.checks = checks(reader, table);
                }
            }
            "roles" => config.roles = overrides(reader, "roles", item),
            "profiles" => config.profiles = overrides(reader, "profiles", item),
            "pricing" => {
                if let Some(table) = reader.table("pricing", item) {
                    config.pricing = pricing(reader, table);
                }
            }
            "scope" => {
                if let Some(table) = reader.table("scope", item) {
                    config.scope = scope(reader, table);
                }
            }
            "worktree" => {
                if let Some(table) = reader.table("worktree", item) {
                    config.worktree = super::worktree::read(reader, table);
                }
            }
            "sandbox" => {
                if let Some(table) = reader.table("sandbox", item) {
                    config.sandbox = super::sandbox::sandbox(reader, table);
                }
            }
            "context" => {
                if let Some(table) = reader.table("context", item) {
                    config.context = context(reader, table);
                }
            }
            "feature" => {
                if let Some(table) = reader.table("feature", item) {
                    config.feature = super::feature::read(reader, table);
                }
            }
            "coverage" => config.coverage = super::coverage::read(reader, item),
            _ => reader.unknown_key(key, "at the top level", &ROOT_KEYS),
        }
    }
    config
}

/// `[scope]`: `protect`, globs no agent may change (see `steps::scope`); `hidden`, globs no
/// agent may see; `reveal`, what agents learn of a failing hidden check.
fn scope(reader: &mut Reader<'_>, table: &DeTable<'_>) -> ScopeConfig {
    let mut scope = ScopeConfig::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "protect" => scope.protect = globs(reader, "protect", item),
            "hidden" => scope.hidden = globs(reader, "hidden", item),
            "reveal" => scope.reveal = reveal(reader, item).unwrap_or_default(),
            _ => reader.unknown_key(key, "in [scope]", &SCOPE_KEYS),
        }
    }
    scope
}

/// `[context]`: `files`, shown to every role (see `project::context_files`); whether each
/// exists is checked when a run is planned, located at its entry here.
fn context(reader: &mut Reader<'_>, table: &DeTable<'_>) -> super::ContextConfig {
    use crate::project::context_files::{missing, path_problem, ContextFile};
    let mut context = super::ContextConfig::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "files" => {
                let Some(entries) = reader.array("context.files", item) else {
                    continue;
                };
                for entry in entries {
                    let Some(path) = reader.string("a `context.files` entry", entry) else {
                        continue;
                    };
                    match path_problem(path) {
                        Some(why) => reader.report(entry.span(), why, None),
                        None => context.files.push(ContextFile {
                            path: path.to_string(),
                            missing: missing(reader.at(entry.span()), path),
                        }),
                    }
                }
            }
            _ => reader.unknown_key(key, "in [context]", &CONTEXT_KEYS),
        }
    }
    context
}

/// `scope.<name>`: a list of valid globs.
fn globs(reader: &mut Reader<'_>, name: &str, item: &Item<'_>) -> Vec<String> {
    let mut patterns = Vec::new();
    let Some(entries) = reader.array(&format!("scope.{name}"), item) else {
        return patterns;
    };
    for entry in entries {
        let Some(pattern) = reader.string(&format!("a `scope.{name}` entry"), entry) else {
            continue;
        };
        match crate::steps::scope::glob(pattern) {
            Ok(_) => patterns.push(pattern.to_string()),
            Err(why) => reader.report(entry.span(), why, None),
        }
    }
    patterns
}

fn reveal(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<Reveal> {
    reader.one_of(
        "scope.reveal",
        "scope.reveal",
        item,
        &Reveal::iter().collect::<Vec<_>>(),
        Reveal::as_str,
    )
}

fn project(reader: &mut Reader<'_>, table: &DeTable<'_>) -> ProjectConfig {
    let mut project = ProjectConfig::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "base_branch" => {
                project.base_branch = reader.non_blank(
                    "project.base_branch",
                    item,
                    "`base_branch` is empty; remove it to use the current branch",
                );
            }
            "merge_strategy" => project.merge_strategy = merge_strategy(reader, item),
            _ => reader.unknown_key(key, "in [project]", &PROJECT_KEYS),
        }
    }
    project
}

fn merge_strategy(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<MergeStrategy> {
    reader.one_of(
        "project.merge_strategy",
        "merge_strategy",
        item,
        &MERGE_STRATEGIES,
        MergeStrategy::as_str,
    )
}

fn env(reader: &mut Reader<'_>, table: &DeTable<'_>) -> EnvConfig {
    let mut env = EnvConfig::default();
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "vars" => {
                if let Some(table) = reader.table("env.vars", item) {
                    env.vars = vars(reader, table);
                }
            }
            "path_prepend" => env.path_prepend = path_prepend(reader, item),
            "setup" => {
                env.setup = reader.non_blank(
                    "env.setup",
                    item,
                    "`setup` is empty; remove it or give a shell command",
                );
            }
            _ => reader.unknown_key(key, "in [env]", &ENV_KEYS),
        }
    }
    env
}

fn vars(reader: &mut Reader<'_>, table: &DeTable<'_>) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for (key, item) in table {
        let name = key.get_ref().as_ref();
        let valid_name = if name == "PATH" {
            reader.report(
                key.span(),
                "`PATH` cannot be set in `env.vars`; list directories in `env.path_prepend` \
                 instead",
                None,
            );
            false
        } else if !ENV_VAR_NAME.is_match(name) {
            reader.report(
                key.span(),
                format!(
                    "`{name}` is not a valid environment variable name (letters, digits and \
                     `_`, not starting with a digit)"
                ),
                None,
            );
            false
        } else {
            true
        };
        let value = match item.get_ref() {
            DeValue::String(value) => Some(value.to_string()),
            other => {
                reader.report(
                    item.span(),
                    format!(
                        "`env.vars.{name}` must be a string, found {}",
                        describe(other)
                    ),
                    Some(format!(
                        "environment values are text: write `{name} = \"{}\"`",
                        plain_text(other)
                    )),
                );
                None
            }
        };
        if let (true, Some(value)) = (valid_name, value) {
            vars.insert(name.to_string(), value);
        }
    }
    vars
}

fn path_prepend(reader: &mut Reader<'_>, item: &Item<'_>) -> Vec<String> {
    let Some(entries) = reader.array("env.path_prepend", item) else {
        return Vec::new();
    };
    let mut dirs = Vec::new();
    for entry in entries {
        let Some(dir) = reader.string("an `env.path_prepend` entry", entry) else {
            continue;
        };
        if dir.contains(':') {
            reader.report(
                entry.span(),
                "a `path_prepend` entry cannot contain `:` (it separates PATH entries); list \
                 each directory separately",
                None,
            );
        } else if dir.trim().is_empty() {
            reader.report(entry.span(), "empty `path_prepend` entry", None);
        } else {
            dirs.push(dir.trim().to_string());
        }
    }
    dirs
}

fn checks(reader: &mut Reader<'_>, table: &DeTable<'_>) -> BTreeMap<String, CheckConfig> {
    let mut checks = BTreeMap::new();
    for (key, item) in table {
        let name = key.get_ref().as_ref();
        let valid_name = CHECK_NAME.is_match(name);
        if !valid_name {
            reader.report(
                key.span(),
                format!(
                    "check name `{name}` is invalid: use lowercase letters, digits, `_` and \
                     `-`, starting with a letter (profiles refer to it as `checks.<name>`)"
                ),
                None,
            );
        }
        let Some(fields) = reader.table(&format!("checks.{name}"), item) else {
            continue;
        };
        let check = check(reader, key, fields);
        if let (true, Some(check)) = (valid_name, check) {
            checks.insert(name.to_string(), check);
        }
    }
    checks
}

fn check(reader: &mut Reader<'_>, name: &Key<'_>, table: &DeTable<'_>) -> Option<CheckConfig> {
    let mut cmd = None;
    let mut cmd_written = false;
    let mut timeout = None;
    let mut hidden = false;
    for (key, item) in table {
        match key.get_ref().as_ref() {
            "cmd" => {
                cmd_written = true;
                cmd = reader.non_blank(
                    &format!("checks.{}.cmd", name.get_ref()),
                    item,
                    "`cmd` is empty; give the command to run",
                );
            }
            "timeout" => {
                timeout = reader.duration(&format!("checks.{}.timeout", name.get_ref()), item);
            }
            "hidden" => {
                hidden = reader
                    .boolean(&format!("checks.{}.hidden", name.get_ref()), item)
                    .unwrap_or_default();
            }
            _ => reader.unknown_key(key, &format!("in [checks.{}]", name.get_ref()), &CHECK_KEYS),
        }
    }
    if !cmd_written {
        reader.report(
            name.span(),
            format!("missing key `cmd` in [checks.{}]", name.get_ref()),
            Some("give the command to run, e.g. `cmd = \"cargo test\"`".to_string()),
        );
    }
    Some(CheckConfig {
        cmd: cmd?,
        timeout,
        hidden,
    })
}

fn pricing(reader: &mut Reader<'_>, table: &DeTable<'_>) -> PriceTable {
    let mut pricing = PriceTable::new();
    for (key, item) in table {
        let model = key.get_ref().as_ref();
        let valid_name = !model.trim().is_empty();
        if !valid_name {
            reader.report(
                key.span(),
                "empty model name in `[pricing]`; write `[pricing.\"<model>\"]`",
                None,
            );
        }
        let Some(fields) = reader.table(&format!("pricing.{model}"), item) else {
            continue;
        };
        if let (true, Some(price)) = (valid_name, price(reader, key, fields)) {
            pricing.insert(model.to_string(), price);
        }
    }
    pricing
}

fn price(reader: &mut Reader<'_>, model: &Key<'_>, table: &DeTable<'_>) -> Option<ModelPrice> {
    let mut amounts: BTreeMap<&str, Option<f64>> = BTreeMap::new();
    for (key, item) in table {
        let field = key.get_ref().as_ref();
        match PRICE_KEYS.iter().find(|known| **known == field) {
            Some(known) => {
                amounts.insert(known, amount(reader, known, item));
            }
            None => reader.unknown_key(
                key,
                &format!("in [pricing.{}]", model.get_ref()),
                &PRICE_KEYS,
            ),
        }
    }
    for required in ["input", "output"] {
        if !amounts.contains_key(required) {
            reader.report(
                model.span(),
                format!("missing key `{required}` in [pricing.{}]", model.get_ref()),
                Some("prices are in USD per million tokens, e.g. `input = 1.25`".to_string()),
            );
        }
    }
    let input = amounts.get("input").copied().flatten()?;
    let output = amounts.get("output").copied().flatten()?;
    let cached_input = match amounts.get("cached_input") {
        // Without a cache price, cached tokens are not assumed cheaper.
        None => input,
        Some(amount) => (*amount)?,
    };
    Some(ModelPrice {
        input,
        cached_input,
        output,
    })
}

/// A price: a TOML integer or float, finite and not negative.
fn amount(reader: &mut Reader<'_>, name: &str, item: &Item<'_>) -> Option<f64> {
    let number = match item.get_ref() {
        DeValue::Integer(integer) => i64::from_str_radix(integer.as_str(), integer.radix())
            .ok()
            // Prices are small; nobody writes one beyond f64's exact integer range.
            .map(|n| n as f64),
        DeValue::Float(float) => float.as_str().parse::<f64>().ok(),
        other => {
            reader.report(
                item.span(),
                format!(
                    "`{name}` must be a number (USD per million tokens), found {}",
                    describe(other)
                ),
                None,
            );
            return None;
        }
    };
    match number {
        Some(number) if number.is_finite() && number >= 0.0 => Some(number),
        _ => {
            let written = reader.written(item.span()).to_string();
            reader.report(
                item.span(),
                format!(
                    "`{name}` must be a price in USD per million tokens (0 or more), found \
                     {written}"
                ),
                None,
            );
            None
        }
    }
}

/// `[roles]` or `[profiles]`: a table of tables, kept as written for the workflow loader.
fn overrides(reader: &mut Reader<'_>, name: &str, item: &Item<'_>) -> toml::Table {
    let mut out = toml::Table::new();
    let Some(table) = reader.table(name, item) else {
        return out;
    };
    for (key, entry) in table {
        let entry_name = format!("{name}.{}", key.get_ref());
        if reader.table(&entry_name, entry).is_some() {
            if let Some(value) = plain_value(reader, entry) {
                out.insert(key.get_ref().to_string(), value);
            }
        }
    }
    out
}

/// `item` as a `toml::Value`, or `None` after reporting an integer out of range.
fn plain_value(reader: &mut Reader<'_>, item: &Item<'_>) -> Option<toml::Value> {
    Some(match item.get_ref() {
        DeValue::String(text) => toml::Value::String(text.to_string()),
        DeValue::Integer(integer) => match i64::from_str_radix(integer.as_str(), integer.radix()) {
            Ok(n) => toml::Value::Integer(n),
            Err(_) => {
                reader.report(item.span(), "integer out of range", None);
                return None;
            }
        },
        DeValue::Float(float) => match float.as_str().parse() {
            Ok(x) => toml::Value::Float(x),
            Err(_) => {
                reader.report(item.span(), "float out of range", None);
                return None;
            }
        },
        DeValue::Boolean(flag) => toml::Value::Boolean(*flag),
        DeValue::Datetime(datetime) => toml::Value::Datetime(*datetime),
        DeValue::Array(items) => {
            let values: Vec<Option<toml::Value>> =
                items.iter().map(|item| plain_value(reader, item)).collect();
            toml::Value::Array(values.into_iter().collect::<Option<_>>()?)
        }
        DeValue::Table(table) => {
            let mut out = toml::Table::new();
            let mut complete = true;
            for (key, value) in table {
                match plain_value(reader, value) {
                    Some(value) => {
                        out.insert(key.get_ref().to_string(), value);
                    }
                    None => complete = false,
                }
            }
            if !complete {
                return None;
            }
            toml::Value::Table(out)
        }
    })
}
