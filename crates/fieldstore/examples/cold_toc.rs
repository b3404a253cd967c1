//! Profiling aid: how long a new handle takes to read a dataset's catalogue (its TOC),
//! repeated on fresh views. `cargo run --release --example cold_toc -- ROOT`
use fieldstore::Catalogue;
fn main() {
    let root = std::env::args().nth(1).expect("root");
    let catalogue = fieldstore_posix::PosixCatalogue::new(&root);
    let dataset = catalogue.datasets().unwrap().into_iter().next().expect("a dataset");
    let runs = 30;
    let t = std::time::Instant::now();
    let mut indexes = 0;
    for _ in 0..runs {
        let mut view = catalogue.open(&dataset).unwrap().unwrap();
        indexes = view.indexes().unwrap().len();
    }
    eprintln!("{indexes} indexes: {:?} per new view", t.elapsed() / runs);
}
