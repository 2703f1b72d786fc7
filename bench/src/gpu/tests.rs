use super::*;

fn opts(dir: &Path) -> BenchOptions {
    BenchOptions {
        out: dir.to_path_buf(),
        sections: vec!["gpu".into()],
        quick: true,
        progress: false,
        records: None,
        gpu_dot_records: None,
        store_dirs: Vec::new(),
        gpu_record_chunk: None,
        serve_kills: None,
        serve_threshold_placement: None,
        repeat: 1,
    }
}

/// Without the `cuda` feature the section writes `gpu.json` saying it skipped and why, with
/// no figures and no chart.
#[cfg(not(feature = "cuda"))]
#[test]
fn without_the_feature_the_section_says_it_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let files = run(&opts(dir.path()), dir.path()).unwrap();
    assert_eq!(files, vec![dir.path().join("gpu.json")]);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    assert_eq!(json["section"], "gpu");
    assert_eq!(json["config"]["status"], "skipped");
    assert_eq!(
        json["config"]["reason"],
        "irisc-bench was built without its `cuda` feature"
    );
    assert!(json["config"]["build"]
        .as_str()
        .unwrap()
        .contains("--features cuda"));
    assert_eq!(json["measurements"].as_array().unwrap().len(), 0);
    assert_eq!(
        json["notes"][0],
        "skipped: irisc-bench was built without its `cuda` feature"
    );
    assert!(!dir.path().join("gpu-dot.png").exists());
    // The summary says so too.
    let text = crate::summary::summary(&files);
    assert!(
        text.contains("gpu: skipped: irisc-bench was built without"),
        "{text}"
    );
}

/// With the feature, on a machine without a CUDA device, the section also skips (with the
/// driver's reason); on a machine with one it runs, and every dot row it reports was checked.
#[cfg(feature = "cuda")]
#[test]
fn with_the_feature_the_section_runs_or_says_why_not() {
    let dir = tempfile::tempdir().unwrap();
    let files = run(&opts(dir.path()), dir.path()).unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&files[0]).unwrap()).unwrap();
    match json["config"]["status"].as_str().unwrap() {
        "skipped" => {
            let reason = json["config"]["reason"].as_str().unwrap();
            assert!(reason.starts_with("no CUDA device ("), "{reason}");
            assert_eq!(json["measurements"].as_array().unwrap().len(), 0);
        }
        "ran" => {
            for m in json["measurements"].as_array().unwrap() {
                if m["status"] == "ok" {
                    assert_eq!(m["verified"], true, "{m}");
                }
            }
        }
        other => panic!("status {other}"),
    }
}

#[test]
fn the_papers_figures_and_the_targets() {
    assert_eq!(PAPER_GR16_DOT_PER_S, 6.292e9);
    assert_eq!(PAPER_Z16_DOT_PER_S, 3.146e9);
    // Table 1: replicated Z16 does two dot products per pair, half GR16's rate.
    assert_eq!(PAPER_GR16_DOT_PER_S, 2.0 * PAPER_Z16_DOT_PER_S);
    assert_eq!(PAPER_TABLE3_CMP_PER_S, 179e6);
    assert_eq!(TARGET_GR16_DOT_PER_S, 10e9);
    assert_eq!(TARGET_E2E_CMP_PER_S, 60e6);
    assert_eq!(BATCH_CODES, [31, 248, 1984]);
    assert_eq!(TABLE3_PEOPLE * EYES * ROTATIONS, 1984);
    assert_eq!(GpuRing::Gr16.paper_per_s(), Some(6.292e9));
    assert_eq!(GpuRing::Z16.paper_per_s(), Some(3.146e9));
    assert_eq!(GpuRing::Z32.paper_per_s(), None);
    assert_eq!(GpuRing::Gr16.target_per_s(), Some(10e9));
    let refs = references();
    let get = |name: &str| refs.iter().find(|r| r.name == name).unwrap().value;
    assert_eq!(get("GR16 dot products per second, H100"), 6292.0);
    assert_eq!(get("Z16 replicated dot products per second, H100"), 3146.0);
    assert_eq!(get("comparisons per second per GPU, end to end"), 179.0);
    assert_eq!(
        get("target: GR16 dot products per second, one H100"),
        10_000.0
    );
    assert_eq!(
        get("target: comparisons per second, three parties on one GPU"),
        60.0
    );
}

#[test]
fn the_rings_kernels_and_sizes() {
    assert_eq!(
        GpuRing::Gr16.gpu_dot().kernel_names(),
        [
            "irisc_gpu_split16".to_string(),
            "irisc_gpu_dot16_k12800".into()
        ]
    );
    assert_eq!(
        GpuRing::Z16.gpu_dot().kernel_names()[1],
        "irisc_gpu_dot16_k25600"
    );
    assert_eq!(
        GpuRing::Z32.gpu_dot().kernel_names()[1],
        "irisc_gpu_dot32_k25600"
    );
    assert_eq!(
        [GpuRing::Gr16, GpuRing::Z16, GpuRing::Z32].map(GpuRing::limb_products),
        [3, 3, 10]
    );
    // 2 limbs x 12 800 columns; 2 limbs x 25 600; 4 limbs x 25 600.
    assert_eq!(GpuRing::Gr16.plane_bytes_per_record(), 25_600);
    assert_eq!(GpuRing::Z16.plane_bytes_per_record(), 51_200);
    assert_eq!(GpuRing::Z32.plane_bytes_per_record(), 102_400);
    // Both eyes of Z16 planes on the GPU; two u16 shares of both eyes on the host.
    assert_eq!(e2e_gpu_bytes_per_record(), 102_400);
    assert_eq!(e2e_share_bytes_per_record(), 102_400);
}

#[test]
fn comparisons_and_rates_by_hand() {
    // Table 3's batch against 250 000 records: 250 000 x 2 x 31 x 32 = 496 000 000.
    assert_eq!(comparisons(250_000, 2, 31, 32), 496_000_000);
    // ... in 4 s: 124 M/s.
    assert_eq!(per_second(496e6, 4.0), 124e6);
    assert!(per_second(1.0, 0.0).is_nan());
    // 32 queries, each against the earlier ones: 32 x 31 / 2 = 496 pairs, x 2 eyes x 31.
    assert_eq!(intra_batch_comparisons(2, 31, 32), 30_752);
    assert_eq!(intra_batch_comparisons(2, 31, 1), 0);
    assert_eq!(intra_batch_comparisons(2, 31, 0), 0);
}

#[test]
fn effective_tops_and_fraction_of_peak_by_hand() {
    // GR16, 200 000 records x 1 984 codes x 12 800 columns x 3 limb products x 2:
    // 3 x 2 x 2e5 x 1984 x 12800 = 3.047424e13 operations.
    let ops = effective_int8_ops(3, 200_000, 1984, 12_800);
    assert_eq!(ops, 3.047424e13);
    // In 0.05 s: 609.4848 TOPS.
    assert!((tops(ops, 0.05) - 609.4848).abs() < 1e-9);
    // A 16384^3 GEMM is 2 x 16384^3 = 8.796093022208e12 operations; in 0.011 s, 799.6 TOPS.
    assert_eq!(gemm_ops(16_384, 16_384, 16_384), 8_796_093_022_208.0);
    let g = GemmRow {
        n: 16_384,
        seconds: 0.011,
        reps: 5,
    };
    assert!((g.tops() - 799.644820200727).abs() < 1e-6, "{}", g.tops());
    assert!((fraction(609.4848, 800.0).unwrap() - 0.761856).abs() < 1e-12);
    assert_eq!(fraction(1.0, 0.0), None);
    assert_eq!(fraction(1.0, f64::NAN), None);
    assert_eq!(gemm_peak(&[]), None);
    let small = GemmRow {
        n: 8192,
        seconds: 0.0016,
        reps: 5,
    };
    // 2 x 8192^3 / 0.0016 = 687.19476736 TOPS < 799.6: the peak is the best size.
    assert!((small.tops() - 687.19476736).abs() < 1e-6);
    assert_eq!(gemm_peak(&[small, g.clone()]), Some(g.tops()));
}

#[test]
fn a_dot_row_by_hand() {
    // 200 000 records x 1 984 codes in 0.05 s: 7.936e9 dot products/s, 0.7936 of the target
    // and 1.2613 of Table 1's GR16.
    let row = DotRow {
        ring: GpuRing::Gr16,
        engine: GemmEngine::DEFAULT,
        codes: 1984,
        records: 200_000,
        k_pad: 12_800,
        seconds: 0.05,
        reps: 9,
        verified: true,
        error: None,
    };
    assert_eq!(row.dots_per_s(), 7.936e9);
    let m = dot_measurements(std::slice::from_ref(&row), Some(800.0));
    let rate = &m[0];
    assert_eq!(rate.name, "GR16 codes=1984 dot products per second");
    assert_eq!(rate.value, 7936.0);
    assert_eq!(rate.unit, "M/s");
    assert_eq!(rate.extra["fraction_of_target"], json!(0.7936));
    assert!((rate.extra["fraction_of_table1"].as_f64().unwrap() - 7.936 / 6.292).abs() < 1e-12);
    assert!((rate.extra["fraction_of_int8_peak"].as_f64().unwrap() - 0.761856).abs() < 1e-12);
    assert_eq!(rate.extra["verified"], json!(true));
    assert_eq!(m[1].unit, "TOPS");
    assert!((m[1].value - 609.4848).abs() < 1e-9);
    // A row that did not match the reference has no figure and says why.
    let bad = DotRow {
        verified: false,
        seconds: f64::NAN,
        error: Some("record 3, code 0: the GPU gave 1, the CPU reference 2".into()),
        ..row
    };
    let m = dot_measurements(&[bad], None);
    assert_eq!(m.len(), 1);
    assert!(m[0].value.is_nan());
    assert_eq!(m[0].extra["status"], json!("failed"));
    assert_eq!(m[0].extra["verified"], json!(false));
    assert!(m[0].extra["error"].as_str().unwrap().contains("record 3"));
}

#[test]
fn the_end_to_end_gallery_and_why() {
    const GIB: u64 = 1 << 30;
    // An H100's ~79 GiB free, no host or disk bound: (79 GiB - 3 x 1.5 GiB) / (3 x 102 400 B).
    let f = e2e_fit(79 * GIB, None, &[], 7_000, None);
    let want = ((79 * GIB - 3 * E2E_GPU_RESERVE_PER_PARTY) / (3 * 102_400)) as usize;
    assert_eq!(f.records, want);
    assert!(f.records >= MIN_H100_RECORDS, "{}", f.records);
    assert!(
        f.why
            .starts_with("the largest gallery that fits: the GPU's free memory"),
        "{}",
        f.why
    );
    // A 64 GiB disk binds first: 90% of it over 3 x 102 400 + 2 x 7 000 bytes per record.
    let disk = |parties, work, free| DiskUse {
        name: "the disk".into(),
        free: Some(free),
        parties,
        work,
    };
    let f = e2e_fit(
        79 * GIB,
        Some(128 * GIB),
        &[disk(3, true, 64 * GIB)],
        7_000,
        None,
    );
    assert_eq!(f.disk_bound, Some((64 * GIB / 10 * 9 / 321_200) as usize));
    assert_eq!(f.records, f.disk_bound.unwrap());
    assert!(
        f.why
            .contains("free space of the disk holds three parties' stores and the NDJSON"),
        "{}",
        f.why
    );
    assert!(f.records < MIN_H100_RECORDS, "{}", f.records);
    // Party 2's stores in memory (a 64 GiB tmpfs): the disk holds two parties' and the NDJSON,
    // and 250 000 records fit both.
    let f = e2e_fit(
        79 * GIB,
        Some(128 * GIB),
        &[
            disk(2, true, 64 * GIB),
            DiskUse {
                name: "/dev/shm".into(),
                ..disk(1, false, 64 * GIB)
            },
        ],
        7_000,
        None,
    );
    assert_eq!(f.disk_bound, Some((64 * GIB / 10 * 9 / 218_800) as usize));
    assert!(f.disk_bound.unwrap() >= MIN_H100_RECORDS);
    // A file system of unknown free space, or holding nothing of the run, binds nothing.
    let f = e2e_fit(
        79 * GIB,
        None,
        &[
            disk(0, false, 1),
            DiskUse {
                free: None,
                ..disk(3, true, 0)
            },
        ],
        7_000,
        None,
    );
    assert_eq!(f.disk_bound, None);
    // --records below the fit is taken as asked; above it, capped with the reason.
    let f = e2e_fit(79 * GIB, None, &[], 7_000, Some(1000));
    assert_eq!(f.records, 1000);
    assert!(f.why.starts_with("--records 1000"), "{}", f.why);
    let f = e2e_fit(GIB, None, &[], 7_000, Some(1000));
    assert_eq!(f.records, 0);
    assert!(f.why.contains("asked for more than fits"), "{}", f.why);
}

#[test]
fn median_of_odd_and_even() {
    assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
    assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
    assert!(median(&mut []).is_nan());
}

#[test]
fn the_header_states_the_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = opts(dir.path());
    assert!(about(&o).contains("200-record gallery"), "{}", about(&o));
    assert!(
        about(&o).contains("4 096 resident records"),
        "{}",
        about(&o)
    );
    o.quick = false;
    assert!(about(&o).contains("at least 250 000 records on an H100"));
    assert!(about(&o).contains("200 000 resident records"));
    o.records = Some(5000);
    o.gpu_dot_records = Some(1000);
    assert!(about(&o).contains("5 000-record gallery (--records)"));
    assert!(about(&o).contains("1 000 resident records"));
}

/// The Table 3 program compiles for the GPU: its dot products (both eyes against the gallery,
/// and the intra-batch ones) are replicated Z16 on the GPU.
#[test]
fn the_table3_program_builds_for_the_gpu() {
    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("gpu_table3.irs");
    std::fs::write(&program, PROGRAM).unwrap();
    let checked = irisc::driver::pipeline::read_and_check(&program).unwrap();
    let planned = irisc::driver::pipeline::plan(
        &checked,
        &irisc::analysis::plan::PlanOptions {
            sharing: irisc_runtime::vocab::Sharing::parse("rep3"),
            ..Default::default()
        },
    )
    .unwrap();
    let (artifact, _) = irisc::driver::pipeline::compile_for(
        &checked,
        &planned,
        irisc::codegen::Emit::Ptx,
        None,
        false,
        irisc::codegen::Target::Cuda,
    )
    .unwrap();
    let irisc::codegen::Artifact::Text(ptx) = artifact else {
        panic!("PTX is text")
    };
    assert!(
        ptx.contains("irisc_gpu_dot16_k25600"),
        "{}",
        &ptx[..400.min(ptx.len())]
    );
    assert!(
        !ptx.contains(": CPU (no GPU kernel"),
        "{}",
        &ptx[..400.min(ptx.len())]
    );
}

/// The run's file systems: without store folders the work folder's holds all three parties'
/// stores and the NDJSON; store folders on the same file system as the work folder add to it,
/// one elsewhere is its own entry (each folder created).
#[test]
fn the_file_systems_of_a_run_count_what_each_holds() {
    let work = tempfile::tempdir().unwrap();
    let uses = disk_uses(work.path(), None).unwrap();
    assert_eq!(uses.len(), 1);
    assert_eq!((uses[0].parties, uses[0].work), (3, true));
    assert!(uses[0].free.is_some());
    let roots = [0, 1, 2].map(|i| work.path().join(format!("stores{i}")));
    let uses = disk_uses(work.path(), Some(&roots)).unwrap();
    assert_eq!(uses.len(), 1, "{uses:?}");
    assert_eq!((uses[0].parties, uses[0].work), (3, true));
    assert!(roots.iter().all(|r| r.is_dir()));
    // /dev/shm, where there is one, is another file system than the work folder's.
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        let other = tempfile::tempdir_in(shm).unwrap();
        let roots = [
            work.path().join("a"),
            work.path().join("b"),
            other.path().join("c"),
        ];
        let uses = disk_uses(work.path(), Some(&roots)).unwrap();
        if uses.len() == 2 {
            assert_eq!((uses[0].parties, uses[0].work), (2, true));
            assert_eq!((uses[1].parties, uses[1].work), (1, false));
        }
    }
}

/// The steady state is the two-batch run minus the one-batch run, op by op too; a second run
/// that took no longer gives none.
#[test]
fn the_steady_state_is_the_second_batch_by_hand() {
    use super::super::e2e::{RunFigures, Setting};
    let run = |queries: usize, dot_s: f64, compare_s: f64, rotate: f64| RunFigures {
        case: "gpu_table3",
        setting: Setting {
            threads: 5,
            net: None,
            queries,
            record_chunk: None,
            message_chunk: None,
            env: Vec::new(),
            msb_input: None,
            threshold_placement: None,
        },
        records: 1000,
        comparisons: comparisons(1000, EYES, ROTATIONS, queries),
        dot_s,
        dot_overlapped_s: 0.0,
        compare_s,
        matching_s: dot_s + compare_s,
        total_s: 10.0,
        load_s: 1.0,
        cmp_per_cpu_s: None,
        bytes_per_cmp: 5.0,
        rounds: 10,
        messages: 10,
        peak_rss: [0; 3],
        dot_cpu_s: None,
        compare_cpu_s: None,
        dot_page_faults: None,
        dot_op_cpu_s: None,
        mask_len_cpu_s: None,
        kernel: None,
        accounts: vec![serde_json::json!({
            "ops": {"rotate": {"seconds": rotate}, "msb": {"seconds": 1.0}},
            "ops_cpu_s": {"rotate": rotate / 2.0},
        })],
        repeats: Vec::new(),
    };
    let fit = e2e_fit(u64::MAX, None, &[], 1, Some(1000));
    let mut e = E2eRow {
        fit,
        queries: 32,
        threads_per_party: 5,
        figures: run(32, 3.0, 2.0, 0.5),
        two_batches: Some(run(64, 3.5, 4.0, 0.75)),
        additive: None,
        disks: Vec::new(),
    };
    let s = steady_state(&e).expect("a second batch");
    assert_eq!(s.comparisons, 1000 * 2 * 31 * 32);
    assert!((s.matching_s - 2.5).abs() < 1e-12);
    assert!((s.dot_s - 0.5).abs() < 1e-12 && (s.compare_s - 2.0).abs() < 1e-12);
    assert!((s.per_s - 1_984_000.0 / 2.5).abs() < 1e-6);
    let ops = s.party0_op_seconds.expect("ops");
    assert!((ops["rotate"] - 0.25).abs() < 1e-12 && ops["msb"].abs() < 1e-12);
    let cpu = s.party0_op_cpu_seconds.expect("CPU seconds per op");
    assert!((cpu["rotate"] - 0.125).abs() < 1e-12, "{cpu:?}");
    let names: Vec<String> = e2e_measurements(&e).into_iter().map(|m| m.name).collect();
    assert!(
        names.iter().any(|n| n.contains("steady state")),
        "{names:?}"
    );
    // The AdditiveMSB run is reported against the default build's two-batch run.
    e.additive = Some(Ok(run(64, 3.5, 2.5, 0.75)));
    let ms = e2e_measurements(&e);
    let a = ms
        .iter()
        .find(|m| m.name == "end to end two batches with AdditiveMSB: matching time")
        .expect("the AdditiveMSB row");
    assert!((a.value - 6.0).abs() < 1e-12);
    assert!((a.extra["ratio_to_default"].as_f64().unwrap() - 6.0 / 7.5).abs() < 1e-12);
    e.additive = Some(Err("build refused".into()));
    let ms = e2e_measurements(&e);
    let a = ms
        .iter()
        .find(|m| m.name == "end to end two batches with AdditiveMSB: matching time")
        .expect("the failed row");
    assert_eq!(a.extra["error"], "build refused");
    e.additive = None;
    // A second run no slower than the first says nothing about a batch.
    e.two_batches = Some(run(64, 3.0, 2.0, 0.5));
    assert_eq!(steady_state(&e), None);
    e.two_batches = None;
    assert_eq!(steady_state(&e), None);
}
