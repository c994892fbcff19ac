//! An agent step's answer, `steps.<id>.outputs.text` (docs/workflows.md): what the agent wrote to
//! the file named by `$AUTOBUILD_OUTPUT` (in the run's scratch directory, so writing it changes
//! nothing in the worktree, and a read-only role may write it too), else its final message.
//!
//! The file is the agent's, so it is read as untrusted input: only a regular file (not a link
//! to something the agent could not otherwise hand over), at most [`TEXT_LIMIT`] bytes, as
//! lossy UTF-8. It is removed before each invocation, so an earlier turn's answer never stands
//! in for this one's.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use base::error::Error;

/// The variable naming the file an agent may write its answer to.
pub const OUTPUT_VAR: &str = "AUTOBUILD_OUTPUT";

/// At most this much of an answer reaches later prompts and the records.
pub const TEXT_LIMIT: usize = 64 * 1024;

/// Where the agent filed under `label` in `turn` may write its answer.
pub fn output_file(run_dir: &Path, label: &str, turn: u32) -> PathBuf {
    agents::scratch_dir(run_dir)
        .join("output")
        .join(format!("turn_{turn}_{label}.md"))
}

/// Makes `path`'s directory and removes a stale answer, before an invocation.
pub fn prepare(path: &Path) -> Result<(), Error> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir).map_err(|e| Error::io("cannot create", dir, e))?;
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::io("cannot remove", path, e)),
    }
}

/// The answer: the output file when the agent wrote a non-empty regular file there, else its
/// final message; bounded, with a note where it was cut.
pub fn answer(path: &Path, final_message: &str) -> String {
    let written = read_written(path).filter(|text| !text.trim().is_empty());
    bounded(written.as_deref().unwrap_or(final_message))
}

fn read_written(path: &Path) -> Option<String> {
    let meta = fs::symlink_metadata(path).ok()?;
    if !meta.file_type().is_file() {
        tracing::debug!(path = %path.display(), "the output file is not a regular file; ignored");
        return None;
    }
    let file = base::user_file::open_regular(path).ok()?;
    let mut bytes = Vec::new();
    file.take(TEXT_LIMIT as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `text` cut to [`TEXT_LIMIT`] bytes at a character boundary, with a note saying so.
pub fn bounded(text: &str) -> String {
    if text.len() <= TEXT_LIMIT {
        return text.to_string();
    }
    let end = base::text::floor_char_boundary(text, TEXT_LIMIT);
    format!(
        "{}\n\n[… cut: the answer was longer than {} KiB]",
        &text[..end],
        TEXT_LIMIT / 1024
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_written_file_wins_over_the_final_message() {
        let dir = tempfile::tempdir().unwrap();
        let path = output_file(dir.path(), "planner", 0);
        prepare(&path).unwrap();
        assert_eq!(answer(&path, "final words"), "final words");
        fs::write(&path, "the plan").unwrap();
        assert_eq!(answer(&path, "final words"), "the plan");
        fs::write(&path, "  \n").unwrap();
        assert_eq!(answer(&path, "final words"), "final words", "empty file");
        prepare(&path).unwrap();
        assert!(!path.exists(), "a stale answer is removed");
    }

    #[test]
    fn a_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let secret = dir.path().join("secret");
        fs::write(&secret, "secret").unwrap();
        let path = output_file(dir.path(), "planner", 1);
        prepare(&path).unwrap();
        std::os::unix::fs::symlink(&secret, &path).unwrap();
        assert_eq!(answer(&path, "final"), "final");
    }

    #[test]
    fn long_answers_are_cut_with_a_note() {
        let long = "é".repeat(TEXT_LIMIT);
        let cut = bounded(&long);
        assert!(cut.len() < long.len());
        assert!(cut.ends_with("[… cut: the answer was longer than 64 KiB]"));
        assert_eq!(bounded("short"), "short");
    }
}
