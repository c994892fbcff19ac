//! Stopping a child together with everything it started.
//!
//! Every child runs as the leader of its own process group, so one signal reaches the agent or
//! test runner and all of its descendants (a backgrounded server, a test worker pool). Stopping
//! escalates: SIGINT lets an agent save its state, SIGTERM asks politely, SIGKILL does not ask.
//! Each step waits a grace period for the group to be empty before escalating.
//!
//! "Empty" must include orphans: a grandchild whose parent died is reparented, and if nobody
//! reaps it, it lingers as a zombie that still belongs to the group. Containers often run an
//! init that never reaps, so on Linux autobuild makes itself a child subreaper: orphans of its
//! children are reparented to autobuild, which reaps those of the group it is stopping.
//!
//! A confined child is the sandbox wrapper (bwrap), which runs the real program as its own
//! child in the same group. bwrap does not forward signals: a SIGINT would kill it at once,
//! and its `--die-with-parent` would then SIGKILL the program before it could act on its own
//! SIGINT. So the polite signals go to every member of the group but the wrapper, which exits
//! by itself when the program does; SIGKILL still goes to the whole group.
//!
//! Every child is started in a session of its own rather than only a group of its own: the
//! group is the same (session id = group id = its pid), the program has no controlling
//! terminal it could push keystrokes into (`TIOCSTI`) to run commands outside the sandbox, and
//! nothing it starts can join autobuild's own session or group, which is how a process it left
//! behind is told from the runner's own helpers (module `orphans`).

use std::io;
use std::process::{Child, Command, ExitStatus};
use std::thread;
use std::time::{Duration, Instant};

/// How often group membership is polled while waiting for it to drain.
const POLL: Duration = Duration::from_millis(10);

/// How long to wait for the kernel to tear down a group after SIGKILL.
const AFTER_KILL: Duration = Duration::from_secs(2);

/// Makes this process the reaper of its descendants' orphans (Linux only; elsewhere init
/// reaps them). Idempotent and cheap.
pub(super) fn become_subreaper() {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a flag on this process.
            let result = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
            if result != 0 {
                tracing::debug!(
                    "could not become a child subreaper: {}",
                    io::Error::last_os_error()
                );
            }
        });
    }
}

/// What leads a child's process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Leader {
    /// The program itself.
    Program,
    /// The sandbox wrapper: spared from the polite signals.
    Wrapper,
}

/// Starts the child as the leader of a new session (and so of a new process group) with no
/// controlling terminal; see the module doc.
pub(super) fn new_session(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs between fork and exec and only calls setsid(2), which is
    // async-signal-safe.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// Stops the group led by `child`: SIGINT, SIGTERM and SIGKILL in turn, waiting `grace` after
/// each of the first two. Returns the leader's exit status once no process of the group is left.
pub(super) fn stop(child: &mut Child, grace: Duration, lead: Leader) -> io::Result<ExitStatus> {
    escalate(child, &[libc::SIGINT, libc::SIGTERM], grace, lead)
}

/// After the leader exited on its own: stops whatever it left running in its group (a
/// backgrounded process that would otherwise hold the output pipes open forever). SIGINT is
/// skipped because background jobs of a shell ignore it.
pub(super) fn stop_leftovers(
    child: &mut Child,
    grace: Duration,
    lead: Leader,
) -> io::Result<ExitStatus> {
    escalate(child, &[libc::SIGTERM], grace, lead)
}

fn escalate(
    child: &mut Child,
    polite: &[i32],
    grace: Duration,
    lead: Leader,
) -> io::Result<ExitStatus> {
    let pgid = leader_pgid(child);
    let mut leader = child.try_wait()?;
    if wait_until_empty(child, pgid, &mut leader, Duration::ZERO)? {
        return leader_status(child, leader);
    }
    for &signal in polite {
        send_polite(pgid, signal, lead);
        if wait_until_empty(child, pgid, &mut leader, grace)? {
            return leader_status(child, leader);
        }
    }
    send(pgid, libc::SIGKILL);
    let status = leader_status(child, leader)?;
    let mut reaped = Some(status);
    if !wait_until_empty(child, pgid, &mut reaped, AFTER_KILL)? {
        tracing::warn!("process group {pgid} still has members after SIGKILL");
    }
    Ok(status)
}

/// SIGKILL to the whole group, without waiting: the last resort when waiting itself failed.
pub(super) fn kill(child: &Child) {
    send(leader_pgid(child), libc::SIGKILL);
}

/// The group id equals the leader's pid (the child leads a session of its own).
fn leader_pgid(child: &Child) -> i32 {
    i32::try_from(child.id()).unwrap_or(i32::MAX)
}

fn leader_status(child: &mut Child, reaped: Option<ExitStatus>) -> io::Result<ExitStatus> {
    match reaped {
        Some(status) => Ok(status),
        None => child.wait(),
    }
}

/// Polls until the leader is reaped and the group has no members, at most `limit` (one check
/// when `limit` is zero). Orphans of the group reparented to this process are reaped on the way.
fn wait_until_empty(
    child: &mut Child,
    pgid: i32,
    leader: &mut Option<ExitStatus>,
    limit: Duration,
) -> io::Result<bool> {
    let deadline = Instant::now() + limit;
    loop {
        if leader.is_none() {
            *leader = child.try_wait()?;
        }
        if leader.is_some() {
            reap_orphans(pgid);
            if !group_exists(pgid) {
                return Ok(true);
            }
        }
        if Instant::now() >= deadline {
            return Ok(false);
        }
        thread::sleep(POLL);
    }
}

/// Reaps exited members of group `pgid` that are children of this process (orphans handed to
/// it as subreaper). Only called once the leader is reaped, so it never steals the leader's
/// status from [`Child::wait`].
fn reap_orphans(pgid: i32) {
    loop {
        let mut status = 0;
        // SAFETY: waitpid on a process group with WNOHANG; `status` is a valid out pointer.
        let pid = unsafe { libc::waitpid(-pgid, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// Whether any process (zombies included) is still in group `pgid`.
pub(super) fn group_exists(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    let result = unsafe { libc::kill(-pgid, 0) };
    result == 0 || io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// A polite signal to the group; with a wrapper leader, to every member but the wrapper (to
/// the whole group when nothing else is in it yet: then there is nothing to take down with it).
fn send_polite(pgid: i32, signal: i32, lead: Leader) {
    let others: Vec<i32> = match lead {
        Leader::Program => Vec::new(),
        Leader::Wrapper => members(pgid).into_iter().filter(|&p| p != pgid).collect(),
    };
    if others.is_empty() {
        send(pgid, signal);
        return;
    }
    for pid in others {
        // SAFETY: plain kill(2) on a member of a process group we created.
        unsafe { libc::kill(pid, signal) };
    }
}

/// The processes of group `pgid`, from /proc (empty where /proc is unavailable).
pub(super) fn members(pgid: i32) -> Vec<i32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses.
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|stat| {
                    let rest = &stat[stat.rfind(')')? + 1..];
                    rest.split_whitespace().nth(2)?.parse::<i32>().ok()
                })
                == Some(pgid)
        })
        .collect()
}

fn send(pgid: i32, signal: i32) {
    // SAFETY: plain kill(2) on a process group we created.
    let result = unsafe { libc::kill(-pgid, signal) };
    if result != 0 {
        tracing::debug!(
            "signal {signal} to process group {pgid}: {}",
            io::Error::last_os_error()
        );
    }
}

/// Stops a group this process did not start (a crashed run's leftover): SIGTERM, then SIGKILL
/// to whatever is still there after `grace`.
pub(super) fn terminate_group(pgid: i32, grace: Duration) {
    send(pgid, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    while group_exists(pgid) && Instant::now() < deadline {
        thread::sleep(POLL);
    }
    if group_exists(pgid) {
        send(pgid, libc::SIGKILL);
    }
}
