//! `autobuild init`: scaffold `.autobuild/` in the current repository — a commented
//! `config.toml` with the detected test command, an example task, and the `.gitignore` that keeps
//! run state out of commits; with `--agents command`, example agent scripts ([`agents`]).
//!
//! Init never overwrites: an existing file is kept and reported, so running it again (or in a
//! repository that already uses autobuild) is always safe. The only edits it makes to existing
//! files are appending missing `runs/`/`worktrees/` lines to `.autobuild/.gitignore`, and, for
//! `--agents command`, appending the example agents' `[roles.*]` to a `config.toml` that
//! configures neither a player nor a coach (one that does gets them proposed).

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use crate::cli::command_error::CommandError;
use crate::error::{exit, Error};
use crate::project::detect::{detect_test, Detection, ProjectFiles, DEFAULT_CHECK_TIMEOUT};
use crate::project::{find_repo_root, GitignoreUpdate, Layout};
use crate::ui;

mod agents;
pub use agents::InitAgents;

/// The id of the example task init writes.
pub const EXAMPLE_TASK_ID: &str = "TASK-EXAMPLE";

/// What init did to one file (`init --json` lists them, tagged by `action`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "action", rename_all = "snake_case")]
pub enum Scaffolded {
    Created {
        path: PathBuf,
        note: Option<String>,
    },
    Kept {
        path: PathBuf,
    },
    Updated {
        path: PathBuf,
        note: String,
    },
    /// Entries init suggests adding to a file it does not change.
    Proposed {
        path: PathBuf,
        lines: Vec<String>,
    },
    /// Files of `.autobuild/` the project's git rules ignore (never committed).
    Ignored {
        paths: Vec<String>,
    },
}

pub fn run(agents: InitAgents, json: bool) -> Result<u8, Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::io("cannot determine the current directory", ".", e))?;
    let root =
        find_repo_root(&cwd).ok_or_else(|| CommandError::NotInRepository { dir: cwd.clone() })?;
    let layout = Layout::new(&root);
    if root != cwd && !json {
        ui::line(&format!("initializing autobuild in {}", root.display()));
    }
    let done = scaffold(&layout, agents)?;
    let next = next_step(&layout, agents, &done);
    if json {
        super::json::print(&super::json::results::Initialized {
            version: super::json::VERSION,
            root: root.clone(),
            files: done,
            next,
        });
        return Ok(exit::APPROVED);
    }
    for item in &done {
        ui::line(&describe(&layout, item));
    }
    ui::line(&next);
    Ok(exit::APPROVED)
}

/// What to do after init, for the chosen agents and what init could do.
fn next_step(layout: &Layout, agents: InitAgents, done: &[Scaffolded]) -> String {
    let roles_proposed = done
        .iter()
        .any(|item| matches!(item, Scaffolded::Proposed { path, .. } if path == &layout.config()));
    match agents {
        InitAgents::Command if roles_proposed => format!(
            "next: add the [roles.*] sections above to {} (it configures roles of its own, so \
             init left it as it is), then run `autobuild task {EXAMPLE_TASK_ID}`",
            layout.display(&layout.config())
        ),
        InitAgents::ClaudeCode => format!(
            "next: edit {}, then run `autobuild task {EXAMPLE_TASK_ID} --dry-run`; the default \
             agents need Claude Code logged in (`claude`), or run `autobuild init --agents \
             command` for example scripts that need no LLM",
            layout.display(&example_task_path(layout))
        ),
        InitAgents::Command => format!(
            "next: run `autobuild task {EXAMPLE_TASK_ID}`: the example scripts in {} play the \
             player and the coach (no LLM) on this repository",
            layout.display(&layout.dir().join("agents"))
        ),
    }
}

/// Creates the missing scaffold files of `layout`, keeping existing ones.
pub fn scaffold(layout: &Layout, agents: InitAgents) -> Result<Vec<Scaffolded>, Error> {
    let files = ProjectFiles::read(layout.root());
    let detected = detect_test(&files);
    let config_note = Some(match detected {
        Some(d) => format!("checks.test = \"{}\": {}", d.cmd, d.reason),
        None => "no test command detected; set [checks.test] in it".to_string(),
    });
    let links = crate::project::worktree_files::suggest_links(layout.root());
    let config_note = match (config_note, links.is_empty()) {
        (Some(note), false) => Some(format!(
            "{note}; [worktree] link = {}: git ignores them, so a worktree would not have them",
            toml_list(&links)
        )),
        (note, _) => note,
    };
    let roles = (agents == InitAgents::Command).then_some(agents::ROLES);
    let mut done = vec![
        create_new(
            layout.config(),
            &config_template(detected, &links, roles),
            config_note,
        )?,
        create_new(example_task_path(layout), EXAMPLE_TASK, None)?,
    ];
    if agents == InitAgents::Command {
        for (name, text) in agents::SCRIPTS {
            done.push(create_new(layout.dir().join(name), text, None)?);
        }
        if let Some(Scaffolded::Kept { path }) = done.first() {
            let path = path.clone();
            if let Some(switched) = switch_to_command_agents(&path)? {
                done[0] = switched;
            }
        }
    }
    let gitignore = layout.gitignore();
    done.push(match layout.ensure_gitignore()? {
        GitignoreUpdate::Created => Scaffolded::Created {
            path: gitignore,
            note: None,
        },
        GitignoreUpdate::Appended(lines) => Scaffolded::Updated {
            path: gitignore,
            note: format!("added {}", lines.join(", ")),
        },
        GitignoreUpdate::Unchanged => Scaffolded::Kept { path: gitignore },
    });
    let root_ignore = layout.root().join(".gitignore");
    let text = fs::read_to_string(&root_ignore).unwrap_or_default();
    let missing = crate::project::ignores::missing_ignores(&files, &text);
    if !missing.is_empty() {
        done.push(Scaffolded::Proposed {
            path: root_ignore,
            lines: missing.iter().map(|line| line.to_string()).collect(),
        });
    }
    let ignored = crate::project::ignores::shared_but_ignored(layout);
    if !ignored.is_empty() {
        done.push(Scaffolded::Ignored { paths: ignored });
    }
    Ok(done)
}

/// `init --agents command` over a config that exists (an earlier `init`, say): a config that
/// names no player and no coach gets the example agents' roles appended, so the next suggested
/// command runs them; one that already configures a role is the user's choice and gets them
/// proposed instead. `None` when the config already uses the example agents.
fn switch_to_command_agents(path: &Path) -> Result<Option<Scaffolded>, Error> {
    let text = crate::user_file::read(path, path).map_err(|e| e.into_error("cannot read", path))?;
    let config = crate::project::Config::parse(path, &text).ok();
    let roles = config.as_ref().map(|c| &c.roles);
    if roles.is_some_and(|r| r.get("player").is_some_and(|p| p.get("command").is_some())) {
        return Ok(None);
    }
    let unset = roles.is_some_and(|r| !r.contains_key("player") && !r.contains_key("coach"));
    let separator = if text.is_empty() || text.ends_with("\n\n") {
        ""
    } else if text.ends_with('\n') {
        "\n"
    } else {
        "\n\n"
    };
    let appended = format!("{text}{separator}{}", agents::ROLES);
    if !unset || crate::project::Config::parse(path, &appended).is_err() {
        return Ok(Some(Scaffolded::Proposed {
            path: path.to_path_buf(),
            lines: vec![agents::ROLES.to_string()],
        }));
    }
    crate::atomic_file::write_atomic(path, appended.as_bytes())
        .map_err(|e| Error::io("cannot write", path, e))?;
    Ok(Some(Scaffolded::Updated {
        path: path.to_path_buf(),
        note: "added [roles.player] and [roles.coach] for the example agents".to_string(),
    }))
}

fn example_task_path(layout: &Layout) -> PathBuf {
    layout.tasks().join(format!("{EXAMPLE_TASK_ID}.md"))
}

fn describe(layout: &Layout, item: &Scaffolded) -> String {
    match item {
        Scaffolded::Created { path, note: None } => format!("created {}", layout.display(path)),
        Scaffolded::Created {
            path,
            note: Some(note),
        } => format!("created {} ({note})", layout.display(path)),
        Scaffolded::Kept { path } => format!("kept {} (exists)", layout.display(path)),
        Scaffolded::Updated { path, note } => {
            format!("updated {} ({note})", layout.display(path))
        }
        Scaffolded::Proposed { path, lines } if path == &layout.config() => format!(
            "suggest: add to {} to use the example agents:\n{}",
            layout.display(path),
            lines.join("\n")
        ),
        Scaffolded::Ignored { paths } => format!(
            "warning: {}",
            crate::project::ignores::ignored_warning(paths)
        ),
        Scaffolded::Proposed { path, lines } => format!(
            "suggest: add {} to {} (caches and build output the project's tools write, which \
             a reviewer running the tests leaves behind); not changed",
            lines.join(" "),
            layout.display(path)
        ),
    }
}

/// Writes `content` to `path` unless something already exists there.
fn create_new(path: PathBuf, content: &str, note: Option<String>) -> Result<Scaffolded, Error> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("cannot create directory", dir, e))?;
    }
    let mut file = match OpenOptions::new().write(true).create_new(true).open(&path) {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(Scaffolded::Kept { path }),
        Err(e) => return Err(Error::io("cannot create", path, e)),
    };
    file.write_all(content.as_bytes())
        .map_err(|e| Error::io("cannot write", &path, e))?;
    Ok(Scaffolded::Created { path, note })
}

/// The commented `config.toml`, with `[checks.test]` filled in when a test command was detected
/// and `[worktree] link` when git-ignored environment directories (`links`) were found, and the
/// `roles` sections when given.
pub fn config_template(
    detected: Option<Detection>,
    links: &[String],
    roles: Option<&str>,
) -> String {
    let timeout = humantime::format_duration(DEFAULT_CHECK_TIMEOUT);
    let checks = match detected {
        Some(Detection { cmd, reason }) => format!(
            "# The runner runs every check in the task's worktree after each player turn.\n\
             # Detected ({reason}); change it if your project tests differently.\n\
             [checks.test]\n\
             cmd = \"{cmd}\"\n\
             timeout = \"{timeout}\"\n"
        ),
        None => format!(
            "# The runner runs every check in the task's worktree after each player turn.\n\
             # No test command was detected; declare one so the runner can verify the work:\n\
             # [checks.test]\n\
             # cmd = \"make test\"\n\
             # timeout = \"{timeout}\"\n"
        ),
    };
    let worktree = if links.is_empty() {
        WORKTREE_EXAMPLE.to_string()
    } else {
        format!(
            "[worktree]\n\
             # Found in this checkout and ignored by git, so a task's worktree would lack them.\n\
             link = {}    # symlinks to the main checkout's copies; never committed\n\
             # copy = []                      # copied instead (the task may change them)\n\
             # setup = \"uv sync\"              # run once in a new worktree, with [env]\n",
            toml_list(links)
        )
    };
    let coverage = coverage_template(detected.and_then(|d| coverage_proposal(d.cmd)));
    let roles = roles.map(|r| format!("{r}\n")).unwrap_or_default();
    format!("{CONFIG_HEAD}\n{worktree}\n{checks}\n{coverage}\n{roles}{CONFIG_TAIL}")
}

/// A coverage command for a detected test command: (the tool it needs, the command, the
/// report it writes).
pub fn coverage_proposal(test_cmd: &str) -> Option<(&'static str, &'static str, &'static str)> {
    Some(match test_cmd {
        "cargo test" => (
            "cargo-llvm-cov (`cargo install cargo-llvm-cov`)",
            "cargo llvm-cov --lcov --output-path lcov.info",
            "lcov.info",
        ),
        "python -m pytest -q" => (
            "pytest-cov (`pip install pytest-cov`)",
            "python -m pytest -q --cov --cov-report=xml:coverage.xml",
            "coverage.xml",
        ),
        "npm test" | "pnpm test" | "yarn test" => (
            "c8 (`npm install --save-dev c8`; nyc works alike with --reporter=lcov)",
            match test_cmd {
                "pnpm test" => "npx c8 --reporter=lcov --report-dir=coverage pnpm test",
                "yarn test" => "npx c8 --reporter=lcov --report-dir=coverage yarn test",
                _ => "npx c8 --reporter=lcov --report-dir=coverage npm test",
            },
            "coverage/lcov.info",
        ),
        "go test ./..." => (
            "gocover-cobertura, which turns `go test -cover`'s profile into Cobertura XML",
            "go test -coverprofile=coverage.out ./... && go run github.com/boumenot/gocover-cobertura@latest < coverage.out > coverage.xml",
            "coverage.xml",
        ),
        _ => return None,
    })
}

/// The `[coverage]` section, always commented out: the coverage tool is usually a separate
/// install, and a profile minimum the command cannot measure would block every run.
fn coverage_template(proposal: Option<(&str, &str, &str)>) -> String {
    let head =
        "# Line coverage as a gate requirement: the runner runs this command like a check and \
                reads its\n# report (Cobertura XML or LCOV); a profile's `coverage` (below) is the \
                minimum percentage.\n";
    let body = match proposal {
        Some((tool, cmd, report)) => format!(
            "# For this project, with {tool}:\n\
             # [coverage]\n\
             # cmd = \"{cmd}\"\n\
             # report = \"{report}\"\n"
        ),
        None => "# [coverage]\n\
                 # cmd = \"pytest --cov --cov-report=xml:coverage.xml\"\n\
                 # report = \"coverage.xml\"\n"
            .to_string(),
    };
    format!("{head}{body}")
}

fn toml_list(items: &[String]) -> String {
    let quoted: Vec<String> = items.iter().map(|i| format!("\"{i}\"")).collect();
    format!("[{}]", quoted.join(", "))
}

const WORKTREE_EXAMPLE: &str = r#"[worktree]
# What a task's worktree needs that git does not check out (a git-ignored .venv, node_modules):
# link = [".venv"]                 # symlinks to the main checkout's copies; never committed
# copy = []                        # copied when the worktree is created
# setup = "uv sync"                # run once in a new worktree, with [env]; log in the run dir
"#;

const CONFIG_HEAD: &str = r#"# autobuild project config. Commit it: it holds project facts shared by every run.
# Everything is optional; unknown keys are errors.

[project]
# base_branch = "main"            # default: the branch checked out when a run starts
# merge_strategy = "squash"       # squash | merge | ff

[env]
# Given to the agents AND to the runner's checks, so both work in the same environment.
# vars = { DATABASE_URL = "sqlite:///tmp/dev.db" }
# path_prepend = [".venv/bin"]    # relative to the task's worktree
# setup = "source .venv/bin/activate"   # shell prelude before every check and agent bash command
"#;

const CONFIG_TAIL: &str = r#"# More checks; a profile requires them as "checks.<name>".
# [checks.lint]
# cmd = "make lint"

# Overrides on top of the workflow's roles.
# [roles.coach]
# model = "opus"

# Overrides on top of the built-in quality-gate profiles (selected by a task's task_type).
# [profiles.feature]
# require = ["checks.test", "criteria", "coach"]
# coverage = 80                   # minimum line coverage in percent; needs [coverage] above

# OS confinement of the agents and checks (Linux: bubblewrap or Landlock; docs/sandbox.md): they
# may write only the worktree, its git files, the run's scratch/, a private /tmp and these paths.
# [sandbox]
# mode = "auto"                   # auto: on where a backend works, else a warning | on | off
# network = "ip"                  # ip: no Unix sockets (docker.sock, ssh-agent) | host | none
# writable = ["~/.cache"]         # e.g. build caches: ~/.cargo/registry, ~/.npm
"#;

/// A valid task showing both kinds of criteria.
pub const EXAMPLE_TASK: &str = r#"---
id: TASK-EXAMPLE
title: Add a contributor greeting
task_type: feature
complexity: 1
---
# Add a contributor greeting

An example task written by `autobuild init`; edit it or replace it with a real one.

Create `GREETING.md` at the repository root with a short welcome for new contributors
that says where to start reading the code.

## Acceptance Criteria
- [ ] AC-001: `GREETING.md` exists and contains the word "Welcome" `verify: grep -q Welcome GREETING.md`
- [ ] AC-002: The greeting names the directory a newcomer should read first
"#;

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::project::detect::combine_checks;
    use crate::project::{CheckOrigin, Config};
    use crate::task::Task;

    fn scaffold_at(root: &Path) -> Vec<Scaffolded> {
        scaffold(&Layout::new(root), InitAgents::ClaudeCode).unwrap()
    }

    #[test]
    fn config_templates_parse_and_keep_the_detected_command() {
        let detected = Detection {
            cmd: "cargo test",
            reason: "Cargo.toml found",
        };
        let text = config_template(Some(detected), &[], None);
        let config = Config::parse(Path::new("config.toml"), &text).unwrap();
        assert_eq!(config.checks["test"].cmd, "cargo test");
        assert_eq!(config.checks["test"].timeout, Some(DEFAULT_CHECK_TIMEOUT));
        let checks = combine_checks(&config, None);
        assert_eq!(checks[0].origin, CheckOrigin::Configured);

        let text = config_template(None, &[], None);
        let config = Config::parse(Path::new("config.toml"), &text).unwrap();
        assert!(config.checks.is_empty());
        assert!(text.contains("# [checks.test]"));
        assert!(text.contains("# link = [\".venv\"]"));

        let links = [".venv".to_string(), "node_modules".to_string()];
        let text = config_template(None, &links, None);
        let config = Config::parse(Path::new("config.toml"), &text).unwrap();
        assert_eq!(config.worktree.link, links);
    }

    #[test]
    fn every_detected_ecosystem_gets_a_commented_coverage_proposal_that_parses_uncommented() {
        for cmd in [
            "cargo test",
            "python -m pytest -q",
            "npm test",
            "pnpm test",
            "yarn test",
            "go test ./...",
        ] {
            let (_, coverage, report) = coverage_proposal(cmd).unwrap();
            let detected = Detection { cmd, reason: "r" };
            let text = config_template(Some(detected), &[], None);
            assert!(
                Config::parse(Path::new("config.toml"), &text)
                    .unwrap()
                    .coverage
                    .is_none(),
                "proposed, not enabled"
            );
            let enabled = text
                .replace("# [coverage]", "[coverage]")
                .replace(
                    &format!("# cmd = \"{coverage}\""),
                    &format!("cmd = \"{coverage}\""),
                )
                .replace("# report = ", "report = ")
                .replace("# [profiles.feature]", "[profiles.feature]")
                .replace("# coverage = 80", "coverage = 80");
            let config = Config::parse(Path::new("config.toml"), &enabled).unwrap();
            let found = config.coverage.unwrap();
            assert_eq!(
                (found.cmd.as_str(), found.report.as_str()),
                (coverage, report)
            );
        }
        assert_eq!(coverage_proposal("make test"), None);
        assert!(config_template(None, &[], None).contains("# [coverage]"));
    }

    #[test]
    fn example_task_is_valid_with_both_kinds_of_criteria() {
        let task = Task::parse(Path::new("TASK-EXAMPLE.md"), EXAMPLE_TASK).unwrap();
        assert_eq!(task.id, EXAMPLE_TASK_ID);
        assert_eq!(task.criteria.len(), 2);
        assert_eq!(
            task.criteria[0].verify.as_deref(),
            Some("grep -q Welcome GREETING.md")
        );
        assert_eq!(task.criteria[1].verify, None);
    }

    #[test]
    fn command_agents_are_configured_and_written() {
        let text = config_template(None, &[], Some(agents::ROLES));
        let config = Config::parse(Path::new("config.toml"), &text).unwrap();
        for role in ["player", "coach"] {
            let argv = config.roles[role]["command"].as_array().unwrap();
            assert_eq!(argv[0].as_str(), Some("sh"));
            let script = format!("$AUTOBUILD_PROJECT/.autobuild/agents/{role}.sh");
            assert!(argv[2].as_str().unwrap().contains(&script));
        }

        let dir = tempfile::tempdir().unwrap();
        let done = scaffold(&Layout::new(dir.path()), InitAgents::Command).unwrap();
        for script in ["player.sh", "coach.sh"] {
            let path = dir.path().join(".autobuild/agents").join(script);
            assert!(done.contains(&Scaffolded::Created {
                path: path.clone(),
                note: None
            }));
            assert!(fs::read_to_string(path).unwrap().starts_with("#!/bin/sh"));
        }

        // A kept config that configures no player and no coach gets the roles appended, its
        // own text kept; run again, nothing changes.
        let other = tempfile::tempdir().unwrap();
        let config = other.path().join(".autobuild/config.toml");
        fs::create_dir_all(other.path().join(".autobuild")).unwrap();
        fs::write(&config, "# mine\n[roles.reviewer]\nmodel = \"opus\"\n").unwrap();
        let done = scaffold(&Layout::new(other.path()), InitAgents::Command).unwrap();
        assert!(matches!(&done[0], Scaffolded::Updated { path, .. } if path == &config));
        let text = fs::read_to_string(&config).unwrap();
        assert!(text.starts_with("# mine\n[roles.reviewer]\nmodel = \"opus\"\n\n# The agents"));
        let parsed = Config::parse(&config, &text).unwrap();
        assert_eq!(parsed.roles["player"]["agent"].as_str(), Some("command"));
        let again = scaffold(&Layout::new(other.path()), InitAgents::Command).unwrap();
        assert!(matches!(&again[0], Scaffolded::Kept { .. }));
        assert_eq!(fs::read_to_string(&config).unwrap(), text);

        // One that configures a role of its own gets them proposed, not written.
        for mine in ["[roles.coach]\nmodel = \"opus\"\n", "not = [valid toml\n"] {
            fs::write(&config, mine).unwrap();
            let done = scaffold(&Layout::new(other.path()), InitAgents::Command).unwrap();
            assert!(done.iter().any(|s| matches!(s,
                Scaffolded::Proposed { lines, .. } if lines[0].contains("[roles.coach]"))));
            assert_eq!(fs::read_to_string(&config).unwrap(), mine);
        }
    }

    #[test]
    fn scaffold_creates_then_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let first = scaffold_at(dir.path());
        assert!(first
            .iter()
            .all(|s| matches!(s, Scaffolded::Created { .. })));
        fs::write(dir.path().join(".autobuild/config.toml"), "# mine\n").unwrap();
        let second = scaffold_at(dir.path());
        assert!(second.iter().all(|s| matches!(s, Scaffolded::Kept { .. })));
        assert_eq!(
            fs::read_to_string(dir.path().join(".autobuild/config.toml")).unwrap(),
            "# mine\n"
        );
    }
}
