//! The streaming dealer behind `irisc share` (gallery stores) and `irisc enroll`: the NDJSON
//! gallery is read, dealt and written in blocks, so memory stays at one block whatever the
//! gallery size, and each block is dealt on every core.
//!
//! Per block: the main thread reads up to [`BLOCK_PER_THREAD`] lines per worker into one
//! buffer; each worker parses its lines (base64 decoded into reused buffers), deals each record
//! into three scratch records that stay in cache ([`RecordDealer`], AES-CTR under a fresh key
//! from the operating system per worker and block), writes its meta, hashes the three records
//! there (the store's [`RecordsSum`], by its version's [`RecordHash`]) and moves them into the
//! block with streaming stores (the block, tens of megabytes, goes to disk and is not read
//! again: ordinary stores would first read each of its lines; measured on rep3, 100 000
//! records, this and the AVX2 hash loop took dealing from 47 400 to 56 300-57 100 records per
//! CPU-second, `irisc-bench --sections share`); the main thread then checks
//! the ids (distinct, new) in file order and writes the block to the three stores in one
//! positioned write per region ([`Appender`]). Nothing is allocated per record.
//!
//! Any fault in the input (malformed line, wrong code length, repeated id) stops the run and is
//! reported exactly as the plain NDJSON reader reports it ([`super::share::read_iris`]).

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::ops::Range;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine as _;
use irisc_runtime::dealer::{encode_meta, RecordDealer};
use irisc_runtime::manifest::ManifestInput;
use irisc_runtime::store::{
    Appender, PageBuf, RecordHash, RecordLayout, RecordsSum, StoreParams, DIRECT_ALIGN,
};
use irisc_runtime::sys::copy_streaming;

/// Records a worker deals per block: large enough that a block's writes are megabytes, small
/// enough that the block's buffers stay in the tens of megabytes.
pub const BLOCK_PER_THREAD: usize = 128;

/// One NDJSON line as the fast path reads it: the strings borrowed from the line.
#[derive(serde::Deserialize)]
struct Line<'a> {
    id: u64,
    #[serde(borrow)]
    code: &'a str,
    #[serde(borrow)]
    mask: &'a str,
}

/// The lines of one block: their text in one buffer, and per line its range and number.
#[derive(Default)]
struct LineBlock {
    text: Vec<u8>,
    lines: Vec<(usize, Range<usize>)>,
}

/// Reads the non-blank lines of an NDJSON file block by block.
struct Lines {
    input: BufReader<File>,
    line: usize,
}

impl Lines {
    fn open(path: &Path) -> Result<Lines> {
        let f = File::open(path).map_err(|e| anyhow!("{}: cannot open: {e}", path.display()))?;
        Ok(Lines {
            input: BufReader::with_capacity(1 << 20, f),
            line: 0,
        })
    }

    /// Fills `block` with up to `max` lines; false at the end of the file.
    fn next_block(&mut self, max: usize, block: &mut LineBlock) -> std::io::Result<bool> {
        block.text.clear();
        block.lines.clear();
        while block.lines.len() < max {
            let start = block.text.len();
            if self.input.read_until(b'\n', &mut block.text)? == 0 {
                break;
            }
            self.line += 1;
            if block.text[start..].iter().all(u8::is_ascii_whitespace) {
                block.text.truncate(start);
                continue;
            }
            block.lines.push((self.line, start..block.text.len()));
        }
        Ok(!block.lines.is_empty())
    }
}

/// The number of non-blank lines of `path` at most (its newlines, plus a last line without
/// one): the meta capacity a new store is created with.
pub fn count_lines(path: &Path) -> Result<u64> {
    let mut f = File::open(path).map_err(|e| anyhow!("{}: cannot open: {e}", path.display()))?;
    let mut buf = vec![0u8; 1 << 20];
    let (mut n, mut last) = (0u64, b'\n');
    loop {
        let got = f
            .read(&mut buf)
            .map_err(|e| anyhow!("{}: cannot read: {e}", path.display()))?;
        if got == 0 {
            break;
        }
        // SIMD search: a byte-at-a-time count was 4 % of dealing a gallery.
        n += memchr::memchr_iter(b'\n', &buf[..got]).count() as u64;
        last = buf[got - 1];
    }
    Ok(n + u64::from(last != b'\n'))
}

/// What a worker made of its lines.
struct Dealt {
    sums: [RecordsSum; 3],
    /// The first line it could not take, if any.
    fault: Option<usize>,
}

/// A block's output buffers, reused from block to block; page-aligned so that the stores
/// take them with direct writes.
struct Buffers {
    ids: Vec<u64>,
    metas: PageBuf,
    shares: [PageBuf; 3],
}

/// Streams gallery `input` (records of `spec.elements`-bit codes) into `appenders` (parties 0,
/// 1, 2, of stores with `params`), checking ids against `taken` (the stores' ids, which grows
/// with the new ones). Returns the number of records dealt; on a fault in the input, the
/// reader's error.
pub fn deal_into(
    spec: &ManifestInput,
    params: &StoreParams,
    input: &Path,
    appenders: &mut [Appender<'_>; 3],
    taken: &mut HashSet<u64>,
    mut progress: impl FnMut(usize),
) -> Result<u64> {
    let layout = params.layout().map_err(|e| anyhow!("cannot share: {e}"))?;
    let bytes = spec.elements as usize / 8;
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(1);
    let per_block = threads * BLOCK_PER_THREAD;
    let mut lines = Lines::open(input)?;
    let mut block = LineBlock::default();
    let mut buf = Buffers {
        ids: vec![0; per_block],
        metas: PageBuf::new(per_block * layout.meta_size + DIRECT_ALIGN),
        shares: std::array::from_fn(|_| PageBuf::new(per_block * layout.share_size + DIRECT_ALIGN)),
    };
    let mut total = 0u64;
    while lines
        .next_block(per_block, &mut block)
        .map_err(|e| anyhow!("{}: cannot read: {e}", input.display()))?
    {
        let n = block.lines.len();
        let first_index = appenders[0].next_index();
        // The three stores have one layout and count: the same offsets.
        let (meta_at, shares_at) = appenders[0].next_offsets();
        let lead = |at: u64| (at % DIRECT_ALIGN as u64) as usize;
        let ss = n * layout.share_size;
        let [s0, s1, s2] = &mut buf.shares;
        let mut out = Window {
            ids: &mut buf.ids[..n],
            metas: buf.metas.window(lead(meta_at), n * layout.meta_size),
            shares: [
                s0.window(lead(shares_at), ss),
                s1.window(lead(shares_at), ss),
                s2.window(lead(shares_at), ss),
            ],
        };
        let dealt = deal_block(
            params,
            &layout,
            bytes,
            &block,
            &mut out,
            first_index,
            appenders[0].record_hash(),
            threads,
        )?;
        let fault = dealt.iter().filter_map(|d| d.fault).min();
        // Ids in file order, up to the first line a worker could not take.
        for (i, &(line, _)) in block.lines.iter().enumerate() {
            if fault.is_some_and(|f| line >= f) || !taken.insert(out.ids[i]) {
                return Err(input_fault(spec, input, line));
            }
        }
        let mut sums = [RecordsSum::default(); 3];
        for d in &dealt {
            for (s, t) in sums.iter_mut().zip(&d.sums) {
                s.add_sum(t);
            }
        }
        for (party, a) in appenders.iter_mut().enumerate() {
            a.write(n, out.metas, out.shares[party], &sums[party])?;
        }
        total += n as u64;
        progress(n);
    }
    Ok(total)
}

/// One block's place in the [`Buffers`]: exactly its records.
struct Window<'b> {
    ids: &'b mut [u64],
    metas: &'b mut [u8],
    shares: [&'b mut [u8]; 3],
}

/// Deals the lines of `block` on `threads` workers into `buf`.
#[allow(clippy::too_many_arguments)]
fn deal_block(
    params: &StoreParams,
    layout: &RecordLayout,
    bytes: usize,
    block: &LineBlock,
    buf: &mut Window<'_>,
    first_index: u64,
    hash: RecordHash,
    threads: usize,
) -> Result<Vec<Dealt>> {
    let n = block.lines.len();
    let per = n.div_ceil(threads).max(1);
    let (ms, ss) = (layout.meta_size, layout.share_size);
    let [s0, s1, s2] = &mut buf.shares;
    let work = block
        .lines
        .chunks(per)
        .zip(buf.ids.chunks_mut(per))
        .zip(buf.metas.chunks_mut(per * ms))
        .zip(s0.chunks_mut(per * ss))
        .zip(s1.chunks_mut(per * ss))
        .zip(s2.chunks_mut(per * ss))
        .enumerate();
    std::thread::scope(|scope| {
        let handles: Vec<_> = work
            .map(|(w, (((((lines, ids), metas), o0), o1), o2))| {
                let first = first_index + (w * per) as u64;
                scope.spawn(move || {
                    deal_lines(
                        params,
                        layout,
                        bytes,
                        &block.text,
                        lines,
                        first,
                        hash,
                        ids,
                        metas,
                        [o0, o1, o2],
                    )
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow!("a dealing thread failed"))
                    .and_then(|r| r)
            })
            .collect()
    })
}

/// One worker's share of a block: parses, deals, writes meta and hashes each of `lines`.
#[allow(clippy::too_many_arguments)]
fn deal_lines(
    params: &StoreParams,
    layout: &RecordLayout,
    bytes: usize,
    text: &[u8],
    lines: &[(usize, Range<usize>)],
    first_index: u64,
    hash: RecordHash,
    ids: &mut [u64],
    metas: &mut [u8],
    out: [&mut [u8]; 3],
) -> Result<Dealt> {
    let mut dealer = RecordDealer::from_os(params).map_err(|e| anyhow!(e))?;
    let (ms, ss) = (layout.meta_size, layout.share_size);
    let mut code = vec![0u8; bytes + 3];
    let mut mask = vec![0u8; bytes + 3];
    let mut sums = [RecordsSum::default(); 3];
    // u64-backed: the share kernels write aligned words.
    let mut scratch: [Vec<u64>; 3] = std::array::from_fn(|_| vec![0u64; ss.div_ceil(8)]);
    let mut scratch: [&mut [u8]; 3] = scratch
        .each_mut()
        .map(|v| bytemuck::cast_slice_mut(v.as_mut_slice()));
    let [o0, o1, o2] = out;
    for (j, (line, range)) in lines.iter().enumerate() {
        let parsed = std::str::from_utf8(&text[range.clone()])
            .ok()
            .and_then(|t| serde_json::from_str::<Line<'_>>(t).ok())
            .filter(|l| {
                matches!(B64.decode_slice(l.code, &mut code), Ok(k) if k == bytes)
                    && matches!(B64.decode_slice(l.mask, &mut mask), Ok(k) if k == bytes)
            });
        let Some(l) = parsed else {
            return Ok(Dealt {
                sums,
                fault: Some(*line),
            });
        };
        ids[j] = l.id;
        let meta = &mut metas[j * ms..(j + 1) * ms];
        encode_meta(layout, l.id, &mask[..bytes], meta);
        // Each party's record is dealt into a scratch record that stays in cache, hashed
        // there, then streamed into the block (which only the disk reads again).
        let index = first_index + j as u64;
        let at = j * ss..(j + 1) * ss;
        let [s0, s1, s2] = &mut scratch;
        dealer
            .deal(
                &code[..bytes],
                &mask[..bytes],
                [&mut s0[..ss], &mut s1[..ss], &mut s2[..ss]],
            )
            .map_err(|e| anyhow!(e))?;
        for ((sum, o), s) in sums
            .iter_mut()
            .zip([&mut *o0, &mut *o1, &mut *o2])
            .zip(&scratch)
        {
            sum.add_record(hash, index, meta, &s[..ss]);
            copy_streaming(&mut o[at.clone()], &s[..ss]);
        }
    }
    Ok(Dealt { sums, fault: None })
}

/// The error for a fault found at `line` of `input`: the plain reader's own message (it reads
/// the file again and stops at the same line), so both paths report faults alike.
fn input_fault(spec: &ManifestInput, input: &Path, line: usize) -> anyhow::Error {
    match super::share::read_iris(spec, input) {
        Err(e) => e,
        Ok(_) => anyhow!(
            "{}: line {line}: not a record the dealer can read (input `{}`)",
            input.display(),
            spec.name
        ),
    }
}

/// The ids of every record of `input` (for enroll's check before anything is written); on a
/// fault, the reader's error.
pub fn read_ids(spec: &ManifestInput, input: &Path) -> Result<Vec<u64>> {
    #[derive(serde::Deserialize)]
    struct IdOnly {
        id: u64,
    }
    let mut lines = Lines::open(input)?;
    let mut block = LineBlock::default();
    let mut ids = Vec::new();
    let mut seen = HashSet::new();
    while lines
        .next_block(4096, &mut block)
        .map_err(|e| anyhow!("{}: cannot read: {e}", input.display()))?
    {
        for (line, range) in &block.lines {
            let id = serde_json::from_slice::<IdOnly>(&block.text[range.clone()])
                .map_err(|_| input_fault(spec, input, *line))?
                .id;
            if !seen.insert(id) {
                return Err(input_fault(spec, input, *line));
            }
            ids.push(id);
        }
    }
    if ids.is_empty() {
        bail!(
            "{} holds no records to share (input `{}`)",
            input.display(),
            spec.name
        );
    }
    Ok(ids)
}
