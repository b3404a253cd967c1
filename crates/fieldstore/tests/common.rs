//! Helpers shared by the integration tests: stores in temporary directories, a GRIB corpus
//! made from ecCodes' samples, and payloads that can be verified from their identifiers.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use fieldstore::{Config, FieldStore, Key, Request};

/// A store (default schema) rooted at `root`.
pub fn open_at(root: &Path) -> FieldStore {
    let yaml = format!("catalogue: {{type: posix, root: {0}}}\nstore: {{type: posix, root: {0}}}\n", root.display());
    fieldstore::open(&Config::parse("test", &yaml).unwrap()).unwrap()
}

/// The store a config file describes.
pub fn open_config(path: &Path) -> FieldStore {
    fieldstore::open(&Config::from_file(path).unwrap()).unwrap()
}

/// Fresh, empty storage for one catalogue/store pairing: a temporary directory for POSIX
/// parts, a namespace prefix of its own in the test cluster's pool for RADOS parts, a root
/// container label of its own in the emulated DAOS pool for DAOS parts.
pub struct Site {
    /// "catalogue+store", for messages.
    pub name: String,
    dir: tempfile::TempDir,
    /// The `catalogue:` and `store:` sections.
    sections: String,
    config: PathBuf,
    /// Whether the store keeps each field in an object of its own (so purge can remove
    /// superseded fields one by one) rather than appending a writer's fields to one file.
    pub object_per_field: bool,
}

impl Site {
    /// The pairing, if the services its backends need are there (else the skip is said).
    pub fn try_new(catalogue: &str, store: &str) -> Option<Site> {
        (available(catalogue) && available(store)).then(|| Site::new(catalogue, store))
    }

    pub fn new(catalogue: &str, store: &str) -> Site {
        let dir = tempfile::tempdir().unwrap();
        let sections = format!("catalogue: {}\nstore: {}\n", section(catalogue, dir.path()), section(store, dir.path()));
        let config = dir.path().join("config.yaml");
        std::fs::write(&config, &sections).unwrap();
        eprintln!("pairing {catalogue}+{store}");
        Site { name: format!("{catalogue}+{store}"), dir, sections, config, object_per_field: !store.starts_with("posix") }
    }

    pub fn open(&self) -> FieldStore {
        open_config(&self.config)
    }

    /// Opens the site with a config that names a schema file.
    pub fn open_with_schema(&self, schema: &Path) -> FieldStore {
        let yaml = format!("schema: {}\n{}", schema.display(), self.sections);
        fieldstore::open(&Config::parse(&self.name, &yaml).unwrap()).unwrap()
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

/// A backend's config section for a site in `dir`.
fn section(kind: &str, dir: &Path) -> String {
    match kind {
        "posix" => format!("{{type: posix, root: {}}}", dir.join("root").display()),
        "posix-ordered" => format!("{{type: posix, root: {}, commit: ordered}}", dir.join("root").display()),
        "rados" => rados_section("FIELDSTORE_TEST_RADOS_POOL", "fieldstore", dir),
        "rados-rep2" => rados_section("FIELDSTORE_TEST_RADOS_POOL_REP2", "fieldstore-rep2", dir),
        "rados-ec21" => rados_section("FIELDSTORE_TEST_RADOS_POOL_EC", "fieldstore-ec21", dir),
        "daos" => {
            let (library, pool) = emulated_daos_pool();
            let unique = dir.file_name().unwrap().to_string_lossy().replace(|c: char| !c.is_ascii_alphanumeric(), "");
            format!("{{type: daos, pool: {pool}, library: {library}, root_container: 't{}{unique}'}}", std::process::id())
        }
        other => panic!("no test site for backend {other}"),
    }
}

/// A RADOS section in the test cluster's pool named by environment variable `pool_variable`
/// (scripts/ceph-cluster.sh makes and exports them), with a namespace prefix of its own.
fn rados_section(pool_variable: &str, default_pool: &str, dir: &Path) -> String {
    let conf = fieldstore_testing::ceph_conf().expect("a Ceph cluster for a RADOS pairing").display().to_string();
    let pool = fieldstore_testing::rados_pool(pool_variable, default_pool);
    let unique = dir.file_name().unwrap().to_string_lossy();
    format!("{{type: rados, pool: {pool}, ceph_conf: {conf}, namespace_prefix: 'test-{}-{unique}-'}}", std::process::id())
}

/// The libdaos emulation and the pool the tests use in it (created if missing).
pub fn emulated_daos_pool() -> (String, &'static str) {
    let (library, root) = fieldstore_testing::daos_emulation().expect("the libdaos emulation for a DAOS pairing");
    std::fs::create_dir_all(root.join("tests")).unwrap();
    (library, "tests")
}

/// Whether the services a backend needs are there (a skip is said where not).
fn available(kind: &str) -> bool {
    match kind {
        k if k.starts_with("rados") => fieldstore_testing::ceph_conf().is_some(),
        "daos" => fieldstore_testing::daos_emulation().is_some(),
        _ => true,
    }
}

/// Every pairing of the backends this build has (`fieldstore::BACKENDS`), each on fresh
/// storage; the POSIX catalogue in FDB5's
/// commit order with the POSIX store (the default here, on a local disk, embeds commits);
/// and RADOS as production would run it, fields in an erasure-coded 2+1 pool and the
/// catalogue in a replicated size-2 pool.
/// Pairings whose services are missing are skipped, and the skip said
/// (`fieldstore_testing`).
pub fn sites() -> Vec<Site> {
    let kinds: Vec<&str> = fieldstore::BACKENDS.iter().map(|f| f.name).filter(|k| available(k)).collect();
    let pairings = kinds.iter().flat_map(|c| kinds.iter().map(move |s| Site::new(c, s)));
    pairings.chain(Site::try_new("posix-ordered", "posix")).chain(Site::try_new("rados-rep2", "rados-ec21")).collect()
}

/// Bytes derived from an identifier, so a reader can check what it got.
pub fn payload(identifier: &Key, size: usize) -> Vec<u8> {
    let text = format!("{identifier}|");
    text.as_bytes().iter().cycle().take(size.max(text.len())).copied().collect()
}

pub fn request(text: &str) -> Request {
    Request::parse(text).unwrap()
}

/// Retrieves a request's bytes, or the explanation of why nothing matched.
pub fn retrieve(fs: &FieldStore, text: &str) -> Result<Vec<u8>, String> {
    let (mut reader, why) = fs.retrieve(&request(text)).map_err(|e| e.to_string())?;
    if let Some(why) = why {
        return Err(why);
    }
    let mut out = Vec::new();
    reader.read_to_end(&mut out).map_err(|e| e.to_string())?;
    Ok(out)
}

fn ecmwf_keys<'a>(stream: &'a str, kind: &'a str, levtype: &'a str) -> Vec<(&'a str, &'a str)> {
    vec![
        ("centre", "98"),
        ("setLocalDefinition", "1"),
        ("localDefinitionNumber", "1"),
        ("class", "od"),
        ("stream", stream),
        ("type", kind),
        ("expver", "0001"),
        ("date", "20231201"),
        ("time", "1200"),
        ("levtype", levtype),
    ]
}

/// One GRIB corpus entry: a message and a description.
pub struct CorpusField {
    pub what: String,
    pub bytes: Vec<u8>,
}

/// (template, stream, type, levtype, levels, params, ensemble numbers)
type CorpusCase =
    (&'static str, &'static str, &'static str, &'static str, &'static [&'static str], &'static [&'static str], &'static [&'static str]);

/// GRIB1 and GRIB2; sfc, pl and ml; deterministic and ensemble; several streams.
pub fn corpus() -> Vec<CorpusField> {
    let mut out = Vec::new();
    let cases: &[CorpusCase] = &[
        // template, stream, type, levtype, levels, params, numbers
        ("GRIB1", "oper", "fc", "pl", &["1000", "500", "850"], &["130", "131"], &[]),
        ("GRIB2", "oper", "an", "sfc", &[], &["167", "151"], &[]),
        ("reduced_gg_ml_grib2", "oper", "fc", "ml", &["1", "137"], &["133"], &[]),
        ("reduced_gg_ml_grib1", "scda", "fc", "ml", &["60"], &["130"], &[]),
        ("GRIB2", "enfo", "pf", "pl", &["500"], &["130"], &["1", "2", "10"]),
        ("GRIB1", "enfo", "pf", "sfc", &[], &["167"], &["3"]),
        ("gg_sfc_grib2", "wave", "fc", "sfc", &[], &["140229"], &[]),
    ];
    for (template, stream, kind, levtype, levels, params, numbers) in cases {
        let grib2 = !template.contains("grib1") && *template != "GRIB1";
        let levels: Vec<&str> = if levels.is_empty() { vec![""] } else { levels.to_vec() };
        let numbers: Vec<&str> = if numbers.is_empty() { vec![""] } else { numbers.to_vec() };
        for step in ["0", "6", "12"] {
            for level in &levels {
                for param in *params {
                    for number in &numbers {
                        let mut keys = ecmwf_keys(stream, kind, levtype);
                        keys.push(("step", step));
                        if !level.is_empty() {
                            keys.push(("level", level));
                        }
                        keys.push(("paramId", param));
                        if !number.is_empty() {
                            if grib2 {
                                keys.push(("productDefinitionTemplateNumber", "1"));
                            }
                            keys.push(("number", number));
                        }
                        let bytes =
                            fieldstore::grib::sample_message(template, &keys).unwrap_or_else(|e| panic!("{template} {keys:?}: {e}"));
                        out.push(CorpusField { what: format!("{template} {keys:?}"), bytes });
                    }
                }
            }
        }
    }
    out
}
