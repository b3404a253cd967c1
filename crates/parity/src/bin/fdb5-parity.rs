//! `fdb5-parity corpus DIR`: writes the differential test's corpus (one GRIB file per batch).
//! `fdb5-parity compare FIELDSTORE_BINARY WORK_DIR`: archives it into FDB5 and fieldstore and
//! prints every case whose answers differ.
use std::path::{Path, PathBuf};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    match args.as_slice() {
        [cmd, dir] if cmd == "corpus" => {
            std::fs::create_dir_all(dir)?;
            for file in fieldstore_parity::corpus::write(Path::new(dir))? {
                println!("{}", file.display());
            }
            Ok(())
        }
        [cmd, binary, work] if cmd == "compare" => {
            let setup = fieldstore_parity::Setup {
                fieldstore: PathBuf::from(binary),
                schema: project.join("../shared/fdb5/schema"),
                install_script: project.join("scripts/fdb5-install.sh"),
                work: PathBuf::from(work),
            };
            let report = fieldstore_parity::compare(&setup)?;
            for d in &report.unexpected {
                println!("DIFFERENT {}\n    {}", d.case, d.detail);
            }
            for d in &report.expected {
                println!("documented ({}) {}\n    {}", d.case.differs.unwrap_or(""), d.case, d.detail);
            }
            for c in &report.no_longer_different {
                println!("SAME although documented as different ({}): {c}", c.differs.unwrap_or(""));
            }
            println!("{} cases, {} unexpected differences, {} documented", report.cases, report.unexpected.len(), report.expected.len());
            Ok(())
        }
        _ => anyhow::bail!("usage: fdb5-parity corpus DIR | fdb5-parity compare FIELDSTORE_BINARY WORK_DIR"),
    }
}
