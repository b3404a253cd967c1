//! fieldstore's conformance suite, public so that every backend, in this workspace or out of
//! it, proves the same guarantees: FDB5's semantics (docs/consistency.md) as fieldstore
//! promises them, on a catalogue/store pairing.
//!
//! A pairing is a [`Site`]: fresh storage, the config sections that open it, and the
//! backends' factories that open those (this build's, [`BACKENDS`], unless told otherwise).
//! Each property in [`properties`] (one process) and [`processes`] (several) is a function of
//! a site; [`pairing_tests!`] makes one `#[test]` per property for a pairing, so a failure
//! names its pairing and property (`posix_rados::locks_wipe_and_where`).
//!
//! A backend outside this repository runs the suite through its own factory: a test file of
//! its crate names the factories that open the site's sections, and the site. (The checks of
//! the object API, `fieldstore::objects::conformance::check_pool`, take an opened pool.)
//!
//! ```ignore
//! use fieldstore::factory::Factory;
//! use fieldstore_conformance::{Grouping, Site};
//!
//! const BACKENDS: &[&Factory] = &[&mine::FACTORY, &fieldstore::posix::FACTORY];
//!
//! fieldstore_conformance::pairing_tests!(mine_posix, BACKENDS, {
//!     Some(Site::new("mine+posix", Grouping::Writer, |dir| {
//!         format!("catalogue: {{type: mine, url: 'mem://'}}\nstore: {{type: posix, root: {}}}\n", dir.display())
//!     }))
//! });
//! ```
//!
//! The in-tree pairings are in [`sites`]: where a service a backend needs is missing (a Ceph
//! cluster, the libdaos emulation) its pairings are skipped, and the skip said on standard
//! error, unless `FIELDSTORE_TEST_REQUIRE_SERVICES` is set (CI), which makes it a failure.

pub mod processes;
pub mod properties;
pub mod sites;
pub mod support;

use std::path::{Path, PathBuf};

use fieldstore::factory::Factory;
use fieldstore::{Config, FieldStore};

pub use fieldstore::BACKENDS;

/// Fresh, empty storage for one catalogue/store pairing, and the config that opens it.
pub struct Site {
    /// "catalogue+store", for messages.
    pub name: String,
    dir: tempfile::TempDir,
    /// The `catalogue:` and `store:` sections.
    sections: String,
    config: PathBuf,
    /// How the store groups fields into objects or files.
    pub grouping: Grouping,
    /// Texts that `where` must show in the description of the catalogue (none: unchecked).
    pub catalogue_described_by: Vec<String>,
    /// The factories that open the sections.
    backends: Vec<&'static Factory>,
    /// A site served: the servers in this process, and the site they serve.
    served: Option<Served>,
}

/// What a served site keeps running ([`Site::served`]).
struct Served {
    /// The site served.
    inner: Box<Site>,
    /// Its server, and those of [`Site::open_with_schema`], stopped with the site.
    servers: std::sync::Mutex<Vec<fieldstore_server::Background>>,
}

/// A server in this process over `fs`, on loopback, without TLS or tokens (the tests of the
/// server itself check those).
fn serve(fs: FieldStore) -> fieldstore_server::Background {
    let listen = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let options = fieldstore_server::ServeOptions {
        listen,
        tls: None,
        access: fieldstore_server::Access::Open,
        insecure_anywhere: false,
        limits: fieldstore_server::Limits::default(),
    };
    fieldstore_server::Background::start(fs, options).expect("a server starts")
}

/// The config sections of a client of a server at `address`.
fn remote_sections(address: std::net::SocketAddr) -> String {
    let section = format!("{{type: remote, endpoint: 'http://{address}'}}");
    format!("catalogue: {section}\nstore: {section}\n")
}

impl Site {
    /// A site in a new temporary directory, opened by the sections `sections` writes for it
    /// (given that directory, for backends that keep files).
    pub fn new(name: &str, grouping: Grouping, sections: impl FnOnce(&Path) -> String) -> Site {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let sections = sections(dir.path());
        let config = dir.path().join("config.yaml");
        std::fs::write(&config, &sections).expect("the site's config file");
        Site {
            name: name.into(),
            dir,
            sections,
            config,
            grouping,
            catalogue_described_by: Vec::new(),
            backends: BACKENDS.to_vec(),
            served: None,
        }
    }

    /// `inner` served by a server in this process, the site a client of it (`type: remote`):
    /// every property then holds through the server as it does on `inner`.
    pub fn served(inner: Site) -> Site {
        let server = serve(inner.open());
        let mut site = Site::new(&format!("served {}", inner.name), inner.grouping, |_| remote_sections(server.address));
        // `where` through a server says where the server keeps the data set.
        site.catalogue_described_by = inner.catalogue_described_by.clone();
        site.served = Some(Served { inner: Box::new(inner), servers: std::sync::Mutex::new(vec![server]) });
        site
    }

    /// The site, its sections opened by `backends` instead of this build's.
    pub fn opened_by(self, backends: &[&'static Factory]) -> Site {
        Site { backends: backends.to_vec(), ..self }
    }

    /// Whether the site's handles are clients of a server ([`Site::served`]).
    pub fn is_served(&self) -> bool {
        self.served.is_some()
    }

    /// The gap below which the store that reads the site's fields reads two spans at once
    /// ([`FieldStore::merge_gap`]): a served site's server's, which extracts for its clients.
    pub fn reading_merge_gap(&self) -> u64 {
        match &self.served {
            Some(served) => served.inner.open().merge_gap(),
            None => self.open().merge_gap(),
        }
    }

    /// A new handle on the site.
    pub fn open(&self) -> FieldStore {
        open_config_with(&self.config, &self.backends)
    }

    /// Opens the site with a config that names a schema file.
    pub fn open_with_schema(&self, schema: &Path) -> FieldStore {
        if let Some(served) = &self.served {
            // The server's config names the schema: one more server, over the same storage.
            let server = serve(served.inner.open_with_schema(schema));
            let config = Config::parse(&self.name, &remote_sections(server.address)).expect("a remote config");
            served.servers.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push(server);
            return fieldstore::open_with(&config, &self.backends).expect("the site opens");
        }
        let yaml = format!("schema: {}\n{}", schema.display(), self.sections);
        fieldstore::open_with(&Config::parse(&self.name, &yaml).expect("the site's config"), &self.backends).expect("the site opens")
    }

    /// The config file (for child processes).
    pub fn config(&self) -> &Path {
        &self.config
    }

    /// The temporary directory (POSIX parts live under `root/`).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }
}

/// The store a config file describes, opened by `backends`.
fn open_config_with(path: &Path, backends: &[&Factory]) -> FieldStore {
    fieldstore::open_with(&Config::from_file(path).expect("the site's config"), backends).expect("the site opens")
}

/// How a store groups fields into objects or files: what a purge can remove without removing
/// a live field, and which fields one read can fetch together.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// An object per field (RADOS, DAOS, S3): purge removes superseded fields one by one; each
    /// field is one read.
    Field,
    /// An object per writer, collocation and flush (S3 with `pack: true`): purge removes an
    /// object once every field in it is superseded; adjacent fields are one read.
    Flush,
    /// A file a writer appends each collocation's fields to, flush after flush (POSIX): purge
    /// removes it once every field in it is superseded; adjacent fields are one read.
    Writer,
}

/// One `#[test]` per property of [`properties`] and [`processes`] for one pairing, in a module
/// of the name given, and the child writer the process properties start; `$site` is an
/// expression giving an `Option<Site>` (`None`: skipped, said by whoever decided it), and
/// `$backends` (optional: [`BACKENDS`] without) the factories that open it, in the site and
/// in the child writers. Both are read in the module, which sees its parent's names. Every
/// property is listed here: a new one joins these lists.
#[macro_export]
macro_rules! pairing_tests {
    ($module:ident, $site:expr) => {
        $crate::pairing_tests!(@module $module, $crate::BACKENDS, $site);
    };
    ($module:ident, $backends:expr, $site:expr) => {
        $crate::pairing_tests!(@module $module, $backends, ($site).map(|site: $crate::Site| site.opened_by($backends)));
    };
    (@module $module:ident, $backends:expr, $site:expr) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;

            fn site() -> Option<$crate::Site> {
                $site
            }

            /// The child writer process properties start: this test, run alone.
            #[test]
            fn child_writer() {
                $crate::processes::child_writer($backends);
            }

            /// This module's `child_writer` as the test harness names it.
            fn child() -> String {
                let path = module_path!();
                format!("{}::child_writer", path.split_once("::").map_or(path, |(_, rest)| rest))
            }

            $crate::pairing_tests!(@each site;
                grib_corpus_round_trips_byte_for_byte,
                nothing_is_visible_before_flush_and_replacement_waits_for_it,
                results_come_in_numeric_order_and_requests_canonicalise,
                empty_results_say_why,
                archive_errors_name_the_culprit_and_keep_values_in_their_place,
                every_value_archive_accepts_round_trips,
                locks_wipe_and_where,
                datasets_keep_the_schema_they_were_created_with,
                a_long_lived_reader_follows_wipes_and_recreation,
                a_handle_archives_again_into_a_data_set_it_wiped,
                retrieve_and_wipe_locks_and_merged_reads,
                many_requests_resolved_at_once_answer_as_each_alone,
                the_web_catalogue_counts_what_a_listing_lists,
                partly_overlapping_flushes_supersede_exactly_the_shared_fields,
                a_bad_message_deep_in_a_large_file_is_named_and_nothing_is_archived,
                errors_carry_their_kind,
                purge_keeps_the_bytes_of_what_stays_listed,
                hide_takes_a_data_set_s_fields_from_readers_and_keeps_their_bytes,
                overlay_shows_a_data_set_under_another_key_and_its_wipe_keeps_the_source,
                dump_shows_the_indexes_readers_see,
                compaction_changes_nothing_a_reader_sees,
                one_handle_serves_writing_and_reading_threads_at_once,
                side_objects_are_kept_whole_and_go_with_their_wipe,
                kept_packings_let_a_new_reader_extract_reading_little,
                packings_kept_at_archive_let_a_new_reader_extract_reading_little
            );
            $crate::pairing_tests!(@processes site, child;
                concurrent_writers_and_readers_see_every_flushed_field_and_nothing_else,
                writers_killed_at_random_moments_lose_nothing_flushed_and_leave_no_partial_field
            );
        }
    };
    (@each $site:ident; $($property:ident),*) => {
        $(
            #[test]
            fn $property() {
                if let Some(site) = $site() {
                    $crate::properties::$property(&site);
                }
            }
        )*
    };
    (@processes $site:ident, $child:ident; $($property:ident),*) => {
        $(
            #[test]
            fn $property() {
                if let Some(site) = $site() {
                    $crate::processes::$property(&site, &$child());
                }
            }
        )*
    };
}
