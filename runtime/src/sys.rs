//! The process: settings for a party's hot loops, and its resource usage.

/// Keeps freed buffers in the allocator instead of handing them back to the kernel.
///
/// The protocols allocate and free buffers of a few hundred kB per round (bit planes, PRSS
/// output, messages). With glibc's defaults such buffers are mmap'ed and unmapped, or trimmed
/// off the heap, every time, so each round pays a page fault per 4 kB page it touches; at batch
/// 100 000 that was the larger part of the PRSS and bit-extraction time. This raises the mmap
/// threshold to its maximum (32 MiB on 64-bit glibc) and the trim threshold to 512 MiB, so the
/// steady state reuses heap pages. Process-wide; idempotent; a no-op outside glibc.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes allocator parameters; any value is accepted or refused
        // (return value 0), never undefined behaviour.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
        }
    }
}

/// The process's resource usage (every thread), or `None` where the OS does not say.
pub fn rusage() -> Option<libc::rusage> {
    // SAFETY: getrusage writes one rusage struct into the zeroed value we pass.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
        return None;
    }
    Some(usage)
}
