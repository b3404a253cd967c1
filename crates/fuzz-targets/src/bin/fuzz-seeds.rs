//! `fuzz-seeds DIR`: writes each target's seeds to `DIR/<target>/seed-<n>`, where the fuzzers
//! (`scripts/fuzz.sh`) start from them.

use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: fuzz-seeds DIR");
        std::process::exit(2);
    };
    for (target, seeds) in fieldstore_fuzz_targets::seeds() {
        let target_dir = dir.join(target);
        let written = std::fs::create_dir_all(&target_dir)
            .and_then(|()| seeds.iter().enumerate().try_for_each(|(n, seed)| std::fs::write(target_dir.join(format!("seed-{n}")), seed)));
        if let Err(e) = written {
            eprintln!("fuzz-seeds: writing {}: {e}", target_dir.display());
            std::process::exit(1);
        }
    }
}
