//! Profiling aid: sequential whole-object reads through `IoCtx::read_exact`, to compare with
//! `rados bench seq -t 1`. `CEPH_CONF=... cargo run --release -p fieldstore-rados --example raw_reads -- POOL SIZE COUNT`
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (pool, size, count): (&str, usize, usize) = (&args[0], args[1].parse().unwrap(), args[2].parse().unwrap());
    let cluster = fieldstore_rados::Cluster::connect(&Default::default()).unwrap();
    let io = cluster.io(pool, &format!("raw-reads-{}", std::process::id())).unwrap();
    let data = vec![5u8; size];
    let t = std::time::Instant::now();
    for i in 0..count {
        io.write_full(&format!("o{i}"), &data).unwrap();
    }
    let write = t.elapsed().as_secs_f64();
    let mut buf = vec![0u8; size];
    let t = std::time::Instant::now();
    for i in 0..count {
        io.read_exact(&format!("o{i}"), 0, &mut buf).unwrap();
    }
    let read = t.elapsed().as_secs_f64();
    let mib = (size * count) as f64 / 1048576.0;
    println!("write {:.1} MiB/s, read {:.1} MiB/s", mib / write, mib / read);
    for i in 0..count {
        io.remove(&format!("o{i}")).unwrap();
    }
}
