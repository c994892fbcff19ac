//! The emitted workflows through the real checkers, offline: actionlint and zizmor (zero
//! findings) and check-jsonschema with the builtin GitHub workflow schema. Needs the tools:
//! run scripts/ci-engines.sh.

use std::process::Command;

use super::engine::{self, emit, hidden_project, project, run_logged};

fn check(variable: &str, name: &str, args: &[&str], file: &std::path::Path) {
    let mut command = Command::new(engine::tool(variable, name));
    command.args(args).arg(file);
    let (ok, output) = run_logged(command);
    assert!(ok, "{name} found problems in {}:\n{output}", file.display());
}

/// The feature of [`project`] whose roles are real agent CLIs (claude-code, codex): their
/// install and their API keys are what the checkers look at.
fn real_agents_project() -> super::feature_fixture::Project {
    let project = project();
    let config = project.root.join(".autobuild/config.toml");
    let text = std::fs::read_to_string(&config).unwrap();
    let text = text.replacen(
        "[roles.player]\nagent = \"command\"",
        "[roles.player]\nagent = \"claude-code\"",
        1,
    );
    let text = text.replacen(
        "[roles.coach]\nagent = \"command\"",
        "[roles.coach]\nagent = \"codex\"",
        1,
    );
    assert!(
        text.contains("claude-code") && text.contains("codex"),
        "{text}"
    );
    std::fs::write(&config, text).unwrap();
    super::feature_fixture::git(&project.root, &["commit", "-qam", "real agents"]);
    project
}

#[test]
#[ignore = "needs actionlint, zizmor and check-jsonschema: run scripts/ci-engines.sh"]
fn the_github_workflow_has_no_findings() {
    let shellcheck = std::env::var("AUTOBUILD_SHELLCHECK")
        .map(|path| format!("-shellcheck={path}"))
        .unwrap_or_default();
    // The plain feature, one whose task job provides the sandbox (hidden paths), and one with
    // real agent CLIs (their install from lockfiles, their keys behind an environment).
    for project in [project(), hidden_project(), real_agents_project()] {
        let file = project.temp().join("autobuild-feat-s.yml");
        emit(&project, "github-actions", &file);
        check(
            "AUTOBUILD_ACTIONLINT",
            "actionlint",
            &[shellcheck.as_str()]
                .into_iter()
                .filter(|a| !a.is_empty())
                .collect::<Vec<_>>(),
            &file,
        );
        check("AUTOBUILD_ZIZMOR", "zizmor", &["--offline"], &file);
        check(
            "AUTOBUILD_ZIZMOR",
            "zizmor",
            &["--offline", "--persona", "auditor"],
            &file,
        );
        check(
            "AUTOBUILD_CHECK_JSONSCHEMA",
            "check-jsonschema",
            &["--builtin-schema", "vendor.github-workflows"],
            &file,
        );
    }
}
