//! `autobuild doctor`: can a workflow run here? One line per check (`ok`, `warn`, `missing`),
//! then what the selected workflow (`--workflow`, default `player-coach`) and the repository's
//! own workflows still need, role by
//! role, with the fix.
//!
//! Only what the selected workflow's roles need decides the exit code (0 ready, 1 not): an
//! agent CLI no role uses is reported as `warn`, never `missing`. Whether an installed agent
//! CLI is logged in is asked of the CLI itself (`claude auth status`, `codex login status`;
//! module [`crate::agents::login`]), the same check preflight makes; when it cannot be asked,
//! credentials are reported by the name of the variable or file that provides them — values
//! are never read or printed.
//! A native HTTP adapter's role is reported by whether its endpoint answers `GET /models` and
//! lists the role's model.
//! Whether agents and checks can be confined (`[sandbox]`) is asked of bwrap by running it
//! (module [`crate::sandbox::probe`]); the line names the reason and the fix when it cannot.
//! The doctor changes nothing: version probes run in a temporary directory, and writability
//! is tested with a temporary file only inside an existing `.autobuild/` (elsewhere with
//! access(2), which creates nothing).

pub mod check;
mod probe;
mod sandbox;

use std::path::{Path, PathBuf};

use base::Keyword;
use clap::Args;

use crate::agents::credentials::{Credentials, Detect};
use crate::agents::login::{self, Login};
use crate::agents::{adapter_for, descriptions};
use crate::engine::plan::DEFAULT_WORKFLOW;
use crate::error::Error;
use crate::process;
use crate::project::{find_repo_root, Config, Layout, ProjectEnv};
use crate::ui;
use crate::user_file::source::Layer;
use crate::workflow::catalog::Catalog;

use crate::workflow::model::{AgentKind, Role};
use crate::workflow::resolve::is_path;
use crate::workflow::{Overrides, ResolvedWorkflow};
pub use check::{Check, Level};
use probe::{version_check, writable};

#[derive(Debug, Clone, Args)]
pub struct DoctorArgs {
    /// Check what this workflow needs (default: player-coach).
    #[arg(long, value_name = "NAME|PATH")]
    pub workflow: Option<String>,
    /// The report as one JSON document on stdout (shape in README.md).
    #[arg(long)]
    pub json: bool,
}

/// The report: every check line, then the verdict for `workflow` and the repository's own
/// workflows whose roles were checked too (`also`).
pub fn render(checks: &[Check], workflow: &str, also: &[String]) -> Vec<String> {
    let mut lines: Vec<String> = checks
        .iter()
        .map(|check| {
            let level = check.level.as_str();
            format!(
                "{} {}: {}",
                crate::ui::colour::status_padded(level, 8),
                check.subject,
                check.detail
            )
        })
        .collect();
    let needs: Vec<&str> = checks.iter().filter_map(|c| c.need.as_deref()).collect();
    lines.push(String::new());
    let others = if also.is_empty() {
        String::new()
    } else {
        let quoted: Vec<String> = also.iter().map(|w| format!("`{w}`")).collect();
        format!(" and the repository's workflows ({})", quoted.join(", "))
    };
    if needs.is_empty() {
        let verb = if also.is_empty() { "needs" } else { "need" };
        lines.push(format!(
            "Everything the `{workflow}` workflow{others} {verb} is here."
        ));
    } else {
        lines.push(if also.is_empty() {
            format!("The `{workflow}` workflow cannot run here yet:")
        } else {
            format!("The `{workflow}` workflow{others} cannot all run here yet:")
        });
        lines.extend(needs.iter().map(|need| format!("  - {need}")));
    }
    lines
}

pub fn run(args: DoctorArgs) -> Result<u8, Error> {
    let cwd = std::env::current_dir().map_err(|e| Error::io("cannot read", ".", e))?;
    let workflow = args
        .workflow
        .unwrap_or_else(|| DEFAULT_WORKFLOW.to_string());
    let (checks, also) = diagnose(&cwd, &workflow);
    let needs: Vec<String> = checks.iter().filter_map(|c| c.need.clone()).collect();
    let group = (!args.json).then_some("autobuild doctor");
    ui::result(group, &[], &needs, || {
        if args.json {
            super::json::print(&super::json::doctor::Report::new(&checks, &workflow, &also));
        } else {
            for line in render(&checks, &workflow, &also) {
                ui::line(&line);
            }
        }
    });
    Ok(if checks.iter().any(|c| c.need.is_some()) {
        1
    } else {
        0
    })
}

/// Every check, in report order, and the repository's workflows whose roles were checked
/// besides `workflow`'s.
pub fn diagnose(cwd: &Path, workflow: &str) -> (Vec<Check>, Vec<String>) {
    let mut also = Vec::new();
    let mut checks = vec![git_library(), git_executable()];
    let root = find_repo_root(cwd);
    let config = match &root {
        Some(root) => {
            checks.push(Check::new(
                Level::Ok,
                "repository",
                root.display().to_string(),
            ));
            let (check, config) = config_check(root);
            checks.push(check);
            let ignored = crate::project::ignores::shared_but_ignored(&Layout::new(root));
            if !ignored.is_empty() {
                let warning = crate::project::ignores::ignored_warning(&ignored);
                checks.push(Check::new(Level::Warn, "shared files", warning));
            }
            config
        }
        None => {
            checks.push(
                Check::new(
                    Level::Missing,
                    "repository",
                    format!("{} is not inside a git repository", cwd.display()),
                )
                .needed("a git repository: run autobuild inside one (`git init`), or pass -C DIR"),
            );
            Some(Config::default())
        }
    };
    let base = root.clone().unwrap_or_else(|| cwd.to_path_buf());
    let settings = config
        .as_ref()
        .map(|config| config.sandbox.clone())
        .unwrap_or_default();
    match config {
        Some(config) => {
            let (workflow_checks, roles, others) = workflow_checks(root.as_deref(), workflow);
            also = others;
            checks.extend(workflow_checks);
            let env = ProjectEnv::new(&config.env, &base).vars();
            checks.extend(agent_checks(&roles, &base, &env));
        }
        None => {
            checks.push(Check::new(
                Level::Warn,
                "workflows",
                "not checked, because config.toml is invalid",
            ));
            checks.extend(agent_checks(&[], &base, &[]));
        }
    }
    checks.push(sandbox::sandbox_check(&settings));
    if let Some(root) = &root {
        checks.push(writable(root));
    }
    (checks, also)
}

fn git_library() -> Check {
    let (major, minor, rev) = git2::Version::get().libgit2_version();
    Check::new(Level::Ok, "git", format!("libgit2 {major}.{minor}.{rev}"))
}

fn git_executable() -> Check {
    match which::which("git") {
        Ok(path) => Check::new(Level::Ok, "git executable", path.display().to_string()),
        Err(_) => Check::new(
            Level::Warn,
            "git executable",
            "not found on PATH (autobuild itself uses libgit2; you need git to inspect its branches)",
        ),
    }
}

fn config_check(root: &Path) -> (Check, Option<Config>) {
    let layout = Layout::new(root);
    let path = layout.config();
    let shown = path
        .strip_prefix(root)
        .unwrap_or(&path)
        .display()
        .to_string();
    match Config::load(&layout) {
        Ok(config) if path.is_file() => (Check::new(Level::Ok, "config", shown), Some(config)),
        Ok(config) => (
            Check::new(Level::Ok, "config", format!("{shown} absent (defaults)")),
            Some(config),
        ),
        Err(error) => (
            Check::new(Level::Missing, "config", problem(&shown, &error))
                .needed(format!("a valid {shown}: fix the problems shown above")),
            None,
        ),
    }
}

/// What is wrong with `what`: an invalid file's problems indented under its line, or the
/// error and its help.
fn problem(what: &str, error: &Error) -> String {
    match error {
        Error::Invalid(_) => {
            let text = error.to_string();
            let indented: Vec<String> = text.lines().map(|line| format!("    {line}")).collect();
            format!("{what} is invalid:\n{}", indented.join("\n"))
        }
        other => match other.help() {
            Some(help) => format!("{other} ({help})"),
            None => other.to_string(),
        },
    }
}

/// Every visible workflow's validity, the roles the selected one and the repository's own
/// workflows run, and the names of those workflows.
fn workflow_checks(
    root: Option<&Path>,
    selected: &str,
) -> (Vec<Check>, Vec<(String, Role)>, Vec<String>) {
    let catalog = match Catalog::discover(root) {
        Ok(catalog) => catalog,
        Err(error) => {
            let check = Check::new(Level::Missing, "workflows", problem("discovery", &error))
                .needed("readable workflow files: fix the problem shown above");
            return (vec![check], Vec::new(), Vec::new());
        }
    };
    let selected_index = if is_path(selected) {
        None
    } else {
        catalog.find(selected, None)
    };
    let must_be_valid =
        format!("the `{selected}` workflow must be valid: fix the problems shown above");
    let mut checks = Vec::new();
    for (index, document) in catalog.documents.iter().enumerate() {
        let subject = format!("workflow {}", document.name);
        let label = document.source.label();
        checks.push(match catalog.resolve_index(index, &Overrides::default()) {
            Ok(_) => Check::new(Level::Ok, subject, label),
            Err(error) if selected_index == Some(index) => {
                Check::new(Level::Missing, subject, problem(&label, &error))
                    .needed(must_be_valid.clone())
            }
            Err(error) => Check::new(Level::Warn, subject, problem(&label, &error)),
        });
    }
    match catalog.resolve(selected, &Overrides::default()) {
        Ok(resolved) => {
            let mut roles: Vec<(String, Role)> = Vec::new();
            let mut others: Vec<String> = Vec::new();
            add_roles(&mut roles, &resolved, None);
            // The repository's own workflows are what its tasks run: their roles are checked
            // too (a role the selected workflow also has, defined alike, once).
            for (index, document) in catalog.documents.iter().enumerate() {
                let own = matches!(document.source.layer, Layer::Repo | Layer::User);
                if !own || document.name == resolved.workflow.name {
                    continue;
                }
                if let Ok(other) = catalog.resolve_index(index, &Overrides::default()) {
                    add_roles(&mut roles, &other, Some(&document.name));
                    if !others.contains(&document.name) {
                        others.push(document.name.clone());
                    }
                }
            }
            (checks, roles, others)
        }
        Err(_) if selected_index.is_some() => (checks, Vec::new(), Vec::new()),
        Err(error) => {
            checks.push(
                Check::new(
                    Level::Missing,
                    format!("workflow {selected}"),
                    problem(selected, &error),
                )
                .needed(must_be_valid),
            );
            (checks, Vec::new(), Vec::new())
        }
    }
}

/// The roles `resolved` runs, each once: a role of another workflow (`of`) that is defined
/// differently from one already listed is named `workflow/role`.
fn add_roles(roles: &mut Vec<(String, Role)>, resolved: &ResolvedWorkflow, of: Option<&str>) {
    for (role, definition) in resolved.workflow.agent_roles() {
        if roles.iter().any(|(_, r)| r == definition) {
            continue;
        }
        let name = match of {
            Some(workflow) if roles.iter().any(|(n, _)| n == role) => format!("{workflow}/{role}"),
            _ => role.clone(),
        };
        if !roles.iter().any(|(n, _)| *n == name) {
            roles.push((name, definition.clone()));
        }
    }
}

/// An agent CLI autobuild can drive, and how to tell whether it can authenticate: every
/// adapter whose description names a program and a credentials fallback.
struct AgentCli {
    kind: AgentKind,
    program: &'static str,
    install: &'static str,
    credentials: Detect,
}

fn agent_clis() -> impl Iterator<Item = AgentCli> {
    descriptions().filter_map(|d| {
        Some(AgentCli {
            kind: d.kind,
            program: d.program?,
            install: d.install_hint,
            credentials: d.credentials?,
        })
    })
}

/// Binary, version and credentials of each agent CLI, the programs of `command` roles, and
/// what each role's adapter checks itself (a native adapter's endpoint and model).
fn agent_checks(roles: &[(String, Role)], base: &Path, env: &[(String, String)]) -> Vec<Check> {
    let lookup = |name: &str| process::child_var(env, name);
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut checks = Vec::new();
    for cli in agent_clis() {
        let users: Vec<&str> = roles
            .iter()
            .filter(|(_, role)| role.agent == cli.kind)
            .map(|(name, _)| name.as_str())
            .collect();
        let absent = if users.is_empty() {
            Level::Warn
        } else {
            Level::Missing
        };
        let who = format!(
            "{} ({}) {}",
            role_list(&users),
            cli.kind,
            if users.len() == 1 { "needs" } else { "need" }
        );
        let subject = cli.kind.to_string();
        let located = process::locate(cli.program, base, env);
        checks.push(match &located {
            Ok(path) => version_check(&subject, path, env),
            Err(_) => Check::new(
                absent,
                subject,
                format!("`{}` not found on PATH", cli.program),
            )
            .needed(format!("{who} `{}`: {}", cli.program, cli.install)),
        });
        let by_name = || (cli.credentials)(&lookup, home.as_deref());
        let found = match located.ok().and_then(|p| login::check(cli.kind, &p, env)) {
            Some(Login::Yes(how)) => Credentials::Present(how),
            Some(Login::No { detail, fix }) => Credentials::Refused { detail, fix },
            Some(Login::Unknown(why)) => match by_name() {
                Credentials::Present(what) => {
                    Credentials::Present(format!("{what} (the CLI could not tell: {why})"))
                }
                other => other,
            },
            None => by_name(),
        };
        let level = match found {
            Credentials::Present(_) => Level::Ok,
            Credentials::Refused { .. } | Credentials::Absent(_) => absent,
        };
        let (detail, fix) = found.describe();
        checks.push(
            Check::new(level, format!("{} credentials", cli.kind), detail)
                .needed(format!("{who} credentials: {fix}")),
        );
    }
    for (name, role) in roles.iter().filter(|(_, r)| r.agent == AgentKind::Command) {
        let program = role
            .command
            .as_ref()
            .and_then(|argv| argv.first())
            .cloned()
            .unwrap_or_default();
        let subject = format!("role {name} (command)");
        checks.push(match process::locate(&program, base, env) {
            Ok(path) => Check::new(
                Level::Ok,
                subject,
                format!("`{program}` is {}", path.display()),
            ),
            Err(error) => Check::new(Level::Missing, subject, error.to_string()).needed(format!(
                "role `{name}` needs `{program}`: fix `command` of [roles.{name}] or install it"
            )),
        });
    }
    for (name, role) in roles {
        let findings = adapter_for(role.agent)
            .map(|adapter| adapter.diagnose(name, role, env))
            .unwrap_or_default();
        for finding in findings {
            let level = if finding.ok {
                Level::Ok
            } else {
                Level::Missing
            };
            checks.push(
                Check::new(level, finding.subject, finding.detail).needed(format!(
                    "role `{name}` ({}) needs its endpoint and model: {}",
                    role.agent, finding.fix
                )),
            );
        }
    }
    checks
}

/// `role `a`` / `roles `a` and `b``, or a note that no role of the workflow uses it.
fn role_list(roles: &[&str]) -> String {
    match roles {
        [] => "no role of this workflow; other workflows".to_string(),
        [one] => format!("role `{one}`"),
        many => {
            let quoted: Vec<String> = many.iter().map(|r| format!("`{r}`")).collect();
            format!("roles {}", quoted.join(" and "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_lists_what_the_workflow_still_needs() {
        let checks = vec![
            Check::new(Level::Ok, "git", "libgit2 1.9.0"),
            Check::new(Level::Warn, "codex", "`codex` not found on PATH").needed("ignored"),
            Check::new(Level::Missing, "claude-code", "`claude` not found on PATH")
                .needed("role `player` (claude-code) need `claude`: install it"),
        ];
        assert_eq!(
            render(&checks, "player-coach", &[]),
            [
                "ok       git: libgit2 1.9.0",
                "warn     codex: `codex` not found on PATH",
                "missing  claude-code: `claude` not found on PATH",
                "",
                "The `player-coach` workflow cannot run here yet:",
                "  - role `player` (claude-code) need `claude`: install it",
            ]
        );
        let fine = render(&checks[..1], "solo", &[]);
        assert_eq!(
            fine.last().unwrap(),
            "Everything the `solo` workflow needs is here."
        );
        let also = render(&checks, "player-coach", &["secure".to_string()]);
        assert_eq!(
            also[4],
            "The `player-coach` workflow and the repository's workflows (`secure`) cannot all \
             run here yet:"
        );
    }

    #[test]
    fn roles_are_listed_in_words() {
        assert_eq!(role_list(&["player"]), "role `player`");
        assert_eq!(
            role_list(&["coach", "player"]),
            "roles `coach` and `player`"
        );
    }
}
