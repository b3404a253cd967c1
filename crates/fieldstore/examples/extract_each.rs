//! Profiling aid: a new handle and extractor take the same ranges of many one-field requests at
//! once, as a process of gribjump's callers does (its data set's kept packings read first).
//! `cargo run --release --example extract_each -- CONFIG REQUEST KEYWORD COUNT RANGES [RUNS]`:
//! REQUEST with KEYWORD set to each of 0..COUNT, RANGES as `lo-hi,lo-hi`.
use fieldstore::extract::{Extractor, Range};

fn main() {
    let mut args = std::env::args().skip(1);
    let config = fieldstore::Config::from_file(std::path::Path::new(&args.next().expect("config"))).unwrap();
    let request = args.next().expect("request");
    let keyword = args.next().expect("keyword");
    let count: usize = args.next().expect("count").parse().unwrap();
    let ranges: Vec<Range> = args
        .next()
        .expect("ranges")
        .split(',')
        .map(|r| {
            let (lo, hi) = r.split_once('-').expect("lo-hi");
            Range::new(lo.parse().unwrap(), hi.parse().unwrap())
        })
        .collect();
    let runs: u32 = args.next().map_or(20, |r| r.parse().unwrap());
    let requests: Vec<(fieldstore::Request, Vec<Range>)> =
        (0..count).map(|i| (fieldstore::Request::parse(&format!("{request},{keyword}={i}")).unwrap(), ranges.clone())).collect();
    let (mut best, mut first) = (std::time::Duration::MAX, None);
    for _ in 0..runs {
        let handle = fieldstore::open(&config).unwrap();
        let extractor = Extractor::new();
        let t = std::time::Instant::now();
        let extracted = extractor.extract_each(&handle, &requests).unwrap();
        let took = t.elapsed();
        first.get_or_insert(took);
        best = best.min(took);
        assert!(extracted.iter().all(|fields| fields.len() == 1 && !fields[0].extraction.decoded_whole));
    }
    eprintln!("{count} requests: first {:?}, best {best:?} per new handle's extract_each", first.unwrap());
}
