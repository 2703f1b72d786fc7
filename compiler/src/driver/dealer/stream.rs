//! The streaming dealer behind `irisc share` (gallery stores) and `irisc enroll`: the NDJSON
//! gallery is read, dealt and written in blocks, so memory stays at one block whatever the
//! gallery size, and each block is dealt on every core.
//!
//! Per block: the main thread reads up to [`BLOCK_PER_THREAD`] lines per worker straight into
//! one buffer ([`Lines`]); each worker ([`Worker`], kept from block to block, run on the
//! process's thread pool, whose threads also outlive the blocks: `--threads`) parses its lines
//! (the usual form by [`parse_usual_record`], decoded in place; anything else by `serde_json`;
//! base64 decoded with SIMD into reused buffers), deals each record into three scratch records that stay in cache
//! ([`RecordDealer`], AES-CTR under a key from the operating system per worker), laid out as
//! the record hash reads them, `index | meta | shares`; checks its share words there (the
//! stores' [`CanonicalCheck`]), then hashes it (the store's [`RecordsSum`], by its version's
//! [`RecordHash`]) and moves it into the block with streaming stores in the same pass
//! ([`RecordHash::contiguous_and_stream`]; the block, tens of megabytes, goes to disk and is
//! not read again: ordinary stores would first read each of its lines). The main thread then checks the ids
//! (distinct, new) in file order and writes the block to the three stores in one positioned
//! write per region ([`Appender`]). No buffer is allocated per record or per block.
//!
//! Measured on rep3, 100 000 records of 12 800 bits (`irisc-bench --sections share`, and
//! `perf record` of `irisc share`): streaming stores and the AVX2 hash loop took dealing from
//! 47 400 to 56 300-57 100 records per CPU-second on a Zen 5 core. On a Zen 4 core, what
//! remains is the streaming copy into the block (about a third of the time: leaving it out of a
//! test build took rep3 from 2.2-2.5 to 1.4-1.7 CPU-s per 100 000 records), XXH3, AES-CTR and
//! the rep3 kernel, which overlap with it; each at about its bandwidth or unit throughput
//! there (`bench/results/cpu-2026-11-29f/README.md`).
//!
//! Any fault in the input (malformed line, wrong code length, repeated id) stops the run and is
//! reported exactly as the plain NDJSON reader reports it ([`super::share::read_iris`]).

use std::collections::HashSet;
use std::fs::File;
use std::io::Read;
use std::ops::Range;
use std::path::Path;

use anyhow::{anyhow, bail, Result};
use irisc_runtime::dealer::{encode_meta, RecordDealer};
use irisc_runtime::manifest::ManifestInput;
use irisc_runtime::store::{
    Appender, CanonicalCheck, PageBuf, RecordHash, RecordLayout, RecordsSum, StoreParams,
    DIRECT_ALIGN,
};
use irisc_runtime::sys::copy_streaming;

/// Zero bytes for the padding after a replicated record's components (less than 8 bytes).
const ZEROS: [u8; 8] = [0; 8];

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

/// Reads the non-blank lines of an NDJSON file block by block, straight into the block's
/// buffer: a buffered reader's `read_until` copied every byte once more and searched for
/// newlines a byte word at a time (together 5 % of dealing rep3).
struct Lines {
    input: File,
    /// Lines read so far (the number of the last one).
    line: usize,
    /// The start of the next line, read into the last block but not part of it.
    carry: Vec<u8>,
    at_end: bool,
    /// Bytes read from the file at a time ([`READ_CHUNK`]; tests read a few at a time).
    chunk: u64,
}

/// Bytes read from the file at a time.
const READ_CHUNK: u64 = 1 << 20;

impl Lines {
    fn open(path: &Path) -> Result<Lines> {
        let f = File::open(path).map_err(|e| anyhow!("{}: cannot open: {e}", path.display()))?;
        Ok(Lines {
            input: f,
            line: 0,
            carry: Vec::new(),
            at_end: false,
            chunk: READ_CHUNK,
        })
    }

    /// Fills `block` with up to `max` lines; false at the end of the file.
    fn next_block(&mut self, max: usize, block: &mut LineBlock) -> std::io::Result<bool> {
        block.text.clear();
        block.lines.clear();
        block.text.append(&mut self.carry);
        // The start of the line being looked for, and where its newline search resumes.
        let (mut start, mut scan) = (0, 0);
        while block.lines.len() < max {
            let end = match memchr::memchr(b'\n', &block.text[scan..]) {
                Some(i) => scan + i + 1,
                None if !self.at_end => {
                    scan = block.text.len();
                    // `File`'s reads fill the spare capacity without zeroing it first.
                    let got = (&self.input)
                        .take(self.chunk)
                        .read_to_end(&mut block.text)?;
                    self.at_end = got == 0;
                    continue;
                }
                None if start < block.text.len() => block.text.len(),
                None => break,
            };
            self.line += 1;
            if !block.text[start..end].iter().all(u8::is_ascii_whitespace) {
                block.lines.push((self.line, start..end));
            }
            (start, scan) = (end, end);
        }
        self.carry.extend_from_slice(&block.text[start..]);
        block.text.truncate(start);
        Ok(!block.lines.is_empty())
    }
}

/// The most records the NDJSON gallery `path` of `code_bytes`-byte codes can hold: its size
/// over the shortest line a record can be, `{"id":0,"code":"..","mask":".."}` with both
/// strings the canonical base64 of `code_bytes` bytes, plus a newline between lines. The meta
/// capacity a new store is created with. Counting the lines instead read the whole file a
/// second time (6 % of dealing rep3); this bound exceeds the count of a gallery that `irisc
/// gen` writes by under 1 %, and a meta entry (1.6 kB at 12 800 bits) is small beside a
/// record's shares (25.6-51.2 kB per party).
pub fn max_records(path: &Path, code_bytes: usize) -> Result<u64> {
    let size = std::fs::metadata(path)
        .map_err(|e| anyhow!("{}: cannot open: {e}", path.display()))?
        .len();
    Ok((size + 1) / shortest_line(code_bytes))
}

/// Bytes of the shortest NDJSON line holding a record of `code_bytes`-byte codes, with the
/// newline that separates it from the next.
fn shortest_line(code_bytes: usize) -> u64 {
    let b64 = 4 * code_bytes.div_ceil(3);
    (r#"{"id":0,"code":"","mask":""}"#.len() + 2 * b64 + 1) as u64
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
    // One worker per thread of the pool the blocks are dealt on (`--threads`).
    let threads = rayon::current_num_threads().max(1);
    let per_block = threads * BLOCK_PER_THREAD;
    let mut lines = Lines::open(input)?;
    let mut block = LineBlock::default();
    let mut buf = Buffers {
        ids: vec![0; per_block],
        metas: PageBuf::new(per_block * layout.meta_size + DIRECT_ALIGN),
        shares: std::array::from_fn(|_| PageBuf::new(per_block * layout.share_size + DIRECT_ALIGN)),
    };
    let mut workers = (0..threads)
        .map(|_| Worker::new(params, &layout, bytes))
        .collect::<Result<Vec<_>>>()?;
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
            &layout,
            &block,
            &mut out,
            first_index,
            appenders[0].record_hash(),
            &mut workers,
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
        // Every record's shares were checked canonical as they were dealt (`deal_lines`).
        for (party, a) in appenders.iter_mut().enumerate() {
            a.write_checked(n, out.metas, out.shares[party], &sums[party])?;
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

/// One dealing thread's state, kept from block to block: its dealer (an AES-CTR keystream
/// under its own key from the operating system) and its buffers. Made afresh for every block,
/// these were allocated and first touched again each time (page faults: 3-4 % of dealing).
struct Worker {
    dealer: RecordDealer,
    code: Vec<u8>,
    mask: Vec<u8>,
    /// Per party, one record as the record hash reads it, `index | meta | shares`.
    scratch: [Vec<u64>; 3],
    /// The stores' check that share words are canonical, run on each record in cache.
    canonical: CanonicalCheck,
}

impl Worker {
    fn new(params: &StoreParams, layout: &RecordLayout, bytes: usize) -> Result<Worker> {
        let record = 8 + layout.meta_size + layout.share_size;
        Ok(Worker {
            dealer: RecordDealer::from_os(params).map_err(|e| anyhow!(e))?,
            code: vec![0; bytes],
            mask: vec![0; bytes],
            scratch: std::array::from_fn(|_| vec![0; record.div_ceil(8)]),
            canonical: CanonicalCheck::new(params, layout),
        })
    }
}

/// Deals the lines of `block` on one thread per worker into `buf`.
fn deal_block(
    layout: &RecordLayout,
    block: &LineBlock,
    buf: &mut Window<'_>,
    first_index: u64,
    hash: RecordHash,
    workers: &mut [Worker],
) -> Result<Vec<Dealt>> {
    let n = block.lines.len();
    let per = n.div_ceil(workers.len()).max(1);
    let (ms, ss) = (layout.meta_size, layout.share_size);
    let mut results: Vec<Option<Result<Dealt>>> = Vec::new();
    results.resize_with(workers.len(), || None);
    let [s0, s1, s2] = &mut buf.shares;
    let work = block
        .lines
        .chunks(per)
        .zip(buf.ids.chunks_mut(per))
        .zip(buf.metas.chunks_mut(per * ms))
        .zip(s0.chunks_mut(per * ss))
        .zip(s1.chunks_mut(per * ss))
        .zip(s2.chunks_mut(per * ss))
        .zip(workers.iter_mut())
        .enumerate();
    // On the process's pool, whose threads live from block to block.
    rayon::scope(|scope| {
        for ((w, ((((((lines, ids), metas), o0), o1), o2), worker)), result) in
            work.zip(results.iter_mut())
        {
            let first = first_index + (w * per) as u64;
            scope.spawn(move |_| {
                let dealt = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    deal_lines(
                        worker,
                        layout,
                        &block.text,
                        lines,
                        first,
                        hash,
                        ids,
                        metas,
                        [o0, o1, o2],
                    )
                }));
                *result = Some(dealt.unwrap_or_else(|_| Err(anyhow!("a dealing thread failed"))));
            });
        }
    });
    results.into_iter().flatten().collect()
}

/// One worker's share of a block: parses, deals, writes meta and hashes each of `lines`.
#[allow(clippy::too_many_arguments)]
fn deal_lines(
    worker: &mut Worker,
    layout: &RecordLayout,
    text: &[u8],
    lines: &[(usize, Range<usize>)],
    first_index: u64,
    hash: RecordHash,
    ids: &mut [u64],
    metas: &mut [u8],
    out: [&mut [u8]; 3],
) -> Result<Dealt> {
    let Worker {
        dealer,
        code,
        mask,
        scratch,
        canonical,
    } = worker;
    let (ms, ss) = (layout.meta_size, layout.share_size);
    let mut sums = [RecordsSum::default(); 3];
    // Each party's record is dealt into a scratch record laid out as the record hash reads it,
    // `index | meta | shares`, so that it is hashed in one pass (the streaming hasher took the
    // parts one by one, a stripe at a time). u64-backed, and the meta size a multiple of 8:
    // the share kernels write aligned words.
    let (meta_at, share_at) = (8, 8 + ms);
    let mut scratch: [&mut [u8]; 3] = scratch
        .each_mut()
        .map(|v| &mut bytemuck::cast_slice_mut(v.as_mut_slice())[..share_at + ss]);
    let [o0, o1, o2] = out;
    for (j, (line, range)) in lines.iter().enumerate() {
        let line_text = &text[range.clone()];
        let id = parse_usual_record(line_text, code, mask).or_else(|| {
            serde_json::from_slice::<Line<'_>>(line_text)
                .ok()
                .filter(|l| {
                    decode_exactly(l.code.as_bytes(), code)
                        && decode_exactly(l.mask.as_bytes(), mask)
                })
                .map(|l| l.id)
        });
        let Some(id) = id else {
            irisc_runtime::sys::fence_streaming_stores();
            return Ok(Dealt {
                sums,
                fault: Some(*line),
            });
        };
        ids[j] = id;
        let index = first_index + j as u64;
        // The meta is made in the first scratch record and copied from there: the block's
        // meta region is not in cache, and writing it in place cost a read of each line.
        let [s0, s1, s2] = &mut scratch;
        s0[..meta_at].copy_from_slice(&index.to_le_bytes());
        encode_meta(layout, id, mask, &mut s0[meta_at..share_at]);
        copy_streaming(&mut metas[j * ms..(j + 1) * ms], &s0[meta_at..share_at]);
        let at = j * ss..(j + 1) * ss;
        // Replicated shares over Z_2^16: three components, each written once and read for
        // both parties that hold it; party i's record is `index | meta | x_i | x_{i-1}`, with
        // the components' padding (zero) between and after them.
        let prefix = &s0[..share_at];
        if let Some(x) = dealer.rep3_components(code, mask).map_err(|e| anyhow!(e))? {
            let pad = &ZEROS[..layout.component_stride - x[0].len()];
            for (party, (sum, o)) in sums
                .iter_mut()
                .zip([&mut *o0, &mut *o1, &mut *o2])
                .enumerate()
            {
                let (own, prev) = (x[party], x[(party + 2) % 3]);
                canonical
                    .check(own)
                    .and_then(|()| canonical.check(prev))
                    .map_err(|e| anyhow!("dealing record {index}: {e}"))?;
                let parts = [prefix, own, pad, prev, pad];
                sum.add_sum(&hash.parts_and_stream(&parts, share_at, &mut o[at.clone()]));
            }
            continue;
        }
        s1[..share_at].copy_from_slice(prefix);
        s2[..share_at].copy_from_slice(&s0[..share_at]);
        dealer
            .deal(
                code,
                mask,
                [
                    &mut s0[share_at..],
                    &mut s1[share_at..],
                    &mut s2[share_at..],
                ],
            )
            .map_err(|e| anyhow!(e))?;
        // Checked in cache, then hashed and streamed into the block (which only the disk reads
        // again) in one pass.
        for ((sum, o), s) in sums
            .iter_mut()
            .zip([&mut *o0, &mut *o1, &mut *o2])
            .zip(&scratch)
        {
            canonical
                .check(&s[share_at..])
                .map_err(|e| anyhow!("dealing record {index}: {e}"))?;
            sum.add_sum(&hash.contiguous_and_stream(s, share_at, &mut o[at.clone()]));
        }
    }
    // The block's streaming stores ordered before the main thread writes it out.
    irisc_runtime::sys::fence_streaming_stores();
    Ok(Dealt { sums, fault: None })
}

/// The record's id, with its code and mask decoded into `code` and `mask`, if the line has
/// the form `irisc gen` writes: `{"id": N, "code": "..", "mask": ".."}` (keys in this order,
/// any JSON whitespace between tokens) with both strings the canonical base64 of exactly
/// `code.len()` / `mask.len()` bytes. `None` for any other line, which then goes to the JSON
/// parser. On the lines it takes it agrees with `serde_json` and the reader's decoder
/// (checked by `usual_records_parse_as_serde_and_the_reader_parse_them`).
///
/// Each string is taken at the length its bytes encode to and decoded in place: the base64
/// alphabet has no quote or backslash, so a string the decoder accepts and a quote closes has
/// no escape, and no scan for its end (nor UTF-8 check) is needed; the scan and check were
/// 4 % of dealing rep3, and the JSON parser's 6 % before that.
fn parse_usual_record(line: &[u8], code: &mut [u8], mask: &mut [u8]) -> Option<u64> {
    let mut at = 0;
    let ws = |at: &mut usize| {
        while line
            .get(*at)
            .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            *at += 1;
        }
    };
    let token = |at: &mut usize, t: &[u8]| -> Option<()> {
        ws(at);
        line.get(*at..)?.starts_with(t).then(|| *at += t.len())
    };
    let string = |at: &mut usize, out: &mut [u8]| -> Option<()> {
        token(at, b"\"")?;
        let len = out.len().div_ceil(3) * 4;
        let text = line.get(*at..*at + len)?;
        decode_exactly(text, out).then_some(())?;
        *at += len;
        token(at, b"\"")
    };
    token(&mut at, b"{")?;
    token(&mut at, b"\"id\"")?;
    token(&mut at, b":")?;
    ws(&mut at);
    let digits = line[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    let number = &line[at..at + digits];
    // JSON numbers have no leading zeros; a fraction or exponent goes to the parser.
    if digits == 0 || (digits > 1 && number[0] == b'0') {
        return None;
    }
    let id = std::str::from_utf8(number).ok()?.parse::<u64>().ok()?;
    at += digits;
    token(&mut at, b",")?;
    token(&mut at, b"\"code\"")?;
    token(&mut at, b":")?;
    string(&mut at, code)?;
    token(&mut at, b",")?;
    token(&mut at, b"\"mask\"")?;
    token(&mut at, b":")?;
    string(&mut at, mask)?;
    token(&mut at, b"}")?;
    ws(&mut at);
    (at == line.len()).then_some(id)
}

/// Decodes the canonical, padded base64 `text` of exactly `out.len()` bytes into `out`; false
/// for any other text. Accepts what the plain reader's decoder accepts (checked by the test
/// `fast_base64_accepts_what_the_reader_accepts`).
fn decode_exactly(text: &[u8], out: &mut [u8]) -> bool {
    let b64 = base64_simd::STANDARD;
    matches!(b64.decoded_length(text), Ok(n) if n == out.len())
        && b64.decode(text, base64_simd::Out::from_slice(out)).is_ok()
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

#[cfg(test)]
mod tests {
    use super::*;
    use base64::engine::general_purpose::STANDARD as B64;
    use base64::Engine as _;
    use proptest::prelude::*;
    use std::io::Write as _;

    /// The (number, text) of each non-blank line of `text`, by splitting at newlines: the
    /// definition the block reader must meet.
    fn lines_by_split(text: &[u8]) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        let mut rest = text;
        let mut number = 0;
        while !rest.is_empty() {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .map_or(rest.len(), |i| i + 1);
            number += 1;
            if !rest[..end].iter().all(u8::is_ascii_whitespace) {
                out.push((number, rest[..end].to_vec()));
            }
            rest = &rest[end..];
        }
        out
    }

    fn file_of(text: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(text).unwrap();
        f.flush().unwrap();
        f
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]

        /// Blocks of at most `max` lines, read a few bytes at a time, give every non-blank
        /// line with its number, whole: lines that cross reads, blank and whitespace lines,
        /// CRLF, a last line with and without its newline, an empty file.
        #[test]
        fn lines_are_read_whole_at_any_read_size(
            pieces in prop::collection::vec(
                prop_oneof![
                    "[a-z{}\":, ]{0,40}",
                    Just(String::new()),
                    Just("  \t".to_string()),
                    Just("x\r".to_string()),
                ],
                0..30,
            ),
            trailing_newline in any::<bool>(),
            chunk in 1u64..64,
            max in 1usize..6,
        ) {
            let mut text = pieces.join("\n").into_bytes();
            if trailing_newline && !text.is_empty() {
                text.push(b'\n');
            }
            let f = file_of(&text);
            let mut lines = Lines::open(f.path()).unwrap();
            lines.chunk = chunk;
            let mut block = LineBlock::default();
            let mut got = Vec::new();
            while lines.next_block(max, &mut block).unwrap() {
                prop_assert!(block.lines.len() <= max);
                for (n, r) in &block.lines {
                    got.push((*n, block.text[r.clone()].to_vec()));
                }
            }
            prop_assert_eq!(got, lines_by_split(&text));
        }

        /// Every line the usual-form parser takes, `serde_json` and the reader's base64
        /// decoder read as the same record; and it takes the lines `irisc gen` writes. Lines
        /// are built from the usual form with changes the JSON grammar or the decoder care
        /// about: whitespace, leading zeros, signs, fractions, escapes, quotes and other
        /// characters in the strings, strings cut short or lengthened, other key orders,
        /// trailing text.
        #[test]
        fn usual_records_parse_as_serde_and_the_reader_parse_them(
            id in any::<u64>(),
            bytes in prop::collection::vec(any::<u8>(), 0..24),
            at in any::<prop::sample::Index>(),
            ws in prop::collection::vec(prop_oneof![
                Just(""), Just(" "), Just("\t"), Just("\r\n"), Just("\u{c}"),
            ], 12),
            change in 0usize..14,
        ) {
            let n = bytes.len() / 2;
            let (code, mask) = (&bytes[..n], &bytes[n..2 * n]);
            let code64 = B64.encode(code);
            let mut mask64 = B64.encode(mask);
            let number = match change {
                0 => format!("0{id}"),
                1 => format!("-{id}"),
                2 => format!("{id}.0"),
                3 => format!("{id}e0"),
                _ => id.to_string(),
            };
            let mut edit = |with: &str| {
                if !mask64.is_empty() {
                    let i = at.index(mask64.len());
                    mask64.replace_range(i..i + 1, with);
                }
            };
            match change {
                8 => edit("\\/"),
                9 => edit("\\u0041"),
                10 => edit("\\\""),
                11 => edit("é"),
                12 => { mask64.pop(); }
                13 => mask64.push_str("AAAA"),
                _ => {}
            }
            let mut line = format!(
                "{}{{{}\"id\"{}:{}{number}{},{}\"code\"{}:{}\"{code64}\"{},{}\"mask\":\"{mask64}\"{}}}{}",
                ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6], ws[7], ws[8], ws[9], ws[10],
                ws[11],
            );
            match change {
                5 => line = line.replace("\"id\"", "\"i\\u0064\""),
                6 => line = format!(
                    "{{\"code\":\"{code64}\",\"id\":{id},\"mask\":\"{mask64}\"}}"
                ),
                7 => line.push_str(" x"),
                _ => {}
            }
            let reader = |text: &str| {
                let mut out = vec![0u8; n + 8];
                match B64.decode_slice(text, &mut out) {
                    Ok(k) if k == n => Some(out[..k].to_vec()),
                    _ => None,
                }
            };
            let serde = serde_json::from_str::<Line<'_>>(&line)
                .ok()
                .and_then(|l| Some((l.id, reader(l.code)?, reader(l.mask)?)));
            let (mut c, mut m) = (vec![0u8; n], vec![0u8; n]);
            if let Some(fast) = parse_usual_record(line.as_bytes(), &mut c, &mut m) {
                let serde = serde.expect("the usual-form parser took a line serde or the reader refuse");
                prop_assert_eq!((fast, c.clone(), m.clone()), serde);
            }
            let generated = format!(
                "{{\"id\": {id}, \"code\": \"{code64}\", \"mask\": \"{}\"}}\n",
                B64.encode(mask)
            );
            let fast = parse_usual_record(generated.as_bytes(), &mut c, &mut m);
            prop_assert_eq!((fast, &c[..], &m[..]), (Some(id), code, mask));
        }

        /// The SIMD decoder takes exactly the texts the reader's decoder takes (canonical,
        /// padded, of the expected length), with the same bytes: valid encodings with one
        /// character changed (to a base64 character, `=`, or one outside the alphabet), cut
        /// short or lengthened, and unpadded.
        #[test]
        fn fast_base64_accepts_what_the_reader_accepts(
            bytes in prop::collection::vec(any::<u8>(), 0..40),
            at in any::<prop::sample::Index>(),
            to in prop::sample::select(b"AQgw+/=*- \n\xc3".to_vec()),
            change in 0usize..5,
        ) {
            let mut text = B64.encode(&bytes).into_bytes();
            match change {
                0 if !text.is_empty() => { let i = at.index(text.len()); text[i] = to; }
                1 => { text.pop(); }
                2 => text.extend_from_slice(b"AA=="),
                3 => while text.last() == Some(&b'=') { text.pop(); },
                _ => {}
            }
            let Ok(text) = String::from_utf8(text) else { return Ok(()); };
            let mut want = vec![0u8; bytes.len() + 8];
            let reader = match B64.decode_slice(&text, &mut want) {
                Ok(k) if k == bytes.len() => Some(want[..k].to_vec()),
                _ => None,
            };
            let mut out = vec![0u8; bytes.len()];
            let fast = decode_exactly(text.as_bytes(), &mut out).then_some(out);
            prop_assert_eq!(fast, reader);
        }
    }

    /// The record bound is exact for a file of the shortest records, and one byte fewer holds
    /// one record fewer: the shortest line is a record the dealer takes.
    #[test]
    fn max_records_is_the_count_of_shortest_lines() {
        for code_bytes in [1usize, 2, 3, 16, 1600] {
            let b64 = B64.encode(vec![0u8; code_bytes]);
            let shortest = format!("{{\"id\":0,\"code\":\"{b64}\",\"mask\":\"{b64}\"}}");
            let (mut code, mut mask) = (vec![1u8; code_bytes], vec![1u8; code_bytes]);
            let id = parse_usual_record(shortest.as_bytes(), &mut code, &mut mask);
            assert_eq!(id, Some(0), "the shortest line parses");
            assert!(code.iter().chain(&mask).all(|&b| b == 0));
            assert_eq!(shortest.len() as u64 + 1, shortest_line(code_bytes));
            for n in [1usize, 2, 7] {
                let text = vec![shortest.as_str(); n].join("\n");
                for (extra, want) in [("", n), ("\n", n)] {
                    let f = file_of(format!("{text}{extra}").as_bytes());
                    assert_eq!(max_records(f.path(), code_bytes).unwrap(), want as u64);
                }
                let f = file_of(&text.as_bytes()[1..]);
                assert_eq!(max_records(f.path(), code_bytes).unwrap(), n as u64 - 1);
            }
        }
    }
}
