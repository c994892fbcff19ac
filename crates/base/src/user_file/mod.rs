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
//! - **Regular files only.** A FIFO, a device or a socket (or a link to one) is refused
//!   naming the file, never read: a FIFO would block the command forever, `/dev/zero` would
//!   never end. [`open_regular`] opens with `O_NONBLOCK` (so opening a FIFO returns at once)
//!   and checks the *opened* file, so a file swapped between a check and the open cannot get
//!   past it either. Run records (`state.json`, events, turn records) are read through it too.
//!
//! All three are problems *in the file* a user wrote, so they are [`Diagnostic`]s (exit 2, like
//! any other invalid input), not I/O failures (exit 1). A missing file and an unreadable one
//! keep their own variants: callers decide what absence means (the config file is optional).
//!
//! Below it sit the parts every reader of those files shares, so each format is read one way:
//! the positioned value tree ([`tree`], positions in [`source`]) that [`parse_toml`] and
//! [`parse_yaml`] build (YAML within the alias and depth limits of [`yaml_limits`]), and
//! [`typed`], which decodes a serde type from that tree reporting every problem located.

pub mod parse_toml;
pub mod parse_yaml;
pub mod rule;
pub mod source;
pub mod tree;
pub mod typed;
pub mod yaml_limits;

use std::fs::{File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
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
    /// It is a FIFO, a device or a socket, not a regular file.
    NotRegular(Box<Diagnostic>),
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
            ReadError::TooLarge(problem)
            | ReadError::NotRegular(problem)
            | ReadError::NotUtf8 { problem, .. } => Some(&**problem),
            ReadError::NotFound(_) | ReadError::Io(_) => None,
        }
    }

    /// The command-level error: the located problem (exit 2), or `action` and the I/O error.
    pub fn into_error(self, action: &'static str, path: &Path) -> Error {
        match self {
            ReadError::NotFound(e) | ReadError::Io(e) => Error::io(action, path, e),
            ReadError::TooLarge(problem)
            | ReadError::NotRegular(problem)
            | ReadError::NotUtf8 { problem, .. } => Error::from(*problem),
        }
    }
}

/// Reads the file at `path` as UTF-8 text of at most [`MAX_BYTES`]; problems name the file
/// as `shown` (usually relative to the repository root).
pub fn read(path: &Path, shown: &Path) -> Result<String, ReadError> {
    let file = open_regular(path).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => ReadError::NotFound(e),
        _ => match NotRegular::of(&e) {
            Some(special) => ReadError::NotRegular(Box::new(special.problem(shown))),
            None => ReadError::Io(e),
        },
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

/// What kind of special file was refused; carried inside the [`io::Error`] that
/// [`open_regular`] returns (kind `InvalidInput`), so callers with plain `io::Result`s keep
/// working and those that report it can find it with [`NotRegular::of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("it is {kind}, not a regular file; autobuild reads only regular files")]
pub struct NotRegular {
    pub kind: &'static str,
}

impl NotRegular {
    /// The refusal inside `error`, if that is what it is.
    pub fn of(error: &io::Error) -> Option<NotRegular> {
        error.get_ref()?.downcast_ref::<NotRegular>().copied()
    }

    /// The refusal as a problem in the file `shown` (exit 2).
    pub fn problem(self, shown: &Path) -> Diagnostic {
        Diagnostic::new(shown, self.to_string()).with_help(
            "replace it with a regular file; a FIFO, device or socket (or a link to one) would block or never end",
        )
    }
}

/// Opens `path` (following links) for reading when it is a regular file, and refuses anything
/// else with a [`NotRegular`] error without blocking: the open is non-blocking (a FIFO with no
/// writer opens at once), and the check is made on the opened file, not on the name. A
/// directory is left to fail as it always did (reading it is an I/O error).
pub fn open_regular(path: &Path) -> io::Result<File> {
    open_regular_with(path, OpenOptions::new().read(true))
}

/// [`open_regular`] with `options` (appending, creating): the same non-blocking open and the
/// same check of the opened file. Opening a FIFO for writing with no reader fails at once
/// instead of waiting for one. It sets the options' custom flags (`O_NONBLOCK`), replacing any
/// the caller set.
pub fn open_regular_with(path: &Path, options: &mut OpenOptions) -> io::Result<File> {
    let file = options.custom_flags(libc::O_NONBLOCK).open(path)?;
    let kind = file.metadata()?.file_type();
    let special = if kind.is_fifo() {
        "a FIFO (named pipe)"
    } else if kind.is_char_device() {
        "a character device"
    } else if kind.is_block_device() {
        "a block device"
    } else if kind.is_socket() {
        "a socket"
    } else {
        return Ok(file);
    };
    Err(io::Error::new(
        io::ErrorKind::InvalidInput,
        NotRegular { kind: special },
    ))
}

/// The whole of a run record (`state.json`, events, turn records, logs) the runner wrote
/// itself, read only when it is a regular file ([`open_regular`]); no size cap, since logs and
/// events grow with a run.
pub fn read_record(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    open_regular(path)?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// [`read_record`] as UTF-8 text.
pub fn read_record_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_record(path)?).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
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
    fn a_fifo_a_device_and_a_link_to_one_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("config.toml");
        let c_path = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let link = dir.path().join("zero.toml");
        std::os::unix::fs::symlink("/dev/zero", &link).unwrap();
        for (path, kind) in [(&fifo, "a FIFO"), (&link, "a character device")] {
            let err = read(path, Path::new(".autobuild/config.toml")).unwrap_err();
            let problem = err.problem().unwrap().to_string();
            assert!(
                problem.starts_with(&format!(".autobuild/config.toml: it is {kind}")),
                "{problem}"
            );
            assert_eq!(err.into_error("cannot read", path).exit_code(), 2);
        }
        let plain = write(&dir, "plain.toml", b"x = 1\n");
        assert!(open_regular(&plain).is_ok());
    }

    #[test]
    fn sizes_read_like_a_person_would_write_them() {
        assert_eq!(human(12), "12 bytes");
        assert_eq!(human(2048), "2 KiB");
        assert_eq!(human(MAX_BYTES), "1 MiB");
        assert_eq!(human(50 * MAX_BYTES + MAX_BYTES / 2), "50.5 MiB");
    }
}
