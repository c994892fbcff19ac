//! One scenario's world: the sample project of tests/loop_fixture with both roles on a real CLI,
//! the scripted model server that CLI talks to, and a scratch `HOME` / `CODEX_HOME` so nothing
//! of the user's own configuration, credentials or network settings is used.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::Output;

use autobuild::agents::describe;
use autobuild::workflow::model::AgentKind;
use serde_json::Value;

use crate::loop_fixture::Project;
use crate::model_server::{ModelServer, Role, Script};

/// A real agent CLI under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cli {
    Claude,
    Codex,
}

impl Cli {
    /// The adapter that drives this CLI; its description names the program and the pinned
    /// package (`scripts/real-agents.versions`).
    fn kind(self) -> AgentKind {
        match self {
            Cli::Claude => AgentKind::ClaudeCode,
            Cli::Codex => AgentKind::Codex,
        }
    }

    /// The variable naming the binary (set by scripts/e2e-real-agents.sh, which derives it
    /// from the program's name the same way).
    pub fn variable(self) -> String {
        format!("AUTOBUILD_REAL_{}", self.program().to_uppercase())
    }

    fn program(self) -> &'static str {
        describe(self.kind())
            .program
            .expect("a real-agent CLI's adapter names its program")
    }

    fn agent(self) -> String {
        self.kind().to_string()
    }

    /// The binary. The scenarios are `#[ignore]`d; run with `--ignored` without it is a
    /// failure that says how to get it, never a silent pass.
    pub fn binary(self) -> PathBuf {
        let Some(path) = std::env::var_os(self.variable()).filter(|p| !p.is_empty()) else {
            panic!(
                "{} is not set; scripts/e2e-real-agents.sh installs the pinned {} and runs this \
                 suite against it",
                self.variable(),
                self.program()
            );
        };
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "{} = {} is not a file",
            self.variable(),
            path.display()
        );
        path
    }
}

/// Variables of the test's environment that would send the CLIs elsewhere or give them other
/// credentials; never inherited.
const SCRUBBED: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_MODEL",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CONFIG_DIR",
    "CLAUDECODE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "CODEX_API_KEY",
    "CODEX_HOME",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
    "XDG_CONFIG_HOME",
];

/// The model name given to codex roles (autobuild's price table knows it).
pub const CODEX_MODEL: &str = "gpt-5-codex";

pub struct Harness {
    pub cli: Cli,
    /// The real binary under test.
    pub binary: PathBuf,
    pub name: String,
    pub project: Project,
    pub server: ModelServer,
    _codex_home: tempfile::TempDir,
}

/// A directory outside the system's temporary directory for codex's home: codex 0.169 refuses
/// to create its sandbox helper (`codex-linux-sandbox`) under a temporary directory, and then
/// every command fails under a system bubblewrap with "execvp codex-linux-sandbox". The script
/// sets `AUTOBUILD_E2E_SCRATCH` inside its cache; otherwise `~/.cache/autobuild-e2e/scratch`.
fn scratch_outside_tmp() -> PathBuf {
    let dir = std::env::var_os("AUTOBUILD_E2E_SCRATCH")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .map(|home| PathBuf::from(home).join(".cache/autobuild-e2e/scratch"))
        })
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_TARGET_TMPDIR")));
    fs::create_dir_all(&dir).unwrap();
    dir
}

impl Harness {
    /// The scenario `name` for `cli` with the model scripted by `script` (given the worktree's
    /// path).
    pub fn new(cli: Cli, name: &str, script: impl FnOnce(&Path) -> Script) -> Harness {
        let binary = cli.binary();
        let project = Project::new().commit();
        let scratch = project.root.parent().unwrap().join("agent-env");
        let codex_home_dir = tempfile::tempdir_in(scratch_outside_tmp()).unwrap();
        let bin = scratch.join("bin");
        let home = scratch.join("home");
        fs::create_dir_all(&bin).unwrap();
        fs::create_dir_all(&home).unwrap();
        symlink(&binary, bin.join(cli.program())).unwrap();
        let script = script(&project.worktree());
        let server = ModelServer::start(script, &scratch.join("model-server"));

        let model = match cli {
            Cli::Claude => String::new(),
            Cli::Codex => format!("model = \"{CODEX_MODEL}\"\n"),
        };
        let config = format!(
            r#"[checks.test]
cmd = "sh tests/run.sh"
timeout = "30s"

[env]
path_prepend = ["{bin}"]

[roles.player]
agent = "{agent}"
{model}timeout = "120s"

[roles.coach]
agent = "{agent}"
{model}timeout = "120s"
"#,
            bin = bin.display(),
            agent = cli.agent(),
        );
        project.write(".autobuild/config.toml", &config);
        project.git(&["commit", "-q", "-am", &format!("use {}", cli.agent())]);

        let mut project = SCRUBBED
            .iter()
            .fold(project, |project, name| project.without_env(name))
            .env("HOME", &home.display().to_string())
            .env("NO_PROXY", "127.0.0.1,localhost")
            .env("no_proxy", "127.0.0.1,localhost");
        project = match cli {
            Cli::Claude => project
                .env("ANTHROPIC_BASE_URL", &server.url())
                .env("ANTHROPIC_API_KEY", "test")
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_TELEMETRY", "1")
                .env("DISABLE_AUTOUPDATER", "1")
                .env("DISABLE_ERROR_REPORTING", "1")
                // One request per attempt: a 429 or 401 reaches autobuild at once instead of
                // after Claude Code's own retries (ten, minutes apart for a 401).
                .env("CLAUDE_CODE_MAX_RETRIES", "0"),
            Cli::Codex => {
                let codex_home = codex_home_dir.path().to_path_buf();
                fs::write(codex_home.join("config.toml"), codex_config(&server.url())).unwrap();
                project
                    .env("CODEX_HOME", &codex_home.display().to_string())
                    .env("CODEX_API_KEY", "test")
            }
        };
        Harness {
            _codex_home: codex_home_dir,
            cli,
            binary,
            name: name.to_string(),
            project,
            server,
        }
    }

    /// The first line of `<binary> --version`.
    pub fn version(&self) -> String {
        let output = std::process::Command::new(&self.binary)
            .arg("--version")
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        text.lines().next().unwrap_or("").trim().to_string()
    }

    /// `autobuild ARGS…` in the project, to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        let output = self.project.run(args);
        eprintln!(
            "[{}] autobuild {} -> exit {:?}",
            self.name,
            args.join(" "),
            output.status.code()
        );
        output
    }

    pub fn worktree(&self) -> PathBuf {
        self.project.worktree()
    }

    /// A file of the task's worktree, by its path relative to the worktree.
    pub fn in_worktree(&self, path: &str) -> PathBuf {
        self.worktree().join(path)
    }

    /// `<run dir>/<kind>_turn_<turn>.json`.
    pub fn record(&self, kind: &str, turn: u32) -> Value {
        self.project.record(kind, turn)
    }

    /// A file of the run directory, as text.
    pub fn run_file(&self, path: &str) -> String {
        let file = self.project.run_dir().join(path);
        fs::read_to_string(&file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()))
    }

    /// The agent's event stream of `role` in `turn` (claude: `.stream.jsonl`, codex: `.jsonl`).
    pub fn agent_events(&self, role: Role, turn: u32) -> Vec<Value> {
        let suffix = match self.cli {
            Cli::Claude => "stream.jsonl",
            Cli::Codex => "jsonl",
        };
        self.run_file(&format!("logs/turn_{turn}_{}.{suffix}", role.name()))
            .lines()
            .filter_map(|line| serde_json::from_str(line).ok())
            .collect()
    }

    /// What the server saw, for assertion messages.
    pub fn context(&self) -> String {
        format!(
            "model server requests:\n{}\n(bodies in {})",
            self.server.summary(),
            self.server.log_path().display()
        )
    }
}

impl Drop for Harness {
    /// Keeps the run directory and the server's request log under `$AUTOBUILD_E2E_ARTIFACTS`
    /// (the script sets it), whether the scenario passed or not.
    fn drop(&mut self) {
        let Some(dir) = std::env::var_os("AUTOBUILD_E2E_ARTIFACTS").filter(|d| !d.is_empty())
        else {
            return;
        };
        let target = Path::new(&dir).join(format!("{:?}-{}", self.cli, self.name).to_lowercase());
        let _ = fs::remove_dir_all(&target);
        let run_dir = self.project.run_dir();
        copy_quietly(&run_dir, &target.join("run"));
        let _ = fs::copy(self.server.log_path(), target.join("requests.jsonl"));
        eprintln!("[{}] records kept in {}", self.name, target.display());
    }
}

/// `CODEX_HOME/config.toml`: a provider for the scripted server (plain HTTP streaming — the
/// built-in `openai` provider tries a WebSocket first), no retries inside codex so a 429
/// reaches autobuild, and nothing that reaches for other hosts: no update check, no metrics
/// (`ab.chatgpt.com`), no plugin marketplace (`api.github.com`, `chatgpt.com`) — with these
/// off, codex 0.169.0 makes no DNS query at all.
fn codex_config(url: &str) -> String {
    format!(
        r#"model_provider = "scripted"
check_for_update_on_startup = false

[model_providers.scripted]
name = "autobuild scripted model server"
base_url = "{url}/v1"
wire_api = "responses"
env_key = "CODEX_API_KEY"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[features]
plugins = false
"#
    )
}

/// Copies a directory tree, skipping what cannot be copied (it runs in `drop`, also while a
/// failed assertion unwinds).
fn copy_quietly(from: &Path, to: &Path) {
    let (Ok(entries), Ok(())) = (fs::read_dir(from), fs::create_dir_all(to)) else {
        return;
    };
    for entry in entries.flatten() {
        let target = to.join(entry.file_name());
        match entry.file_type() {
            Ok(kind) if kind.is_dir() => copy_quietly(&entry.path(), &target),
            Ok(kind) if kind.is_file() => {
                let _ = fs::copy(entry.path(), &target);
            }
            _ => {}
        }
    }
}
