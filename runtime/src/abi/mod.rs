//! The C ABI between generated code and the runtime, generated from the contract.
//!
//! The compiler's party schedule is a native `main` that calls these functions in order, one per
//! `mpc` dialect op, looping over the queries. Values live in slots of the [`Runtime`] numbered
//! by the compiler. Every op entry returns 0 on success; on failure it has already printed a
//! clear message to stderr and returns nonzero, and the schedule jumps to `irisc_rt_finish`.
//! Panics never cross this boundary: they are caught and reported as failures.
//!
//! The list below is the contract ([`crate::contract`]): the one invocation of
//! [`entry_points!`] emits each wrapper and its row of [`ENTRY_POINTS`]. Every op entry hands
//! its converted arguments to one op through the executor (`Runtime::exec*`), which reads the
//! operand slots, times the op and stores its result.

pub mod args;
mod macros;
pub mod results;

use std::ffi::{CStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::contract::{BatchDotKind, InputPart, OutputShape};
use crate::error::RuntimeError;
use crate::manifest::{BuildInfo, Manifest};
use crate::ops::ctx::get;
use crate::ops::{arith, beaver, logic, rep3, shamir, vector};
use crate::party::executor::Phase;
use crate::party::{output, stop, tiles, Runtime};
use crate::vocab::ThresholdPlacement;
use macros::entry_points;

/// Prints why the party stops (the first reason only: see [`stop::final_line`]).
pub(crate) fn report(e: &RuntimeError) {
    stop::final_line(&e.to_string());
}

fn sched(msg: String) -> RuntimeError {
    RuntimeError::Schedule(msg)
}

/// A group size: 0 (all) or positive.
fn group(op: &str, g: i64) -> Result<u64, RuntimeError> {
    u64::try_from(g).map_err(|_| sched(format!("{op}: group {g}")))
}

/// The holders per share component of mask lengths computed by record thirds: 0 (not by
/// thirds: every pair), 1 or 2.
fn thirds_holders(h: i32, op: &str) -> Result<usize, RuntimeError> {
    usize::try_from(h)
        .ok()
        .filter(|&h| h <= 2)
        .ok_or_else(|| sched(format!("{op}: {h} holders per share component")))
}

/// A [`ThresholdPlacement`] by number.
fn threshold_placement(p: i32, op: &str) -> Result<ThresholdPlacement, RuntimeError> {
    ThresholdPlacement::from_i32(p).ok_or_else(|| sched(format!("{op}: threshold placement {p}")))
}

/// A reduction over all of each query's elements of a batch value, one result per query.
fn per_query_reduce(
    r: &mut Runtime,
    op: &'static str,
    dst: u32,
    src: u32,
    n: i64,
    width: i64,
    which: tiles::batched::Reduction,
) -> Result<(), RuntimeError> {
    let n = tiles::batched::batch_size(n, op)?;
    let width = tiles::batched::width(width, op)?;
    r.exec(op, Phase::Compare, dst, [src], |cx, [v]| {
        tiles::batched::per_query_reduce(cx, v, n, width, which)
    })
}

/// A query index (never negative).
fn query(op: &str, q: i64) -> Result<u64, RuntimeError> {
    u64::try_from(q).map_err(|_| sched(format!("{op} for query {q}")))
}

/// An enum of the contract from its ABI value.
fn abi_enum<E>(what: &str, v: i32, from: fn(i32) -> Option<E>) -> Result<E, RuntimeError> {
    from(v).ok_or_else(|| sched(format!("{what} {v} is not part of the runtime's ABI")))
}

/// The UTF-8 text of `len` bytes at `ptr`; `None` for null or empty.
///
/// # Safety
/// `ptr` must be null or point to `len` readable bytes.
unsafe fn text(ptr: *const u8, len: i64) -> Result<Option<String>, RuntimeError> {
    if ptr.is_null() || len <= 0 {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len as usize) };
    std::str::from_utf8(bytes)
        .map(|s| Some(s.to_string()))
        .map_err(|_| sched("output field name is not UTF-8".into()))
}

entry_points! {
    /// Starts a party: parses `argv`, checks the inputs against the manifest (`manifest_len`
    /// bytes of JSON), connects to the peers. Returns null on failure.
    schedule fn irisc_rt_start(argc: Argc, argv: Argv, manifest: BytesPtr, manifest_len: BytesLen)
        -> Runtime
    {
        // Before anything else, and before any thread starts (they inherit the signal mask).
        stop::install();
        let result = catch_unwind(|| {
            let args: Vec<OsString> = (0..argc.max(0) as usize)
                .map(|i| OsString::from_vec(CStr::from_ptr(*argv.add(i)).to_bytes().to_vec()))
                .collect();
            let bytes = std::slice::from_raw_parts(manifest, manifest_len.max(0) as usize);
            // The name is wanted for the error line even when the manifest is refused.
            if let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) {
                if let Some(name) = v.get("program").and_then(|p| p.as_str()) {
                    stop::set_program(name);
                }
            }
            let build = BuildInfo::from_json(bytes);
            let manifest = Manifest::from_json(bytes).map_err(RuntimeError::Setup)?;
            Runtime::start(args, manifest, &build)
        });
        match result {
            Ok(Ok(rt)) => Box::into_raw(Box::new(rt)),
            Ok(Err(e)) => {
                report(&e);
                std::ptr::null_mut()
            }
            Err(_) => {
                stop::final_line("internal error (panic) while starting");
                std::ptr::null_mut()
            }
        }
    }

    /// Attaches this party's GPU (a program built with `irisc build --target cuda` calls it
    /// once, right after `irisc_rt_start`): opens GPU `IRISC_GPU` (default 0), loads the
    /// program's kernels (`ptx_len` bytes of PTX text at `ptx`, the contract's names,
    /// `contract::gpu`), and from then on runs every dot product of a ring it has kernels for
    /// there (`gpu`). Fails, saying why, when this runtime was built without the `cuda`
    /// feature or the GPU cannot be used.
    schedule fn irisc_rt_gpu_attach(rt: Runtime, ptx: BytesPtr, ptx_len: BytesLen) -> Status {
        <results::Status as results::Wrap>::wrap(rt, |r| {
            let bytes: &[u8] = if ptx.is_null() || ptx_len <= 0 {
                &[]
            } else {
                // SAFETY: the schedule passes `ptx_len` readable bytes at `ptx`.
                unsafe { std::slice::from_raw_parts(ptx, ptx_len as usize) }
            };
            r.attach_gpu(bytes)
        })
    }

    /// The number of queries of this run (0 without a runtime).
    schedule fn irisc_rt_query_count(rt: Runtime) -> Count {
        rt.as_ref().map(|r| r.query_count() as i64).unwrap_or(0)
    }

    /// The number of queries of the next batch, -1 when there is none: the schedule runs its
    /// query loop once per batch. A run over share files has one batch (its queries); a
    /// serving party (`--serve`) waits for the next batch of client requests the three parties
    /// agreed on, after answering the previous one's. -1 also on failure (said on stderr; the
    /// party's status is then nonzero).
    schedule fn irisc_rt_next_batch(rt: Runtime) -> Count {
        let Some(r) = rt.as_mut() else { return -1 };
        match catch_unwind(AssertUnwindSafe(|| r.next_batch())) {
            Ok(Ok(n)) => n,
            Ok(Err(e)) => {
                r.fail(&e);
                r.failed = true;
                -1
            }
            Err(_) => {
                stop::final_line("internal error (panic) between batches");
                r.failed = true;
                -1
            }
        }
    }

    /// The whole of one role of an `fss2` program (paper 002): `role` is a
    /// [`crate::contract::Fss2Role`]; the arguments are `main`'s; the manifest is the program's
    /// [`crate::fss2::entry::Fss2Manifest`]; `ss_ip` the generated SS.IP kernel the servers run
    /// round 1 with (null: the runtime's loop). Returns the process exit code.
    role["masked_input", "ss_ip", "ss_open", "ic_gate", "ss_mul", "ss_lin", "condeval", "reveal_xor"]
    fn irisc_rt_fss2_main(
        role: I32, argc: Argc, argv: Argv, manifest: BytesPtr, manifest_len: BytesLen, ss_ip: SsIpKernel
    ) -> ExitCode {
        let args: Vec<OsString> = (0..argc.max(0) as usize)
            .map(|i| OsString::from_vec(CStr::from_ptr(*argv.add(i)).to_bytes().to_vec()))
            .collect();
        let bytes = std::slice::from_raw_parts(manifest, manifest_len.max(0) as usize);
        match catch_unwind(|| crate::fss2::entry::main(role, args, bytes, ss_ip)) {
            Ok(code) => code,
            Err(_) => {
                eprintln!("error: internal error (panic)");
                2
            }
        }
    }

    /// After an op failed (said on stderr): 1 when the schedule goes on with the next batch
    /// (a serving party that connected to its peers again, `Runtime::recover`), 0 when it
    /// ends (`irisc_rt_finish` with status 1).
    schedule fn irisc_rt_recover(rt: Runtime) -> Count {
        let Some(r) = rt.as_mut() else { return 0 };
        match catch_unwind(AssertUnwindSafe(|| r.recover())) {
            Ok(true) => 1,
            _ => 0,
        }
    }

    /// Ends the run (`rt` is freed; null: start failed) and returns the process exit code.
    schedule fn irisc_rt_finish(rt: Runtime, status: I32) -> ExitCode {
        // A party stopped by a signal is ended by the signal's thread, once its peers are told.
        stop::let_the_signal_thread_end_the_process();
        if rt.is_null() {
            return stop::signal_status().unwrap_or(if status == 0 { 1 } else { status });
        }
        let rt = Box::from_raw(rt);
        let code = catch_unwind(AssertUnwindSafe(|| rt.finish(status))).unwrap_or(2);
        stop::signal_status().unwrap_or(code)
    }

    /// Part `part` ([`InputPart`]) of input `input` (index in the manifest's inputs) for query
    /// `query` (-1 for a gallery) into slot `dst`, rep3 shares reduced locally mod
    /// 2^`ring_bits`: `Codes` (or Shamir codes) for the code parts, `Bits` for a bit.
    mpc["load_gallery", "load_query"] fn irisc_rt_load_input(
        rt, dst: Slot, input: I32, part: I32, query: I64, ring_bits: I32
    ) -> Status = |r: &mut Runtime| {
        let part = abi_enum("input part", part, InputPart::from_i32)?;
        r.announce_query(query);
        let op = if query < 0 { "load_gallery" } else { "load_query" };
        r.exec_with(op, Phase::Other, |_, _, local| {
            Ok(vec![(dst, local.inputs.load_input(input, part, query, ring_bits)?)])
        })
    };

    /// The queries `0..query` of query input `input`, in gallery form (ids = query indices),
    /// into slot `dst`; empty for query 0 (`earlier(q)`).
    mpc["load_earlier"] fn irisc_rt_load_earlier(
        rt, dst: Slot, input: I32, part: I32, query: I64, ring_bits: I32
    ) -> Status = |r: &mut Runtime| {
        let part = abi_enum("input part", part, InputPart::from_i32)?;
        r.exec_with(OP, Phase::Other, |_, _, local| {
            Ok(vec![(dst, local.inputs.load_earlier(input, part, query, ring_bits)?)])
        })
    };

    /// Every code of slot `src` (its mirror image first, as `mirror` numbers a
    /// [`crate::vocab::Mirror`]) rotated by each shift in `lo..=hi` (local).
    mpc["rotate"] fn irisc_rt_rotate(
        rt, dst: Slot, src: Slot, lo: I32, hi: I32, mirror: I32
    ) -> Status = |r: &mut Runtime| {
        let mirror = abi_enum("mirror", mirror, crate::vocab::Mirror::from_i32)?;
        r.exec(OP, Phase::Other, dst, [src], |cx, [v0]| {
            rep3::rotate(cx, v0, lo, hi, mirror)
        })
    };

    /// The local half of the dot product of Appendix C (eq. 6) with the generated kernel
    /// variants in `kernels` (`[portable, avx2, avx512, vnni]`, null where absent) for the
    /// program's ring.
    mpc["masked_dot"] fn irisc_rt_masked_dot(
        rt, dst: Slot, codes: Slot, gallery: Slot, kernels: KernelTable
    ) -> Status = |r: &mut Runtime| {
        r.exec(OP, Phase::Dot, dst, [codes, gallery], |cx, [q, g]| {
            // SAFETY: the schedule passes the table generated for the storage width of the
            // ring.
            unsafe { rep3::masked_dot(cx, q, g, kernels) }
        })
    };

    /// Additive shares of `<y, y>` for every code of slot `src` (the norms of the cosine test).
    mpc["self_dot"] fn irisc_rt_self_dot(rt, dst: Slot, src: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Other, dst, [src], |cx, [v0]| vector::self_dot(cx, v0))
    };

    /// Dot products of Shamir shares (GR(2^16, d) or F_p): additive shares, record-major, by
    /// the generated kernel variants in `kernels` (null: the runtime's scalar reference).
    mpc["shamir_dot"] fn irisc_rt_shamir_dot(
        rt, dst: Slot, codes: Slot, gallery: Slot, kernels: KernelTable
    ) -> Status = |r: &mut Runtime| {
        r.exec(OP, Phase::Dot, dst, [codes, gallery], |cx, [q, g]| {
            // SAFETY: the schedule passes null or the table generated for this sharing and
            // code length.
            unsafe { shamir::shamir_dot_table(cx, q, g, kernels) }
        })
    };

    /// Additive shares over Z_2^k to replicated shares: one round.
    mpc["reshare"] fn irisc_rt_reshare(rt, dst: Slot, src: Slot, ring_bits: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| rep3::reshare(cx, v0, ring_bits as u32))
    };

    /// Additive shares mod p to replicated shares mod p.
    mpc["reshare_p"] fn irisc_rt_reshare_p(rt, dst: Slot, src: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| shamir::reshare_p(cx, v0))
    };

    /// `ml` of every (record, code) pair from the public masks.
    /// `holders` 0: every pair's; 1 or 2: the record thirds whose share component this party
    /// holds, each held by that many parties (the threshold placed by record thirds).
    mpc["mask_len"] fn irisc_rt_mask_len(rt, dst: Slot, codes: Slot, gallery: Slot, holders: I32) -> Status
        = |r: &mut Runtime| {
        let holders = thirds_holders(holders, OP)?;
        r.exec(OP, Phase::Dot, dst, [codes, gallery], |cx, [v0, v1]| rep3::mask_len(cx, v0, v1, holders))
    };

    /// `T(ml) - dot` for every pair over Z_2^k, the public threshold added where `placement`
    /// says ([`ThresholdPlacement`] by number).
    mpc["sub_threshold"] fn irisc_rt_sub_threshold(
        rt, dst: Slot, dot: Slot, mask_len: Slot, num: I64, den: I64, ring_bits: I32, placement: I32
    ) -> Status = |r: &mut Runtime| {
        let placement = threshold_placement(placement, OP)?;
        r.exec(OP, Phase::Compare, dst, [dot, mask_len], |cx, [v0, v1]| rep3::sub_threshold(cx, v0, v1, num, den, ring_bits as u32, placement))
    };

    /// `T(ml) − dot` mod p (public masks), the threshold placed as in `sub_threshold`.
    mpc["sub_threshold_p"] fn irisc_rt_sub_threshold_p(
        rt, dst: Slot, dot: Slot, ml: Slot, num: I64, den: I64, placement: I32
    ) -> Status = |r: &mut Runtime| {
        let placement = threshold_placement(placement, OP)?;
        r.exec(OP, Phase::Compare, dst, [dot, ml], |cx, [v0, v1]| shamir::sub_threshold_p(cx, v0, v1, num, den, placement))
    };

    /// `dst = a·x − b·y` over Z_2^k (replicated; x or y may be public).
    mpc["lin"] fn irisc_rt_lin(rt, dst: Slot, x: Slot, y: Slot, a: I64, b: I64, k: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [x, y], |cx, [v0, v1]| arith::lin(cx, v0, v1, a, b, k as u32))
    };

    /// `a·x − b·y` mod p·2^m.
    mpc["lin_mod"] fn irisc_rt_lin_mod(
        rt, dst: Slot, x: Slot, y: Slot, a: I64, b: I64, m: I32
    ) -> Status = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [x, y], |cx, [v0, v1]| shamir::lin_mod(cx, v0, v1, a, b, m as u32))
    };

    /// Algorithm 13: `dst = [2^m·src]` over Z_2^k_out from `src` over Z_2^(k_out − m).
    mpc["const_lift"] fn irisc_rt_const_lift(rt, dst: Slot, src: Slot, m: I32, k_out: I32)
        -> Status = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| arith::const_lift(cx, v0, m as u32, k_out as u32))
    };

    /// Algorithm 14 (MPCLift): Z_2^k_in to Z_2^k_out.
    mpc["lift"] fn irisc_rt_lift(rt, dst: Slot, src: Slot, k_in: I32, k_out: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| arith::lift(cx, v0, k_in as u32, k_out as u32))
    };

    /// Algorithm 15 (LiftP): mod p to mod p·2^m.
    mpc["lift_p"] fn irisc_rt_lift_p(rt, dst: Slot, src: Slot, m: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| shamir::lift_p(cx, v0, m as u32))
    };

    /// Algorithm 13 mod p: `[2^m·x]` mod p·2^m.
    mpc["const_lift_p"] fn irisc_rt_const_lift_p(rt, dst: Slot, src: Slot, m: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| shamir::const_lift_p(cx, v0, m as u32))
    };

    /// Elementwise product of replicated shares over Z_2^k: additive shares (then `reshare`).
    mpc["mul"] fn irisc_rt_mul(rt, dst: Slot, x: Slot, y: Slot, k: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [x, y], |cx, [v0, v1]| arith::mul(cx, v0, v1, k as u32))
    };

    /// Algorithm 10 (BitExtract) for the most significant bit of each value.
    mpc["msb"] fn irisc_rt_msb(rt, dst: Slot, src: Slot, ring_bits: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| rep3::msb(cx, v0, ring_bits as u32))
    };

    /// AdditiveMSB: the most significant bit of each value held as additive shares.
    mpc["additive_msb"] fn irisc_rt_additive_msb(rt, dst: Slot, src: Slot, ring_bits: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| rep3::additive_msb(cx, v0, ring_bits as u32))
    };

    /// Algorithm 12 (BitExtractP): the MSB over F_p.
    mpc["msb_p"] fn irisc_rt_msb_p(rt, dst: Slot, src: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| shamir::msb_p(cx, v0))
    };

    /// The comparison bit of Lemma 2 over Z_(p·2^m).
    mpc["msb_mod"] fn irisc_rt_msb_mod(rt, dst: Slot, src: Slot, m: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| shamir::msb_mod(cx, v0, m as u32))
    };

    /// One public bit (`value` != 0) as binary shares. Local.
    mpc["const_bits"] fn irisc_rt_const_bits(rt, dst: Slot, value: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Other, dst, [], |cx, []| vector::const_bits(cx, value != 0))
    };

    mpc["not"] fn irisc_rt_not(rt, dst: Slot, src: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| logic::not(cx, v0))
    };

    mpc["and"] fn irisc_rt_and(rt, dst: Slot, x: Slot, y: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [x, y], |cx, [v0, v1]| logic::and(cx, v0, v1))
    };

    mpc["or"] fn irisc_rt_or(rt, dst: Slot, x: Slot, y: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [x, y], |cx, [v0, v1]| logic::or(cx, v0, v1))
    };

    /// Algorithm 11 (CMux): `dst = c ? x : y`.
    mpc["mux"] fn irisc_rt_mux(rt, dst: Slot, c: Slot, x: Slot, y: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [c, x, y], |cx, [v0, v1, v2]| logic::mux(cx, v0, v1, v2))
    };

    /// `beaver` family: the local conversion of replicated Z_2^`ring` shares (or binary shares)
    /// to XOR shares, `group` consecutive elements per lane.
    mpc["to_xor"] fn irisc_rt_to_xor(rt, dst: Slot, src: Slot, ring: I32, group: I64) -> Status
        = |r: &mut Runtime| {
        let group = self::group("to_xor", group)? as usize;
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| beaver::to_xor(cx, v0, ring as u32, group))
    };

    /// `beaver` family: the rows of `a` then of `b` (a one-lane operand is broadcast).
    mpc["xor_concat"] fn irisc_rt_xor_concat(rt, dst: Slot, a: Slot, b: Slot) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Other, dst, [a, b], |_, [v0, v1]| beaver::xor_concat(v0, v1))
    };

    /// `beaver` family: Pi_MT (paper 004, Fig. 4) of the circuit (`circuit_len` bytes of its
    /// encoding at `circuit`) on the rows of `src` the input table (`inputs_len` bytes of text
    /// at `inputs`) names, with the next execution of this party's preprocessing store.
    mpc["beaver_eval"] fn irisc_rt_beaver_eval(
        rt, dst: Slot, src: Slot, circuit: BytesPtr, circuit_len: BytesLen, inputs: BytesPtr,
        inputs_len: BytesLen
    ) -> Status = |r: &mut Runtime| {
        // SAFETY: the schedule passes pointers to `circuit_len` and `inputs_len` bytes.
        let bytes: &[u8] = if circuit.is_null() || circuit_len <= 0 {
            &[]
        } else {
            unsafe { std::slice::from_raw_parts(circuit, circuit_len as usize) }
        };
        let table = unsafe { text(inputs, inputs_len) }?.unwrap_or_default();
        crate::party::beaver::eval(r, OP, dst, src, bytes, &table)
    };

    /// `beaver` family: rows `first..first + width` of the circuit's XOR-shared outputs as
    /// binary replicated shares (one round), for the honest-majority ops after the circuit.
    mpc["xor_to_bits"] fn irisc_rt_xor_to_bits(rt, dst: Slot, src: Slot, first: I64, width: I64) -> Status
        = |r: &mut Runtime| {
        let (first, width) = (self::group("xor_to_bits", first)? as usize, self::group("xor_to_bits", width)? as usize);
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| beaver::xor_to_bits(cx, v0, first, width))
    };

    /// `beaver` family: output row `row` of the circuit's XOR-shared outputs opened to `to`.
    mpc["beaver_open"] fn irisc_rt_beaver_open(rt, dst: Slot, src: Slot, row: I64, to: I32) -> Status
        = |r: &mut Runtime| {
        let row = usize::try_from(row).map_err(|_| sched(format!("beaver_open of row {row}")))?;
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| beaver::beaver_open(cx, v0, row, to as usize))
    };

    /// OR over consecutive groups of `group` bits (0 = all).
    mpc["or_tree"] fn irisc_rt_or_groups(rt, dst: Slot, src: Slot, group: I64) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| rep3::or_groups(cx, v0, group.max(0) as u64))
    };

    /// AND over consecutive groups of `group` bits (0 = all; the AND of no bits is true).
    mpc["and_tree"] fn irisc_rt_and_groups(rt, dst: Slot, src: Slot, group: I64) -> Status
        = |r: &mut Runtime| {
        let group = self::group("and_groups", group)?;
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v]| logic::and_groups(cx, v, group))
    };

    /// Algorithms 16–17 (BitInject): binary shares to replicated shares over Z_2^k.
    mpc["bit_inject"] fn irisc_rt_bit_inject(rt, dst: Slot, src: Slot, k: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| arith::bit_inject(cx, v0, k as u32))
    };

    /// Local sums over consecutive groups of `group` elements (0 = all).
    mpc["sum"] fn irisc_rt_sum_groups(rt, dst: Slot, src: Slot, group: I64) -> Status
        = |r: &mut Runtime| {
        let group = self::group("sum_groups", group)?;
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v]| arith::sum_groups(cx, v, group))
    };

    /// Opens binary shares to party `to_party`.
    mpc["open"] fn irisc_rt_open(rt, dst: Slot, src: Slot, to_party: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| rep3::open(cx, v0, to_party as u32))
    };

    /// Opens replicated arithmetic shares to party `to` (opened integers).
    mpc["open_int"] fn irisc_rt_open_int(rt, dst: Slot, src: Slot, to: I32) -> Status
        = |r: &mut Runtime| {
        r.exec(OP, Phase::Compare, dst, [src], |cx, [v0]| arith::open_int(cx, v0, to as u32))
    };

    /// Adds one reveal's field to query `query`'s answer (output party): `shape`
    /// ([`OutputShape`]) bit (`src` one opened bit), ids (`src` one opened bit per record of
    /// slot `records`, whose ids are reported; `records` < 0: the only gallery), count (`src`
    /// one opened integer). `field` (`field_len` bytes of UTF-8) names the JSON field; null or
    /// empty takes the shape's default.
    mpc["output"] fn irisc_rt_output(
        rt, query: I64, src: Slot, records: I32, shape: I32, field: BytesPtr, field_len: BytesLen
    ) -> Status = |r: &mut Runtime| {
        // SAFETY: the schedule passes a pointer to `field_len` bytes of the label, or null.
        let name = unsafe { text(field, field_len) }?;
        let shape = abi_enum("output shape", shape, OutputShape::from_i32)?;
        let query = self::query("output", query)?;
        r.exec_with(OP, Phase::Other, |_, slots, local| {
            output::output(
                slots, local.inputs, local.outputs, query, src, records, shape, name.as_deref(),
            )?;
            Ok(Vec::new())
        })
    };

    /// Prints query `query`'s answer line `{"query": i, <fields>}` at the output party.
    mpc["emit"] fn irisc_rt_emit(rt, query: I64) -> Status
        = |r: &mut Runtime| {
        let query = self::query("emit", query)?;
        r.exec_with(OP, Phase::Other, |_, _, local| {
            local.outputs.emit(query)?;
            Ok(Vec::new())
        })
    };

    /// The number of record chunks of the gallery in slot `gallery` (at least 1), or -1 after
    /// printing the error.
    tiling["chunk_count"] fn irisc_rt_chunk_count(rt, gallery: Slot) -> Count
        = |r: &mut Runtime| {
        let mut count = 0;
        r.exec_with(OP, Phase::Other, |cx, slots, _| {
            count = tiles::chunk_count_of(cx, get(slots, gallery)?)?;
            Ok(Vec::new())
        })?;
        Ok(count)
    };

    /// Slot `dst` = the records of chunk `chunk` of the gallery in slot `gallery`, of the same
    /// kind with those records' ids, masks and shares. `with_shares` = 0 (the chunk stage
    /// reads only the records' ids and public masks) leaves the shares of replicated codes
    /// out; an op that reads them fails with a schedule error.
    mpc["gallery_view"] fn irisc_rt_gallery_view(
        rt, dst: Slot, gallery: Slot, chunk: I64, with_shares: I32
    ) -> Status = |r: &mut Runtime| {
        r.exec(OP, Phase::Dot, dst, [gallery], |cx, [v0]| tiles::gallery_view(cx, v0, chunk, with_shares != 0))
    };

    /// For j in 0..n: slot `dst_base + j` = the dot products of the codes in slot
    /// `codes_base + j` with chunk `chunk` of the gallery in slot `gallery`, as the dot product
    /// of `kind` ([`BatchDotKind`]) computes them with `table`, in one kernel call.
    mpc["batch_masked_dot", "batch_shamir_dot"] fn irisc_rt_batch_dot(
        rt, dst_base: Slot, codes_base: Slot, n: I64, gallery: Slot, chunk: I64,
        table: KernelTable, kind: I32
    ) -> Status = |r: &mut Runtime| {
        let kind = abi_enum("batch_dot kind", kind, BatchDotKind::from_i32)?;
        // One entry point for both ops: the accounting names the one the kind says.
        let op = match kind {
            BatchDotKind::Masked => "batch_masked_dot",
            BatchDotKind::Shamir => "batch_shamir_dot",
        };
        r.exec_with(op, Phase::Dot, |cx, slots, local| {
            // SAFETY: the schedule passes the table `masked_dot` or `shamir_dot` takes for
            // these codes.
            unsafe {
                tiles::batch_dot_slots(
                    cx, local.scan, slots, dst_base, codes_base, n, gallery, chunk, table, kind,
                    false,
                )
            }
        })
    };

    /// Slot `dst` = the dot products of the codes in slots `codes_base + j` (j < n) with chunk
    /// `chunk` of the gallery in slot `gallery`, as `irisc_rt_batch_dot` computes them, but as
    /// one value in the batch layout `[record][query][code]` (the kernel's output, not split):
    /// what a batched chunk stage reads.
    mpc["batch_masked_dot", "batch_shamir_dot"] fn irisc_rt_batch_dot_joined(
        rt, dst: Slot, codes_base: Slot, n: I64, gallery: Slot, chunk: I64,
        table: KernelTable, kind: I32
    ) -> Status = |r: &mut Runtime| {
        let kind = abi_enum("batch_dot kind", kind, BatchDotKind::from_i32)?;
        let op = match kind {
            BatchDotKind::Masked => "batch_masked_dot",
            BatchDotKind::Shamir => "batch_shamir_dot",
        };
        r.exec_with(op, Phase::Dot, |cx, slots, local| {
            // SAFETY: as `irisc_rt_batch_dot`.
            unsafe {
                tiles::batch_dot_slots(
                    cx, local.scan, slots, dst, codes_base, n, gallery, chunk, table, kind, true,
                )
            }
        })
    };

    /// Slot `dst` = `mask_len` of the codes in slots `codes_base + j` (j < n) with the gallery
    /// (chunk) in slot `gallery`, in the batch layout `[record][query][code]`.
    /// `holders` as in `mask_len`.
    mpc["batch_mask_len"] fn irisc_rt_batch_mask_len(
        rt, dst: Slot, codes_base: Slot, n: I64, gallery: Slot, holders: I32
    ) -> Status = |r: &mut Runtime| {
        let n = tiles::batched::batch_size(n, OP)?;
        let holders = thirds_holders(holders, OP)?;
        r.exec_with(OP, Phase::Dot, |cx, slots, _| {
            let v = tiles::batched::batch_mask_len(cx, slots, codes_base, n, get(slots, gallery)?, holders)?;
            Ok(vec![(dst, v)])
        })
    };

    /// Slot `dst` = the per-query values in slots `src_base + j` (j < n; one element each, or
    /// `width`) broadcast into the batch layout of slot `like` (`width` per record and query).
    mpc["batch_spread"] fn irisc_rt_batch_spread(
        rt, dst: Slot, src_base: Slot, n: I64, like: Slot, width: I64
    ) -> Status = |r: &mut Runtime| {
        let n = tiles::batched::batch_size(n, OP)?;
        let width = tiles::batched::width(width, OP)?;
        r.exec_with(OP, Phase::Compare, |_, slots, _| {
            let v = tiles::batched::batch_spread(slots, src_base, n, get(slots, like)?, width)?;
            Ok(vec![(dst, v)])
        })
    };

    /// Slot `dst` = the value of the gallery alone in slot `src` (`width` per record) repeated
    /// for each of `n` queries: `[record][query][width]`.
    mpc["batch_repeat"] fn irisc_rt_batch_repeat(
        rt, dst: Slot, src: Slot, n: I64, width: I64
    ) -> Status = |r: &mut Runtime| {
        let n = tiles::batched::batch_size(n, OP)?;
        let width = tiles::batched::width(width, OP)?;
        r.exec(OP, Phase::Compare, dst, [src], |_, [v]| tiles::layout::repeat(v, n, width))
    };

    /// Slot `dst` = query `j`'s part (`width` per record) of the batch value of `n` queries in
    /// slot `src`.
    mpc["batch_pick"] fn irisc_rt_batch_pick(
        rt, dst: Slot, src: Slot, j: I32, n: I64, width: I64
    ) -> Status = |r: &mut Runtime| {
        let n = tiles::batched::batch_size(n, OP)?;
        let width = tiles::batched::width(width, OP)?;
        let j = usize::try_from(j).map_err(|_| sched(format!("batch_pick: query {j}")))?;
        r.exec(OP, Phase::Other, dst, [src], |_, [v]| tiles::layout::pick(v, n, width, j))
    };

    /// OR over all of each query's bits of the batch value in slot `src` (`n` queries, `width`
    /// per record): one bit per query, in one OR tree for the batch.
    mpc["or_tree"] fn irisc_rt_or_per_query(rt, dst: Slot, src: Slot, n: I64, width: I64)
        -> Status = |r: &mut Runtime| {
        per_query_reduce(r, OP, dst, src, n, width, tiles::batched::Reduction::Or)
    };

    /// AND over all of each query's bits of a batch value (as `irisc_rt_or_per_query`).
    mpc["and_tree"] fn irisc_rt_and_per_query(rt, dst: Slot, src: Slot, n: I64, width: I64)
        -> Status = |r: &mut Runtime| {
        per_query_reduce(r, OP, dst, src, n, width, tiles::batched::Reduction::And)
    };

    /// The sum of all of each query's elements of a batch value (as `irisc_rt_or_per_query`).
    mpc["sum"] fn irisc_rt_sum_per_query(rt, dst: Slot, src: Slot, n: I64, width: I64)
        -> Status = |r: &mut Runtime| {
        per_query_reduce(r, OP, dst, src, n, width, tiles::batched::Reduction::Sum)
    };

    /// `first` != 0: slot `acc` = slot `src`; else slot `acc` = slot `acc` followed by slot
    /// `src` (shares, public values or bits of one kind).
    mpc["append"] fn irisc_rt_append(rt, acc: Slot, src: Slot, first: I32) -> Status
        = |r: &mut Runtime| {
        if first != 0 {
            r.exec(OP, Phase::Compare, acc, [src], |_, [v]| tiles::copy_appendable(v))
        } else {
            r.exec_update(OP, Phase::Compare, acc, src, tiles::append)
        }
    };
}
