//! Cleaning up after a run that was killed while an agent ran: the agent's process group id
//! is recorded while it runs ([`super::ProcessSpec::group_file`]); a later resume stops that
//! group if it is still at work in the same worktree. A confined agent is found the same way:
//! the recorded group is the sandbox wrapper's, which the program shares, and the sandbox binds
//! the worktree at its own path, so `/proc/<pid>/cwd` names it as it does outside.

use std::path::Path;

use super::{group, DEFAULT_KILL_GRACE};

/// Stops the process group recorded in `group_file` (a blank file records none; anything but a
/// regular file is not read, so a FIFO put there cannot block) by a run that
/// died without stopping it (SIGKILL, a crash), when a member of that group still works in
/// one of `dirs` (the worktree; the run directory, where the runner's own copies of it run
/// checks): working directories are checked so a recycled process id never hits an unrelated
/// process. Returns the group id that was stopped.
pub fn stop_leftover_group(group_file: &Path, dirs: &[&Path]) -> Option<i32> {
    let pgid: i32 = base::user_file::read_record_text(group_file)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let _ = std::fs::remove_file(group_file);
    let dirs: Vec<_> = dirs
        .iter()
        .filter_map(|dir| std::fs::canonicalize(dir).ok())
        .collect();
    let at_work = |pid: &i32| dirs.iter().any(|dir| works_in(*pid, dir));
    if pgid <= 1 || !group::members(pgid).iter().any(at_work) {
        return None;
    }
    group::terminate_group(pgid, DEFAULT_KILL_GRACE);
    Some(pgid)
}

fn works_in(pid: i32, dir: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
}
