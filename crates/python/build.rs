//! Sets pyo3's version cfgs (`Py_3_11`, ...) for this crate too: the buffer protocol is in the
//! stable ABI from Python 3.11, so `readinto` fills the caller's buffer in place only in a
//! build for 3.11 or later.

fn main() {
    pyo3_build_config::use_pyo3_cfgs();
}
