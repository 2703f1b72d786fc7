//! Runs the paper's Table 2 rows ([`irisc_runtime::bench::table2`]) and prints them as a table
//! and as JSON.
//! `cargo run --release -p irisc-runtime --example table2 [batch] [repeats] [chunk] [sweep]`:
//! `chunk` is the elements per message (0: one message per round); `sweep` also runs the
//! default chunk sweep.

use irisc_runtime::bench::table2::{chunk_sweep, run, Row, Table2Options, Variant, SWEEP_CHUNKS};

fn print(rows: &[Row]) {
    println!(
        "{:<11} {:<48} {:>8} {:>8} {:>8} {:>9} {:>8} {:>7} {:>6} {:>7}",
        "protocol",
        "source",
        "ms",
        "Mel/s",
        "cpu ms",
        "Mel/cpus",
        "B/el",
        "rounds",
        "msgs",
        "correct"
    );
    for r in rows {
        println!(
            "{:<11} {:<48} {:>8.3} {:>8.1} {:>8.3} {:>9.1} {:>8.3} {:>7} {:>6} {:>7}",
            r.protocol,
            r.source,
            r.runtime_ms,
            r.mel_per_s,
            r.cpu_ms.unwrap_or(f64::NAN),
            r.mel_per_cpu_s.unwrap_or(f64::NAN),
            r.bytes_per_element,
            r.rounds.map(|x| x.to_string()).unwrap_or_default(),
            r.messages.map(|x| x.to_string()).unwrap_or_default(),
            r.correct.map(|x| x.to_string()).unwrap_or_default(),
        );
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let mut opts = Table2Options::default();
    if let Some(b) = args.next() {
        opts.batch = b.parse().expect("batch: a number");
    }
    if let Some(r) = args.next() {
        opts.repeats = r.parse().expect("repeats: a number");
    }
    if let Some(c) = args.next() {
        opts.chunk = c.parse().expect("chunk: a number");
    }
    let sweep = args.next().is_some();
    let rows = run(&opts).expect("benchmark run");
    print(&rows);
    let mut all = rows;
    if sweep {
        let variants: Vec<Variant> = Variant::ALL
            .into_iter()
            .filter(|&v| v != Variant::OrTree)
            .collect();
        let s = chunk_sweep(&opts, &SWEEP_CHUNKS, &variants).expect("sweep run");
        print(&s);
        all.extend(s);
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&all).expect("rows serialize")
    );
}
