//! Cleaning up after a run that was killed while an agent ran: the agent's process group id
//! is recorded while it runs ([`super::ProcessSpec::group_file`]); a later resume stops that
//! group if it is still at work in the same worktree.

use std::path::Path;

use super::{group, DEFAULT_KILL_GRACE};

/// Stops the process group recorded in `group_file` by a run that died without stopping it
/// (SIGKILL, a crash), when a member of that group still works in `cwd`: working directories
/// are checked so a recycled process id never hits an unrelated process. Returns the group id
/// that was stopped.
pub fn stop_leftover_group(group_file: &Path, cwd: &Path) -> Option<i32> {
    let pgid: i32 = std::fs::read_to_string(group_file)
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let _ = std::fs::remove_file(group_file);
    let cwd = std::fs::canonicalize(cwd).ok()?;
    if pgid <= 1 || !group_members(pgid).iter().any(|pid| works_in(*pid, &cwd)) {
        return None;
    }
    group::terminate_group(pgid, DEFAULT_KILL_GRACE);
    Some(pgid)
}

/// The processes of group `pgid`, from /proc (empty where /proc is unavailable).
fn group_members(pgid: i32) -> Vec<i32> {
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

fn works_in(pid: i32, dir: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(dir))
}
