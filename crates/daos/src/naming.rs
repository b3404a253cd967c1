//! Container labels and object ids made from names.
//!
//! DAOS labels are 1 to 127 characters of `[A-Za-z0-9._:-]`. A dataset's container label is
//! the instance's root label, `-`, and the dataset key in a form that uses only those:
//! letters and digits stay, `=` becomes `.`, `,` becomes `:`, and any other byte becomes `_`
//! and two hex digits (`class=od,expver=0001` -> `class.od:expver.0001`). The escaped form
//! never contains `-` and root labels may not either, so different keys or roots never
//! share a label; a form that would make the label too long becomes `--` and the key's MD5.

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::Key;
use fieldstore_daos_sys::DAOS_PROP_LABEL_MAX_LEN;
use md5::{Digest, Md5};

/// Longest root label: leaves room for the datasets' part.
pub const ROOT_LABEL_MAX: usize = 48;

/// A root label: 1 to 48 characters of `[A-Za-z0-9._:]`.
pub fn check_root_label(label: &str) -> Result<()> {
    let fine =
        (1..=ROOT_LABEL_MAX).contains(&label.len()) && label.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':'));
    if fine {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::BadConfig,
            format!("DAOS root container label {label:?} must be 1 to {ROOT_LABEL_MAX} characters of letters, digits, '.', '_' and ':'"),
        ))
    }
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'=' => out.push('.'),
            b',' => out.push(':'),
            _ if b.is_ascii_alphanumeric() => out.push(b as char),
            _ => out.push_str(&format!("_{b:02x}")),
        }
    }
    out
}

fn md5_hex(text: &str) -> String {
    Md5::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The label of the container holding `name` (a dataset key's text, or an object-API
/// container name) under `root`.
pub fn container_label(root: &str, name: &str) -> String {
    let label = format!("{root}-{}", escape(name));
    if label.len() <= DAOS_PROP_LABEL_MAX_LEN {
        label
    } else {
        format!("{root}--{}", md5_hex(name))
    }
}

/// The label of a data set's container under `root`: [`container_label`] of the key's text.
pub fn dataset_label(root: &str, dataset: &Key) -> String {
    container_label(root, &dataset.to_string())
}

/// The 96 user bits of an object id from a name (so racing creators converge on one object).
pub fn hashed_oid(name: &str) -> (u64, u32) {
    let digest = Md5::digest(name.as_bytes());
    (u64::from_le_bytes(digest[..8].try_into().unwrap()), u32::from_le_bytes(digest[8..12].try_into().unwrap()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_daos_sys::label_is_valid;

    #[test]
    fn labels_are_valid_distinct_and_readable() {
        let key = Key::parse("class=od,expver=0001,stream=oper,date=20240101,time=0000").unwrap();
        assert_eq!(dataset_label("fs", &key), "fs-class.od:expver.0001:stream.oper:date.20240101:time.0000");
        let names = ["a=b", "a=b,c=d", "a.b", "a_2eb", "../x", "a/b", "a-b", "", &"x".repeat(200)];
        let labels: Vec<String> = names.iter().map(|n| container_label("root", n)).collect();
        for label in &labels {
            assert!(label_is_valid(label), "{label}");
        }
        let distinct: std::collections::HashSet<&String> = labels.iter().collect();
        assert_eq!(distinct.len(), labels.len(), "{labels:?}");
        assert!(labels[8].starts_with("root--"), "a long name is hashed");
        assert!(check_root_label("fieldstore").is_ok());
        for bad in ["", "a-b", "a/b", &"r".repeat(49)] {
            assert!(check_root_label(bad).is_err(), "{bad}");
        }
    }
}
