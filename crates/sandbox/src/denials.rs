//! The sandbox refusals a process's output shows.
//!
//! The kernel refuses a write outside the writable paths with `EROFS`, which programs report
//! as "Read-only file system" (`sh: cannot create /x: Read-only file system`, Python's
//! `[Errno 30] Read-only file system: '/x'`, Node's `EROFS: read-only file system, open '/x'`).
//! Landlock refuses with `EACCES` ("Permission denied"), which a program also prints for
//! reasons of its own, so under Landlock only a line that also names an absolute path outside
//! the writable ones counts as a refusal.
//! Nothing else records the refusal, so the runner looks for those words in the transcript or
//! check log and reports the lines it finds. This is best effort by nature: a program that
//! swallows the error, or prints it in another language, leaves nothing to find.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use base::text::floor_char_boundary;

use super::{Backend, Confinement};

/// At most this many refusals are reported per process.
const MAX_REPORTED: usize = 5;

/// Characters of context kept around a refusal found inside a long line (a JSON event).
const CONTEXT: usize = 120;

/// The words each backend's refusals are printed with, lower case.
fn markers(backend: &Backend) -> &'static [&'static str] {
    match backend {
        Backend::Bwrap { .. } => &["read-only file system", "erofs"],
        Backend::Landlock { .. } => &["permission denied", "eacces"],
    }
}

/// Whether `line` names a path outside `writable`, absolute or leaving the working directory
/// (`../`) (always true for bwrap, whose refusal words are the sandbox's alone).
fn outside(line: &str, backend: &Backend, writable: &[PathBuf]) -> bool {
    if let Backend::Bwrap { .. } = backend {
        return true;
    }
    let separators = |c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '\'' | '"' | '`' | '(' | ')' | ',' | '‘' | '’' | '“' | '”'
            )
    };
    line.split(separators)
        .map(|token| token.trim_end_matches([':', '.', ';']))
        .any(|token| {
            token.starts_with("../")
                || (token.starts_with('/')
                    && token.len() > 1
                    && !writable.iter().any(|dir| lexical(token).starts_with(dir)))
        })
}

/// `path` with its `.` and `..` components resolved by name.
fn lexical(path: &str) -> PathBuf {
    let mut resolved = PathBuf::new();
    for component in Path::new(path).components() {
        match component {
            std::path::Component::ParentDir => {
                resolved.pop();
            }
            std::path::Component::CurDir => {}
            other => resolved.push(other),
        }
    }
    resolved
}

/// The distinct refusals of `confinement` in the file at `path` (nothing when it cannot be
/// read).
pub fn in_file(path: &Path, confinement: &Confinement) -> Vec<String> {
    let Ok(file) = File::open(path) else {
        return Vec::new();
    };
    let backend = &confinement.backend;
    let writable = confinement.writable_paths();
    let markers = markers(backend);
    let mut found = Vec::new();
    let mut reader = BufReader::new(file);
    let mut line = Vec::new();
    while found.len() < MAX_REPORTED {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&line);
                let found_one =
                    refusal(&line, markers).filter(|_| outside(&line, backend, &writable));
                if let Some(refusal) = found_one {
                    if !found.contains(&refusal) {
                        found.push(refusal);
                    }
                }
            }
        }
    }
    found
}

/// The refusal `line` reports, trimmed to the part around it.
fn refusal(line: &str, markers: &[&str]) -> Option<String> {
    // ASCII lowering keeps byte offsets, so `at` is an offset into `line` too.
    let lower = line.to_ascii_lowercase();
    let at = markers.iter().find_map(|marker| lower.find(marker))?;
    let start = floor_char_boundary(line, at.saturating_sub(CONTEXT));
    let end = floor_char_boundary(line, at + CONTEXT);
    let excerpt = line[start..end].trim();
    let mut text = String::new();
    if start > 0 {
        text.push('…');
    }
    text.push_str(excerpt);
    if end < line.trim_end().len() {
        text.push('…');
    }
    Some(text)
}

/// The note for `refusals` (none when there are none).
pub fn note(refusals: &[String]) -> Option<String> {
    if refusals.is_empty() {
        return None;
    }
    Some(format!(
        "the sandbox refused writes outside the writable paths: {} (if this is needed, add the \
         path to [sandbox] writable in .autobuild/config.toml)",
        refusals.join(" | ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Mounts;

    #[test]
    fn refusals_are_found_once_and_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("t.log");
        let long = format!(
            "{{\"content\":\"{}EROFS: read-only file system, open '/home/u/x'{}\"}}\n",
            "a".repeat(500),
            "b".repeat(500)
        );
        std::fs::write(
            &log,
            format!(
                "ok\nsh: 1: cannot create /repo/beside.txt: Read-only file system\n\
                 sh: 1: cannot create /repo/beside.txt: Read-only file system\n{long}"
            ),
        )
        .unwrap();
        let bwrap = Confinement::new(
            Backend::Bwrap {
                path: PathBuf::from("/usr/bin/bwrap"),
                version: String::new(),
            },
            Mounts::default(),
        );
        let found = in_file(&log, &bwrap);
        assert_eq!(found.len(), 2, "{found:?}");
        assert_eq!(
            found[0],
            "sh: 1: cannot create /repo/beside.txt: Read-only file system"
        );
        assert!(found[1].starts_with('…') && found[1].ends_with('…'));
        assert!(found[1].contains("open '/home/u/x'"));
        assert!(found[1].len() < 300);
        assert!(note(&found).unwrap().contains("[sandbox] writable"));
        assert_eq!(note(&[]), None);
        assert!(in_file(&dir.path().join("missing"), &bwrap).is_empty());
        let landlock = Confinement::new(
            Backend::Landlock { abi: 7 },
            Mounts {
                writable: vec![PathBuf::from("/w")],
                ..Mounts::default()
            },
        );
        std::fs::write(
            &log,
            "mkdir: cannot create directory ‘/home/u/.cache/x’: Permission denied\n\
             PermissionError: [Errno 13] Permission denied: '/w/locked.txt'\n\
             sh: 1: cannot open secret: Permission denied\n\
             sh: 1: cannot create /w/../beside.txt: Permission denied\nok\n",
        )
        .unwrap();
        let found = in_file(&log, &landlock);
        assert_eq!(found.len(), 2, "{found:?}");
        assert!(found[0].contains("/home/u/.cache/x"), "{found:?}");
        assert!(found[1].contains("/w/../beside.txt"), "{found:?}");
        assert!(in_file(&log, &bwrap).is_empty());
    }
}
