//! What autobuild knows about an adapter before it runs anything: one static [`Description`]
//! per adapter, declared in the adapter's own module and listed once in [`super::describe`].
//! `doctor`, preflight, login checks, the CI emitters (which packages to install, which
//! secrets to pass), the `--agent` help and the real-agent suite ask it instead of naming
//! adapters.

use std::path::Path;

use super::credentials::Detect;
use super::login::Login;
use super::Adapter;
use model::workflow::model::AgentKind;

/// Asks a located agent CLI whether it is logged in, with the project environment on top of
/// autobuild's.
pub type LoginProbe = fn(&Path, &[(String, String)]) -> Login;

/// One adapter's facts.
pub struct Description {
    pub kind: AgentKind,
    /// The CLI the adapter starts, when it starts a fixed one (`command` roles name their own
    /// program; the native adapters start none).
    pub program: Option<&'static str>,
    /// How to install [`Description::program`] when it is missing (empty: nothing to suggest).
    pub install_hint: &'static str,
    /// The npm package the CLI comes from, at the version CI installs and the real-agent suite
    /// was verified with (`scripts/real-agents.versions` is derived from it).
    pub package: Option<Package>,
    /// The variables a CI job passes from its secrets so that the agent can authenticate.
    pub secrets: &'static [&'static str],
    /// Finds the CLI's credentials by the names of variables and files, when the CLI itself
    /// cannot be asked (`doctor`).
    pub credentials: Option<Detect>,
    /// Asks the CLI whether it is logged in (preflight and `doctor`).
    pub login: Option<LoginProbe>,
    /// The adapter, ready to run roles.
    pub adapter: fn() -> Box<dyn Adapter>,
}

/// A pinned npm package.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Package {
    pub name: &'static str,
    pub version: &'static str,
}

impl Package {
    /// `name@version`, as `npm install` takes it.
    pub fn pinned(self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

/// `scripts/real-agents.versions`: the pinned CLIs, one `binary package version` line each,
/// read by `scripts/e2e-real-agents.sh`. Derived from the descriptions; a test keeps the
/// checked-in file current.
pub fn versions_file() -> String {
    let mut text = String::from(
        "# The agent CLI versions the real-agent suite installs and was verified with\n\
         # (scripts/e2e-real-agents.sh; docs/agents.md, \"Real agent CLIs\"). One CLI per line:\n\
         # binary  npm-package  exact-version\n\
         # Generated from the adapters' descriptions (crates/agents/src/); change them there.\n",
    );
    let rows: Vec<(&str, Package)> = super::descriptions()
        .filter_map(|d| Some((d.program?, d.package?)))
        .collect();
    let program_width = rows.iter().map(|(p, _)| p.len()).max().unwrap_or(0);
    let name_width = rows.iter().map(|(_, p)| p.name.len()).max().unwrap_or(0);
    for (program, package) in rows {
        text.push_str(&format!(
            "{program:program_width$}  {:name_width$}  {}\n",
            package.name, package.version
        ));
    }
    text
}

/// `--agent`'s help: every adapter, by name.
pub fn agent_flag_help() -> String {
    let names: Vec<String> = super::descriptions().map(|d| d.kind.to_string()).collect();
    format!("Adapter for every role ({})", names.join(", "))
}
