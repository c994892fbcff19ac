//! Reading the files users write — workflows, prompts, profiles, features, tasks and
//! `.autobuild/config.toml` — with two limits every reader shares.
//!
//! - **Size cap: [`MAX_BYTES`] (1 MiB).** These are hand-written files of a few kilobytes; a
//!   file a thousand times larger is a mistake (a log or a generated dump saved under the wrong
//!   name) or an attack, and parsing it would cost memory in proportion. The cap is checked
//!   before reading (from the file's metadata) and while reading (at most one byte more than
//!   the cap is ever read), so a file that grows, or one whose metadata reports no size, cannot
//!   get past it.
//! - **UTF-8.** Every format involved is text; a file that is not UTF-8 gets a located error
//!   (`path:line:col`, at the first invalid byte) instead of a bare I/O error.
//!
//! Both are problems *in the file* a user wrote, so they are [`Diagnostic`]s (exit 2, like any
//! other invalid input), not I/O failures (exit 1). A missing file and an unreadable one keep
//! their own variants: callers decide what absence means (the config file is optional).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use crate::diagnostic::{Diagnostic, Location};
use crate::error::Error;

/// The largest file autobuild reads as user input, in bytes.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Why a user file could not be read as text.
#[derive(Debug)]
pub enum ReadError {
    /// The file does not exist.
    NotFound(io::Error),
    /// It exists but cannot be read (permissions, a directory, …).
    Io(io::Error),
    /// It is larger than [`MAX_BYTES`].
    TooLarge(Box<Diagnostic>),
    /// It is not UTF-8; `lossy` is its text with invalid bytes replaced, for callers that can
    /// still tell something useful from it (the `id:` line of a task file).
    NotUtf8 {
        problem: Box<Diagnostic>,
        lossy: String,
    },
}

impl ReadError {
    /// The located problem, when the file was read but is not acceptable input.
    pub fn problem(&self) -> Option<&Diagnostic> {
        match self {
            ReadError::TooLarge(problem) | ReadError::NotUtf8 { problem, .. } => Some(&**problem),
            ReadError::NotFound(_) | ReadError::Io(_) => None,
        }
    }

    /// The command-level error: the located problem (exit 2), or `action` and the I/O error.
    pub fn into_error(self, action: &'static str, path: &Path) -> Error {
        match self {
            ReadError::NotFound(e) | ReadError::Io(e) => Error::io(action, path, e),
            ReadError::TooLarge(problem) | ReadError::NotUtf8 { problem, .. } => {
                Error::from(*problem)
            }
        }
    }
}

/// Reads the file at `path` as UTF-8 text of at most [`MAX_BYTES`]; problems name the file
/// as `shown` (usually relative to the repository root).
pub fn read(path: &Path, shown: &Path) -> Result<String, ReadError> {
    let file = File::open(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound(e),
        _ => ReadError::Io(e),
    })?;
    let declared = file.metadata().map_err(ReadError::Io)?.len();
    if declared > MAX_BYTES {
        return Err(ReadError::TooLarge(too_large(shown, declared)));
    }
    let mut bytes = Vec::new();
    file.take(MAX_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadError::Io)?;
    if bytes.len() as u64 > MAX_BYTES {
        // The metadata said otherwise (a growing file, a device): all we know is "over".
        return Err(ReadError::TooLarge(too_large(shown, bytes.len() as u64)));
    }
    text(shown, bytes)
}

/// `bytes` as text, or the located problem with the first invalid byte.
fn text(shown: &Path, bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let bytes = e.into_bytes();
        let bad = bytes.get(at).copied().unwrap_or_default();
        // The location counts characters of the valid prefix, so it is exact.
        let prefix = String::from_utf8_lossy(&bytes[..at]);
        let location = Location::from_offset(&prefix, prefix.len());
        let lossy = String::from_utf8_lossy(&bytes).into_owned();
        let problem = Diagnostic::at(
            shown,
            &lossy,
            location,
            format!("the file is not valid UTF-8 (byte 0x{bad:02X} at offset {at})"),
        )
        .with_help("autobuild reads workflow, profile, prompt, feature, config and task files as UTF-8 text; save the file as UTF-8");
        ReadError::NotUtf8 {
            problem: Box::new(problem),
            lossy,
        }
    })
}

fn too_large(shown: &Path, size: u64) -> Box<Diagnostic> {
    let problem = Diagnostic::new(
        shown,
        format!(
            "the file is {size} bytes ({}); autobuild reads such files up to {} ({MAX_BYTES} bytes)",
            human(size),
            human(MAX_BYTES)
        ),
    )
    .with_help(
        "workflow, profile, prompt, feature, config and task files are hand-written text of a few kilobytes; check that this is the file you meant, or split it",
    );
    Box::new(problem)
}

/// `1 MiB`, `2.5 MiB`, `900 KiB`, `12 bytes`.
fn human(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = KIB * KIB;
    let scaled = |unit: u64, name: &str| {
        let whole = bytes / unit;
        let rest = bytes % unit;
        // A size that is not a whole number of units shows a decimal, so a file one byte
        // over the cap never reads as exactly the cap.
        if rest == 0 {
            format!("{whole} {name}")
        } else {
            format!("{whole}.{} {name}", rest * 10 / unit)
        }
    };
    if bytes >= MIB {
        scaled(MIB, "MiB")
    } else if bytes >= KIB {
        scaled(KIB, "KiB")
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &tempfile::TempDir, name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn reads_ordinary_text_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "a.toml", b"name = \"x\"\n");
        assert_eq!(read(&path, Path::new("a.toml")).unwrap(), "name = \"x\"\n");
        let full = vec![b'#'; MAX_BYTES as usize];
        let path = write(&dir, "full.toml", &full);
        assert_eq!(
            read(&path, Path::new("full.toml")).unwrap().len(),
            full.len()
        );
    }

    #[test]
    fn a_file_over_the_cap_is_refused_naming_its_size_and_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "big.yaml", &vec![b'#'; MAX_BYTES as usize + 1]);
        let err = read(&path, Path::new(".autobuild/workflows/big.yaml")).unwrap_err();
        let problem = err.problem().unwrap().to_string();
        assert!(
            problem.starts_with(".autobuild/workflows/big.yaml: the file is 1048577 bytes (1.0 MiB); autobuild reads such files up to 1 MiB (1048576 bytes)"),
            "{problem}"
        );
        assert_eq!(err.into_error("cannot read", &path).exit_code(), 2);
    }

    #[test]
    fn invalid_utf8_is_located_at_the_first_bad_byte() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(&dir, "c.toml", b"[checks]\nx = \"\xc3\xa9\xff\"\n");
        let err = read(&path, Path::new(".autobuild/config.toml")).unwrap_err();
        let problem = err.problem().unwrap();
        assert_eq!(problem.location, Some(Location { line: 2, column: 7 }));
        assert!(
            problem.to_string().starts_with(
                ".autobuild/config.toml:2:7: the file is not valid UTF-8 (byte 0xFF at offset 16)"
            ),
            "{problem}"
        );
        let ReadError::NotUtf8 { lossy, .. } = err else {
            panic!("not a UTF-8 error");
        };
        assert!(lossy.starts_with("[checks]"));
    }

    #[test]
    fn absence_and_other_io_errors_keep_their_kind() {
        let dir = tempfile::tempdir().unwrap();
        let missing = read(&dir.path().join("nope"), Path::new("nope")).unwrap_err();
        assert!(matches!(missing, ReadError::NotFound(_)));
        let directory = read(dir.path(), Path::new("dir")).unwrap_err();
        assert!(matches!(directory, ReadError::Io(_)), "{directory:?}");
        assert_eq!(
            directory.into_error("cannot read", dir.path()).exit_code(),
            1
        );
    }

    #[test]
    fn sizes_read_like_a_person_would_write_them() {
        assert_eq!(human(12), "12 bytes");
        assert_eq!(human(2048), "2 KiB");
        assert_eq!(human(MAX_BYTES), "1 MiB");
        assert_eq!(human(50 * MAX_BYTES + MAX_BYTES / 2), "50.5 MiB");
    }
}
