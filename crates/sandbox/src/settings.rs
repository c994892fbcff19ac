//! `[sandbox]` of the project config: whether agents and checks run confined (`mode`), and
//! what they may write beyond the worktree, its git files, the run's scratch directory and a
//! private `/tmp` (`writable`). Decoded from config.toml by `project::config`; the
//! doc comments are the JSON Schema's descriptions.

use std::borrow::Cow;

use base::Keyword;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize};

use base::user_file::rule::{self, Rule};

/// `[sandbox] mode`.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Deserialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Confine with the first backend that works here; otherwise run unconfined with one warning per run.
    #[default]
    Auto,
    /// Confine, or refuse to start.
    On,
    /// Never confine.
    Off,
}

/// `[sandbox] backend`: what confines agents and checks.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Deserialize,
    Serialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum BackendChoice {
    /// bubblewrap where it works, else Landlock.
    #[default]
    Auto,
    /// bubblewrap (user namespaces) only.
    Bwrap,
    /// Landlock (Linux 5.13 or later, no privileges) only.
    Landlock,
}

/// `[sandbox] network`: which sockets a confined process may open.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    Deserialize,
    Serialize,
    schemars::JsonSchema,
    strum::IntoStaticStr,
    strum::EnumIter,
)]
#[strum(serialize_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// The internet and loopback over IP (agents call their APIs, checks may download); no Unix-domain socket but socket pairs, so no host service (a docker.sock, an ssh or gpg agent, D-Bus) is reachable.
    #[default]
    Ip,
    /// As the host: Unix-domain sockets too.
    Host,
    /// None: a loopback of its own under bubblewrap, no socket at all but socket pairs under Landlock (for native adapters, whose model calls the runner makes, and `command` agents).
    None,
}

/// The variable that overrides `[sandbox] backend` (a CI job that wants Landlock, a test that
/// wants bwrap alone).
pub const BACKEND_ENV: &str = "AUTOBUILD_SANDBOX_BACKEND";

impl Settings {
    /// `backend`, or what [`BACKEND_ENV`] says instead; `Err` names a value it cannot be.
    pub fn backend_choice(&self) -> Result<BackendChoice, String> {
        let Some(named) = std::env::var(BACKEND_ENV)
            .ok()
            .filter(|v| !v.trim().is_empty())
        else {
            return Ok(self.backend);
        };
        use strum::IntoEnumIterator;
        BackendChoice::iter()
            .find(|choice| choice.as_str() == named.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = BackendChoice::iter().map(Keyword::as_str).collect();
                format!("{BACKEND_ENV}=`{named}` is not one of {}", known.join(", "))
            })
    }
}

/// `[sandbox]`: OS confinement of agents and checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "Sandbox")]
pub struct Settings {
    pub mode: Mode,
    pub backend: BackendChoice,
    pub network: Network,
    /// Absolute paths (or `~/…`) agents and checks may write besides the worktree.
    #[serde(deserialize_with = "ExtraWritable::each")]
    #[schemars(with = "Vec<ExtraWritable>")]
    pub writable: Vec<String>,
}

/// A `writable` entry: absolute, `~` or `~/…`. A relative path would have no obvious base (the
/// worktree is writable anyway), and `/` would make the sandbox pointless.
#[derive(Default)]
pub struct ExtraWritable(String);

const WRITABLE_FORM: &str = "an absolute path, `~` or `~/…` (not `/`)";
/// What [`WRITABLE_FORM`] says, for the schema and the check alike.
const WRITABLE_PATTERN: &str = "^(/.*[^/].*|~|~/.*)$";
base::regexes! {
    WRITABLE = WRITABLE_PATTERN;
}

impl TryFrom<String> for ExtraWritable {
    type Error = String;

    fn try_from(text: String) -> Result<ExtraWritable, String> {
        let path = text.trim();
        if WRITABLE.is_match(path) {
            Ok(ExtraWritable(path.to_string()))
        } else if path.is_empty() {
            Err("empty `writable` entry".to_string())
        } else if path.trim_end_matches('/').is_empty() {
            Err(
                "`/` cannot be writable: that would switch the sandbox off; set \
                 `mode = \"off\"` instead"
                    .to_string(),
            )
        } else {
            Err(format!(
                "`writable` entry `{path}` must be an absolute path or start with `~/` (the \
                 worktree itself is always writable)"
            ))
        }
    }
}

impl<'de> Deserialize<'de> for ExtraWritable {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        rule::from_text(d, WRITABLE_FORM)
    }
}

impl JsonSchema for ExtraWritable {
    fn schema_name() -> Cow<'static, str> {
        "Writable".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        rule::text_schema(WRITABLE_FORM, Some(WRITABLE_PATTERN))
    }
}

impl Rule for ExtraWritable {
    type Value = String;

    fn into_value(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_entries_are_absolute_or_in_home_and_never_the_root() {
        let one = |text: &str| ExtraWritable::try_from(text.to_string()).map(|w| w.0);
        assert_eq!(one(" ~/.cache ").unwrap(), "~/.cache");
        assert_eq!(one("~").unwrap(), "~");
        assert_eq!(one("/opt/cache/").unwrap(), "/opt/cache/");
        assert!(one("/").unwrap_err().contains("`/` cannot be writable"));
        assert!(one("//").is_err());
        assert!(one("cache")
            .unwrap_err()
            .contains("must be an absolute path"));
        assert_eq!(one(" ").unwrap_err(), "empty `writable` entry");
    }
}
