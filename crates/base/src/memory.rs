//! Giving back what a phase freed. glibc's allocator keeps freed memory for reuse, and memory
//! freed in scattered chunks, or by another thread's arena, is often not what the next phase's
//! allocations can reuse: a landing after the turns then peaked at the turns' memory plus its
//! own. [`release_freed`] returns every wholly free page to the kernel.

/// Returns the pages that hold only freed memory to the kernel (glibc's `malloc_trim`; nothing
/// elsewhere).
pub fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointer and only releases memory no allocation holds.
    unsafe {
        libc::malloc_trim(0);
    }
}
