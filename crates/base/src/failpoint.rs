//! Named failpoints: the places where a kill would leave the repository or the run record half
//! changed. The crash-safety suite (`tests/suite/crash_recovery.rs`) kills the real binary at each
//! of them and checks that `autobuild resume` recovers.
//!
//! A failpoint is inert unless `AUTOBUILD_FAILPOINT` names it: `checkpoint.commit` kills the
//! process the first time that point is reached, `checkpoint.commit@2` the second time. The kill
//! is a SIGKILL sent to the process itself, so nothing is flushed or unwound — exactly what a
//! power cut or the OOM killer would do. The hook lives in the production binary on purpose:
//! the suite must exercise the code users run, and the cost of an inert point is one
//! comparison against a value read once.
//!
//! The points, in the order a run reaches them, and what a resume does after a kill there:
//!
//! | point | killed just after | resume |
//! |---|---|---|
//! | `worktree.branch` | creating the task branch | the journal says the worktree was being added: removes what exists of it and the untouched branch, adds it again |
//! | (mid-checkout) | writing some of the worktree's files | the same: a half-checked-out tree is never used |
//! | `worktree.added` | adding and verifying the worktree | the same (the step had not been recorded) |
//! | `state.saved` | any save of `state.json` (`@N`: the Nth) | continues after the last recorded step |
//! | `objects.written` | a confined agent step, before its objects are imported | imports them (verified), saves the step's unrecorded work under a backup ref, reverts to the last checkpoint, runs the step again |
//! | `checkpoint.index` | staging the player's work | saves the unrecorded work under a backup ref, reverts to the last checkpoint, runs the step again |
//! | `checkpoint.commit` | committing the checkpoint | the same; the commit is kept under the backup ref |
//! | `audit.restored` | reverting a read-only step's changes | reverts to the last checkpoint, runs the step again |
//! | `merge.prepared` | writing the commit to land and journaling it | moves the base (removing the landing's own stale ref lock), then as below |
//! | `merge.ref` | moving the base branch | brings the main checkout's files and index up to date, then cleans up |
//! | `merge.files` | writing the main checkout's files | rewrites what is still at the old version, writes the index, cleans up |
//! | `merge.index` | writing the main checkout's index | finds the checkout up to date, cleans up |
//! | `merge.landed` | journaling that the work landed | removes the worktree and the branch |
//! | `cleanup.worktree` | removing the worktree | removes whatever is left of it, then the branch |
//! | `cleanup.trashed` | a feature moving a landed worktree's directory to the trash, before git's record of it is pruned | empties the trash, prunes the record, deletes the branch, records the merge |
//! | `cleanup.branch` | deleting the task branch | records the merge |
//!
//! A kill inside git's own write of a ref or an index (between its lock file and the rename)
//! leaves the lock file; resume removes the ones it can prove stale (`git::remove_task_locks`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Every failpoint the runner has, so tests can cover them all and a typo in
/// `AUTOBUILD_FAILPOINT` is caught by the suite rather than silently never firing.
pub const POINTS: &[&str] = &[
    "worktree.branch",
    "worktree.added",
    "state.saved",
    "objects.written",
    "checkpoint.index",
    "checkpoint.commit",
    "audit.restored",
    "merge.prepared",
    "merge.ref",
    "merge.files",
    "merge.index",
    "merge.landed",
    "cleanup.worktree",
    "cleanup.trashed",
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
