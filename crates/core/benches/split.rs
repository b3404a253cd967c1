//! What splitting an identifier with a schema costs (`cargo bench -p fieldstore-core --bench
//! split`): the hammer's identifiers against the default schema and FDB5's test schema, in
//! nanoseconds per split (best of several rounds). Archive calls this once per field.
use std::time::Instant;

use fieldstore_core::schema::Schema;
use fieldstore_core::Key;

fn identifiers() -> Vec<Key> {
    let base = "class=od,expver=0001,stream=enfo,date=20231201,time=1200,domain=g,type=pf,levtype=pl";
    let mut ids = Vec::new();
    for step in 0..10 {
        for level in 1..=10 {
            for param in 1..=10 {
                ids.push(Key::parse(&format!("{base},number=1,step={step},levelist={level},param={param}")).unwrap());
            }
        }
    }
    ids
}

/// Nanoseconds per split, best of 20 rounds: each identifier split in full, and with a memo
/// of the last split as archive does (`Schema::split_remembering`).
fn nanos_per_split(schema: &Schema, ids: &[Key]) -> (f64, f64) {
    let (mut full, mut remembering) = (f64::MAX, f64::MAX);
    for _ in 0..20 {
        let t = Instant::now();
        for id in ids {
            std::hint::black_box(schema.split(id).unwrap());
        }
        full = full.min(t.elapsed().as_nanos() as f64 / ids.len() as f64);
        let mut memo = fieldstore_core::schema::SplitMemo::default();
        let t = Instant::now();
        for id in ids {
            std::hint::black_box(schema.split_remembering(id, &mut memo).unwrap());
        }
        remembering = remembering.min(t.elapsed().as_nanos() as f64 / ids.len() as f64);
    }
    (full, remembering)
}

fn report(name: &str, schema: &Schema, ids: &[Key]) {
    let (full, remembering) = nanos_per_split(schema, ids);
    println!("{name}: {full:.0} ns per split, {remembering:.0} ns remembering the last");
}

fn main() {
    let ids = identifiers();
    report("default schema", &Schema::default_schema(), &ids);
    // The schema `fieldstore bench compare` gives both systems (crates/bench/src/compare.rs).
    let compare = "param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;\n\
                   [ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]\n";
    report("bench compare's schema", &Schema::parse("compare", compare).unwrap(), &ids);
    let fdb5 = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fdb5/schema");
    match std::fs::read_to_string(&fdb5) {
        Ok(text) => report("FDB5 test schema", &Schema::parse("fdb5", &text).unwrap(), &ids),
        Err(_) => println!("FDB5 test schema: not found at {}", fdb5.display()),
    }
}
