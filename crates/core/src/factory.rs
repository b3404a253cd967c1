//! Backends by their `type:` name. Each backend crate declares its config as a typed struct
//! (deserialised from its `catalogue:` or `store:` section, unknown keys refused) and exports a
//! [`Factory`] that builds its catalogue or store from one; the facade crate lists the
//! factories its build has (cargo features) and opens a config's sections through them. The
//! object pools of the benchmarks are found the same way: `TYPE:NAME` opens the pool of the
//! backend of that type ([`PoolSection`], with the backend's typed options), a directory
//! alone is POSIX's.
//!
//! ```
//! use fieldstore_core::factory::{Factory, Section};
//! use fieldstore_core::{Catalogue, Result};
//!
//! #[derive(serde::Deserialize)]
//! #[serde(deny_unknown_fields)]
//! struct MemoryConfig {
//!     capacity: u64,
//! }
//!
//! fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
//!     let config: MemoryConfig = section.typed()?;
//!     Err(section.error(format!("a memory catalogue of {} bytes is only an example", config.capacity)))
//! }
//!
//! pub const MEMORY: Factory = Factory { name: "memory", catalogue: Some(open_catalogue), store: None, object_pool: None };
//! ```

use serde::de::DeserializeOwned;
use serde_yaml::Mapping;

use crate::backend::{Catalogue, Store};
use crate::config::BackendConfig;
use crate::error::{Cause, Error, ErrorKind, Result};
use crate::objects::Pool;

/// Opens a backend's catalogue from its config section.
pub type OpenCatalogue = fn(&Section<'_>) -> Result<Box<dyn Catalogue>>;
/// Opens a backend's store from its config section.
pub type OpenStore = fn(&Section<'_>) -> Result<Box<dyn Store>>;
/// Opens a backend's object pool (the object API the field-io and ior benchmarks run on).
pub type OpenObjectPool = fn(&PoolSection<'_>) -> Result<Box<dyn Pool>>;

/// One backend's constructors. A backend may offer only a catalogue or only a store, and an
/// object pool or not.
pub struct Factory {
    /// Its `type:` name in a config, and its `TYPE:` in a pool's name.
    pub name: &'static str,
    /// Opens its catalogue; `None` if the backend has no catalogue.
    pub catalogue: Option<OpenCatalogue>,
    /// Opens its store; `None` if the backend has no store.
    pub store: Option<OpenStore>,
    /// Opens its object pool; `None` if the backend has none.
    pub object_pool: Option<OpenObjectPool>,
}

/// A config section being opened: which one it is and where it came from, for messages.
pub struct Section<'c> {
    /// `catalogue` or `store`.
    pub name: &'static str,
    /// The section's contents: its `type:` and the backend's own keys.
    pub config: &'c BackendConfig,
    /// The config's source (a file, a variable, the default).
    pub source: &'c str,
}

impl Section<'_> {
    /// The section's keys (all but `type`) as the backend's typed config. `T` should deny
    /// unknown fields; an error names the section, the key and what was wrong with it.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T> {
        typed_keys(&self.config.options).map_err(|(path, cause)| {
            let at = match path.as_str() {
                "." => self.name.to_string(),
                path => format!("{}.{path}", self.name),
            };
            self.error_because(format!("{at} (type '{}')", self.config.kind), cause)
        })
    }

    /// A config error about this section.
    pub fn error(&self, message: impl Into<String>) -> Error {
        Error::config(self.source, message)
    }

    /// A config error about this section that another error (`cause`, e.g. a parser's) showed.
    pub fn error_because(&self, message: impl Into<String>, cause: impl Into<Cause>) -> Error {
        Error::config_because(self.source, message, cause)
    }
}

/// The type of a pool named without one: a directory, POSIX's form.
pub const DIRECTORY_POOL: &str = "posix";

/// An object pool being opened: `TYPE:NAME`, or a directory (type [`DIRECTORY_POOL`]), and
/// the options given for pools, from which its backend takes its own.
pub struct PoolSection<'s> {
    /// The backend's `type:` name.
    pub kind: &'s str,
    /// The backend's part of the pool's name (what follows `TYPE:`; a directory whole): a
    /// pool, bucket or directory, perhaps with a prefix after a `/`.
    pub name: &'s str,
    /// The options of every backend's pools by key (`ceph_conf`, `daos_class`, ...): one
    /// command line gives them all, whatever the pool's type.
    pub options: &'s Mapping,
}

impl<'s> PoolSection<'s> {
    /// The pool `spec` names ([`pool_type`]), with `options`.
    pub fn new(spec: &'s str, options: &'s Mapping) -> Self {
        let (kind, name) = pool_type(spec);
        PoolSection { kind, name, options }
    }

    /// The name split at its first `/`: the pool or bucket, and the prefix (`None`: none).
    pub fn pool_and_prefix(&self) -> (&'s str, Option<&'s str>) {
        match self.name.split_once('/') {
            Some((pool, prefix)) => (pool, Some(prefix)),
            None => (self.name, None),
        }
    }

    /// The options as the backend's typed options. `T` takes the keys it knows with defaults
    /// for those missing, and must not deny the others (other backends' options); an error
    /// names the pool and the option.
    pub fn typed<T: DeserializeOwned>(&self) -> Result<T> {
        typed_keys(self.options).map_err(|(path, cause)| {
            Error::caused_by(ErrorKind::BadRequest, format!("pool {}:{}: option {path}", self.kind, self.name), cause)
        })
    }
}

/// The backend type of the pool `spec` names, and the rest of `spec`: `TYPE:NAME` where TYPE
/// is a type name (lowercase letters, digits, `-`, `_`), else ([`DIRECTORY_POOL`], `spec`).
pub fn pool_type(spec: &str) -> (&str, &str) {
    let is_type =
        |kind: &str| !kind.is_empty() && kind.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_');
    match spec.split_once(':') {
        Some((kind, name)) if is_type(kind) => (kind, name),
        _ => (DIRECTORY_POOL, spec),
    }
}

/// `keys` as a backend's typed config or options; an error says where in them (a path, `.`
/// for the whole) and the parser's error.
fn typed_keys<T: DeserializeOwned>(keys: &Mapping) -> std::result::Result<T, (String, serde_yaml::Error)> {
    serde_path_to_error::deserialize(serde_yaml::Value::Mapping(keys.clone())).map_err(|e| (e.path().to_string(), e.into_inner()))
}

/// The names of `factories` that offer what `offers` says, for messages.
fn names(factories: &[&Factory], offers: impl Fn(&Factory) -> bool) -> String {
    let names: Vec<&str> = factories.iter().filter(|f| offers(f)).map(|f| f.name).collect();
    if names.is_empty() {
        "none in this build".into()
    } else {
        names.join(", ")
    }
}

/// Opens the catalogue a section names with the factory of its `type:`.
pub fn open_catalogue(factories: &[&Factory], section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let open = factories.iter().find(|f| f.name == section.config.kind).and_then(|f| f.catalogue);
    match open {
        Some(open) => open(section),
        None => Err(unknown_type(section, &names(factories, |f| f.catalogue.is_some()))),
    }
}

/// Opens the store a section names with the factory of its `type:`.
pub fn open_store(factories: &[&Factory], section: &Section<'_>) -> Result<Box<dyn Store>> {
    let open = factories.iter().find(|f| f.name == section.config.kind).and_then(|f| f.store);
    match open {
        Some(open) => open(section),
        None => Err(unknown_type(section, &names(factories, |f| f.store.is_some()))),
    }
}

/// Opens the object pool a section names with the factory of its type.
pub fn open_object_pool(factories: &[&Factory], pool: &PoolSection<'_>) -> Result<Box<dyn Pool>> {
    let open = factories.iter().find(|f| f.name == pool.kind).and_then(|f| f.object_pool);
    match open {
        Some(open) => open(pool),
        None => Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "pool {}:{}: type '{}' is not known (known: {})",
                pool.kind,
                pool.name,
                pool.kind,
                names(factories, |f| f.object_pool.is_some())
            ),
        )),
    }
}

fn unknown_type(section: &Section<'_>, known: &str) -> Error {
    section.error(format!("{}.type '{}' is not known (known: {known})", section.name, section.config.kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Example {
        root: String,
        #[serde(default)]
        limit: Option<std::num::NonZeroU32>,
    }

    fn section(yaml: &str) -> BackendConfig {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn typed(yaml: &str) -> Result<Example> {
        let config = section(yaml);
        Section { name: "store", config: &config, source: "test.yaml" }.typed()
    }

    #[test]
    fn typed_sections_name_the_key_at_fault() {
        let example = typed("{type: x, root: /a, limit: 3}").unwrap();
        assert_eq!((example.root.as_str(), example.limit.map(|l| l.get())), ("/a", Some(3)));
        let unknown = typed("{type: x, root: /a, rot: /b}").unwrap_err();
        let parsers = std::error::Error::source(&unknown).and_then(|cause| cause.downcast_ref::<serde_yaml::Error>());
        assert!(parsers.is_some_and(|e| e.to_string().starts_with("unknown field `rot`")), "the parser's error is the source: {unknown:?}");
        let unknown = unknown.report().to_string();
        assert!(
            unknown.contains("test.yaml") && unknown.contains("store.rot (type 'x'): unknown field `rot`, expected `root` or `limit`"),
            "{unknown}"
        );
        let zero = typed("{type: x, root: /a, limit: 0}").unwrap_err().report().to_string();
        assert!(zero.contains("store.limit (type 'x')") && zero.contains("nonzero"), "{zero}");
        let missing = typed("{type: x}").unwrap_err().report().to_string();
        assert!(missing.contains("missing field `root`"), "{missing}");
    }

    #[test]
    fn an_unknown_type_lists_the_known_ones() {
        fn none(_: &Section<'_>) -> Result<Box<dyn Store>> {
            Err(Error::new(crate::error::ErrorKind::Unsupported, "never opened"))
        }
        let a = Factory { name: "a", catalogue: None, store: Some(none), object_pool: None };
        let b = Factory { name: "b", catalogue: None, store: Some(none), object_pool: None };
        let config = section("{type: c}");
        let err = open_store(&[&a, &b], &Section { name: "store", config: &config, source: "t" }).err().unwrap().to_string();
        assert!(err.contains("store.type 'c' is not known (known: a, b)"), "{err}");
        let err = open_catalogue(&[&a], &Section { name: "catalogue", config: &section("{type: a}"), source: "t" }).err().unwrap();
        assert!(err.to_string().contains("catalogue.type 'a' is not known (known: none in this build)"), "{err}");
    }

    #[test]
    fn a_pool_is_found_by_its_type_and_a_directory_is_posixs() {
        assert_eq!(pool_type("rados:fieldio/run1"), ("rados", "fieldio/run1"));
        assert_eq!(pool_type("s3-x:bucket"), ("s3-x", "bucket"));
        for directory in ["/tmp/objects", "objects", "./a:b", "/a:b", "Pools:x", ":x"] {
            assert_eq!(pool_type(directory), (DIRECTORY_POOL, directory));
        }
        let options = Mapping::new();
        let pool = PoolSection::new("daos:tank/run1", &options);
        assert_eq!(pool.pool_and_prefix(), ("tank", Some("run1")));
        assert_eq!(PoolSection::new("daos:tank", &options).pool_and_prefix(), ("tank", None));

        fn open(pool: &PoolSection<'_>) -> Result<Box<dyn Pool>> {
            Err(Error::new(ErrorKind::NotFound, format!("{} opened", pool.name)))
        }
        let a = Factory { name: "a", catalogue: None, store: None, object_pool: Some(open) };
        let b = Factory { name: "b", catalogue: None, store: None, object_pool: None };
        let opened = open_object_pool(&[&a, &b], &PoolSection::new("a:p/x", &options)).err().unwrap();
        assert_eq!((opened.kind(), opened.to_string().as_str()), (ErrorKind::NotFound, "p/x opened"));
        let err = open_object_pool(&[&a, &b], &PoolSection::new("b:p", &options)).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::Unsupported);
        assert!(err.to_string().contains("pool b:p: type 'b' is not known (known: a)"), "{err}");
    }

    #[test]
    fn pool_options_are_typed_and_other_backends_options_ignored() {
        #[derive(Debug, serde::Deserialize)]
        struct Options {
            #[serde(default)]
            class: Option<String>,
            #[serde(default)]
            count: u32,
        }
        let options: Mapping = serde_yaml::from_str("{class: OC_S2, user: admin}").unwrap();
        let typed: Options = PoolSection::new("x:p", &options).typed().unwrap();
        assert_eq!((typed.class.as_deref(), typed.count), (Some("OC_S2"), 0));
        let options: Mapping = serde_yaml::from_str("{count: many}").unwrap();
        let err = PoolSection::new("x:p", &options).typed::<Options>().unwrap_err();
        assert_eq!(err.kind(), ErrorKind::BadRequest);
        assert!(err.report().to_string().contains("pool x:p: option count: invalid type"), "{}", err.report());
    }
}
