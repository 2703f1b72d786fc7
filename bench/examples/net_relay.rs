//! Runs the `net` section's simulated network alone, for parties started by hand: relays between
//! the three parties of a parties file (`irisc keys`), each direction delayed by half the
//! profile's round trip and paced at its rate, until standard input closes.
//!
//! ```text
//! cargo run --release -p irisc-bench --example net_relay -- keys/parties.toml wan
//! ```
//!
//! It writes `parties-p0.toml` .. `parties-p2.toml` beside the parties file: party p runs with
//! `--config .../parties-pP.toml` and reaches its peers through the relays.

use anyhow::{bail, Result};
use irisc_bench::netsim::{Relays, LAN, WAN};
use std::io::Read;
use std::path::PathBuf;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(config), Some(profile)) = (args.first(), args.get(1)) else {
        bail!("usage: net_relay PARTIES.toml lan|wan");
    };
    let profile = match profile.as_str() {
        "lan" => LAN,
        "wan" => WAN,
        other => bail!("unknown network {other:?}: lan or wan"),
    };
    let relays = Relays::start(&PathBuf::from(config), profile)?;
    for (p, c) in relays.configs.iter().enumerate() {
        println!("party {p}: --config {}", c.display());
    }
    println!("relaying {}; close standard input to stop", profile.name);
    let mut sink = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut sink);
    let (messages, mean_us, max_us) = irisc_bench::netsim::LATENESS.read();
    println!(
        "{messages} pieces relayed, late by {mean_us:.1} us on average, {max_us:.1} us at most"
    );
    Ok(())
}
