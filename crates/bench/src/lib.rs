//! fieldstore's benchmark suite (docs/benchmarks.md): `hammer` (fdb-hammer), the side-by-side
//! comparison with FDB5, Field I/O and IOR on the object API, sweeps over grids, and the
//! analysis of their event logs. The command line (`fieldstore bench`) only parses and prints.

pub mod analyze;
pub mod clock;
pub mod compare;
pub mod fieldio;
mod grib_fields;
pub mod hammer;
pub mod ior;
pub mod launch;
pub mod load;
pub mod payload;
pub mod point;
pub mod report;
pub mod roles;
pub mod s3;
pub mod serving;
pub mod study;
pub mod sweep;

pub use hammer::{Hammer, Itt, Payload, Phase};
pub use payload::Check;
