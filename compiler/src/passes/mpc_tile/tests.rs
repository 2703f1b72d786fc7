//! `mpc-tile` on the modules the pipeline produces, compared with the planner's stages.

use super::*;
use crate::lower::lower_program;
use crate::mlir::Compiler;
use crate::passes::PassManager;
use crate::testing::{planned_rep3, DEDUP};

#[test]
fn options_parse_and_reject() {
    assert_eq!(MpcTile::from_options("").unwrap(), MpcTile::default());
    let t = MpcTile::from_options("{query-batch=4 record-chunk=1000}").unwrap();
    assert_eq!((t.query_batch, t.record_chunk), (4, 1000));
    let t = MpcTile::from_options("record-chunk=7,query-batch=1").unwrap();
    assert_eq!((t.query_batch, t.record_chunk), (1, 7));
    for bad in [
        "query-batch=0",
        "query-batch=x",
        "chunk=3",
        "query-batch",
        "query-batch=2000",
    ] {
        assert!(MpcTile::from_options(bad).is_err(), "{bad}");
    }
}

#[test]
fn dedup_is_staged_with_its_options_recorded() {
    let cx = Compiler::new().unwrap();
    let (program, options) = planned_rep3(DEDUP);
    let m = lower_program(&cx, &program, DEDUP).unwrap();
    let mpc = PassManager::irs_to_mpc_pipeline(&options)
        .run(&cx, m, None)
        .unwrap();
    assert_eq!(
        crate::analysis::schedule::TileOptions::of(&mpc),
        Some(TileOptions {
            query_batch: 8,
            record_chunk: 0,
            batched_chunks: true
        })
    );
    let query = query_body(&mpc, "query").unwrap();
    let staged: Vec<(Stage, String)> = stages_of(query)
        .unwrap()
        .iter()
        .map(|(s, op)| (*s, op_name(op)))
        .collect();
    use Stage::*;
    let expected = [
        (Query, "mpc.load_query"),
        (Query, "mpc.rotate"),
        (BatchDot, "mpc.batch_masked_dot"),
        (Chunk, "mpc.gallery_view"),
        (Chunk, "mpc.batch_mask_len"),
        (Chunk, "mpc.sub_threshold"),
        (Chunk, "mpc.additive_msb"),
        (Chunk, "mpc.or_tree"),
        (Chunk, "mpc.append"),
        (BatchFinish, "mpc.or_tree"),
        (BatchFinish, "mpc.open"),
        (Finish, "mpc.batch_pick"),
        (Finish, "mpc.output"),
        (Finish, "mpc.emit"),
    ];
    let expected: Vec<(Stage, String)> =
        expected.iter().map(|(s, n)| (*s, n.to_string())).collect();
    assert_eq!(staged, expected);
    // Running it again is refused: the body is already staged.
    let again = MpcTile::default().run(&cx, mpc);
    assert!(
        matches!(again, Err(PassError::Unsupported { message, .. }) if message.contains("already tiled"))
    );
}
