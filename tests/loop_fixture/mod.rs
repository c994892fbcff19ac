//! A tiny POSIX-sh project in a temporary git repository, driven through the real `autobuild`
//! binary with scripted `command` agents from tests/fixtures/loop/. The loop scenario tests
//! assert on what a user would see: exit codes, run records, reports and git state.

#![allow(dead_code)] // each test binary uses a different subset

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

pub use crate::support::*;

pub const TASK: &str = "TASK-1";

const TASK_FILE: &str = r#"---
id: TASK-1
title: Add a greeting function
task_type: feature
---
# Add a greeting function

Add `greeting NAME` to `lib/greet.sh`; it prints `Hello, NAME!`.

## Acceptance Criteria
- [ ] AC-001: `greeting Ada` prints "Hello, Ada!" `verify: sh -c '. ./lib/greet.sh && test "$(greeting Ada)" = "Hello, Ada!"'`
"#;

const GREET: &str = "# greet.sh: greeting helpers, sourced by scripts and tests.\n\
farewell() {\n    printf 'Goodbye, %s.\\n' \"$1\"\n}\n";

const RUN_TESTS: &str = r#"#!/bin/sh
# Runs every tests/test_*.sh; each exits non-zero on failure.
failed=0
passed=0
for t in tests/test_*.sh; do
    [ -e "$t" ] || continue
    if sh "$t"; then passed=$((passed + 1)); echo "ok   $t"; else failed=$((failed + 1)); echo "FAIL $t"; fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
"#;

const TEST_FAREWELL: &str = r#". ./lib/greet.sh
got=$(farewell Ada)
[ "$got" = "Goodbye, Ada." ] || { echo "error: farewell Ada: expected \"Goodbye, Ada.\", got \"$got\""; exit 1; }
"#;

/// The sample task file (TASK-1), for tests that change its front matter.
pub fn task_file() -> String {
    TASK_FILE.to_string()
}

/// A project being set up (before [`Project::commit`]) or run (after).
pub struct Project {
    _dir: TempDir,
    pub root: PathBuf,
    player_timeout: String,
    coach_timeout: String,
    /// `[checks.test] cmd`.
    test_cmd: String,
    extra_config: String,
    /// `[sandbox] mode`, when the test sets one.
    sandbox_mode: Option<String>,
    sandbox_backend: Option<String>,
    /// `[sandbox] writable` beyond the [`Project::outside`] directory.
    writable: Vec<String>,
    /// Whether the test asked for [`Project::outside`]: only then is that directory (whose path
    /// differs from project to project) written into the committed config.
    outside_used: std::cell::Cell<bool>,
    env: Vec<(String, String)>,
    env_removed: Vec<String>,
}

impl Project {
    /// The sample project with a correct player and a coach that checks the work.
    pub fn new() -> Project {
        Project::new_in(&std::env::temp_dir())
    }

    /// [`Project::new`] in a temporary directory under `parent`. Under `/tmp` (the default)
    /// the sandbox hides what lies beside the repository behind its private `/tmp`; elsewhere
    /// it is read-only, as a user's home is.
    pub fn new_in(parent: &Path) -> Project {
        let dir = tempfile::tempdir_in(parent).unwrap();
        let root = dir.path().join("project");
        let project = Project {
            _dir: dir,
            root,
            player_timeout: "20s".into(),
            coach_timeout: "20s".into(),
            test_cmd: "sh tests/run.sh".into(),
            extra_config: String::new(),
            sandbox_mode: None,
            sandbox_backend: None,
            writable: Vec::new(),
            outside_used: std::cell::Cell::new(false),
            env: Vec::new(),
            env_removed: Vec::new(),
        };
        project.write("lib/greet.sh", GREET);
        project.write("tests/run.sh", RUN_TESTS);
        project.write("tests/test_farewell.sh", TEST_FAREWELL);
        project.write(".autobuild/.gitignore", "runs/\nworktrees/\n");
        project.write(".autobuild/tasks/TASK-1.md", TASK_FILE);
        project.write(
            ".autobuild/agents/write_greeting.sh",
            &fixture("write_greeting.sh"),
        );
        project.player("player_correct.sh").coach("coach_checks.sh")
    }

    /// Uses tests/fixtures/loop/`script` as the player.
    pub fn player(self, script: &str) -> Project {
        self.write(".autobuild/agents/player.sh", &fixture(script));
        self
    }

    /// A committed `tools/shout` (upper-cases its argument): a tool only a project
    /// environment that puts `tools/` on PATH finds.
    pub fn shout_tool(self) -> Project {
        self.write(
            "tools/shout",
            "#!/bin/sh\nprintf '%s\\n' \"$1\" | tr '[:lower:]' '[:upper:]'\n",
        );
        std::fs::set_permissions(
            self.root.join("tools/shout"),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        self
    }

    /// Uses tests/fixtures/loop/`script` as the coach.
    pub fn coach(self, script: &str) -> Project {
        self.write(".autobuild/agents/coach.sh", &fixture(script));
        self
    }

    /// `[checks.test] cmd` (default `sh tests/run.sh`).
    pub fn test_cmd(mut self, cmd: &str) -> Project {
        self.test_cmd = cmd.into();
        self
    }

    pub fn player_timeout(mut self, timeout: &str) -> Project {
        self.player_timeout = timeout.into();
        self
    }

    /// TOML appended to `.autobuild/config.toml` (e.g. an `[env]` table).
    pub fn config(mut self, toml: &str) -> Project {
        self.extra_config.push_str(toml);
        self
    }

    /// An environment variable for every `autobuild` process (and so its agents).
    pub fn env(mut self, name: &str, value: &str) -> Project {
        self.env.push((name.into(), value.into()));
        self
    }

    /// A variable of the test's own environment that `autobuild` (and so its agents) must not
    /// inherit.
    pub fn without_env(mut self, name: &str) -> Project {
        self.env_removed.push(name.into());
        self
    }

    /// A path beside the repository in a directory the agents and checks may write (it is in
    /// `[sandbox] writable`): the test's channel to and from them (markers, logs, scenarios).
    pub fn outside(&self, name: &str) -> PathBuf {
        self.outside_used.set(true);
        let dir = self._dir.path().join("outside");
        fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// A directory beside the repository, not writable in the sandbox, to use as `HOME`.
    pub fn home(&self) -> PathBuf {
        let home = self._dir.path().join("home");
        fs::create_dir_all(&home).unwrap();
        home
    }

    /// `[sandbox] mode = "off"`: agents and checks run unconfined even where bwrap works, for
    /// tests of what the runner itself catches and undoes.
    pub fn unconfined(mut self) -> Project {
        self.sandbox_mode = Some("off".into());
        self
    }

    /// `[sandbox] mode`.
    pub fn sandbox_mode(mut self, mode: &str) -> Project {
        self.sandbox_mode = Some(mode.into());
        self
    }

    /// `[sandbox] backend` (`bwrap` with `AUTOBUILD_BWRAP` naming none: a machine where
    /// nothing confines).
    pub fn sandbox_backend(mut self, backend: &str) -> Project {
        self.sandbox_backend = Some(backend.into());
        self
    }

    /// One more `[sandbox] writable` entry.
    pub fn writable(mut self, path: &str) -> Project {
        self.writable.push(path.into());
        self
    }

    /// The `[sandbox]` table of this project (empty when the test set nothing), for tests that
    /// write their own config.
    pub fn sandbox_table(&self) -> String {
        let outside = self
            .outside_used
            .get()
            .then(|| self.outside("").display().to_string());
        let writable: Vec<String> = outside
            .into_iter()
            .chain(self.writable.iter().cloned())
            .map(|path| format!("{path:?}"))
            .collect();
        let mode = self
            .sandbox_mode
            .as_ref()
            .map(|mode| format!("mode = {mode:?}\n"))
            .into_iter()
            .chain(
                self.sandbox_backend
                    .as_ref()
                    .map(|backend| format!("backend = {backend:?}\n")),
            )
            .collect::<String>();
        if mode.is_empty() && writable.is_empty() {
            return String::new();
        }
        format!("\n[sandbox]\n{mode}writable = [{}]\n", writable.join(", "))
    }

    /// Writes the config, then `git init` on `main` with everything in one commit.
    pub fn commit(self) -> Project {
        self.write(".autobuild/config.toml", &self.config_toml());
        git(&self.root, &["init", "-q", "-b", "main"]);
        git(&self.root, &["add", "-A"]);
        git(&self.root, &["commit", "-q", "-m", "initial"]);
        self
    }

    fn config_toml(&self) -> String {
        format!(
            r#"[checks.test]
cmd = {:?}
timeout = "30s"

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]
timeout = "{}"

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/agents/coach.sh"]
timeout = "{}"
{}{}"#,
            self.test_cmd,
            self.player_timeout,
            self.coach_timeout,
            self.extra_config,
            self.sandbox_table()
        )
    }

    pub fn write(&self, path: &str, content: &str) {
        let file = self.root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, content).unwrap();
    }

    pub fn read(&self, path: &str) -> String {
        fs::read_to_string(self.root.join(path))
            .unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
    }

    /// `autobuild -C <root> ARGS…`, to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `autobuild -C <root> ARGS…` with extra environment variables, to completion.
    pub fn run_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = self.command(args);
        for (name, value) in env {
            command.env(name, value);
        }
        command.output().unwrap()
    }

    /// `autobuild -C <root> ARGS…`, in the background.
    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// [`Project::spawn`] with its output captured, for `wait_with_output`.
    pub fn spawn_captured(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_autobuild"));
        command
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .stdin(Stdio::null())
            .env("AUTOBUILD_CONFIG_DIR", self.root.join("no-such-config-dir"))
            .env_remove("RUST_LOG")
            .env_remove("GITHUB_ACTIONS");
        for name in &self.env_removed {
            command.env_remove(name);
        }
        for (name, value) in &self.env {
            command.env(name, value);
        }
        command
    }

    pub fn run_dir(&self) -> PathBuf {
        self.root.join(".autobuild/runs").join(TASK)
    }

    pub fn worktree(&self) -> PathBuf {
        self.root.join(".autobuild/worktrees").join(TASK)
    }

    pub fn branch(&self) -> String {
        format!("autobuild/{TASK}")
    }

    /// `<run dir>/<kind>_turn_<turn>.json`, parsed.
    pub fn record(&self, kind: &str, turn: u32) -> Value {
        json(&self.run_dir().join(format!("{kind}_turn_{turn}.json")))
    }

    pub fn state(&self) -> Value {
        json(&self.run_dir().join("state.json"))
    }

    pub fn report(&self) -> String {
        fs::read_to_string(self.run_dir().join("report.md")).unwrap()
    }

    pub fn branch_exists(&self, branch: &str) -> bool {
        Command::new("git")
            .current_dir(&self.root)
            .args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("refs/heads/{branch}"))
            .output()
            .unwrap()
            .status
            .success()
    }

    /// A file's content at a revision (`main`, a branch, a commit).
    pub fn show(&self, rev: &str, path: &str) -> String {
        git(&self.root, &["show", &format!("{rev}:{path}")])
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.root, args)
    }
}

/// tests/fixtures/loop/`script`.
pub fn fixture(script: &str) -> String {
    read_fixture("tests/fixtures/loop", script)
}

/// tests/fixtures/workflows/`file`.
pub fn workflow_fixture(file: &str) -> String {
    read_fixture("tests/fixtures/workflows", file)
}

fn read_fixture(dir: &str, file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir).join(file);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
