//! Every profile visible from a repository, merged over the precedence layers, and the lookup
//! of a task's `task_type`.
//!
//! A profile file is named after its profile (`profiles/bugfix.toml` defines `bugfix`) and holds
//! `description`, `aliases`, `require` and optionally `checks` (which `[checks.*]` run). Built-in profiles come first; a user or repo file of
//! the same name patches it (tables deep-merge, arrays replace), and so does a
//! `[profiles.<name>]` table of `.autobuild/config.toml`. A name nothing defined before creates
//! a new profile, which then needs `require`.

use std::path::Path;

use serde::Deserialize;

use crate::profile::builtin::{DEFAULT_PROFILE, HUMAN_TASK_TYPES};
use crate::profile::ResolveError;
use crate::profile::{Profile, Requirement};
use crate::workflow::annotate;
use crate::workflow::catalog::Catalog;
use crate::workflow::merge::merge;
use crate::workflow::resolve::in_reading_order;
use base::diagnostic::{did_you_mean, Diagnostic};
use base::error::Error;
use base::user_file::parse_toml;
use base::user_file::tree::Node;
use base::user_file::typed::decode;

/// A profile file (`profiles/<name>.toml`): what the gate checks for tasks of a type.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProfileFile {
    /// One line for `profiles list`.
    #[serde(default)]
    description: String,
    /// Other task types that select this profile.
    #[serde(default)]
    aliases: Vec<String>,
    /// What must hold before a task of this type is approved.
    require: Vec<Requirement>,
    #[serde(default)]
    checks: Option<Vec<String>>,
    /// The minimum line coverage, in percent of the executable lines the `[coverage]`
    /// command's report lists; unmet, the gate does not approve.
    #[serde(default)]
    #[schemars(range(max = 100))]
    coverage: Option<u8>,
}

/// One profile with the merged tree it was decoded from (for `profiles show`).
#[derive(Debug, Clone)]
pub struct LoadedProfile {
    pub profile: Profile,
    tree: Node,
}

impl LoadedProfile {
    /// The profile as TOML, with where each value came from.
    pub fn annotated_toml(&self) -> String {
        let text = toml::to_string(&ProfileText::from(&self.profile)).unwrap_or_default();
        annotate::annotate(&text, &self.tree)
    }
}

/// The written form of a profile (its name is the file name).
#[derive(serde::Serialize)]
struct ProfileText<'a> {
    description: &'a str,
    aliases: &'a [String],
    require: &'a [Requirement],
    #[serde(skip_serializing_if = "Option::is_none")]
    checks: Option<&'a [String]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    coverage: Option<u8>,
}

impl<'a> From<&'a Profile> for ProfileText<'a> {
    fn from(p: &'a Profile) -> Self {
        ProfileText {
            description: &p.description,
            aliases: &p.aliases,
            require: &p.require,
            checks: p.checks.as_deref(),
            coverage: p.coverage,
        }
    }
}

/// Every profile, in the order they were first defined.
#[derive(Debug, Clone)]
pub struct ProfileSet {
    profiles: Vec<LoadedProfile>,
}

impl ProfileSet {
    /// The profiles visible from `root` (a repository root, or none).
    pub fn load(root: Option<&Path>) -> Result<ProfileSet, Error> {
        ProfileSet::from_catalog(&Catalog::discover(root)?)
    }

    pub fn from_catalog(catalog: &Catalog) -> Result<ProfileSet, Error> {
        let mut problems = Vec::new();
        let mut trees: Vec<(String, Node)> = Vec::new();
        for source in &catalog.profiles {
            let name = source
                .path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            match parse_toml::parse(source) {
                Ok(tree) => match alias_owner(&trees, &name) {
                    Some(owner) => problems.push(named_like_an_alias(&tree, &name, &owner)),
                    None => problems.extend(add_layer(&mut trees, name, tree)),
                },
                Err(mut found) => problems.append(&mut found),
            }
        }
        if let Some(config) = &catalog.config.profiles {
            match config.as_table() {
                Some(table) => {
                    for entry in table.iter() {
                        match alias_owner(&trees, &entry.key) {
                            Some(owner) => {
                                problems.push(named_like_an_alias(&entry.value, &entry.key, &owner))
                            }
                            None => problems.extend(add_layer(
                                &mut trees,
                                entry.key.clone(),
                                entry.value.clone(),
                            )),
                        }
                    }
                }
                None => problems.push(config.pos.error(format!(
                    "`profiles` must be a table of profile tables, found {}",
                    config.kind()
                ))),
            }
        }
        let mut profiles = Vec::new();
        for (name, tree) in trees {
            match decode::<ProfileFile>(&tree) {
                Ok(file) if file.require.is_empty() => problems.push(
                    tree.get("require")
                        .map_or(&tree.pos, |n| &n.pos)
                        .error(format!(
                            "profile `{name}` requires nothing, so every turn would be approved"
                        ))
                        .with_help(format!(
                            "require at least one of: {}",
                            Requirement::FORMS.join(", ")
                        )),
                ),
                Ok(file) => {
                    if let Some(problem) = coverage_problem(&tree, &name, file.coverage, catalog) {
                        problems.push(problem);
                        continue;
                    }
                    profiles.push(LoadedProfile {
                        profile: Profile {
                            name,
                            description: file.description,
                            aliases: file.aliases,
                            require: file.require,
                            checks: file.checks,
                            coverage: file.coverage,
                        },
                        tree,
                    })
                }
                Err(mut found) => problems.append(&mut found),
            }
        }
        problems.extend(alias_conflicts(&profiles));
        if problems.is_empty() {
            Ok(ProfileSet { profiles })
        } else {
            Err(in_reading_order(problems).into())
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &LoadedProfile> {
        self.profiles.iter()
    }

    /// The profile with this name or alias (exact first, then ignoring ASCII case).
    pub fn get(&self, name: &str) -> Option<&LoadedProfile> {
        let matches = |p: &&LoadedProfile, eq: &dyn Fn(&str) -> bool| {
            eq(&p.profile.name) || p.profile.aliases.iter().any(|a| eq(a))
        };
        self.profiles
            .iter()
            .find(|p| matches(p, &|n| n == name))
            .or_else(|| {
                self.profiles
                    .iter()
                    .find(|p| matches(p, &|n| n.eq_ignore_ascii_case(name)))
            })
    }

    /// The profile for a task type; an unknown type gets the default profile and a warning, and
    /// a task type meant for a person ([`HUMAN_TASK_TYPES`]) is refused.
    pub fn resolve(&self, task_type: &str) -> Result<(Profile, Option<String>), Error> {
        if let Some(found) = self.get(task_type) {
            return Ok((found.profile.clone(), None));
        }
        if HUMAN_TASK_TYPES
            .iter()
            .any(|human| human.eq_ignore_ascii_case(task_type))
        {
            return Err(ResolveError::ForAPerson(task_type.to_string()).into());
        }
        let default = self
            .get(DEFAULT_PROFILE)
            .ok_or(ResolveError::NoDefault(DEFAULT_PROFILE))?;
        let known = self.names().join(", ");
        let hint = match did_you_mean(task_type, self.all_names()) {
            Some(close) => format!(" (did you mean `{close}`?)"),
            None => String::new(),
        };
        Ok((
            default.profile.clone(),
            Some(format!(
                "unknown task type `{task_type}`{hint}; using the `{DEFAULT_PROFILE}` profile. Known task types: {known}"
            )),
        ))
    }

    /// The known task type `task_type` is most likely a typo of, when it is not one itself.
    /// A task type far from every known one is another tool's word (GuardKit's, say) and runs
    /// with the default profile after a warning; a near miss (`libary`, `bugfx`) is refused,
    /// because running it under the wrong profile's gate is a silent downgrade. A near miss is
    /// at most [`TYPO_EDITS`] edits away: "did you mean" alone also suggests `integration` for
    /// GuardKit's own `investigation` (5 edits), which GuardKit runs under its default profile.
    pub fn typo_of(&self, task_type: &str) -> Option<&str> {
        let human = HUMAN_TASK_TYPES
            .iter()
            .any(|h| h.eq_ignore_ascii_case(task_type));
        if human || self.get(task_type).is_some() {
            return None;
        }
        did_you_mean(task_type, self.all_names()).filter(|close| {
            strsim::damerau_levenshtein(&task_type.to_ascii_lowercase(), close) <= TYPO_EDITS
        })
    }

    pub fn names(&self) -> Vec<&str> {
        self.profiles
            .iter()
            .map(|p| p.profile.name.as_str())
            .collect()
    }

    fn all_names(&self) -> impl Iterator<Item = &str> {
        self.profiles.iter().flat_map(|p| {
            std::iter::once(p.profile.name.as_str())
                .chain(p.profile.aliases.iter().map(String::as_str))
        })
    }
}

/// Resolves a task type to its profile as seen from `root`; see [`ProfileSet::resolve`].
pub fn resolve_profile(
    root: Option<&Path>,
    task_type: &str,
) -> Result<(Profile, Option<String>), Error> {
    ProfileSet::load(root)?.resolve(task_type)
}

/// What is wrong with a profile's `coverage`: above 100, or set in a repository whose
/// config.toml declares no `[coverage]` command to measure it.
fn coverage_problem(
    tree: &Node,
    name: &str,
    coverage: Option<u8>,
    catalog: &Catalog,
) -> Option<Diagnostic> {
    let minimum = coverage?;
    let at = tree.get("coverage").map_or(&tree.pos, |n| &n.pos);
    if minimum > 100 {
        return Some(
            at.error(format!(
                "profile `{name}` asks for {minimum}% line coverage; a percentage is 0 to 100"
            ))
            .with_help("e.g. `coverage = 80`"),
        );
    }
    // Outside a repository there is no config to declare the command.
    if catalog.root.is_none() || catalog.config.coverage {
        return None;
    }
    Some(
        at.error(format!(
            "profile `{name}` sets `coverage = {minimum}`, but .autobuild/config.toml has no \
             [coverage] command to measure it"
        ))
        .with_help(
            "declare the command and its report in .autobuild/config.toml, e.g. `[coverage]` \
             with `cmd = \"pytest --cov --cov-report=xml:coverage.xml\"` and `report = \
             \"coverage.xml\"` (Cobertura XML or LCOV), or remove `coverage` from the profile",
        ),
    )
}

/// The profile defined so far that has `name` as an alias, when no profile is called `name`.
fn alias_owner(trees: &[(String, Node)], name: &str) -> Option<String> {
    if trees.iter().any(|(n, _)| n == name) {
        return None;
    }
    trees
        .iter()
        .find(|(_, tree)| {
            tree.get("aliases")
                .and_then(Node::as_array)
                .is_some_and(|aliases| aliases.iter().any(|a| a.as_str() == Some(name)))
        })
        .map(|(owner, _)| owner.clone())
}

/// A profile named like another profile's alias would take the alias from it (and every
/// `profiles` command would fail pointing at the other profile's file); this says so at the
/// profile that does it.
fn named_like_an_alias(tree: &Node, name: &str, owner: &str) -> Diagnostic {
    tree.pos
        .error(format!(
            "profile `{name}` is named like an alias of profile `{owner}`"
        ))
        .with_help(format!(
            "to change `{owner}`, name the file `{owner}.toml` (or the table `[profiles.{owner}]`); for a profile of its own, choose a name that is not an alias"
        ))
}

/// Patches the profile `name` with `tree`, or adds it; the problems of the patch.
fn add_layer(trees: &mut Vec<(String, Node)>, name: String, tree: Node) -> Vec<Diagnostic> {
    match trees.iter_mut().find(|(n, _)| *n == name) {
        Some((_, existing)) => merge(existing, tree),
        None => {
            trees.push((name, tree));
            Vec::new()
        }
    }
}

/// An alias that is also another profile's name or alias would make lookups ambiguous.
fn alias_conflicts(profiles: &[LoadedProfile]) -> Vec<Diagnostic> {
    let mut problems = Vec::new();
    for (index, loaded) in profiles.iter().enumerate() {
        let alias_nodes = loaded
            .tree
            .get("aliases")
            .and_then(Node::as_array)
            .unwrap_or_default();
        for (alias, node) in loaded.profile.aliases.iter().zip(alias_nodes) {
            let clash = profiles.iter().enumerate().find(|(other, p)| {
                p.profile.name == *alias || (*other < index && p.profile.aliases.contains(alias))
            });
            if let Some((_, other)) = clash {
                problems.push(node.pos.error(format!(
                    "alias `{alias}` of profile `{}` is already taken by profile `{}`",
                    loaded.profile.name, other.profile.name
                )));
            }
        }
    }
    problems
}

/// How many edits (insertions, deletions, substitutions, swaps) a task type may be from a
/// known one and still be taken for a typo of it ([`ProfileSet::typo_of`]).
const TYPO_EDITS: usize = 2;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_near_miss_of_a_known_task_type_is_a_typo() {
        let set = builtins();
        // (task type, the known type it is taken for a typo of)
        let cases = [
            ("documentaton", Some("documentation")),
            ("bugfx", Some("bugfix")),
            ("Featur", Some("feature")),
            ("refactr", Some("refactor")),
            // GuardKit's own words, far from every known type: the default profile, warned.
            ("investigation", None),
            ("configuration", None),
            // Known types and aliases are no typos.
            ("feature", None),
            ("fix", None),
        ];
        for (task_type, typo) in cases {
            assert_eq!(set.typo_of(task_type), typo, "{task_type}");
        }
        let (profile, warning) = set.resolve("investigation").unwrap();
        assert_eq!(profile.name, DEFAULT_PROFILE);
        assert!(
            warning.is_some_and(|w| w.contains("unknown task type `investigation`")),
            "the default profile is used after a warning"
        );
    }

    fn builtins() -> ProfileSet {
        ProfileSet::from_catalog(&Catalog::builtin()).unwrap()
    }

    #[test]
    fn a_user_profile_named_like_a_builtin_alias_is_reported_at_the_users_file() {
        use base::user_file::source::{Layer, Source};
        let mut catalog = Catalog::builtin();
        catalog.profiles.push(Source::new(
            "/home/u/.config/autobuild/profiles/docs.toml",
            "require = [\"coach\"]\n",
            Layer::User,
        ));
        let message = ProfileSet::from_catalog(&catalog).unwrap_err().to_string();
        assert!(
            message.contains(
                "docs.toml:1:1: profile `docs` is named like an alias of profile `documentation`"
            ),
            "{message}"
        );
        assert!(
            message.contains("name the file `documentation.toml`"),
            "{message}"
        );
        assert!(
            !message.contains("profiles/documentation.toml"),
            "{message}"
        );
    }

    #[test]
    fn aliases_resolve_to_their_profile() {
        let set = builtins();
        let (profile, warning) = set.resolve("fix").unwrap();
        assert_eq!(profile.name, "bugfix");
        assert!(warning.is_none());
        assert_eq!(set.resolve("Docs").unwrap().0.name, "documentation");
    }

    #[test]
    fn unknown_task_types_fall_back_to_feature_with_a_warning() {
        let (profile, warning) = builtins().resolve("featrue").unwrap();
        assert_eq!(profile.name, "feature");
        let warning = warning.unwrap();
        assert!(warning.contains("did you mean `feature`?"), "{warning}");
        assert!(warning.contains("bugfix"), "{warning}");
    }

    #[test]
    fn shipped_profiles_require_what_the_design_suggests() {
        let set = builtins();
        let require = |name: &str| {
            set.get(name)
                .unwrap()
                .profile
                .require
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            require("feature"),
            ["checks.test", "criteria", "coach", "changes"]
        );
        assert_eq!(require("scaffolding"), ["criteria", "coach", "changes"]);
        assert_eq!(require("review"), ["criteria", "coach"]);
        assert_eq!(set.names().len(), 12);
    }

    #[test]
    fn guardkit_task_types_map_to_profiles_without_a_warning() {
        let set = builtins();
        for (task_type, profile) in [
            ("implementation", "feature"),
            ("enhancement", "feature"),
            ("bug-fix", "bugfix"),
            ("bug_fix", "bugfix"),
            ("benchmark", "testing"),
            ("research", "documentation"),
            ("config", "declarative"),
            ("dto", "declarative"),
            ("declarative", "declarative"),
            ("infrastructure", "infrastructure"),
            ("integration", "integration"),
            ("glue", "glue"),
            ("wiring", "wiring"),
            ("review", "review"),
        ] {
            let (found, warning) = set.resolve(task_type).unwrap();
            assert_eq!(found.name, profile, "{task_type}");
            assert_eq!(warning, None, "{task_type}");
        }
        for profile in [
            "infrastructure",
            "integration",
            "declarative",
            "glue",
            "wiring",
        ] {
            assert_eq!(
                set.get(profile).unwrap().profile.require,
                set.get("feature").unwrap().profile.require,
                "{profile}"
            );
        }
    }

    #[test]
    fn operator_handoff_is_refused_as_work_for_a_human() {
        let err = builtins().resolve("operator_handoff").unwrap_err();
        assert_eq!(
            err.problem::<ResolveError>(),
            Some(&ResolveError::ForAPerson("operator_handoff".into()))
        );
        assert_eq!(err.exit_code(), 2);
    }

    #[test]
    fn misspelled_requirements_are_located_with_a_suggestion() {
        let mut catalog = Catalog::builtin();
        catalog.profiles.push(base::user_file::source::Source::new(
            ".autobuild/profiles/feature.toml",
            "require = [\"checks.test\", \"critera\"]\n",
            base::user_file::source::Layer::Repo,
        ));
        let Err(Error::Invalid(found)) = ProfileSet::from_catalog(&catalog) else {
            panic!("a misspelled requirement was accepted");
        };
        assert_eq!(found.0.len(), 1, "{found}");
        let problem = &found.0[0];
        assert_eq!(problem.message, "unknown value `critera` for `require`");
        assert_eq!(problem.help.as_deref(), Some("did you mean `criteria`?"));
        assert_eq!(problem.location.map(|l| (l.line, l.column)), Some((1, 27)));
    }
}
