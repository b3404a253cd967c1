//! FDB5 itself as the oracle: the corpus archived into FDB5 5.25 and into fieldstore with
//! FDB5's schema, every case sent to both (see `fieldstore_parity` and docs/fdb5.md). Any
//! difference docs/fdb5.md does not list fails, and so does a listed one that no longer
//! occurs.

use std::path::Path;

#[test]
fn fieldstore_answers_as_fdb5_does_on_real_shaped_data() {
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let documented = fieldstore_parity::documented_differences(&std::fs::read_to_string(project.join("docs/fdb5.md")).unwrap());
    for case in fieldstore_parity::cases::all() {
        if let Some(name) = case.differs {
            assert!(documented.contains(name), "{case} expects difference '{name}', which docs/fdb5.md does not list");
        }
    }
    let work = tempfile::tempdir().unwrap();
    let setup = fieldstore_parity::Setup {
        fieldstore: env!("CARGO_BIN_EXE_fieldstore").into(),
        schema: project.join("../shared/fdb5/schema"),
        install_script: project.join("scripts/fdb5-install.sh"),
        work: work.path().to_path_buf(),
    };
    let report = fieldstore_parity::compare(&setup).unwrap();
    let unexpected: Vec<String> = report.unexpected.iter().map(|d| format!("{}\n    {}", d.case, d.detail)).collect();
    assert!(unexpected.is_empty(), "answers differ from FDB5's in {} cases:\n{}", unexpected.len(), unexpected.join("\n"));
    let same: Vec<String> = report.no_longer_different.iter().map(|c| format!("{c} ({})", c.differs.unwrap_or(""))).collect();
    assert!(same.is_empty(), "documented differences no longer occur (update docs/fdb5.md and the cases):\n{}", same.join("\n"));
    assert!(report.cases >= 200 && report.fields >= 880, "{} cases over {} fields", report.cases, report.fields);
    assert!(!report.expected.is_empty(), "the documented differences are exercised");
}
