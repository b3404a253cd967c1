//! The two interfaces every backend implements, as in FDB5: a **Store** holds field bytes, a
//! **Catalogue** indexes them. Any catalogue works with any store: the catalogue keeps the
//! store's locations as opaque URIs.
//!
//! Contract (docs/consistency.md), which `FieldStore` relies on:
//! - `StoreWriter::archive` returns once the store holds a copy of the bytes;
//!   `StoreWriter::flush` returns once everything archived through that writer is durable.
//! - `CatalogueWriter::archive` records an entry that becomes visible to every reader only at
//!   `CatalogueWriter::flush`, atomically per index, and only after the store was flushed.
//! - Visible entries are never modified; a newer entry for the same key hides an older one.
//!
//! The shared sides (`Store`, `Catalogue`) are `Send + Sync`: one is opened per process and
//! read from any thread; each writer (`StoreWriter`, `CatalogueWriter`) belongs to one
//! archiving handle, and several writers of one process are as independent as writers of
//! several processes.
//!
//! What only some backends can do is a capability trait of its own, which a backend opts into
//! by answering `Some(self)` from the accessor of the generic trait (as `Catalogue::own_files`
//! answers for [`CatalogueFiles`]); core asks the accessor and does without where the answer
//! is `None`, so a new backend implements only what it has:
//!
//! | capability | accessor | who has it |
//! |---|---|---|
//! | [`Roots`]: a place that may be missing | `Catalogue::root`, `Store::root` | POSIX |
//! | [`CatalogueRecovery`]: records lost in a crash | `Catalogue::recovery` | POSIX |
//! | [`CatalogueFiles`]: its own files, for stats and wipe | `Catalogue::own_files` | POSIX |
//! | [`CommitCarrier`]: commits embedded in the data | `StoreWriter::commit_carrier` | POSIX |
//! | [`CommitSource`]: those commits read back | `Store::commit_source` | POSIX |
//! | [`RelativeUris`]: URIs other programs cannot open as they are | `Store::relative_uris` | POSIX |

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::axis::AxisValues;
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;

/// [`Store::largest_read`]'s default.
pub const LARGEST_READ: u64 = 64 << 20;

/// Where a field's bytes are: an opaque URI of the store that wrote them, a byte range, and
/// the CRC-32C of the bytes (checked on every read). The URI is shared by every field of the
/// same file or object.
///
/// Who computes the checksum: core, once per field, from the bytes it hands the store
/// ([`StoreWriter::archive`] returns a location whose `crc32c` is `None`, and `FieldStore`
/// sets it before the catalogue records the location); stores never compute it, so no
/// field's bytes are summed twice. Every field fieldstore archives has one; a field of a
/// system that keeps none (FDB5's databases, read in place) has `None`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct FieldLocation {
    /// The file or object holding the bytes, as the store names it (opaque to catalogues).
    pub uri: Arc<str>,
    /// Where the field starts in that file or object, in bytes.
    pub offset: u64,
    /// The field's length in bytes.
    pub length: u64,
    /// The CRC-32C of the field's bytes (Castagnoli), checked when they are read back;
    /// computed by core, not by the store (see above). `None`: stored without one.
    pub crc32c: Option<u32>,
}

impl FieldLocation {
    /// The checksum as fieldstore's own catalogues record it. They index only fields
    /// fieldstore archived, whose checksum core always sets; a location without one would be
    /// recorded as 0, which its bytes fail when read back (unless they sum to 0).
    pub fn recorded_crc32c(&self) -> u32 {
        self.crc32c.unwrap_or_default()
    }
}

/// Byte storage, shared by every thread of a process: reads, removals and descriptions take
/// `&self`. Writing goes through a [`StoreWriter`] of one's own.
pub trait Store: Send + Sync {
    /// A new writer: it appends to files or objects of its own, and its flush makes what it
    /// archived durable.
    fn writer(&self) -> Result<Box<dyn StoreWriter>>;
    /// Fills `buf` from `uri` at `offset` (one read; the caller merges adjacent ranges):
    /// every byte of it, or an error. Callers use buffers again without zeroing them (a
    /// server's reads for many identities among them), so no byte of `buf` may keep what it
    /// held: a range the storage holds no bytes for reads as zeros or fails.
    fn read(&self, uri: &str, offset: u64, buf: &mut [u8]) -> Result<()>;
    /// Fills `buf` as [`Store::read`] does, handing each consecutive piece of at most `piece`
    /// bytes to `visit` as soon as it is filled, while it is still in the core's cache: the
    /// reader checks fields' CRC-32C this way, in the same pass over memory as the copy. An
    /// error of either ends the read. The default reads piece by piece; a store whose copy
    /// costs less as one (POSIX's mapped copy maps the whole range once) overrides it.
    fn read_each_piece(
        &self,
        uri: &str,
        offset: u64,
        buf: &mut [u8],
        piece: usize,
        visit: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        fill_in_pieces(buf, piece, |at, part| self.read(uri, offset + at as u64, part), visit)
    }
    /// How many reads beyond the one being consumed a reader may keep in flight with
    /// [`Store::start_read`]; 0 (the default): none, each read is made when needed.
    fn read_ahead(&self) -> usize {
        0
    }
    /// The most bytes one read may cover where a reader merges adjacent fields into one
    /// read: large enough to cost few requests, small enough that a read's bytes are still in
    /// the CPU's cache when the reader checks and hands them out (64 MiB by default).
    fn largest_read(&self) -> u64 {
        LARGEST_READ
    }
    /// The gap between two wanted ranges of one file or object below which reading both, and
    /// the gap, in one read costs less than two reads: a page (4 KiB) by default; more where
    /// each request costs much (an S3 GET).
    fn merge_gap(&self) -> u64 {
        PAGE_GAP
    }
    /// Starts reading `length` bytes of `uri` at `offset` into `buffer` (a buffer given back
    /// by an earlier read, whatever it holds: reused, it needs no zeroing) while the caller
    /// goes on. Stores without asynchronous reads read at once (the default).
    fn start_read(&self, uri: &str, offset: u64, length: usize, mut buffer: Vec<u8>) -> Result<Box<dyn StartedRead>> {
        buffer.resize(length, 0);
        self.read(uri, offset, &mut buffer)?;
        Ok(Box::new(ReadDone(buffer)))
    }
    /// Deletes one stored object or file (purge, wipe); deleting a missing one is not an error.
    /// `false`: left in place, because a live writer still appends to it and may yet name it
    /// in a record it publishes (it stays; reclaiming it later is to be done).
    fn remove(&self, uri: &str) -> Result<bool>;
    /// Deletes several stored objects or files (purge, wipe): for each, whether it was
    /// removed, as [`Store::remove`] says. Stores with a bulk delete (S3) do it in fewer
    /// requests; the default removes them one by one.
    fn remove_all(&self, uris: &[String]) -> Result<Vec<bool>> {
        uris.iter().map(|uri| self.remove(uri)).collect()
    }
    /// Deletes what this store keeps for a dataset beyond its objects or files (wipe): the
    /// wipe has removed every one its indexes named first, and nothing archived into the
    /// data set after the wipe took effect may be touched (POSIX removes an empty directory,
    /// RADOS nothing; DAOS still destroys the data set's container).
    fn wipe_dataset(&self, dataset: &Key) -> Result<()>;
    /// Where the dataset's bytes live, for humans (`fieldstore where`).
    fn describe(&self, dataset: &Key) -> String;
    /// The store's URIs as other programs open them, if they are not that already
    /// ([`RelativeUris`], an optional capability). Default: `None`, the URIs are whole.
    fn relative_uris(&self) -> Option<&dyn RelativeUris> {
        None
    }
    /// The catalogue commits its writers embedded in the data, if they embed any
    /// ([`CommitSource`], an optional capability, the reading side of [`CommitCarrier`]).
    /// Default: `None`.
    fn commit_source(&self) -> Option<&dyn CommitSource> {
        None
    }
    /// Lends ranges of its files' bytes in place instead of copying them, where that is this
    /// handle's faster way to read ([`MappedReads`], an optional capability). Default: `None`.
    fn mapped_reads(&self) -> Option<&dyn MappedReads> {
        None
    }
    /// Whether `uri` names one of this store's files or objects, for a union reading a store
    /// beside the configured one ([`crate::union`]), which routes each read by it. A store
    /// read beside another claims its own (FDB5's: absolute paths under its roots), which no
    /// configured store ever makes; the default claims none.
    fn claims_uri(&self, _uri: &str) -> bool {
        false
    }
    /// The place the store is kept in, if that place can be missing ([`Roots`], an optional
    /// capability). Default: `None`.
    fn root(&self) -> Option<&dyn Roots> {
        None
    }
    /// Small objects kept beside a data set's fields, holding what was derived from them
    /// ([`SideObjects`], an optional capability). Default: `None`.
    fn side_objects(&self) -> Option<&dyn SideObjects> {
        None
    }
}

/// An optional capability of a store ([`Store::side_objects`]): small objects kept per data
/// set beside its fields' bytes, holding what was derived from them (extraction's packings,
/// docs/extract.md), so that readers need not derive it again. Each is written whole under a
/// new name ([`crate::unique::unique_object_name`]), never changed, and goes with its data
/// set's wipe. What one holds must say which fields it is about, and readers must check it
/// against them: a side object may be missing, stale (its fields purged) or of another time.
/// POSIX, S3, RADOS and DAOS have it.
pub trait SideObjects: Send + Sync {
    /// Stores `bytes` as the data set's side object `name`, visible whole or not at all.
    /// `name` must be one [`crate::unique::unique_object_name`] makes (else `BadRequest`).
    fn put_side_object(&self, dataset: &Key, name: &str, bytes: &[u8]) -> Result<()>;
    /// The names of a data set's side objects, in no particular order (none: an empty list).
    fn side_object_names(&self, dataset: &Key) -> Result<Vec<String>>;
    /// A side object's bytes; `None` if it is not there (any more).
    fn get_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Vec<u8>>>;
    /// A side object's bytes as [`SideObjects::get_side_object`] gives them, lent without a
    /// copy where the store can (POSIX maps the file): a reader that needs a few of its bytes
    /// (some records of thousands) reads only their pages. Default: read whole.
    fn map_side_object(&self, dataset: &Key, name: &str) -> Result<Option<Mapping>> {
        Ok(self.get_side_object(dataset, name)?.map(|bytes| Box::new(bytes) as Mapping))
    }
}

/// Refuses a side object name that [`crate::unique::unique_object_name`] does not make, so
/// that no name given to [`SideObjects`] leaves its place in a path or an object name.
pub fn check_side_object_name(name: &str) -> Result<()> {
    if crate::unique::is_object_name(name) {
        Ok(())
    } else {
        Err(Error::new(ErrorKind::BadRequest, format!("side object name {name:?}: 32 lower-case hex digits expected")))
    }
}

/// The default [`Store::merge_gap`]: a page, which a read of a local file costs anyway.
pub const PAGE_GAP: u64 = 4096;

/// Fills `buf` in consecutive pieces of at most `piece` bytes, `fill(at, part)` filling the
/// part that starts `at` bytes in, and hands each part to `visit` as soon as it is filled
/// ([`Store::read_each_piece`]). The first error of either ends it.
pub fn fill_in_pieces(
    buf: &mut [u8],
    piece: usize,
    mut fill: impl FnMut(usize, &mut [u8]) -> Result<()>,
    visit: &mut dyn FnMut(&[u8]) -> Result<()>,
) -> Result<()> {
    let piece = piece.max(1);
    for (i, part) in buf.chunks_mut(piece).enumerate() {
        fill(i * piece, part)?;
        visit(part)?;
    }
    Ok(())
}

/// An optional capability of a store ([`Store::relative_uris`]): its URIs are relative (to a
/// root that can move), and other programs need them made whole. POSIX has it.
pub trait RelativeUris: Send + Sync {
    /// A location's URI as other programs open it (pyfdb's `ListElement.uri`): a POSIX
    /// store's relative URI as the absolute path.
    fn absolute_uri(&self, uri: &str) -> Result<String>;
}

/// An optional capability of a store ([`Store::commit_source`]): reading back the catalogue
/// commits its writers embedded in the data ([`CommitCarrier`]), for the catalogue to recover
/// from after a crash ([`CatalogueRecovery`]). POSIX has it.
pub trait CommitSource: Send + Sync {
    /// Every commit the process `session` ([`crate::unique::session`]) embedded in a
    /// dataset's data, oldest first within each file or object.
    fn embedded_commits(&self, dataset: &Key, session: &str) -> Result<Vec<Vec<u8>>>;
}

/// An optional capability of a store ([`Store::mapped_reads`]): a range of a file lent in
/// place, read-only, for a caller that only passes the bytes on (a server sending them into a
/// socket) and so saves the copy a [`Store::read`] makes. POSIX has it.
pub trait MappedReads: Send + Sync {
    /// The `len` bytes of `uri` at `offset`, lent in place, or `None` where this handle reads
    /// faster by copying (then [`Store::read`] it). A range beyond what is stored is an error.
    fn map(&self, uri: &str, offset: u64, len: usize) -> Result<Option<Mapping>>;
}

/// Bytes lent in place by [`MappedReads::map`]: they stay valid, unchanged, until dropped.
pub type Mapping = Box<dyn AsRef<[u8]> + Send + Sync>;

/// One writer's side of a [`Store`]: the files or objects it appends to, owned by one thread
/// at a time.
pub trait StoreWriter: Send {
    /// Appends a field's bytes for a dataset and collocation key; returns where they are, with
    /// `crc32c` `None`: the caller computes the checksum ([`FieldLocation`]).
    ///
    /// The bytes are lent, not given: every caller of `FieldStore::archive` keeps its own (a
    /// Python `bytes`, a C pointer, the CLI's mapped input, a benchmark's reused buffer), so a
    /// store that keeps them past the call (an S3 PUT in flight, librados' write) copies them
    /// once: it holds a copy when this returns (the module's contract). Owned bytes here would
    /// not save that copy but move it into core, for every store: POSIX writes from the lent
    /// bytes or copies them into its write buffer, DAOS writes them before it returns, and for
    /// both that copy would be new work.
    fn archive(&mut self, dataset: &Key, collocation: &Key, data: &[u8]) -> Result<FieldLocation>;
    /// Makes everything archived through this writer durable.
    fn flush(&mut self) -> Result<()>;
    /// Forgets everything archived since the last successful flush (after a failed write: its
    /// bytes may be incomplete) and writes later fields to fresh files or objects.
    fn discard(&mut self);
    /// The writer's flush that embeds catalogue commits in the data, if it can
    /// ([`CommitCarrier`], an optional capability). Default: `None`, the catalogue makes its
    /// records durable itself.
    fn commit_carrier(&mut self) -> Option<&mut dyn CommitCarrier> {
        None
    }
}

/// An optional capability of a store writer ([`StoreWriter::commit_carrier`]): making a
/// catalogue's commits durable in the same device flush as the data they describe, so that a
/// flush costs one sync instead of the catalogue's own. Its store reads them back
/// ([`CommitSource`]). POSIX has it.
pub trait CommitCarrier: Send {
    /// Flushes like [`StoreWriter::flush`], and writes each commit into its dataset's data so
    /// that the same device flush makes it durable with the data. Returns, per commit, whether
    /// it was embedded: the catalogue makes the others durable itself.
    fn flush_with_commits(&mut self, commits: &[Commit]) -> Result<Vec<bool>>;
}

/// Catalogue records for one dataset, opaque to the store, that a store may make durable in
/// the same device flush as the dataset's data ([`CommitCarrier::flush_with_commits`]).
#[derive(Clone, Debug)]
pub struct Commit {
    /// The dataset whose records these are (the store embeds them in its data).
    pub dataset: Key,
    /// The records, encoded by the catalogue; the store keeps them as they are.
    pub bytes: Vec<u8>,
}

/// A read in flight ([`Store::start_read`]).
pub trait StartedRead: Send {
    /// Waits for the bytes: exactly the length asked for, or an error naming the object.
    fn finish(self: Box<Self>) -> Result<Vec<u8>>;
    /// Whether the read has ended (its `finish` would not wait), so that a reader can start
    /// another while keeping the store's read-ahead in flight. `false` (the default): not
    /// known, counted as in flight until finished.
    fn is_done(&mut self) -> bool {
        false
    }
}

/// A read that was made when it was started.
struct ReadDone(Vec<u8>);

impl StartedRead for ReadDone {
    fn finish(self: Box<Self>) -> Result<Vec<u8>> {
        Ok(self.0)
    }
}

/// Operations that `control` can lock per dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ControlAction {
    /// Archiving new fields into the dataset.
    Archive,
    /// Reading fields' bytes.
    Retrieve,
    /// Reading the catalogue: listing fields, their axes and statistics.
    List,
    /// Wiping or purging the dataset.
    Wipe,
}

impl ControlAction {
    /// Every action, in the order they sort.
    pub const ALL: [ControlAction; 4] = [ControlAction::Archive, ControlAction::Retrieve, ControlAction::List, ControlAction::Wipe];

    /// The action's name, as `control` and error messages spell it (`archive`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ControlAction::Archive => "archive",
            ControlAction::Retrieve => "retrieve",
            ControlAction::List => "list",
            ControlAction::Wipe => "wipe",
        }
    }

    /// The action named `name` (lowercase, as [`ControlAction::name`] spells it); `None` if none is.
    pub fn from_name(name: &str) -> Option<Self> {
        ControlAction::ALL.into_iter().find(|a| a.name() == name)
    }
}

/// What [`DatasetView::mask`] does with the catalogue files or objects that no visible index
/// uses any more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unused {
    /// Removes those it can (purge, wipe: nothing hidden is to be read again).
    Remove,
    /// Keeps every one (hide: the fields stay where they are, only hidden).
    Keep,
}

/// Summary of one index (one flush of one writer for one collocation key): enough to decide
/// without reading it whether it can hold a field a request asks for.
#[derive(Clone, Debug)]
pub struct IndexInfo {
    /// Backend-specific identity (unique within the dataset).
    pub id: String,
    /// Shared by the indexes of one collocation (catalogues may intern it).
    pub collocation: Arc<Key>,
    /// The element keywords of its entries, in schema order (shared likewise).
    pub element_keywords: Arc<[String]>,
    /// The values present per element keyword.
    pub axes: BTreeMap<Arc<str>, AxisValues>,
    /// How many entries the index holds, including any that newer indexes hide.
    pub fields: u64,
}

/// The index side, shared by every thread of a process: lookups, locks, wipes and recovery
/// take `&self`. Archiving goes through a [`CatalogueWriter`] of one's own.
pub trait Catalogue: Send + Sync {
    /// A new writer: entries it archives become visible at its flush.
    fn writer(&self) -> Result<Box<dyn CatalogueWriter>>;
    /// Every dataset key stored.
    fn datasets(&self) -> Result<Vec<Key>>;
    /// A read view of one dataset, or `None` if it does not exist.
    fn open(&self, dataset: &Key) -> Result<Option<Box<dyn DatasetView>>>;
    /// The schema a dataset was created with ([`DatasetView::schema_text`]), or `None` if it
    /// does not exist: all a writer needs of an existing data set. Default: a view's; a
    /// catalogue whose view costs more than reading its schema reads the schema alone.
    fn schema_text(&self, dataset: &Key) -> Result<Option<String>> {
        Ok(self.open(dataset)?.map(|view| view.schema_text().to_string()))
    }
    /// Removes a dataset's catalogue entirely.
    fn wipe_dataset(&self, dataset: &Key) -> Result<()>;
    /// The locked actions of a dataset.
    fn locks(&self, dataset: &Key) -> Result<BTreeSet<ControlAction>>;
    /// Locks `action` on a dataset (`locked`) or unlocks it.
    fn set_lock(&self, dataset: &Key, action: ControlAction, locked: bool) -> Result<()>;
    /// Where the dataset's catalogue lives, for humans (`fieldstore where`).
    fn describe(&self, dataset: &Key) -> String;
    /// Where the dataset's catalogue is, as other programs name it (a directory: FDB5's
    /// `fdb-where` prints it); none if it is not there, or where the catalogue has no such
    /// name (the default).
    fn locations(&self, _dataset: &Key) -> Result<Vec<String>> {
        Ok(Vec::new())
    }
    /// The place the catalogue is kept in, if that place can be missing ([`Roots`], an
    /// optional capability). Default: `None` (a backend whose open fails without its place).
    fn root(&self) -> Option<&dyn Roots> {
        None
    }
    /// How the catalogue recovers records a crash lost, if it can lose any ([`CatalogueRecovery`],
    /// an optional capability). Default: `None`, every record it publishes is durable.
    fn recovery(&self) -> Option<&dyn CatalogueRecovery> {
        None
    }
    /// What the catalogue says about its own files or objects, if it says anything
    /// ([`CatalogueFiles`], an optional capability). Default: nothing (`stats` then reports
    /// field counts only, and a wipe names the store's files or objects only).
    fn own_files(&self) -> Option<&dyn CatalogueFiles> {
        None
    }
    /// The server that answers for this catalogue, if another process serves it
    /// ([`crate::api::Remote`], an optional capability): a [`crate::api::FieldStore`] over it
    /// sends every call there, and uses no other method of it but [`Catalogue::locks`].
    /// Default: `None`.
    fn remote(&self) -> Option<&dyn crate::api::Remote> {
        None
    }
}

/// An optional capability of a catalogue or store ([`Catalogue::root`], [`Store::root`]): it
/// is kept under places that exist apart from it (POSIX root directories), which may be
/// missing. They are made only when asked (`create: true`, `fieldstore init`): a root that is
/// not there is most often a file system not mounted. POSIX has it.
pub trait Roots: Send + Sync {
    /// An error naming where the catalogue should be if it is not there (a POSIX root never
    /// made): tools refuse to read a store that does not exist, which is most often a mistyped
    /// path, while readers of the library see no data sets until a writer makes it.
    fn check_exists(&self) -> Result<()>;
    /// Makes every root that is not there (`fieldstore init`); the roots made, as paths.
    fn create_missing(&self) -> Result<Vec<String>>;
}

/// An optional capability of a catalogue ([`Catalogue::recovery`]): it publishes records
/// without making them durable itself when the store embeds them in its data
/// ([`CommitCarrier`]), and after a crash of their host publishes again from the store's
/// copies ([`CommitSource`]) what was lost. Core recovers a data set before it opens it for
/// reading. POSIX has it.
pub trait CatalogueRecovery: Send + Sync {
    /// The sessions ([`crate::unique::session`]) whose embedded commits may hold records this
    /// catalogue lost in a crash of their host; each is passed to
    /// [`CatalogueRecovery::recover`] with its commits before the dataset is opened.
    fn sessions_to_recover(&self, dataset: &Key) -> Result<Vec<String>>;
    /// Publishes again every record of `commits` that a crash lost, then forgets the session
    /// (`commits` is empty where the store embeds none). A commit is taken only if `whole`
    /// says every field it names is (read back with its checksum): a commit and the data it
    /// describes are made durable by one sync, and a power loss during that sync may keep the
    /// commit without all of the data.
    fn recover(&self, dataset: &Key, session: &str, commits: &[Vec<u8>], whole: &dyn Fn(&FieldLocation) -> Result<bool>) -> Result<()>;
}

/// An optional capability of a catalogue ([`Catalogue::own_files`]): what it can say about the
/// files or objects it keeps for a data set beside the store's, as FDB5's `stats` and `wipe`
/// report them.
pub trait CatalogueFiles: Send + Sync {
    /// Counts and sizes of what the catalogue keeps for `dataset` (FDB5's "DB statistics");
    /// `None` if the data set is not there (any more).
    fn usage(&self, dataset: &Key) -> Result<Option<CatalogueUsage>>;
    /// The files or objects a wipe of the whole data set removes with it
    /// ([`Catalogue::wipe_dataset`]), named as [`DatasetView::mask`] names those it removes;
    /// empty lists if the data set is not there (any more).
    fn files(&self, dataset: &Key) -> Result<DatasetFiles>;
}

/// What a catalogue keeps for a data set, counted and sized ([`CatalogueFiles::usage`]);
/// `None` where the catalogue cannot tell (an object store's sizes, for one).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CatalogueUsage {
    /// Records of its table of contents or log (FDB5's "TOC records").
    pub records: Option<u64>,
    /// The size of its table of contents or log, in bytes.
    pub record_bytes: Option<u64>,
    /// The size of its schema, in bytes.
    pub schema_bytes: Option<u64>,
    /// Index files or objects.
    pub index_files: Option<u64>,
    /// Their size, in bytes.
    pub index_bytes: Option<u64>,
    /// Data files in the data set's own place (FDB5's "owned data files": on POSIX, those of
    /// its directory, where the store shares the catalogue's root).
    pub data_files: Option<u64>,
    /// Their size, in bytes.
    pub data_bytes: Option<u64>,
}

impl CatalogueUsage {
    /// Adds another data set's usage: a count stays known only where both know it (a total
    /// that left out part of what it sums would read as the whole).
    pub fn add(&mut self, other: &CatalogueUsage) {
        let sum = |a: &mut Option<u64>, b: Option<u64>| *a = a.zip(b).map(|(a, b)| a.saturating_add(b));
        sum(&mut self.records, other.records);
        sum(&mut self.record_bytes, other.record_bytes);
        sum(&mut self.schema_bytes, other.schema_bytes);
        sum(&mut self.index_files, other.index_files);
        sum(&mut self.index_bytes, other.index_bytes);
        sum(&mut self.data_files, other.data_files);
        sum(&mut self.data_bytes, other.data_bytes);
    }
}

/// The files or objects a catalogue keeps for a data set, by FDB5's kinds of them
/// ([`CatalogueFiles::files`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DatasetFiles {
    /// What describes the data set itself: its key, schema, table of contents or log
    /// (FDB5's "catalogue URIs").
    pub catalogue: Vec<String>,
    /// Its locks (FDB5's "control URIs").
    pub control: Vec<String>,
    /// Its index files or objects.
    pub indexes: Vec<String>,
}

/// One writer's side of a [`Catalogue`]: its pending entries, owned by one thread at a time.
pub trait CatalogueWriter: Send {
    /// Records a field location; it becomes visible at the next `flush`. The schema text is
    /// stored with the dataset when this creates it.
    fn archive(&mut self, dataset: &Key, schema_text: &str, collocation: &Key, element: &Key, location: FieldLocation) -> Result<()>;
    /// Optionally writes what the next `flush` will publish, invisibly to readers, before the
    /// store syncs: a catalogue and store on one file system then share the sync's work
    /// (journal commit, device cache flush). It may also return, per dataset, the records
    /// the store should embed in its data ([`CommitCarrier::flush_with_commits`]), from which the
    /// catalogue can recover them after a crash: then it need not make its own copy durable
    /// at `flush`. Entries archived afterwards undo it.
    fn prepare_flush(&mut self) -> Result<Vec<Commit>> {
        Ok(Vec::new())
    }
    /// Makes every entry archived through this handle visible, atomically per index, and
    /// durable, except in the `embedded` datasets, whose commits the store made durable. On
    /// failure the entries stay pending, so a later flush can publish them; except where their
    /// data set was wiped meanwhile, which the catalogue says with [`Error::Wiped`](crate::error::Error::Wiped):
    /// then they went with it.
    fn flush(&mut self, embedded: &[Key]) -> Result<()>;
    /// Forgets the entries archived since the last successful flush (their bytes were lost).
    fn discard(&mut self);
    /// Makes data set `dataset` with no fields unless it exists, as its first archive would
    /// (an overlay's target: [`Overlays`]).
    fn create(&mut self, dataset: &Key, schema_text: &str) -> Result<()>;
}

/// A reader's view of one dataset. Each call to `indexes` sees everything flushed so far.
pub trait DatasetView: Send {
    /// The schema the dataset was created with.
    fn schema_text(&self) -> &str;
    /// The visible indexes, newest first (a newer entry hides an older one). A view is kept
    /// and asked again: each call must cost only what was flushed since the last one.
    fn indexes(&mut self) -> Result<Vec<Arc<IndexInfo>>>;
    /// The location of one element in one index.
    fn lookup(&mut self, index: &IndexInfo, element: &Key) -> Result<Option<FieldLocation>>;
    /// Every entry of one index.
    fn entries(&mut self, index: &IndexInfo) -> Result<Vec<(Key, FieldLocation)>>;
    /// Hides indexes from all readers, at once (purge, partial wipe, hide). Returns the
    /// catalogue files or objects it removed because no visible index uses them any more
    /// (for the report), if `unused` says to remove them.
    fn mask(&mut self, indexes: &[&IndexInfo], unused: Unused) -> Result<Vec<String>>;
    /// Where an index is, as other programs name it: its file's path and its offset there
    /// (FDB5's purge names indexes so); `None` where it is no part of a file (the default).
    fn index_place(&self, _index: &IndexInfo) -> Option<(String, u64)> {
        None
    }
    /// Loads indexes a request is about to read, at once where the catalogue can (an object
    /// store's requests in flight together). Default: each is loaded when read.
    fn prefetch(&mut self, _indexes: &[&IndexInfo]) -> Result<()> {
        Ok(())
    }
    /// Merges indexes into fewer, larger ones without changing what any reader sees
    /// (docs/consistency.md, "Compaction"). Default: nothing to merge, for a catalogue whose
    /// indexes do not multiply with flushes (POSIX keeps one per writer and collocation).
    fn compact(&mut self) -> Result<Compaction> {
        let count = self.indexes()?.len() as u64;
        Ok(Compaction { indexes_before: count, indexes_after: count, ..Compaction::default() })
    }
    /// The view's overlays, if its catalogue keeps them. Default: none.
    fn overlays(&mut self) -> Option<&mut dyn Overlays> {
        None
    }
}

/// A view's overlays (FDB5's `fdb-overlay`): other data sets whose fields readers of this one
/// see as its own, under its key. An overlay is a record of the data set's log, so every
/// reader sees it, or its removal, at once; it names the other data set by key, so what that
/// one holds now (archived later, or wiped) is what is shown.
pub trait Overlays: Send {
    /// The data sets shown as part of this one, as of the last [`DatasetView::indexes`],
    /// oldest first.
    fn overlaid(&self) -> &[Key];
    /// Shows data set `source` as part of this one, or (`shown` false) stops showing it,
    /// durably, for every reader at once.
    fn set_overlay(&mut self, source: &Key, shown: bool) -> Result<()>;
}

/// What a compaction of one data set did ([`DatasetView::compact`]).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Compaction {
    /// Visible indexes before.
    pub indexes_before: u64,
    /// Visible indexes after (a writer flushing meanwhile adds to it).
    pub indexes_after: u64,
    /// Compacted indexes written.
    pub indexes_written: u64,
    /// The entries they hold.
    pub entries_written: u64,
    /// Why the data set was not compacted, if it was not (its objects' format).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_compacted: Option<String>,
}
