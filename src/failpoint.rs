//! Named failpoints: the places where a kill would leave the repository or the run record half
//! changed. The crash-safety suite (`tests/crash_recovery.rs`) kills the real binary at each
//! of them and checks that `autobuild resume` recovers.
//!
//! A failpoint is inert unless `AUTOBUILD_FAILPOINT` names it: `checkpoint.commit` kills the
//! process the first time that point is reached, `checkpoint.commit@2` the second time. The kill
//! is a SIGKILL sent to the process itself, so nothing is flushed or unwound — exactly what a
//! power cut or the OOM killer would do. The hook lives in the production binary on purpose:
//! the suite must exercise the code users run, and the cost of an inert point is one
//! comparison against a value read once.
//!
//! The points, in the order a run reaches them, are listed in [`POINTS`].

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Every failpoint the runner has, so tests can cover them all and a typo in
/// `AUTOBUILD_FAILPOINT` is caught by the suite rather than silently never firing.
pub const POINTS: &[&str] = &[
    "worktree.branch",
    "worktree.added",
    "state.saved",
    "checkpoint.index",
    "checkpoint.commit",
    "audit.restored",
    "merge.prepared",
    "merge.ref",
    "merge.files",
    "merge.index",
    "merge.landed",
    "cleanup.worktree",
    "cleanup.branch",
];

struct Armed {
    name: String,
    nth: u32,
    seen: AtomicU32,
}

fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let spec = std::env::var("AUTOBUILD_FAILPOINT").ok()?;
            let (name, nth) = match spec.split_once('@') {
                Some((name, nth)) => (name.to_string(), nth.parse().ok()?),
                None => (spec, 1),
            };
            Some(Armed {
                name,
                nth,
                seen: AtomicU32::new(0),
            })
        })
        .as_ref()
}

/// Kills the process here when `AUTOBUILD_FAILPOINT` names this point (and this is the
/// requested hit).
pub fn hit(name: &str) {
    debug_assert!(POINTS.contains(&name), "unknown failpoint {name}");
    let Some(armed) = armed() else {
        return;
    };
    if armed.name != name {
        return;
    }
    if armed.seen.fetch_add(1, Ordering::SeqCst) + 1 == armed.nth {
        // SAFETY: sending a signal to our own pid has no memory effects.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}
