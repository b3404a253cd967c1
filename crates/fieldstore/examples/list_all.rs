//! Profiling aid: a new handle lists everything a request names, repeatedly, as `bench
//! compare` times it. `cargo run --release --example list_all -- CONFIG REQUEST [RUNS]`
fn main() {
    let mut args = std::env::args().skip(1);
    let config = fieldstore::Config::from_file(std::path::Path::new(&args.next().expect("config"))).unwrap();
    let request = fieldstore::Request::parse(&args.next().expect("request")).unwrap();
    let runs: u32 = args.next().map_or(20, |r| r.parse().unwrap());
    let mut best = std::time::Duration::MAX;
    let mut fields = 0;
    for _ in 0..runs {
        let t = std::time::Instant::now();
        let handle = fieldstore::open(&config).unwrap();
        fields = handle.list(&request, Default::default()).unwrap().fields.len();
        best = best.min(t.elapsed());
    }
    eprintln!("{fields} fields: best {best:?} per new handle's list");
}
