//! The project environment — the parity cure (docs/config.md, "Project config").
//!
//! The field failure this prevents: the player ran tests in its own shell (venv activated,
//! variables set) while the runner re-ran them in a bare subprocess, so tests "failed" forever.
//! Here one [`ProjectEnv`] computes the exact variables and the shell wrapper used for agent
//! processes *and* for runner checks, so both see the same PATH, variables and setup.
//!
//! - PATH = `path_prepend` entries (relative ones resolved against the worktree) + the PATH
//!   autobuild was started with.
//! - `setup` is a shell prelude. Runner commands get it inline ([`ProjectEnv::shell_command`]);
//!   agents' bash tools get it through `BASH_ENV` ([`ProjectEnv::write_bash_env`]), which every
//!   non-interactive bash sources. A guard variable makes the prelude run once per process tree
//!   even when both paths apply. Shells other than bash (`sh`, `zsh`) source no such file, so
//!   what the setup *exports* is also given to the agent process itself
//!   ([`ProjectEnv::exports_command`], [`ProjectEnv::read_exports`]): every program it starts,
//!   in any shell, sees the setup's variables; only its functions and aliases need bash.
//! - The command's own exit code is the result (no `set -e`); a failing setup — judged by the
//!   exit status of its last command — stops the command with exit code
//!   [`SETUP_FAILED_EXIT`] and the marker [`SETUP_FAILED_MARKER`] on stderr, so it is
//!   classified as an infrastructure failure instead of a code failure.
//! - Values are literal: no `~` or `$VAR` expansion happens in `vars` or `path_prepend`.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::config::EnvConfig;

/// Exit code of a command whose `env.setup` prelude failed.
pub const SETUP_FAILED_EXIT: i32 = 97;

/// Printed on stderr when the `env.setup` prelude fails.
pub const SETUP_FAILED_MARKER: &str = "autobuild: env.setup failed";

/// Set (exported) once the setup prelude ran in a process tree.
const READY_VAR: &str = "AUTOBUILD_ENV_READY";

/// The environment given to agents and runner commands for one worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectEnv {
    vars: Vec<(String, String)>,
    path: String,
    setup: Option<String>,
    bash_env: Option<PathBuf>,
    shell: String,
}

impl ProjectEnv {
    /// The environment for `worktree`, on top of the PATH of the current process.
    pub fn new(config: &EnvConfig, worktree: &Path) -> ProjectEnv {
        ProjectEnv::with_base_path(config, worktree, std::env::var_os("PATH"))
    }

    /// The environment for `worktree`, on top of `base_path` instead of the current PATH.
    pub fn with_base_path(
        config: &EnvConfig,
        worktree: &Path,
        base_path: Option<OsString>,
    ) -> ProjectEnv {
        let path = compose_path(&config.path_prepend, worktree, base_path.as_deref());
        let shell = which::which_in("bash", Some(&path), worktree)
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "sh".to_string());
        ProjectEnv {
            vars: config
                .vars
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            path,
            setup: config.setup.clone(),
            bash_env: None,
            shell,
        }
    }

    /// The composed PATH.
    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn setup(&self) -> Option<&str> {
        self.setup.as_deref()
    }

    /// The shell runner commands use: `bash` when found on the composed PATH, else `sh`.
    pub fn shell(&self) -> &str {
        &self.shell
    }

    /// The variables to add to a child's environment: the configured ones, `PATH`, and
    /// `BASH_ENV` once [`ProjectEnv::write_bash_env`] wrote the setup file.
    pub fn vars(&self) -> Vec<(String, String)> {
        let mut vars = self.vars.clone();
        vars.push(("PATH".to_string(), self.path.clone()));
        if let Some(file) = &self.bash_env {
            vars.push(("BASH_ENV".to_string(), file.to_string_lossy().into_owned()));
        }
        vars
    }

    /// Writes the setup prelude to `file` for agents' bash tools and makes [`ProjectEnv::vars`]
    /// point `BASH_ENV` at it. Without a `setup` nothing is written and `BASH_ENV` stays unset.
    pub fn write_bash_env(&mut self, file: &Path) -> io::Result<()> {
        let Some(prelude) = self.prelude() else {
            return Ok(());
        };
        if let Some(dir) = file.parent() {
            fs::create_dir_all(dir)?;
        }
        fs::write(
            file,
            format!("# Written by autobuild: the project's env.setup (sourced through BASH_ENV).\n{prelude}"),
        )?;
        self.bash_env = Some(file.to_path_buf());
        Ok(())
    }

    /// The full script that runs `cmd` after the setup prelude.
    pub fn script(&self, cmd: &str) -> String {
        match self.prelude() {
            Some(prelude) => format!("{prelude}{cmd}"),
            None => cmd.to_string(),
        }
    }

    /// Program and arguments that run `cmd` in one shell after the setup prelude; the caller
    /// adds [`ProjectEnv::vars`] to the environment and sets the working directory.
    pub fn shell_command(&self, cmd: &str) -> (String, Vec<String>) {
        (self.shell.clone(), vec!["-c".to_string(), self.script(cmd)])
    }

    /// Program and arguments that print, NUL-separated, the environment the setup leaves
    /// (`env -0` after the prelude); `None` without a setup.
    pub fn exports_command(&self) -> Option<(String, Vec<String>)> {
        self.setup.as_ref()?;
        Some(self.shell_command("exec env -0"))
    }

    /// What the setup exported, read from [`ProjectEnv::exports_command`]'s output `dump`: the
    /// variables it added or changed against `before` (the value a child has without the
    /// setup), leaving out the shell's own bookkeeping and the guard variable (so a bash the
    /// agent starts still runs the setup, for its functions and aliases). `None` when `dump`
    /// is not such a listing.
    pub fn read_exports(
        before: &dyn Fn(&str) -> Option<String>,
        dump: &str,
    ) -> Option<Vec<(String, String)>> {
        const SHELL_OWN: [&str; 5] = ["PWD", "OLDPWD", "SHLVL", "_", READY_VAR];
        let mut exports = Vec::new();
        for entry in dump.split('\0').filter(|entry| !entry.is_empty()) {
            let (name, value) = entry.split_once('=')?;
            if name.is_empty() || SHELL_OWN.contains(&name) {
                continue;
            }
            if before(name).as_deref() != Some(value) {
                exports.push((name.to_string(), value.to_string()));
            }
        }
        Some(exports)
    }

    /// The guarded setup prelude, ending with a newline.
    fn prelude(&self) -> Option<String> {
        let setup = self.setup.as_deref()?;
        Some(format!(
            "if [ -z \"${{{READY_VAR}:-}}\" ]; then\n{{\n{setup}\n}} || {{ echo \"{SETUP_FAILED_MARKER} (exit $?)\" >&2; exit {SETUP_FAILED_EXIT}; }}\nexport {READY_VAR}=1\nfi\n"
        ))
    }
}

/// `prepend` (relative entries resolved against `worktree`) followed by `base`.
fn compose_path(prepend: &[String], worktree: &Path, base: Option<&std::ffi::OsStr>) -> String {
    let mut entries: Vec<PathBuf> = prepend
        .iter()
        .map(|entry| {
            let entry = Path::new(entry);
            if entry.is_absolute() {
                entry.to_path_buf()
            } else {
                worktree.join(entry)
            }
        })
        .collect();
    if let Some(base) = base {
        entries.extend(std::env::split_paths(base).filter(|p| !p.as_os_str().is_empty()));
    }
    let parts: Vec<String> = entries
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    parts.join(":")
}

#[cfg(test)]
mod tests;
