//! Processes a child left behind outside its process group, and how none of them survives it.
//!
//! A child's process group is stopped when the child ends (module `group`), but a process can
//! leave the group: `setsid`, or a double fork that daemonizes. autobuild is a child subreaper
//! (module `group`), so every such process is reparented to autobuild once its parent dies —
//! and its parent, a member of the stopped group, is dead by then. So after each child ends,
//! [`sweep`] kills every child of autobuild that autobuild did not start itself, together with
//! everything that process started, and reaps it: when [`crate::run`] returns, nothing the
//! child started is still running. Unconfined, this is the guarantee; in the sandbox the
//! child's own process namespace gives it first (module `sandbox::bwrap`) and the sweep finds
//! nothing.
//!
//! Every child [`crate::run`] starts leads a session of its own, and so does everything that
//! escaped one: a process cannot join a session it did not create. So an orphan is a child of
//! autobuild in another session than autobuild's that [`crate::run`] did not start itself; a
//! helper started with a plain [`Command`] (a `git` command line, a test's own child) stays in
//! autobuild's session and is never swept. Which children [`crate::run`] started is the set
//! [`spawn`] keeps: the fork and the insertion happen under the lock the sweep also holds, so
//! a child another thread is just starting is never taken for an orphan. A sweep kills orphans of whichever child left them,
//! one still running on another thread of a feature run included: no orphan is the runner's.
//! A process that is still there after SIGKILL (stuck in the kernel, or no longer ours to
//! signal) is returned by name, and the caller fails the step rather than look at a worktree
//! something may still be writing.

use std::collections::{HashMap, HashSet};
use std::io;
use std::process::{Child, Command};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// The children this process started and has not reaped yet.
static SPAWNED: Mutex<Vec<u32>> = Mutex::new(Vec::new());

thread_local! {
    /// What this thread's sweeps killed since [`take_killed`] last asked.
    static KILLED: std::cell::RefCell<Vec<Orphan>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What the sweeps on this thread killed since the last call: the engine asks after an agent
/// step, so the run's records say that the agent left processes running.
pub fn take_killed() -> Vec<Orphan> {
    KILLED.with(|killed| std::mem::take(&mut *killed.borrow_mut()))
}

/// How long a sweep keeps killing and reaping before it names what is left.
const SWEEP_LIMIT: Duration = Duration::from_secs(2);

/// A pause between two rounds of a sweep.
const ROUND: Duration = Duration::from_millis(5);

/// A process of the sweep's, as `/proc` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Orphan {
    pub pid: i32,
    /// The program's name (`/proc/<pid>/comm`).
    pub command: String,
}

impl std::fmt::Display for Orphan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (pid {})", self.command, self.pid)
    }
}

/// What one sweep did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Swept {
    /// Killed and reaped.
    pub killed: Vec<Orphan>,
    /// Still there when the sweep gave up.
    pub left: Vec<Orphan>,
}

fn spawned() -> MutexGuard<'static, Vec<u32>> {
    // A panic while the lock was held leaves the list as it was: still the right list.
    SPAWNED
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A started child of this process, known to the sweep until it is dropped (after the child is
/// reaped: an unreaped child the sweep did not know would be reaped by it, stealing its status).
#[derive(Debug)]
pub(crate) struct Tracked(u32);

impl Drop for Tracked {
    fn drop(&mut self) {
        spawned().retain(|&pid| pid != self.0);
    }
}

/// Starts `command` as a child the sweep knows about.
pub(crate) fn spawn(
    command: &mut Command,
    start: impl FnOnce(&mut Command) -> io::Result<Child>,
) -> io::Result<(Child, Tracked)> {
    let mut list = spawned();
    let child = start(command)?;
    let pid = child.id();
    list.push(pid);
    Ok((child, Tracked(pid)))
}

/// Kills and reaps every orphan handed to this process as subreaper, with all of its
/// descendants; see the module doc.
pub fn sweep() -> Swept {
    let list = spawned();
    let own: HashSet<i32> = list
        .iter()
        .filter_map(|&pid| i32::try_from(pid).ok())
        .collect();
    let me = i32::try_from(std::process::id()).unwrap_or(i32::MAX);
    // SAFETY: getsid(0) only reads this process's session id.
    let session = unsafe { libc::getsid(0) };
    let orphan =
        |entry: &&Entry| entry.ppid == me && entry.session != session && !own.contains(&entry.pid);
    let deadline = Instant::now() + SWEEP_LIMIT;
    let mut swept = Swept::default();
    let mut seen: HashSet<i32> = HashSet::new();
    loop {
        let table = process_table();
        let roots: Vec<&Entry> = table.values().filter(orphan).collect();
        if roots.is_empty() {
            break;
        }
        for entry in descendants(&table, &roots) {
            // SAFETY: plain kill(2) of a process this one inherited as subreaper, or of one of
            // its descendants.
            unsafe { libc::kill(entry.pid, libc::SIGKILL) };
            if seen.insert(entry.pid) && !entry.zombie {
                swept.killed.push(entry.orphan());
            }
        }
        for root in &roots {
            let mut status = 0;
            // SAFETY: waitpid on a child of this process that no `Child` owns; `status` is a
            // valid out pointer.
            unsafe { libc::waitpid(root.pid, &mut status, libc::WNOHANG) };
        }
        if Instant::now() >= deadline {
            swept.left = process_table()
                .values()
                .filter(orphan)
                .map(Entry::orphan)
                .collect();
            break;
        }
        thread::sleep(ROUND);
    }
    drop(list);
    if !swept.killed.is_empty() {
        tracing::debug!(killed = ?swept.killed, "killed processes a child left behind");
        KILLED.with(|killed| killed.borrow_mut().extend(swept.killed.iter().cloned()));
    }
    swept
}

/// One line of `/proc/<pid>/stat`.
#[derive(Debug)]
struct Entry {
    pid: i32,
    ppid: i32,
    session: i32,
    zombie: bool,
    command: String,
}

impl Entry {
    fn orphan(&self) -> Orphan {
        Orphan {
            pid: self.pid,
            command: self.command.clone(),
        }
    }
}

/// Every process `/proc` shows, by pid (empty where `/proc` is unavailable).
fn process_table() -> HashMap<i32, Entry> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return HashMap::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .map(|entry| (entry.pid, entry))
        .collect()
}

/// `pid (comm) state ppid pgrp session …`, where comm may hold spaces and parentheses.
fn parse_stat(pid: i32, stat: &str) -> Option<Entry> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let command = stat.get(open + 1..close)?.to_string();
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let state = rest.next()?;
    let ppid = rest.next()?.parse().ok()?;
    let session = rest.nth(1)?.parse().ok()?;
    Some(Entry {
        pid,
        ppid,
        session,
        zombie: state == "Z",
        command,
    })
}

/// `roots` and every process below them in `table`.
fn descendants<'t>(table: &'t HashMap<i32, Entry>, roots: &[&'t Entry]) -> Vec<&'t Entry> {
    let mut children: HashMap<i32, Vec<&Entry>> = HashMap::new();
    for entry in table.values() {
        children.entry(entry.ppid).or_default().push(entry);
    }
    let mut all: Vec<&Entry> = roots.to_vec();
    let mut next = 0;
    while let Some(entry) = all.get(next) {
        let pid = entry.pid;
        next += 1;
        if let Some(below) = children.get(&pid) {
            all.extend(below.iter().copied().filter(|e| e.pid != pid));
        }
        if all.len() > table.len() {
            break;
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_line_with_parentheses_in_the_name_is_read() {
        let entry = parse_stat(42, "42 (a (b) c) S 7 40 41 0 -1").unwrap();
        let fields = (entry.ppid, entry.session, entry.zombie);
        assert_eq!(
            (fields, entry.command.as_str()),
            ((7, 41, false), "a (b) c")
        );
        assert!(parse_stat(1, "1 (x) Z 0 1 1").unwrap().zombie);
        assert!(parse_stat(1, "garbage").is_none());
        assert!(parse_stat(1, "1 (x) S 0 1").is_none());
    }
}
