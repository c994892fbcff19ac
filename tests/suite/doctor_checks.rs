//! `autobuild doctor` in real repositories: what the selected workflow's roles need decides
//! the exit code, credentials are reported by name only, and nothing is left behind.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use tempfile::TempDir;

const SECRET: &str = "sk-secret-123456";

/// Variables that would let a real login leak into the test.
const CREDENTIAL_VARS: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CONFIG_DIR",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "CODEX_HOME",
];

const CLAUDE_ROLES: &str = r#"
[roles.player]
agent = "claude-code"

[roles.coach]
agent = "claude-code"
"#;

const CODEX_ROLES: &str = r#"
[roles.player]
agent = "codex"
model = "gpt-5-codex"

[roles.coach]
agent = "codex"
model = "gpt-5-codex"
"#;

const COMMAND_ROLES: &str = r#"
[roles.player]
agent = "command"
command = ["sh", "player.sh"]

[roles.coach]
agent = "command"
command = ["sh", "coach.sh"]
"#;

struct Repo {
    dir: TempDir,
    home: PathBuf,
    bin: PathBuf,
    vars: Vec<(String, String)>,
}

impl Repo {
    /// A committed repository with `.autobuild/config.toml` = `config`, an empty HOME and an
    /// empty directory for extra programs.
    fn new(config: &str) -> Repo {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("repo");
        let home = dir.path().join("home");
        let bin = dir.path().join("bin");
        for d in [&root.join(".autobuild"), &home, &bin] {
            fs::create_dir_all(d).unwrap();
        }
        fs::write(root.join(".autobuild/config.toml"), config).unwrap();
        fs::write(root.join("README.md"), "sample\n").unwrap();
        git(&root, &["init", "-q", "-b", "main"]);
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", "initial"]);
        Repo {
            dir,
            home,
            bin,
            vars: Vec::new(),
        }
    }

    fn root(&self) -> PathBuf {
        self.dir.path().join("repo")
    }

    fn var(mut self, name: &str, value: &str) -> Repo {
        self.vars.push((name.into(), value.into()));
        self
    }

    /// Puts an executable script named `name` on the doctor's PATH.
    fn program(self, name: &str, script: &str) -> Repo {
        let path = self.bin.join(name);
        fs::write(&path, script).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        self
    }

    fn doctor(&self, args: &[&str]) -> Output {
        let path = std::env::join_paths(
            [self.bin.clone()]
                .into_iter()
                .chain(path_without(&["claude", "codex"])),
        )
        .unwrap();
        let mut command = Command::new(env!("CARGO_BIN_EXE_autobuild"));
        command
            .arg("-C")
            .arg(self.root())
            .arg("doctor")
            .args(args)
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("AUTOBUILD_CONFIG_DIR", self.dir.path().join("no-config"));
        for name in CREDENTIAL_VARS {
            command.env_remove(name);
        }
        for (name, value) in &self.vars {
            command.env(name, value);
        }
        command.output().unwrap()
    }
}

/// The directories of the current PATH that hold none of `programs`.
fn path_without(programs: &[&str]) -> Vec<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .filter(|dir| !programs.iter().any(|p| dir.join(p).exists()))
        .collect()
}

fn fake_claude() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-claude/claude");
    fs::read_to_string(path).unwrap()
}

fn fake_codex() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-codex/codex");
    fs::read_to_string(path).unwrap()
}

fn git(dir: &Path, args: &[&str]) {
    let status = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Every path below `dir` (files and directories), sorted.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(tree(&path));
        }
        found.push(path);
    }
    found.sort();
    found
}

#[test]
fn a_ready_repository_passes_without_printing_secrets_or_leaving_files() {
    let repo = Repo::new(CLAUDE_ROLES)
        .program("claude", &fake_claude())
        .var("ANTHROPIC_API_KEY", SECRET);
    let before = tree(&repo.root());

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let claude = repo.bin.join("claude").display().to_string();
    assert!(
        text.contains(&format!(
            "ok       claude-code: {claude} (2.0.99 (Claude Code))"
        )),
        "{text}"
    );
    assert!(text.contains("ok       claude-code credentials: ANTHROPIC_API_KEY is set"));
    assert!(text.contains("ok       config: .autobuild/config.toml"));
    assert!(text.contains("ok       worktrees: .autobuild/ is writable"));
    assert!(text.contains("warn     codex: `codex` not found on PATH"));
    assert!(text.contains("Everything the `player-coach` workflow needs is here."));
    assert!(!text.contains(SECRET));
    assert!(!String::from_utf8_lossy(&output.stderr).contains(SECRET));
    assert_eq!(tree(&repo.root()), before, "doctor changed the repository");
}

#[test]
fn missing_claude_and_credentials_are_listed_per_role() {
    let repo = Repo::new(CLAUDE_ROLES);

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("missing  claude-code: `claude` not found on PATH"));
    assert!(text.contains("missing  claude-code credentials: none found"));
    assert!(text.contains("The `player-coach` workflow cannot run here yet:"));
    assert!(text.contains(
        "  - roles `player` and `coach` (claude-code) need `claude`: install Claude Code with \
         `npm install -g @anthropic-ai/claude-code`"
    ));
    assert!(text.contains("need credentials: export ANTHROPIC_API_KEY"));
}

#[test]
fn a_claude_login_counts_as_credentials() {
    let repo = Repo::new(CLAUDE_ROLES).program("claude", &fake_claude());
    fs::create_dir_all(repo.home.join(".claude")).unwrap();
    fs::write(repo.home.join(".claude/.credentials.json"), "{}").unwrap();

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("ok       claude-code credentials: logged in ("));
}

#[test]
fn a_failing_version_probe_is_reported_not_fatal() {
    let repo = Repo::new(CLAUDE_ROLES)
        .program("claude", "#!/bin/sh\necho 'broken install' >&2\nexit 3\n")
        .var("ANTHROPIC_API_KEY", SECRET);

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("but `--version` failed: exit code 3: broken install"),
        "{text}"
    );
}

#[test]
fn agent_clis_no_role_uses_are_only_warnings() {
    let repo = Repo::new(COMMAND_ROLES);

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("warn     claude-code: `claude` not found on PATH"));
    assert!(text.contains("ok       role player (command): `sh` is "));

    let solo = repo.doctor(&["--workflow", "solo"]);
    assert_eq!(solo.status.code(), Some(0), "{}", stdout(&solo));
}

#[test]
fn an_invalid_config_is_a_problem() {
    let repo = Repo::new("[roles.player]\nagent = \"claude-code\"\n[bogus]\nx = 1\n");

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("missing  config: .autobuild/config.toml is invalid:"));
    assert!(text.contains("bogus"), "{text}");
}

#[test]
fn an_unknown_workflow_is_a_problem() {
    let repo = Repo::new(COMMAND_ROLES);

    let output = repo.doctor(&["--workflow", "nope"]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(text.contains("missing  workflow nope: "), "{text}");
}

#[test]
fn codex_with_only_openai_api_key_is_not_ready() {
    // `codex exec` 0.169 sends no Authorization header for OPENAI_API_KEY alone.
    for installed in [true, false] {
        let mut repo = Repo::new(CODEX_ROLES).var("OPENAI_API_KEY", SECRET);
        if installed {
            repo = repo.program("codex", &fake_codex());
        }

        let output = repo.doctor(&[]);

        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(1), "{text}");
        assert!(text.contains("missing  codex credentials: "), "{text}");
        assert!(
            text.contains("OPENAI_API_KEY is set, but `codex exec` does not read it"),
            "{text}"
        );
        let need = text
            .lines()
            .find(|l| l.contains("(codex) need credentials"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(need.contains("CODEX_API_KEY"), "{need}");
        assert!(need.contains("codex login"), "{need}");
        assert!(!text.contains(SECRET));
    }
}

#[test]
fn codex_is_ready_with_codex_api_key_or_a_stored_login() {
    let keyed = Repo::new(CODEX_ROLES)
        .program("codex", &fake_codex())
        .var("CODEX_API_KEY", SECRET);
    let text = stdout(&keyed.doctor(&[]));
    assert!(
        text.contains("ok       codex credentials: CODEX_API_KEY is set"),
        "{text}"
    );

    let stored = Repo::new(CODEX_ROLES).program("codex", &fake_codex());
    fs::create_dir_all(stored.home.join(".codex")).unwrap();
    fs::write(
        stored.home.join(".codex/auth.json"),
        "{\"OPENAI_API_KEY\": null}",
    )
    .unwrap();
    let output = stored.doctor(&[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ok       codex credentials: Logged in using ChatGPT (`codex login status`)"),
        "{text}"
    );
}

#[test]
fn claude_auth_status_decides_not_the_claude_json_file() {
    // Any unauthenticated `claude` run leaves ~/.claude.json behind.
    let repo = Repo::new(CLAUDE_ROLES).program("claude", &fake_claude());
    fs::write(repo.home.join(".claude.json"), "{\"userID\": \"x\"}").unwrap();

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("missing  claude-code credentials: not logged in (`claude auth status`)"),
        "{text}"
    );
    assert!(text.contains("claude auth login"), "{text}");

    // And what `claude auth status` says wins over the absence of files and variables.
    let logged_in = Repo::new(CLAUDE_ROLES)
        .program("claude", &fake_claude())
        .var("FAKE_CLAUDE_AUTH", "logged_in");
    let output = logged_in.doctor(&[]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("ok       claude-code credentials: logged in (Claude account"),
        "{text}"
    );
}

#[test]
fn doctor_says_why_the_sandbox_is_unavailable_and_how_to_fix_it() {
    let config = format!("{COMMAND_ROLES}\n[sandbox]\nmode = \"on\"\nbackend = \"bwrap\"\n");
    // A bwrap like Debian's where unprivileged user namespaces are switched off.
    let repo = Repo::new(&config).program(
        "bwrap",
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace, likely because the \
         kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n",
    );

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let line = text
        .lines()
        .find(|line| line.starts_with("missing  sandbox: "))
        .unwrap_or_else(|| panic!("no sandbox line in:\n{text}"));
    assert!(line.contains("user namespaces are not available"), "{line}");
    let need = text
        .lines()
        .find(|line| line.starts_with("  - OS confinement"))
        .unwrap_or_else(|| panic!("no need for the sandbox in:\n{text}"));
    assert!(
        need.contains("kernel.unprivileged_userns_clone=1"),
        "{need}"
    );
}

#[test]
fn doctor_reports_the_sandbox_it_would_use_and_an_off_mode() {
    let fake = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-bwrap/bwrap");
    let repo = Repo::new(COMMAND_ROLES).var("AUTOBUILD_BWRAP", fake.to_str().unwrap());

    let text = stdout(&repo.doctor(&[]));

    assert!(
        text.contains(&format!(
            "ok       sandbox: bwrap (bubblewrap 0.0.0-fake, {}): agents and checks run confined (mode \"auto\", network \"ip\")",
            fake.display()
        )),
        "{text}"
    );

    let misnamed = Repo::new(COMMAND_ROLES)
        .var("AUTOBUILD_BWRAP", fake.to_str().unwrap())
        .var("AUTOBUILD_SANDBOX_BACKEND", "bubblewrap");
    let text = stdout(&misnamed.doctor(&[]));
    assert!(
        text.contains("AUTOBUILD_SANDBOX_BACKEND=`bubblewrap` is not one of auto, bwrap, landlock"),
        "{text}"
    );

    let off = Repo::new(&format!("{COMMAND_ROLES}\n[sandbox]\nmode = \"off\"\n"))
        .var("AUTOBUILD_BWRAP", "/nonexistent/bwrap");
    let text = stdout(&off.doctor(&[]));
    assert!(
        text.contains("ok       sandbox: off ([sandbox] mode = \"off\")"),
        "{text}"
    );
}

/// The repository's own workflows are what its tasks run: doctor checks their roles too, and is
/// not "ready" while one of them cannot start.
#[test]
fn every_role_of_the_repositorys_workflows_is_checked() {
    let repo = Repo::new(COMMAND_ROLES);
    let workflows = repo.root().join(".autobuild/workflows");
    fs::create_dir_all(&workflows).unwrap();
    fs::write(
        workflows.join("secure.toml"),
        "schema = 1\nname = \"secure\"\nextends = \"player-coach\"\n\n\
         [roles.auditor]\nagent = \"codex\"\naccess = \"read-only\"\noutput = \"verdict\"\n\
         prompt = \"coach.md\"\ntools = [\"read\"]\n\n\
         [[steps]]\nid = \"cycle\"\n  [[steps.steps]]\n  id = \"audit\"\n  uses = \"agent\"\n  \
         role = \"auditor\"\n  [[steps.steps]]\n  id = \"gate\"\n",
    )
    .unwrap();

    let output = repo.doctor(&[]);

    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    assert!(
        text.contains("missing  codex: `codex` not found on PATH"),
        "{text}"
    );
    assert!(
        text.contains(
            "The `player-coach` workflow and the repository's workflows (`secure`) cannot all run \
             here yet:"
        ),
        "{text}"
    );
    assert!(
        text.contains("role `auditor` (codex) needs `codex`"),
        "{text}"
    );
}

/// A `.gitignore` that ignores `.autobuild/` (`.*`) is named, with the fix, as a warning: the
/// exit code is still the workflow's. With the fix in place the warning is gone.
#[test]
fn a_project_rule_that_ignores_autobuild_is_a_warning_with_the_fix() {
    let repo = Repo::new(COMMAND_ROLES);
    let root = repo.root();
    fs::write(root.join(".gitignore"), ".*\n!.gitignore\n").unwrap();

    let output = repo.doctor(&[]);

    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
    let line = stdout(&output)
        .lines()
        .find(|line| line.contains("shared files"))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(line.starts_with("warn"), "{line}");
    assert!(line.contains(".autobuild/config.toml"), "{line}");
    assert!(
        line.contains("!/.autobuild/ !/.autobuild/.gitignore"),
        "{line}"
    );

    fs::write(
        root.join(".gitignore"),
        ".*\n!.gitignore\n!/.autobuild/\n!/.autobuild/.gitignore\n",
    )
    .unwrap();
    let output = repo.doctor(&[]);
    assert!(
        !stdout(&output).contains("shared files"),
        "{}",
        stdout(&output)
    );
}
