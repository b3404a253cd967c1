//! Profiling aid: many small flushes (one index each), then timed point retrieves.
use std::io::Read;
fn main() {
    let root = std::env::args().nth(1).expect("root");
    let n: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let yaml = format!("catalogue: {{type: posix, root: {root}}}\nstore: {{type: posix, root: {root}}}\n");
    let mut fs = fieldstore::open(&fieldstore::Config::parse("p", &yaml).unwrap()).unwrap();
    if std::fs::read_dir(&root).map(|d| d.count()).unwrap_or(0) == 0 {
        for i in 0..n {
            let k = fieldstore::Key::parse(&format!(
                "class=od,expver=1,stream=enfo,date=20231201,time=12,type=pf,levtype=pl,step={},number={},levelist=500,param=130",
                i % 50,
                i / 50
            ))
            .unwrap();
            fs.archive(&k, b"0123456789").unwrap();
            fs.flush().unwrap();
        }
    }
    let t = std::time::Instant::now();
    for i in 0..50 {
        let r = fieldstore::Request::parse(&format!("class=od,number={},step={}", i % 40, i)).unwrap();
        let (mut reader, _) = fs.retrieve(&r).unwrap();
        let mut v = Vec::new();
        reader.read_to_end(&mut v).unwrap();
    }
    eprintln!("{:?} per retrieve", t.elapsed() / 50);
}
