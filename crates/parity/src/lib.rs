//! fieldstore-parity: FDB5 itself as the test oracle. A corpus of GRIB data shaped like
//! ECMWF's ([`corpus`]) is archived into FDB5 5.25 and into fieldstore with FDB5's own schema,
//! the same requests and tool calls ([`cases`]) are sent to both ([`systems`]), and their
//! answers ([`outcome`]) are compared. Every difference must be one that `docs/fdb5.md`
//! lists ([`documented_differences`]), and every difference it lists must still occur.

pub mod cases;
pub mod corpus;
pub mod outcome;
pub mod systems;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

use cases::Case;
use systems::{Fdb5, Fieldstore, System};

/// What a comparison needs.
pub struct Setup {
    /// The `fieldstore` binary.
    pub fieldstore: PathBuf,
    /// FDB5's schema file (../shared/fdb5/schema), used by both.
    pub schema: PathBuf,
    /// The project's `scripts/fdb5-install.sh`.
    pub install_script: PathBuf,
    /// An empty directory for the corpus, both stores and each case's scratch space.
    pub work: PathBuf,
}

/// One case's answers where they differ.
pub struct Difference {
    /// The case whose answers differ.
    pub case: Case,
    /// Where the answers differ (FDB5's first).
    pub detail: String,
}

/// The comparison's result.
#[derive(Default)]
pub struct Report {
    /// How many cases were run.
    pub cases: usize,
    /// How many fields the corpus archived into each system.
    pub fields: usize,
    /// Differences no case expected: each is a defect, or a difference to document.
    pub unexpected: Vec<Difference>,
    /// Differences a case expected (their names are in `docs/fdb5.md`).
    pub expected: Vec<Difference>,
    /// Cases that expected a difference and got the same answers.
    pub no_longer_different: Vec<Case>,
    /// Read-only cases whose answer, read by fieldstore from FDB5's own databases in place,
    /// is not FDB5's (or, where the case expects fieldstore to differ, not fieldstore's own).
    pub in_place_unexpected: Vec<Difference>,
    /// How many cases were also answered from FDB5's databases in place.
    pub in_place_cases: usize,
}

/// Archives the corpus into both systems and compares their answers to every case.
pub fn compare(setup: &Setup) -> anyhow::Result<Report> {
    let corpus_dir = setup.work.join("corpus");
    std::fs::create_dir_all(&corpus_dir)?;
    let files = corpus::write(&corpus_dir)?;
    let fdb5 = Fdb5::new(&setup.install_script, &setup.work.join("fdb5-home"), &setup.schema, &setup.work.join("fdb5"))?;
    let fieldstore = Fieldstore::new(&setup.fieldstore, &setup.schema, &setup.work.join("fieldstore"))?;
    let in_place = Fieldstore::reading_fdb5(&setup.fieldstore, &setup.schema, fdb5.root(), &setup.work.join("in-place.yaml"))?;
    let systems: [&dyn System; 2] = [&fdb5, &fieldstore];
    for file in &files {
        for system in systems {
            system.archive(file).with_context(|| format!("archiving the corpus into {}", system.name()))?;
        }
    }
    let mut report = Report { fields: corpus::batches().iter().map(|b| b.fields.len()).sum(), ..Report::default() };
    for (i, case) in cases::all().into_iter().enumerate() {
        let scratch = setup.work.join("cases").join(i.to_string());
        std::fs::create_dir_all(&scratch)?;
        let mut answers = Vec::new();
        for system in systems {
            let answer = if case.op.removes() {
                let copy = scratch.join(system.name());
                copy_tree(system.root(), &copy)?;
                system.at(&copy)?.outcome(&case, &scratch)
            } else {
                system.outcome(&case, &scratch)
            };
            answers.push(answer.with_context(|| format!("{} on {case}", system.name()))?);
        }
        report.cases += 1;
        if !case.op.removes() {
            // FDB5's databases read in place answer as FDB5 does, or as fieldstore's own store
            // where fieldstore means to differ.
            let answer = in_place.outcome(&case, &scratch).with_context(|| format!("fieldstore in place on {case}"))?;
            let expected = if case.differs.is_some() { &answers[1] } else { &answers[0] };
            if let Some(detail) = expected.difference(&answer) {
                report.in_place_unexpected.push(Difference { case: case.clone(), detail });
            }
            report.in_place_cases += 1;
        }
        match (answers[0].difference(&answers[1]), case.differs) {
            (Some(detail), None) => report.unexpected.push(Difference { case, detail }),
            (Some(detail), Some(_)) => report.expected.push(Difference { case, detail }),
            (None, Some(_)) => report.no_longer_different.push(case),
            (None, None) => {}
        }
        std::fs::remove_dir_all(&scratch)?;
    }
    Ok(report)
}

/// `cp -a FROM TO`: the stores are copied for cases that remove data.
fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    let status = Command::new("cp").arg("-a").arg(from).arg(to).status()?;
    if !status.success() {
        bail!("copying {} to {} failed", from.display(), to.display());
    }
    Ok(())
}

/// The names of the differences `docs/fdb5.md` lists: its headings `### `name`: ...`.
pub fn documented_differences(fdb5_md: &str) -> BTreeSet<String> {
    fdb5_md.lines().filter_map(|l| l.strip_prefix("### `")).filter_map(|l| l.split_once('`')).map(|(name, _)| name.to_string()).collect()
}
