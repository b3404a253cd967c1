//! Overlays (FDB5's `fdb-overlay`): one data set's fields shown under another data set's key,
//! differing only in keywords that may vary (`class` and `expver` by default), without
//! copying a byte. The overlay is a record in the target's log ([`Overlays`](crate::backend::Overlays)), read by every
//! reader at once; readers match the overlaid data set's fields as the target's, after the
//! target's own ([`FieldStore::resolve`]). Wipes, purges and hides of the target change its own
//! fields only: the overlaid data set's files are never the target's to remove.

use serde::{Deserialize, Serialize};

use super::FieldStore;
use crate::backend::ControlAction;
use crate::error::{Error, ErrorKind, Result};
use crate::key::Key;
use crate::request::Request;
use crate::types::KeywordType;

/// The keywords that may differ between an overlay's source and target unless told otherwise
/// (FDB5's `--variable-keys` default).
pub const VARIABLE_KEYS: [&str; 2] = ["class", "expver"];

/// How to overlay ([`FieldStore::overlay`]).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OverlayOptions {
    /// Stop showing the source instead (FDB5's `--remove`).
    pub remove: bool,
    /// Overlay onto a target that exists already (FDB5's `--force`).
    pub force: bool,
    /// The keywords whose values may differ between source and target.
    pub variable_keys: Vec<String>,
}

impl Default for OverlayOptions {
    fn default() -> Self {
        OverlayOptions { remove: false, force: false, variable_keys: VARIABLE_KEYS.iter().map(|k| k.to_string()).collect() }
    }
}

/// What an overlay did ([`FieldStore::overlay`]).
#[derive(Debug, Serialize, Deserialize)]
pub struct OverlayReport {
    /// The data set shown.
    pub source: Key,
    /// The data set it is shown as part of.
    pub target: Key,
    /// Whether the source is now shown (false after a removal).
    pub shown: bool,
    /// Whether the target was made by this overlay.
    pub target_created: bool,
    /// The data sets overlaid onto the target now, oldest first.
    pub overlaid: Vec<Key>,
}

impl FieldStore {
    /// Shows data set `source` as part of data set `target` (FDB5's `fdb-overlay`), or with
    /// `remove` stops showing it. The keys must have the same keywords and differ only in
    /// `variable_keys`; the source must exist; the target must not, unless `force` (it is made
    /// with the source's schema), and with `remove` must show the source. A target locked for
    /// archiving is not changed. Works on every catalogue that keeps overlays (POSIX and the
    /// object stores); FDB5's own databases, read in place, are FDB5's to overlay.
    pub fn overlay(&self, source: &Key, target: &Key, options: &OverlayOptions) -> Result<OverlayReport> {
        if let Some(remote) = self.remote() {
            let operation = super::Operation::Overlay { source: source.clone(), target: target.clone(), options: options.clone() };
            return super::remote::call(remote, operation);
        }
        check_keys(source, target, &options.variable_keys)?;
        let source_schema = self.catalogue().schema_text(source)?;
        let Some(source_schema) = source_schema else {
            return Err(Error::new(ErrorKind::NotFound, format!("source data set not found: {{{source}}}")));
        };
        let exists = self.catalogue().schema_text(target)?.is_some();
        match (options.remove, exists) {
            (true, false) => return Err(Error::new(ErrorKind::NotFound, format!("target data set must already exist: {{{target}}}"))),
            (false, true) if !options.force => {
                return Err(Error::new(
                    ErrorKind::Conflict,
                    format!("target data set already exists: {{{target}}} (to overlay onto it all the same, use --force)"),
                ))
            }
            _ => {}
        }
        if exists && self.catalogue().locks(target)?.contains(&ControlAction::Archive) {
            return Err(Error::Locked { dataset: target.to_string(), action: "archive".into() });
        }
        if !exists {
            self.catalogue().writer()?.create(target, &source_schema)?;
        }
        let Some(mut view) = self.catalogue().open(target)? else {
            return Err(Error::new(ErrorKind::NotFound, format!("target data set {{{target}}} went as it was overlaid (wiped meanwhile)")));
        };
        // The overlays in effect now: the log read to its end.
        view.indexes()?;
        let describe = self.catalogue().describe(target);
        let overlays = view.overlays().ok_or_else(|| {
            Error::new(
                ErrorKind::Unsupported,
                format!("{describe}: this catalogue keeps no overlays (FDB5's own databases: use FDB5's fdb-overlay)"),
            )
        })?;
        let shown = overlays.overlaid().contains(source);
        if options.remove && !shown {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("cannot remove {{{source}}} from {{{target}}}: it is not overlaid onto it"),
            ));
        }
        // Overlaying what is shown already changes nothing: no record.
        if options.remove || !shown {
            overlays.set_overlay(source, !options.remove)?;
        }
        Ok(OverlayReport {
            source: source.clone(),
            target: target.clone(),
            shown: !options.remove,
            target_created: !exists,
            overlaid: overlays.overlaid().to_vec(),
        })
    }
}

impl FieldStore {
    /// The one data set a request names whole, as FDB5's tools read a DB request: the
    /// keywords of the data set level of the first schema rule it gives
    /// ([`crate::schema::Schema::dataset_level`]), each with one value, canonical.
    pub fn dataset_named(&self, request: &Request) -> Result<Key> {
        let schema = self.schema();
        let mut given: Vec<(&str, String)> = Vec::new();
        for keyword in request.keywords() {
            let ty = schema.global_types().iter().find(|(k, _)| k == keyword).map_or(KeywordType::Default, |(_, t)| *t);
            // `k=all` names no one value: as if not given.
            if let Some(values) = request.values(keyword, ty)? {
                given.push((keyword, values.join("/")));
            }
        }
        let value = |keyword: &str| given.iter().find(|(k, _)| *k == keyword).map(|(_, v)| v.as_str());
        let pairs = schema.dataset_level(value).map_err(|missing| {
            Error::new(ErrorKind::BadRequest, format!("{request} names no data set: the schema's data sets need '{missing}'"))
        })?;
        if let Some((keyword, values)) = pairs.iter().find(|(_, v)| v.contains('/')) {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("{request} names several data sets ({keyword}={values}): give one value"),
            ));
        }
        Ok(Key::from_pairs(pairs))
    }
}

/// Checks that an overlay's source and target have the same keywords and differ only in
/// `variable_keys` (and are not the same data set), naming what does not.
fn check_keys(source: &Key, target: &Key, variable_keys: &[String]) -> Result<()> {
    let bad = |message: String| Err(Error::new(ErrorKind::BadRequest, message));
    if !source.keywords().eq(target.keywords()) {
        return bad(format!("keys insufficiently matching for an overlay: {{{source}}} : {{{target}}} (they need the same keywords)"));
    }
    for ((keyword, from), (_, to)) in source.iter().zip(target.iter()) {
        if from != to && !variable_keys.iter().any(|k| k == keyword) {
            return bad(format!(
                "key {keyword} not allowed to differ between data sets: {{{source}}} : {{{target}}} (may differ: {})",
                variable_keys.join(", ")
            ));
        }
    }
    if source == target {
        return bad(format!("a data set cannot be overlaid onto itself: {{{source}}}"));
    }
    Ok(())
}
