//! The ignore entries `autobuild init` proposes for a project's ecosystem: the caches and build
//! output its tools write (bytecode, test caches, dependencies, build directories). A reviewer
//! that runs the tests leaves them in the worktree; the runner removes them after every
//! read-only step, but a repository that ignores them never needs to. Init only proposes them:
//! the user's `.gitignore` is never changed without being asked.

use crate::project::detect::ProjectFiles;

/// Entries per ecosystem, recognised by a file in the project root.
const ECOSYSTEMS: &[(&[&str], &[&str])] = &[
    (
        &[
            "pyproject.toml",
            "setup.py",
            "setup.cfg",
            "pytest.ini",
            "tox.ini",
            "conftest.py",
            "requirements.txt",
        ],
        &["__pycache__/", "*.pyc", ".pytest_cache/"],
    ),
    (&["package.json"], &["node_modules/"]),
    (&["Cargo.toml"], &["target/"]),
];

/// The entries the project's ecosystems want that `gitignore` (the root `.gitignore`'s text,
/// empty when there is none) does not already have as a line, in a stable order.
pub fn missing_ignores(files: &ProjectFiles, gitignore: &str) -> Vec<&'static str> {
    let present: Vec<&str> = gitignore.lines().map(str::trim).collect();
    let mut missing = Vec::new();
    for (markers, entries) in ECOSYSTEMS {
        if !markers.iter().any(|m| files.root_entries.contains(*m)) {
            continue;
        }
        for entry in *entries {
            let bare = entry.trim_end_matches('/');
            let covered = present.iter().any(|line| {
                *line == *entry
                    || *line == bare
                    || *line == format!("/{entry}")
                    || *line == format!("/{bare}")
            });
            if !covered && !missing.contains(entry) {
                missing.push(*entry);
            }
        }
    }
    missing
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(names: &[&str]) -> ProjectFiles {
        ProjectFiles {
            root_entries: names.iter().map(|n| n.to_string()).collect(),
            ..ProjectFiles::default()
        }
    }

    #[test]
    fn proposes_what_the_ecosystem_writes_and_the_file_lacks() {
        let table: &[(&[&str], &str, &[&str])] = &[
            (&["README.md"], "", &[]),
            (
                &["pyproject.toml"],
                "",
                &["__pycache__/", "*.pyc", ".pytest_cache/"],
            ),
            (&["setup.py"], "__pycache__\n*.pyc\n", &[".pytest_cache/"]),
            (
                &["package.json", "Cargo.toml"],
                "/target\n",
                &["node_modules/"],
            ),
            (&["Cargo.toml"], "target/\n", &[]),
        ];
        for (names, gitignore, expected) in table {
            assert_eq!(
                missing_ignores(&files(names), gitignore),
                *expected,
                "{names:?}"
            );
        }
    }
}
