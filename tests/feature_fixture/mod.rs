//! A small POSIX-sh project in a temporary git repository for the feature tests, driven through
//! the real `autobuild` binary. Every task's Player runs a behaviour script the test writes
//! (`.autobuild/agents/tasks/<TASK-ID>.sh`) and logs its start and end to a file outside the
//! repository; the Coach approves, so the runner's checks and criteria decide each gate.

#![allow(dead_code)] // each test binary uses a different subset

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;
use tempfile::TempDir;

pub use crate::support::*;

const RUN_TESTS: &str = r#"#!/bin/sh
# Runs every tests/test_*.sh; each exits non-zero on failure.
failed=0
passed=0
for t in tests/test_*.sh; do
    [ -e "$t" ] || continue
    if sh "$t"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $t"; fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
"#;

const GREET: &str =
    "# greet.sh: greeting helpers.\ngreeting() {\n    printf 'Hello, %s!\\n' \"$1\"\n}\n";

pub struct Project {
    dir: TempDir,
    pub root: PathBuf,
    env: Vec<(String, String)>,
}

impl Project {
    pub fn new() -> Project {
        Project::in_dir(tempfile::tempdir().unwrap())
    }

    /// A project in a new temporary directory under `parent` (for the sandbox tests, outside
    /// the system's `/tmp`, which the sandbox replaces with a private one).
    pub fn new_in(parent: &Path) -> Project {
        Project::in_dir(tempfile::tempdir_in(parent).unwrap())
    }

    fn in_dir(dir: TempDir) -> Project {
        let root = dir.path().join("project");
        let project = Project {
            dir,
            root,
            env: Vec::new(),
        };
        project.write("lib/greet.sh", GREET);
        project.write("tests/run.sh", RUN_TESTS);
        project.write(".autobuild/.gitignore", "runs/\nworktrees/\n");
        project.write(".autobuild/agents/player.sh", &fixture("agents/player.sh"));
        project.write(".autobuild/agents/coach.sh", &fixture("agents/coach.sh"));
        project.write_config("30s");
        project
    }

    /// `.autobuild/config.toml`: the runner's check, the scripted agents, and the directory
    /// beside the repository they may write in the sandbox ([`Project::outside`]).
    fn write_config(&self, player_timeout: &str) {
        let outside = self.outside("");
        self.write(
            ".autobuild/config.toml",
            &format!(
                r#"[checks.test]
cmd = "sh tests/run.sh"
timeout = "30s"

[roles.player]
agent = "command"
command = ["sh", ".autobuild/agents/player.sh"]
timeout = "{player_timeout}"

[roles.coach]
agent = "command"
command = ["sh", ".autobuild/agents/coach.sh"]
timeout = "30s"

[sandbox]
writable = [{outside:?}]
"#
            ),
        );
    }

    /// `[sandbox] mode` (the last section of the config, so it is appended).
    pub fn sandbox_mode(self, mode: &str) -> Project {
        let config = self.root.join(".autobuild/config.toml");
        let text = fs::read_to_string(&config).unwrap();
        fs::write(&config, format!("{text}mode = {mode:?}\n")).unwrap();
        self
    }

    /// `[feature] integration = MODE` (appended as a section of its own: call it after
    /// [`Project::sandbox_mode`]).
    pub fn integration(self, mode: &str) -> Project {
        let config = self.root.join(".autobuild/config.toml");
        let text = fs::read_to_string(&config).unwrap();
        fs::write(
            &config,
            format!("{text}\n[feature]\nintegration = {mode:?}\n"),
        )
        .unwrap();
        self
    }

    /// How long a Player may run before the engine stops it.
    pub fn player_timeout(self, timeout: &str) -> Project {
        self.write_config(timeout);
        self
    }

    /// A task whose single criterion runs `verify`, and whose Player runs `behaviour` (sh).
    pub fn task(self, id: &str, verify: &str, behaviour: &str) -> Project {
        self.write(
            &format!(".autobuild/tasks/{id}.md"),
            &format!(
                "---\nid: {id}\ntitle: Task {id}\n---\n# Task {id}\n\nDo {id}.\n\n## Acceptance Criteria\n- [ ] AC-001: {id} is done `verify: {verify}`\n"
            ),
        );
        self.behaviour(id, behaviour)
    }

    /// Two tasks that pass alone and fail together, and a third after both, as feature
    /// `feature`: TASK-A changes the contract of `greeting` (it takes the greeting word first)
    /// and updates its own test; TASK-B, in the same wave, adds `welcome`, which calls
    /// `greeting` the old way, with a test. Together `welcome` breaks. TASK-C depends on both.
    pub fn contract_clash(self, feature: &str) -> Project {
        self.task(
            "TASK-A",
            "sh tests/test_a.sh",
            "printf 'greeting() {\\n    printf \"%%s, %%s!\\\\n\" \"$1\" \"$2\"\\n}\\n' > lib/greet.sh\n\
             printf '. lib/greet.sh\\n[ \"$(greeting Hi World)\" = \"Hi, World!\" ]\\n' > tests/test_a.sh\n",
        )
        .task(
            "TASK-B",
            "sh tests/test_b.sh",
            "printf 'welcome() {\\n    greeting \"$1\"\\n}\\n' > lib/welcome.sh\n\
             printf '. lib/greet.sh\\n. lib/welcome.sh\\n[ \"$(welcome World)\" = \"Hello, World!\" ] || { echo \"FAIL welcome: $(welcome World)\"; exit 1; }\\n' > tests/test_b.sh\n",
        )
        .task("TASK-C", "test -f lib/c.txt", "echo c > lib/c.txt")
        .feature(
            feature,
            &format!("id: {feature}\nname: Clash\ntasks:\n  - id: TASK-A\n  - id: TASK-B\n  - id: TASK-C\n    dependencies: [TASK-A, TASK-B]\n"),
        )
    }

    /// What the Player does for task `id`.
    pub fn behaviour(self, id: &str, script: &str) -> Project {
        self.write(&format!(".autobuild/agents/tasks/{id}.sh"), script);
        self
    }

    /// `.autobuild/features/<id>.yaml`.
    pub fn feature(self, id: &str, yaml: &str) -> Project {
        self.write(&format!(".autobuild/features/{id}.yaml"), yaml);
        self
    }

    /// Copies tests/fixtures/features/`name`/ into the project.
    pub fn fixture_tree(self, name: &str) -> Project {
        let from = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/features")
            .join(name);
        copy_tree(&from, &self.root);
        self
    }

    /// An environment variable for every `autobuild` process (and so its agents).
    pub fn env(mut self, name: &str, value: &str) -> Project {
        self.env.push((name.into(), value.into()));
        self
    }

    /// `git init` on `main` with everything in one commit.
    pub fn commit(self) -> Project {
        git(&self.root, &["init", "-q", "-b", "main"]);
        git(&self.root, &["add", "-A"]);
        git(&self.root, &["commit", "-q", "-m", "initial"]);
        self
    }

    pub fn write(&self, path: &str, content: &str) {
        let file = self.root.join(path);
        fs::create_dir_all(file.parent().unwrap()).unwrap();
        fs::write(file, content).unwrap();
    }

    /// A path in the temp directory but outside the repository, in a directory the agents and
    /// checks may write (it is in `[sandbox] writable`): the test's channel to and from them.
    pub fn outside(&self, name: &str) -> PathBuf {
        let dir = self.dir.path().join("outside");
        fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    /// Where the Players log their starts and ends (pass it as `FEATURE_LOG`).
    pub fn log_path(&self) -> PathBuf {
        self.outside("players.log")
    }

    /// Logs Player starts and ends to [`Project::log_path`].
    pub fn logged(self) -> Project {
        let log = self.log_path().display().to_string();
        self.env("FEATURE_LOG", &log)
    }

    /// The Player log: `(event, task, turn, seconds)`.
    pub fn log(&self) -> Vec<(String, String, u32, f64)> {
        fs::read_to_string(self.log_path())
            .unwrap_or_default()
            .lines()
            .map(|line| {
                let parts: Vec<&str> = line.split_whitespace().collect();
                (
                    parts[0].to_string(),
                    parts[1].to_string(),
                    parts[2].parse().unwrap(),
                    parts[3].parse().unwrap(),
                )
            })
            .collect()
    }

    /// How many times the Player of `task` started.
    pub fn starts(&self, task: &str) -> usize {
        self.log()
            .iter()
            .filter(|(event, t, _, _)| event == "start" && t == task)
            .count()
    }

    /// `autobuild -C <root> ARGS…`, to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().unwrap()
    }

    /// `autobuild -C <root> ARGS…` with `env` added for this run only, to completion.
    pub fn run_with(&self, env: &[(&str, &str)], args: &[&str]) -> Output {
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

    fn command(&self, args: &[&str]) -> Command {
        self.command_in(&self.root, args)
    }

    /// `autobuild -C <dir> ARGS…` with this project's environment, to completion: for clones.
    pub fn run_in(&self, dir: &Path, args: &[&str]) -> Output {
        self.command_in(dir, args).output().unwrap()
    }

    /// A bare clone of the committed project beside it: the "remote" of CI-style tests.
    pub fn bare_remote(&self) -> PathBuf {
        let remote = self.dir.path().join("remote.git");
        git(
            self.dir.path(),
            &[
                "clone",
                "-q",
                "--bare",
                self.root.to_str().unwrap(),
                remote.to_str().unwrap(),
            ],
        );
        remote
    }

    /// A fresh clone of `remote` (full history) in a new directory named `name`, on `branch`.
    pub fn clone_remote(&self, remote: &Path, name: &str, branch: &str) -> PathBuf {
        let dir = self.dir.path().join("clones").join(name);
        fs::create_dir_all(dir.parent().unwrap()).unwrap();
        git(
            self.dir.path(),
            &[
                "clone",
                "-q",
                "--branch",
                branch,
                remote.to_str().unwrap(),
                dir.to_str().unwrap(),
            ],
        );
        dir
    }

    /// The environment every `autobuild` process of this project gets (for shells that run it).
    pub fn environment(&self) -> Vec<(String, String)> {
        let mut env = vec![(
            "AUTOBUILD_CONFIG_DIR".to_string(),
            self.root.join("no-such-config-dir").display().to_string(),
        )];
        env.extend(self.env.iter().cloned());
        env
    }

    /// The temp directory everything of this project lives in.
    pub fn temp(&self) -> &Path {
        self.dir.path()
    }

    fn command_in(&self, dir: &Path, args: &[&str]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_autobuild"));
        command
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(Stdio::null())
            .env_remove("RUST_LOG");
        for (name, value) in self.environment() {
            command.env(name, value);
        }
        command
    }

    pub fn run_dir(&self, id: &str) -> PathBuf {
        self.root.join(".autobuild/runs").join(id)
    }

    /// `runs/<FEAT-ID>/feature.json` with its journal replayed, as autobuild reads it.
    pub fn feature_state(&self, id: &str) -> Value {
        let path = self.run_dir(id).join("feature.json");
        let state = autobuild::feature::state::FeatureState::load(&path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        serde_json::to_value(state).unwrap()
    }

    pub fn task_status(&self, feature: &str, task: &str) -> String {
        self.feature_state(feature)["tasks"][task]["status"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    /// The feature's own events (`runs/<FEAT-ID>/events.jsonl`).
    pub fn feature_events(&self, id: &str) -> Vec<Value> {
        fs::read_to_string(self.run_dir(id).join("events.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    pub fn report(&self, id: &str) -> String {
        fs::read_to_string(self.run_dir(id).join("report.md")).unwrap()
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

    /// A file's content at a revision, or `None` when it does not exist there.
    pub fn show(&self, rev: &str, path: &str) -> Option<String> {
        let output = Command::new("git")
            .current_dir(&self.root)
            .args(["show", &format!("{rev}:{path}")])
            .output()
            .unwrap();
        output
            .status
            .success()
            .then(|| String::from_utf8(output.stdout).unwrap())
    }

    pub fn git(&self, args: &[&str]) -> String {
        git(&self.root, args)
    }
}

fn fixture(path: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/features")
        .join(path);
    fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
