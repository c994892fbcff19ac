//! Probes that touch the system without changing it: an agent CLI's `--version` (run in a
//! temporary directory, bounded) and whether runs can write under the repository.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::time::Duration;

use super::{Check, Level};
use crate::agents::AGENT_ENV_REMOVE;
use crate::process::{self, CancelToken, ProcessEnd, ProcessSpec};
use crate::project::Layout;

/// How long `<cli> --version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Why `<program> --version` told no version.
#[derive(Debug, thiserror::Error)]
enum NoVersion {
    #[error("no temporary directory: {0}")]
    NoScratch(#[source] std::io::Error),
    #[error("{0}")]
    NotStarted(#[source] process::ProcessError),
    #[error("no answer within {VERSION_TIMEOUT:?}")]
    NoAnswer,
    #[error("it printed nothing")]
    Silent,
    #[error("exit code {code}: {said}")]
    Failed { code: i32, said: String },
    #[error("{0:?}")]
    Ended(ProcessEnd),
}

/// `<program> --version`, bounded; a failure is reported, not fatal.
pub(super) fn version_check(subject: &str, path: &Path, env: &[(String, String)]) -> Check {
    let found = path.display().to_string();
    let probe = || -> Result<String, NoVersion> {
        let scratch = tempfile::tempdir().map_err(NoVersion::NoScratch)?;
        let mut spec = ProcessSpec::new(
            found.clone(),
            scratch.path(),
            scratch.path().join("version.log"),
        );
        spec.args = vec!["--version".to_string()];
        spec.env = env.to_vec();
        spec.env_remove = AGENT_ENV_REMOVE.iter().map(|s| s.to_string()).collect();
        spec.timeout = Some(VERSION_TIMEOUT);
        spec.kill_grace = Duration::from_secs(1);
        spec.capture_limit = 4096;
        let ran = process::run(&spec, &CancelToken::new()).map_err(NoVersion::NotStarted)?;
        let first_line = ran.stdout.lines().map(str::trim).find(|l| !l.is_empty());
        match (ran.end, first_line) {
            (ProcessEnd::Exited(0), Some(version)) => Ok(version.to_string()),
            (ProcessEnd::TimedOut, _) => Err(NoVersion::NoAnswer),
            (ProcessEnd::Exited(0), None) => Err(NoVersion::Silent),
            (ProcessEnd::Exited(code), _) => Err(NoVersion::Failed {
                code,
                said: ran.stderr_tail.trim().to_string(),
            }),
            (end, _) => Err(NoVersion::Ended(end)),
        }
    };
    match probe() {
        Ok(version) => Check::new(Level::Ok, subject, format!("{found} ({version})")),
        Err(problem) => Check::new(
            Level::Warn,
            subject,
            format!("{found}, but `--version` failed: {problem}"),
        ),
    }
}

/// Whether runs can write their worktrees and records.
pub(super) fn writable(root: &Path) -> Check {
    let layout = Layout::new(root);
    let dir = layout.dir();
    let fix = "make the repository writable for this user";
    if dir.is_dir() {
        let shown = dir.strip_prefix(root).unwrap_or(&dir).display().to_string();
        match tempfile::Builder::new()
            .prefix(".doctor-")
            .tempfile_in(&dir)
        {
            Ok(_) => Check::new(Level::Ok, "worktrees", format!("{shown}/ is writable")),
            Err(error) => Check::new(
                Level::Missing,
                "worktrees",
                format!("cannot write in {shown}/: {error}"),
            )
            .needed(format!("runs need a writable {shown}/: {fix}")),
        }
    } else if can_write(root) {
        Check::new(
            Level::Ok,
            "worktrees",
            "the repository root is writable (.autobuild/ is created by the first run)",
        )
    } else {
        Check::new(
            Level::Missing,
            "worktrees",
            format!("{} is not writable", root.display()),
        )
        .needed(format!(
            "runs create .autobuild/ in the repository root: {fix}"
        ))
    }
}

/// access(2) with W_OK: asks the kernel without creating anything.
fn can_write(path: &Path) -> bool {
    let Ok(path) = CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `path` is a valid NUL-terminated string; access(2) only reads it.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writability_is_checked_without_leaving_files() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(writable(root.path()).level, Level::Ok);
        assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
        std::fs::create_dir(root.path().join(".autobuild")).unwrap();
        let check = writable(root.path());
        assert_eq!(check.level, Level::Ok);
        assert_eq!(check.detail, ".autobuild/ is writable");
        let left = std::fs::read_dir(root.path().join(".autobuild"))
            .unwrap()
            .count();
        assert_eq!(left, 0);
    }
}
