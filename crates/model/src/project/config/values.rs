//! The rules of config.toml's values, each on the one type a key is decoded through
//! ([`base::user_file::rule`]): what it accepts, why it refuses the rest, and the form the
//! JSON Schema shows editors, from the same constants.

use std::borrow::Cow;
use std::path::{Component, Path};
use std::time::Duration;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, Deserialize, Deserializer, Visitor};

use crate::project::context_files::{self, ContextFile};
use crate::workflow::model::opt_duration;
use base::diagnostic::Diagnostic;
use base::user_file::rule::{self, Rule};

/// What a check's name looks like (`checks.<name>` in profiles).
pub const CHECK_NAME_PATTERN: &str = "^[a-z][a-z0-9_-]*$";
/// What an environment variable's name looks like.
pub const ENV_VAR_PATTERN: &str = "^[A-Za-z_][A-Za-z0-9_]*$";
/// The one variable `[env] vars` may not set: `path_prepend` extends it.
pub const RESERVED_VAR: &str = "PATH";
/// A `path_prepend` entry: one directory, not blank, without PATH's separator.
pub const PATH_ENTRY_PATTERN: &str = r"^[^:]*[^:\s][^:]*$";

base::regexes! {
    CHECK_NAME = CHECK_NAME_PATTERN;
    ENV_VAR = ENV_VAR_PATTERN;
    PATH_ENTRY = PATH_ENTRY_PATTERN;
}

/// A string rule: `$type(String)` decoded by its `TryFrom<String>`, described by `$form` in
/// the schema and in type errors, matching `$pattern` (when given) in the schema.
macro_rules! text_rule {
    ($type:ident => $value:ty, $form:expr, $pattern:expr) => {
        /// The stand-in the decoder gets when the rule refuses a value ([`rule::from_text`]).
        impl Default for $type {
            fn default() -> Self {
                $type(Default::default())
            }
        }

        impl<'de> Deserialize<'de> for $type {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                rule::from_text(d, $form)
            }
        }

        impl JsonSchema for $type {
            fn schema_name() -> Cow<'static, str> {
                stringify!($type).into()
            }

            fn json_schema(_: &mut SchemaGenerator) -> Schema {
                rule::text_schema($form, $pattern)
            }
        }

        impl Rule for $type {
            type Value = $value;

            fn into_value(self) -> $value {
                self.0
            }
        }
    };
}

/// The name of a check: lowercase letters, digits, `_` and `-`, starting with a letter.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub struct CheckName(String);

text_rule!(
    CheckName => String,
    "a check name: lowercase letters, digits, `_` and `-`, starting with a letter (profiles require it as `checks.<name>`)",
    Some(CHECK_NAME_PATTERN)
);

impl TryFrom<String> for CheckName {
    type Error = String;

    fn try_from(name: String) -> Result<CheckName, String> {
        if CHECK_NAME.is_match(&name) {
            Ok(CheckName(name))
        } else {
            Err(format!(
                "check name `{name}` is invalid: use lowercase letters, digits, `_` and `-`, \
                 starting with a letter (profiles refer to it as `checks.<name>`)"
            ))
        }
    }
}

/// The name of an environment variable other than `PATH`.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
pub struct EnvVarName(String);

text_rule!(
    EnvVarName => String,
    "an environment variable name: letters, digits and `_`, not starting with a digit; not `PATH` (see `path_prepend`)",
    Some(ENV_VAR_PATTERN)
);

impl TryFrom<String> for EnvVarName {
    type Error = String;

    fn try_from(name: String) -> Result<EnvVarName, String> {
        if name == RESERVED_VAR {
            Err(format!(
                "`{RESERVED_VAR}` cannot be set in `env.vars`; list directories in \
                 `env.path_prepend` instead"
            ))
        } else if ENV_VAR.is_match(&name) {
            Ok(EnvVarName(name))
        } else {
            Err(format!(
                "`{name}` is not a valid environment variable name (letters, digits and `_`, \
                 not starting with a digit)"
            ))
        }
    }
}

/// The value of an environment variable: text, taken literally.
pub struct EnvValue(String);

text_rule!(
    EnvValue => String,
    "text in quotes (environment values are strings, taken literally)",
    None
);

impl From<String> for EnvValue {
    fn from(value: String) -> EnvValue {
        EnvValue(value)
    }
}

/// A shell command (run by `sh -c`), trimmed, not blank.
pub struct ShellCommand(String);

text_rule!(
    ShellCommand => String,
    "a shell command, run by `sh -c`",
    Some(r"\S")
);

impl TryFrom<String> for ShellCommand {
    type Error = &'static str;

    fn try_from(text: String) -> Result<ShellCommand, Self::Error> {
        match text.trim() {
            "" => Err("the command is empty; give a shell command, or remove the key"),
            command => Ok(ShellCommand(command.to_string())),
        }
    }
}

/// An `http://` or `https://` URL, trimmed.
pub struct Url(String);

text_rule!(
    Url => String,
    "an http:// or https:// URL",
    Some(r"^\s*https?://\S+\s*$")
);

impl TryFrom<String> for Url {
    type Error = &'static str;

    fn try_from(text: String) -> Result<Url, Self::Error> {
        let url = text.trim();
        match url.starts_with("https://") || url.starts_with("http://") {
            true if !url.contains(char::is_whitespace) => Ok(Url(url.to_string())),
            _ => Err("not an http:// or https:// URL, e.g. `https://ghe.example.com/api/v3`"),
        }
    }
}

/// A branch name, trimmed, not blank.
pub struct BranchName(String);

text_rule!(
    BranchName => String,
    "a branch name (default: the branch checked out when the run starts)",
    Some(r"\S")
);

impl TryFrom<String> for BranchName {
    type Error = &'static str;

    fn try_from(text: String) -> Result<BranchName, Self::Error> {
        match text.trim() {
            "" => {
                Err("the branch name is empty; remove `base_branch` to use the branch checked out")
            }
            name => Ok(BranchName(name.to_string())),
        }
    }
}

/// How long a command may run: a duration greater than zero.
pub struct Timeout(Duration);

text_rule!(
    Timeout => Duration,
    r#"a duration greater than zero, in quotes, such as "90s", "20m" or "1h 30m""#,
    None
);

impl TryFrom<String> for Timeout {
    type Error = String;

    fn try_from(text: String) -> Result<Timeout, String> {
        match opt_duration::parse(&text)? {
            duration if duration.is_zero() => {
                Err("the timeout must be greater than zero".to_string())
            }
            duration => Ok(Timeout(duration)),
        }
    }
}

/// A path relative to the repository root that stays inside it, normalized (`./` and a
/// trailing `/` removed).
pub struct RepoPath(String);

text_rule!(
    RepoPath => String,
    "a path relative to the repository root, inside it (no `..`, not absolute, not `.git`)",
    None
);

impl TryFrom<String> for RepoPath {
    type Error = String;

    fn try_from(text: String) -> Result<RepoPath, String> {
        normalize(&text).map(RepoPath).map_err(|why| {
            format!(
                "`{text}` is not a path inside the repository: {why}; give a path relative \
                     to the repository root, such as \".venv\" or \"web/node_modules\""
            )
        })
    }
}

/// One directory of `env.path_prepend`.
pub struct PathEntry(String);

text_rule!(
    PathEntry => String,
    "one directory, relative entries relative to the worktree (not blank, no `:`)",
    Some(PATH_ENTRY_PATTERN)
);

impl TryFrom<String> for PathEntry {
    type Error = &'static str;

    fn try_from(text: String) -> Result<PathEntry, Self::Error> {
        if PATH_ENTRY.is_match(&text) {
            Ok(PathEntry(text.trim().to_string()))
        } else if text.contains(':') {
            Err(
                "a `path_prepend` entry cannot contain `:` (it separates PATH entries); list \
                 each directory separately",
            )
        } else {
            Err("empty `path_prepend` entry")
        }
    }
}

/// A glob relative to the repository root ([`base::pattern::glob`]).
pub struct ScopeGlob(String);

text_rule!(
    ScopeGlob => String,
    "a glob relative to the repository root, such as \"tests/acceptance/**\"",
    None
);

impl TryFrom<String> for ScopeGlob {
    type Error = String;

    fn try_from(pattern: String) -> Result<ScopeGlob, String> {
        base::pattern::glob(&pattern)?;
        Ok(ScopeGlob(pattern))
    }
}

/// A context file's path ([`context_files::path_problem`]); whether it exists is known when a
/// run is planned, so the problem to report then is located where the path is written once
/// the file is decoded (`finish`).
pub struct ContextPath(ContextFile);

text_rule!(
    ContextPath => ContextFile,
    "a file relative to the repository root, inside it; it must exist",
    None
);

impl TryFrom<String> for ContextPath {
    type Error = String;

    fn try_from(path: String) -> Result<ContextPath, String> {
        if let Some(why) = context_files::path_problem(&path) {
            return Err(why);
        }
        let missing = context_files::missing(Diagnostic::new("", ""), &path);
        Ok(ContextPath(ContextFile { path, missing }))
    }
}

/// A price in USD per million tokens: a number, 0 or more.
#[derive(Default)]
pub struct Amount(f64);

const AMOUNT_FORM: &str = "a price in USD per million tokens (a number, 0 or more)";

impl<'de> Deserialize<'de> for Amount {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Amount, D::Error> {
        struct Number;
        impl Visitor<'_> for Number {
            type Value = Amount;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(AMOUNT_FORM)
            }

            fn visit_f64<E: de::Error>(self, amount: f64) -> Result<Amount, E> {
                if amount.is_finite() && amount >= 0.0 {
                    Ok(Amount(amount))
                } else {
                    rule::refused(Err(format!("{amount} is not {AMOUNT_FORM}")))
                }
            }

            fn visit_i64<E: de::Error>(self, amount: i64) -> Result<Amount, E> {
                // Prices are small; nobody writes one beyond f64's exact integer range.
                self.visit_f64(amount as f64)
            }

            fn visit_u64<E: de::Error>(self, amount: u64) -> Result<Amount, E> {
                self.visit_f64(amount as f64)
            }
        }
        d.deserialize_f64(Number)
    }
}

impl JsonSchema for Amount {
    fn schema_name() -> Cow<'static, str> {
        "Amount".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "number", "minimum": 0, "description": AMOUNT_FORM})
    }
}

impl Rule for Amount {
    type Value = f64;

    fn into_value(self) -> f64 {
        self.0
    }
}

/// `text` as a clean relative path inside the repository, or why it is not one.
pub(crate) fn normalize(text: &str) -> Result<String, &'static str> {
    let path = Path::new(text.trim());
    let mut parts = Vec::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
            Component::CurDir => {}
            Component::ParentDir => return Err("it leaves the repository (`..`)"),
            Component::RootDir | Component::Prefix(_) => return Err("it is absolute"),
        }
    }
    if parts.is_empty() {
        return Err("it names the repository itself");
    }
    if parts.first().is_some_and(|p| p == ".git") {
        return Err("`.git` belongs to git");
    }
    Ok(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode<T: Rule>(value: serde_json::Value) -> Result<T::Value, String> {
        T::one(&value).map_err(|e| e.to_string())
    }

    #[test]
    fn each_rule_accepts_its_form_and_says_why_not() {
        use serde_json::json;
        assert_eq!(
            decode::<CheckName>(json!("unit-tests_2")).unwrap(),
            "unit-tests_2"
        );
        assert!(decode::<CheckName>(json!("Test"))
            .unwrap_err()
            .starts_with("check name `Test` is invalid"));
        assert_eq!(decode::<EnvVarName>(json!("_X1")).unwrap(), "_X1");
        assert!(decode::<EnvVarName>(json!("PATH"))
            .unwrap_err()
            .starts_with("`PATH` cannot be set"));
        assert!(decode::<EnvVarName>(json!("1X"))
            .unwrap_err()
            .contains("not a valid environment variable name"));
        assert_eq!(decode::<ShellCommand>(json!("  make  ")).unwrap(), "make");
        assert!(decode::<ShellCommand>(json!(" ")).is_err());
        assert!(decode::<BranchName>(json!("")).is_err());
        assert_eq!(
            decode::<Timeout>(json!("1h 30m")).unwrap(),
            Duration::from_secs(5400)
        );
        assert_eq!(
            decode::<Timeout>(json!("0s")).unwrap_err(),
            "the timeout must be greater than zero"
        );
        assert_eq!(
            decode::<Timeout>(json!("ten minutes")).unwrap_err(),
            r#"invalid duration "ten minutes": write it like "90s", "20m" or "1h 30m""#
        );
        assert!(decode::<Timeout>(json!(600)).unwrap_err().ends_with(
            r#"expected a duration greater than zero, in quotes, such as "90s", "20m" or "1h 30m""#
        ));
        assert_eq!(decode::<RepoPath>(json!("./.venv/")).unwrap(), ".venv");
        assert!(decode::<RepoPath>(json!("../x"))
            .unwrap_err()
            .contains("it leaves the repository"));
        assert_eq!(decode::<PathEntry>(json!(" bin ")).unwrap(), "bin");
        assert!(decode::<PathEntry>(json!("a:b"))
            .unwrap_err()
            .contains("`:`"));
        assert_eq!(
            decode::<PathEntry>(json!("  ")).unwrap_err(),
            "empty `path_prepend` entry"
        );
        assert!(decode::<ScopeGlob>(json!("src/[")).is_err());
        assert_eq!(
            decode::<ContextPath>(json!("docs/a.md")).unwrap().path,
            "docs/a.md"
        );
        assert!(decode::<ContextPath>(json!("/etc/passwd")).is_err());
        assert_eq!(decode::<Amount>(json!(2)).unwrap(), 2.0);
        assert_eq!(decode::<Amount>(json!(0.125)).unwrap(), 0.125);
        assert!(decode::<Amount>(json!(-1))
            .unwrap_err()
            .contains("0 or more"));
        assert!(decode::<Amount>(json!("cheap"))
            .unwrap_err()
            .starts_with("invalid type: string \"cheap\", expected a price"));
    }

    #[test]
    fn entries_are_clean_relative_paths() {
        assert_eq!(normalize("./.venv/"), Ok(".venv".to_string()));
        assert_eq!(
            normalize("web/node_modules"),
            Ok("web/node_modules".to_string())
        );
        assert!(normalize("../x").is_err());
        assert!(normalize("/opt/venv").is_err());
        assert!(normalize(".").is_err());
        assert!(normalize(".git/hooks").is_err());
    }
}
