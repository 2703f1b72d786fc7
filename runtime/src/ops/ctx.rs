//! The frame shared by the ops: each op is a function from operand values to a result value,
//! run with a [`Ctx`] that lends it the links and the PRSS, counts its rounds and says how
//! kernels run; and the helpers ops read their operands with. The executor
//! (`party::executor`) reads the operand slots, runs such a function and stores the result,
//! so the same functions run unchanged over TLS in a party and over in-memory links in the
//! tests.

use std::sync::Arc;
use std::time::Duration;

use crate::error::RuntimeError;
use crate::io::share_file::RingVec;
use crate::net::Transport;
use crate::rand::Prss;
use crate::ring::{mask, storage_for, RingElem};
use crate::share::BitShares;

use super::value::Value;

/// What an op may use: the links to the two other parties, the correlated randomness, the
/// round counter it adds its communication rounds to, and how kernels run (threads, the record
/// chunk of the tiled scan).
pub struct Ctx<'a> {
    pub net: &'a mut dyn Transport,
    pub prss: &'a mut Prss,
    /// Rounds this op used (public: the same at every party).
    pub rounds: u64,
    /// Threads one kernel call may use (`--threads`).
    pub threads: usize,
    /// Records per chunk of the tiled scan (`--record-chunk`; 0: the whole gallery).
    pub record_chunk: usize,
    /// Wall time of dot products computed in the background (the tiled scan's next chunk)
    /// whose results this op used: reported apart from the dot phase.
    pub overlapped: Duration,
    /// The party's GPU once the schedule attached one (`irisc_rt_gpu_attach`): the dot
    /// products of the rings it has kernels for run there ([`crate::gpu`]).
    pub gpu: Option<Arc<crate::gpu::Session>>,
}

impl<'a> Ctx<'a> {
    /// A context with one thread and the whole gallery as one chunk.
    pub fn new(net: &'a mut dyn Transport, prss: &'a mut Prss) -> Ctx<'a> {
        Ctx {
            net,
            prss,
            rounds: 0,
            threads: 1,
            record_chunk: 0,
            overlapped: Duration::ZERO,
            gpu: None,
        }
    }

    pub fn party(&self) -> usize {
        self.net.party()
    }
}

/// A schedule error with `msg`.
pub fn sched(msg: impl Into<String>) -> RuntimeError {
    RuntimeError::Schedule(msg.into())
}

/// Slot `i` of `slots`, or an error if it was never written.
pub fn get(slots: &[Option<Value>], i: u32) -> Result<&Value, RuntimeError> {
    slots
        .get(i as usize)
        .and_then(|v| v.as_ref())
        .ok_or_else(|| sched(format!("slot {i} read before it was written")))
}

/// Checks a ring size: 2..=64.
pub fn ring(k: u32, op: &str) -> Result<u32, RuntimeError> {
    if (2..=64).contains(&k) {
        Ok(k)
    } else {
        Err(sched(format!(
            "{op}: ring Z_2^{k} is not supported (k must be in 2..=64)"
        )))
    }
}

/// The common length of elementwise operands: operands of length 1 broadcast, all others must
/// agree. All of length 1 gives 1.
pub fn broadcast_len(lens: &[usize], op: &str) -> Result<usize, RuntimeError> {
    let mut n = None;
    for &l in lens.iter().filter(|&&l| l != 1) {
        match n {
            None => n = Some(l),
            Some(m) if m == l => {}
            Some(m) => {
                return Err(sched(format!(
                    "{op}: operand lengths {m} and {l} differ (only length 1 broadcasts)"
                )))
            }
        }
    }
    Ok(n.unwrap_or(1))
}

/// Element `i` of a broadcast operand.
#[inline]
pub fn at<T: Copy>(v: &[T], i: usize) -> T {
    if v.len() == 1 {
        v[0]
    } else {
        v[i]
    }
}

/// Binary shares broadcast to length `n` (a length-1 vector repeated; others unchanged).
pub fn broadcast_bits(b: &BitShares, n: usize) -> BitShares {
    if b.len == n {
        b.clone()
    } else {
        b.gather(&vec![0; n])
    }
}

/// The elements of `v` as u64, masked with `m` (statically dispatched per width).
fn widen(v: &RingVec, m: u64) -> Vec<u64> {
    match v {
        RingVec::U16(v) => v.iter().map(|&x| u64::from(x) & m).collect(),
        RingVec::U32(v) => v.iter().map(|&x| u64::from(x) & m).collect(),
        RingVec::U64(v) => v.iter().map(|&x| x & m).collect(),
    }
}

/// The replicated components of `v` in Z_2^k, widened to u64 and reduced mod 2^k. A public
/// operand becomes the trivial sharing (its value is component 0, held by party 0 as `own` and
/// by party 1 as `prev`). Shares stored in a narrower word than Z_2^k needs are an error: they
/// cannot be shares of a value of Z_2^k.
pub fn rep_u64(
    party: usize,
    v: &Value,
    k: u32,
    op: &str,
) -> Result<(Vec<u64>, Vec<u64>), RuntimeError> {
    let m = mask(k);
    match v {
        Value::Replicated { own, prev } => {
            if own.len() != prev.len() || own.word_bytes() != prev.word_bytes() {
                return Err(sched(format!("{op}: share components differ in shape")));
            }
            if (own.word_bytes() as u32) * 8 < storage_for(k).bits() {
                return Err(sched(format!(
                    "{op}: operand holds {}-bit words, too narrow for Z_2^{k}",
                    own.word_bytes() * 8
                )));
            }
            Ok((widen(own, m), widen(prev, m)))
        }
        Value::Public(p) => {
            let val: Vec<u64> = p.iter().map(|x| x & m).collect();
            let zero = vec![0; p.len()];
            Ok(match party {
                0 => (val, zero),
                1 => (zero, val),
                _ => (zero.clone(), zero),
            })
        }
        other => Err(sched(format!(
            "{op}: operand holds {}, expected replicated shares",
            other.kind()
        ))),
    }
}

/// The replicated components of `v` in storage `T`, reduced mod 2^k (see [`rep_u64`]).
pub fn rep_as<T: RingElem>(
    party: usize,
    v: &Value,
    k: u32,
    op: &str,
) -> Result<crate::share::Rep3Vec<T>, RuntimeError> {
    let (o, p) = rep_u64(party, v, k, op)?;
    Ok(crate::share::Rep3Vec {
        own: o.into_iter().map(T::from_u64).collect(),
        prev: p.into_iter().map(T::from_u64).collect(),
    })
}

/// Replicated shares of Z_2^k from u64 components (reduced mod 2^k into the storage for k).
pub fn replicated(k: u32, own: Vec<u64>, prev: Vec<u64>) -> Value {
    let to = |v: Vec<u64>| RingVec::from_u64s(k, v).expect("k checked to be in 2..=64");
    Value::Replicated {
        own: to(own),
        prev: to(prev),
    }
}

/// The binary shares of `v`, or an error naming what it holds.
pub fn bits<'v>(v: &'v Value, op: &str) -> Result<&'v BitShares, RuntimeError> {
    match v {
        Value::Bits(b) => Ok(b),
        other => Err(sched(format!(
            "{op}: operand holds {}, expected binary shares",
            other.kind()
        ))),
    }
}

/// Runs `$body` with `$T` the storage word of Z_2^`$k`.
macro_rules! with_width {
    ($k:expr, $T:ident => $body:expr) => {
        match crate::ring::storage_for($k) {
            crate::ring::Width::U16 => {
                type $T = u16;
                $body
            }
            crate::ring::Width::U32 => {
                type $T = u32;
                $body
            }
            crate::ring::Width::U64 => {
                type $T = u64;
                $body
            }
        }
    };
}
pub(crate) use with_width;

/// More slots than any schedule names: a larger index is a corrupt slot number.
pub(crate) const MAX_SLOTS: usize = 1 << 24;

/// Helpers for the three-party tests of the ops.
#[cfg(test)]
pub mod testkit {
    use super::*;
    use crate::protocol::testutil::run_protocol;
    use crate::share::binary::reconstruct_bits;
    use crate::share::rep3::share_vec;
    use crate::share::Rep3Vec;
    use rand::SeedableRng;
    use rand_chacha::ChaCha12Rng;

    /// A party's result and the rounds and messages its ops used.
    pub struct Out<R> {
        pub out: R,
        pub rounds: u64,
        pub messages: u64,
    }

    /// Runs `f` at the three parties (in-memory links, fresh PRSS) with input `inputs[i]`.
    pub fn run3<I, R>(
        inputs: [I; 3],
        f: impl Fn(&mut Ctx<'_>, &I) -> R + Send + Sync + 'static,
    ) -> [Out<R>; 3]
    where
        I: Send + Sync + 'static,
        R: Send + 'static,
    {
        let runs = run_protocol(inputs, move |net, prss, i| {
            let mut cx = Ctx::new(net, prss);
            let out = f(&mut cx, i);
            (out, cx.rounds)
        });
        runs.map(|r| Out {
            out: r.out.0,
            rounds: r.out.1,
            messages: r.messages,
        })
    }

    /// Dealer: replicated shares of `values` in Z_2^k, as u64 components.
    pub fn deal(values: &[u64], k: u32, seed: u64) -> [Rep3Vec<u64>; 3] {
        let v: Vec<u64> = values.iter().map(|x| x & mask(k)).collect();
        share_vec(&v, k, &mut ChaCha12Rng::seed_from_u64(seed))
    }

    /// Party-side: a `Value::Replicated` of Z_2^k from dealt components.
    pub fn rep_value(x: &Rep3Vec<u64>, k: u32) -> Value {
        replicated(k, x.own.clone(), x.prev.clone())
    }

    /// Recombines replicated components mod 2^k, checking the replication.
    pub fn open_rep(s: [Rep3Vec<u64>; 3], k: u32) -> Vec<u64> {
        assert!(crate::share::rep3::consistent(&s, k), "replication broken");
        crate::share::rep3::reconstruct(&s, k)
    }

    /// Recombines binary shares, checking the replication.
    pub fn open_bits(s: [BitShares; 3]) -> Vec<bool> {
        reconstruct_bits(&s).expect("consistent binary shares")
    }

    /// A value of Z_2^k read as a signed integer.
    pub fn signed(x: u64, k: u32) -> i128 {
        let x = (x & mask(k)) as i128;
        if x >= 1i128 << (k - 1) {
            x - (1i128 << k)
        } else {
            x
        }
    }

    /// The ring edges of the brief: 0, 1, 2^(k−1) − 1, −2^(k−1), −1.
    pub fn edges(k: u32) -> Vec<u64> {
        let half = 1u64 << (k - 1);
        vec![0, 1, half - 1, half, mask(k)]
    }

    /// Ring sizes the tests pick from.
    pub const RINGS: [u32; 9] = [2, 16, 17, 31, 32, 33, 63, 64, 20];
}

/// More of the test kit: operands dealt by the test, results in a form that crosses threads.
#[cfg(test)]
pub mod testrun {
    use super::testkit::*;
    use super::*;
    use crate::share::Rep3Vec;

    /// A dealt operand: replicated shares of Z_2^k, binary shares or public values.
    #[derive(Clone)]
    pub enum In {
        Rep([Rep3Vec<u64>; 3], u32),
        Bits([BitShares; 3]),
        Public(Vec<u64>),
    }

    impl In {
        pub fn rep(values: &[u64], k: u32, seed: u64) -> In {
            In::Rep(deal(values, k, seed), k)
        }
        fn value(&self, p: usize) -> Value {
            match self {
                In::Rep(s, k) => rep_value(&s[p], *k),
                In::Bits(s) => Value::Bits(s[p].clone()),
                In::Public(v) => Value::Public(v.clone()),
            }
        }
    }

    /// A party's result, in a form that crosses threads.
    pub enum Res {
        Rep(Rep3Vec<u64>, usize),
        Ints(Option<Vec<u64>>),
        Err(String),
    }

    fn res(v: Result<Value, RuntimeError>) -> Res {
        match v {
            Ok(Value::Replicated { own, prev }) => Res::Rep(
                Rep3Vec {
                    own: own.iter_u64().collect(),
                    prev: prev.iter_u64().collect(),
                },
                own.word_bytes(),
            ),
            Ok(Value::ClearInts(c)) => Res::Ints(c),
            Ok(other) => Res::Err(format!("unexpected {}", other.kind())),
            Err(e) => Res::Err(e.to_string()),
        }
    }

    /// Runs `f` on the dealt operands at the three parties. Returns the results and the rounds
    /// and messages of every party.
    pub fn run_op(
        ins: Vec<In>,
        f: impl Fn(&mut Ctx<'_>, &[Value]) -> Result<Value, RuntimeError> + Send + Sync + 'static,
    ) -> [(Res, u64, u64); 3] {
        let inputs = [ins.clone(), ins.clone(), ins];
        let runs = run3(inputs, move |cx, ins: &Vec<In>| {
            let p = cx.party();
            let vals: Vec<Value> = ins.iter().map(|i| i.value(p)).collect();
            res(f(cx, &vals))
        });
        runs.map(|r| (r.out, r.rounds, r.messages))
    }

    /// The opened replicated result over Z_2^k, checking storage word, reduction, replication
    /// and that all parties counted the same rounds. Panics on an error result.
    pub fn rep_result(out: [(Res, u64, u64); 3], k: u32) -> (Vec<u64>, u64) {
        let rounds = out[0].1;
        assert!(
            out.iter().all(|o| o.1 == rounds),
            "parties disagree on rounds"
        );
        let shares = out.map(|(r, _, _)| match r {
            Res::Rep(x, w) => {
                assert_eq!(w as u32 * 8, storage_for(k).bits(), "storage of Z_2^{k}");
                assert!(
                    x.own.iter().chain(&x.prev).all(|c| c & !mask(k) == 0),
                    "reduced mod 2^{k}"
                );
                x
            }
            Res::Err(e) => panic!("{e}"),
            _ => panic!("expected replicated shares"),
        });
        (open_rep(shares, k), rounds)
    }

    /// The error messages of the three parties (panics if an op succeeded).
    pub fn errors(out: [(Res, u64, u64); 3]) -> Vec<String> {
        out.into_iter()
            .map(|(r, _, m)| {
                assert_eq!(m, 0, "an op that fails sends nothing");
                match r {
                    Res::Err(e) => e,
                    _ => panic!("expected an error"),
                }
            })
            .collect()
    }
}
