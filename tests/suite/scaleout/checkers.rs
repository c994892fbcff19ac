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

#[test]
#[ignore = "needs actionlint, zizmor and check-jsonschema: run scripts/ci-engines.sh"]
fn the_github_workflow_has_no_findings() {
    // The plain feature, and one whose task job provides the sandbox (hidden paths).
    for project in [project(), hidden_project()] {
        let file = project.temp().join("autobuild-feat-s.yml");
        emit(&project, "github-actions", &file);
        check("AUTOBUILD_ACTIONLINT", "actionlint", &[], &file);
        check("AUTOBUILD_ZIZMOR", "zizmor", &["--offline"], &file);
        check(
            "AUTOBUILD_CHECK_JSONSCHEMA",
            "check-jsonschema",
            &["--builtin-schema", "vendor.github-workflows"],
            &file,
        );
    }
}
