//! The process: settings for a party's hot loops, and its resource usage.

use std::alloc::{GlobalAlloc, Layout, System};

/// Allocations of at least this many bytes start on a cache line ([`LineAligned`]).
pub const LINE_ALIGNED_FROM: usize = 64 << 10;

/// The line the large blocks start on.
const LINE: usize = 64;

/// The global allocator of every program that links the runtime: the system's, with every
/// allocation of [`LINE_ALIGNED_FROM`] bytes or more (and an alignment below a line) starting
/// on a 64-byte cache line.
///
/// Why: the dot kernels read gallery rows and query rows a vector or a tile row (64 bytes) at a
/// time; glibc returns large blocks 16 bytes past a line, so every such load straddles two
/// lines. Measured on one core with AMX (tile rows of 64 bytes, L = 12 800, 248 codes, from
/// memory): 20.7 M dot products/s with gallery and columns on lines, 13.8 M with the gallery
/// 16 bytes off, 8.6 M with both off. Small allocations keep the system's alignment (a line
/// each would waste memory on the protocols' many small buffers).
///
/// How: a large block is `malloc`'s block of one line more, the returned pointer the first line
/// boundary past its start, the distance (1..=64 bytes) kept in the byte before it. Not
/// `posix_memalign`: glibc serves it from fresh pages each time even with
/// [`tune_allocator`]'s settings (a freed 64 MiB block faulted in again page by page,
/// `runtime/tests/allocator.rs`), where `malloc` reuses the heap.
pub struct LineAligned;

fn widened(l: Layout) -> bool {
    l.size() >= LINE_ALIGNED_FROM && l.align() < LINE
}

/// The line-aligned pointer inside the system block `raw` of `size + LINE` bytes, its distance
/// from `raw` recorded in the byte before it; null stays null.
///
/// # Safety
/// `raw` is null or a block of at least `size + LINE` bytes.
unsafe fn on_line(raw: *mut u8) -> *mut u8 {
    if raw.is_null() {
        return raw;
    }
    let skip = LINE - (raw as usize % LINE);
    // SAFETY: 1 <= skip <= LINE, inside the block; the byte before the result is inside too.
    unsafe {
        let p = raw.add(skip);
        p.sub(1).write(skip as u8);
        p
    }
}

/// The system block of a line-aligned pointer made by [`on_line`].
///
/// # Safety
/// `p` came from [`on_line`].
unsafe fn system_block(p: *mut u8) -> *mut u8 {
    // SAFETY: the caller's contract: the byte before `p` holds its distance from the block.
    unsafe { p.sub(usize::from(p.sub(1).read())) }
}

// SAFETY: small layouts go to the system allocator unchanged. A widened layout's block is a
// `malloc` block of `size + LINE` bytes; the pointer handed out is on a line inside it, which
// meets the layout's alignment (below a line), with `size` bytes after it; `dealloc` and
// `realloc` find the block again from the byte before the pointer. The widening depends on the
// layout only, so a block's allocation and its release take the same path.
unsafe impl GlobalAlloc for LineAligned {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if !widened(l) {
            // SAFETY: the caller's contract.
            return unsafe { System.alloc(l) };
        }
        // SAFETY: a non-zero size (widened), and `on_line` gets a block of size + LINE.
        unsafe { on_line(libc::malloc(l.size() + LINE).cast()) }
    }

    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if !widened(l) {
            // SAFETY: the caller's contract.
            return unsafe { System.alloc_zeroed(l) };
        }
        // SAFETY: as alloc; calloc zeroes the whole block.
        unsafe { on_line(libc::calloc(1, l.size() + LINE).cast()) }
    }

    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        if !widened(l) {
            // SAFETY: the caller's contract.
            return unsafe { System.dealloc(p, l) };
        }
        // SAFETY: `p` was allocated by this allocator with `l`, so through `on_line`.
        unsafe { libc::free(system_block(p).cast()) }
    }

    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract: new_size, rounded up to l.align(), does not overflow.
        let new = unsafe { Layout::from_size_align_unchecked(new_size, l.align()) };
        if !widened(l) && !widened(new) {
            // SAFETY: both layouts take the system's path.
            return unsafe { System.realloc(p, l, new_size) };
        }
        // A fresh block and a copy, not the system's realloc: under the party's allocator
        // settings (no trimming, no mapped blocks) growing in place took fresh pages at the
        // heap's top, and the 8-query dot phase of `iris_ids` had 28-37 K page faults and
        // 1.72-1.93 CPU-s per party against 0-10 K and 1.37-1.49 this way.
        // SAFETY: a fresh block of the new layout; both hold min(sizes) bytes; `p` was
        // allocated with `l` by this allocator.
        unsafe {
            let q = self.alloc(new);
            if !q.is_null() {
                std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                self.dealloc(p, l);
            }
            q
        }
    }
}

/// Keeps freed buffers in the allocator instead of handing them back to the kernel.
///
/// The protocols allocate and free buffers of a few hundred kB per round (bit planes, PRSS
/// output, messages), and a batch's comparisons buffers of tens to hundreds of MB (8 queries x
/// 100 000 records x 31 rotations are 24.8 M elements per vector). With glibc's defaults such
/// buffers are mmap'ed and unmapped, or trimmed off the heap, every time, so each use pays a
/// page fault and the kernel's zeroing per 4 kB page it touches. So: no mmap'ed chunks (every
/// size comes from the heap, where freed memory is reused) and no trimming. Memory in use then
/// stays at its peak, which a party reaches every batch anyway. (The arenas of threads other
/// than the main one still mmap chunks above their 64 MiB heaps; a party's protocol runs on its
/// main thread. Limiting the process to one arena as well measured worse: some parties'
/// comparison phases slowed, from contention on it.)
///
/// Measured (`iris_ids`, 100 000 records, a batch of 8, three parties on 2 cores, 1 thread,
/// against the earlier setting of a 32 MiB mmap threshold and a 512 MiB trim threshold,
/// alternating three times): the comparison phase's CPU 0.97-1.12 s -> 0.68-0.80 s per party,
/// its page faults 413-426 k -> 206-231 k, the party's CPU 3.30-3.46 s -> 2.93-3.10 s, peak
/// memory 3.73-3.78 -> 3.85-3.87 GB. Process-wide; idempotent; a no-op outside glibc.
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallopt only changes allocator parameters; any value is accepted or refused
        // (return value 0), never undefined behaviour.
        unsafe {
            libc::mallopt(libc::M_MMAP_MAX, 0);
            libc::mallopt(libc::M_TRIM_THRESHOLD, i32::MAX);
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

/// CPU time of the calling thread (user + system), or `None` where the OS does not say: what
/// a measurement of this thread's work reads, unmoved by other processes taking its core.
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    #[cfg(unix)]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec into `t`.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } != 0 {
            return None;
        }
        Some(std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// The size of a transparent huge page on x86-64 and arm64 (4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks the kernel to back `v`'s spare capacity with transparent huge pages, before it is
/// first written: the 2 MiB-aligned part of it (the kernel maps huge pages only there).
///
/// Why: a loaded gallery is gigabytes written once at load, a page fault per 4 KiB page, and
/// then read by the dot kernels a 4 KiB chunk of a row at a time, 48 rows 25.6 kB apart, a TLB
/// miss per chunk in ordinary pages. Measured on a 512-bit core, three parties on 2 cores,
/// `iris_ids` over rep3 with 50 000 records, the same build with and without the advice,
/// alternating three times: load 0.9-2.6 s per party with it, 1.8-4.1 s without, the system
/// time of the three 1.2-3.0 s against 3.7-7.5 s; the dot phase's CPU time the same (0.29-0.34
/// s), peak memory the same. The kernel alone, 48 records a call (each call's rows cold),
/// Z16 with 248 codes: 6.7 M dot products/s in ordinary pages, 7.8 M in huge pages
/// (`masked_dot_timing`, `IRISC_TIMING_HUGE=1`); in a scan the record panels stream the next
/// rows ahead, which hides most of that. Where the system gives huge pages to advised memory
/// only (the common `madvise` setting), a buffer gets them only when asked. Advice only:
/// refused advice (huge pages off, or not Linux) leaves ordinary pages.
pub fn advise_huge_pages<T>(v: &mut Vec<T>) {
    let spare = v.spare_capacity_mut();
    let start = spare.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(spare);
    let (lo, hi) = (
        start.next_multiple_of(HUGE_PAGE),
        end / HUGE_PAGE * HUGE_PAGE,
    );
    #[cfg(target_os = "linux")]
    if hi > lo {
        // SAFETY: [lo, hi) lies inside the vector's allocation, which this function borrows
        // mutably; MADV_HUGEPAGE changes how its untouched pages are backed, never their
        // contents.
        unsafe {
            libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (lo, hi);
}

/// Copies `src` into `dst` (equal lengths) with non-temporal stores where the CPU has AVX2:
/// the destination's cache lines are written without being read first, and are not kept in
/// cache.
///
/// Why: the dealer deals each record into a small buffer that stays in cache (so the record
/// hash reads it from there), then moves it into a block of tens of megabytes that goes to disk
/// with direct I/O and is not read again by the CPU. Ordinary stores would first read every
/// line of that block from memory.
pub fn copy_streaming(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy_streaming: lengths differ");
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && dst.len() >= 256 {
        // SAFETY: AVX2 is present (checked above); the lengths are equal.
        unsafe { copy_streaming_avx2(dst, src) };
        return;
    }
    dst.copy_from_slice(src);
}

/// Orders this thread's streaming stores before its later stores (`sfence`): what a thread
/// calls after a batch of [`crate::store::xxh3_wide::hash_and_stream`] copies and before
/// another thread or the kernel reads them.
pub fn fence_streaming_stores() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `sfence` is part of SSE, which every x86-64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
    #[cfg(not(target_arch = "x86_64"))]
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn copy_streaming_avx2(dst: &mut [u8], src: &[u8]) {
    use std::arch::x86_64::{__m256i, _mm256_loadu_si256, _mm256_stream_si256, _mm_sfence};
    // Ordinary stores up to the destination's first 32-byte boundary (streaming stores need
    // aligned addresses), then 32 bytes a store, then the tail.
    let head = dst.as_ptr().align_offset(32).min(dst.len());
    dst[..head].copy_from_slice(&src[..head]);
    let body = (dst.len() - head) / 32 * 32;
    let (d, s) = (dst[head..].as_mut_ptr(), src[head..].as_ptr());
    let mut at = 0;
    while at < body {
        // SAFETY: at + 32 <= body <= the slices' lengths past head; d + at is 32-byte aligned.
        unsafe {
            let v = _mm256_loadu_si256(s.add(at).cast::<__m256i>());
            _mm256_stream_si256(d.add(at).cast::<__m256i>(), v);
        }
        at += 32;
    }
    // Streaming stores are weakly ordered: fence them before anything else reads the buffer.
    _mm_sfence();
    let rest = head + body;
    dst[rest..].copy_from_slice(&src[rest..]);
}

#[cfg(test)]
mod tests {
    /// The kilobytes of anonymous huge pages in the mapping of this process that holds `addr`
    /// (`/proc/self/smaps`), or `None` where the file or the mapping is not found.
    #[cfg(target_os = "linux")]
    fn huge_kb_at(addr: usize) -> Option<u64> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line.split_whitespace().next().unwrap_or("");
            if let Some((lo, hi)) = range.split_once('-') {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
            if inside {
                if let Some(kb) = line.strip_prefix("AnonHugePages:") {
                    return kb.trim().trim_end_matches("kB").trim().parse().ok();
                }
            }
        }
        None
    }

    #[test]
    fn advised_vectors_keep_their_words_and_get_huge_pages_where_the_system_grants_them() {
        // Any size and offset: the words written after the advice are the words read back.
        for n in [0usize, 1, 1000, 3 << 20, (5 << 20) + 7] {
            let mut v: Vec<u16> = Vec::with_capacity(n);
            super::advise_huge_pages(&mut v);
            v.extend((0..n).map(|i| (i as u16).wrapping_mul(40503)));
            assert!(v
                .iter()
                .enumerate()
                .all(|(i, &x)| x == (i as u16).wrapping_mul(40503)));
        }
        // Where huge pages are given to advised memory (the `madvise` or `always` setting),
        // a 64 MiB buffer advised before its first write is backed by some of them.
        #[cfg(target_os = "linux")]
        {
            let setting = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
                .unwrap_or_default();
            if setting.contains("[madvise]") || setting.contains("[always]") {
                let mut v: Vec<u64> = Vec::with_capacity(8 << 20);
                super::advise_huge_pages(&mut v);
                v.resize(8 << 20, 1);
                let kb = huge_kb_at(v.as_ptr() as usize + (32 << 20)).unwrap_or(0);
                assert!(
                    kb >= 2048,
                    "huge pages are `{}` here, but the advised buffer has {kb} kB of them",
                    setting.trim()
                );
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// The streaming copy equals the bytes it was given at every length and every
        /// alignment of source and destination (head, aligned body and tail), and touches
        /// nothing around the destination.
        #[test]
        fn streaming_copies_equal_their_source(
            src in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000),
            dst_offset in 0usize..64,
            src_offset in 0usize..64,
        ) {
            let mut from = vec![0u8; src_offset];
            from.extend_from_slice(&src);
            let mut into = vec![0xA5u8; dst_offset + src.len() + 64];
            super::copy_streaming(&mut into[dst_offset..dst_offset + src.len()], &from[src_offset..]);
            proptest::prop_assert_eq!(&into[dst_offset..dst_offset + src.len()], &src[..]);
            proptest::prop_assert!(into[..dst_offset].iter().all(|&b| b == 0xA5));
            proptest::prop_assert!(into[dst_offset + src.len()..].iter().all(|&b| b == 0xA5));
        }
    }
}

#[cfg(test)]
mod line_aligned_tests {
    /// Large blocks start on a line, through allocation, growth across the threshold and
    /// shrinking back, with their contents kept; small ones keep working.
    #[test]
    fn large_blocks_start_on_a_line_and_keep_their_contents() {
        let big: Vec<u16> = Vec::with_capacity(1 << 20);
        assert_eq!(big.as_ptr() as usize % 64, 0);
        let mut v: Vec<u16> = (0..1000u16).collect();
        for n in 1000..200_000u32 {
            v.push(n as u16);
        }
        assert_eq!(v.as_ptr() as usize % 64, 0);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u16));
        v.truncate(10);
        v.shrink_to_fit();
        assert_eq!(v, (0..10u16).collect::<Vec<_>>());
        let zeroed = vec![0u32; 100_000];
        assert_eq!(zeroed.as_ptr() as usize % 64, 0);
        assert!(zeroed.iter().all(|&x| x == 0));
        let small: Vec<u8> = vec![1; 100];
        assert_eq!(small.iter().map(|&x| x as u32).sum::<u32>(), 100);
    }

    /// Growing and shrinking large blocks keeps their contents and their line, on random sizes
    /// with other blocks interleaved.
    #[test]
    fn large_reallocs_keep_contents_and_line() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        let mut v: Vec<u8> = Vec::with_capacity(70_000);
        let mut want: Vec<u8> = Vec::new();
        // Interleaved blocks, so that the reallocs move.
        let mut others = Vec::new();
        for _ in 0..200 {
            let extra = rng.random_range(0..300_000usize);
            let start = v.len();
            v.extend((0..extra).map(|i| (start + i) as u8 ^ 0x5a));
            want.extend((0..extra).map(|i| (start + i) as u8 ^ 0x5a));
            if rng.random_bool(0.3) {
                let keep = rng.random_range(0..=v.len());
                v.truncate(keep);
                want.truncate(keep);
                v.shrink_to(keep.max(70_000));
            }
            others.push(vec![1u8; rng.random_range(65_536..200_000)]);
            if others.len() > 4 {
                others.remove(0);
            }
            assert_eq!(v.as_ptr() as usize % 64, 0);
            assert!(v == want);
        }
    }
}
