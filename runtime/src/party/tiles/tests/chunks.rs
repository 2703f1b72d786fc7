//! Chunks cover the gallery; a view is its chunk's records, Shamir shares in place.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

use super::{rep3, L};
use crate::party::shamir_codes::{ShamirCodes, ShamirKind, Side};
use crate::party::tiles::{chunk_count, chunk_range, view, Coded};
use crate::party::values::Value;
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
/// the chunk's records'. Replicated views copy their records; the one chunk of a gallery is
/// the gallery itself.
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
            let Value::Shamir(v) = view(&g, r.clone()) else {
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
        }
        let Value::Shamir(all) = view(&g, 0..count) else {
            panic!()
        };
        let Coded::Shamir(gs) = &g else {
            unreachable!()
        };
        assert!(Arc::ptr_eq(&all, gs));
    }

    let g = rep3(10, 16, &mut rng);
    for chunk in 0..3 {
        let r = chunk_range(10, 4, chunk).unwrap();
        let Value::Codes(v) = view(&Coded::Rep3(g.clone()), r.clone()) else {
            panic!()
        };
        assert_eq!((v.count, v.bits), (r.len(), L));
        assert_eq!(v.ids, g.ids[r.clone()]);
        assert_eq!(v.masks, g.masks[r.start * L / 64..r.end * L / 64]);
        for i in 0..r.len() * L {
            assert_eq!(v.components(i), g.components(r.start * L + i));
        }
    }
    let Value::Codes(all) = view(&Coded::Rep3(g.clone()), 0..10) else {
        panic!()
    };
    assert!(Arc::ptr_eq(&all, &g));
}
