//! The window process's allocator setting. Every frame egui and the GL driver allocate and free
//! a few megabytes; glibc's defaults return the heap's top to the system after each frame and map
//! mid-size blocks afresh, so the next frame faults the same pages back in (under Mesa's
//! software renderer that was half of the window thread's CPU per frame). Keeping up to 256 MB
//! of freed heap and mapping only blocks above 32 MB directly avoids that; the engines' large
//! arrays (above 32 MB) are still mapped on their own and returned to the system when freed.

/// Applies the setting (glibc on Linux; elsewhere nothing to do).
pub fn keep_freed_memory_between_frames() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes two thresholds of glibc's allocator; it takes the allocator's
    // own lock, so other threads may allocate meanwhile.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
    }
}
