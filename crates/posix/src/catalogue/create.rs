//! Creating a data set's directory (its schema, TOC and key, published race-free) and
//! reading its key and schema back, checked.

use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use fieldstore_core::checksum::crc32c;
use fieldstore_core::error::{Error, ErrorKind, IoContext, Result};
use fieldstore_core::unique::unique_suffix;
use fieldstore_core::Key;

use super::{KEY_FILE, SCHEMA_FILE, TOC_FILE};
use crate::naming::dataset_dir_name;
use crate::toc::identity_frame;

/// Creates a dataset directory with its schema and key, or checks an existing one. A data set
/// `found` there is never made again: false if it is gone (moved or wiped meanwhile).
pub(super) fn create_dataset(dir: &Path, dataset: &Key, schema_text: &str, found: bool) -> Result<bool> {
    let key_path = dir.join(KEY_FILE);
    if !key_path.exists() {
        if found {
            return Ok(false);
        }
        crate::listing::create_dir_durably(dir)?;
        crate::toc::refuse_foreign(dir)?;
        publish(dir, SCHEMA_FILE, schema_text.as_bytes())?;
        publish(dir, TOC_FILE, &identity_frame(&unique_suffix()))?;
        // The key file says the data set is whole: after a power loss it is there only if the
        // schema and TOC are.
        sync_dir(dir)?;
        publish(dir, KEY_FILE, key_file_text(dataset, schema_text).as_bytes())?;
    }
    // The key and the directory's own name durable, before this writer's first flush can
    // return. Also when the key was there: another writer may have linked it and not yet
    // synced it (a writer opens a data set once per handle, so this costs two syncs each).
    sync_dir(dir)?;
    if let Some(parent) = dir.parent() {
        sync_dir(parent)?;
    }
    let stored = read_key(dir)?.key;
    if stored != *dataset {
        return Err(Error::new(ErrorKind::Corrupt, format!("directory {} holds data set {stored}, not {dataset}", dir.display())));
    }
    Ok(true)
}

/// Makes the entries of a directory durable (created, renamed and removed names).
pub(super) use crate::listing::sync_dir;

/// Writes `name` durably unless it exists: temp file, fsync, then `link` (atomic, no clobber).
fn publish(dir: &Path, name: &str, contents: &[u8]) -> Result<()> {
    let tmp = dir.join(format!(".{name}.{}", unique_suffix()));
    let mut f = OpenOptions::new().write(true).create_new(true).mode(0o666).open(&tmp).ctx("create", &tmp)?;
    f.write_all(contents).and_then(|_| f.sync_all()).ctx("write", &tmp)?;
    let result = std::fs::hard_link(&tmp, dir.join(name));
    let _ = std::fs::remove_file(&tmp);
    match result {
        Err(e) if e.kind() != std::io::ErrorKind::AlreadyExists => Err(Error::io("publish", dir.join(name), e)),
        _ => Ok(()),
    }
}

/// The version of the layout of a data set's files (key, schema, TOC, index files and the
/// commits in data files), the first line of its key file. A reader refuses a data set of
/// another version, by name, rather than misread it.
pub const LAYOUT_FORMAT: u32 = 1;

/// What a dataset's `key` file holds: `format=N` (the layout's version), the dataset key, the
/// CRC-32C of the schema file, and a CRC-32C of the lines before it, so that damage to either
/// file is found, not read as another dataset or another schema. Every version keeps the
/// first line and the last (the checksum of the rest), so any reader tells a data set of
/// another version from a damaged one.
fn key_file_text(dataset: &Key, schema_text: &str) -> String {
    let body = format!("format={LAYOUT_FORMAT}\n{dataset}\nschema-crc32c={:08x}\n", crc32c(schema_text.as_bytes()));
    format!("{body}crc32c={:08x}\n", crc32c(body.as_bytes()))
}

/// A dataset's key file, read and checked.
pub(super) struct KeyFile {
    pub(super) key: Key,
    /// The schema file's CRC-32C.
    pub(super) schema_crc: u32,
}

/// A data set directory's schema, checked against its key file; `None` if the data set is not
/// whole (no key file).
pub(super) fn read_schema(dir: &Path) -> Result<Option<String>> {
    if !dir.join(KEY_FILE).exists() {
        return Ok(None);
    }
    let schema_path = dir.join(SCHEMA_FILE);
    let schema_text = std::fs::read_to_string(&schema_path).ctx("read dataset schema", &schema_path)?;
    if crc32c(schema_text.as_bytes()) != read_key(dir)?.schema_crc {
        return Err(Error::corrupt("dataset schema", &schema_path, "its checksum does not match the one its key file records"));
    }
    Ok(Some(schema_text))
}

/// Reads and checks a dataset directory's key file: its checksum, its format, and that the
/// key names this directory (the directory's name is made from the key's values).
pub(super) fn read_key(dir: &Path) -> Result<KeyFile> {
    let path = dir.join(KEY_FILE);
    let text = std::fs::read_to_string(&path).ctx("read dataset key", &path)?;
    let damaged = |reason: String| Error::corrupt("dataset key", &path, reason);
    let hex = |line: &str, prefix: &str| line.strip_prefix(prefix).and_then(|h| u32::from_str_radix(h, 16).ok());
    let lines: Vec<&str> = text.lines().collect();
    let Some((sum, body_lines)) = lines.split_last() else { return Err(damaged("it is empty".into())) };
    let body_end = text.len() - sum.len() - 1;
    if hex(sum, "crc32c=") != Some(crc32c(&text.as_bytes()[..body_end])) {
        return Err(damaged("its checksum does not match its contents".into()));
    }
    let format = body_lines.first().and_then(|line| line.strip_prefix("format="));
    if format != Some(LAYOUT_FORMAT.to_string().as_str()) {
        return Err(Error::new(
            ErrorKind::Unsupported,
            format!(
                "data set {}: its files are in layout format {}; this fieldstore ({}) reads format {LAYOUT_FORMAT} (docs/posix-layout.md)",
                dir.display(),
                format.unwrap_or("(none)"),
                env!("CARGO_PKG_VERSION")
            ),
        ));
    }
    let [_, key, schema] = body_lines else {
        return Err(damaged(format!("{} lines, where a key file of format {LAYOUT_FORMAT} has 4", lines.len())));
    };
    let schema_crc = hex(schema, "schema-crc32c=").ok_or_else(|| damaged(format!("line 3 is {schema:?}")))?;
    let key_file =
        KeyFile { key: Key::parse(key).map_err(|e| Error::corrupt_because("dataset key", &path, "line 2 is no key", e))?, schema_crc };
    let expected = dataset_dir_name(&key_file.key)?;
    if dir.file_name() != Some(std::ffi::OsStr::new(&expected)) {
        return Err(damaged(format!("it names data set {}, whose directory is {expected}", key_file.key)));
    }
    Ok(key_file)
}
