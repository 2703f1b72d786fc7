//! Runs the paper's Table 2 rows ([`irisc_runtime::bench::table2`]) and prints them as a table
//! and as JSON. `cargo run --release -p irisc-runtime --example table2 [batch] [repeats]`.

use irisc_runtime::bench::table2::{run, Table2Options};

fn main() {
    let mut args = std::env::args().skip(1);
    let mut opts = Table2Options::default();
    if let Some(b) = args.next() {
        opts.batch = b.parse().expect("batch: a number");
    }
    if let Some(r) = args.next() {
        opts.repeats = r.parse().expect("repeats: a number");
    }
    let rows = run(&opts).expect("benchmark run");
    println!(
        "{:<11} {:<42} {:>10} {:>9} {:>10} {:>8} {:>7} {:>7}",
        "protocol", "source", "ms", "Mel/s", "kB/party", "B/el", "rounds", "correct"
    );
    for r in &rows {
        println!(
            "{:<11} {:<42} {:>10.3} {:>9.1} {:>10.1} {:>8.3} {:>7} {:>7}",
            r.protocol,
            r.source,
            r.runtime_ms,
            r.mel_per_s,
            r.kb_sent_per_party,
            r.bytes_per_element,
            r.rounds.map(|x| x.to_string()).unwrap_or_default(),
            r.correct.map(|x| x.to_string()).unwrap_or_default(),
        );
    }
    println!(
        "{}",
        serde_json::to_string_pretty(&rows).expect("rows serialize")
    );
}
