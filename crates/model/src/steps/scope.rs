//! Path scopes: which files an agent may change. Rewriting or deleting tests to get a green run
//! is the best-known way an agent games a loop, and a sentence in a prompt does not stop it; the
//! runner does, after every agent step, from git's own list of changed paths.
//!
//! - `protect` (config.toml's `[scope] protect`, a task's `protect:`, and the defaults below)
//!   names paths no agent may create, change or delete.
//! - A role's `writes` names the only paths that role may change (absent: everything not
//!   protected; a read-only role is the case `writes = []`, enforced by the audit).
//!
//! Patterns are in the one glob dialect of every path pattern (`base::pattern`).

use globset::GlobSet;

use base::pattern::set;

/// Protected for every agent whatever the configuration: autobuild's own directory (the
/// config with the check commands, workflows, agents' scripts). The task file is added by the
/// caller, since its path depends on the task.
pub const ALWAYS_PROTECTED: &[&str] = &[".autobuild/**"];

/// Where tests live by the common conventions (Rust, Python, JS/TS, Go, Ruby): changes to these
/// are shown to the reviewer separately, so a weakened test is visible even where it is allowed.
const TEST_FILES: &[&str] = &[
    "tests/**",
    "test/**",
    "spec/**",
    "**/tests/**",
    "**/test/**",
    "**/__tests__/**",
    "**/test_*",
    "**/*_test.*",
    "**/*.test.*",
    "**/*_spec.*",
    "**/*.spec.*",
];

/// Test-runner configuration per ecosystem: what decides which tests run and how their results
/// are reported, and nothing else (a conftest hook can skip every test or turn a failure into
/// a pass; a `-k` in `pytest.ini` deselects one). A change to it is a test change, and a
/// hidden check runs with the base's versions, never the player's. `[tests] infra` adds to it.
pub const RUNNER_CONFIG: &[&str] = &[
    "**/conftest.py",
    "pytest.ini",
    "tox.ini",
    "noxfile.py",
    ".coveragerc",
    "**/jest.config.*",
    "**/jest.setup.*",
    "**/vitest.config.*",
    "**/vitest.workspace.*",
    "**/.mocharc*",
    "**/karma.conf.*",
    ".config/nextest.toml",
];

/// Build files that also configure tests (`pyproject.toml`'s `[tool.pytest]`, `package.json`'s
/// test script, `Cargo.toml`'s test targets): a change to them is a test change, shown to every
/// reviewer, but a hidden check keeps the player's (a new dependency is the player's to add).
pub const BUILD_FILES: &[&str] = &[
    "setup.cfg",
    "pyproject.toml",
    "**/package.json",
    "**/vite.config.*",
    "**/Cargo.toml",
    ".cargo/config.toml",
    "**/go.mod",
    "Makefile",
];

/// Which paths are tests: the conventional test files, the test infrastructure
/// ([`RUNNER_CONFIG`], [`BUILD_FILES`]) and `[tests] infra`.
#[derive(Debug, Clone)]
pub struct TestPaths {
    set: GlobSet,
    runner_config: GlobSet,
    test_files: GlobSet,
}

impl TestPaths {
    /// `infra` must already be valid globs (config.toml's reader checks them).
    pub fn new(infra: &[String]) -> Result<TestPaths, String> {
        let config: Vec<String> = RUNNER_CONFIG
            .iter()
            .map(|p| p.to_string())
            .chain(infra.iter().cloned())
            .collect();
        let all: Vec<String> = TEST_FILES
            .iter()
            .chain(BUILD_FILES)
            .map(|p| p.to_string())
            .chain(config.iter().cloned())
            .collect();
        let test_files: Vec<String> = TEST_FILES.iter().map(|p| p.to_string()).collect();
        Ok(TestPaths {
            set: set(&all)?,
            runner_config: set(&config)?,
            test_files: set(&test_files)?,
        })
    }

    /// Whether `path` (worktree-relative) is a test file or test infrastructure.
    pub fn contains(&self, path: &str) -> bool {
        self.set.is_match(path)
    }

    /// Every test path pattern as one set.
    pub fn set(&self) -> &GlobSet {
        &self.set
    }

    /// The test-runner configuration: [`RUNNER_CONFIG`] and `[tests] infra`.
    pub fn runner_config(&self) -> &GlobSet {
        &self.runner_config
    }

    /// What the base oracle runs as the base has it: the test files and the test-runner
    /// configuration, not the build files (a new dependency is the player's to add).
    pub fn oracle_takes_from_base(&self, path: &str) -> bool {
        self.runner_config.is_match(path) || self.test_files.is_match(path)
    }
}

/// The paths an agent step may not change.
#[derive(Debug, Clone)]
pub struct PathScope {
    protect: Vec<String>,
    protect_set: GlobSet,
    writes: Option<(Vec<String>, GlobSet)>,
    /// Exact paths locked for the rest of the run (the tests a red witness accepted).
    locked: GlobSet,
}

impl PathScope {
    /// `protect` and `writes` must already be valid globs (validation reports them with their
    /// location); an invalid one here is an error naming it.
    pub fn new(protect: &[String], writes: Option<&[String]>) -> Result<PathScope, String> {
        Ok(PathScope {
            protect: protect.to_vec(),
            protect_set: set(protect)?,
            writes: match writes {
                Some(patterns) => Some((patterns.to_vec(), set(patterns)?)),
                None => None,
            },
            locked: GlobSet::empty(),
        })
    }

    /// `paths` (exact worktree-relative paths, not globs) may not be changed either: the tests
    /// a red witness accepted (`engine::state::RunState::locked`).
    pub fn locking(mut self, paths: &[String]) -> Result<PathScope, String> {
        let exact: Vec<String> = paths.iter().map(|p| globset::escape(p)).collect();
        self.locked = set(&exact)?;
        Ok(self)
    }

    /// The protected patterns, in the order given.
    pub fn protected(&self) -> &[String] {
        &self.protect
    }

    /// The role's write scope, when it has one.
    pub fn writes(&self) -> Option<&[String]> {
        self.writes
            .as_ref()
            .map(|(patterns, _)| patterns.as_slice())
    }

    /// Of `changed` (worktree-relative paths), those the step was not allowed to change, each
    /// with the reason.
    pub fn out_of_scope<'a>(&self, changed: &'a [String]) -> Vec<(&'a str, OutOfScope)> {
        changed
            .iter()
            .filter_map(|path| {
                if self.locked.is_match(path) {
                    Some((path.as_str(), OutOfScope::Locked))
                } else if self.protect_set.is_match(path) {
                    Some((path.as_str(), OutOfScope::Protected))
                } else if self
                    .writes
                    .as_ref()
                    .is_some_and(|(_, allowed)| !allowed.is_match(path))
                {
                    Some((path.as_str(), OutOfScope::OutsideWrites))
                } else {
                    None
                }
            })
            .collect()
    }
}

/// Why a change was out of scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutOfScope {
    Protected,
    OutsideWrites,
    /// A test the red witness accepted, locked while the implementation makes it pass.
    Locked,
}

impl OutOfScope {
    pub fn describe(self, path: &str) -> String {
        let path = base::quoted::path(path);
        match self {
            OutOfScope::Protected => format!("{path} (protected)"),
            OutOfScope::OutsideWrites => format!("{path} (outside the role's `writes`)"),
            OutOfScope::Locked => format!(
                "{path} (a test the red witness accepted: locked while the implementation makes \
                 it pass)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn protected_paths_are_out_of_scope_whatever_the_role_may_write() {
        let scope = PathScope::new(
            &strings(&["tests/acceptance/**", ".autobuild/**"]),
            Some(&strings(&["src/**", "tests/**"])),
        )
        .unwrap();
        let changed = strings(&[
            "src/lib.rs",
            "tests/unit.rs",
            "tests/acceptance/sq.sh",
            "README.md",
            ".autobuild/config.toml",
        ]);
        let found = scope.out_of_scope(&changed);
        assert_eq!(
            found,
            vec![
                ("tests/acceptance/sq.sh", OutOfScope::Protected),
                ("README.md", OutOfScope::OutsideWrites),
                (".autobuild/config.toml", OutOfScope::Protected),
            ]
        );
    }

    #[test]
    fn locked_paths_are_exact_and_out_of_scope_even_where_the_role_may_write() {
        let scope = PathScope::new(&[], Some(&strings(&["**"])))
            .unwrap()
            .locking(&strings(&["tests/test_[a].sh", "tests/b*.sh"]))
            .unwrap();
        let changed = strings(&[
            "tests/test_[a].sh",
            "tests/test_a.sh",
            "tests/b*.sh",
            "tests/bc.sh",
        ]);
        assert_eq!(
            scope.out_of_scope(&changed),
            vec![
                ("tests/test_[a].sh", OutOfScope::Locked),
                ("tests/b*.sh", OutOfScope::Locked),
            ],
            "locked names are paths, not globs"
        );
    }

    #[test]
    fn a_star_stays_within_one_directory() {
        let scope = PathScope::new(&strings(&["tests/*.sh"]), None).unwrap();
        let changed = strings(&["tests/a.sh", "tests/deep/b.sh"]);
        assert_eq!(scope.out_of_scope(&changed).len(), 1);
    }

    #[test]
    fn without_writes_everything_unprotected_may_change() {
        let scope = PathScope::new(&[], None).unwrap();
        assert!(scope
            .out_of_scope(&strings(&["anything/at/all"]))
            .is_empty());
    }

    #[test]
    fn test_files_and_test_infrastructure_are_recognized() {
        let tests = TestPaths::new(&strings(&["ci/test-env.sh"])).unwrap();
        for path in [
            "tests/sq.sh",
            "src/app/__tests__/a.js",
            "pkg/x_test.go",
            "a/test_b.py",
            "w.spec.ts",
            // Infrastructure that decides what runs and how it is reported.
            "conftest.py",
            "src/pkg/conftest.py",
            "pytest.ini",
            "pyproject.toml",
            "web/package.json",
            "jest.config.js",
            "vitest.config.ts",
            "crates/a/Cargo.toml",
            // `[tests] infra`.
            "ci/test-env.sh",
        ] {
            assert!(tests.contains(path), "{path}");
        }
        for path in ["src/lib.rs", "contest.md", "latest/x.rs", "ci/deploy.sh"] {
            assert!(!tests.contains(path), "{path}");
        }
        // What a hidden check takes from the base: runner configuration, not build files.
        let config = tests.runner_config();
        assert!(config.is_match("src/pkg/conftest.py") && config.is_match("ci/test-env.sh"));
        assert!(!config.is_match("pyproject.toml") && !config.is_match("tests/test_a.py"));
        // What the base oracle takes from the base: test files and runner configuration.
        for (path, from_base) in [
            ("tests/test_a.py", true),
            ("conftest.py", true),
            ("ci/test-env.sh", true),
            ("pyproject.toml", false),
            ("src/lib.rs", false),
        ] {
            assert_eq!(tests.oracle_takes_from_base(path), from_base, "{path}");
        }
    }
}
