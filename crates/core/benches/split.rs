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

fn nanos_per_split(schema: &Schema, ids: &[Key]) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..20 {
        let t = Instant::now();
        for id in ids {
            std::hint::black_box(schema.split(id).unwrap());
        }
        best = best.min(t.elapsed().as_nanos() as f64 / ids.len() as f64);
    }
    best
}

fn main() {
    let ids = identifiers();
    println!("default schema: {:.0} ns per split", nanos_per_split(&Schema::default_schema(), &ids));
    // The schema `fieldstore bench compare` gives both systems (crates/bench/src/compare.rs).
    let compare = "param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;\n\
                   [ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]\n";
    println!("bench compare's schema: {:.0} ns per split", nanos_per_split(&Schema::parse("compare", compare).unwrap(), &ids));
    let fdb5 = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fdb5/schema");
    match std::fs::read_to_string(&fdb5) {
        Ok(text) => println!("FDB5 test schema: {:.0} ns per split", nanos_per_split(&Schema::parse("fdb5", &text).unwrap(), &ids)),
        Err(_) => println!("FDB5 test schema: not found at {}", fdb5.display()),
    }
}
