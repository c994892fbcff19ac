//! What the emitted CI workflows cannot do that a local feature run does, decided before a file
//! is written (docs/scale-out.md, "What CI does not do").
//!
//! - **Hidden paths** (`[scope] hidden`, a task's `hidden:`) are refused, located at each
//!   declaration: a run with hidden paths needs bubblewrap with unprivileged user namespaces,
//!   which GitLab's Docker executor does not give a job and GitHub's Ubuntu 24.04 images
//!   restrict, and without the sandbox the task job would refuse the run anyway. Such a feature
//!   runs locally (`autobuild feature`), where the same checks happen.
//! - **`[feature] integration = "integrate"`** is emitted with a warning: the landing job runs
//!   the integration check but no player (it has no agent), so a failure stops the feature as
//!   with `check`; the landing job says so too ([`INTEGRATE_IN_CI`]).

use crate::diagnostic::Diagnostic;
use crate::feature::plan::FeaturePlan;
use crate::project::{Config, Integration, Layout};

/// Why hidden paths cannot run in CI (the help of each refusal).
const HIDDEN_HELP: &str = "hidden paths need the sandbox (bubblewrap with unprivileged user \
     namespaces), which CI jobs do not reliably get (GitLab's Docker executor, GitHub's Ubuntu \
     24.04 images), and a task job would refuse the run without it; run this feature locally \
     with `autobuild feature`, which lands it and runs the integration check with the hidden \
     files (docs/scale-out.md)";

/// What `integrate` becomes in a landing job: said when the file is written and when a landing
/// job's check fails.
pub const INTEGRATE_IN_CI: &str = "[feature] integration = \"integrate\" only checks in \
     `autobuild feature --land` (the CI landing job): no player runs there, so a failed integration check stops the feature as with \
     \"check\"; repair it on the feature branch and re-run the workflow, or run the feature \
     locally to have the player repair it";

/// One located refusal per declaration of hidden paths the feature's tasks would run with.
pub fn hidden_refusals(layout: &Layout, config: &Config, plan: &FeaturePlan) -> Vec<Diagnostic> {
    let mut found = Vec::new();
    if !config.scope.hidden.is_empty() {
        let path = layout.config();
        let shown = path
            .strip_prefix(layout.root())
            .unwrap_or(&path)
            .to_path_buf();
        let message = "the CI workflows cannot run tasks with hidden paths ([scope] hidden)";
        let source = crate::user_file::read(&path, &shown).ok();
        let located = source
            .as_deref()
            .and_then(|s| scope_hidden_offset(s).map(|o| (s, o)));
        let diagnostic = match located {
            Some((source, offset)) => Diagnostic::at_offset(&shown, source, offset, message),
            None => Diagnostic::new(&shown, message),
        };
        found.push(diagnostic.with_help(HIDDEN_HELP));
    }
    for planned in &plan.tasks {
        let task = &planned.task;
        if task.hidden.is_empty() {
            continue;
        }
        let message = format!(
            "the CI workflows cannot run task {} with hidden paths ({})",
            task.id,
            task.hidden.join(", ")
        );
        found.push(
            task.key_problem(layout.root(), "hidden", message)
                .with_help(HIDDEN_HELP),
        );
    }
    found
}

/// The warning for a project whose failed integration checks a player would repair locally.
pub fn integrate_warning(config: &Config) -> Option<&'static str> {
    (config.feature.integration == Integration::Integrate).then_some(INTEGRATE_IN_CI)
}

/// Where `hidden` of the `[scope]` table starts in config.toml `source`.
fn scope_hidden_offset(source: &str) -> Option<usize> {
    let mut offset = 0;
    let mut in_scope = false;
    for line in source.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with('[') {
            in_scope = trimmed.trim_end().starts_with("[scope]");
        } else if in_scope {
            let key = trimmed.split('=').next().unwrap_or_default().trim();
            if key == "hidden" && trimmed.contains('=') {
                return Some(offset + (line.len() - trimmed.len()));
            }
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scope_hidden_key_is_found_in_its_table_only() {
        let source =
            "[checks.test]\nhidden = true\n\n[scope]\nprotect = []\n  hidden = [\"a/**\"]\n";
        let offset = scope_hidden_offset(source).unwrap();
        assert!(source[offset..].starts_with("hidden = [\"a/**\"]"));
        assert_eq!(scope_hidden_offset("[checks.x]\nhidden = true\n"), None);
    }
}
