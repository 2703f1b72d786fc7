//! Tests of the CUDA path that need a GPU (feature `cuda`). Each one first looks for a usable
//! device; without one it prints `skipped: no CUDA device` (and counts the skip), since a
//! test without its device proves nothing and must not pass as if it did. The dot-product
//! tests also need the PTX of a program built with `irisc build --target cuda`, named by
//! `IRISC_TEST_PTX` (a file path); without it they print why they are skipped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use cudarc::driver::CudaContext;

use super::device::Device;
use super::errors;
use super::layout;
use super::planes::upload_and_split;
use super::watchdog::Watchdog;
use super::Session;
use crate::contract::gpu::{k_pad, LimbWidth};
use crate::io::share_file::RingVec;
use crate::kernels::masked_dot_reference;
use crate::ops::shamir::{shamir_dot_records, shamir_dot_records_gpu};
use crate::ops::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::ops::value::Value;
use crate::share::Codes;

/// Tests skipped for want of a device or of PTX, for the summary line they print.
static SKIPPED: AtomicUsize = AtomicUsize::new(0);

fn skip(test: &str, why: &str) {
    let n = SKIPPED.fetch_add(1, Ordering::SeqCst) + 1;
    println!("{test}: skipped: {why} ({n} GPU test(s) skipped in this run)");
}

/// Whether a CUDA device can be opened; prints the skip line if not.
fn have_device(test: &str) -> bool {
    // SAFETY: only tries to dlopen the driver library.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        skip(test, "no CUDA device (no driver library)");
        return false;
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => true,
        _ => {
            skip(test, "no CUDA device");
            false
        }
    }
}

/// A device that runs the contract's kernels (Hopper), with `ptx` loaded; `None` (skip printed)
/// otherwise.
fn hopper(test: &str, ptx: &str) -> Option<Device> {
    if !have_device(test) {
        return None;
    }
    match Device::open(
        0,
        ptx.to_string(),
        Watchdog::for_party(test_expiry()).unwrap(),
    ) {
        Ok(d) => Some(d),
        Err(e) if e.to_string().contains("cannot run the program's kernels") => {
            skip(
                test,
                &format!("no CUDA device of the contract's architecture ({e})"),
            );
            None
        }
        Err(e) => panic!("{test}: {e}"),
    }
}

#[test]
fn attaching_without_a_driver_is_an_error_that_says_so() {
    // SAFETY: only tries to dlopen the driver library.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        skip(
            "attaching_without_a_driver_is_an_error_that_says_so",
            "this host has a CUDA driver",
        );
        return;
    }
    let e = Session::attach(b".version 8.0\n", test_expiry()).expect_err("no driver, no session");
    assert_eq!(e.to_string(), errors::no_driver());
    assert!(e.to_string().starts_with("no CUDA driver on this machine"));
}

/// A module with one trivial kernel, valid PTX for any recent driver.
const NOOP_PTX: &str = "\
.version 8.0
.target sm_90a
.address_size 64

.visible .entry irisc_test_noop()
{
    ret;
}
";

#[test]
fn a_kernel_the_ptx_lacks_is_named() {
    let Some(device) = hopper("a_kernel_the_ptx_lacks_is_named", NOOP_PTX) else {
        return;
    };
    assert!(device.function("irisc_test_noop").is_ok());
    let e = device
        .function("irisc_gpu_dot16_k32")
        .err()
        .unwrap()
        .to_string();
    assert_eq!(e, errors::missing_kernel("irisc_gpu_dot16_k32"));
}

#[test]
fn running_out_of_memory_says_what_was_asked_and_what_the_card_has() {
    let Some(device) = hopper("running_out_of_memory_says_...", NOOP_PTX) else {
        return;
    };
    let (_, total) = device.ctx.mem_get_info().unwrap();
    let asked = 4 * total;
    let e = device
        .call("allocating a test buffer", Some(asked as u64), || {
            device.stream.alloc_zeros::<u8>(asked)
        })
        .expect_err("four times the card's memory")
        .to_string();
    assert!(
        e.starts_with("the GPU ran out of memory while allocating a test buffer: asked for"),
        "{e}"
    );
    assert!(
        e.contains(&format!("({asked} bytes)")) && e.contains(" free of "),
        "{e}"
    );
}

#[test]
fn ptx_the_driver_refuses_is_a_clear_error() {
    if !have_device("ptx_the_driver_refuses_is_a_clear_error") {
        return;
    }
    match Session::attach(b"this is not PTX", test_expiry()) {
        Ok(_) => panic!("the driver loaded text that is not PTX"),
        Err(e) => {
            let e = e.to_string();
            if e.contains("cannot run the program's kernels") {
                skip(
                    "ptx_the_driver_refuses_is_a_clear_error",
                    "not a Hopper GPU",
                );
                return;
            }
            assert!(
                e.starts_with("CUDA error while loading the program's GPU kernels"),
                "{e}"
            );
        }
    }
}

/// The PTX of `IRISC_TEST_PTX`, or `None` (skip printed).
fn program_ptx(test: &str) -> Option<String> {
    let Some(path) = std::env::var_os("IRISC_TEST_PTX") else {
        skip(
            test,
            "IRISC_TEST_PTX is not set (the PTX of a program built with --target cuda)",
        );
        return None;
    };
    Some(std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}")))
}

/// The `k_pad` of every dot kernel of `width` that `ptx` defines.
fn dot_kernels(ptx: &str, width: LimbWidth) -> Vec<u64> {
    let prefix = format!("irisc_gpu_dot{}_k", width.bits());
    let mut ks: Vec<u64> = ptx
        .match_indices(&prefix)
        .filter_map(|(i, _)| {
            let digits: String = ptx[i + prefix.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

/// Deterministic words with the ring edges mixed in.
fn words(n: usize, seed: u64, top: u64) -> Vec<u64> {
    let edges = [0, 1, 0x7f, 0x80, 0x7fff, 0x8000, 0xffff, top, top - 1];
    let mut x = seed | 1;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            if i % 5 == 0 {
                edges[(x % edges.len() as u64) as usize] & top
            } else {
                x & top
            }
        })
        .collect()
}

fn codes_of(count: usize, bits: usize, a: RingVec, b: RingVec) -> Codes {
    Codes {
        count,
        bits,
        ids: (0..count as u64).collect(),
        masks: vec![u64::MAX; count * bits.div_ceil(64)],
        a,
        b,
    }
}

#[test]
fn the_split_kernel_writes_the_contract_planes() {
    let test = "the_split_kernel_writes_the_contract_planes";
    if !have_device(test) {
        return;
    }
    let Some(ptx) = program_ptx(test) else {
        return;
    };
    let Some(device) = hopper(test, &ptx) else {
        return;
    };
    // 70 rows (past one block of rows) of two sides of 37 words (an odd length).
    let (rows, len) = (70usize, 37usize);
    let a: Vec<u16> = words(rows * len, 3, 0xffff)
        .into_iter()
        .map(|w| w as u16)
        .collect();
    let b: Vec<u16> = words(rows * len, 5, 0xffff)
        .into_iter()
        .map(|w| w as u16)
        .collect();
    for negate in [false, true] {
        let got = upload_and_split(&device, "test rows", &a, Some(&b), rows, len, negate).unwrap();
        let host = device.stream.clone_dtoh(&got.limbs).unwrap();
        let want = layout::split_planes(&a, Some(&b), rows, len, negate).unwrap();
        assert_eq!(got.shape, want.shape);
        assert!(host == want.limbs, "planes differ (negate_b = {negate})");
    }
    let a32: Vec<u32> = words(rows * len, 7, 0xffff_ffff)
        .into_iter()
        .map(|w| w as u32)
        .collect();
    let got = upload_and_split(&device, "test rows", &a32, None, rows, len, false).unwrap();
    let host = device.stream.clone_dtoh(&got.limbs).unwrap();
    assert!(
        host == layout::split_planes(&a32, None, rows, len, false)
            .unwrap()
            .limbs
    );
}

#[test]
fn gpu_dot_products_are_the_cpu_kernels_words() {
    let test = "gpu_dot_products_are_the_cpu_kernels_words";
    if !have_device(test) {
        return;
    }
    let Some(ptx) = program_ptx(test) else {
        return;
    };
    let session = match Session::attach(ptx.as_bytes(), test_expiry()) {
        Ok(s) => s,
        Err(e) if e.to_string().contains("cannot run the program's kernels") => {
            skip(test, &format!("not a Hopper GPU ({e})"));
            return;
        }
        Err(e) => panic!("{e}"),
    };
    let mut checked = 0;
    // Records and codes not multiples of the blocks; lengths whose padding is not empty.
    let (records, codes) = (131usize, 67usize);
    for k in dot_kernels(&ptx, LimbWidth::W16) {
        // Replicated: two sides of k/2 words fill k_pad exactly; one-sided, k - 5 words pad.
        let len = (k / 2) as usize;
        if k_pad(2, len as u64) == k {
            let w =
                |n, s| -> Vec<u16> { words(n, s, 0xffff).into_iter().map(|w| w as u16).collect() };
            let (qa, qb, ga, gb) = (
                w(codes * len, 11),
                w(codes * len, 13),
                w(records * len, 17),
                w(records * len, 19),
            );
            let mut want = vec![0u16; records * codes];
            masked_dot_reference(&qa, &qb, codes, &ga, &gb, records, len, &mut want);
            let q = codes_of(codes, len, RingVec::U16(qa), RingVec::U16(qb));
            let g = Arc::new(codes_of(records, len, RingVec::U16(ga), RingVec::U16(gb)));
            for chunk in [0..records, 0..64, 64..records, 0..records] {
                let got = session.masked_dot_records(&q, &g, chunk.clone()).unwrap();
                let RingVec::U16(got) = got else {
                    panic!("width")
                };
                assert!(
                    got[..] == want[chunk.start * codes..chunk.end * codes],
                    "k = {k}, {chunk:?}"
                );
                checked += 1;
            }
        }
        // Galois-ring Shamir (one side): codes of k - 5 entries, GR(2^16, 2) packs them into
        // k - 4 words, padded to k.
        let entries = (k - 5) as usize;
        let per = ShamirKind::Gr2.words_per_code(entries);
        if k_pad(1, per as u64) == k {
            let w =
                |n, s| -> Vec<u16> { words(n, s, 0xffff).into_iter().map(|w| w as u16).collect() };
            let shamir = |side, count, seed| {
                ShamirCodes::new(
                    ShamirKind::Gr2,
                    side,
                    count,
                    entries,
                    (0..count as u64).collect(),
                    vec![u64::MAX; count * entries.div_ceil(64)],
                    w(count * per, seed),
                )
                .unwrap()
            };
            let q = shamir(Side::Query, codes, 47);
            let g = Arc::new(shamir(Side::Gallery, records, 53));
            for party in 0..3 {
                let want = shamir_dot_records(party, &q, &g, 0..records, None, 1).unwrap();
                let got = shamir_dot_records_gpu(party, &session, &q, &g, 0..records).unwrap();
                let (Value::Additive(got), Value::Additive(want)) = (got, want) else {
                    panic!("Galois-ring dot products are additive shares over Z_2^16");
                };
                assert!(got == want, "GR(2^16, 2), k = {k}, party {party}");
                checked += 1;
            }
        }
    }
    for k in dot_kernels(&ptx, LimbWidth::W32) {
        let len = (k / 2) as usize;
        if k_pad(2, len as u64) != k {
            continue;
        }
        let w = |n, s| -> Vec<u32> {
            words(n, s, 0xffff_ffff)
                .into_iter()
                .map(|w| w as u32)
                .collect()
        };
        let (qa, qb, ga, gb) = (
            w(codes * len, 31),
            w(codes * len, 37),
            w(records * len, 41),
            w(records * len, 43),
        );
        let mut want = vec![0u32; records * codes];
        masked_dot_reference(&qa, &qb, codes, &ga, &gb, records, len, &mut want);
        let q = codes_of(codes, len, RingVec::U32(qa), RingVec::U32(qb));
        let g = Arc::new(codes_of(records, len, RingVec::U32(ga), RingVec::U32(gb)));
        let got = session.masked_dot_records(&q, &g, 0..records).unwrap();
        assert!(got == RingVec::U32(want), "k = {k}");
        checked += 1;
    }
    let stats = session.stats();
    println!(
        "{test}: {checked} products checked on {}; {stats:?}",
        session.description()
    );
    assert!(
        checked > 0,
        "the PTX of IRISC_TEST_PTX has no dot kernel this test can use"
    );
    // Each chunk of each gallery was uploaded once, however many times it was asked for.
    assert!(stats.gallery_uploads < stats.dot_calls, "{stats:?}");
}

/// A watchdog expiry for tests: a GPU call that blocks past the deadline fails the test.
fn test_expiry() -> crate::gpu::watchdog::Expiry {
    std::sync::Arc::new(|msg| panic!("GPU watchdog expired in a test: {msg}"))
}
