//! Backends by their `type:` name. Each backend crate declares its config as a typed struct
//! (deserialised from its `catalogue:` or `store:` section, unknown keys refused) and exports a
//! [`Factory`] that builds its catalogue or store from one; the facade crate lists the
//! factories its build has (cargo features) and opens a config's sections through them.
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
//! pub const MEMORY: Factory = Factory { name: "memory", catalogue: Some(open_catalogue), store: None };
//! ```

use serde::de::DeserializeOwned;

use crate::backend::{Catalogue, Store};
use crate::config::BackendConfig;
use crate::error::{Cause, Error, Result};

/// Opens a backend's catalogue from its config section.
pub type OpenCatalogue = fn(&Section<'_>) -> Result<Box<dyn Catalogue>>;
/// Opens a backend's store from its config section.
pub type OpenStore = fn(&Section<'_>) -> Result<Box<dyn Store>>;

/// One backend's constructors. A backend may offer only a catalogue or only a store.
pub struct Factory {
    /// Its `type:` name in a config.
    pub name: &'static str,
    /// Opens its catalogue; `None` if the backend has no catalogue.
    pub catalogue: Option<OpenCatalogue>,
    /// Opens its store; `None` if the backend has no store.
    pub store: Option<OpenStore>,
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
        let keys = serde_yaml::Value::Mapping(self.config.options.clone());
        serde_path_to_error::deserialize(keys).map_err(|e| {
            let at = match e.path().to_string().as_str() {
                "." => self.name.to_string(),
                path => format!("{}.{path}", self.name),
            };
            self.error_because(format!("{at} (type '{}')", self.config.kind), e.into_inner())
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
        let a = Factory { name: "a", catalogue: None, store: Some(none) };
        let b = Factory { name: "b", catalogue: None, store: Some(none) };
        let config = section("{type: c}");
        let err = open_store(&[&a, &b], &Section { name: "store", config: &config, source: "t" }).err().unwrap().to_string();
        assert!(err.contains("store.type 'c' is not known (known: a, b)"), "{err}");
        let err = open_catalogue(&[&a], &Section { name: "catalogue", config: &section("{type: a}"), source: "t" }).err().unwrap();
        assert!(err.to_string().contains("catalogue.type 'a' is not known (known: none in this build)"), "{err}");
    }
}
