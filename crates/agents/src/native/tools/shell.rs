//! `bash`: one command in the worktree, run like every other agent process (module
//! `process`: its own process group, the project `[env]` — whose `setup` reaches bash
//! through `BASH_ENV` — a timeout, the sandbox when the role is confined, cancellation). Its
//! combined output is logged in full beside the transcript; the model gets the head and the
//! tail of long output.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::{agent_group_file, AGENT_ENV_REMOVE};
use process::{self, CancelToken, ProcessEnd, ProcessSpec};

/// How long a command may run when the call gives no timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest timeout a call may ask for.
const MAX_TIMEOUT: Duration = Duration::from_secs(600);
/// Bytes of output kept from each end of a long output.
const KEEP: usize = 10 * 1024;

#[derive(Debug, Deserialize)]
pub struct BashArgs {
    pub command: String,
    /// Seconds the command may run (default 120, at most 600).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

/// Where and how the commands of one invocation run.
#[derive(Debug, Clone)]
pub struct Shell<'a> {
    pub worktree: &'a Path,
    pub env: &'a [(String, String)],
    pub run_dir: &'a Path,
    /// Where each command's full output is logged (`<n>.log`).
    pub log_dir: PathBuf,
    pub sandbox: Option<&'a sandbox::Confinement>,
    /// What is left of the role's own time.
    pub left: Duration,
    pub idle: Option<Duration>,
}

/// What a command did, for the model; `Err` when it could not be started.
pub fn bash(
    shell: &Shell<'_>,
    args: BashArgs,
    number: usize,
    cancel: &CancelToken,
) -> Result<(String, bool), String> {
    std::fs::create_dir_all(&shell.log_dir)
        .map_err(|e| format!("cannot create {}: {e}", shell.log_dir.display()))?;
    let log = shell.log_dir.join(format!("{number}.log"));
    let asked = args
        .timeout_secs
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs)
        .min(MAX_TIMEOUT);
    let mut spec = ProcessSpec::new("bash", shell.worktree, &log);
    spec.args = vec!["-c".to_string(), args.command];
    spec.env = shell.env.to_vec();
    spec.env_remove = AGENT_ENV_REMOVE.iter().map(|s| s.to_string()).collect();
    spec.timeout = Some(asked.min(shell.left));
    spec.idle_timeout = shell.idle;
    spec.group_file = Some(agent_group_file(shell.run_dir));
    spec.sandbox = shell.sandbox.map(sandbox::Confinement::wrapper);
    let ran = process::run(&spec, cancel).map_err(|e| e.to_string())?;
    let output = std::fs::read(&log).unwrap_or_default();
    let output = head_and_tail(&String::from_utf8_lossy(&output), KEEP, &log);
    let (ending, failed) = match ran.end {
        ProcessEnd::Exited(0) => (String::new(), false),
        ProcessEnd::Exited(code) => (format!("\n(exit code {code})"), true),
        ProcessEnd::Signaled(signal) => (format!("\n(killed by signal {signal})"), true),
        ProcessEnd::TimedOut => (
            format!(
                "\n(stopped after {}: the command's timeout)",
                humantime::format_duration(spec.timeout.unwrap_or(asked))
            ),
            true,
        ),
        ProcessEnd::IdleTimedOut => (
            "\n(stopped: it printed nothing for too long)".to_string(),
            true,
        ),
        ProcessEnd::Cancelled => ("\n(cancelled)".to_string(), true),
        ProcessEnd::Aborted => ("\n(stopped)".to_string(), true),
    };
    Ok((format!("{output}{ending}"), failed))
}

/// `text` whole when short, else its first and last `keep` bytes around a note of what was cut.
pub fn head_and_tail(text: &str, keep: usize, log: &Path) -> String {
    if text.len() <= 2 * keep {
        return text.to_string();
    }
    let head = base::text::floor_char_boundary(text, keep);
    let tail = base::text::ceil_char_boundary(text, text.len() - keep);
    format!(
        "{}\n… ({} bytes cut; the whole output is in {}) …\n{}",
        &text[..head],
        tail - head,
        log.display(),
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_output_keeps_its_head_and_tail() {
        let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
        let cut = head_and_tail(&text, 100, Path::new("/x.log"));
        assert!(cut.starts_with("line 0\n"));
        assert!(cut.ends_with("line 999\n"));
        assert!(cut.contains("bytes cut; the whole output is in /x.log"));
        assert_eq!(head_and_tail("short", 100, Path::new("/x.log")), "short");
    }

    #[test]
    fn a_command_runs_in_the_worktree_with_the_env_and_reports_its_exit() {
        let dir = tempfile::tempdir().unwrap();
        let env = vec![("GREETING".to_string(), "hello".to_string())];
        let shell = Shell {
            worktree: dir.path(),
            env: &env,
            run_dir: dir.path(),
            log_dir: dir.path().join("logs"),
            sandbox: None,
            left: Duration::from_secs(30),
            idle: None,
        };
        let args = BashArgs {
            command: "echo $GREETING; pwd; exit 3".into(),
            timeout_secs: None,
        };
        let (output, failed) = bash(&shell, args, 1, &CancelToken::new()).unwrap();
        assert!(failed);
        assert!(output.starts_with("hello\n"), "{output}");
        assert!(output.ends_with("(exit code 3)"), "{output}");
        let args = BashArgs {
            command: "sleep 5".into(),
            timeout_secs: Some(0),
        };
        let (output, failed) = bash(&shell, args, 2, &CancelToken::new()).unwrap();
        assert!(failed && output.contains("timeout"), "{output}");
    }
}
