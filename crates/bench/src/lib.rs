//! fieldstore's benchmark suite (BENCHMARKS.md): `hammer` (fdb-hammer) and the side-by-side
//! comparison with FDB5.

pub mod analyze;
pub mod clock;
pub mod compare;
pub mod fieldio;
mod grib_fields;
pub mod hammer;
pub mod ior;
pub mod launch;
pub mod payload;
pub mod report;

pub use hammer::{Hammer, Itt, Payload, Phase};
pub use payload::Check;
