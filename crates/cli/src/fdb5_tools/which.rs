//! `fdb-which`, as FDB5 5.25's script: which FDB the MultIO sinks in `$MULTIO_SINKS` (default
//! `fdb4`, separated by `:`) name first: `fdb5 $MARS_FDB_DTAP` for `fdb5`, else `fdb`.
//! Arguments are ignored, as the script ignores them.

use super::Failure;

/// Runs `fdb-which` (its arguments ignored).
pub fn run(_args: &[String]) -> Result<(), Failure> {
    let var = |name: &str| std::env::var(name).ok();
    println!("{}", which(var("MULTIO_SINKS").as_deref(), var("MARS_FDB_DTAP").as_deref()));
    Ok(())
}

/// The script's answer for `$MULTIO_SINKS` and `$MARS_FDB_DTAP`.
fn which(sinks: Option<&str>, dtap: Option<&str>) -> String {
    let sinks = sinks.filter(|s| !s.is_empty()).unwrap_or("fdb4");
    match sinks.split(':').find(|s| !s.is_empty()) {
        Some("fdb5") => format!("fdb5 {}", dtap.unwrap_or_default()),
        _ => "fdb".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::which;

    #[test]
    fn the_first_sink_decides() {
        assert_eq!(which(None, Some("x")), "fdb");
        assert_eq!(which(Some("fdb5:fdb4"), Some("prod")), "fdb5 prod");
        assert_eq!(which(Some("fdb5"), None), "fdb5 ");
        assert_eq!(which(Some("fdb4:fdb5"), Some("prod")), "fdb");
        assert_eq!(which(Some(""), None), "fdb");
    }
}
