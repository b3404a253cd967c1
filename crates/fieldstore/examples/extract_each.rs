//! Profiling aid: a new handle resolves many one-field requests at once, as an extraction of
//! gribjump's callers does, and with RANGES a new extractor takes those ranges of each field
//! (its data set's kept packings read first). `cargo run --release --example extract_each --
//! CONFIG REQUEST KEYWORD COUNT [RANGES [RUNS]]`: REQUEST with KEYWORD set to each of 0..COUNT,
//! RANGES as `lo-hi,lo-hi` (`-`: resolve only).
use fieldstore::extract::{Extractor, Range};
use fieldstore::{ListOptions, Request};

fn main() {
    let mut args = std::env::args().skip(1);
    let config = fieldstore::Config::from_file(std::path::Path::new(&args.next().expect("config"))).unwrap();
    let request = args.next().expect("request");
    let keyword = args.next().expect("keyword");
    let count: usize = args.next().expect("count").parse().unwrap();
    let ranges: Option<Vec<Range>> = args.next().filter(|r| r != "-").map(|r| {
        r.split(',')
            .map(|r| {
                let (lo, hi) = r.split_once('-').expect("lo-hi");
                Range::new(lo.parse().unwrap(), hi.parse().unwrap())
            })
            .collect()
    });
    let runs: u32 = args.next().map_or(20, |r| r.parse().unwrap());
    let requests: Vec<(Request, Vec<Range>)> =
        (0..count).map(|i| (Request::parse(&format!("{request},{keyword}={i}")).unwrap(), ranges.clone().unwrap_or_default())).collect();
    let options = ListOptions { depth: 3, include_superseded: false, in_request_order: true, storage_order: false };
    let (mut best, mut first) = (std::time::Duration::MAX, None);
    for _ in 0..runs {
        let handle = fieldstore::open(&config).unwrap();
        let t = std::time::Instant::now();
        if ranges.is_some() {
            let extracted = Extractor::new().extract_each(&handle, &requests).unwrap();
            assert!(extracted.iter().all(|fields| fields.len() == 1 && !fields[0].extraction.decoded_whole));
        } else {
            let matched = handle.resolve_each(requests.iter().map(|(r, _)| r), options, None).unwrap();
            assert!(matched.iter().all(|m| m.as_ref().is_ok_and(|m| m.fields.len() == 1)));
        }
        let took = t.elapsed();
        first.get_or_insert(took);
        best = best.min(took);
    }
    let what = if ranges.is_some() { "extract_each" } else { "resolve_each" };
    eprintln!("{count} requests: first {:?}, best {best:?} per new handle's {what}", first.unwrap());
}
