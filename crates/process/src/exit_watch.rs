//! Waking up when a child exits instead of at the next poll. On Linux a pidfd (kernel 5.3 and
//! later) becomes readable when its process ends, so the supervisor's pause between checks of
//! the clock and the cancel token ends at the child's exit; elsewhere, or on a kernel without
//! pidfds, the pause is a plain sleep, as before.

use std::process::Child;
use std::thread;
use std::time::Duration;

#[cfg(target_os = "linux")]
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

pub(super) struct ExitWatch {
    #[cfg(target_os = "linux")]
    fd: Option<OwnedFd>,
}

impl ExitWatch {
    /// Watches `child`, which must not be reaped yet (its pid could name another process).
    pub(super) fn new(child: &Child) -> ExitWatch {
        #[cfg(target_os = "linux")]
        {
            let pid = libc::pid_t::try_from(child.id()).unwrap_or(-1);
            // SAFETY: pidfd_open(2) takes a pid and flags and returns a new descriptor or -1.
            let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
            let fd = i32::try_from(fd).ok().filter(|fd| *fd >= 0).map(|fd| {
                // SAFETY: the descriptor was just created for us and nothing else owns it.
                unsafe { OwnedFd::from_raw_fd(fd) }
            });
            ExitWatch { fd }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = child;
            ExitWatch {}
        }
    }

    /// Waits `limit`, or less when the child exits first (at once when it already has).
    pub(super) fn wait(&self, limit: Duration) {
        #[cfg(target_os = "linux")]
        if let Some(fd) = &self.fd {
            let mut watched = libc::pollfd {
                fd: fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            // Rounded up: a zero timeout would turn the caller's loop into a busy one.
            let ms = i32::try_from(limit.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
            // SAFETY: poll(2) on one valid pollfd that lives across the call.
            let ready = unsafe { libc::poll(&mut watched, 1, ms) };
            if ready >= 0
                || std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted
            {
                return;
            }
        }
        thread::sleep(limit);
    }
}
