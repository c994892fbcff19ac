//! The seccomp filter every confined process gets, whichever backend confines it: system
//! calls that reach past the filesystem rules, refused with an error the program can report.
//!
//! - `socket(AF_UNIX, …)`, unless `[sandbox] network = "host"`: neither read-only binds nor
//!   Landlock (before ABI 9) stop `connect(2)` to a socket file, so a host service — a
//!   `docker.sock`, an ssh or gpg agent, D-Bus, anything under `$HOME` or `/run` — would be one
//!   call away. Socket pairs (`socketpair(2)`, what pipes between a program's own processes
//!   use) stay allowed.
//! - Every `socket(2)` under `network = "none"` when the backend has no network namespace to
//!   give (Landlock): no IP either, and no loopback.
//! - `io_uring_setup(2)`: io_uring opens sockets and files without the system calls above.
//! - `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`: typing into a terminal the process still has a
//!   descriptor of.
//!
//! The filter is compiled in the parent ([`program`]) and installed by the child between fork
//! and exec ([`install`], after `PR_SET_NO_NEW_PRIVS`), so the child only makes system calls.

use std::collections::BTreeMap;
use std::io;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// Which sockets a process may open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sockets {
    /// All but Unix-domain ones.
    NoUnix,
    /// Any (`network = "host"`).
    All,
    /// None (`network = "none"` without a network namespace).
    None,
}

/// The filter for `sockets`, for the architecture autobuild runs on.
pub fn program(sockets: Sockets) -> io::Result<BpfProgram> {
    let arch = TargetArch::try_from(std::env::consts::ARCH).map_err(other)?;
    let arg = |index, value: u64| {
        SeccompCondition::new(index, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, value)
            .and_then(|condition| SeccompRule::new(vec![condition]))
            .map_err(other)
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    match sockets {
        Sockets::All => {}
        // An empty list matches every call.
        Sockets::None => {
            rules.insert(libc::SYS_socket, Vec::new());
        }
        Sockets::NoUnix => {
            rules.insert(libc::SYS_socket, vec![arg(0, libc::AF_UNIX as u64)?]);
        }
    }
    rules.insert(libc::SYS_io_uring_setup, Vec::new());
    // The request's type is the C library's and differs between targets.
    #[allow(clippy::unnecessary_cast)]
    rules.insert(
        libc::SYS_ioctl,
        vec![
            arg(1, libc::TIOCSTI as u64)?,
            arg(1, libc::TIOCLINUX as u64)?,
        ],
    );
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EACCES as u32),
        arch,
    )
    .map_err(other)?;
    filter.try_into().map_err(other)
}

/// Installs `program` on the calling thread (a forked child before exec); sets
/// `PR_SET_NO_NEW_PRIVS` (nothing it executes gains privileges), which a filter needs.
pub fn install(program: &BpfProgram) -> io::Result<()> {
    seccompiler::apply_filter(program).map_err(|error| match error {
        seccompiler::Error::Seccomp(errno) | seccompiler::Error::Prctl(errno) => errno,
        error => other(error),
    })
}

fn other(error: impl std::fmt::Display) -> io::Error {
    io::Error::other(format!("seccomp filter: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_policy_compiles_for_this_machine() {
        for sockets in [Sockets::NoUnix, Sockets::All, Sockets::None] {
            assert!(!program(sockets).unwrap().is_empty(), "{sockets:?}");
        }
    }
}
