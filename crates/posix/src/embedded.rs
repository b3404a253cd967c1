//! Catalogue commits embedded in data files (`CommitCarrier::flush_with_commits`): the bytes a
//! catalogue asks to make durable with the data, appended after a flush's fields so that one
//! `fdatasync` covers both, and found again after a crash.
//!
//! ```text
//! commit  := payload | trailer
//! trailer := "FSCM" | payload length u32 | payload offset u64 | end of the previous commit u64
//!            (0: none) | CRC-32C u32 of (file name, payload, the trailer before the CRC)
//! ```
//!
//! A reader finds the last commit by searching backwards from the end of the file (past the
//! fields archived after the last flush, which a crash may have left partly written), then
//! follows each commit's link to the one before. A candidate counts only if its payload ends
//! exactly where its trailer starts and its CRC, which covers the file's own name, matches:
//! the bytes of a field (even a copy of another data file) are never taken for a commit.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use fieldstore_core::checksum::{crc32c, crc32c_append};
use fieldstore_core::error::{Error, IoContext, Result};

const MAGIC: &[u8; 4] = b"FSCM";
/// Bytes of a trailer.
const TRAILER: usize = 4 + 4 + 8 + 8 + 4;
/// Bytes read at a time while searching backwards.
const SEARCH_CHUNK: usize = 1 << 20;

/// The commit to append at `offset` of the file `file_name`, after the commit that ended at
/// `previous_end` (0 if none).
pub fn encode(file_name: &str, offset: u64, previous_end: u64, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + TRAILER);
    out.extend_from_slice(payload);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&offset.to_le_bytes());
    out.extend_from_slice(&previous_end.to_le_bytes());
    let crc = crc32c_append(crc32c(file_name.as_bytes()), &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Every commit in a data file, oldest first.
pub fn read_all(path: &Path) -> Result<Vec<Vec<u8>>> {
    let file = File::open(path).ctx("open data file", path)?;
    let size = file.metadata().ctx("stat data file", path)?.len();
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let mut commits = Vec::new();
    let mut end = last_commit_end(&file, &name, size).map_err(|e| Error::io("search data file", path, e))?;
    while let Some(trailer_end) = end {
        let (payload, previous) = read_commit(&file, &name, trailer_end)
            .map_err(|e| Error::io("read data file", path, e))?
            .ok_or_else(|| Error::corrupt("data file", path, format!("the commit ending at {trailer_end} is damaged")))?;
        commits.push(payload);
        end = (previous > 0).then_some(previous);
    }
    commits.reverse();
    Ok(commits)
}

/// Where the last valid commit ends, searching backwards from `size`.
fn last_commit_end(file: &File, name: &str, size: u64) -> std::io::Result<Option<u64>> {
    let mut chunk_end = size;
    while chunk_end >= TRAILER as u64 {
        // Chunks overlap by a trailer, so a trailer across a chunk boundary is seen whole.
        let start = chunk_end.saturating_sub(SEARCH_CHUNK as u64);
        let mut chunk = vec![0u8; (chunk_end - start) as usize];
        file.read_exact_at(&mut chunk, start)?;
        for at in (0..=chunk.len() - TRAILER).rev().filter(|&i| &chunk[i..i + 4] == MAGIC) {
            let trailer_end = start + (at + TRAILER) as u64;
            if read_commit(file, name, trailer_end)?.is_some() {
                return Ok(Some(trailer_end));
            }
        }
        if start == 0 {
            break;
        }
        chunk_end = start + TRAILER as u64 - 1;
    }
    Ok(None)
}

/// The commit whose trailer ends at `trailer_end`, with the end of the previous one, if the
/// bytes there are a valid commit.
fn read_commit(file: &File, name: &str, trailer_end: u64) -> std::io::Result<Option<(Vec<u8>, u64)>> {
    let Some(trailer_start) = trailer_end.checked_sub(TRAILER as u64) else { return Ok(None) };
    let mut trailer = [0u8; TRAILER];
    file.read_exact_at(&mut trailer, trailer_start)?;
    let field = |from: usize, len: usize| &trailer[from..from + len];
    let length = u32::from_le_bytes(field(4, 4).try_into().expect("4 bytes")) as u64;
    let offset = u64::from_le_bytes(field(8, 8).try_into().expect("8 bytes"));
    let previous = u64::from_le_bytes(field(16, 8).try_into().expect("8 bytes"));
    if field(0, 4) != MAGIC || offset.checked_add(length) != Some(trailer_start) || previous > offset {
        return Ok(None);
    }
    // Checked before anything is kept: field bytes that look like a trailer may claim up to
    // 4 GiB, which is then read through a small buffer and never allocated.
    let mut crc = crc32c(name.as_bytes());
    let mut chunk = vec![0u8; (length as usize).min(SEARCH_CHUNK)];
    let mut at = offset;
    while at < trailer_start {
        let n = ((trailer_start - at) as usize).min(chunk.len());
        file.read_exact_at(&mut chunk[..n], at)?;
        crc = crc32c_append(crc, &chunk[..n]);
        at += n as u64;
    }
    if crc32c_append(crc, &trailer[..TRAILER - 4]).to_le_bytes() != trailer[TRAILER - 4..] {
        return Ok(None);
    }
    let mut payload = vec![0u8; length as usize];
    file.read_exact_at(&mut payload, offset)?;
    Ok(Some((payload, previous)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes fields and commits as a store would, returning the file's path.
    fn data_file(dir: &Path, name: &str, parts: &[(&[u8], Option<&[u8]>)]) -> std::path::PathBuf {
        let mut bytes = Vec::new();
        let mut previous_end = 0;
        for (field, commit) in parts {
            bytes.extend_from_slice(field);
            if let Some(payload) = commit {
                bytes.extend_from_slice(&encode(name, bytes.len() as u64, previous_end, payload));
                previous_end = bytes.len() as u64;
            }
        }
        let path = dir.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }

    #[test]
    fn commits_are_found_oldest_first_past_an_unflushed_tail() {
        let dir = tempfile::tempdir().unwrap();
        let big = vec![7u8; 3 * SEARCH_CHUNK + 5];
        let parts: [(&[u8], Option<&[u8]>); 4] = [(b"field one", Some(b"first")), (&big, Some(b"second")), (b"f", Some(b"")), (&big, None)];
        let path = data_file(dir.path(), "a.data", &parts);
        let expected: Vec<Vec<u8>> = vec![b"first".to_vec(), b"second".to_vec(), Vec::new()];
        assert_eq!(read_all(&path).unwrap(), expected);
        let none = data_file(dir.path(), "b.data", &[(b"only a field", None)]);
        assert!(read_all(&none).unwrap().is_empty());
    }

    #[test]
    fn a_commit_copied_into_a_field_or_another_file_is_not_taken() {
        let dir = tempfile::tempdir().unwrap();
        // A field holding the exact bytes of a valid commit of another file.
        let foreign = encode("other.data", 0, 0, b"forged");
        let path = data_file(dir.path(), "c.data", &[(b"x", Some(b"real")), (&foreign, None)]);
        assert_eq!(read_all(&path).unwrap(), vec![b"real".to_vec()]);
        // The same file renamed: its commits no longer check.
        std::fs::rename(&path, dir.path().join("d.data")).unwrap();
        assert!(read_all(&dir.path().join("d.data")).unwrap().is_empty());
    }

    #[test]
    fn field_bytes_claiming_a_huge_commit_are_checked_without_reading_it_into_memory() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.data");
        // A sparse file: 64 MiB of zeros, then a field that looks like the trailer of a
        // commit of all of them (consistent offset and length, wrong CRC).
        let length: u64 = 64 << 20;
        let mut trailer = encode("f.data", 0, 0, b"")[..TRAILER].to_vec();
        trailer[4..8].copy_from_slice(&(length as u32).to_le_bytes());
        let file = std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(&path).unwrap();
        file.write_all_at(&trailer, length).unwrap();
        let peak = || {
            // SAFETY: `rusage` is a plain C struct of integers, for which all zero bytes is a valid value.
            let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
            // SAFETY: a valid rusage buffer.
            unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) };
            usage.ru_maxrss // KiB
        };
        let before = peak();
        assert!(read_all(&path).unwrap().is_empty());
        assert!(peak() - before < 16 << 10, "read through a small buffer: peak grew {} KiB", peak() - before);
    }

    #[test]
    fn a_torn_last_commit_leaves_the_ones_before() {
        let dir = tempfile::tempdir().unwrap();
        let path = data_file(dir.path(), "e.data", &[(b"one", Some(b"kept")), (b"two", Some(b"torn by a crash"))]);
        let len = std::fs::metadata(&path).unwrap().len();
        std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len - 3).unwrap();
        assert_eq!(read_all(&path).unwrap(), vec![b"kept".to_vec()]);
    }
}
