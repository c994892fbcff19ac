//! The corpus of broken workflows: each file in tests/fixtures/workflows/broken/ has one
//! problem, and its first line says where and what (`# expect: <line>: <message fragment>`).
//! Resolving it must fail with exactly that located problem, never a panic; files with several
//! problems must report all of them.

use std::fs;
use std::path::{Path, PathBuf};

use autobuild::diagnostic::Diagnostic;
use autobuild::error::Error;
use autobuild::user_file::source::Layer;
use autobuild::workflow::catalog::{read_source, Catalog, Document};
use autobuild::workflow::Overrides;

fn fixtures(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/workflows")
        .join(dir)
}

/// Resolves a file against the built-in layer only (no user directory, no repository).
fn problems(path: &Path) -> Vec<Diagnostic> {
    let document = Document::parse(read_source(path, None, Layer::File).unwrap());
    match Catalog::builtin().resolve_file(&document, &Overrides::default()) {
        Ok(_) => Vec::new(),
        Err(Error::Invalid(found)) => found.0,
        Err(other) => panic!("{}: not a validation error: {other}", path.display()),
    }
}

fn expectation(path: &Path) -> (usize, String) {
    let text = fs::read_to_string(path).unwrap();
    let first = text.lines().next().unwrap();
    let rest = first.strip_prefix("# expect: ").unwrap_or_else(|| {
        panic!(
            "{}: first line must be `# expect: LINE: TEXT`",
            path.display()
        )
    });
    let (line, fragment) = rest.split_once(": ").unwrap();
    (line.parse().unwrap(), fragment.to_string())
}

#[test]
fn every_broken_file_reports_its_one_located_problem() {
    let mut files: Vec<PathBuf> = fs::read_dir(fixtures("broken"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 16, "the corpus shrank: {files:?}");
    for path in files {
        let (line, fragment) = expectation(&path);
        let found = problems(&path);
        assert_eq!(found.len(), 1, "{}: {found:#?}", path.display());
        let problem = &found[0];
        let shown = problem.to_string();
        assert!(
            problem.message.contains(&fragment),
            "{}: expected `{fragment}` in:\n{shown}",
            path.display()
        );
        assert_eq!(
            problem.location.map(|l| l.line),
            Some(line),
            "{}: wrong line:\n{shown}",
            path.display()
        );
        assert!(
            shown.starts_with(&format!("{}:{line}:", path.display())),
            "{shown}"
        );
        assert!(shown.contains('^'), "no caret:\n{shown}");
    }
}

/// (line, message) of every problem of a file.
fn found(path: &Path) -> Vec<(usize, String)> {
    problems(path)
        .into_iter()
        .map(|d| (d.location.map_or(0, |l| l.line), d.message))
        .collect()
}

#[test]
fn every_type_problem_of_a_file_is_reported() {
    let found = found(&fixtures("several/typed.toml"));
    let expected = [
        (7, "unknown key `modle`"),
        (8, "unknown value `wirte` for `tools`"),
        // A semantic problem of a role that decoded, reported in the same pass.
        (13, "role `coach` is read-only but has the `edit` tool"),
        (
            20,
            "invalid type: string \"none\", expected a non-negative integer",
        ),
        (38, "invalid type: string \"yes\", expected a boolean"),
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (line, message) in expected {
        assert!(
            found.iter().any(|(l, m)| *l == line && m == message),
            "missing {line}: {message} in {found:#?}"
        );
    }
}

#[test]
fn every_semantic_problem_of_a_file_is_reported() {
    let found = found(&fixtures("several/semantic.toml"));
    let expected = [
        (12, "role `coach` is read-only but has the `edit` tool"),
        (19, "`max_iterations` must be at least 1"),
        (20, "step `gate` (uses = \"gate\") has no output `aproved`"),
        (
            23,
            "step `implement` (uses = \"agent\") needs a worktree, but no `worktree` step comes before it",
        ),
        (24, "step `implement` uses unknown role `playr`"),
        (32, "step `report` runs after this expression is evaluated"),
    ];
    assert_eq!(found.len(), expected.len(), "{found:#?}");
    for (line, message) in expected {
        assert!(
            found.iter().any(|(l, m)| *l == line && m == message),
            "missing {line}: {message} in {found:#?}"
        );
    }
}
