//! What a system answered to one case, in a form both systems' answers can be compared in:
//! lines sorted (list order is a documented difference), axes as sets, retrieved bytes as
//! they are (their order is compared), files on disk by data set and collocation.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// One system's answer to one case.
#[derive(Clone, Debug)]
pub enum Outcome {
    /// `list --porcelain` lines, sorted.
    Lines(Vec<String>),
    /// Values per keyword, empty values and keywords without values left out.
    Axes(BTreeMap<String, BTreeSet<String>>),
    /// Retrieved bytes, in the order returned.
    Bytes(Vec<u8>),
    /// A number: data sets (`where`), superseded fields (`purge` dry run).
    Count(u64),
    /// `stats`: fields indexed (superseded ones too) and fields reachable.
    Stats {
        /// Fields indexed, superseded ones too.
        indexed: u64,
        /// Fields a retrieve can reach.
        reachable: u64,
    },
    /// Data sets (`DIR`) and collocations (`DIR/COLLOCATION.kind`) a wipe would remove.
    Named(BTreeSet<String>),
    /// After a wipe or purge: everything listed (superseded fields too) and the data and
    /// index files left, as `DIR/COLLOCATION.kind`.
    Remaining {
        /// Every field listed, superseded ones too.
        listed: Vec<String>,
        /// The data and index files left, as `DIR/COLLOCATION.kind`.
        disk: BTreeSet<String>,
    },
    /// The request was refused (the first line of the message, for the report).
    Refused(String),
}

impl Outcome {
    /// Axes as FDB5's `fdb-axes --json` and fieldstore's `axes --json` print them.
    pub fn axes(axes: BTreeMap<String, Vec<String>>) -> Outcome {
        Outcome::Axes(
            axes.into_iter()
                .map(|(k, values)| (k, values.into_iter().filter(|v| !v.is_empty()).collect::<BTreeSet<_>>()))
                .filter(|(_, values)| !values.is_empty())
                .collect(),
        )
    }

    /// A short description for reports.
    pub fn summary(&self) -> String {
        match self {
            Outcome::Lines(lines) => match lines.len() {
                0 => "no lines".into(),
                n => format!("{n} lines, first {}", lines[0]),
            },
            Outcome::Axes(axes) => format!("axes {axes:?}"),
            Outcome::Bytes(bytes) => format!("{} bytes in {} messages", bytes.len(), messages(bytes).len()),
            Outcome::Count(n) => format!("{n}"),
            Outcome::Stats { indexed, reachable } => format!("{indexed} fields indexed, {reachable} reachable"),
            Outcome::Named(named) => format!("{named:?}"),
            Outcome::Remaining { listed, disk } => format!("{} listed, files {disk:?}", listed.len()),
            Outcome::Refused(why) => format!("refused: {why}"),
        }
    }

    /// Where two outcomes first differ, or `None` when they are the same.
    pub fn difference(&self, other: &Outcome) -> Option<String> {
        let lines = |a: &[String], b: &[String]| {
            let (a, b): (BTreeSet<&String>, BTreeSet<&String>) = (a.iter().collect(), b.iter().collect());
            let only = |x: &BTreeSet<&String>, y: &BTreeSet<&String>| x.difference(y).take(3).cloned().cloned().collect::<Vec<_>>();
            format!("only in the first: {:?}; only in the second: {:?}", only(&a, &b), only(&b, &a))
        };
        match (self, other) {
            (Outcome::Refused(_), Outcome::Refused(_)) => None,
            (Outcome::Lines(a), Outcome::Lines(b)) if a != b => Some(lines(a, b)),
            (Outcome::Remaining { listed: a, disk: da }, Outcome::Remaining { listed: b, disk: db }) if a != b || da != db => {
                let files = format!(
                    "files only in the first: {:?}; only in the second: {:?}",
                    da.difference(db).collect::<Vec<_>>(),
                    db.difference(da).collect::<Vec<_>>()
                );
                Some(format!("listed: {}; {files}", lines(a, b)))
            }
            (Outcome::Bytes(a), Outcome::Bytes(b)) if a != b => {
                let (ma, mb) = (messages(a), messages(b));
                let first = ma.iter().zip(&mb).position(|(x, y)| x != y).unwrap_or(ma.len().min(mb.len()));
                Some(format!("{} against {} messages; first different message: {}", ma.len(), mb.len(), first + 1))
            }
            (a, b) if std::mem::discriminant(a) != std::mem::discriminant(b) => Some(format!("{} against {}", a.summary(), b.summary())),
            (Outcome::Axes(a), Outcome::Axes(b)) if a != b => {
                let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
                let differing: Vec<String> = keys
                    .into_iter()
                    .filter(|k| a.get(*k) != b.get(*k))
                    .map(|k| format!("{k}: {:?} against {:?}", a.get(k), b.get(k)))
                    .collect();
                Some(differing.join("; "))
            }
            (Outcome::Count(a), Outcome::Count(b)) if a != b => Some(format!("{a} against {b}")),
            (Outcome::Stats { indexed: a, reachable: b }, Outcome::Stats { indexed: c, reachable: d }) if (a, b) != (c, d) => {
                Some(format!("{} against {}", self.summary(), other.summary()))
            }
            (Outcome::Named(a), Outcome::Named(b)) if a != b => Some(format!("{a:?} against {b:?}")),
            _ => None,
        }
    }
}

/// The messages of a GRIB byte stream (by their length fields; the corpus has no damage).
fn messages(bytes: &[u8]) -> Vec<&[u8]> {
    fieldstore_grib::scan(bytes, "retrieved")
        .map(|spans| spans.iter().map(|s| &bytes[s.offset..s.offset + s.length]).collect())
        .unwrap_or_default()
}

/// A data or index file as `DIR/COLLOCATION.kind`: both systems name these files by the data
/// set's values (the directory) and the collocation's values (the file name up to its first
/// `.`), joined by `:`.
pub fn disk_entry(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let kind = ["data", "index"].into_iter().find(|k| name.ends_with(&format!(".{k}")))?;
    let dir = path.parent()?.file_name()?.to_str()?;
    Some(format!("{dir}/{}.{kind}", name.split('.').next()?))
}

/// The data and index files under a root (one directory per data set).
pub fn disk_entries(root: &Path) -> anyhow::Result<BTreeSet<String>> {
    let mut out = BTreeSet::new();
    for dataset in std::fs::read_dir(root)? {
        let dataset = dataset?;
        if !dataset.file_type()?.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(dataset.path())? {
            out.extend(disk_entry(&file?.path()));
        }
    }
    Ok(out)
}
