//! Which checks the runner runs: the configured `[checks.*]`, plus a detected `test` check when
//! the config names none, so a project works without any config.
//!
//! Detection looks at a small snapshot of the project ([`ProjectFiles`]) read once from disk; the
//! decision itself ([`detect_test`]) is a pure function over that snapshot. The first ecosystem
//! that matches wins, in this order: Cargo, pytest (its configs, `conftest.py`, or test files at
//! the root, under `tests/` or under `test/`), npm (when `scripts.test` is not npm's placeholder;
//! run with pnpm or yarn when their lock file is there), Go (`go.mod` or `go.work`), a Makefile
//! `test` target, then a Makefile `check` target. A polyglot project that wants something else
//! declares `[checks.test]`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::time::Duration;

use super::config::Config;

/// The timeout of a check that declares none.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(10 * 60);

/// The check every profile's `checks.test` requirement refers to.
pub const TEST_CHECK: &str = "test";

/// Root files whose content detection reads.
const INSPECTED_FILES: [&str; 6] = [
    "pyproject.toml",
    "setup.cfg",
    "tox.ini",
    "package.json",
    "Makefile",
    "makefile",
];

/// How deep `tests/` and `test/` are searched for Python test files.
const TESTS_DIR_DEPTH: usize = 3;

/// The directories whose file names detection collects, a few levels deep.
const TEST_DIRS: [&str; 2] = ["tests", "test"];

/// What detection knows about a project directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProjectFiles {
    /// Names of the entries in the project root.
    pub root_entries: BTreeSet<String>,
    /// Contents of the [`INSPECTED_FILES`] that exist and are readable.
    pub contents: BTreeMap<String, String>,
    /// File names found under `tests/` or `test/` (a few levels deep).
    pub tests_dir_files: BTreeSet<String>,
}

impl ProjectFiles {
    /// Reads the snapshot of `root`; unreadable entries are treated as absent.
    pub fn read(root: &Path) -> ProjectFiles {
        let mut files = ProjectFiles::default();
        if let Ok(entries) = fs::read_dir(root) {
            files.root_entries = entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
        }
        for name in INSPECTED_FILES {
            if files.root_entries.contains(name) {
                // Through the one reader: a FIFO or device under such a name is skipped,
                // never waited on.
                if let Ok(text) = base::user_file::read(&root.join(name), Path::new(name)) {
                    files.contents.insert(name.to_string(), text);
                }
            }
        }
        for dir in TEST_DIRS {
            collect_names(&root.join(dir), TESTS_DIR_DEPTH, &mut files.tests_dir_files);
        }
        files
    }

    fn has(&self, name: &str) -> bool {
        self.root_entries.contains(name)
    }

    fn content(&self, name: &str) -> Option<&str> {
        self.contents.get(name).map(String::as_str)
    }
}

fn collect_names(dir: &Path, depth: usize, out: &mut BTreeSet<String>) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && depth > 1 {
            collect_names(&entry.path(), depth - 1, out);
        } else if !is_dir {
            out.insert(entry.file_name().to_string_lossy().into_owned());
        }
    }
}

/// A detected test command and why it was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Detection {
    pub cmd: &'static str,
    pub reason: &'static str,
}

/// The project's test command, when its layout makes it evident.
pub fn detect_test(files: &ProjectFiles) -> Option<Detection> {
    let found = |cmd, reason| Some(Detection { cmd, reason });
    if files.has("Cargo.toml") {
        return found("cargo test", "Cargo.toml found");
    }
    if let Some(reason) = pytest_evidence(files) {
        return found("python -m pytest -q", reason);
    }
    if files.content("package.json").is_some_and(has_real_npm_test) {
        return Some(if files.has("pnpm-lock.yaml") {
            Detection {
                cmd: "pnpm test",
                reason: "package.json has a test script; pnpm-lock.yaml found",
            }
        } else if files.has("yarn.lock") {
            Detection {
                cmd: "yarn test",
                reason: "package.json has a test script; yarn.lock found",
            }
        } else {
            Detection {
                cmd: "npm test",
                reason: "package.json has a test script",
            }
        });
    }
    if files.has("go.mod") {
        return found("go test ./...", "go.mod found");
    }
    if files.has("go.work") {
        return found("go test ./...", "go.work found");
    }
    let makefile = files.content("Makefile").or(files.content("makefile"));
    if makefile.is_some_and(|m| has_target(m, TEST_CHECK)) {
        return found("make test", "Makefile has a test target");
    }
    if makefile.is_some_and(|m| has_target(m, "check")) {
        return found("make check", "Makefile has a check target");
    }
    None
}

fn pytest_evidence(files: &ProjectFiles) -> Option<&'static str> {
    let contains =
        |name: &str, needle: &str| files.content(name).is_some_and(|t| t.contains(needle));
    if files.has("pytest.ini") {
        Some("pytest.ini found")
    } else if contains("pyproject.toml", "[tool.pytest") {
        Some("pyproject.toml configures pytest")
    } else if contains("setup.cfg", "[tool:pytest]") {
        Some("setup.cfg configures pytest")
    } else if contains("tox.ini", "[pytest]") {
        Some("tox.ini configures pytest")
    } else if files.has("conftest.py") {
        Some("conftest.py found")
    } else if files.tests_dir_files.iter().any(|n| is_python_test_file(n)) {
        Some("tests/ or test/ holds pytest files")
    } else if files
        .root_entries
        .iter()
        .any(|n| n != "conftest.py" && is_python_test_file(n))
    {
        Some("test_*.py files at the root")
    } else {
        None
    }
}

fn is_python_test_file(name: &str) -> bool {
    name == "conftest.py"
        || (name.ends_with(".py") && (name.starts_with("test_") || name.ends_with("_test.py")))
}

/// Whether `package.json` declares a test script other than `npm init`'s placeholder.
fn has_real_npm_test(package_json: &str) -> bool {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(package_json) else {
        return false;
    };
    value
        .pointer("/scripts/test")
        .and_then(|v| v.as_str())
        .is_some_and(|script| !script.trim().is_empty() && !script.contains("no test specified"))
}

/// Whether a Makefile defines `target` (`test:` or `test other:`, not `test := …`).
fn has_target(makefile: &str, target: &str) -> bool {
    makefile.lines().any(|line| {
        if line.starts_with([' ', '\t', '#', '.']) {
            return false;
        }
        let Some((targets, rest)) = line.split_once(':') else {
            return false;
        };
        !rest.starts_with('=') && targets.split_whitespace().any(|t| t == target)
    })
}

/// Where an effective check comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckOrigin {
    /// Declared in `[checks.<name>]`.
    Configured,
    /// Detected from the project's files, for this reason.
    Detected(&'static str),
}

/// A check the runner will run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveCheck {
    pub name: String,
    pub cmd: String,
    pub timeout: Duration,
    pub origin: CheckOrigin,
    /// `[checks.<name>] hidden = true`: runs with the `[scope] hidden` files.
    pub hidden: bool,
    /// Blocks approval whatever the profile requires: a configured check that does not say
    /// `required = false`, and every hidden check. A detected check gates where the profile
    /// requires it.
    pub required: bool,
    /// `[checks.<name>] results`: the JUnit XML file it writes.
    pub results: Option<String>,
}

impl EffectiveCheck {
    /// Whether its failure blocks approval under a gate that requires `required` (which lists
    /// the checks that gate on their own too: `engine::plan::profile_checks::gate_requirements`).
    pub fn gates(&self, required: &[crate::profile::Requirement]) -> bool {
        required.contains(&crate::profile::Requirement::Check(self.name.clone()))
    }
}

/// The configured checks plus a detected `test` check when none is configured; `test` first,
/// then the others by name.
pub fn effective_checks(config: &Config, root: &Path) -> Vec<EffectiveCheck> {
    let detected = if config.checks.contains_key(TEST_CHECK) {
        None
    } else {
        detect_test(&ProjectFiles::read(root))
    };
    combine_checks(config, detected)
}

/// [`effective_checks`] with the detection already made.
pub fn combine_checks(config: &Config, detected: Option<Detection>) -> Vec<EffectiveCheck> {
    let mut checks: Vec<EffectiveCheck> = config
        .checks
        .iter()
        .map(|(name, check)| EffectiveCheck {
            name: name.clone(),
            cmd: check.cmd.clone(),
            timeout: check.timeout.unwrap_or(DEFAULT_CHECK_TIMEOUT),
            origin: CheckOrigin::Configured,
            hidden: check.hidden,
            required: check.hidden || check.required.unwrap_or(true),
            results: check.results.clone(),
        })
        .collect();
    if let (false, Some(detection)) = (config.checks.contains_key(TEST_CHECK), detected) {
        checks.push(EffectiveCheck {
            name: TEST_CHECK.to_string(),
            cmd: detection.cmd.to_string(),
            timeout: DEFAULT_CHECK_TIMEOUT,
            origin: CheckOrigin::Detected(detection.reason),
            hidden: false,
            required: false,
            results: None,
        });
    }
    checks.sort_by(|a, b| (a.name != TEST_CHECK, &a.name).cmp(&(b.name != TEST_CHECK, &b.name)));
    checks
}

#[cfg(test)]
mod tests;
