//! fieldstore's fuzz targets: every parser of text from users (schemas, requests, configs, keys),
//! every decoder of what a server reads from its clients (archive bodies, calls) and a client from
//! its server (answers),
//! and every decoder of bytes read back from disk or objects (GRIB streams, TOC records, index
//! segments, commits embedded in data files, the object-store catalogues' logs), each as a
//! function of one input that must never panic, hang or allocate without bound, and that checks
//! what it can of its answer.
//!
//! Two callers share them: the coverage-guided fuzzers in `fuzz/` (`scripts/fuzz.sh`, one
//! binary per target, starting from [`seeds`]), and `tests/corpus.rs`, which replays the seeds
//! and the corpus kept in `fuzz/corpus/<target>/` on every test run, so inputs that once found
//! a defect keep proving it fixed. `docs/reliability.md` says how to run them and what the last long run found.
//!
//! Records on disk are checksummed, so bytes a fuzzer invents rarely get past the checksum to
//! the decoder behind it. The record targets therefore read their input two ways, chosen by its
//! first byte: as raw bytes, and as a list of payloads that [`framing::frames`] wraps in valid
//! frames, which reaches the decoders of each record kind.

mod framing;
mod languages;
mod records;
mod remote;
mod seeds;

pub use languages::{config, key, request, schema};
pub use records::{ccsds_stream, embedded_commits, grib_scan, index_segment, kept_packings, object_log, packing_record, toc};
pub use remote::{archive_frames, extract_answer, remote_answer, remote_call};
pub use seeds::seeds;

/// A fuzz target: one input, checked by assertions (a failed one is a finding).
pub type Target = fn(&[u8]);

/// Every target, by the name of its fuzzer binary and corpus directory.
pub const TARGETS: &[(&str, Target)] = &[
    ("schema", schema),
    ("request", request),
    ("config", config),
    ("key", key),
    ("grib_scan", grib_scan),
    ("toc", toc),
    ("index_segment", index_segment),
    ("embedded_commits", embedded_commits),
    ("object_log", object_log),
    ("archive_frames", archive_frames),
    ("remote_call", remote_call),
    ("remote_answer", remote_answer),
    ("extract_answer", extract_answer),
    ("packing_record", packing_record),
    ("kept_packings", kept_packings),
    ("ccsds_stream", ccsds_stream),
];
