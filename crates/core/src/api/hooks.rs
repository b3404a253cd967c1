//! Work beside archiving: what a crate above core keeps per field as it is archived
//! (extraction's packings, `extract: {keep_packings: true}`). Each archiver of a handle with
//! [`ArchiveHooks`] shows its hook every field it stores and tells it of each flush, after
//! which the hook writes what it made beside the data set's fields.
//!
//! What a hook keeps is derived from the fields' bytes, which a reader can derive again: a
//! failure to keep it fails no archive and no flush. The archiver counts what was kept and
//! what was not ([`super::ArchiveStats`]).

use serde::{Deserialize, Serialize};

use crate::backend::{FieldLocation, SideObjects};
use crate::key::Key;

/// Makes one [`ArchiveHook`] per archiver of a handle ([`super::FieldStore::with_archive_hooks`]).
pub trait ArchiveHooks: Send + Sync {
    /// A hook for a new archiver, knowing no field yet.
    fn hook(&self) -> Box<dyn ArchiveHook>;
}

/// What one archiver keeps beside its fields.
pub trait ArchiveHook: Send {
    /// `message` was just stored at `location` (its CRC-32C set) in `dataset`; it becomes
    /// visible at the next flush.
    fn stored(&mut self, dataset: &Key, location: &FieldLocation, message: &[u8]);
    /// The fields stored since the last flush are visible now: keep what was made of them
    /// (`side`: the store's side objects, `None` where it keeps none).
    fn flushed(&mut self, side: Option<&dyn SideObjects>) -> KeptBeside;
    /// The fields stored since the last flush will never be visible: forget them.
    fn discarded(&mut self);
}

/// What a hook kept at a flush, or since an archiver was made.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeptBeside {
    /// Fields whose derived data was kept.
    pub fields: u64,
    /// Fields whose derived data was not (not GRIB, a side object not written).
    pub not_kept: u64,
    /// Why the first of those was not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_reason: Option<String>,
}

impl KeptBeside {
    /// Counts `fields` more not kept, for `reason` if none was given yet.
    pub fn not_kept(&mut self, fields: u64, reason: impl FnOnce() -> String) {
        self.not_kept += fields;
        self.first_reason.get_or_insert_with(reason);
    }

    /// Adds `other`'s counts (its reason if this has none).
    pub fn add(&mut self, other: KeptBeside) {
        self.fields += other.fields;
        self.not_kept += other.not_kept;
        if self.first_reason.is_none() {
            self.first_reason = other.first_reason;
        }
    }
}
