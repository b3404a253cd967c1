//! File names from key values. Values were validated by the core (no `/`, `,`, whitespace or
//! control characters, at most 128 bytes); here every byte outside `[A-Za-z0-9_+-.]` and a
//! leading `.` are percent-escaped, so a name can never be `.`, `..`, hidden, or contain a
//! separator, and names of distinct keys stay distinct.

use std::path::{Component, Path, PathBuf};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;

/// Longest directory or file name produced (most file systems allow 255 bytes).
pub const MAX_NAME: usize = 240;

/// The directory name of a dataset: its values, escaped, joined by `:`.
pub fn dataset_dir_name(dataset: &Key) -> Result<String> {
    checked_name(dataset, "dataset key")
}

/// The collocation part of a file name.
pub fn collocation_name(collocation: &Key) -> Result<String> {
    checked_name(collocation, "collocation key")
}

fn checked_name(key: &Key, what: &str) -> Result<String> {
    let name = key.values().map(escape).collect::<Vec<_>>().join(":");
    if name.len() > MAX_NAME {
        return Err(Error::new(
            ErrorKind::BadRequest,
            format!("{what} {key} is too long to name a file ({} bytes escaped, limit {MAX_NAME})", name.len()),
        ));
    }
    Ok(if name.is_empty() { "_".into() } else { name })
}

fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for (i, b) in value.bytes().enumerate() {
        let plain = b.is_ascii_alphanumeric() || b == b'_' || b == b'+' || b == b'-' || (b == b'.' && i > 0);
        if plain {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Resolves a store-relative path from an index (`dataset-dir/file`) under `root`, refusing
/// anything that could leave it (absolute paths, `..`, hidden names).
pub fn resolve_relative(root: &Path, relative: &str) -> Result<PathBuf> {
    let path = Path::new(relative);
    let ok = path.components().count() == 2
        && path.components().all(|c| matches!(c, Component::Normal(n) if !n.to_string_lossy().starts_with('.')));
    if !ok {
        return Err(Error::new(ErrorKind::Corrupt, format!("refusing location {relative:?}: not a dataset-relative file name")));
    }
    Ok(root.join(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_cannot_escape_or_hide() {
        let k = Key::from_pairs([("class", ".."), ("expver", ".hidden"), ("x", "a.b"), ("y", "")]);
        let name = dataset_dir_name(&k).unwrap();
        assert_eq!(name, "%2E.:%2Ehidden:a.b:");
        assert!(!name.starts_with('.') && !name.contains('/'));
        assert_eq!(dataset_dir_name(&Key::new()).unwrap(), "_");
    }

    #[test]
    fn distinct_values_give_distinct_names() {
        let a = Key::from_pairs([("a", "x%41")]);
        let b = Key::from_pairs([("a", "xA")]);
        assert_ne!(dataset_dir_name(&a).unwrap(), dataset_dir_name(&b).unwrap());
    }

    #[test]
    fn over_long_names_are_refused() {
        let k = Key::from_pairs((0..3).map(|i| (format!("k{i}"), "%".repeat(100))));
        assert!(dataset_dir_name(&k).unwrap_err().to_string().contains("too long"));
    }

    #[test]
    fn relative_locations_stay_under_the_root() {
        let root = Path::new("/r");
        assert_eq!(resolve_relative(root, "ds/f.data").unwrap(), Path::new("/r/ds/f.data"));
        for bad in ["/etc/passwd", "../x/y", "ds/../../y", "ds", ".x/y", "a/b/c"] {
            assert!(resolve_relative(root, bad).is_err(), "{bad}");
        }
    }
}
