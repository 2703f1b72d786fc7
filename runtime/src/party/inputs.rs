//! Loading this party's share files and checking them against the program.

use std::path::Path;

use crate::error::RuntimeError;
use crate::io::share_file::{self, Expected, MaskMode, ShareFile, ShareKind};
use crate::manifest::Manifest;

use super::args::PartyArgs;
use super::codes::Codes;

/// The batch of queries this run answers.
pub struct QueryBatch {
    pub count: usize,
    pub codes: Codes,
}

pub struct Loaded {
    pub gallery: Codes,
    pub queries: QueryBatch,
    gallery_set: [u8; 16],
    query_set: [u8; 16],
}

fn load_one(
    path: &Path,
    kind: ShareKind,
    party: usize,
    manifest: &Manifest,
) -> Result<ShareFile, RuntimeError> {
    let file = share_file::read(path).map_err(|e| RuntimeError::Input(e.to_string()))?;
    let expected = Expected {
        kind,
        party: party as u8,
        ring_bits: manifest.ring_bits,
        code_bits: manifest.code_bits,
        mask: if manifest.mask == "secret" {
            MaskMode::Secret
        } else {
            MaskMode::Public
        },
    };
    share_file::check_compatible(path, &file.header, &expected)
        .map_err(|e| RuntimeError::Input(e.to_string()))?;
    Ok(file)
}

pub fn load(args: &PartyArgs, manifest: &Manifest) -> Result<Loaded, RuntimeError> {
    let (Some(db), Some(query)) = (&args.db, &args.query) else {
        return Err(RuntimeError::Usage(
            "both --db and --query are required".into(),
        ));
    };
    let gallery = load_one(db, ShareKind::Gallery, args.party, manifest)?;
    let queries = load_one(query, ShareKind::Query, args.party, manifest)?;
    Ok(Loaded {
        gallery_set: gallery.header.set_id,
        query_set: queries.header.set_id,
        queries: QueryBatch {
            count: queries.header.count as usize,
            codes: Codes::from_share_file(queries),
        },
        gallery: Codes::from_share_file(gallery),
    })
}

/// What the three parties must agree on before computing: the same program, and share files
/// from the same sharing runs. Sent in the hello of every link.
pub fn session_bytes(manifest: &Manifest, loaded: &Loaded) -> Vec<u8> {
    let mut s = manifest.fingerprint.as_bytes().to_vec();
    s.extend_from_slice(&loaded.gallery_set);
    s.extend_from_slice(&loaded.query_set);
    s
}
