//! libgit2's process-wide settings, made once before any repository is opened.

/// The most object data libgit2 keeps parsed in memory across all repositories. Its default
/// (256 MiB) lets one run keep every tree it ever read: at 100,000 files that was 7.7 MiB, a
/// fifth of the runner's peak heap, for objects the runner reads once per turn at most (a
/// checkpoint writes trees from the index's tree cache, a turn's diffs read only the trees
/// that changed). Evicted objects are read again from the object store when needed.
const OBJECT_CACHE_BYTES: libc::ssize_t = 4 * 1024 * 1024;

/// Applies the settings. A setting libgit2 refuses leaves its default, which only costs
/// memory.
pub fn configure() {
    // SAFETY: git_libgit2_opts is safe to call before any repository is opened; this runs
    // first thing in `main`, on its only thread.
    if let Err(error) = unsafe { git2::opts::set_cache_max_size(OBJECT_CACHE_BYTES) } {
        tracing::debug!("libgit2 kept its object cache size: {error}");
    }
}
