//! Reading the config from its spanned TOML document, collecting every problem in one pass.
//!
//! Each table is walked entry by entry: a known key is read with its type and rules checked, an
//! unknown key is reported with a "did you mean" and skipped, and reading goes on. A value that
//! is wrong leaves its field at the default, so the caller only uses the result when no problem
//! was found.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::Path;
use std::sync::LazyLock;
use std::time::Duration;

use regex::Regex;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use super::{CheckConfig, Config, EnvConfig, ModelPrice, PriceTable, ProjectConfig};
use crate::diagnostic::{did_you_mean, Diagnostic};
use crate::workflow::model::MergeStrategy;

type Key<'i> = Spanned<Cow<'i, str>>;
type Item<'i> = Spanned<DeValue<'i>>;

const ROOT_KEYS: [&str; 6] = ["project", "env", "checks", "roles", "profiles", "pricing"];
const PROJECT_KEYS: [&str; 2] = ["base_branch", "merge_strategy"];
const ENV_KEYS: [&str; 3] = ["vars", "path_prepend", "setup"];
const CHECK_KEYS: [&str; 2] = ["cmd", "timeout"];
const PRICE_KEYS: [&str; 3] = ["input", "cached_input", "output"];
const MERGE_STRATEGIES: [MergeStrategy; 3] = [
    MergeStrategy::Squash,
    MergeStrategy::Merge,
    MergeStrategy::Ff,
];
const DURATION_FORM: &str = r#"write it like "90s", "20m" or "1h 30m""#;

static CHECK_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[a-z][a-z0-9_-]*$").expect("check-name pattern is valid"));
static ENV_VAR_NAME: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^[A-Za-z_][A-Za-z0-9_]*$").expect("env-name pattern is valid"));

/// The config `document` describes and every problem found in it (the config is only
/// meaningful when there is none).
pub(super) fn read(path: &Path, source: &str, document: &DeTable<'_>) -> (Config, Vec<Diagnostic>) {
    let mut reader = Reader {
        path,
        source,
        problems: Vec::new(),
    };
    let config = reader.config(document);
    (config, reader.problems)
}

struct Reader<'a> {
    path: &'a Path,
    source: &'a str,
    problems: Vec<Diagnostic>,
}

impl Reader<'_> {
    fn config(&mut self, document: &DeTable<'_>) -> Config {
        let mut config = Config::default();
        for (key, item) in document {
            match key.get_ref().as_ref() {
                "project" => {
                    if let Some(table) = self.table("project", item) {
                        config.project = self.project(table);
                    }
                }
                "env" => {
                    if let Some(table) = self.table("env", item) {
                        config.env = self.env(table);
                    }
                }
                "checks" => {
                    if let Some(table) = self.table("checks", item) {
                        config.checks = self.checks(table);
                    }
                }
                "roles" => config.roles = self.overrides("roles", item),
                "profiles" => config.profiles = self.overrides("profiles", item),
                "pricing" => {
                    if let Some(table) = self.table("pricing", item) {
                        config.pricing = self.pricing(table);
                    }
                }
                _ => self.unknown_key(key, "at the top level", &ROOT_KEYS),
            }
        }
        config
    }

    fn project(&mut self, table: &DeTable<'_>) -> ProjectConfig {
        let mut project = ProjectConfig::default();
        for (key, item) in table {
            match key.get_ref().as_ref() {
                "base_branch" => {
                    project.base_branch = self.non_blank(
                        "project.base_branch",
                        item,
                        "`base_branch` is empty; remove it to use the current branch",
                    );
                }
                "merge_strategy" => project.merge_strategy = self.merge_strategy(item),
                _ => self.unknown_key(key, "in [project]", &PROJECT_KEYS),
            }
        }
        project
    }

    fn merge_strategy(&mut self, item: &Item<'_>) -> Option<MergeStrategy> {
        let text = self.string("project.merge_strategy", item)?;
        let found = MERGE_STRATEGIES
            .into_iter()
            .find(|strategy| strategy.as_str() == text);
        if found.is_none() {
            let names = MERGE_STRATEGIES.map(MergeStrategy::as_str);
            self.report(
                item.span(),
                format!("unknown value `{text}` for `merge_strategy`"),
                Some(suggestion(text, &names, "values")),
            );
        }
        found
    }

    fn env(&mut self, table: &DeTable<'_>) -> EnvConfig {
        let mut env = EnvConfig::default();
        for (key, item) in table {
            match key.get_ref().as_ref() {
                "vars" => {
                    if let Some(vars) = self.table("env.vars", item) {
                        env.vars = self.vars(vars);
                    }
                }
                "path_prepend" => env.path_prepend = self.path_prepend(item),
                "setup" => {
                    env.setup = self.non_blank(
                        "env.setup",
                        item,
                        "`setup` is empty; remove it or give a shell command",
                    );
                }
                _ => self.unknown_key(key, "in [env]", &ENV_KEYS),
            }
        }
        env
    }

    fn vars(&mut self, table: &DeTable<'_>) -> BTreeMap<String, String> {
        let mut vars = BTreeMap::new();
        for (key, item) in table {
            let name = key.get_ref().as_ref();
            let valid_name = if name == "PATH" {
                self.report(
                    key.span(),
                    "`PATH` cannot be set in `env.vars`; list directories in `env.path_prepend` \
                     instead",
                    None,
                );
                false
            } else if !ENV_VAR_NAME.is_match(name) {
                self.report(
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
                    self.report(
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

    fn path_prepend(&mut self, item: &Item<'_>) -> Vec<String> {
        let Some(entries) = self.array("env.path_prepend", item) else {
            return Vec::new();
        };
        let mut dirs = Vec::new();
        for entry in entries {
            let Some(dir) = self.string("an `env.path_prepend` entry", entry) else {
                continue;
            };
            if dir.contains(':') {
                self.report(
                    entry.span(),
                    "a `path_prepend` entry cannot contain `:` (it separates PATH entries); list \
                     each directory separately",
                    None,
                );
            } else if dir.trim().is_empty() {
                self.report(entry.span(), "empty `path_prepend` entry", None);
            } else {
                dirs.push(dir.trim().to_string());
            }
        }
        dirs
    }

    fn checks(&mut self, table: &DeTable<'_>) -> BTreeMap<String, CheckConfig> {
        let mut checks = BTreeMap::new();
        for (key, item) in table {
            let name = key.get_ref().as_ref();
            let valid_name = CHECK_NAME.is_match(name);
            if !valid_name {
                self.report(
                    key.span(),
                    format!(
                        "check name `{name}` is invalid: use lowercase letters, digits, `_` and \
                         `-`, starting with a letter (profiles refer to it as `checks.<name>`)"
                    ),
                    None,
                );
            }
            let Some(fields) = self.table(&format!("checks.{name}"), item) else {
                continue;
            };
            let check = self.check(key, fields);
            if let (true, Some(check)) = (valid_name, check) {
                checks.insert(name.to_string(), check);
            }
        }
        checks
    }

    fn check(&mut self, name: &Key<'_>, table: &DeTable<'_>) -> Option<CheckConfig> {
        let mut cmd = None;
        let mut cmd_written = false;
        let mut timeout = None;
        for (key, item) in table {
            match key.get_ref().as_ref() {
                "cmd" => {
                    cmd_written = true;
                    cmd = self.non_blank(
                        &format!("checks.{}.cmd", name.get_ref()),
                        item,
                        "`cmd` is empty; give the command to run",
                    );
                }
                "timeout" => {
                    timeout = self.duration(&format!("checks.{}.timeout", name.get_ref()), item);
                }
                _ => self.unknown_key(key, &format!("in [checks.{}]", name.get_ref()), &CHECK_KEYS),
            }
        }
        if !cmd_written {
            self.report(
                name.span(),
                format!("missing key `cmd` in [checks.{}]", name.get_ref()),
                Some("give the command to run, e.g. `cmd = \"cargo test\"`".to_string()),
            );
        }
        Some(CheckConfig { cmd: cmd?, timeout })
    }

    fn duration(&mut self, name: &str, item: &Item<'_>) -> Option<Duration> {
        let DeValue::String(text) = item.get_ref() else {
            self.report(
                item.span(),
                format!(
                    "`{name}` must be a duration string, found {}",
                    describe(item.get_ref())
                ),
                Some(format!("{DURATION_FORM}, in quotes")),
            );
            return None;
        };
        match humantime::parse_duration(text.trim()) {
            Ok(duration) if duration.is_zero() => {
                let field = name.rsplit('.').next().unwrap_or(name);
                self.report(
                    item.span(),
                    format!("`{field}` must be greater than zero"),
                    None,
                );
                None
            }
            Ok(duration) => Some(duration),
            Err(_) => {
                self.report(
                    item.span(),
                    format!("invalid duration {text:?}: {DURATION_FORM}"),
                    None,
                );
                None
            }
        }
    }

    fn pricing(&mut self, table: &DeTable<'_>) -> PriceTable {
        let mut pricing = PriceTable::new();
        for (key, item) in table {
            let model = key.get_ref().as_ref();
            let valid_name = !model.trim().is_empty();
            if !valid_name {
                self.report(
                    key.span(),
                    "empty model name in `[pricing]`; write `[pricing.\"<model>\"]`",
                    None,
                );
            }
            let Some(fields) = self.table(&format!("pricing.{model}"), item) else {
                continue;
            };
            if let (true, Some(price)) = (valid_name, self.price(key, fields)) {
                pricing.insert(model.to_string(), price);
            }
        }
        pricing
    }

    fn price(&mut self, model: &Key<'_>, table: &DeTable<'_>) -> Option<ModelPrice> {
        let mut amounts: BTreeMap<&str, Option<f64>> = BTreeMap::new();
        for (key, item) in table {
            let field = key.get_ref().as_ref();
            match PRICE_KEYS.iter().find(|known| **known == field) {
                Some(known) => {
                    amounts.insert(known, self.amount(known, item));
                }
                None => self.unknown_key(
                    key,
                    &format!("in [pricing.{}]", model.get_ref()),
                    &PRICE_KEYS,
                ),
            }
        }
        for required in ["input", "output"] {
            if !amounts.contains_key(required) {
                self.report(
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
    fn amount(&mut self, name: &str, item: &Item<'_>) -> Option<f64> {
        let number = match item.get_ref() {
            DeValue::Integer(integer) => i64::from_str_radix(integer.as_str(), integer.radix())
                .ok()
                // Prices are small; nobody writes one beyond f64's exact integer range.
                .map(|n| n as f64),
            DeValue::Float(float) => float.as_str().parse::<f64>().ok(),
            other => {
                self.report(
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
                let written = self.source.get(item.span()).unwrap_or_default().to_string();
                self.report(
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
    fn overrides(&mut self, name: &str, item: &Item<'_>) -> toml::Table {
        let mut out = toml::Table::new();
        let Some(table) = self.table(name, item) else {
            return out;
        };
        for (key, entry) in table {
            let entry_name = format!("{name}.{}", key.get_ref());
            if self.table(&entry_name, entry).is_some() {
                if let Some(value) = self.plain_value(entry) {
                    out.insert(key.get_ref().to_string(), value);
                }
            }
        }
        out
    }

    /// `item` as a `toml::Value`, or `None` after reporting an integer out of range.
    fn plain_value(&mut self, item: &Item<'_>) -> Option<toml::Value> {
        Some(match item.get_ref() {
            DeValue::String(text) => toml::Value::String(text.to_string()),
            DeValue::Integer(integer) => {
                match i64::from_str_radix(integer.as_str(), integer.radix()) {
                    Ok(n) => toml::Value::Integer(n),
                    Err(_) => {
                        self.report(item.span(), "integer out of range", None);
                        return None;
                    }
                }
            }
            DeValue::Float(float) => match float.as_str().parse() {
                Ok(x) => toml::Value::Float(x),
                Err(_) => {
                    self.report(item.span(), "float out of range", None);
                    return None;
                }
            },
            DeValue::Boolean(flag) => toml::Value::Boolean(*flag),
            DeValue::Datetime(datetime) => toml::Value::Datetime(*datetime),
            DeValue::Array(items) => {
                let values: Vec<Option<toml::Value>> =
                    items.iter().map(|item| self.plain_value(item)).collect();
                toml::Value::Array(values.into_iter().collect::<Option<_>>()?)
            }
            DeValue::Table(table) => {
                let mut out = toml::Table::new();
                let mut complete = true;
                for (key, value) in table {
                    match self.plain_value(value) {
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

    fn table<'t, 'i>(&mut self, name: &str, item: &'t Item<'i>) -> Option<&'t DeTable<'i>> {
        match item.get_ref() {
            DeValue::Table(table) => Some(table),
            other => {
                self.wrong_type(name, "a table", other, item.span());
                None
            }
        }
    }

    fn array<'t, 'i>(&mut self, name: &str, item: &'t Item<'i>) -> Option<&'t [Item<'i>]> {
        match item.get_ref() {
            DeValue::Array(items) => Some(items),
            other => {
                self.wrong_type(name, "an array", other, item.span());
                None
            }
        }
    }

    fn string<'t>(&mut self, name: &str, item: &'t Item<'_>) -> Option<&'t str> {
        match item.get_ref() {
            DeValue::String(text) => Some(text.as_ref()),
            other => {
                self.wrong_type(name, "a string", other, item.span());
                None
            }
        }
    }

    /// The trimmed string, or `None` after reporting `blank` when it is blank.
    fn non_blank(&mut self, name: &str, item: &Item<'_>, blank: &str) -> Option<String> {
        let text = self.string(name, item)?;
        if text.trim().is_empty() {
            self.report(item.span(), blank, None);
            None
        } else {
            Some(text.trim().to_string())
        }
    }

    fn wrong_type(&mut self, name: &str, expected: &str, found: &DeValue<'_>, span: Range<usize>) {
        let name = if name.starts_with("an ") {
            name.to_string()
        } else {
            format!("`{name}`")
        };
        self.report(
            span,
            format!("{name} must be {expected}, found {}", describe(found)),
            None,
        );
    }

    fn unknown_key(&mut self, key: &Key<'_>, place: &str, known: &[&str]) {
        let name = key.get_ref().as_ref();
        self.report(
            key.span(),
            format!("unknown key `{name}` {place}"),
            Some(suggestion(name, known, "keys")),
        );
    }

    fn report(&mut self, span: Range<usize>, message: impl Into<String>, help: Option<String>) {
        let diagnostic = Diagnostic::at_offset(self.path, self.source, span.start, message);
        self.problems.push(match help {
            Some(help) => diagnostic.with_help(help),
            None => diagnostic,
        });
    }
}

/// "did you mean" when one name is close, else the list of what is allowed.
fn suggestion(name: &str, known: &[&str], what: &str) -> String {
    match did_you_mean(name, known.iter().copied()) {
        Some(close) => format!("did you mean `{close}`?"),
        None => format!("expected one of the {what}: {}", known.join(", ")),
    }
}

/// `the integer 5`, `the string "x"`, `a table`: what was written, for type errors.
fn describe(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(text) => format!("the string {text:?}"),
        DeValue::Integer(_) | DeValue::Float(_) | DeValue::Boolean(_) => {
            format!("the {} {}", value.type_str(), plain_text(value))
        }
        DeValue::Datetime(datetime) => format!("the datetime {datetime}"),
        DeValue::Array(_) => "an array".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

/// A scalar as the user wrote it, without quotes.
fn plain_text(value: &DeValue<'_>) -> String {
    match value {
        DeValue::String(text) => text.to_string(),
        DeValue::Integer(integer) => integer.to_string(),
        DeValue::Float(float) => float.to_string(),
        DeValue::Boolean(flag) => flag.to_string(),
        DeValue::Datetime(datetime) => datetime.to_string(),
        DeValue::Array(_) | DeValue::Table(_) => "...".to_string(),
    }
}
