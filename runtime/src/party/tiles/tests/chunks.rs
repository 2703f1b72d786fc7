//! Chunks cover the gallery; a view is its chunk's records, Shamir shares in place, replicated
//! shares copied only when asked for, and never read when they were not.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

use super::{masked_kernel_for, rep3, L};
use crate::error::RuntimeError;
use crate::kernels::run::masked_dot_records;
use crate::ops::rep3::mask_lengths;
use crate::ops::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::ops::value::Value;
use crate::ops::vector::self_dot_codes;
use crate::party::tiles::{batch_dot, chunk_count, chunk_range, view, Coded, DotKernel, Pipeline};
use crate::share::fp::P;
use crate::store::Words;

#[test]
fn chunks_cover_the_gallery() {
    assert_eq!(chunk_count(0, 4), 1);
    assert_eq!(chunk_count(8, 4), 2);
    assert_eq!(chunk_count(10, 4), 3);
    assert_eq!(chunk_count(10, 0), 1);
    assert_eq!(chunk_count(3, 10), 1);
    assert_eq!(chunk_range(10, 4, 0).unwrap(), 0..4);
    assert_eq!(chunk_range(10, 4, 2).unwrap(), 8..10);
    assert_eq!(chunk_range(10, 0, 0).unwrap(), 0..10);
    assert_eq!(chunk_range(3, 10, 0).unwrap(), 0..3);
    assert_eq!(chunk_range(0, 4, 0).unwrap(), 0..0);
    for (n, c, k) in [(10, 4, 3), (10, 4, -1), (0, 4, 1), (10, 0, 1)] {
        let e = chunk_range(n, c, k).unwrap_err().to_string();
        assert!(
            e.contains("internal error in the generated schedule"),
            "{e}"
        );
    }
}

/// A chunk of a Shamir gallery reads the gallery's words in place: in the memory map for a
/// mapped gallery (and in the shared vector for an owned one); ids, masks and shares are
/// the chunk's records', with or without shares asked for. Replicated views with shares copy
/// their records; the one chunk of a gallery is the gallery itself, with or without.
#[test]
fn views_are_the_chunks_records_without_copying_shamir_shares() {
    let mut rng = ChaCha12Rng::seed_from_u64(9);
    let (count, len) = (10usize, 64usize);
    let data: Vec<u16> = (0..count * len).map(|_| rng.random_range(0..P)).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|w| w.to_le_bytes()).collect();
    let mut file = tempfile::tempfile().unwrap();
    std::io::Write::write_all(&mut file, &bytes).unwrap();
    // SAFETY: a private temporary file nothing else writes.
    let map = Arc::new(unsafe { memmap2::Mmap::map(&file) }.unwrap());
    let mapped = Words::mapped(map.clone(), 0, data.len()).unwrap();
    let masks: Vec<u64> = (0..count).map(|_| rng.random()).collect();
    let ids: Vec<u64> = (0..count as u64).map(|i| 500 + i).collect();
    let owned = Words::from(data.clone());
    let owned_at = owned.as_ptr() as usize;
    for words in [mapped, owned] {
        let is_mapped = words.is_mapped();
        let base = if is_mapped {
            map.as_ptr() as usize
        } else {
            owned_at
        };
        let g = Coded::Shamir(Arc::new(
            ShamirCodes::new(
                ShamirKind::Fp,
                Side::Gallery,
                count,
                len,
                ids.clone(),
                masks.clone(),
                words,
            )
            .unwrap(),
        ));
        for chunk in 0..3 {
            let r = chunk_range(count, 4, chunk).unwrap();
            let Value::Shamir(v) = view(&g, r.clone(), true) else {
                panic!()
            };
            assert_eq!(v.words.is_mapped(), is_mapped);
            let at = v.words.as_ptr() as usize;
            assert_eq!(
                at,
                base + 2 * r.start * len,
                "in place, at the chunk's first record"
            );
            if is_mapped {
                assert!(at + 2 * v.words.len() <= map.as_ptr() as usize + map.len());
            }
            assert_eq!(
                (v.count, v.len, v.kind, v.side),
                (r.len(), len, ShamirKind::Fp, Side::Gallery)
            );
            assert_eq!(v.ids, ids[r.clone()]);
            assert_eq!(v.masks, masks[r.clone()]);
            assert_eq!(&v.words[..], &data[r.start * len..r.end * len]);
            // A view of a view is still in place.
            let inner = v.words.slice(len..2 * len);
            assert_eq!(inner.as_ptr() as usize, at + 2 * len);
            assert_eq!(&inner[..], &data[(r.start + 1) * len..(r.start + 2) * len]);
            // Without shares asked for: the same view (Shamir shares are never copied).
            let Value::Shamir(w) = view(&g, r.clone(), false) else {
                panic!()
            };
            assert_eq!(w.words.as_ptr() as usize, at);
            assert_eq!((w.count, &w.ids, &w.masks), (v.count, &v.ids, &v.masks));
        }
        let Coded::Shamir(gs) = &g else {
            unreachable!()
        };
        for with_shares in [true, false] {
            let Value::Shamir(all) = view(&g, 0..count, with_shares) else {
                panic!()
            };
            assert!(Arc::ptr_eq(&all, gs));
        }
    }

    let g = rep3(10, 16, &mut rng);
    for chunk in 0..3 {
        let r = chunk_range(10, 4, chunk).unwrap();
        let Value::Codes(v) = view(&Coded::Rep3(g.clone()), r.clone(), true) else {
            panic!()
        };
        assert_eq!((v.count, v.bits), (r.len(), L));
        assert_eq!(v.ids, g.ids[r.clone()]);
        assert_eq!(v.masks, g.masks[r.start * L / 64..r.end * L / 64]);
        for i in 0..r.len() * L {
            assert_eq!(v.components(i), g.components(r.start * L + i));
        }
    }
    for with_shares in [true, false] {
        let Value::Codes(all) = view(&Coded::Rep3(g.clone()), 0..10, with_shares) else {
            panic!()
        };
        assert!(Arc::ptr_eq(&all, &g));
    }
}

/// A replicated view without shares: the chunk's count, ids and masks, empty shares of the
/// gallery's storage width; the mask lengths over it are those over the view with shares, and
/// those over the whole gallery restricted to the chunk.
#[test]
fn replicated_views_without_shares_keep_ids_and_masks() {
    let mut rng = ChaCha12Rng::seed_from_u64(10);
    for k in [16u32, 32, 64] {
        let g = rep3(10, k, &mut rng);
        let q = rep3(3, k, &mut rng);
        let whole = mask_lengths(&q, &g);
        for chunk in 0..3 {
            let r = chunk_range(10, 4, chunk).unwrap();
            let view_of = |with_shares| match view(&Coded::Rep3(g.clone()), r.clone(), with_shares)
            {
                Value::Codes(c) => c,
                other => panic!("{}", other.kind()),
            };
            let (bare, full) = (view_of(false), view_of(true));
            assert_eq!((bare.count, bare.bits), (r.len(), L));
            assert_eq!(bare.ids, g.ids[r.clone()]);
            assert_eq!(bare.masks, g.masks[r.start * L / 64..r.end * L / 64]);
            assert!(bare.a.is_empty() && bare.b.is_empty());
            assert_eq!(
                (bare.a.word_bytes(), bare.b.word_bytes()),
                (g.a.word_bytes(), g.b.word_bytes())
            );
            assert!(!bare.has_shares() && full.has_shares());
            let ml = mask_lengths(&q, &bare);
            assert_eq!(ml, mask_lengths(&q, &full));
            assert_eq!(ml, whole[r.start * q.count..r.end * q.count]);
        }
    }
}

/// The shares of a view taken without them cannot be read: the dot product (single-query, and
/// batched, as query side or gallery side), the self dot product and the rotations are schedule
/// errors that say so, and the same ops over the view with shares succeed.
#[test]
fn reading_the_shares_of_a_view_without_them_is_a_schedule_error() {
    let mut rng = ChaCha12Rng::seed_from_u64(14);
    let g = rep3(10, 32, &mut rng);
    let q = rep3(2, 32, &mut rng);
    let kernel = masked_kernel_for(4);
    let DotKernel::Masked(ek) = kernel else {
        unreachable!()
    };
    let r = chunk_range(10, 4, 1).unwrap();
    let view_of = |with_shares| match view(&Coded::Rep3(g.clone()), r.clone(), with_shares) {
        Value::Codes(c) => c,
        other => panic!("{}", other.kind()),
    };
    let (bare, full) = (view_of(false), view_of(true));
    let schedule_error = |e: RuntimeError| {
        let e = e.to_string();
        assert!(
            e.contains("internal error in the generated schedule") && e.contains("without shares"),
            "{e}"
        );
    };
    // SAFETY (each call): the reference kernel matches the shares' width and length.
    for (qc, gc) in [(&q, &bare), (&bare, &g), (&bare, &bare)] {
        schedule_error(unsafe { masked_dot_records(qc, gc, 0..gc.count, ek, 2) }.unwrap_err());
        let mut p = Pipeline::default();
        let (qs, gs) = (vec![Coded::Rep3(qc.clone())], Coded::Rep3(gc.clone()));
        let Err(e) = (unsafe { batch_dot(&mut p, 0, 0, qs, gs, 0, 0, kernel.clone(), 1) }) else {
            panic!("batch_dot read the shares of a view without them")
        };
        schedule_error(e);
    }
    schedule_error(self_dot_codes(&bare).unwrap_err());
    schedule_error(bare.check_shares("rotate", "codes").unwrap_err());
    // With shares, as before.
    let dot = unsafe { masked_dot_records(&q, &full, 0..full.count, ek, 2) }.unwrap();
    let all = unsafe { masked_dot_records(&q, &g, r.clone(), ek, 2) }.unwrap();
    assert_eq!(dot, all);
    assert_eq!(self_dot_codes(&full).unwrap().len(), r.len());
    full.check_shares("rotate", "codes").unwrap();
}
