//! Everything autobuild does with git, through libgit2 (no `git` executable needed):
//! per-task worktrees and branches, checkpoint commits after player steps, tree hashes of a
//! worktree's current state, the audit-and-restore after read-only steps, diffs the runner
//! computes itself, and merging an approved branch into its base.
//!
//! Commits are authored with the repository's configured identity, or `autobuild
//! <autobuild@localhost>` when there is none. All paths reported to callers are relative to the
//! repository root, `/`-separated, sorted and unique.

mod base_files;
mod branch;
mod branch_create;
mod checkout;
mod checkout_guard;
mod clock;
mod complete_tree;
mod created;
mod diff;
mod error;
mod files;
mod guard;
mod hold;
mod index_cache;
mod init;
mod integrity;
mod landing;
mod left_out;
mod linked;
mod links;
mod locks;
mod merge;
mod objects;
pub mod process_opts;
mod ref_guard;
mod remote;
mod repo;
mod restore;
mod scan;
mod snapshot;
mod stamp;
mod stat_walk;
mod step_repo;
mod strategy;
pub mod task_repo;
mod trash;
mod tree_diff;
mod tree_merge;
mod turn_diffs;
mod walks;
mod worktree;

pub use base_files::{base_versions, tree_id_without, BaseContent, BaseFile};
pub use checkout_guard::{CheckoutGuard, Guarded};
pub use clock::now_ms;
pub use complete_tree::{unlandable_since_fork, Unlandable};
pub use created::split_created;
pub use diff::{diff_stat, diff_text, ChangeStatus, DiffStat, FileChange};
pub use error::GitError;
pub use guard::GitDirGuard;
pub use hold::Held;
pub use init::init_with_commit;
pub use integrity::{backup, branch_tip, on_branch_at, path_in_branch, reattach};
pub use landing::{BaseMove, Landing, NotMoved, Prepared};
pub use left_out::{remove_left_out, untracked_paths};
pub use linked::record_linked;
pub use locks::{remove_task_locks, AdminLock};
pub use merge::MergeOutcome;
pub use objects::{import_objects, Imported};
pub use ref_guard::{RefGuard, RefOwner, RefRestored};
pub use repo::{person, Repo};
pub use restore::{restore, restore_paths, restore_since, write_commit_files, Reverted};
pub use snapshot::{
    changed_files_since, checkpoint, checkpoint_within_scope, drop_from_checkpoint, head_commit,
    worktree_state_tree, Checkpoint,
};
pub use stamp::stamp_clock;
pub use step_repo::StepRepo;
pub use strategy::MergeStrategy;
pub use trash::{Trash, TRASH_DIR};
pub use turn_diffs::{TurnDiffs, PATCH_LIMIT, TESTS_DIFF_LIMIT};
pub use walks::walks_of;
pub use worktree::{OpenedWorktree, WorktreeInfo};

/// A commit id as the runner names it to people: its first ten hex digits.
pub fn short_id(hex: &str) -> &str {
    hex.get(..10).unwrap_or(hex)
}
