//! Hidden paths (`[scope] hidden`, a task's `hidden:`; README.md): what no agent of the run
//! may see, and why a run with them cannot start.
//!
//! Hidden files are kept from agents by the task repository (module
//! [`git::task_repo`]) and the sandbox's masks, so a run with hidden paths and no
//! sandbox is refused before anything happens: it would run them unprotected. A check marked
//! `hidden = true` with no hidden paths is a mistake the user should hear of, but not a blocker.

use std::path::PathBuf;

use super::{Blocker, Plan, StartError};
use base::error::Error;
use model::project::EffectiveCheck;

impl Plan {
    /// The globs no agent of this run may see: `[scope] hidden` and the task's `hidden:`.
    pub fn hidden_paths(&self) -> Vec<String> {
        let mut patterns: Vec<String> = Vec::new();
        for pattern in self.config.scope.hidden.iter().chain(&self.task.hidden) {
            if !patterns.contains(pattern) {
                patterns.push(pattern.clone());
            }
        }
        patterns
    }

    /// Whether this run keeps files from its agents.
    pub fn hides(&self) -> bool {
        !self.hidden_paths().is_empty()
    }

    /// The hidden paths compiled, `None` when there are none.
    pub fn hidden_set(&self) -> Result<Option<globset::GlobSet>, Error> {
        let hidden = self.hidden_paths();
        if hidden.is_empty() {
            return Ok(None);
        }
        base::pattern::set(&hidden)
            .map(Some)
            .map_err(|why| StartError::InvalidHidden(why).into())
    }

    /// The task repository of this run when it hides files (its agents' repository).
    pub fn task_repo(&self) -> Option<PathBuf> {
        self.hides().then(|| self.layout.task_repo(&self.task.id))
    }
}

/// What stops a run of `task` with `hidden` paths from starting, and what the user should
/// know. Warnings name the task: a feature shows every task's together, and one task's hidden
/// paths say nothing of another's.
pub(super) fn check(
    task: &str,
    hidden: &[String],
    confined: Result<(), &str>,
    checks: &[EffectiveCheck],
) -> (Vec<Blocker>, Vec<String>) {
    let mut blockers = Vec::new();
    let mut warnings = Vec::new();
    let marked: Vec<&str> = checks
        .iter()
        .filter(|c| c.hidden)
        .map(|c| c.name.as_str())
        .collect();
    if hidden.is_empty() {
        if !marked.is_empty() {
            warnings.push(format!(
                "{task} hides no path (neither [scope] hidden nor its `hidden:` names one), so \
                 check(s) {} marked `hidden = true` run like ordinary checks in its run",
                marked.join(", ")
            ));
        }
        return (blockers, warnings);
    }
    if let Err(why) = confined {
        blockers.push(Blocker::HiddenWithoutSandbox {
            hidden: hidden.to_vec(),
            why: why.to_string(),
        });
    }
    if marked.is_empty() {
        warnings.push(format!(
            "{task} hides paths ({}) but no check of its run is marked `hidden = true`, so \
             no check uses them",
            hidden.join(", ")
        ));
    }
    (blockers, warnings)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use model::project::CheckOrigin;

    fn check_named(name: &str, hidden: bool) -> EffectiveCheck {
        EffectiveCheck {
            name: name.into(),
            cmd: "true".into(),
            timeout: Duration::from_secs(1),
            origin: CheckOrigin::Configured,
            hidden,
            required: true,
            results: None,
        }
    }

    #[test]
    fn hidden_paths_without_a_sandbox_are_refused() {
        let hidden = ["tests/acceptance/**".to_string()];
        let checks = [check_named("acceptance", true)];
        let (blockers, warnings) = check("T", &hidden, Err("[sandbox] mode = \"off\""), &checks);
        assert_eq!(
            blockers,
            [Blocker::HiddenWithoutSandbox {
                hidden: hidden.to_vec(),
                why: "[sandbox] mode = \"off\"".into(),
            }]
        );
        assert!(warnings.is_empty());
        let (blockers, warnings) = check("T", &hidden, Ok(()), &checks);
        assert!(blockers.is_empty() && warnings.is_empty());
    }

    #[test]
    fn unused_hidden_paths_and_checks_are_warned_about() {
        let (blockers, warnings) =
            check("T-2", &[], Err("off"), &[check_named("acceptance", true)]);
        assert!(blockers.is_empty());
        assert!(warnings[0].contains("acceptance"), "{warnings:?}");
        assert!(warnings[0].starts_with("T-2 hides no path"), "{warnings:?}");
        let (_, warnings) = check(
            "T",
            &["t/**".to_string()],
            Ok(()),
            &[check_named("test", false)],
        );
        assert!(warnings[0].contains("no check"), "{warnings:?}");
        assert_eq!(check("T", &[], Err("off"), &[]), (Vec::new(), Vec::new()));
    }
}
