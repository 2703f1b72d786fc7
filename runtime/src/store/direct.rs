//! Bulk writes that bypass the page cache (`O_DIRECT`) where the file system allows it.
//!
//! Writing a gallery through the page cache costs the writer a kernel copy and a fresh page
//! (allocated, charged, and for ext4 a delayed-allocation reservation) per 4 KiB: measured on a
//! 2-vCPU EPYC VM, 0.3 to 0.9 CPU-seconds per GB, more than dealing the shares. A direct write
//! hands the pages to the device instead. It needs the memory, the file offset and the length
//! aligned to [`DIRECT_ALIGN`], so a write is split: the unaligned head and tail go through the
//! page cache, the aligned middle goes direct when the buffer is congruent to the offset
//! ([`PageBuf`] makes it so). Where `O_DIRECT` is refused, everything goes through the cache.

use std::fs::File;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

/// Alignment of direct writes: a page, which covers every logical block size up to it.
pub const DIRECT_ALIGN: usize = 4096;

#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Page([u8; DIRECT_ALIGN]);

/// A zeroed, page-aligned byte buffer, reused from block to block (so its pages are faulted in
/// once).
pub struct PageBuf {
    pages: Vec<Page>,
}

impl PageBuf {
    /// At least `len` bytes.
    pub fn new(len: usize) -> PageBuf {
        PageBuf {
            pages: vec![Page([0; DIRECT_ALIGN]); len.div_ceil(DIRECT_ALIGN)],
        }
    }

    /// The `len` bytes from `lead` (`lead < DIRECT_ALIGN`): placed so that their address is
    /// congruent to a file offset `o` with `o % DIRECT_ALIGN == lead`, grown if needed.
    pub fn window(&mut self, lead: usize, len: usize) -> &mut [u8] {
        let need = (lead + len).div_ceil(DIRECT_ALIGN);
        if self.pages.len() < need {
            self.pages.resize(need, Page([0; DIRECT_ALIGN]));
        }
        let all: &mut [u8] = bytemuck_pages(&mut self.pages);
        &mut all[lead..lead + len]
    }
}

fn bytemuck_pages(pages: &mut [Page]) -> &mut [u8] {
    // SAFETY: `Page` is `repr(C)` around a byte array with no padding (size == align), so the
    // pages are `pages.len() * DIRECT_ALIGN` initialised bytes, borrowed mutably as such.
    unsafe {
        std::slice::from_raw_parts_mut(pages.as_mut_ptr().cast::<u8>(), pages.len() * DIRECT_ALIGN)
    }
}

impl std::fmt::Debug for PageBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageBuf({} pages)", self.pages.len())
    }
}

/// A second handle on a file, opened with `O_DIRECT`; `None` where the file system refuses it.
pub fn open_direct(path: &Path) -> Option<File> {
    if std::env::var_os("IRISC_STORE_BUFFERED").is_some() {
        return None;
    }
    File::options()
        .write(true)
        .custom_flags(libc::O_DIRECT)
        .open(path)
        .ok()
}

/// Writes `buf` at `offset` of `file`: the page-aligned middle through `direct` when there is
/// one and `buf` is congruent to `offset`, the rest through the page cache. A refused direct
/// write (`EINVAL`: an alignment the device does not take) drops `direct` and goes buffered.
pub fn write_at(
    file: &File,
    direct: &mut Option<File>,
    buf: &[u8],
    offset: u64,
) -> std::io::Result<()> {
    let a = DIRECT_ALIGN as u64;
    let lead = (offset % a) as usize;
    let congruent = (buf.as_ptr() as usize) % DIRECT_ALIGN == lead;
    let head = if lead == 0 { 0 } else { DIRECT_ALIGN - lead }.min(buf.len());
    let middle = (buf.len() - head) / DIRECT_ALIGN * DIRECT_ALIGN;
    let Some(d) = direct.as_ref().filter(|_| congruent && middle > 0) else {
        return file.write_all_at(buf, offset);
    };
    file.write_all_at(&buf[..head], offset)?;
    let at = offset + head as u64;
    match d.write_all_at(&buf[head..head + middle], at) {
        Ok(()) => {}
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
            *direct = None;
            file.write_all_at(&buf[head..head + middle], at)?;
        }
        Err(e) => return Err(e),
    }
    file.write_all_at(&buf[head + middle..], at + middle as u64)
}

/// Copies `src` into `dst` (same length) with non-temporal stores where the CPU has AVX-512:
/// for a block buffer that goes to the device next, the copy then skips reading the
/// destination lines into the cache first (half the memory traffic of a plain copy) and leaves
/// the cache to the dealing and hashing.
pub fn copy_streaming(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy_streaming: lengths differ");
    #[cfg(target_arch = "x86_64")]
    {
        let head = dst.as_ptr().align_offset(64).min(dst.len());
        if dst.len() - head >= 4096 && std::arch::is_x86_feature_detected!("avx512f") {
            dst[..head].copy_from_slice(&src[..head]);
            let body = (dst.len() - head) / 64 * 64;
            // SAFETY: AVX-512F was detected; `dst[head..]` is 64-byte aligned and both ranges
            // hold `body` bytes.
            unsafe { stream64(&mut dst[head..head + body], &src[head..head + body]) };
            dst[head + body..].copy_from_slice(&src[head + body..]);
            return;
        }
    }
    dst.copy_from_slice(src);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn stream64(dst: &mut [u8], src: &[u8]) {
    use std::arch::x86_64::*;
    for (d, s) in dst.chunks_exact_mut(64).zip(src.chunks_exact(64)) {
        let v = _mm512_loadu_si512(s.as_ptr().cast());
        _mm512_stream_si512(d.as_mut_ptr().cast(), v);
    }
    // The streamed lines are ordered before whatever the caller does next (the write).
    _mm_sfence();
}
