//! The values the generated schedule names by slot number.

use std::sync::Arc;

use crate::io::share_file::RingVec;
use crate::share::binary::BitShares;

use super::shamir_codes::ShamirCodes;
use crate::share::fp::Rep3Fp;
use crate::share::Codes;
use crate::share::Rep3Vec;

pub enum Value {
    /// Shares of codes with their public masks (a query's rotations, or the gallery).
    Codes(Arc<Codes>),
    /// Additive shares, one per (record, code) pair, record-major.
    Additive(RingVec),
    /// Replicated shares (x_i, x_{i-1}) over Z_2^k.
    Replicated { own: RingVec, prev: RingVec },
    /// Public values known to every party, one per pair (e.g. combined mask lengths).
    Public(Vec<u64>),
    /// Mask lengths computed on the record thirds this party holds (the threshold placed by
    /// record thirds), read only by `sub_threshold`.
    PublicThirds(Arc<super::placement::PublicThirds>),
    /// Binary replicated shares, bit-sliced.
    Bits(BitShares),
    /// Opened bits: the values at the output party, `None` at the others.
    Clear(Option<Vec<bool>>),
    /// Opened integers (e.g. a count): the values at the output party, `None` at the others.
    /// Read by the output step of the count shape.
    #[allow(dead_code)]
    ClearInts(Option<Vec<u64>>),
    /// Shamir shares of codes (F_p or GR(2^16, d)), one component per party.
    Shamir(Arc<ShamirCodes>),
    /// Additive shares mod p (canonical, below p), e.g. after a Shamir dot product over F_p.
    AdditiveP(Vec<u16>),
    /// Replicated shares mod p.
    ReplicatedP(Rep3Fp),
    /// Replicated shares mod t = p * 2^m, components canonical (below t), 1 <= m <= 47.
    ReplicatedMod { m: u32, x: Rep3Vec<u64> },
    /// XOR shares of rows of bits over lanes (the `beaver` family's circuit inputs and outputs).
    Xor(super::xor_rows::XorRows),
}

impl Value {
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Codes(_) => "codes",
            Value::Additive(_) => "additive shares",
            Value::Replicated { .. } => "replicated shares",
            Value::Public(_) => "public values",
            Value::PublicThirds(_) => "mask lengths of record thirds",
            Value::Bits(_) => "binary shares",
            Value::Clear(_) => "opened bits",
            Value::ClearInts(_) => "opened integers",
            Value::Shamir(_) => "Shamir-shared codes",
            Value::AdditiveP(_) => "additive shares mod p",
            Value::ReplicatedP(_) => "replicated shares mod p",
            Value::ReplicatedMod { .. } => "replicated shares mod p*2^m",
            Value::Xor(_) => "XOR shares",
        }
    }
}
