//! Packings kept as fields are archived (`extract: {keep_packings: true}`, as gribjump's FDB5
//! plugin does): each stored message's packing is learnt from its bytes, already in memory,
//! and at each flush every data set's new packings are written beside its fields in side
//! objects, as `fieldstore scan` writes them. A message that is not GRIB, or a side object not
//! written, costs readers time (they learn the packing from the whole message), never fields.

use std::collections::HashMap;
use std::sync::Arc;

use fieldstore_core::api::{ArchiveHook, ArchiveHooks, KeptBeside};
use fieldstore_core::backend::SideObjects;
use fieldstore_core::{FieldLocation, Key};

use crate::fields::SIDE_OBJECT_BYTES;
use crate::kept::{kept_parts, put_kept, KeptEntry};
use crate::Packing;

/// Keeps the packing of every field an archiver stores ([`ArchiveHooks`]).
#[derive(Debug, Default)]
pub struct KeepPackings;

impl ArchiveHooks for KeepPackings {
    fn hook(&self) -> Box<dyn ArchiveHook> {
        Box::<PackingsToFlush>::default()
    }
}

/// The packings of the fields an archiver stored since its last flush.
#[derive(Default)]
struct PackingsToFlush {
    learnt: HashMap<Key, Vec<KeptEntry>>,
    /// The fields whose packing could not be learnt.
    not_learnt: KeptBeside,
}

impl ArchiveHook for PackingsToFlush {
    fn stored(&mut self, dataset: &Key, location: &FieldLocation, message: &[u8]) {
        match Packing::of(message) {
            Ok(packing) => self.learnt.entry(dataset.clone()).or_default().push((location.clone(), Arc::new(packing))),
            Err(e) => {
                self.not_learnt.not_kept(1, || format!("a field of data set {dataset} ({} at {}): {e}", location.uri, location.offset))
            }
        }
    }

    fn flushed(&mut self, side: Option<&dyn SideObjects>) -> KeptBeside {
        let mut kept = std::mem::take(&mut self.not_learnt);
        for (dataset, entries) in std::mem::take(&mut self.learnt) {
            let Some(side) = side else {
                kept.not_kept(entries.len() as u64, || "this store keeps no side objects".to_string());
                continue;
            };
            for part in kept_parts(&entries, SIDE_OBJECT_BYTES) {
                match put_kept(side, &dataset, part) {
                    Ok(()) => kept.fields += part.len() as u64,
                    Err(e) => kept.not_kept(part.len() as u64, || format!("the packings of data set {dataset}: {}", e.report())),
                }
            }
        }
        kept
    }

    fn discarded(&mut self) {
        *self = PackingsToFlush::default();
    }
}
