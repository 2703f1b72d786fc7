//! Splitting one kernel call's records across threads: the one rule the polyphase and AMX runs
//! share (the plain kernels' nests split inside [`super::run`]).

/// Calls `part(first, rows)` for shards of `n_records` records on up to `threads` threads,
/// `rows` being the shard's rows of `out` (`n_codes` words per record). Every shard but the
/// last holds a whole multiple of `align` records (the AMX kernels take whole blocks; the rest
/// of the last shard goes to the vector kernel). One shard runs on the calling thread, without
/// spawning.
pub(crate) fn in_record_shards(
    n_records: usize,
    n_codes: usize,
    threads: usize,
    align: usize,
    out: &mut [u16],
    part: impl Fn(usize, &mut [u16]) + Sync,
) {
    let per = n_records
        .div_ceil(threads.clamp(1, n_records.max(1)))
        .next_multiple_of(align.max(1));
    if per >= n_records {
        part(0, out);
        return;
    }
    std::thread::scope(|s| {
        for (i, rows) in out.chunks_mut(per * n_codes).enumerate() {
            let part = &part;
            s.spawn(move || part(i * per, rows));
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Every record lands in exactly one shard, shards start on `align`, and each shard's rows
    /// are its records' rows of `out`.
    #[test]
    fn shards_cover_every_record_once_on_aligned_starts() {
        for n_records in [0usize, 1, 31, 32, 33, 100, 257, 1000] {
            for threads in 1..=5 {
                for align in [1usize, 32] {
                    let n_codes = 3;
                    let mut out = vec![0u16; n_records * n_codes];
                    let seen = Mutex::new(Vec::new());
                    in_record_shards(
                        n_records,
                        n_codes,
                        threads,
                        align,
                        &mut out,
                        |first, rows| {
                            assert_eq!(first % align, 0);
                            assert_eq!(rows.len() % n_codes, 0);
                            for (r, row) in rows.chunks_mut(n_codes).enumerate() {
                                row.fill((first + r) as u16);
                            }
                            seen.lock().unwrap().push((first, rows.len() / n_codes));
                        },
                    );
                    let mut seen = seen.into_inner().unwrap();
                    seen.sort();
                    let covered: usize = seen.iter().map(|s| s.1).sum();
                    assert_eq!(covered, n_records, "{n_records} records, {threads} threads");
                    assert!(seen.len() <= threads.max(1));
                    for (r, row) in out.chunks(n_codes).enumerate() {
                        assert!(row.iter().all(|&x| x == r as u16));
                    }
                }
            }
        }
    }
}
