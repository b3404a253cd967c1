//! GRIB payloads for hammer: the template's keys set per field with ecCodes.

use fieldstore::grib::Handle;

/// The template message with this field's ensemble member, step, level and parameter.
pub fn encode(template: &[u8], member: usize, step: usize, level: &str, param: &str) -> fieldstore::Result<Vec<u8>> {
    let mut h = Handle::from_message_copy(template)?;
    h.set_long("step", step as i64)?;
    h.set_long("level", level.parse().unwrap_or(0))?;
    h.set_long("paramId", param.parse().unwrap_or(0))?;
    if h.get_long("number").is_ok() {
        h.set_long("number", member as i64)?;
    }
    h.message()
}
