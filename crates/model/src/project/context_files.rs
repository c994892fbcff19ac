//! Context files (README.md): files every role is shown — `[context] files` in the config
//! and a task's `context_files:` — their paths, with their contents inlined up to a bound.
//!
//! Each path is relative to the repository root and must name a regular file there; a missing
//! one stops the run before it starts, with the problem located where the path was written
//! (the config entry or the task's `context_files:` key). The files are read from the main
//! checkout when the run is planned, once.

use std::io::Read;
use std::path::Path;

use crate::workflow::context::ContextFileContext;
use base::diagnostic::Diagnostic;

/// At most this much of one file is inlined into prompts.
pub const FILE_LIMIT: usize = 16 * 1024;

/// At most this much of all the files together is inlined; the rest are listed by path.
pub const TOTAL_LIMIT: usize = 64 * 1024;

/// A context file as written, with the problem to report (located where it was written) if it
/// does not exist.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextFile {
    pub path: String,
    pub missing: Diagnostic,
}

/// A blank entry: the stand-in for a refused path while the config is decoded.
impl Default for ContextFile {
    fn default() -> ContextFile {
        ContextFile {
            path: String::new(),
            missing: Diagnostic::new("", ""),
        }
    }
}

/// Whether `path` leads out of the repository: absolute, or through `..`.
pub fn outside_repository(path: &str) -> bool {
    let p = Path::new(path);
    p.is_absolute()
        || p.components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
}

/// What is wrong with `path` as a context file path, before looking at the disk.
pub fn path_problem(path: &str) -> Option<String> {
    if path.trim().is_empty() {
        return Some("a context file path is empty".into());
    }
    if outside_repository(path) {
        return Some(format!(
            "context file `{path}` must be relative to the repository root, inside it"
        ));
    }
    None
}

/// The problem of a missing context file, at `at` (a diagnostic pointing where it is written).
pub fn missing(at: Diagnostic, path: &str) -> Diagnostic {
    Diagnostic {
        message: format!("context file `{path}` does not exist"),
        help: Some(
            "paths are relative to the repository root; commit the file or remove the entry".into(),
        ),
        ..at
    }
}

/// The files' paths and bounded contents for prompts, and a blocker for each that is not a
/// regular file under `root`. A path listed twice is shown once.
pub fn load(root: &Path, files: &[ContextFile]) -> (Vec<ContextFileContext>, Vec<String>) {
    let mut shown: Vec<ContextFileContext> = Vec::new();
    let mut blockers = Vec::new();
    let mut budget = TOTAL_LIMIT;
    for file in files {
        if shown.iter().any(|s| s.path == file.path) {
            continue;
        }
        let full = root.join(&file.path);
        let regular = std::fs::symlink_metadata(&full).is_ok_and(|m| m.file_type().is_file());
        let bytes = regular
            .then(|| read_head(&full, FILE_LIMIT.min(budget)))
            .flatten();
        let Some((bytes, size)) = bytes else {
            blockers.push(file.missing.to_string());
            continue;
        };
        budget -= bytes.len();
        let truncated = (bytes.len() as u64) < size;
        let mut content = String::from_utf8_lossy(&bytes).into_owned();
        if truncated {
            // A cut inside a multi-byte character shows as one replacement character.
            content.push_str(&format!(
                "\n[… cut: the file has {size} bytes, the first {} are shown; read the rest yourself]",
                bytes.len()
            ));
        }
        shown.push(ContextFileContext {
            path: file.path.clone(),
            content,
            truncated,
        });
    }
    (shown, blockers)
}

/// The first `limit` bytes of the file and its size.
fn read_head(path: &Path, limit: usize) -> Option<(Vec<u8>, u64)> {
    let file = base::user_file::open_regular(path).ok()?;
    let size = file.metadata().ok()?.len();
    let mut bytes = Vec::new();
    file.take(limit as u64).read_to_end(&mut bytes).ok()?;
    Some((bytes, size))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(path: &str) -> ContextFile {
        ContextFile {
            path: path.into(),
            missing: missing(Diagnostic::new("t.md", ""), path),
        }
    }

    #[test]
    fn contents_are_inlined_up_to_a_bound_and_missing_files_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("small.md"), "small").unwrap();
        std::fs::write(dir.path().join("big.md"), "x".repeat(FILE_LIMIT + 10)).unwrap();
        std::fs::create_dir(dir.path().join("dir")).unwrap();
        let (shown, blockers) = load(
            dir.path(),
            &[
                file("small.md"),
                file("big.md"),
                file("gone.md"),
                file("dir"),
                file("small.md"),
            ],
        );
        assert_eq!(shown.len(), 2);
        assert_eq!(shown[0].content, "small");
        assert!(!shown[0].truncated);
        assert!(shown[1].truncated);
        assert!(shown[1].content.ends_with(&format!(
            "[… cut: the file has {} bytes, the first {FILE_LIMIT} are shown; read the rest yourself]",
            FILE_LIMIT + 10
        )));
        assert_eq!(blockers.len(), 2, "{blockers:?}");
        assert!(blockers[0].contains("context file `gone.md` does not exist"));
        assert!(blockers[1].contains("context file `dir` does not exist"));
    }

    #[test]
    fn paths_stay_inside_the_repository() {
        assert!(path_problem("docs/a.md").is_none());
        assert!(path_problem("/etc/passwd").is_some());
        assert!(path_problem("../x").is_some());
        assert!(path_problem(" ").is_some());
    }
}
