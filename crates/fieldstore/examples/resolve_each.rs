//! Profiling aid: a new handle resolves many one-field requests at once, as an extraction of
//! gribjump's callers does. `cargo run --release --example resolve_each -- CONFIG REQUEST
//! KEYWORD COUNT [RUNS]`: REQUEST with KEYWORD set to each of 0..COUNT.
fn main() {
    let mut args = std::env::args().skip(1);
    let config = fieldstore::Config::from_file(std::path::Path::new(&args.next().expect("config"))).unwrap();
    let request = args.next().expect("request");
    let keyword = args.next().expect("keyword");
    let count: usize = args.next().expect("count").parse().unwrap();
    let runs: u32 = args.next().map_or(20, |r| r.parse().unwrap());
    let requests: Vec<fieldstore::Request> =
        (0..count).map(|i| fieldstore::Request::parse(&format!("{request},{keyword}={i}")).unwrap()).collect();
    let options = fieldstore::ListOptions { depth: 3, include_superseded: false, in_request_order: true, storage_order: false };
    let (mut best, mut first) = (std::time::Duration::MAX, None);
    for _ in 0..runs {
        let handle = fieldstore::open(&config).unwrap();
        let t = std::time::Instant::now();
        let matched = handle.resolve_each(&requests, options, None).unwrap();
        let took = t.elapsed();
        first.get_or_insert(took);
        best = best.min(took);
        assert!(matched.iter().all(|m| m.as_ref().is_ok_and(|m| m.fields.len() == 1)));
    }
    eprintln!("{count} requests: first {:?}, best {best:?} per new handle's resolve_each", first.unwrap());
}
