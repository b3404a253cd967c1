//! Measures `list()` of a RADOS dataset (bulk omap reads of immutable index objects) against
//! what one omap get per entry would cost (the DAOS-style design), side by side on one
//! cluster. Archives STEPS x 100 fields of 4 KiB (one flush per step) under a namespace
//! prefix of its own, measures, then wipes them.
//!
//! `CEPH_CONF=... cargo run --release --example rados_list_vs_gets -- [POOL] [STEPS]`
use std::time::{Duration, Instant};

use fieldstore::{Catalogue, Key, ListOptions, Request};

const RUNS: usize = 5;

fn main() -> fieldstore::Result<()> {
    let mut args = std::env::args().skip(1);
    let pool = args.next().unwrap_or_else(|| "fieldstore".into());
    let steps: usize = args.next().map_or(100, |s| s.parse().expect("STEPS is a number"));
    let prefix = format!("listcmp-{}-", std::process::id());
    let section = format!("{{type: rados, pool: {pool}, namespace_prefix: {prefix}}}");
    let config = fieldstore::Config::parse("rados_list_vs_gets", &format!("catalogue: {section}\nstore: {section}\n"))?;
    let fs = fieldstore::open(&config)?;
    let payload = vec![7u8; 4096];
    for step in 0..steps {
        for level in 0..10 {
            for param in 0..10 {
                let id = Key::parse(&format!(
                    "class=od,expver=0001,stream=oper,date=20231201,time=1200,type=fc,levtype=pl,step={step},levelist={level},param={param}"
                ))?;
                fs.archive(&id, &payload)?;
            }
        }
        fs.flush()?;
    }
    let request = Request::parse("class=od")?;
    let mut bulk = Duration::MAX;
    let mut fields = 0;
    for _ in 0..RUNS {
        let started = Instant::now();
        let reader = fieldstore::open(&config)?;
        fields = reader.list(&request, ListOptions::default())?.fields.len();
        bulk = bulk.min(started.elapsed());
    }

    // The baseline: the same entries, each fetched by its own omap get (keys gathered first,
    // untimed, so the baseline is if anything flattered).
    let cluster = fieldstore::rados::Cluster::connect(&Default::default())?;
    let catalogue = fieldstore::rados::catalogue::open(cluster.clone(), &pool, &prefix)?;
    let dataset = catalogue.datasets()?.into_iter().next().expect("the dataset just archived");
    let io = cluster.io(&pool, &format!("{prefix}{dataset}"))?;
    let mut view = catalogue.open(&dataset)?.expect("dataset");
    let mut entries = Vec::new();
    for index in view.indexes()? {
        for (key, _) in io.omap_scan(&index.id, "", "")?.unwrap_or_default() {
            entries.push((index.id.clone(), key));
        }
    }
    let mut per_entry = Duration::MAX;
    for _ in 0..RUNS.min(2) {
        let started = Instant::now();
        for (index, key) in &entries {
            let got = io.omap_get(index, &[key.as_str()])?.unwrap_or_default();
            assert_eq!(got.len(), 1, "{index} {key}");
        }
        per_entry = per_entry.min(started.elapsed());
    }
    fs.wipe(&Request::parse("class=od,expver=0001")?, true)?;
    println!(
        "{{\"fields\":{fields},\"entries\":{},\"list_seconds\":{:.6},\"per_entry_get_seconds\":{:.6},\"speedup\":{:.2}}}",
        entries.len(),
        bulk.as_secs_f64(),
        per_entry.as_secs_f64(),
        per_entry.as_secs_f64() / bulk.as_secs_f64()
    );
    Ok(())
}
