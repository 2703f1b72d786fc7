//! A plaintext definition of fractional-Hamming-distance matching written from the contract
//! alone (ARCHITECTURE.md section 7 and Algorithm 1 of the Large-Scale MPC paper), sharing no code
//! with the compiler, its plaintext evaluator or the runtime: rotation, mask overlap and the exact
//! ratio rule are spelled out here bit by bit, so that a bug in any of those places shows up as a
//! disagreement instead of being reproduced by the reference.

#![allow(dead_code)]

use irisc_runtime::iris::{IrisCode, IrisRecord};

const ROWS: usize = 16;
const CELL_BITS: usize = 4;

fn bit(bytes: &[u8], i: usize) -> bool {
    (bytes[i / 8] >> (i % 8)) & 1 == 1
}

/// `rot(q, s)[row][col][k] = q[row][(col + s) mod cols][k]`, on packed LSB-first bytes with bit
/// `row * cols * 4 + col * 4 + k` (the contract's layout).
pub fn rotate(code: &IrisCode, s: i64) -> IrisCode {
    let bits = code.code.len() * 8;
    let cols = bits / (ROWS * CELL_BITS);
    let turn = |src: &[u8]| {
        let mut out = vec![0u8; src.len()];
        for row in 0..ROWS {
            for col in 0..cols {
                let from = (col as i64 + s).rem_euclid(cols as i64) as usize;
                for k in 0..CELL_BITS {
                    let to = row * cols * CELL_BITS + col * CELL_BITS + k;
                    if bit(src, row * cols * CELL_BITS + from * CELL_BITS + k) {
                        out[to / 8] |= 1 << (to % 8);
                    }
                }
            }
        }
        out
    };
    IrisCode {
        code: turn(&code.code),
        mask: turn(&code.mask),
    }
}

/// `(ml, hd)`: bits valid in both masks, and those among them where the codes differ.
pub fn overlap(x: &IrisCode, y: &IrisCode) -> (u64, u64) {
    let (mut ml, mut hd) = (0, 0);
    for i in 0..x.code.len() * 8 {
        if bit(&x.mask, i) && bit(&y.mask, i) {
            ml += 1;
            if bit(&x.code, i) != bit(&y.code, i) {
                hd += 1;
            }
        }
    }
    (ml, hd)
}

/// Algorithm 1's test with the exact ratio `num/den`: `hd / ml < num / den`, i.e.
/// `hd * den < num * ml` (never true when `ml = 0`).
pub fn exact_match(ml: u64, hd: u64, num: u64, den: u64) -> bool {
    hd * den < num * ml
}

/// Per query, the ids of the gallery records that match some rotation `lo..=hi` of the query
/// under the exact ratio, in gallery order.
pub fn matching_ids(
    gallery: &[IrisRecord],
    queries: &[IrisRecord],
    rotations: std::ops::RangeInclusive<i64>,
    num: u64,
    den: u64,
) -> Vec<Vec<u64>> {
    queries
        .iter()
        .map(|q| {
            let turned: Vec<IrisCode> = rotations.clone().map(|s| rotate(&q.iris, s)).collect();
            gallery
                .iter()
                .filter(|d| {
                    turned.iter().any(|c| {
                        let (ml, hd) = overlap(c, &d.iris);
                        exact_match(ml, hd, num, den)
                    })
                })
                .map(|d| d.id)
                .collect()
        })
        .collect()
}

/// The ids the output party printed, per answer line in query order (lines without `ids`,
/// such as a run's trailer, are skipped).
pub fn printed_ids(lines: &[serde_json::Value]) -> Vec<Vec<u64>> {
    lines
        .iter()
        .filter_map(|l| l.get("ids"))
        .map(|ids| {
            ids.as_array()
                .expect("ids is an array")
                .iter()
                .map(|x| x.as_u64().expect("an id is a number"))
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference rotation itself, on a hand-made 256-bit code (4 columns): the cell of column
    /// `c` of `rot(q, s)` is the cell of column `c + s` of `q`.
    #[test]
    fn rotation_moves_cells_left_by_s() {
        let mut q = IrisCode {
            code: vec![0; 32],
            mask: vec![0xff; 32],
        };
        // Row 3, column 1, k = 2 set.
        let i = 3 * 16 + 4 + 2;
        q.code[i / 8] |= 1 << (i % 8);
        let r = rotate(&q, 1);
        let at = |c: &IrisCode, col: usize| bit(&c.code, 3 * 16 + col * 4 + 2);
        assert!(at(&r, 0) && !at(&r, 1), "rot(q, 1) col 0 = q col 1");
        let r = rotate(&q, -1);
        assert!(at(&r, 2) && !at(&r, 0), "rot(q, -1) col 2 = q col 1");
        assert_eq!(rotate(&q, 4), q, "a full turn");
    }
}

/// The components of `v` at scale `2^scale_bits` (`round(v * 2^s)`, clamped to [-1, 1] as the
/// language defines an embedding component).
fn fixed_point(v: f64, scale_bits: u32) -> i128 {
    let one = (1u64 << scale_bits) as f64;
    (v * one).round().clamp(-one, one) as i128
}

/// The records of an embedding NDJSON file: `(id, components)`.
pub fn embeddings(path: &std::path::Path) -> Vec<(u64, Vec<f64>)> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let e = v["embedding"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_f64().unwrap())
                .collect();
            (v["id"].as_u64().unwrap(), e)
        })
        .collect()
}

/// `cosine(x, y) >= num/den` (or `>` when `strict`; `-num/den` when `negative`) on the
/// fixed-point vectors, decided exactly in i128 without square roots: with `p = <x,y>`, the
/// cosine is at least a non-negative tau iff `p >= 0` and `den^2 p^2 >= num^2 |x|^2 |y|^2`;
/// at least a negative tau iff `p >= 0` or `den^2 p^2 <= num^2 |x|^2 |y|^2`.
pub fn cosine_at_least(
    x: &[i128],
    y: &[i128],
    num: i128,
    den: i128,
    negative: bool,
    strict: bool,
) -> bool {
    let p: i128 = x.iter().zip(y).map(|(a, b)| a * b).sum();
    let xx: i128 = x.iter().map(|a| a * a).sum();
    let yy: i128 = y.iter().map(|a| a * a).sum();
    let (lhs, rhs) = (den * den * p * p, num * num * xx * yy);
    match (negative, strict) {
        (false, false) => p >= 0 && lhs >= rhs,
        (false, true) => p > 0 && lhs > rhs,
        (true, false) => p >= 0 || lhs <= rhs,
        (true, true) => p >= 0 || lhs < rhs,
    }
}

/// Per query of `queries`, the ids of the `gallery` templates whose cosine with it is at least
/// `num/den` (fixed point at `scale_bits`).
pub fn cosine_matching_ids(
    gallery: &std::path::Path,
    queries: &std::path::Path,
    scale_bits: u32,
    num: i128,
    den: i128,
) -> Vec<Vec<u64>> {
    let fix = |v: &[f64]| {
        v.iter()
            .map(|&c| fixed_point(c, scale_bits))
            .collect::<Vec<_>>()
    };
    let g: Vec<(u64, Vec<i128>)> = embeddings(gallery)
        .into_iter()
        .map(|(id, e)| (id, fix(&e)))
        .collect();
    embeddings(queries)
        .iter()
        .map(|(_, q)| {
            let q = fix(q);
            g.iter()
                .filter(|(_, y)| cosine_at_least(&q, y, num, den, false, false))
                .map(|(id, _)| *id)
                .collect()
        })
        .collect()
}
