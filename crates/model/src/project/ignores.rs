//! The ignore entries `autobuild init` proposes for a project's ecosystem: the caches and build
//! output its tools write (bytecode, test caches, dependencies, build directories). A reviewer
//! that runs the tests leaves them in the worktree; the runner removes them after every
//! read-only step, but a repository that ignores them never needs to. Init only proposes them:
//! the user's `.gitignore` is never changed without being asked.

//!
//! The other way round, [`shared_but_ignored`]: a project whose own rules ignore `.autobuild/`
//! (a `.gitignore` holding `.*`, say) runs fine, but its config, tasks and agent scripts never
//! reach a commit, so teammates and CI never get them. `init` and `doctor` say so, with the
//! lines that fix it.

use crate::project::detect::ProjectFiles;
use crate::project::Layout;

/// The lines that make git see `.autobuild/` again under rules that ignore it (`.*`, `.a*`):
/// the directory, and its `.gitignore` (a rule like `.*` matches that name at every level),
/// which still keeps `runs/` and `worktrees/` out. (`!/.autobuild/**` would be simpler, but
/// libgit2 then stops honouring the deeper `.gitignore`, git does not.)
pub const UNIGNORE: [&str; 2] = ["!/.autobuild/", "!/.autobuild/.gitignore"];

/// At most this many files of `.autobuild/` are asked about.
const ASKED: usize = 200;

/// The files of `.autobuild/` meant to be committed (everything but run records and worktrees)
/// that git ignores in `layout`'s repository, relative to the root; empty when nothing is
/// ignored or the repository cannot be read.
pub fn shared_but_ignored(layout: &Layout) -> Vec<String> {
    let Ok(repo) = git2::Repository::open(layout.root()) else {
        return Vec::new();
    };
    let mut pending = vec![layout.dir()];
    let mut files = Vec::new();
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if path != layout.runs() && path != layout.worktrees() {
                    pending.push(path);
                }
            } else if files.len() < ASKED {
                files.push(path);
            }
        }
    }
    let mut ignored: Vec<String> = files
        .iter()
        .filter_map(|path| path.strip_prefix(layout.root()).ok())
        .filter(|relative| repo.is_path_ignored(relative).unwrap_or(false))
        .map(|relative| relative.display().to_string())
        .collect();
    ignored.sort();
    ignored
}

/// The message for [`shared_but_ignored`]'s `paths`: what teammates miss, and the fix.
pub fn ignored_warning(paths: &[String]) -> String {
    let shown: Vec<&str> = paths.iter().take(3).map(String::as_str).collect();
    let more = match paths.len().saturating_sub(shown.len()) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    format!(
        "git ignores {}{more} (a rule in .gitignore or .git/info/exclude), so they are never \
         committed and teammates and CI never get them; add these lines to .gitignore: {}",
        shown.join(", "),
        UNIGNORE.join(" ")
    )
}

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

    #[test]
    fn files_of_autobuild_a_project_rule_ignores_are_named_and_the_fix_works() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git2::Repository::init(root).unwrap();
        let layout = Layout::new(root);
        std::fs::create_dir_all(layout.tasks()).unwrap();
        std::fs::create_dir_all(layout.runs().join("T")).unwrap();
        std::fs::write(layout.config(), "").unwrap();
        std::fs::write(layout.tasks().join("TASK-1.md"), "").unwrap();
        std::fs::write(layout.runs().join("T/state.json"), "").unwrap();
        std::fs::write(layout.gitignore(), "runs/\nworktrees/\n").unwrap();
        assert_eq!(shared_but_ignored(&layout), Vec::<String>::new());

        std::fs::write(root.join(".gitignore"), ".*\n!.gitignore\n").unwrap();
        let ignored = shared_but_ignored(&layout);
        assert_eq!(
            ignored,
            [".autobuild/config.toml", ".autobuild/tasks/TASK-1.md"]
        );
        assert!(ignored_warning(&ignored).contains("!/.autobuild/ !/.autobuild/.gitignore"));
        std::fs::write(root.join(".gitignore"), ".*\n").unwrap();
        assert_eq!(shared_but_ignored(&layout).len(), 3);

        let fixed = format!(".*\n{}\n", UNIGNORE.join("\n"));
        std::fs::write(root.join(".gitignore"), fixed).unwrap();
        assert_eq!(shared_but_ignored(&layout), Vec::<String>::new());
        // The run records stay ignored by .autobuild/.gitignore.
        let repo = git2::Repository::open(root).unwrap();
        assert!(repo
            .is_path_ignored(".autobuild/runs/T/state.json")
            .unwrap());
    }

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
