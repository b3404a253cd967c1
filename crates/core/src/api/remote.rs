//! A handle whose fields another process serves (`type: remote`, the `fieldstore-remote`
//! crate; `fieldstore serve` is the server).
//!
//! The remote is an optional capability of a catalogue ([`crate::backend::Catalogue::remote`]):
//! where the configured catalogue has one, every call of the [`FieldStore`] goes to the server
//! as one [`Operation`] (one request, whatever it matches), which runs it there on the
//! server's own handle ([`Operation::run`]) and answers with the same report a local call
//! returns. Archiving streams whole fields to the server ([`RemoteArchiver`]), whose flush is
//! the server's. Only the fields' bytes are read at their locations, through the store the
//! config pairs with the remote catalogue (the remote's, reading locations the server
//! returned). So both sides share one definition of each operation, and a call through a
//! server means what it means locally.

use serde::{Deserialize, Serialize};

use std::borrow::Cow;
use std::sync::Arc;

use super::{Axes, FieldEntry, FieldStore, ListOptions, Matches, OverlayOptions};
use crate::backend::{ControlAction, FieldLocation};
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::request::Request;

/// A server that runs a handle's calls ([`crate::backend::Catalogue::remote`]).
pub trait Remote: Send + Sync {
    /// Where the server is, for messages (`https://host:port`).
    fn endpoint(&self) -> &str;
    /// Runs one operation on the server; its answer, as [`Operation::run`] gives it there
    /// (JSON).
    fn call(&self, operation: &Operation) -> Result<Vec<u8>>;
    /// Sends `body` (JSON) to the server's endpoint `path` for a call of a crate over this API
    /// (an extraction, a scan: `fieldstore-extract` keeps its own calls and their answers, the
    /// server serves them) that may be sent again where its answer was lost: one that only
    /// reads, or whose second run changes nothing more. The answer's body.
    fn post_repeatable(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>>;
    /// A new stream of fields to archive through the server, independent of every other.
    fn archiver(&self) -> Result<Box<dyn RemoteArchiver>>;
}

/// Fields archived through a server ([`Remote::archiver`]): [`crate::api::Archiver`]'s calls.
pub trait RemoteArchiver: Send {
    /// Sends one field. It may be sent in a batch with the next ones: an error about it (a key
    /// the server's schema refuses, a lock) may come from a later call, at the latest from
    /// [`RemoteArchiver::flush`].
    fn archive(&mut self, identifier: &Key, data: &[u8]) -> Result<()>;
    /// Returns once the server has flushed every field sent since the last flush: they are
    /// durable and visible, exactly as a local flush leaves them. After an error none of
    /// those fields is visible, and they must be archived again.
    fn flush(&mut self) -> Result<()>;
    /// Drops every field sent since the last flush: none of them becomes visible.
    fn discard(&mut self);
}

/// One call of the [`FieldStore`] API, as a client sends it to a server. Requests travel as
/// their text ([`Request`]'s `Display`), parsed again by the server.
// The variants' fields are the arguments of the calls they name, documented there.
#[allow(missing_docs)]
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum Operation {
    /// [`FieldStore::resolve`]: answers [`crate::api::Matches`].
    Resolve { request: String, options: ListOptions, action: Option<ControlAction> },
    /// [`FieldStore::axes`], or with `whole_indexes` [`FieldStore::index_axes`].
    Axes { request: String, whole_indexes: bool },
    /// [`FieldStore::wipe`].
    Wipe { request: String, doit: bool },
    /// [`FieldStore::purge`].
    Purge { request: String, doit: bool },
    /// [`FieldStore::compact`].
    Compact { request: String },
    /// [`FieldStore::dump`].
    Dump { request: String, entries: bool },
    /// [`FieldStore::hide`].
    Hide { request: String, doit: bool },
    /// [`FieldStore::hide_datasets`].
    HideDatasets { datasets: Vec<Key>, doit: bool },
    /// [`FieldStore::control`].
    Control { request: String, actions: Vec<ControlAction>, lock: Option<bool> },
    /// The actions locked on one data set ([`crate::backend::Catalogue::locks`]).
    Locks { dataset: Key },
    /// [`FieldStore::stats`].
    Stats { request: String },
    /// [`FieldStore::dataset_stats`].
    DatasetStats { dataset: Key },
    /// [`FieldStore::where_is`].
    Where { request: String },
    /// [`FieldStore::dataset_where`].
    DatasetWhere { dataset: Key },
    /// [`FieldStore::overlay`].
    Overlay { source: Key, target: Key, options: OverlayOptions },
    /// [`FieldStore::check_exists`].
    CheckExists,
    /// [`FieldStore::create_roots`].
    CreateRoots,
    /// The text of the server's configured schema ([`FieldStore::schema`]), which a client
    /// splits identifiers with.
    Schema,
}

/// What an operation needs an identity to be allowed, in the order a server checks:
/// reading, archiving, changing what is stored (wipe, purge, hide, lock, compact, overlay),
/// or the store as a whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Permission {
    /// Listing and retrieving.
    Read,
    /// Archiving.
    Archive,
    /// Wiping, purging, hiding, locking, compacting, overlaying.
    Wipe,
    /// What concerns the store itself (its roots).
    Admin,
}

/// What an operation acts on, for a server's authorisation: a request, or data sets' keys.
#[derive(Debug)]
pub enum Scope<'o> {
    /// The data sets and fields a request names.
    Request(&'o str),
    /// These data sets.
    Datasets(Vec<&'o Key>),
    /// The whole store.
    Store,
    /// Nothing stored (the schema, whether the store is there): any known caller may.
    Nothing,
}

/// One thing an operation needs a caller to be allowed ([`Operation::needs`]): any one of
/// these permissions, on this scope.
#[derive(Debug)]
pub struct Need<'o> {
    /// The permissions, any one of which allows it.
    pub any_of: &'static [Permission],
    /// On what.
    pub scope: Scope<'o>,
    /// Whether it acts on whole data sets (a wipe, a dump): a server then checks every data set
    /// the request names, not the request's text alone.
    pub whole_datasets: bool,
}

impl<'o> Need<'o> {
    /// `permission` on `scope`.
    pub fn on(permission: &'static Permission, scope: Scope<'o>) -> Self {
        Need { any_of: std::slice::from_ref(permission), scope, whole_datasets: false }
    }

    /// `permission` on every data set `request` names, whole.
    pub fn on_datasets(permission: &'static Permission, request: &'o str) -> Self {
        Need { any_of: std::slice::from_ref(permission), scope: Scope::Request(request), whole_datasets: true }
    }
}

/// How a server answers ([`Operation::run`]).
pub struct Answering<'a> {
    /// Applied to each location answered (a server signs them there).
    pub locations: &'a dyn Fn(&mut FieldLocation),
    /// Whether "why nothing matched" may name what is stored: a caller allowed to read only
    /// part of the store is told only that nothing it may read matched.
    pub explanations: bool,
}

/// What a caller allowed to read only part of a store is told when nothing matched.
pub const NOTHING_ALLOWED_MATCHED: &str = "nothing this caller may read matches";

impl Operation {
    /// What the operation needs, every one of them.
    pub fn needs(&self) -> Vec<Need<'_>> {
        use Operation::*;
        let (read, wipe) = (&Permission::Read, &Permission::Wipe);
        match self {
            Resolve { request, .. } | Axes { request, .. } => vec![Need::on(read, Scope::Request(request))],
            Stats { request } | Where { request } | Dump { request, .. } => vec![Need::on_datasets(read, request)],
            // Before a retrieve, and before an archive into the data set.
            Locks { dataset } => vec![Need {
                any_of: &[Permission::Archive, Permission::Read],
                scope: Scope::Datasets(vec![dataset]),
                whole_datasets: false,
            }],
            DatasetStats { dataset } | DatasetWhere { dataset } => vec![Need::on(read, Scope::Datasets(vec![dataset]))],
            Wipe { request, .. } | Purge { request, .. } | Compact { request } | Hide { request, .. } | Control { request, .. } => {
                vec![Need::on_datasets(wipe, request)]
            }
            HideDatasets { datasets, .. } => vec![Need::on(wipe, Scope::Datasets(datasets.iter().collect()))],
            // Showing the source to the target's readers is reading it.
            Overlay { source, target, .. } => {
                vec![Need::on(read, Scope::Datasets(vec![source])), Need::on(wipe, Scope::Datasets(vec![target]))]
            }
            CheckExists | Schema => vec![Need::on(read, Scope::Nothing)],
            CreateRoots => vec![Need::on(&Permission::Admin, Scope::Store)],
        }
    }

    /// Whether the operation only reads: a client may send it again when it cannot tell
    /// whether the server ran it (a connection lost before the answer, a busy server), and the
    /// answer means the same.
    pub fn changes_nothing(&self) -> bool {
        use Operation::*;
        match self {
            Resolve { .. } | Axes { .. } | Dump { .. } | Locks { .. } | Stats { .. } | DatasetStats { .. } | Where { .. } => true,
            DatasetWhere { .. } | CheckExists | Schema => true,
            Wipe { .. } | Purge { .. } | Compact { .. } | Hide { .. } | HideDatasets { .. } | Control { .. } | Overlay { .. } => false,
            CreateRoots => false,
        }
    }

    /// A resolve that would ignore locks (`action: None`) made to honour list locks: a
    /// server's clients do not choose to pass over locks.
    pub fn honouring_locks(self) -> Self {
        match self {
            Operation::Resolve { request, options, action: None } => {
                Operation::Resolve { request, options, action: Some(ControlAction::List) }
            }
            other => other,
        }
    }

    /// Runs the operation on a local handle (the server's side), as `answering` says; its
    /// report as JSON, keys' keywords in their order.
    pub fn run(self, fs: &FieldStore, answering: &Answering<'_>) -> Result<Vec<u8>> {
        use Operation::*;
        let parse = |text: &str| Request::parse(text);
        let locations = answering.locations;
        let hidden = |why: &mut Option<String>| {
            if !answering.explanations && why.is_some() {
                *why = Some(NOTHING_ALLOWED_MATCHED.into());
            }
        };
        match self {
            Resolve { request, options, action } => {
                let mut matches = fs.resolve(&parse(&request)?, options, action)?;
                hidden(&mut matches.explanation);
                if !answering.explanations {
                    matches.not_found.clear();
                }
                encode_matches(matches, locations)
            }
            Axes { request, whole_indexes } => {
                let (axes, mut why) = fs.axes_of(&parse(&request)?, whole_indexes)?;
                hidden(&mut why);
                json(&(axes, why))
            }
            Wipe { request, doit } => json(&fs.wipe(&parse(&request)?, doit)?),
            Purge { request, doit } => json(&fs.purge(&parse(&request)?, doit)?),
            Compact { request } => json(&fs.compact(&parse(&request)?)?),
            Dump { request, entries } => {
                let mut dumps = fs.dump(&parse(&request)?, entries)?;
                let entries = dumps.iter_mut().flat_map(|d| &mut d.indexes).flat_map(|i| i.entries.iter_mut().flatten());
                entries.for_each(|(_, location)| locations(location));
                json(&dumps)
            }
            Hide { request, doit } => json(&fs.hide(&parse(&request)?, doit)?),
            HideDatasets { datasets, doit } => json(&fs.hide_datasets(&datasets, doit)?),
            Control { request, actions, lock } => json(&fs.control(&parse(&request)?, &actions, lock)?),
            Locks { dataset } => json(&fs.catalogue().locks(&dataset)?),
            Stats { request } => json(&fs.stats(&parse(&request)?)?),
            DatasetStats { dataset } => json(&fs.dataset_stats(&dataset)?),
            Where { request } => json(&fs.where_is(&parse(&request)?)?),
            DatasetWhere { dataset } => json(&fs.dataset_where(dataset)),
            Overlay { source, target, options } => json(&fs.overlay(&source, &target, &options)?),
            CheckExists => json(&fs.check_exists()?),
            CreateRoots => json(&fs.create_roots()?),
            Schema => json(&fs.schema().text()),
        }
    }
}

/// A resolve's answer as it travels: each data set's and collocation's key once per run of
/// fields that share them, each file's URI once (and signed once), then per field its element
/// key and place. A listing of 10,000 fields is a fifth of its fields' JSON, and is read back
/// with one key shared by the fields of a collocation, as a local resolve shares it.
/// (Read back borrowing its values from the answer's bytes: values hold no JSON escapes.)
#[derive(Serialize, Deserialize)]
struct WireMatches<'a> {
    datasets: Vec<Key>,
    collocations: Vec<(Key, Key)>,
    explanation: Option<String>,
    not_found: Vec<String>,
    /// Runs of consecutive fields of one data set and collocation, in the answer's order.
    #[serde(borrow)]
    runs: Vec<WireRun<'a>>,
    /// The URIs the fields' `uri` index.
    uris: Vec<String>,
}

#[derive(Serialize, Deserialize)]
struct WireRun<'a> {
    dataset: Key,
    collocation: Key,
    /// The keywords of every field's element key, once.
    keywords: Vec<String>,
    #[serde(borrow)]
    fields: Vec<WireField<'a>>,
}

/// One field: its element key's values ([`Key::values_string`] of the run's keywords), URI
/// (an index into `uris`), offset, length, checksum, whether it is superseded, and the data
/// set it was archived in if another.
#[derive(Serialize, Deserialize)]
struct WireField<'a>(
    #[serde(borrow)] Cow<'a, str>,
    usize,
    u64,
    u64,
    Option<u32>,
    bool,
    #[serde(default, skip_serializing_if = "Option::is_none")] Option<Key>,
);

impl WireMatches<'_> {
    fn from_matches(matches: Matches, locations: &dyn Fn(&mut FieldLocation)) -> Self {
        let mut uris: Vec<String> = Vec::new();
        let mut uri_index: std::collections::HashMap<Arc<str>, usize> = std::collections::HashMap::new();
        let mut runs: Vec<WireRun> = Vec::new();
        // The last field's file and keys: the next field's are most often the same ones.
        let mut last_file: Option<(Arc<str>, usize)> = None;
        let mut last_keys: Option<(Arc<Key>, Arc<Key>)> = None;
        for field in matches.fields {
            let uri = match &last_file {
                Some((uri, index)) if Arc::ptr_eq(uri, &field.location.uri) => *index,
                _ => *uri_index.entry(field.location.uri.clone()).or_insert_with(|| {
                    let mut signed = field.location.clone();
                    locations(&mut signed);
                    uris.push(signed.uri.to_string());
                    uris.len() - 1
                }),
            };
            let same_keys = last_keys
                .as_ref()
                .is_some_and(|(dataset, collocation)| Arc::ptr_eq(dataset, &field.dataset) && Arc::ptr_eq(collocation, &field.collocation));
            let same_run = runs.last().is_some_and(|run| {
                (same_keys || (run.dataset == *field.dataset && run.collocation == *field.collocation))
                    && run.keywords.iter().eq(field.element.keywords())
            });
            last_file = Some((field.location.uri.clone(), uri));
            last_keys = Some((field.dataset.clone(), field.collocation.clone()));
            if !same_run {
                runs.push(WireRun {
                    dataset: Key::clone(&field.dataset),
                    collocation: Key::clone(&field.collocation),
                    keywords: field.element.keywords().map(String::from).collect(),
                    fields: Vec::new(),
                });
            }
            let location = &field.location;
            let wire = WireField(
                Cow::Owned(field.element.values_string()),
                uri,
                location.offset,
                location.length,
                location.crc32c,
                field.superseded,
                field.archived_in.map(|k| Key::clone(&k)),
            );
            runs.last_mut().expect("pushed above").fields.push(wire);
        }
        WireMatches {
            datasets: matches.datasets,
            collocations: matches.collocations,
            explanation: matches.explanation,
            not_found: matches.not_found,
            runs,
            uris,
        }
    }

    fn into_matches(self, endpoint: &str) -> Result<Matches> {
        let uris: Vec<Arc<str>> = self.uris.into_iter().map(Arc::from).collect();
        let mut fields = Vec::new();
        for run in self.runs {
            let (dataset, collocation) = (Arc::new(run.dataset), Arc::new(run.collocation));
            let corrupt = |e: Error| Error::caused_by(ErrorKind::Corrupt, format!("server {endpoint} answered a field's key"), e);
            Key::check_keywords(&run.keywords).map_err(corrupt)?;
            for WireField(values, uri, offset, length, crc32c, superseded, archived_in) in run.fields {
                let element = Key::from_checked_values(&run.keywords, &values).map_err(corrupt)?;
                let Some(uri) = uris.get(uri) else {
                    return Err(Error::new(
                        ErrorKind::Corrupt,
                        format!("server {endpoint} answered a field of URI {uri} of {}", uris.len()),
                    ));
                };
                let location = FieldLocation { uri: uri.clone(), offset, length, crc32c };
                let archived_in = archived_in.map(Arc::new);
                fields.push(FieldEntry {
                    dataset: dataset.clone(),
                    collocation: collocation.clone(),
                    element,
                    location,
                    superseded,
                    archived_in,
                });
            }
        }
        let matches = Matches {
            datasets: self.datasets,
            collocations: self.collocations,
            fields,
            explanation: self.explanation,
            not_found: self.not_found,
            ..Matches::default()
        };
        Ok(matches)
    }
}

/// A resolve through `remote` ([`FieldStore::resolve`]).
pub(crate) fn resolve(remote: &dyn Remote, request: &Request, options: ListOptions, action: Option<ControlAction>) -> Result<Matches> {
    let answer = remote.call(&Operation::Resolve { request: request.to_string(), options, action })?;
    decode_matches(&answer, remote.endpoint())
}

/// A resolve's answer as a server sends it ([`Operation::run`]), each file's location
/// passed through `locations` (which signs it) once.
pub fn encode_matches(matches: Matches, locations: &dyn Fn(&mut FieldLocation)) -> Result<Vec<u8>> {
    json(&WireMatches::from_matches(matches, locations))
}

/// A resolve's answer as a client reads it from the server at `endpoint`: an answer that is
/// not one (a field's key or file out of place) is a [`ErrorKind::Corrupt`] error naming it.
pub fn decode_matches(answer: &[u8], endpoint: &str) -> Result<Matches> {
    let wire: WireMatches<'_> = serde_json::from_slice(answer).map_err(|e| not_a_report(endpoint, e))?;
    wire.into_matches(endpoint)
}

fn json<T: Serialize>(value: &T) -> Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(|e| Error::caused_by(ErrorKind::Io, "cannot encode an answer", e))
}

/// Runs `operation` through `remote` and reads its answer as a `T`; an answer that is not
/// one is an error naming the server.
pub fn call<T: serde::de::DeserializeOwned>(remote: &dyn Remote, operation: Operation) -> Result<T> {
    let answer = remote.call(&operation)?;
    serde_json::from_slice(&answer).map_err(|e| not_a_report(remote.endpoint(), e))
}

fn not_a_report(endpoint: &str, e: serde_json::Error) -> Error {
    Error::caused_by(ErrorKind::Corrupt, format!("server {endpoint} answered a call with something else than its report"), e)
}

/// `Axes` with the explanation of a request that matched nothing.
pub(crate) type AxesAnswer = (Axes, Option<String>);
