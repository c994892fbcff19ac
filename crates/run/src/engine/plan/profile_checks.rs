//! Which checks a run runs: a profile may choose them (`checks = ["test", "lint"]`; absent: all
//! of them; a hidden check runs whatever the profile chooses). A name no check answers to, or a check the profile requires but leaves out, would
//! make the run unapprovable or silently unchecked, so either stops it before it starts.

use std::path::Path;

use crate::engine::plan::Blocker;
use crate::engine::state::RunSettings;
use base::diagnostic::did_you_mean;
use base::error::Error;
use model::profile::{Profile, Requirement};
use model::project::{effective_checks, Config, EffectiveCheck};
use model::task::Task;

/// The checks the gate of `task` requires when it runs with `settings` (its workflow, profile
/// and overrides), as its verify step would run them. A feature's integration check runs
/// these on the feature branch's tip ([`crate::feature::integration`]).
pub fn gate_checks(
    root: &Path,
    config: &Config,
    task: &Task,
    settings: &RunSettings,
) -> Result<Vec<EffectiveCheck>, Error> {
    let workflow = settings
        .workflow_arg
        .clone()
        .or_else(|| task.workflow.clone())
        .unwrap_or_else(|| super::DEFAULT_WORKFLOW.to_string());
    let inputs = crate::engine::inputs::load(
        root,
        Ok(config.clone()),
        &workflow,
        &settings.overrides(),
        &task.task_type,
    )?;
    let profile_required = inputs
        .resolved
        .workflow
        .gate_requirements(&inputs.profile.requirements());
    let (checks, _) = select(
        effective_checks(config, root),
        &inputs.profile,
        &profile_required,
    );
    let required = gate_requirements(&inputs.resolved.workflow, &inputs.profile, &checks);
    Ok(checks
        .into_iter()
        .filter(|check| check.gates(&required))
        .collect())
}

/// What the gate of a run with `workflow` and `profile` that runs `checks` requires: the
/// profile's requirements the workflow does not waive, then every check that gates on its own
/// (a configured one that does not say `required = false`; a hidden one even where the
/// workflow waives it).
pub fn gate_requirements(
    workflow: &model::workflow::model::Workflow,
    profile: &Profile,
    checks: &[EffectiveCheck],
) -> Vec<Requirement> {
    let own = |check: &EffectiveCheck| Requirement::Check(check.name.clone());
    let mut required = profile.requirements();
    required.extend(checks.iter().filter(|c| c.required && !c.hidden).map(own));
    let mut required = workflow.gate_requirements(&required);
    required.extend(checks.iter().filter(|c| c.hidden).map(own));
    let mut seen = Vec::new();
    required.retain(|r| {
        let first = !seen.contains(r);
        if first {
            seen.push(r.clone());
        }
        first
    });
    required
}

/// The checks to run for `profile`, and why the run cannot start with them (if it cannot).
pub(super) fn select(
    checks: Vec<EffectiveCheck>,
    profile: &Profile,
    required: &[Requirement],
) -> (Vec<EffectiveCheck>, Vec<Blocker>) {
    let Some(chosen) = &profile.checks else {
        return (checks, Vec::new());
    };
    let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
    let mut blockers: Vec<Blocker> = chosen
        .iter()
        .filter(|name| !names.contains(&name.as_str()))
        .map(|name| Blocker::UnknownProfileCheck {
            profile: profile.name.clone(),
            check: name.clone(),
            close: did_you_mean(name, names.iter().copied()).map(str::to_string),
        })
        .collect();
    blockers.extend(required.iter().filter_map(|requirement| match requirement {
        Requirement::Check(name) if !chosen.contains(name) && names.contains(&name.as_str()) => {
            Some(Blocker::RequiredCheckLeftOut {
                profile: profile.name.clone(),
                check: name.clone(),
            })
        }
        _ => None,
    }));
    // A hidden check is the task's acceptance oracle: no profile leaves it out.
    let selected = checks
        .into_iter()
        .filter(|check| check.hidden || chosen.contains(&check.name))
        .collect();
    (selected, blockers)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use model::project::CheckOrigin;

    fn check(name: &str) -> EffectiveCheck {
        EffectiveCheck {
            name: name.into(),
            cmd: format!("run {name}"),
            timeout: Duration::from_secs(60),
            origin: CheckOrigin::Configured,
            hidden: false,
            required: true,
            results: None,
        }
    }

    fn profile(checks: Option<&[&str]>) -> Profile {
        Profile {
            name: "docs".into(),
            description: String::new(),
            aliases: Vec::new(),
            require: Vec::new(),
            checks: checks.map(|c| c.iter().map(|s| s.to_string()).collect()),
            coverage: None,
        }
    }

    fn names(checks: &[EffectiveCheck]) -> Vec<&str> {
        checks.iter().map(|c| c.name.as_str()).collect()
    }

    #[test]
    fn without_a_choice_every_check_runs() {
        let (selected, blockers) = select(vec![check("test"), check("lint")], &profile(None), &[]);
        assert_eq!(names(&selected), ["test", "lint"]);
        assert!(blockers.is_empty());
    }

    #[test]
    fn a_profile_runs_only_the_checks_it_names_possibly_none() {
        let all = || vec![check("test"), check("lint"), check("fmt")];
        let (selected, _) = select(all(), &profile(Some(&["lint"])), &[]);
        assert_eq!(names(&selected), ["lint"]);
        let (selected, blockers) = select(all(), &profile(Some(&[])), &[]);
        assert!(selected.is_empty());
        assert!(blockers.is_empty());
    }

    #[test]
    fn unknown_and_left_out_required_checks_stop_the_run() {
        let (_, blockers) = select(
            vec![check("test"), check("lint")],
            &profile(Some(&["lnt"])),
            &[Requirement::Check("test".into())],
        );
        let [Blocker::UnknownProfileCheck {
            check: unknown,
            close,
            ..
        }, Blocker::RequiredCheckLeftOut {
            check: left_out, ..
        }] = blockers.as_slice()
        else {
            panic!("{blockers:#?}");
        };
        assert_eq!((unknown.as_str(), close.as_deref()), ("lnt", Some("lint")));
        assert_eq!(left_out, "test");
    }

    #[test]
    fn a_hidden_check_runs_whatever_checks_the_profile_chooses() {
        let mut oracle = check("oracle");
        oracle.hidden = true;
        let (selected, blockers) = select(
            vec![check("test"), check("lint"), oracle],
            &profile(Some(&["test"])),
            &[],
        );
        let names: Vec<&str> = selected.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["test", "oracle"]);
        assert!(blockers.is_empty());
    }
}
