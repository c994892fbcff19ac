//! A child process's exit and resource use, for the benches' figures (`wait4`: `Child::wait`
//! gives no rusage).

#![allow(dead_code)] // each bench uses a different subset

use std::process::Command;

/// Runs `command` to its end: its exit code (-1 when a signal ended it) and its resource use,
/// with that of the children it waited for.
// The child is reaped by `wait4` below, which `Child::wait` cannot replace: it gives no rusage.
#[allow(clippy::zombie_processes)]
pub fn run(command: &mut Command) -> (i32, libc::rusage) {
    let child = command.spawn().expect("spawn");
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: wait4 fills the two values we pass; the child is ours and not waited for elsewhere.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        let waited = libc::wait4(pid, &mut status, 0, &mut usage);
        assert_eq!(waited, pid, "wait4");
        usage
    };
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    (code, usage)
}

/// User plus system CPU time of `usage`, in ms.
pub fn cpu_ms(usage: &libc::rusage) -> f64 {
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(usage.ru_utime) + ms(usage.ru_stime)
}
