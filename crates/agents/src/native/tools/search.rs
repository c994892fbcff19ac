//! `grep` and `glob`: find files and lines in the worktree the way git sees it — `.gitignore`d
//! and hidden files are skipped (the `ignore` crate, ripgrep's walker), so a model is not
//! flooded with build output or dependencies.

use std::fs;
use std::path::Path;

use globset::GlobBuilder;
use regex::RegexBuilder;
use serde::Deserialize;

use super::paths::{inside, shown};
use super::Problem;

/// Matches `grep` lists at most.
const MAX_MATCHES: usize = 500;
/// Paths `glob` lists at most.
const MAX_PATHS: usize = 1000;
/// Characters of a matching line shown.
const MAX_LINE: usize = 500;

#[derive(Debug, Deserialize)]
pub struct GrepArgs {
    /// A regular expression (Rust `regex` syntax).
    pub pattern: String,
    /// A directory or file to search, relative to the worktree (default: all of it).
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose path matches this glob (e.g. `*.rs`).
    #[serde(default)]
    pub glob: Option<String>,
    #[serde(default)]
    pub case_insensitive: bool,
}

#[derive(Debug, Deserialize)]
pub struct GlobArgs {
    /// A glob over paths relative to the worktree, e.g. `src/**/*.rs`.
    pub pattern: String,
}

/// The files under `root` that git would see, in a stable order.
fn files(worktree: &Path, root: &Path) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = ignore::WalkBuilder::new(root)
        .require_git(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
        .filter_map(Result::ok)
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .map(|entry| entry.into_path())
        .filter(|path| path.starts_with(worktree))
        .collect();
    found.sort();
    found
}

pub fn grep(worktree: &Path, args: GrepArgs) -> Result<String, Problem> {
    let regex = RegexBuilder::new(&args.pattern)
        .case_insensitive(args.case_insensitive)
        .build()
        .map_err(|e| format!("invalid pattern: {e}"))?;
    let filter = args
        .glob
        .as_deref()
        .map(|glob| {
            GlobBuilder::new(glob)
                .literal_separator(false)
                .build()
                .map(|g| g.compile_matcher())
                .map_err(|e| format!("invalid glob: {e}"))
        })
        .transpose()?;
    let root = inside(worktree, args.path.as_deref().unwrap_or("."))?;
    let mut out = Vec::new();
    'files: for file in files(worktree, &root) {
        let relative = shown(worktree, &file);
        let name_matches = |m: &globset::GlobMatcher| {
            m.is_match(&relative) || file.file_name().is_some_and(|name| m.is_match(name))
        };
        if filter.as_ref().is_some_and(|m| !name_matches(m)) {
            continue;
        }
        let Ok(bytes) = fs::read(&file) else { continue };
        if bytes.contains(&0) {
            continue;
        }
        for (index, line) in String::from_utf8_lossy(&bytes).lines().enumerate() {
            if regex.is_match(line) {
                if out.len() == MAX_MATCHES {
                    out.push(format!(
                        "(stopped at {MAX_MATCHES} matches; narrow the search)"
                    ));
                    break 'files;
                }
                let line = base::text::elide(line, MAX_LINE);
                out.push(format!("{relative}:{}:{line}", index + 1));
            }
        }
    }
    Ok(if out.is_empty() {
        "no matches".to_string()
    } else {
        out.join("\n")
    })
}

pub fn glob(worktree: &Path, args: GlobArgs) -> Result<String, Problem> {
    let matcher = GlobBuilder::new(&args.pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| format!("invalid glob: {e}"))?
        .compile_matcher();
    let mut out: Vec<String> = files(worktree, worktree)
        .iter()
        .map(|file| shown(worktree, file))
        .filter(|relative| matcher.is_match(relative))
        .collect();
    if out.len() > MAX_PATHS {
        out.truncate(MAX_PATHS);
        out.push(format!(
            "(stopped at {MAX_PATHS} paths; narrow the pattern)"
        ));
    }
    Ok(if out.is_empty() {
        "no files match".to_string()
    } else {
        out.join("\n")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignored_files_are_not_searched_or_listed() {
        let dir = tempfile::tempdir().unwrap();
        let wt = dir.path().canonicalize().unwrap();
        fs::create_dir_all(wt.join("src")).unwrap();
        fs::create_dir_all(wt.join("target")).unwrap();
        fs::write(wt.join(".gitignore"), "target/\n").unwrap();
        fs::write(wt.join("src/lib.rs"), "fn greet() {}\n// TODO greet\n").unwrap();
        fs::write(wt.join("target/out.rs"), "fn greet() {}\n").unwrap();

        let found = grep(
            &wt,
            GrepArgs {
                pattern: "greet".into(),
                path: None,
                glob: Some("*.rs".into()),
                case_insensitive: false,
            },
        )
        .unwrap();
        assert_eq!(
            found,
            "src/lib.rs:1:fn greet() {}\nsrc/lib.rs:2:// TODO greet"
        );
        let listed = glob(
            &wt,
            GlobArgs {
                pattern: "**/*.rs".into(),
            },
        )
        .unwrap();
        assert_eq!(listed, "src/lib.rs");
        assert!(grep(
            &wt,
            GrepArgs {
                pattern: "(".into(),
                path: None,
                glob: None,
                case_insensitive: false
            }
        )
        .is_err());
        assert!(grep(
            &wt,
            GrepArgs {
                pattern: "x".into(),
                path: Some("..".into()),
                glob: None,
                case_insensitive: false
            }
        )
        .is_err());
    }
}
