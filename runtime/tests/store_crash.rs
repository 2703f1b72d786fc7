//! Kills a process appending to a gallery store at random moments and checks that the store
//! always opens and holds an intact prefix of what was appended.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use irisc_runtime::store::{create, Record, Shares, Store, StoreParams, StoreSharing, StoreWriter};
use rand::Rng;

/// Set in the child: the store it appends to until it is killed.
const WRITER_ENV: &str = "IRISC_STORE_CRASH_WRITER";
/// Large enough that a batch spans many pages, so kills land inside record writes too.
const CODE_BITS: u32 = 12800;

fn params() -> StoreParams {
    StoreParams {
        fingerprint: "c0ffee".into(),
        party: 0,
        sharing: StoreSharing::Rep3,
        ring_bits: 16,
        code_bits: CODE_BITS,
        secret_mask: false,
        set_id: [3; 16],
    }
}

/// The content of record `id`, derived from it alone so the checker can recompute it.
fn content(id: u64) -> (Vec<u8>, Vec<u16>, Vec<u16>) {
    let word = |j: u64, salt: u64| {
        let mut x = id.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (j << 8) ^ salt;
        x ^= x >> 29;
        x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x ^ (x >> 32)
    };
    let n = u64::from(CODE_BITS);
    (
        (0..n / 8).map(|j| word(j, 1) as u8).collect(),
        (0..n).map(|j| word(j, 2) as u16).collect(),
        (0..n).map(|j| word(j, 3) as u16).collect(),
    )
}

/// The child's role: append batches of consecutive ids forever.
#[test]
fn writer_child() {
    let Some(path) = std::env::var_os(WRITER_ENV) else {
        return;
    };
    let path = Path::new(&path);
    let mut w = StoreWriter::open(path).expect("open the store for appending");
    let mut rng = rand::rng();
    loop {
        let start = w.header().count;
        let batch: Vec<_> = (start..start + rng.random_range(1..12))
            .map(content)
            .collect();
        let records: Vec<Record<'_>> = batch
            .iter()
            .zip(start..)
            .map(|((mask, own, prev), id)| Record {
                id,
                mask,
                shares: Shares::Rep3U16 { own, prev },
            })
            .collect();
        w.append(&records).expect("append");
    }
}

fn check_prefix(path: &Path) -> u64 {
    let store = Store::open(path).expect("the store opens after a crash");
    for (i, r) in store.records().enumerate() {
        let (mask, own, prev) = content(i as u64);
        assert_eq!(r.id, i as u64);
        assert_eq!(r.mask, &mask[..], "mask of record {i}");
        assert_eq!(
            r.shares,
            Shares::Rep3U16 {
                own: &own,
                prev: &prev
            },
            "shares of record {i}"
        );
    }
    store.len() as u64
}

#[test]
fn killed_writer_leaves_the_old_or_the_new_store() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gallery.p0.store");
    create(&path, &params()).unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = rand::rng();
    let mut last = 0;
    for _ in 0..12 {
        let mut child = Command::new(&exe)
            .args(["--exact", "writer_child", "--test-threads=1", "--quiet"])
            .env(WRITER_ENV, &path)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Let the child get going, then kill it at a random moment (SIGKILL on Unix).
        let deadline = Instant::now() + Duration::from_millis(rng.random_range(30..250));
        while Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        child.kill().unwrap();
        let status = child.wait().unwrap();
        assert!(
            !status.success(),
            "the writer must have been killed, not finished"
        );
        let count = check_prefix(&path);
        // Commits survive a killed process: the count never goes back.
        assert!(count >= last, "{count} records after a kill, {last} before");
        last = count;
    }
    assert!(last > 0, "the writer never committed anything");
    // A fresh writer carries on from whatever the last kill left.
    let mut w = StoreWriter::open(&path).unwrap();
    let (mask, own, prev) = content(last);
    let n = w
        .append(&[Record {
            id: last,
            mask: &mask,
            shares: Shares::Rep3U16 {
                own: &own,
                prev: &prev,
            },
        }])
        .unwrap();
    drop(w);
    assert_eq!(n, last + 1);
    assert_eq!(check_prefix(&path), last + 1);
}
