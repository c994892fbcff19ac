//! An agent CLI's own state, private to the run: Claude Code's `~/.claude` and
//! `~/.claude.json`, codex's `~/.codex`. A confined agent could write its CLI's state to
//! persist — a `SessionStart` hook in `~/.claude/settings.json`, instructions in
//! `~/.claude/CLAUDE.md` — and the user's next, unconfined session would run them. So each run's
//! agents get a directory of their own in the run directory (`agent-state/<cli>/`), pointed to
//! by the CLI's own variable (`CLAUDE_CONFIG_DIR`, `CODEX_HOME`) and made writable instead of
//! the user's: it starts as a copy of the user's settings and memory, and the credentials are a
//! link to the user's file, which the sandbox keeps read-only (the agent can use the login, not
//! change it; an OAuth token the CLI refreshes is not saved back). What the agents wrote there
//! stays in the run directory, where the user can look at it.
//!
//! The copy is made once per run (a later turn finds it and keeps what earlier turns wrote),
//! readable by the user alone.

use std::fs;
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// A CLI's private state directory: where it is, what it starts with, and the variables that
/// point the CLI at it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrivateState {
    pub dir: PathBuf,
    /// Set in the agent's environment.
    pub env: Vec<(String, String)>,
    /// A file of the user's copied in (source, name inside `dir`), when it exists.
    pub copies: Vec<(PathBuf, &'static str)>,
    /// A file of the user's linked in (source, name inside `dir`), when it exists.
    pub links: Vec<(PathBuf, &'static str)>,
}

impl PrivateState {
    /// Makes the directory with its copies and links, unless an earlier turn of the run did.
    pub fn prepare(&self) -> io::Result<()> {
        if self.dir.is_dir() {
            return Ok(());
        }
        if let Some(parent) = self.dir.parent() {
            fs::create_dir_all(parent)?;
        }
        // Made under a temporary name and renamed: a turn killed half-way leaves no half copy.
        let building = self.dir.with_extension("building");
        if building.exists() {
            fs::remove_dir_all(&building)?;
        }
        fs::DirBuilder::new().mode(0o700).create(&building)?;
        for (source, name) in &self.copies {
            let Ok(bytes) = fs::read(source) else {
                continue;
            };
            fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(building.join(name))?
                .write_all(&bytes)?;
        }
        for (source, name) in &self.links {
            if source.exists() {
                std::os::unix::fs::symlink(source, building.join(name))?;
            }
        }
        fs::rename(&building, &self.dir)
    }
}

/// `<run dir>/agent-state/<cli>`.
pub fn dir_in(run_dir: &Path, cli: &str) -> PathBuf {
    run_dir.join("agent-state").join(cli)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_starts_from_the_users_files_once_and_links_the_credentials() {
        let home = tempfile::tempdir().unwrap();
        let user = home.path().join(".claude");
        fs::create_dir_all(&user).unwrap();
        fs::write(user.join("settings.json"), "{\"theme\":\"dark\"}").unwrap();
        fs::write(user.join(".credentials.json"), "{}").unwrap();
        let state = PrivateState {
            dir: dir_in(&home.path().join("run"), "claude"),
            env: Vec::new(),
            copies: vec![
                (user.join("settings.json"), "settings.json"),
                (user.join("CLAUDE.md"), "CLAUDE.md"),
            ],
            links: vec![(user.join(".credentials.json"), ".credentials.json")],
        };
        state.prepare().unwrap();
        let copy = fs::read_to_string(state.dir.join("settings.json")).unwrap();
        assert_eq!(copy, "{\"theme\":\"dark\"}");
        assert!(!state.dir.join("CLAUDE.md").exists());
        let link = fs::read_link(state.dir.join(".credentials.json")).unwrap();
        assert_eq!(link, user.join(".credentials.json"));
        // A later turn keeps what an earlier one wrote; the user's file is untouched.
        fs::write(state.dir.join("settings.json"), "{\"hooks\":{}}").unwrap();
        state.prepare().unwrap();
        let kept = fs::read_to_string(state.dir.join("settings.json")).unwrap();
        assert_eq!(kept, "{\"hooks\":{}}");
        let users = fs::read_to_string(user.join("settings.json")).unwrap();
        assert_eq!(users, "{\"theme\":\"dark\"}");
    }
}
