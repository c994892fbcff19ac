//! Running one child process safely: agents and runner checks both go through [`run`].
//!
//! The child never sees a terminal (stdin is the given bytes or /dev/null), runs in its own
//! process group so a timeout, an idle watchdog or Ctrl-C stops it *and* everything it spawned,
//! and has its stdout and stderr drained concurrently into a redacted transcript on disk. Only
//! a bounded excerpt is kept in memory, so a chatty test suite or a multi-megabyte JSON line
//! costs disk, not RAM. When the child exits, whatever it left running in its group is stopped
//! too: a backgrounded server would otherwise hold the output pipes open and outlive the run.
//! A program that cannot be found is reported by name before anything is spawned, resolved
//! against the PATH the child will actually get.
//!
//! A spec with a [`ProcessSpec::sandbox`] runs the resolved program under the OS sandbox
//! (module `sandbox`); the sandbox wrapper then leads the group and is spared the
//! polite stop signals (module `group`).
//!
//! A caller that understands the child's stdout can give a [`LineWatch`]: then only the lines
//! it calls progress keep the idle watchdog quiet (an agent CLI that prints a retry notice every
//! few seconds while offline is not making progress), and a line it calls hopeless stops the
//! child at once ([`ProcessEnd::Aborted`]) instead of letting it retry what cannot succeed.

mod cancel;
mod encodings;
mod env;
mod exit_watch;
mod group;
mod leftover;
mod orphans;
mod redact;
mod resolve;
pub mod secrets;
mod stream;
mod wrapper;

use std::ffi::OsString;
use std::io::{self, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use cancel::CancelToken;
pub use encodings::encoded_forms;
pub use env::child_var;
pub use leftover::stop_leftover_group;
pub use orphans::{sweep, take_killed, Orphan, Swept};
pub use redact::{is_secret_name, redact, Redactor, REDACTED};
pub use resolve::locate;
pub use wrapper::{BeforeExec, Wrapped, Wrapper};

use resolve::resolve_program;
use stream::{Activity, Drain, Keep, Touch, Transcript};

/// Default wait between SIGINT, SIGTERM and SIGKILL.
pub const DEFAULT_KILL_GRACE: Duration = Duration::from_secs(5);

/// How much of stderr is kept in memory for error messages.
const STDERR_TAIL_BYTES: usize = 16 * 1024;

/// How long to wait for the output pipes to close once the process group is gone. Only a
/// process that escaped the group (e.g. via `setsid`) can hold them open longer.
const PIPE_CLOSE_WAIT: Duration = Duration::from_secs(2);

/// The longest pause between two checks of the child, the clock and the cancel token.
const MAX_POLL: Duration = Duration::from_millis(50);

/// What one line of a child's stdout says about its progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineSignal {
    /// Work is happening: the idle watchdog starts counting again.
    Progress,
    /// Output, but no progress (a retry or reconnect notice): the idle watchdog keeps counting.
    Waiting,
    /// The child cannot succeed any more (e.g. its API refused the credentials and it is only
    /// retrying): stop it now.
    Hopeless,
}

/// Judges stdout lines (without their newline) for the idle watchdog; see [`LineSignal`].
#[derive(Clone)]
pub struct LineWatch(Arc<dyn Fn(&str) -> LineSignal + Send + Sync>);

impl LineWatch {
    pub fn new(judge: impl Fn(&str) -> LineSignal + Send + Sync + 'static) -> LineWatch {
        LineWatch(Arc::new(judge))
    }

    pub fn judge(&self, line: &str) -> LineSignal {
        (self.0)(line)
    }
}

impl std::fmt::Debug for LineWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineWatch(..)")
    }
}

/// What to run and how to bound it.
#[derive(Debug, Clone)]
pub struct ProcessSpec {
    /// A name looked up on the child's PATH, or a path (relative to `cwd` when relative).
    pub program: String,
    pub args: Vec<String>,
    pub cwd: PathBuf,
    /// Added on top of the inherited environment (after `env_remove`).
    pub env: Vec<(String, String)>,
    /// Inherited variables the child must not see (e.g. `CLAUDECODE`).
    pub env_remove: Vec<String>,
    /// Written to the child's stdin, which is then closed; `None` gives it /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// The full combined stdout+stderr transcript, streamed to disk.
    pub log_path: PathBuf,
    /// Where stdout alone is also streamed (redacted, otherwise byte for byte), for callers
    /// that parse it: in the combined transcript stderr lines can land between the pieces of
    /// a very long stdout line, and the in-memory capture is bounded.
    pub stdout_path: Option<PathBuf>,
    pub timeout: Option<Duration>,
    /// Stop the child when it prints nothing (or, with `watch`, nothing that is progress) for
    /// this long.
    pub idle_timeout: Option<Duration>,
    /// Judges each stdout line; when set, stderr no longer counts as progress either (the
    /// caller's stdout protocol is the authority on what the child is doing).
    pub watch: Option<LineWatch>,
    /// Bytes of stdout kept in memory; the rest is only on disk.
    pub capture_limit: usize,
    /// Wait between SIGINT, SIGTERM and SIGKILL when stopping the child.
    pub kill_grace: Duration,
    /// Where the child's process group id is written while it runs, so a later process can
    /// stop a group this one left behind when it was killed (see [`stop_leftover_group`]).
    pub group_file: Option<PathBuf>,
    /// Run confined: the child is the sandbox wrapper, which runs the program.
    pub sandbox: Option<Arc<dyn Wrapper>>,
}

impl ProcessSpec {
    /// A spec with no stdin, no extra env, no bounds and no stdout capture.
    pub fn new(
        program: impl Into<String>,
        cwd: impl Into<PathBuf>,
        log_path: impl Into<PathBuf>,
    ) -> ProcessSpec {
        ProcessSpec {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: Vec::new(),
            env_remove: Vec::new(),
            stdin: None,
            log_path: log_path.into(),
            stdout_path: None,
            timeout: None,
            idle_timeout: None,
            watch: None,
            capture_limit: 0,
            kill_grace: DEFAULT_KILL_GRACE,
            group_file: None,
            sandbox: None,
        }
    }

    /// The PATH the child will see.
    fn child_path(&self) -> Option<OsString> {
        match self.env.iter().rev().find(|(name, _)| name == "PATH") {
            Some((_, value)) => Some(value.into()),
            None if self.env_remove.iter().any(|name| name == "PATH") => None,
            None => std::env::var_os("PATH"),
        }
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProcessEnd {
    Exited(i32),
    /// Killed by this signal, not by us.
    Signaled(i32),
    TimedOut,
    IdleTimedOut,
    Cancelled,
    /// Stopped because the spec's [`LineWatch`] found a hopeless line.
    Aborted,
}

#[derive(Debug, Clone)]
pub struct ProcessOutcome {
    pub end: ProcessEnd,
    /// The first `capture_limit` bytes of stdout, lossy UTF-8, redacted.
    pub stdout: String,
    pub stdout_truncated: bool,
    /// The last few KiB of stderr, lossy UTF-8, redacted.
    pub stderr_tail: String,
    pub duration: Duration,
    /// Set when the transcript or the stdout copy could not be fully written (e.g. the disk
    /// filled up).
    pub transcript_error: Option<String>,
}

/// The process could not be started at all.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("`{program}` not found on PATH")]
    NotFound { program: String },
    #[error("`{program}` not found (looked for {})", path.display())]
    PathNotFound { program: String, path: PathBuf },
    #[error("`{}` is not executable", path.display())]
    NotExecutable { path: PathBuf },
    #[error("working directory {} does not exist", cwd.display())]
    MissingCwd { cwd: PathBuf },
    #[error("cannot create log {}: {source}", path.display())]
    Log { path: PathBuf, source: io::Error },
    #[error("cannot start `{program}`: {source}")]
    Spawn { program: String, source: io::Error },
    #[error("waiting for `{program}`: {source}")]
    Wait { program: String, source: io::Error },
    /// Processes `program` left behind that could not be stopped (module `orphans`).
    #[error(
        "`{program}` left processes behind that could not be stopped: {}",
        processes.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
    )]
    LeftRunning {
        program: String,
        processes: Vec<Orphan>,
    },
}

/// Runs `spec` to completion, a bound, or cancellation. A child that fails, times out or is
/// cancelled is an `Ok` outcome; `Err` means it could not be started (or waited for).
pub fn run(spec: &ProcessSpec, cancel: &CancelToken) -> Result<ProcessOutcome, ProcessError> {
    let program = resolve_program(spec)?;
    if !spec.cwd.is_dir() {
        return Err(ProcessError::MissingCwd {
            cwd: spec.cwd.clone(),
        });
    }
    let create = |path: &Path| {
        Transcript::create(path).map_err(|source| ProcessError::Log {
            path: path.to_path_buf(),
            source,
        })
    };
    let transcript = create(&spec.log_path)?;
    let stdout_copy = spec.stdout_path.as_deref().map(create).transpose()?;
    group::become_subreaper();
    let redactor = Arc::new(Redactor::new(&spec.env));
    let spawn_error = |source| ProcessError::Spawn {
        program: spec.program.clone(),
        source,
    };

    let wrapped = match &spec.sandbox {
        Some(sandbox) => sandbox
            .wrap(&program, &spec.args, &spec.cwd)
            .map_err(spawn_error)?,
        None => Wrapped::plain(&program, &spec.args),
    };
    let lead = match wrapped.leads {
        true => group::Leader::Wrapper,
        false => group::Leader::Program,
    };
    let (program, args) = (wrapped.program, wrapped.args);
    let mut command = Command::new(&program);
    command
        .args(&args)
        .current_dir(&spec.cwd)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    group::new_session(&mut command);
    stop_with_parent(&mut command);
    // CI credentials never reach a child (module `crate::sandbox::secrets`).
    for name in spec.env_remove.iter().chain(&secrets::withheld()) {
        command.env_remove(name);
    }
    command.envs(spec.env.iter().map(|(name, value)| (name, value)));
    command.envs(wrapped.env.iter().map(|(name, value)| (name, value)));
    if let Some(restrict) = wrapped.before_exec {
        use std::os::unix::process::CommandExt;
        // SAFETY: the confinement's closure only makes system calls (module `wrapper`).
        unsafe { command.pre_exec(restrict) };
    }

    tracing::debug!(program = %program.display(), ?args, cwd = %spec.cwd.display(), "spawning");
    let start = Instant::now();
    let (mut child, tracked) = orphans::spawn(&mut command, spawn).map_err(spawn_error)?;
    let exit = exit_watch::ExitWatch::new(&child);
    if let Some(file) = &spec.group_file {
        // Best effort: the record only helps a later resume clean up after a crash.
        let _ = write_group_file(file, Some(child.id()));
    }
    let running = Running::attach(&mut child, spec, transcript, stdout_copy, redactor, start);
    let running = match running {
        Ok(running) => running,
        Err(source) => {
            let _ = group::stop(&mut child, Duration::ZERO, lead);
            return Err(spawn_error(source));
        }
    };
    let watch = (running.activity.as_ref(), &exit);
    let (end, status) = match supervise(&mut child, spec, cancel, watch, (start, lead)) {
        Ok(ended) => ended,
        Err(source) => {
            group::kill(&child);
            return Err(ProcessError::Wait {
                program: spec.program.clone(),
                source,
            });
        }
    };
    drop(tracked);
    let swept = orphans::sweep();
    let duration = start.elapsed();
    // The group is gone either way; a pgid left in the file could name a stranger's later.
    if let Some(file) = &spec.group_file {
        let _ = write_group_file(file, None);
    }
    if !swept.left.is_empty() {
        return Err(ProcessError::LeftRunning {
            program: spec.program.clone(),
            processes: swept.left,
        });
    }
    let end = end.unwrap_or_else(|| exit_end(status));
    tracing::debug!(program = %spec.program, ?end, ?duration, "process ended");
    Ok(running.collect(end, duration))
}

/// Writes the group file in place: emptied rather than removed once the group is gone, so the
/// next child of the run rewrites the same file instead of creating one (creating a file is the
/// dearest thing the runner does per turn on some file systems). Every write has the same
/// length ([`GROUP_FILE_WIDTH`], padded with spaces; "empty" is all spaces), so the file is
/// never truncated: ext4 flushes a file emptied by truncation and written again at its close,
/// ten times the cost of the write. A blank file names no group ([`stop_leftover_group`]).
/// Anything but the runner's own regular file at the name (a symlink, a FIFO, a hard link to
/// another file) is removed and a new file made, so the write never lands elsewhere and never
/// blocks.
fn write_group_file(file: &Path, pgid: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
    let text = match pgid {
        Some(pgid) => format!("{pgid:<width$}\n", width = GROUP_FILE_WIDTH - 1),
        None => format!("{:<width$}\n", "", width = GROUP_FILE_WIDTH - 1),
    };
    let own = |file: &std::fs::File| {
        file.metadata()
            .is_ok_and(|meta| meta.file_type().is_file() && meta.nlink() == 1)
    };
    // Non-blocking: a FIFO with no reader fails at once instead of waiting for one.
    let reused = std::fs::OpenOptions::new()
        .write(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(file)
        .ok()
        .filter(own);
    let mut out = match reused {
        Some(out) => out,
        None => {
            match std::fs::remove_file(file) {
                Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
                _ => {}
            }
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(file)?
        }
    };
    out.write_all(text.as_bytes())?;
    // Only a file another writer left longer (or one from before the fixed width) has a tail.
    if out.metadata()?.len() != text.len() as u64 {
        out.set_len(text.len() as u64)?;
    }
    Ok(())
}

/// The length of every write of a group file: a process group id (at most 4,194,304 on Linux,
/// ten digits anywhere) padded with spaces, and a newline.
const GROUP_FILE_WIDTH: usize = 12;

/// Spawns, retrying briefly when the program is "text file busy": a script written just before
/// (by us or a test) can still be open for writing in a child forked concurrently by another
/// thread, until that child execs.
fn spawn(command: &mut Command) -> io::Result<Child> {
    let mut attempts = 0;
    loop {
        match command.spawn() {
            Err(error) if error.kind() == io::ErrorKind::ExecutableFileBusy && attempts < 10 => {
                attempts += 1;
                thread::sleep(Duration::from_millis(20));
            }
            result => return result,
        }
    }
}

/// The threads attached to a running child.
struct Running {
    activity: Arc<Activity>,
    transcript: Arc<Transcript>,
    stdout_copy: Option<Arc<Transcript>>,
    stdin: Option<JoinHandle<()>>,
    stdout: Drain,
    stderr: Drain,
}

impl Running {
    fn attach(
        child: &mut Child,
        spec: &ProcessSpec,
        transcript: Transcript,
        stdout_copy: Option<Transcript>,
        redactor: Arc<Redactor>,
        start: Instant,
    ) -> io::Result<Running> {
        let missing = |name| io::Error::other(format!("child {name} was not piped"));
        let activity = Arc::new(Activity::new(start));
        let transcript = Arc::new(transcript);
        let stdout_copy = stdout_copy.map(Arc::new);
        let mut stdout_sinks = vec![Arc::clone(&transcript)];
        stdout_sinks.extend(stdout_copy.iter().cloned());
        let stdin = match (child.stdin.take(), &spec.stdin) {
            (Some(pipe), Some(bytes)) => Some(feed_stdin(pipe, bytes.clone())?),
            _ => None,
        };
        let (stdout_touch, stderr_touch) = match &spec.watch {
            Some(watch) => (Touch::Judged(watch.clone()), Touch::Never),
            None => (Touch::Always, Touch::Always),
        };
        let stdout = Drain::start(
            "stdout",
            child.stdout.take().ok_or_else(|| missing("stdout"))?,
            stdout_sinks,
            Arc::clone(&redactor),
            (Arc::clone(&activity), stdout_touch),
            Keep::Head(spec.capture_limit),
        )?;
        let stderr = Drain::start(
            "stderr",
            child.stderr.take().ok_or_else(|| missing("stderr"))?,
            vec![Arc::clone(&transcript)],
            redactor,
            (Arc::clone(&activity), stderr_touch),
            Keep::Tail(STDERR_TAIL_BYTES),
        )?;
        Ok(Running {
            activity,
            transcript,
            stdout_copy,
            stdin,
            stdout,
            stderr,
        })
    }

    /// Waits for the output pipes to close (the group is gone, so they close unless something
    /// escaped it) and assembles the outcome.
    fn collect(mut self, end: ProcessEnd, duration: Duration) -> ProcessOutcome {
        let deadline = Instant::now() + PIPE_CLOSE_WAIT;
        // Both are waited for (no short circuit): a finished drain is then joined.
        let closed = self.stdout.wait_until(deadline) & self.stderr.wait_until(deadline);
        if !closed {
            tracing::warn!("a process outside the stopped group still holds the output pipes; the transcript may be incomplete");
        }
        if let Some(stdin) = self.stdin {
            if stdin.is_finished() {
                let _ = stdin.join();
            }
        }
        let stdout = self.stdout.take();
        let stderr = self.stderr.take();
        let transcript_error = self.transcript.finish();
        let stdout_copy_error = self.stdout_copy.as_ref().and_then(|copy| copy.finish());
        ProcessOutcome {
            end,
            stdout: stdout.text,
            stdout_truncated: stdout.truncated,
            stderr_tail: stderr.text,
            duration,
            transcript_error: transcript_error.or(stdout_copy_error),
        }
    }
}

/// Writes the input on its own thread (a child that does not read stdin must not block us),
/// then closes the pipe. A child that exits without reading it is not an error.
fn feed_stdin(mut pipe: ChildStdin, bytes: Vec<u8>) -> io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name("feed-stdin".to_string())
        .spawn(move || {
            if let Err(error) = pipe.write_all(&bytes) {
                if error.kind() != io::ErrorKind::BrokenPipe {
                    tracing::debug!("writing child stdin: {error}");
                }
            }
        })
}

/// Polls the child until it exits or a bound or the cancel token stops it (a pause between two
/// polls ends early when the child exits); then makes sure no process of its group is left. Returns why we stopped it (if we did) and the leader's status.
fn supervise(
    child: &mut Child,
    spec: &ProcessSpec,
    cancel: &CancelToken,
    (activity, exit): (&Activity, &exit_watch::ExitWatch),
    (start, lead): (Instant, group::Leader),
) -> io::Result<(Option<ProcessEnd>, ExitStatus)> {
    let mut pause = Duration::from_millis(2);
    loop {
        if child.try_wait()?.is_some() {
            return Ok((None, group::stop_leftovers(child, spec.kill_grace, lead)?));
        }
        let stop_reason = if cancel.is_cancelled() {
            Some(ProcessEnd::Cancelled)
        } else if activity.is_hopeless() {
            Some(ProcessEnd::Aborted)
        } else if spec.timeout.is_some_and(|limit| start.elapsed() >= limit) {
            Some(ProcessEnd::TimedOut)
        } else if spec
            .idle_timeout
            .is_some_and(|limit| activity.idle_for() >= limit)
        {
            Some(ProcessEnd::IdleTimedOut)
        } else {
            None
        };
        if let Some(reason) = stop_reason {
            tracing::debug!(program = %spec.program, ?reason, "stopping process group");
            return Ok((Some(reason), group::stop(child, spec.kill_grace, lead)?));
        }
        exit.wait(pause);
        pause = (pause * 2).min(MAX_POLL);
    }
}

fn exit_end(status: ExitStatus) -> ProcessEnd {
    match (status.code(), status.signal()) {
        (Some(code), _) => ProcessEnd::Exited(code),
        (None, Some(signal)) => ProcessEnd::Signaled(signal),
        (None, None) => ProcessEnd::Exited(-1),
    }
}

/// If autobuild dies without stopping its children (SIGKILL, a crash), the child's process
/// group leader gets SIGTERM from the kernel instead of running on unsupervised in a worktree
/// a resumed run is about to use.
#[cfg(target_os = "linux")]
fn stop_with_parent(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and only calls async-signal-safe
    // functions (prctl, getppid, kill on itself).
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() == 1 {
                libc::kill(libc::getpid(), libc::SIGTERM);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn stop_with_parent(_command: &mut Command) {}

#[cfg(test)]
mod tests;
