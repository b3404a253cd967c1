//! CRC-32C (Castagnoli; the iSCSI CRC), the checksum of every stored field and of every binary
//! record. Computed with `crc-fast`, which fuses carry-less multiplication with the `crc32`
//! instruction where the CPU has them (2.1-2.4x the `crc32c` crate's speed on the sixth
//! session's machine: `cargo bench -p fieldstore-posix --bench page_cache_reads`). Checksums
//! already stored were computed by the `crc32c` crate: the tests below prove both give the
//! same values on a corpus of lengths, alignments and appends.

use crc_fast::{CrcAlgorithm, Digest};

/// The CRC-32C of `data`.
pub fn crc32c(data: &[u8]) -> u32 {
    crc_fast::crc32_iscsi(data)
}

/// The CRC-32C of the bytes whose CRC-32C is `crc`, followed by `data`.
pub fn crc32c_append(crc: u32, data: &[u8]) -> u32 {
    // The register holds the CRC before its final inversion.
    let mut digest = Digest::new_with_init_state(CrcAlgorithm::Crc32Iscsi, u64::from(!crc));
    digest.update(data);
    digest.finalize() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that are not a short period of anything.
    fn corpus(len: usize) -> Vec<u8> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[test]
    fn the_check_value_of_the_catalogue() {
        assert_eq!(crc32c(b"123456789"), 0xe306_9283);
        assert_eq!(crc32c(b""), 0);
    }

    #[test]
    fn same_values_as_the_crc32c_crate_for_every_length_and_alignment() {
        let bytes = corpus(70_000);
        let lengths = (0..=1100).chain([4095, 4096, 4097, 8191, 65_536, 65_537, 69_000]);
        for len in lengths {
            for start in [0, 1, 3, 7, 8, 13, 64, 1000 - len.min(1000)] {
                let data = &bytes[start..start + len];
                assert_eq!(crc32c(data), crc32c::crc32c(data), "length {len} at {start}");
            }
        }
    }

    #[test]
    fn appending_gives_the_crc_of_the_whole() {
        let bytes = corpus(200_000);
        for split in [0, 1, 5, 64, 4096, 100_000, 199_999, 200_000] {
            let (head, tail) = bytes.split_at(split);
            let whole = crc32c::crc32c(&bytes);
            assert_eq!(crc32c_append(crc32c(head), tail), whole, "split at {split}");
            assert_eq!(crc32c_append(crc32c::crc32c(head), tail), crc32c::crc32c_append(crc32c::crc32c(head), tail));
        }
        let mut crc = 0;
        for piece in bytes.chunks(333) {
            crc = crc32c_append(crc, piece);
        }
        assert_eq!(crc, crc32c::crc32c(&bytes), "in 333-byte pieces from zero");
    }
}
