//! Section `net`: the end-to-end run of `iris_ids.irs` (one query, 31 rotations) under the two
//! networks of paper 001: servers in one city (1.5 ms, 6.6 Gbit/s; its Tables 1-4) and in three
//! cities (32 ms, 477 Mbit/s; its Table 5), next to plain loopback.
//!
//! A batch of [`BATCH_QUERIES`] queries runs on the WAN twice: with the comparisons of the whole
//! batch as one vector (the default schedule: one query's rounds), and with `--per-query-chunks`
//! (each query its own rounds, the schedule before), each also with one message per round
//! (`--chunk-size 0`, the parties' default before it became chunks of 2^20 elements). A third
//! query-by-query run rebuilds the comparison as it was when the batch target was set: the reshare
//! and BitExtract of paper 003 (`--msb-input replicated`, every message one way round the ring)
//! instead of AdditiveMSB, one message per round. The report gives the comparison phase per query
//! of each, and the batch's ratio to both query-by-query baselines, against the target of at most
//! a quarter.
//!
//! `tc netem` in a network namespace would be the usual tool; the section probes for it and
//! records what it found, and shapes the links with irisc's user-space relay
//! ([`super::netsim`]) either way, so the figures are comparable across machines.

use anyhow::{bail, Result};
use serde_json::json;
use std::path::{Path, PathBuf};

use super::e2e::{by_median, measure_in, repeated, write_report, Case, RunFigures, Setting, CASES};
use super::netsim::{netem_available, LAN, WAN};
use super::BenchOptions;

pub fn run(opts: &BenchOptions, dir: &Path) -> Result<Vec<PathBuf>> {
    let records = opts.gallery_records();
    if records == 0 {
        bail!("net: --records must be at least 1");
    }
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // Each network with the gallery in one chunk (the default) and in chunks whose next dot
    // products overlap this chunk's comparison rounds (each chunk repeating the rounds).
    let mut settings = Vec::new();
    for net in [None, Some(LAN), Some(WAN)] {
        settings.push(Setting::one_query(threads, net));
        settings.push(Setting {
            record_chunk: Some(super::e2e::PIPELINE_CHUNK),
            ..Setting::one_query(threads, net)
        });
    }
    let netem = netem_available();
    let case = &CASES[0];
    let mut runs = by_median(
        measure_in(
            dir,
            case,
            records,
            &repeated(&settings, opts.repeat.max(1)),
            opts.quick,
        )?,
        settings.len(),
        |r| r.compare_s,
    );
    let batch = batch_on_wan(opts, dir, case, records, threads, &mut runs)?;
    let netem_note = match &netem {
        Ok(()) => "tc netem is available here; the links were shaped by irisc's relay all the same \
                   (one method on every machine)"
            .to_string(),
        Err(why) => format!(
            "tc netem is not available on this machine ({why}); the links were shaped by irisc's \
             user-space relay instead: each direction delayed by half the round trip and paced at the \
             link rate, unbounded queue, no loss"
        ),
    };
    let config = json!({
        "records": records,
        "queries": 1,
        "program": format!("examples/{}.irs", case.name),
        "comparisons": records * case.eyes * case.rotations,
        "threads_per_party": threads,
        "networks": [
            {"name": "loopback"},
            {"name": LAN.name, "rtt_ms": LAN.rtt.as_secs_f64() * 1e3, "gbit_per_s": LAN.bits_per_s / 1e9},
            {"name": WAN.name, "rtt_ms": WAN.rtt.as_secs_f64() * 1e3, "gbit_per_s": WAN.bits_per_s / 1e9},
        ],
        "netem_available": netem.is_ok(),
        "shaping": "user-space relay (delay + rate) between every pair of parties",
        "batch_on_wan": batch,
    });
    write_report(
        dir,
        "net",
        &format!("{} under simulated networks, {records} records", case.name),
        opts.quick,
        config,
        &runs,
        vec![netem_note],
    )
}

/// Queries of the WAN batch runs.
const BATCH_QUERIES: usize = 8;
/// The target: a batched query's comparison phase at most this fraction of the same
/// query's comparison phase when every query runs its own rounds.
const TARGET_BATCHED_COMPARE_RATIO: f64 = 0.25;
/// `--msb-input` of the comparison the target was set against: the parties reshared each dot
/// product and ran BitExtract (paper 003, Algorithm 10) before AdditiveMSB became the default.
const AS_FILED_MSB_INPUT: &str = "replicated";

/// Runs a batch of [`BATCH_QUERIES`] on the WAN as one vector and query by query (a second build
/// with `--per-query-chunks`), appends both runs to `runs`, and returns the comparison phase per
/// query of each, their ratio and the rounds.
fn batch_on_wan(
    opts: &BenchOptions,
    dir: &Path,
    case: &Case,
    records: usize,
    threads: usize,
    runs: &mut Vec<RunFigures>,
) -> Result<serde_json::Value> {
    let setting = Setting {
        queries: BATCH_QUERIES,
        ..Setting::one_query(threads, Some(WAN))
    };
    let per_query_case = Case {
        name: "iris_ids_per_query_chunks",
        per_query_chunks: true,
        query_batch: None,
        ..CASES[0]
    };
    // Each schedule also with one message per round (`--chunk-size 0`), as parties sent before
    // their default became chunks of 2^20 elements whose rounds pipeline on the link.
    let one_message = Setting {
        message_chunk: Some(0),
        ..setting.clone()
    };
    // The query-by-query schedule with the comparison as the target was set against: the
    // reshare and BitExtract (every message to the next party), one message per round.
    let as_filed = Setting {
        msb_input: Some(AS_FILED_MSB_INPUT),
        ..one_message.clone()
    };
    let both = [setting, one_message];
    // With `--repeat N` each setting runs N times round robin; each figure below is then the
    // median run's by its comparison phase, with every run's beside it.
    let repeat = opts.repeat.max(1);
    let batched = by_median(
        measure_in(dir, case, records, &repeated(&both, repeat), opts.quick)?,
        both.len(),
        |r| r.compare_s,
    );
    let baselines = [both[0].clone(), both[1].clone(), as_filed];
    let per_query = by_median(
        measure_in(
            dir,
            &per_query_case,
            records,
            &repeated(&baselines, repeat),
            opts.quick,
        )?,
        baselines.len(),
        |r| r.compare_s,
    );
    let (Some(b), Some(p), Some(bc), Some(pc), Some(f)) = (
        batched.first(),
        per_query.first(),
        batched.get(1),
        per_query.get(1),
        per_query.get(2),
    ) else {
        bail!("net: a batch run on the WAN gave no figures");
    };
    let per_query_s = |r: &RunFigures| r.compare_s / r.setting.queries as f64;
    let ratio = per_query_s(b) / per_query_s(p).max(1e-12);
    let one_message_ratio = per_query_s(bc) / per_query_s(pc).max(1e-12);
    let as_filed_ratio = per_query_s(b) / per_query_s(f).max(1e-12);
    // Every run's comparison phase per query, in run order (the median run's alone without
    // repeats), and the batch's ratio to the as-filed baseline run by run (the i-th batched run
    // against the i-th baseline run).
    let each = |r: &RunFigures| -> Vec<f64> {
        if r.repeats.is_empty() {
            vec![per_query_s(r)]
        } else {
            r.repeats
                .iter()
                .map(|x| x.compare_s / r.setting.queries as f64)
                .collect()
        }
    };
    let as_filed_ratios: Vec<f64> = each(b)
        .iter()
        .zip(each(f))
        .map(|(b, f)| b / f.max(1e-12))
        .collect();
    let value = json!({
        "network": WAN.name,
        "queries": BATCH_QUERIES,
        "runs_per_setting": repeat,
        "batched": {
            "compare_s_per_query": per_query_s(b),
            "compare_s_per_query_each_run": each(b),
            "rounds": b.rounds,
            "bytes_per_comparison": b.bytes_per_cmp,
        },
        "per_query_chunks": {
            "compare_s_per_query": per_query_s(p),
            "rounds": p.rounds,
            "bytes_per_comparison": p.bytes_per_cmp,
        },
        "ratio": ratio,
        "target_ratio_at_most": TARGET_BATCHED_COMPARE_RATIO,
        "met": ratio <= TARGET_BATCHED_COMPARE_RATIO,
        "elements_per_message": irisc_runtime::protocol::DEFAULT_CHUNK_ELEMS,
        "batched_messages": b.messages,
        "one_message_per_round": {
            "batched_compare_s_per_query": per_query_s(bc),
            "per_query_chunks_compare_s_per_query": per_query_s(pc),
            "ratio": one_message_ratio,
            "batched_messages": bc.messages,
        },
        "as_filed": {
            "what": "query by query, --msb-input replicated (reshare + BitExtract), one message per round",
            "compare_s_per_query": per_query_s(f),
            "compare_s_per_query_each_run": each(f),
            "rounds": f.rounds,
            "bytes_per_comparison": f.bytes_per_cmp,
            "batched_ratio": as_filed_ratio,
            "batched_ratio_each_run": as_filed_ratios,
            "met": as_filed_ratio <= TARGET_BATCHED_COMPARE_RATIO,
        },
    });
    eprintln!(
        "net: batch of {BATCH_QUERIES} on the WAN: comparison phase {:.3} s per query batched \
         ({} rounds) against {:.3} s query by query ({} rounds): ratio {ratio:.2} (target <= \
         {TARGET_BATCHED_COMPARE_RATIO})",
        per_query_s(b),
        b.rounds,
        per_query_s(p),
        p.rounds
    );
    eprintln!(
        "net: the same with one message per round: {:.3} s per query batched, {:.3} s query by \
         query: ratio {one_message_ratio:.2}",
        per_query_s(bc),
        per_query_s(pc)
    );
    eprintln!(
        "net: query by query as the target was set (reshare + BitExtract, one message per round): \
         {:.3} s per query ({} rounds): the batch's ratio to it {as_filed_ratio:.2}{}",
        per_query_s(f),
        f.rounds,
        if repeat > 1 {
            format!(
                " (median of {repeat} runs each; run by run {})",
                as_filed_ratios
                    .iter()
                    .map(|r| format!("{r:.2}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        } else {
            String::new()
        }
    );
    runs.extend(batched);
    runs.extend(per_query);
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A quick run goes through the relays for both profiles, checks the answers (an error
    /// otherwise), and the WAN run takes at least one one-way delay (16 ms) per round: a round
    /// cannot end before its message has crossed a link.
    #[test]
    fn quick_run_shapes_the_links() {
        let dir = tempfile::tempdir().unwrap();
        let opts = BenchOptions {
            out: dir.path().to_path_buf(),
            sections: vec!["net".into()],
            quick: true,
            progress: false,
            records: Some(30),
            gpu_dot_records: None,
            store_dirs: Vec::new(),
            gpu_record_chunk: None,
            serve_kills: None,
            serve_threshold_placement: None,
            repeat: 1,
        };
        let files = run(&opts, dir.path()).unwrap();
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
        let m = json["measurements"].as_array().unwrap();
        let time = |net: Option<&str>| {
            m.iter()
                .find(|x| {
                    x["name"].as_str().unwrap().ends_with(" matching time")
                        && x.get("network").and_then(|n| n.as_str()) == net
                })
                .unwrap_or_else(|| panic!("no matching time for {net:?}"))["value"]
                .as_f64()
                .unwrap()
        };
        let rounds = m
            .iter()
            .find(|x| x["name"].as_str().unwrap().ends_with(" rounds"))
            .unwrap()["value"]
            .as_f64()
            .unwrap();
        let (lo, wan) = (time(None), time(Some(WAN.name)));
        assert!(
            wan >= rounds * 0.015,
            "wan {wan} s (loopback {lo} s) over {rounds} rounds: latency not applied"
        );
        assert!(json["config"]["netem_available"].is_boolean());
        // The batch as one vector spends one query's rounds; query by query, one set each.
        let batch = &json["config"]["batch_on_wan"];
        let rounds_of = |k: &str| batch[k]["rounds"].as_u64().unwrap();
        assert_eq!(
            rounds_of("per_query_chunks"),
            rounds_of("batched") * BATCH_QUERIES as u64,
            "{batch}"
        );
        assert!(batch["ratio"].as_f64().unwrap() > 0.0, "{batch}");
        // The as-filed baseline runs the other comparison, query by query: a multiple of the
        // queries in rounds, and more bytes per comparison (a reshare and 29 AND gates against
        // AdditiveMSB's input word and 15).
        assert_eq!(
            batch["as_filed"]["rounds"].as_u64().unwrap() % BATCH_QUERIES as u64,
            0,
            "{batch}"
        );
        let bytes_of = |b: &serde_json::Value| b["bytes_per_comparison"].as_f64().unwrap();
        assert!(
            bytes_of(&batch["as_filed"]) > bytes_of(&batch["per_query_chunks"]),
            "{batch}"
        );
        assert!(batch["as_filed"]["batched_ratio"].as_f64().unwrap() > 0.0);
        assert!(files[1].exists());
    }
}
