//! Benchmark payloads, and the checks of fdb-hammer's `--md-check` and `--full-check`.
//!
//! A checked payload carries the same 24-byte stamp at both ends: a magic, the digest of the
//! field's identifier (catches misplaced fields), a unique operation id (catches fields from
//! another run or a torn mix of two writes) and, with the full check, the CRC-32C of the bytes
//! between the stamps (catches corruption).

use fieldstore::{Error, ErrorKind, Key, Result};

const MAGIC: &[u8; 4] = b"FSHM";
/// Bytes of one stamp.
pub const STAMP: usize = 24;

/// What a payload carries for reads to check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// Nothing: the template's bytes as they are.
    None,
    /// Identifier digest and operation id at both ends.
    Metadata,
    /// Also the checksum of the whole payload.
    Full,
}

/// 64-bit FNV-1a of the identifier text: stable across runs and processes.
pub fn key_digest(identifier: &Key) -> u64 {
    identifier.to_string().bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// The bytes of field after field from one template (GRIB message or synthetic bytes), made
/// in one kept buffer: only the stamps differ between fields, so making a field writes 48
/// bytes instead of copying the template (which `rados bench` and `dd` do not pay either).
pub struct Stamper {
    data: Vec<u8>,
    check: Check,
    /// CRC-32C of the bytes between the stamps, which never change (full check only).
    body_crc: u32,
}

impl Stamper {
    /// A stamper of `template` for `check` (none if the template is too short for two stamps).
    pub fn new(template: &[u8], check: Check) -> Stamper {
        let stamped = check != Check::None && template.len() >= 2 * STAMP;
        let body_crc =
            if stamped && check == Check::Full { fieldstore::checksum::crc32c(&template[STAMP..template.len() - STAMP]) } else { 0 };
        Stamper { data: template.to_vec(), check: if stamped { check } else { Check::None }, body_crc }
    }

    /// The bytes of the field `identifier` written by operation `op_id`; unchecked payloads
    /// (and templates too short for stamps) are the template itself.
    pub fn field(&mut self, identifier: &Key, op_id: u64) -> &[u8] {
        if self.check != Check::None {
            let stamp = stamp(key_digest(identifier), op_id, self.body_crc);
            let n = self.data.len();
            self.data[..STAMP].copy_from_slice(&stamp);
            self.data[n - STAMP..].copy_from_slice(&stamp);
        }
        &self.data
    }
}

fn stamp(digest: u64, op_id: u64, crc: u32) -> [u8; STAMP] {
    let mut s = [0u8; STAMP];
    s[..4].copy_from_slice(MAGIC);
    s[4..12].copy_from_slice(&digest.to_le_bytes());
    s[12..20].copy_from_slice(&op_id.to_le_bytes());
    s[20..24].copy_from_slice(&crc.to_le_bytes());
    s
}

/// Checks a retrieved field; a [`ErrorKind::Corrupt`] error says what is wrong.
pub fn verify(data: &[u8], identifier: &Key, check: Check) -> Result<()> {
    if check == Check::None {
        return Ok(());
    }
    let corrupt = |what: String| Err(Error::new(ErrorKind::Corrupt, what));
    let n = data.len();
    if n < 2 * STAMP {
        return corrupt(format!("{identifier}: {n} bytes, too short for checked payloads"));
    }
    let (head, tail) = (&data[..STAMP], &data[n - STAMP..]);
    if &head[..4] != MAGIC && &tail[..4] != MAGIC {
        return corrupt(format!("{identifier}: carries no check stamp (written without --md-check or --full-check?)"));
    }
    if &head[..4] != MAGIC || head != tail {
        return corrupt(format!("{identifier}: the stamps at both ends differ (torn or mixed field)"));
    }
    let digest = u64::from_le_bytes(head[4..12].try_into().unwrap());
    if digest != key_digest(identifier) {
        return corrupt(format!("{identifier}: holds the bytes of another field (misplaced)"));
    }
    if check == Check::Full {
        let crc = u32::from_le_bytes(head[20..24].try_into().unwrap());
        if crc != fieldstore::checksum::crc32c(&data[STAMP..n - STAMP]) {
            return corrupt(format!("{identifier}: payload corrupt (checksum mismatch)"));
        }
    }
    Ok(())
}

/// A synthetic payload of `size` bytes (not all zero, so nothing compresses it away).
pub fn synthetic(size: usize) -> Vec<u8> {
    (0..size).map(|i| (i.wrapping_mul(131).wrapping_add(7)) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(step: u32) -> Key {
        Key::parse(&format!("class=od,step={step}")).unwrap()
    }

    #[test]
    fn checks_catch_misplaced_torn_and_corrupt_fields() {
        let template = synthetic(1000);
        let mut full = Stamper::new(&template, Check::Full);
        let a = full.field(&key(1), 7).to_vec();
        assert!(verify(&a, &key(1), Check::Full).is_ok());
        assert!(verify(&a, &key(2), Check::Metadata).unwrap_err().to_string().contains("misplaced"));
        let b = full.field(&key(1), 8).to_vec();
        assert_ne!(a, b, "each operation has its own stamp");
        let torn: Vec<u8> = a[..500].iter().chain(&b[500..]).copied().collect();
        assert!(verify(&torn, &key(1), Check::Metadata).unwrap_err().to_string().contains("torn"));
        let mut corrupt = a.clone();
        corrupt[400] ^= 1;
        assert!(verify(&corrupt, &key(1), Check::Metadata).is_ok(), "metadata check does not read the body");
        assert!(verify(&corrupt, &key(1), Check::Full).unwrap_err().to_string().contains("corrupt"));
        assert_eq!(Stamper::new(&template, Check::None).field(&key(1), 7), template);
        assert!(verify(&template, &key(1), Check::Metadata).unwrap_err().to_string().contains("no check stamp"));
    }

    #[test]
    fn a_kept_buffer_makes_the_same_fields_as_fresh_ones() {
        let template = synthetic(1000);
        let mut kept = Stamper::new(&template, Check::Full);
        for (step, op) in [(1, 7), (2, 8), (1, 9)] {
            let fresh = Stamper::new(&template, Check::Full).field(&key(step), op).to_vec();
            let made = kept.field(&key(step), op);
            assert_eq!(made, fresh);
            assert!(verify(made, &key(step), Check::Full).is_ok());
            assert_eq!(made[STAMP..1000 - STAMP], template[STAMP..1000 - STAMP], "the body is the template's");
        }
        let short = synthetic(2 * STAMP - 1);
        assert_eq!(Stamper::new(&short, Check::Full).field(&key(1), 1), short, "too short for stamps: unchanged");
    }
}
