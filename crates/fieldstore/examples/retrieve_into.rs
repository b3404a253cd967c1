//! The Rust API's side of the Python benchmark (scripts/python-bench.sh): a new handle
//! retrieves what a request names and reads it all into one buffer of BUFFER bytes, reused
//! (`Read::read`, as Python's `Reader.readinto` does). Prints the seconds of each run, from
//! opening the handle to the last byte, as one JSON line.
//!
//! `cargo run --release --example retrieve_into -- CONFIG REQUEST BUFFER [RUNS]`
use std::io::Read;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let usage = "usage: retrieve_into CONFIG REQUEST BUFFER [RUNS]";
    let config = fieldstore::Config::from_file(std::path::Path::new(&args.next().ok_or(usage)?))?;
    let request = fieldstore::Request::parse(&args.next().ok_or(usage)?)?;
    let mut buffer = vec![0u8; args.next().ok_or(usage)?.parse()?];
    let runs: usize = args.next().map_or(Ok(1), |r| r.parse())?;
    let mut seconds = Vec::with_capacity(runs);
    let mut bytes = 0u64;
    for _ in 0..runs {
        let started = std::time::Instant::now();
        let handle = fieldstore::open(&config)?;
        let (mut reader, _) = handle.retrieve(&request)?;
        bytes = 0;
        loop {
            match reader.read(&mut buffer)? {
                0 => break,
                n => bytes += n as u64,
            }
        }
        seconds.push(started.elapsed().as_secs_f64());
    }
    println!("{{\"api\": \"rust\", \"buffer\": {}, \"bytes\": {bytes}, \"seconds\": {seconds:?}}}", buffer.len());
    Ok(())
}
