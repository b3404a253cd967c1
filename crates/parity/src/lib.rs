//! fieldstore-parity: FDB5 itself as the test oracle. A corpus of GRIB data shaped like
//! ECMWF's ([`corpus`]) is archived into FDB5 5.25 and into fieldstore with FDB5's own schema,
//! the same requests and tool calls are sent to both, and every difference that
//! `docs/fdb5.md` does not list fails the test.

pub mod corpus;
