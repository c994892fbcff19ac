//! The integration checks in words: the section of the feature's `report.md`, what its
//! `report.html` shows, the line of `autobuild status`, and what to do after a failure. All
//! from the typed records in `feature.json`.

use std::fmt::Write as _;

use super::{first_error, IntegrationRecord};
use crate::feature::state::FeatureState;
use crate::report::feature::IntegrationView;
use base::Keyword;
use git::short_id as short;

pub fn views(state: &FeatureState) -> Vec<IntegrationView> {
    state
        .integration
        .iter()
        .map(|record| IntegrationView {
            wave: record.wave,
            commit: short(&record.commit).to_string(),
            passed: record.passed(),
            tasks: record.tasks.clone(),
            checks: record
                .checks
                .iter()
                .map(|c| format!("{}: {}", c.name, c.status.as_str()))
                .collect(),
            first_error: record
                .failing()
                .first()
                .and_then(|c| first_error(&c.summary))
                .map(str::to_string),
            repair: record
                .repair
                .as_ref()
                .map(|r| format!("{} ({})", r.task, r.status)),
        })
        .collect()
}

/// The `## Integration checks` section of `report.md` (nothing when none ran).
pub fn render_markdown(out: &mut String, state: &FeatureState) {
    if state.integration.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Integration checks\n");
    let _ = writeln!(
        out,
        "After each wave the checks ran on the tip of `{}` with every task on it.\n",
        state.branch
    );
    for record in &state.integration {
        let _ = writeln!(out, "- {}", line(record));
        for check in record.failing() {
            let _ = writeln!(
                out,
                "  - `{}` {} (log `{}`):\n\n    ```text\n{}\n    ```",
                check.name,
                check.status.as_str(),
                check.log.display(),
                indent(check.summary.trim_end(), "    ")
            );
        }
        if let Some(repair) = &record.repair {
            let _ = writeln!(
                out,
                "  - integration task {} ({}){}: [report](../{}/report.md)",
                repair.task,
                repair.status,
                repair
                    .message
                    .as_ref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default(),
                repair.task
            );
        }
    }
}

/// One line per record: "wave 2 (A, B) at abc1234567: failed — test failed".
pub fn line(record: &IntegrationRecord) -> String {
    let result = if record.passed() {
        let names: Vec<&str> = record.checks.iter().map(|c| c.name.as_str()).collect();
        format!("passed ({})", names.join(", "))
    } else {
        let names: Vec<String> = record
            .failing()
            .iter()
            .map(|c| format!("{} {}", c.name, c.status.as_str()))
            .collect();
        format!("failed: {}", names.join(", "))
    };
    format!(
        "wave {} ({}) at {}: {result}",
        record.wave,
        record.tasks.join(", "),
        short(&record.commit)
    )
}

/// The next steps after a failed integration check.
pub fn next_steps(state: &FeatureState) -> Vec<String> {
    let id = &state.feature_id;
    let Some(failed) = state.integration_failure() else {
        return Vec::new();
    };
    let mut steps: Vec<String> = failed
        .failing()
        .iter()
        .map(|c| format!("read the log of `{}`: `{}`", c.name, c.log.display()))
        .collect();
    steps.push(format!(
        "let the player repair it: set `[feature] integration = \"integrate\"` in .autobuild/config.toml, then `autobuild feature {id} --resume` (the tip is checked again first)"
    ));
    steps.push(format!(
        "or change the tasks {} so they agree, then `autobuild feature {id} --fresh`",
        failed.tasks.join(", ")
    ));
    steps
}

fn indent(text: &str, prefix: &str) -> String {
    text.lines()
        .map(|l| format!("{prefix}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}
