//! Where Claude Code keeps its own state, which it must be able to write when it runs in the
//! sandbox: its configuration directory (`~/.claude`: settings, sessions, credentials, debug
//! logs) and global state file (`~/.claude.json`) — both inside `$CLAUDE_CONFIG_DIR` when that
//! is set — and its XDG directories for locks (`~/.local/state/claude`, which OAuth token
//! refresh needs) and staging (`~/.cache/claude`); its native install (`~/.local/share/claude`)
//! stays read-only.
//!
//! `~/.claude.json` is written in place: Claude Code first tries an atomic replace through
//! `~/.claude.json.lock` and `~/.claude.json.tmp.*` beside it, which the read-only home refuses,
//! and then falls back to writing the file directly.

use std::path::{Path, PathBuf};

use crate::private_state::PrivateState;
use process::child_var;
use sandbox::Writable;

/// Claude Code's state private to the run (module `crate::private_state`): a
/// `CLAUDE_CONFIG_DIR` of its own, starting from the user's `settings.json`, `CLAUDE.md` and
/// global state file, with the user's `.credentials.json` linked; the auto-updater is off (it
/// would write the user's native install).
pub fn private_state(env: &[(String, String)], run_dir: &Path) -> Option<PrivateState> {
    let var = |name: &str| child_var(env, name).map(PathBuf::from);
    let home = var("HOME");
    let (user, global) = match var("CLAUDE_CONFIG_DIR") {
        Some(dir) => (dir.clone(), dir.join(".claude.json")),
        None => {
            let home = home?;
            (home.join(".claude"), home.join(".claude.json"))
        }
    };
    let dir = crate::private_state::dir_in(run_dir, "claude");
    Some(PrivateState {
        env: vec![
            ("CLAUDE_CONFIG_DIR".to_string(), dir.display().to_string()),
            ("DISABLE_AUTOUPDATER".to_string(), "1".to_string()),
        ],
        copies: vec![
            (user.join("settings.json"), "settings.json"),
            (user.join("CLAUDE.md"), "CLAUDE.md"),
            (global, ".claude.json"),
        ],
        links: vec![(user.join(".credentials.json"), ".credentials.json")],
        dir,
    })
}

/// The paths Claude Code writes, for a child with `env` on top of autobuild's environment.
pub fn state_paths(env: &[(String, String)]) -> Vec<Writable> {
    let var = |name: &str| child_var(env, name).map(PathBuf::from);
    let home = var("HOME");
    let mut paths = Vec::new();
    match var("CLAUDE_CONFIG_DIR") {
        Some(dir) => paths.push(Writable::Dir(dir)),
        None => {
            if let Some(home) = &home {
                paths.push(Writable::Dir(home.join(".claude")));
                paths.push(Writable::File(home.join(".claude.json")));
            }
        }
    }
    // Not `$XDG_DATA_HOME/claude`, the native install: only its auto-updater writes there
    // (off in a run, module `private_state`), and a writable install is one an agent could
    // replace for the user's next session.
    let xdg = [
        ("XDG_STATE_HOME", ".local/state"),
        ("XDG_CACHE_HOME", ".cache"),
    ];
    for (variable, default) in xdg {
        let base = var(variable).or_else(|| home.as_ref().map(|home| home.join(default)));
        if let Some(base) = base {
            paths.push(Writable::Dir(base.join("claude")));
        }
    }
    paths
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_home_layout_and_its_overrides() {
        let paths = state_paths(&env(&[
            ("HOME", "/h"),
            ("CLAUDE_CONFIG_DIR", ""),
            ("XDG_STATE_HOME", ""),
            ("XDG_CACHE_HOME", "/c"),
            ("XDG_DATA_HOME", ""),
        ]));
        assert_eq!(
            paths,
            [
                Writable::Dir("/h/.claude".into()),
                Writable::File("/h/.claude.json".into()),
                Writable::Dir("/h/.local/state/claude".into()),
                Writable::Dir("/c/claude".into()),
            ]
        );
        let paths = state_paths(&env(&[("HOME", "/h"), ("CLAUDE_CONFIG_DIR", "/cfg")]));
        assert_eq!(paths[0], Writable::Dir("/cfg".into()));
        assert!(!paths.contains(&Writable::File("/h/.claude.json".into())));
    }
}
