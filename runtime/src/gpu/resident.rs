//! Galleries resident in GPU memory: each chunk of a gallery is uploaded and split into limb
//! planes once per process ([`super::planes::upload_and_split`]), and its planes kept for
//! every later query batch, so a scan moves only the queries to the GPU.
//!
//! A chunk is known by the gallery value it comes from and its records. The value is held (an
//! `Arc` clone) while its planes are, so its address names it: it cannot be freed and another
//! value take its place. Schedules load a gallery once into a slot and scan it chunk by chunk
//! for every batch, so this is the `(gallery slot, chunk)` of the schedule, and sound even if
//! a slot is written again. Planes whose gallery no slot holds any more (only this cache does)
//! are freed before anything new is uploaded.

use std::ops::Range;
use std::sync::Arc;

use crate::error::RuntimeError;
use crate::share::Codes;

use super::planes::DevicePlanes;

/// The gallery value a chunk's planes come from, held while they are resident.
#[derive(Clone)]
pub(crate) enum Held {
    Replicated(Arc<Codes>),
    /// A Galois-ring Shamir gallery (held by identity; its type is the ops' own).
    Shamir(Arc<dyn std::any::Any + Send + Sync>),
}

impl Held {
    fn addr(&self) -> usize {
        match self {
            Held::Replicated(c) => Arc::as_ptr(c) as *const () as usize,
            Held::Shamir(s) => Arc::as_ptr(s) as *const () as usize,
        }
    }

    /// Whether nothing but this cache holds the value (no slot, no background job).
    fn only_here(&self) -> bool {
        match self {
            Held::Replicated(c) => Arc::strong_count(c) == 1,
            Held::Shamir(s) => Arc::strong_count(s) == 1,
        }
    }
}

struct Entry {
    held: Held,
    records: Range<usize>,
    planes: Arc<DevicePlanes>,
}

/// The resident chunks of this process.
#[derive(Default)]
pub(crate) struct ResidentCache {
    entries: Vec<Entry>,
}

impl ResidentCache {
    /// The planes of records `records` of `gallery`: resident ones, or `upload()`'s (then
    /// kept). Returns whether they were uploaded now.
    pub(crate) fn get_or_upload(
        &mut self,
        gallery: &Held,
        records: Range<usize>,
        upload: impl FnOnce() -> Result<DevicePlanes, RuntimeError>,
    ) -> Result<(Arc<DevicePlanes>, bool), RuntimeError> {
        let addr = gallery.addr();
        if let Some(e) = self
            .entries
            .iter()
            .find(|e| e.held.addr() == addr && e.records == records)
        {
            return Ok((e.planes.clone(), false));
        }
        self.entries.retain(|e| !e.held.only_here());
        let planes = Arc::new(upload()?);
        self.entries.push(Entry {
            held: gallery.clone(),
            records,
            planes: planes.clone(),
        });
        Ok((planes, true))
    }

    /// Bytes of resident limb planes.
    pub(crate) fn bytes(&self) -> u64 {
        self.entries.iter().map(|e| e.planes.shape.bytes()).sum()
    }
}
