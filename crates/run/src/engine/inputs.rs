//! The files one run reads besides its task — `.autobuild/config.toml`, the workflow (with
//! every file it extends) and the quality-gate profile — loaded together, so that one run
//! reports all of their problems.
//!
//! The `[roles]` and `[profiles]` tables of config.toml are checked by the workflow and profile
//! loaders, which know what a role or a profile may hold; [`Config::load`] checks the rest.
//! When preflight stopped at the first invalid file, a user fixed `[checks]` and `[env]`, ran
//! again, and only then learned that `[roles.playr]` names no role. Now, when the config is
//! invalid, the workflow and the profile are still loaded, and their located problems are
//! reported with the config's, each file's in reading order. Their other errors (an unknown
//! workflow name, say) wait for the next run: they are not problems in a file the user is
//! about to edit. The config's own problems always come first: no later problem hides them.
//!
//! Workflow files other than the ones the run uses never stop it, but the ones that cannot be
//! used (they do not parse, are over the input size cap, …) are named in a warning: one of them
//! may be the patch the user meant to apply.

use std::path::Path;

use base::diagnostic::{Diagnostic, Diagnostics};
use base::error::Error;
use model::profile::{Profile, ProfileSet};
use model::project::Config;
use model::workflow::resolve::in_reading_order;
use model::workflow::{Catalog, Overrides, ResolvedWorkflow};

/// What a run is made of, besides its task.
#[derive(Clone)]
pub struct RunInputs {
    pub config: Config,
    pub resolved: ResolvedWorkflow,
    pub profile: Profile,
    /// Things the user should know that do not stop the run.
    pub warnings: Vec<String>,
}

/// Resolves `workflow` and the profile of `task_type` as seen from `root`, given the outcome of
/// loading the project config; see the module docs for how their problems combine.
pub fn load(
    root: &Path,
    config: Result<Config, Error>,
    workflow: &str,
    overrides: &Overrides,
    task_type: &str,
) -> Result<RunInputs, Error> {
    let catalog = match Catalog::discover(Some(root)) {
        Ok(catalog) => catalog,
        Err(error) => return Err(first_then(config.err(), [error])),
    };
    load_from(&catalog, config, workflow, overrides, task_type)
}

/// [`load`] from a catalog already discovered.
pub fn load_from(
    catalog: &Catalog,
    config: Result<Config, Error>,
    workflow: &str,
    overrides: &Overrides,
    task_type: &str,
) -> Result<RunInputs, Error> {
    let resolved = catalog.resolve(workflow, overrides);
    let profile = ProfileSet::from_catalog(catalog).and_then(|set| set.resolve(task_type));
    let config = match config {
        Ok(config) => config,
        Err(error) => {
            return Err(together(
                error,
                [resolved.err(), profile.err()].into_iter().flatten(),
            ))
        }
    };
    let resolved = resolved?;
    let (profile, warning) = profile?;
    let mut warnings: Vec<String> = warning.into_iter().collect();
    warnings.extend(resolved.warnings.iter().map(Diagnostic::headline));
    warnings.extend(catalog.unusable().into_iter().map(unusable_warning));
    warnings.extend(user_changes(catalog, &resolved, &profile));
    Ok(RunInputs {
        config,
        resolved,
        profile,
        warnings,
    })
}

/// Warnings naming the files of the user's configuration directory that change a built-in
/// workflow or profile this run uses: they apply to every repository on the machine, and an
/// agent running unconfined could have written them, so no run takes them silently.
fn user_changes(catalog: &Catalog, resolved: &ResolvedWorkflow, profile: &Profile) -> Vec<String> {
    use base::user_file::source::{Layer, Source};
    // The discovered catalog holds the built-in layer too: nothing is parsed again.
    let builtin_workflow = catalog
        .documents
        .iter()
        .any(|doc| doc.source.layer == Layer::BuiltIn && doc.name == resolved.workflow.name);
    let named = |source: &Source, layer: Layer| {
        source.layer == layer && source.path.file_stem() == Some(profile.name.as_ref())
    };
    let builtin_profile = catalog.profiles.iter().any(|s| named(s, Layer::BuiltIn));
    let mut warnings = Vec::new();
    if resolved.layer == Layer::User && builtin_workflow {
        warnings.push(format!(
            "workflow `{}` comes from {} in your user configuration, which changes the \
             built-in one for every repository on this machine",
            resolved.workflow.name,
            resolved.source.display()
        ));
    }
    if builtin_profile {
        let patches = catalog.profiles.iter().filter(|s| named(s, Layer::User));
        warnings.extend(patches.map(|source| {
            format!(
                "profile `{}` is changed by {} in your user configuration, for every \
                 repository on this machine",
                profile.name,
                source.path.display()
            )
        }));
    }
    warnings
}

/// `first`'s error when there is one (combined with `later`'s problems), else `later`'s first.
fn first_then(first: Option<Error>, later: impl IntoIterator<Item = Error>) -> Error {
    let mut later = later.into_iter();
    match first {
        Some(first) => together(first, later),
        None => later
            .next()
            .unwrap_or_else(|| crate::engine::plan::StartError::NothingLoaded.into()),
    }
}

/// `first` with the located problems of `later` added when `first` is itself a list of located
/// problems; a problem `first` already reports at the same place is not repeated (config.toml
/// is parsed by both the config and the workflow loader, so its syntax errors reach both).
pub fn together(first: Error, later: impl IntoIterator<Item = Error>) -> Error {
    let Error::Invalid(Diagnostics(mut problems)) = first else {
        return first;
    };
    let reported: Vec<(std::path::PathBuf, Option<base::diagnostic::Location>)> = problems
        .iter()
        .map(|p| (p.path.clone(), p.location))
        .collect();
    for error in later {
        if let Error::Invalid(Diagnostics(more)) = error {
            problems.extend(
                more.into_iter()
                    .filter(|p| !reported.contains(&(p.path.clone(), p.location))),
            );
        }
    }
    Error::Invalid(Diagnostics(in_reading_order(problems)))
}

/// One line naming an unusable workflow file and its first problem.
fn unusable_warning(problem: &Diagnostic) -> String {
    let at = match problem.location {
        Some(at) => format!("{}:{}:{}", problem.path.display(), at.line, at.column),
        None => problem.path.display().to_string(),
    };
    format!(
        "workflow file {at} cannot be used and was skipped: {} (`autobuild workflows validate` lists its problems)",
        problem.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use base::diagnostic::Location;

    fn at(path: &str, line: usize, message: &str) -> Diagnostic {
        Diagnostic {
            severity: Default::default(),
            path: path.into(),
            location: Some(Location { line, column: 1 }),
            source_line: None,
            message: message.into(),
            help: None,
        }
    }

    #[test]
    fn located_problems_of_later_files_join_the_configs_without_repeats() {
        let config = Error::from(vec![
            at("c.toml", 5, "unknown key `cmdd`"),
            at("c.toml", 2, "invalid TOML"),
        ]);
        let workflow = Error::from(vec![
            at("c.toml", 9, "no workflow has a role `playr`"),
            at("c.toml", 2, "invalid TOML, said differently"),
        ]);
        let unknown = Error::usage("unknown workflow `x`");
        let Error::Invalid(Diagnostics(all)) = together(config, [workflow, unknown]) else {
            panic!("not a list of problems");
        };
        let lines: Vec<(usize, &str)> = all
            .iter()
            .map(|p| (p.location.map_or(0, |l| l.line), p.message.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (2, "invalid TOML"),
                (5, "unknown key `cmdd`"),
                (9, "no workflow has a role `playr`")
            ]
        );
    }

    #[test]
    fn a_config_error_that_is_not_a_list_of_problems_stands_alone() {
        let io = Error::io("cannot read", "c.toml", std::io::Error::other("boom"));
        let later = Error::from(vec![at("w.toml", 1, "bad")]);
        assert!(matches!(together(io, [later]), Error::Io { .. }));
    }

    #[test]
    fn the_warning_names_the_file_where_its_first_problem_is() {
        let line = unusable_warning(&at(".autobuild/workflows/bomb.yaml", 5, "too many aliases"));
        assert!(
            line.starts_with(
                "workflow file .autobuild/workflows/bomb.yaml:5:1 cannot be used and was skipped: too many aliases"
            ),
            "{line}"
        );
    }
}
