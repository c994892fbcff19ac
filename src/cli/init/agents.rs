//! `autobuild init --agents command`: example `command` agents (README.md), so a first run
//! needs no LLM. Two POSIX shell scripts in `.autobuild/agents/` and the `[roles.*]` sections
//! that use them. The roles run the scripts from the main checkout (`$AUTOBUILD_PROJECT`), so
//! `autobuild task TASK-EXAMPLE` works right after init, before anything is committed.

/// Which agents `init` sets up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum InitAgents {
    /// The workflow's default agents (Claude Code: a logged-in `claude` on the PATH).
    #[default]
    ClaudeCode,
    /// Example scripts for the `command` adapter: a first run without any LLM.
    Command,
}

/// Where the example scripts go, relative to `.autobuild/`, with their text.
pub const SCRIPTS: [(&str, &str); 2] = [
    ("agents/player.sh", include_str!("player.sh")),
    ("agents/coach.sh", include_str!("coach.sh")),
];

/// The `[roles.*]` sections of `config.toml` that run the example scripts.
pub const ROLES: &str = r#"# The agents: the example scripts `autobuild init --agents command` wrote in .autobuild/agents/
# (no LLM; they know only TASK-EXAMPLE). They run from the main checkout ($AUTOBUILD_PROJECT),
# so they work before you commit them. Replace them with your own programs, or delete these
# sections to use the workflow's default agents (Claude Code: a logged-in `claude`).
[roles.player]
agent = "command"
command = ["sh", "-c", "exec sh \"$AUTOBUILD_PROJECT/.autobuild/agents/player.sh\""]
timeout = "1m"

[roles.coach]
agent = "command"
command = ["sh", "-c", "exec sh \"$AUTOBUILD_PROJECT/.autobuild/agents/coach.sh\""]
timeout = "1m"
"#;
