//! The process's allocator setting, for the window and the command line alike. Engines and the
//! window allocate and free blocks of a few to tens of megabytes every iteration or frame (a
//! pyramid level's costs, a chunk's scratch, egui's and the GL driver's buffers). With glibc's
//! defaults each such block is mapped afresh and returned at once, so every iteration faults
//! the same pages back in and every core's TLB is flushed when it is unmapped (on a 1-MP flow
//! run 2 of its 15 CPU seconds were the kernel's; under Mesa's software renderer half of the
//! window thread's CPU per frame). Keeping up to 256 MB of freed heap and mapping only blocks
//! above 32 MB directly avoids that; the largest arrays are still mapped on their own and
//! returned to the system when freed, so peak memory does not grow.

/// Applies the setting (glibc on Linux; elsewhere nothing to do). Call it once, early.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes two thresholds of glibc's allocator; it takes the allocator's
    // own lock, so other threads may allocate meanwhile.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}
