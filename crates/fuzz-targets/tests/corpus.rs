//! Replays the seeds and the fuzz corpus (`fuzz/corpus/<target>/`) through every target: inputs
//! the fuzzers kept, and those that once found a defect, run on every test run without a fuzzer.

use std::path::PathBuf;

use fieldstore_fuzz_targets::{seeds, TARGETS};

fn corpus(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("corpus of {target} at {}: {e}", dir.display()));
    let mut inputs: Vec<(String, Vec<u8>)> = entries
        .map(|entry| {
            let path = entry.expect("corpus entry").path();
            (path.display().to_string(), std::fs::read(&path).expect("corpus input"))
        })
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn every_target_passes_its_seeds_and_corpus() {
    let seeds = seeds();
    for (name, target) in TARGETS {
        let (_, own_seeds) = seeds.iter().find(|(n, _)| n == name).unwrap_or_else(|| panic!("no seeds for {name}"));
        let kept = corpus(name);
        assert!(!kept.is_empty(), "the corpus of {name} is empty: run scripts/fuzz.sh");
        let inputs = own_seeds.iter().enumerate().map(|(n, s)| (format!("seed {n}"), s.clone())).chain(kept);
        for (input, data) in inputs {
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "target {name} fails on {input}");
        }
    }
}
