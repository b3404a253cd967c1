//! A CCSDS 121.0-B-3 stream decoded as libaec (and so ecCodes) decodes it, from the start of
//! any of its codes: where `tensogram-szip` and libaec start only at an RSI, this decoder also
//! starts inside one, given the RSI-relative block the code begins and the sample before it,
//! so that a point costs the decoding of a few blocks rather than of its whole RSI. Decoding a
//! stream whole ([`Coding::walk`]) finds those starting points.
//!
//! A code: an option ID (`id_len` bits); in an RSI's first block (with preprocessing) the
//! reference sample follows the ID (after the low-entropy bit for ID 0). ID 0 is low entropy:
//! a bit, then either the Second Extension's pair codes or a run of zero blocks (a
//! fundamental sequence: its value + 1 blocks, 5 meaning the rest of the 64-block segment or
//! RSI, above 5 one fewer); IDs up to `2^id_len - 2` are split-sample (k = ID - 1: the
//! block's fundamental sequences, then their k low bits); the last ID is a block of raw
//! samples. Preprocessed samples are mapped differences from the sample before.

use super::Entry;

/// Zero-block counts: this one means "the rest of the segment".
const ROS: u32 = 5;
/// Blocks per segment (a rest-of-segment run ends at a multiple of it).
const SEGMENT: usize = 64;
/// The largest Second Extension code.
const SE_CODES: u32 = 90;
/// Each Second Extension code's pair sum: the largest s with s(s + 1)/2 at most the code.
const SE_SUMS: [u32; SE_CODES as usize + 1] = {
    let mut sums = [0; SE_CODES as usize + 1];
    let mut m = 0;
    while m <= SE_CODES {
        while (sums[m as usize] + 1) * (sums[m as usize] + 2) / 2 <= m {
            sums[m as usize] += 1;
        }
        if m < SE_CODES {
            sums[m as usize + 1] = sums[m as usize];
        }
        m += 1;
    }
    sums
};

/// libaec's flags, as GRIB's `ccsdsFlags` carries them.
const SIGNED: u32 = 1;
const PREPROCESS: u32 = 8;
const PAD_RSI: u32 = 32;
const RESTRICTED: u32 = 16;

/// How a stream is coded.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Coding {
    bits: u32,
    block: usize,
    rsi_blocks: usize,
    id_len: u32,
    preprocess: bool,
    pad_rsi: bool,
    xmax: u32,
}

/// Why a stream could not be decoded.
#[derive(Debug, PartialEq)]
pub(crate) struct Undecodable(pub &'static str);

type Decoded<T> = std::result::Result<T, Undecodable>;

impl Coding {
    /// The coding of unsigned samples of `bits` (1 to 32) bits with libaec's `flags`, in
    /// blocks of `block` samples and RSIs of `rsi_blocks` blocks; `None` for signed samples
    /// (not GRIB's) or sizes CCSDS does not allow.
    pub(crate) fn new(bits: u32, flags: u32, block: u32, rsi_blocks: u32) -> Option<Coding> {
        if !(1..=32).contains(&bits) || !sizes_allowed(block, rsi_blocks) || flags & SIGNED != 0 {
            return None;
        }
        // The restricted set of options applies to samples of up to 4 bits, is refused for 5
        // to 8 and means nothing above (as libaec has it).
        let restricted = flags & RESTRICTED != 0;
        let id_len = match bits {
            17.. => 5,
            9..=16 => 4,
            1..=2 if restricted => 1,
            3..=4 if restricted => 2,
            _ if restricted => return None,
            _ => 3,
        };
        Some(Coding {
            bits,
            block: block as usize,
            rsi_blocks: rsi_blocks as usize,
            id_len,
            preprocess: flags & PREPROCESS != 0,
            pad_rsi: flags & PAD_RSI != 0,
            xmax: max_sample(bits),
        })
    }

    /// Samples per RSI.
    pub(crate) fn per_rsi(&self) -> usize {
        self.block * self.rsi_blocks
    }

    /// Decodes `stream` whole: its first `values` samples, where each RSI starts (bit offsets)
    /// and the entries inside RSIs ([`Entry`]) at the codes holding every `every`-th block.
    pub(crate) fn walk(&self, stream: &[u8], values: usize, every: usize) -> Decoded<(Vec<u32>, Vec<u64>, Vec<Entry>)> {
        let mut samples = Vec::with_capacity(values);
        let (mut starts, mut entries) = (Vec::new(), Vec::new());
        let mut bits = Bits::new(stream, 0);
        let every = every.max(1);
        while samples.len() < values {
            let rsi = starts.len();
            starts.push(bits.position());
            let mut decoder = Decoder { coding: self, block: 0, last: 0 };
            while decoder.block < self.rsi_blocks && samples.len() < values {
                let (at, block, last) = (bits.position(), decoder.block, decoder.last);
                decoder.code(&mut bits, &mut samples)?;
                // A code holding a block at a multiple of `every` (not the RSI's first).
                if block > 0 && block.div_ceil(every) * every < decoder.block {
                    let block = u32::try_from(rsi * self.rsi_blocks + block).map_err(|_| Undecodable("too many blocks"))?;
                    let bit = u32::try_from(at - starts[rsi]).map_err(|_| Undecodable("an RSI of over 2^32 bits"))?;
                    entries.push(Entry { block, bit, last });
                }
            }
            if self.pad_rsi {
                bits.skip_to_byte();
            }
        }
        samples.truncate(values);
        Ok((samples, starts, entries))
    }

    /// The samples of one RSI from block `block` (its first is 0) to the end of the code
    /// holding sample `until` of the RSI (exclusive), decoded from bit `bit` of `bytes`;
    /// `last` is the sample before `block`'s (for preprocessed samples; 0 at an RSI's start).
    pub(crate) fn decode(&self, bytes: &[u8], bit: u64, block: usize, last: u32, until: usize) -> Decoded<Vec<u32>> {
        let mut bits = Bits::new(bytes, bit);
        let mut decoder = Decoder { coding: self, block, last };
        let wanted = until.saturating_sub(block * self.block);
        let mut samples = Vec::with_capacity(wanted + SEGMENT * self.block);
        while samples.len() < wanted {
            if decoder.block >= self.rsi_blocks {
                return Err(Undecodable("a point beyond its RSI"));
            }
            decoder.code(&mut bits, &mut samples)?;
        }
        Ok(samples)
    }
}

/// Whether blocks of `block` values and RSIs of `rsi_blocks` blocks are sizes CCSDS allows
/// (blocks of 8, 16, 32 or 64 values, RSIs of at most 4,096 blocks): an RSI is then at most
/// 262,144 values, which bounds what decoding one costs.
pub(crate) fn sizes_allowed(block: u32, rsi_blocks: u32) -> bool {
    matches!(block, 8 | 16 | 32 | 64) && (1..=4096).contains(&rsi_blocks)
}

/// The largest sample of `bits` bits (1 to 32).
pub(crate) fn max_sample(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    }
}

/// Decodes one RSI's codes in turn.
struct Decoder<'c> {
    coding: &'c Coding,
    /// The RSI-relative block the next code starts at.
    block: usize,
    /// The last sample (the predictor of preprocessed samples).
    last: u32,
}

impl Decoder<'_> {
    /// Decodes the code at `bits` into `out`: one block, or a run of zero blocks.
    fn code(&mut self, bits: &mut Bits<'_>, out: &mut Vec<u32>) -> Decoded<()> {
        let c = self.coding;
        let end = Undecodable;
        // An RSI's first block carries the reference sample when samples are preprocessed.
        let with_reference = self.block == 0 && c.preprocess;
        let coded = c.block - usize::from(with_reference);
        let id = bits.read(c.id_len).ok_or(end("it ends in an option ID"))?;
        let blocks = if id == 0 {
            let second_extension = bits.read(1).ok_or(end("it ends in a low-entropy code"))? == 1;
            if with_reference {
                self.reference(bits.read(c.bits).ok_or(end("it ends in a reference sample"))?, out);
            }
            if second_extension {
                self.second_extension(bits, usize::from(with_reference), out)?;
                1
            } else {
                self.zero_blocks(bits, coded, out)?
            }
        } else if id < (1 << c.id_len) - 1 {
            if with_reference {
                self.reference(bits.read(c.bits).ok_or(end("it ends in a reference sample"))?, out);
            }
            self.split(bits, id - 1, coded, out)?;
            1
        } else {
            for i in 0..c.block {
                let raw = bits.read(c.bits).ok_or(end("it ends in a raw block"))?;
                if i == 0 && with_reference {
                    self.reference(raw, out);
                } else {
                    self.sample(raw, out);
                }
            }
            1
        };
        self.block += blocks;
        Ok(())
    }

    fn reference(&mut self, reference: u32, out: &mut Vec<u32>) {
        self.last = reference;
        out.push(reference);
    }

    /// A decoded sample: preprocessed ones are mapped differences from the last (as libaec
    /// unmaps them), others the sample itself.
    fn sample(&mut self, d: u32, out: &mut Vec<u32>) {
        if !self.coding.preprocess {
            out.push(d);
            return;
        }
        let (last, xmax) = (self.last, self.coding.xmax);
        let mask = if last > xmax / 2 { xmax } else { 0 };
        let half = (d >> 1) + (d & 1);
        let next = if half <= mask ^ last {
            if d & 1 == 0 {
                last.wrapping_add(d >> 1)
            } else {
                last.wrapping_sub((d >> 1) + 1)
            }
        } else {
            mask ^ d
        };
        self.last = next;
        out.push(next);
    }

    /// A run of zero blocks (`coded` samples in its first block): how many blocks it covers.
    fn zero_blocks(&mut self, bits: &mut Bits<'_>, coded: usize, out: &mut Vec<u32>) -> Decoded<usize> {
        let fs = bits.read_fs().ok_or(Undecodable("it ends in a zero-block run"))?;
        let left = self.coding.rsi_blocks - self.block;
        let blocks = match fs.saturating_add(1) {
            ROS => left.min(SEGMENT - self.block % SEGMENT),
            n if n > ROS => (n - 1) as usize,
            n => n as usize,
        };
        if blocks > left {
            return Err(Undecodable("a zero-block run beyond its RSI"));
        }
        for _ in 0..coded + (blocks - 1) * self.coding.block {
            self.sample(0, out);
        }
        Ok(blocks)
    }

    /// A Second Extension block: pairs coded together, the first of the first pair dropped
    /// where the reference sample took its place (`from` 1).
    fn second_extension(&mut self, bits: &mut Bits<'_>, from: usize, out: &mut Vec<u32>) -> Decoded<()> {
        let mut i = from;
        while i < self.coding.block {
            let m = bits.read_fs().ok_or(Undecodable("it ends in a Second Extension block"))?;
            if m > SE_CODES {
                return Err(Undecodable("a Second Extension code out of range"));
            }
            // m = s(s + 1)/2 + b for the pair (s - b, b).
            let sum = SE_SUMS[m as usize];
            let b = m - sum * (sum + 1) / 2;
            if i & 1 == 0 {
                self.sample(sum - b, out);
                i += 1;
            }
            self.sample(b, out);
            i += 1;
        }
        Ok(())
    }

    /// A split-sample block: `coded` fundamental sequences, then their `k` low bits each.
    fn split(&mut self, bits: &mut Bits<'_>, k: u32, coded: usize, out: &mut Vec<u32>) -> Decoded<()> {
        let mut high = [0u32; 64];
        for h in high.iter_mut().take(coded) {
            *h = bits.read_fs().ok_or(Undecodable("it ends in a split block"))?;
        }
        for h in high.iter().take(coded) {
            let low = bits.read(k).ok_or(Undecodable("it ends in a split block's low bits"))?;
            self.sample(h.wrapping_shl(k).wrapping_add(low), out);
        }
        Ok(())
    }
}

/// Reads bits most significant first.
struct Bits<'a> {
    bytes: &'a [u8],
    /// The next byte to load.
    next: usize,
    /// Loaded bits, the `have` lowest of them not read yet.
    acc: u64,
    have: u32,
}

impl<'a> Bits<'a> {
    /// Reading `bytes` from bit `bit` on.
    fn new(bytes: &'a [u8], bit: u64) -> Self {
        let mut bits = Bits { bytes, next: usize::try_from(bit / 8).unwrap_or(usize::MAX), acc: 0, have: 0 };
        if bits.next < bytes.len() && !bit.is_multiple_of(8) {
            bits.acc = u64::from(bytes[bits.next]);
            bits.have = 8 - (bit % 8) as u32;
            bits.next += 1;
        }
        bits
    }

    /// The bit offset of the next bit to read.
    fn position(&self) -> u64 {
        (self.next as u64).saturating_mul(8) - u64::from(self.have)
    }

    fn refill(&mut self) {
        while self.have <= 56 && self.next < self.bytes.len() {
            self.acc = (self.acc << 8) | u64::from(self.bytes[self.next]);
            self.next += 1;
            self.have += 8;
        }
    }

    /// The next `n` (0 to 32) bits; `None` past the end.
    fn read(&mut self, n: u32) -> Option<u32> {
        if n == 0 {
            return Some(0);
        }
        if self.have < n {
            self.refill();
            if self.have < n {
                return None;
            }
        }
        self.have -= n;
        Some(((self.acc >> self.have) & ((1u64 << n) - 1)) as u32)
    }

    /// A fundamental sequence: the count of 0 bits before the next 1 (read too).
    fn read_fs(&mut self) -> Option<u32> {
        let mut zeros = 0u32;
        loop {
            let window = if self.have == 0 { 0 } else { self.acc & (u64::MAX >> (64 - self.have)) };
            if window != 0 {
                let leading = window.leading_zeros() - (64 - self.have);
                self.have -= leading + 1;
                return Some(zeros + leading);
            }
            zeros = zeros.checked_add(self.have)?;
            self.have = 0;
            self.refill();
            if self.have == 0 {
                return None;
            }
        }
    }

    /// Skips to the next byte's first bit (RSIs padded to bytes).
    fn skip_to_byte(&mut self) {
        self.have -= self.have % 8;
    }
}
