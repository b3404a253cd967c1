//! `fdb5-parity corpus DIR`: writes the differential test's corpus (one GRIB file per batch).
fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.as_slice() {
        [cmd, dir] if cmd == "corpus" => {
            std::fs::create_dir_all(dir)?;
            for file in fieldstore_parity::corpus::write(std::path::Path::new(dir))? {
                println!("{}", file.display());
            }
            Ok(())
        }
        _ => anyhow::bail!("usage: fdb5-parity corpus DIR"),
    }
}
