//! The `fieldstore` binary end to end: formats, round trips, and clear errors that lose
//! nothing already stored (bad GRIB, bad config, bad schema, full and read-only disks).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_fieldstore");

struct Env {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
}

impl Env {
    fn new() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let (root, work) = (dir.path().join("root"), dir.path().join("work"));
        std::fs::create_dir_all(&work).unwrap();
        Env { _dir: dir, root, work }
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new(BIN).args(args).env("FIELDSTORE_ROOT", &self.root).env_remove("FIELDSTORE_CONFIG").output().unwrap()
    }

    /// Runs and requires success; returns stdout.
    fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(out.status.success(), "{args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Runs and requires failure; returns stderr.
    fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args);
        assert!(!out.status.success(), "{args:?} should fail");
        String::from_utf8(out.stderr).unwrap()
    }

    fn path(&self, name: &str) -> String {
        self.work.join(name).display().to_string()
    }

    fn sample(&self, name: &str, extra: &[&str]) -> String {
        let path = self.path(name);
        let mut args = vec!["sample", "-o", &path];
        args.extend_from_slice(extra);
        self.ok(&args);
        path
    }
}

#[test]
fn archive_list_axes_retrieve_round_trip() {
    let env = Env::new();
    let file = env.sample("a.grib", &["--steps", "0/6/12", "--levels", "500/850", "--params", "130/131"]);
    env.ok(&["archive", &file]);
    let list = env.ok(&["list", "class=od,expver=0001,step=6,levelist=850"]);
    assert_eq!(
        list,
        "{class=od,expver=0001,stream=oper,date=20231201,time=1200,domain=g}{type=fc,levtype=pl}{step=6,levelist=850,param=130}\n\
         {class=od,expver=0001,stream=oper,date=20231201,time=1200,domain=g}{type=fc,levtype=pl}{step=6,levelist=850,param=131}\n"
    );
    assert_eq!(
        env.ok(&["list", "--flat", "class=od,expver=1,step=12,levelist=500,param=t"]),
        "class=od,expver=0001,stream=oper,date=20231201,time=1200,domain=g,type=fc,levtype=pl,step=12,levelist=500,param=130\n"
    );
    assert_eq!(env.ok(&["list", "--all", "--depth", "1"]), "{class=od,expver=0001,stream=oper,date=20231201,time=1200,domain=g}\n");
    assert_eq!(env.ok(&["list", "--all", "--depth", "2"]).lines().count(), 1);
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["list", "--json", "class=od,expver=0001,step=0"])).unwrap();
    assert_eq!(json.as_array().unwrap().len(), 4);
    assert_eq!(json[0]["element"]["step"], "0");
    assert!(json[0]["location"]["length"].as_u64().unwrap() > 0);
    assert!(env.ok(&["list", "--location", "class=od,expver=0001,step=0,levelist=500,param=130"]).contains("offset=0 length="));
    let axes: serde_json::Value = serde_json::from_str(&env.ok(&["axes", "--json", "class=od,expver=0001"])).unwrap();
    assert_eq!(axes["step"], serde_json::json!(["0", "6", "12"]));
    let back = env.path("back.grib");
    env.ok(&["retrieve", "class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=pl", "-o", &back]);
    assert_eq!(std::fs::read(&back).unwrap(), std::fs::read(&file).unwrap());
    let stdout = env.ok(&["retrieve", "class=od,expver=0001,step=0,levelist=500,param=130", "-o", "-"]);
    assert!(stdout.starts_with("GRIB"));
    let req = env.path("req.mars");
    std::fs::write(
        &req,
        "retrieve,class=od,expver=0001,step=0,levelist=500\nretrieve,class=od,expver=0001,step=12,levelist=850,param=131\n",
    )
    .unwrap();
    let multi = env.path("multi.grib");
    env.ok(&["retrieve", "--request-file", &req, "-o", &multi]);
    assert_eq!(fieldstore::grib::scan(&std::fs::read(&multi).unwrap(), "multi").unwrap().len(), 3);
    let stats: serde_json::Value = serde_json::from_str(&env.ok(&["stats", "--all", "--json"])).unwrap();
    assert_eq!(stats["fields"], 12);
}

#[test]
fn raw_archive_with_key_lock_status_wipe() {
    let env = Env::new();
    let raw = env.path("raw.bin");
    std::fs::write(&raw, b"not grib at all").unwrap();
    let key = "class=rd,expver=abcd,stream=oper,date=20240101,time=0,type=an,levtype=sfc,step=0,param=167";
    env.ok(&["archive", "--key", key, &raw]);
    let out = env.path("out.bin");
    env.ok(&["retrieve", "class=rd,expver=abcd,param=167", "-o", &out]);
    assert_eq!(std::fs::read(&out).unwrap(), b"not grib at all");
    let dataset = "class=rd,expver=abcd,stream=oper,date=20240101,time=0";
    env.ok(&["lock", dataset, "--action", "archive"]);
    assert!(env.ok(&["status", "class=rd,expver=abcd"]).contains("locked: archive"));
    assert!(env.fails(&["archive", "--key", key, &raw]).contains("locked for archive"));
    env.ok(&["unlock", dataset]);
    assert!(env.ok(&["status", "class=rd,expver=abcd"]).contains("locked: none"));
    assert!(env.fails(&["lock", dataset, "--action", "frobnicate"]).contains("unknown action 'frobnicate'"));
    assert!(env.ok(&["wipe", dataset]).contains("would wipe"));
    assert!(env.ok(&["wipe", dataset, "--doit"]).contains("wiped data set"));
    // The data set's directory is gone, the store's root stays.
    let err = env.fails(&["retrieve", "class=rd,expver=abcd", "-o", &out]);
    assert!(err.contains("nothing matched") && err.contains("no data sets"), "{err}");
}

#[test]
fn bad_grib_is_refused_whole_and_named() {
    let env = Env::new();
    let good = env.sample("good.grib", &["--steps", "0/6"]);
    let bytes = std::fs::read(&good).unwrap();
    let truncated = env.path("truncated.grib");
    std::fs::write(&truncated, &bytes[..bytes.len() - 10]).unwrap();
    let err = env.fails(&["archive", &truncated]);
    assert!(err.contains("truncated.grib, message 2") && err.contains("truncated"), "{err}");
    assert!(env.fails(&["list", "--all"]).contains("find a store at"), "no part of a bad input is archived");
    let corrupt = env.path("corrupt.grib");
    let mut c = bytes.clone();
    c.truncate(bytes.len() / 2);
    c.extend_from_slice(b"JUNKJUNK");
    std::fs::write(&corrupt, &c).unwrap();
    assert!(env.fails(&["archive", &corrupt]).contains("corrupt.grib"));
    let err = env.fails(&["archive", "/usr/share/eccodes/samples/GRIB2.tmpl"]);
    assert!(err.contains("no MARS 'class' key") && err.contains("grib_set"), "{err}");
    env.ok(&["archive", &good]);
    assert_eq!(env.ok(&["list", "--all"]).lines().count(), 2);
}

#[test]
fn archive_reads_standard_input() {
    let env = Env::new();
    let file = env.sample("in.grib", &["--steps", "0/6/12", "--levtype", "sfc", "--params", "167"]);
    let out = Command::new(BIN)
        .args(["archive", "-"])
        .env("FIELDSTORE_ROOT", &env.root)
        .stdin(std::fs::File::open(&file).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("archived 3 fields"));
    assert_eq!(env.ok(&["list", "--porcelain", "class=od,expver=0001,levtype=sfc,step=12"]).lines().count(), 1);
}

#[test]
fn config_and_schema_errors_name_the_culprit() {
    let env = Env::new();
    let config = env.path("bad.yaml");
    std::fs::write(&config, "catalogue: {type: posix, root: /tmp/x}\nstore: {type: s4}\n").unwrap();
    let err = env.fails(&["--config", &config, "list"]);
    assert!(err.contains("bad.yaml") && err.contains("store.type 's4' is not known"), "{err}");
    std::fs::write(&config, "catalogue: {type: posix, rot: /tmp/x}\nstore: {type: posix, root: /tmp/x}\n").unwrap();
    assert!(env.fails(&["--config", &config, "list"]).contains(
        "catalogue.rot (type 'posix'): unknown field `rot`, expected one of `root`, `spaces`, `subdirectory`, `create`, `commit`"
    ));
    let schema = env.path("bad.schema");
    std::fs::write(&schema, "param: Param;\n[ class, expver\n  [ type [ step, param= ]]]\n").unwrap();
    let err = env.fails(&["schema", "--check", &schema]);
    assert!(err.contains("bad.schema:3:") && err.contains("expected a value"), "{err}");
    let fdb5 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/fdb5/schema");
    assert!(env.ok(&["schema", "--check", fdb5.to_str().unwrap()]).contains(": ok: "));
    assert!(env.ok(&["schema"]).contains("fieldstore's default schema"));
    let split = env.ok(&[
        "schema",
        "--split",
        "class=od,expver=1,stream=enfo,date=20231201,time=0,domain=g,type=pf,levtype=pl,step=1,number=2,levelist=500,param=t",
    ]);
    assert_eq!(split, "{class=od,expver=0001,stream=enfo,date=20231201,time=0000,domain=g}{type=pf,levtype=pl,anoffset=}{step=1,number=2,levelist=500,param=130,frequency=,direction=}\n");
    // `info` checks the configuration as a reader uses it: a store that is not there, a
    // schema file that is not there, are errors naming the path.
    let err = env.fails(&["info"]);
    assert!(err.contains("find a store at") && err.contains(env.root.to_str().unwrap()), "{err}");
    std::fs::write(
        &config,
        format!("schema: /no/such.schema\ncatalogue: {{type: posix, root: {0}}}\nstore: {{type: posix, root: {0}}}\n", env.root.display()),
    )
    .unwrap();
    assert!(env.fails(&["--config", &config, "info"]).contains("schema /no/such.schema"));
    env.ok(&["archive", &env.sample("one.grib", &["--steps", "0"])]);
    let info: serde_json::Value = serde_json::from_str(&env.ok(&["info", "--json"])).unwrap();
    assert_eq!((info["store"]["type"].as_str(), info["datasets"].as_u64()), (Some("posix"), Some(1)));
}

/// Runs a shell script inside a new user and mount namespace, where it may mount a small
/// tmpfs of its own: a real full and a real read-only file system, with or without root.
fn in_namespace(script: &str) -> Output {
    Command::new("unshare")
        .args(["--user", "--map-root-user", "--mount", "bash", "-euc", script])
        .output()
        .expect("unshare (util-linux) runs")
}

#[test]
fn full_and_read_only_disks_give_one_clear_error_and_lose_nothing() {
    let env = Env::new();
    let small = env.sample("small.grib", &["--steps", "0/6/12"]);
    let big = env.path("big.bin");
    std::fs::write(&big, vec![7u8; 2 << 20]).unwrap();
    let mnt = env.path("mnt");
    std::fs::create_dir_all(&mnt).unwrap();
    let script = format!(
        r#"
        mount -t tmpfs -o size=1m tmpfs {mnt}
        export FIELDSTORE_ROOT={mnt}/root
        {BIN} archive {small}
        {BIN} retrieve class=od,expver=1 -o {mnt}/before.grib
        if {BIN} archive --key class=od,expver=1,stream=oper,date=20231201,time=12,type=fc,levtype=pl,step=99,levelist=1,param=1 {big} 2> {full_err}; then echo "full archive succeeded"; exit 1; fi
        grep -q "No space left on device" {full_err} || {{ cat {full_err}; exit 1; }}
        test "$(wc -l < {full_err})" = 1
        rm -f {mnt}/before.grib
        {BIN} retrieve class=od,expver=1 -o /dev/stdout | cmp - {small}
        test "$({BIN} list class=od,expver=1 | wc -l)" = 3
        mount -o remount,ro {mnt}
        if {BIN} archive {small} 2> {env_err}; then echo "read-only archive succeeded"; exit 1; fi
        grep -q "Read-only file system" {env_err}
        {BIN} retrieve class=od,expver=1 -o /dev/stdout | cmp - {small}
        echo all-good
        "#,
        env_err = env.path("ro.err"),
        full_err = env.path("full.err"),
    );
    let out = in_namespace(&script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && stdout.contains("all-good"), "stdout: {stdout}\nstderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(std::fs::read_to_string(env.path("ro.err")).unwrap().starts_with("fieldstore: error: "));
    let full = std::fs::read_to_string(env.path("full.err")).unwrap();
    assert_eq!(full.matches("No space left on device").count(), 1, "{full}");
}

#[test]
fn bench_hammer_writes_reads_and_lists_with_json_phases() {
    let env = Env::new();
    let small = ["--nsteps", "3", "--nlevels", "2", "--nparams", "3", "--field-size", "2048", "--md-check", "--json"];
    let phase = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["bench", "hammer"];
        args.extend_from_slice(&small);
        args.extend_from_slice(extra);
        serde_json::from_str(env.ok(&args).trim()).unwrap()
    };
    let write = phase(&[]);
    assert_eq!((write["mode"].as_str(), write["fields"].as_u64(), write["bytes"].as_u64()), (Some("write"), Some(18), Some(18 * 2048)));
    let read = phase(&["--read"]);
    assert_eq!((read["mode"].as_str(), read["fields"].as_u64()), (Some("read"), Some(18)));
    assert!(read["last_io_us"].as_u64() >= read["first_io_us"].as_u64());
    assert_eq!(phase(&["--list"])["fields"].as_u64(), Some(18));
    let err = env.fails(&["bench", "hammer", "--nsteps", "4", "--nlevels", "2", "--nparams", "3", "--read"]);
    assert!(err.contains("step 3") && err.contains("0 of 6 fields found"), "{err}");
}

#[test]
fn bench_hammer_runs_on_daos_with_several_processes() {
    let env = Env::new();
    let Some((library, root)) = fieldstore_testing::daos_emulation() else { return };
    std::fs::create_dir_all(root.join("cli")).unwrap();
    let label = format!("hammer{}", std::process::id());
    let config = env.path("daos.yaml");
    let section = format!("{{type: daos, pool: cli, root_container: {label}, library: {library}}}");
    std::fs::write(&config, format!("catalogue: {section}\nstore: {section}\n")).unwrap();
    let run = |extra: &[&str]| -> serde_json::Value {
        let mut args = vec!["--config", &config, "bench", "hammer", "--procs", "2", "--nsteps", "2", "--nlevels", "2", "--nparams", "2"];
        args.extend_from_slice(&["--nensembles", "2", "--field-size", "4096", "--full-check", "--json"]);
        args.extend_from_slice(extra);
        serde_json::from_str(env.ok(&args).lines().last().unwrap()).unwrap()
    };
    // Each process writes its own ensemble members: 2 processes x 2 members x 2 steps x 2
    // levels x 2 parameters.
    assert_eq!(run(&[])["fields"].as_u64(), Some(32));
    let read = run(&["--read"]);
    assert_eq!((read["mode"].as_str(), read["bytes"].as_u64()), (Some("read"), Some(32 * 4096)));
    assert_eq!(run(&["--list"])["fields"].as_u64(), Some(32));
}

#[test]
fn hammer_logs_merge_into_per_phase_metrics() {
    let env = Env::new();
    let log = env.path("events.jsonl");
    // Two ranks of one run, as a launcher starts them: each writes its own members and log.
    let run = |rank: &str, extra: &[&str]| {
        let mut args = vec!["bench", "hammer", "--nsteps", "3", "--nlevels", "2", "--nparams", "2", "--field-size", "1000", "--log", &log];
        args.extend_from_slice(extra);
        let out = Command::new(BIN)
            .args(&args)
            .env("FIELDSTORE_ROOT", &env.root)
            .env("FIELDSTORE_RANK", rank)
            .env("FIELDSTORE_SIZE", "2")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    for rank in ["0", "1"] {
        run(rank, &[]);
    }
    for rank in ["0", "1"] {
        run(rank, &["--read"]);
    }
    let (log0, log1) = (format!("{log}.0"), format!("{log}.1"));
    let report: serde_json::Value = serde_json::from_str(&env.ok(&["bench", "analyze", "--json", &log0, &log1])).unwrap();
    let phases = report["phases"].as_array().unwrap();
    let write = phases.iter().find(|p| p["phase"] == "write").unwrap();
    assert_eq!(
        (write["processes"].as_u64(), write["iterations"].as_u64(), write["bytes"].as_u64()),
        (Some(2), Some(3), Some(2 * 12 * 1000))
    );
    assert!(write["breakdown"]["flush"].as_f64().unwrap() > 0.0);
    let read = phases.iter().find(|p| p["phase"] == "read").unwrap();
    // Steps are read with one request, and still reported one iteration per step.
    assert_eq!((read["processes"].as_u64(), read["iterations"].as_u64(), read["bytes"].as_u64()), (Some(2), Some(3), Some(24_000)));
    // The reads ran after the writes: no write/read overlap figures (reports.rs has runs that overlap).
    assert!(report["overlap"]["po_0"].is_null(), "{}", report["overlap"]);
    std::fs::write(env.path("bad.jsonl"), "{\"not\": \"an event\"}\n").unwrap();
    assert!(env.fails(&["bench", "analyze", &env.path("bad.jsonl")]).contains("bad.jsonl:1: not an event"));
}

#[test]
fn hammer_starts_processes_behind_a_barrier() {
    let env = Env::new();
    let log = env.path("procs.jsonl");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    let barrier = format!("tcp:127.0.0.1:{port}");
    let common = ["bench", "hammer", "--procs", "3", "--nsteps", "2", "--nlevels", "2", "--nparams", "2", "--field-size", "4096", "--json"];
    let mut args = common.to_vec();
    args.extend_from_slice(&["--barrier", &barrier, "--log", &log]);
    let out = env.ok(&args);
    let lines: Vec<serde_json::Value> = out.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 4, "three ranks and the aggregate: {out}");
    let total = &lines[3];
    assert_eq!((total["procs"].as_u64(), total["fields"].as_u64(), total["bytes"].as_u64()), (Some(3), Some(24), Some(24 * 4096)));
    // Each rank wrote its own members: all 24 fields are there, read back by 3 processes.
    let mut read = common.to_vec();
    read.push("--read");
    let read_out = env.ok(&read);
    assert_eq!(serde_json::from_str::<serde_json::Value>(read_out.lines().last().unwrap()).unwrap()["fields"].as_u64(), Some(24));
    // A step nobody wrote: every rank fails, and every one is waited for and named.
    let mut missing = read.clone();
    missing[5] = "3";
    let err = env.fails(&missing);
    assert!(err.contains("3 of 3 processes failed (rank 0, 1, 2;") && err.contains("step 2"), "{err}");
    let logs: Vec<String> = (0..3).map(|r| format!("{log}.{r}")).collect();
    let mut analyze = vec!["bench", "analyze", "--json"];
    analyze.extend(logs.iter().map(String::as_str));
    let report: serde_json::Value = serde_json::from_str(&env.ok(&analyze)).unwrap();
    assert_eq!(report["phases"][0]["processes"].as_u64(), Some(3));
}

/// The object pools the field-io and ior tests run on: a directory, a Ceph pool of the test
/// cluster (a namespace prefix of its own per call), and a pool of the libdaos emulation, each
/// where its service is there (`fieldstore_testing` says what is skipped).
fn object_pools(env: &Env, name: &str) -> Vec<Vec<String>> {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
    let prefix = format!("{name}-{}-{nanos}-", std::process::id());
    let mut pools = vec![vec!["--pool".into(), env.path(name)]];
    if let Some(conf) = fieldstore_testing::ceph_conf() {
        let rados_pool = fieldstore_testing::rados_pool("FIELDSTORE_TEST_RADOS_POOL", "fieldstore");
        pools.push(vec!["--pool".into(), format!("rados:{rados_pool}/{prefix}"), "--ceph-conf".into(), conf.display().to_string()]);
    }
    if let Some((library, root)) = fieldstore_testing::daos_emulation() {
        std::fs::create_dir_all(root.join("cli")).unwrap();
        let daos_prefix = prefix.replace(|c: char| !c.is_ascii_alphanumeric(), "");
        pools.push(vec![
            "--pool".into(),
            format!("daos:cli/{daos_prefix}"),
            "--daos-library".into(),
            library,
            "--daos-class".into(),
            "OC_S2".into(),
        ]);
    }
    pools
}

#[test]
fn bench_ior_writes_and_reads_another_ranks_array() {
    let env = Env::new();
    for pool in object_pools(&env, "ior") {
        let mut base: Vec<&str> = vec!["bench", "ior", "--procs", "2", "-s", "4", "-t", "8192", "--json"];
        base.extend(pool.iter().map(String::as_str));
        let write = env.ok(&base);
        let total: serde_json::Value = serde_json::from_str(write.lines().last().unwrap()).unwrap();
        assert_eq!((total["fields"].as_u64(), total["bytes"].as_u64()), (Some(8), Some(8 * 8192)), "{pool:?}");
        let mut read = base.to_vec();
        read.extend_from_slice(&["--read", "--reorder"]);
        let total: serde_json::Value = serde_json::from_str(env.ok(&read).lines().last().unwrap()).unwrap();
        assert_eq!((total["mode"].as_str(), total["bytes"].as_u64()), (Some("read"), Some(8 * 8192)), "{pool:?}");
        let mut longer = read.clone();
        longer[5] = "8";
        assert!(env.fails(&longer).contains("failed"), "{pool:?}: reading more segments than were written fails");
    }
}

#[test]
fn bench_ior_through_hdf5_writes_a_file_per_rank_and_reads_another_ranks() {
    let env = Env::new();
    let pool = env.path("hdf5");
    let base = ["bench", "ior", "--api", "hdf5", "--pool", &pool, "--procs", "2", "-t", "8192", "--json", "-s"];
    let segments = |s: &'static str| [&base[..], &[s]].concat();
    let total: serde_json::Value = serde_json::from_str(env.ok(&segments("4")).lines().last().unwrap()).unwrap();
    assert_eq!((total["fields"].as_u64(), total["bytes"].as_u64()), (Some(8), Some(8 * 8192)));
    for rank in ["00000000", "00000001"] {
        let file = std::fs::read(Path::new(&pool).join("ior-hdf5").join(format!("testFile.{rank}"))).unwrap();
        assert_eq!(&file[..8], b"\x89HDF\r\n\x1a\n", "an HDF5 file per rank");
    }
    let read = |s: &'static str| [&segments(s)[..], &["--read", "--reorder", "--check"]].concat();
    let total: serde_json::Value = serde_json::from_str(env.ok(&read("4")).lines().last().unwrap()).unwrap();
    assert_eq!((total["mode"].as_str(), total["bytes"].as_u64()), (Some("read"), Some(8 * 8192)));
    let e = env.fails(&read("5"));
    assert!(e.contains("has no dataset Dataset-0000.0004: it holds fewer segments than -s 5"), "{e}");
    let e = env.fails(&segments("4").into_iter().chain(["--check"]).collect::<Vec<_>>());
    assert!(e.contains("--check compares what a read reads: it goes with --read"), "{e}");

    let odd = env.fails(&["bench", "ior", "--api", "hdf5", "--pool", &pool, "-t", "1001"]);
    assert!(odd.contains("-t 1001: with --api hdf5 a transfer is of 64-bit integers"), "{odd}");
    let objects = env.fails(&["bench", "ior", "--api", "hdf5", "--pool", "rados:fieldstore"]);
    assert!(objects.contains("--pool must be a directory, not \"rados:fieldstore\" (rados)"), "{objects}");
    let missing = env.fails(&["bench", "ior", "--api", "hdf5", "--pool", &env.path("none"), "--read"]);
    assert!(missing.contains("no HDF5 file of rank 0 (run the write first)"), "{missing}");

    // HDF5 is loaded by --api hdf5 alone: no other command pays for loading it (and the
    // libraries it needs) at its start, and where it is missing, --api hdf5 says so.
    let needed = Command::new("ldd").arg(BIN).output().unwrap();
    assert!(!String::from_utf8_lossy(&needed.stdout).contains("hdf5"), "{}", String::from_utf8_lossy(&needed.stdout));
    let out = Command::new(BIN)
        .args(["bench", "ior", "--api", "hdf5", "--pool", &pool])
        .env("FIELDSTORE_ROOT", &env.root)
        .env("FIELDSTORE_HDF5_LIBRARY", env.path("libhdf5-nowhere.so"))
        .output()
        .unwrap();
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && e.contains("--api hdf5 needs HDF5's C library, 1.10 or later, and none could be loaded"), "{e}");
    assert!(e.contains("libhdf5-nowhere.so") && e.contains("FIELDSTORE_HDF5_LIBRARY"), "{e}");
}

#[test]
fn bench_field_io_in_every_mode_and_pattern_b() {
    let env = Env::new();
    for mode in ["full", "no-containers", "no-index"] {
        for pool in object_pools(&env, mode) {
            let mut base: Vec<&str> =
                vec!["bench", "field-io", "--mode", mode, "--procs", "2", "--iterations", "5", "--size", "4096", "--json"];
            base.extend(pool.iter().map(String::as_str));
            let write = env.ok(&base);
            let total: serde_json::Value = serde_json::from_str(write.lines().last().unwrap()).unwrap();
            assert_eq!((total["mode"].as_str(), total["fields"].as_u64()), (Some("write"), Some(10)), "{mode} {pool:?}");
            let mut read = base.to_vec();
            read.extend_from_slice(&["--read", "--reorder"]);
            let total: serde_json::Value = serde_json::from_str(env.ok(&read).lines().last().unwrap()).unwrap();
            assert_eq!((total["mode"].as_str(), total["bytes"].as_u64()), (Some("read"), Some(10 * 4096)), "{mode} {pool:?}");
            let mut contention = base.to_vec();
            contention.extend_from_slice(&["--pattern", "B"]);
            let modes: Vec<String> = env
                .ok(&contention)
                .lines()
                .rev()
                .take(2)
                .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["mode"].as_str().unwrap().to_string())
                .collect();
            assert_eq!(modes, ["write", "read"], "{mode} {pool:?}: one aggregate per mode");
        }
    }
    assert!(env.fails(&["bench", "field-io", "--mode", "fast"]).contains("[possible values: full, no-containers, no-index]"));
    if let Some(conf) = fieldstore_testing::ceph_conf() {
        let missing = env.fails(&["bench", "field-io", "--pool", "rados:no-such-pool", "--ceph-conf", conf.to_str().unwrap()]);
        assert!(missing.contains("pool 'no-such-pool' does not exist"), "{missing}");
    }
    if let Some((library, _)) = fieldstore_testing::daos_emulation() {
        let missing = env.fails(&["bench", "field-io", "--pool", "daos:no-such-pool", "--daos-library", &library]);
        assert!(missing.contains("pool 'no-such-pool'") && missing.contains("DER_NONEXIST"), "{missing}");
        let class = env.fails(&["bench", "ior", "--pool", "daos:cli", "--daos-library", &library, "--daos-class", "OC_S3"]);
        assert!(class.contains("unknown DAOS object class 'OC_S3'"), "{class}");
    }
}

#[test]
fn hammer_operational_mode_readers_follow_writers() {
    let env = Env::new();
    let args = [
        "bench",
        "hammer",
        "--itt",
        "--step-seconds",
        "0.05",
        "--procs",
        "2",
        "--nsteps",
        "4",
        "--nlevels",
        "2",
        "--nparams",
        "2",
        "--field-size",
        "2048",
        "--md-check",
        "--json",
    ];
    let out = env.ok(&args);
    let totals: Vec<serde_json::Value> = out.lines().rev().take(2).map(|l| serde_json::from_str(l).unwrap()).collect();
    let (read, write) = (&totals[1], &totals[0]);
    assert_eq!((read["mode"].as_str(), write["mode"].as_str()), (Some("read"), Some("write")));
    assert_eq!(read["fields"], write["fields"]);
    assert!(read["first_io_us"].as_u64() < write["last_io_us"].as_u64(), "reading started while writing");
}

#[test]
fn a_grib1_field_over_8_mib_round_trips() {
    let env = Env::new();
    let big =
        env.sample("big.grib", &["--template", "reduced_gg_pl_1280_grib1", "--levtype", "sfc", "--params", "167", "--fill-bits", "16"]);
    assert!(std::fs::metadata(&big).unwrap().len() > 8 << 20);
    env.ok(&["archive", &big]);
    let back = env.path("back.grib");
    env.ok(&["retrieve", "class=od,expver=1,levtype=sfc,param=2t", "-o", &back]);
    assert!(std::fs::read(&back).unwrap() == std::fs::read(&big).unwrap(), "retrieved bytes differ");
}

/// What FDB5's users write: names ecCodes knows (also of accumulated and extreme fields),
/// any case; explanations name the keyword that does not match; ecCodes never prints on
/// fieldstore's standard error.
#[test]
fn parameter_names_case_and_explanations_as_fdb5_users_write_them() {
    let env = Env::new();
    let sfc = env.sample("sfc.grib", &["--levtype", "sfc", "--steps", "6", "--params", "228/142/49/201/167", "--template", "GRIB1"]);
    let enfo = env.sample("enfo.grib", &["--stream", "enfo", "--type", "pf", "--numbers", "1/2", "--levels", "500"]);
    env.ok(&["archive", &sfc, &enfo]);
    let listed = env.ok(&["list", "--flat", "CLASS=OD,EXPVER=0001,stream=OPER,type=FC,levtype=SFC,param=tp/lsp/10fg/mx2t"]);
    assert_eq!(listed.lines().count(), 4, "{listed}");
    for request in ["param=tp", "param=no_such_name", "param=é", "stream=xxxx"] {
        let out = env.run(&["list", "--minimum-keys=", request]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{request}: {stderr}");
        assert!(!stderr.contains("ECCODES"), "{request}: {stderr}");
    }
    let why = String::from_utf8_lossy(&env.run(&["list", "class=od,expver=0001,stream=xxxx"]).stderr).into_owned();
    assert!(why.contains("no data set of class=od,expver=0001 has stream=xxxx") && !why.contains("no data set has class=od"), "{why}");
}

/// A typo never widens a command, odd inputs are read or refused by name, and a closed or
/// full output never turns into a crash (issue 17's points 7, 8, 11 and 15).
#[test]
fn typos_pipes_and_closed_outputs_are_handled() {
    let env = Env::new();
    let file = env.sample("a.grib", &["--steps", "0/6", "--time", "12"]);
    let shell = |script: &str| {
        Command::new("bash")
            .arg("-c")
            .arg(script)
            .env("F", BIN)
            .env("FIELDSTORE_ROOT", &env.root)
            .env_remove("FIELDSTORE_CONFIG")
            .output()
            .unwrap()
    };
    // Read from a pipe, not taken as empty; a directory is named as such.
    let piped = shell(&format!("$F archive <(cat {file})"));
    assert!(String::from_utf8_lossy(&piped.stderr).contains("archived 2 fields"), "{piped:?}");
    assert!(env.fails(&["archive", env.work.to_str().unwrap()]).contains("is a directory"));
    assert!(env.fails(&["archive", "/dev/zero"]).contains("is a device"));
    // `--time 12` is 12:00, as in requests.
    assert_eq!(env.ok(&["list", "class=od,expver=0001,time=12"]).lines().count(), 2);
    // Typos in destructive commands name the keyword and change nothing.
    for args in [
        vec!["purge", "clas=rd,expver=0001,stream=oper,date=20231201,time=1200", "--doit", "--minimum-keys=expver"],
        vec!["lock", "clas=rd,expver=0001,stream=oper,date=20231201,time=1200", "--minimum-keys=expver"],
        vec!["wipe", "class=od,expver=0001,stream=oper,date=20231201,time=1200,typ=fc", "--doit"],
    ] {
        let err = env.fails(&args);
        assert!(err.contains("unknown keyword 'clas'") || err.contains("unknown keyword 'typ'"), "{args:?}: {err}");
    }
    assert_eq!(env.ok(&["list", "--all"]).lines().count(), 2);
    assert!(env.ok(&["status", "--all"]).contains("locked: none"));
    // Outputs: a closed pipe ends quietly, a full disk is an error, a full standard error
    // loses only the note.
    let head = shell("$F schema | :; echo \"status ${PIPESTATUS[0]}\"");
    let text = String::from_utf8_lossy(&head.stdout);
    assert!(!text.contains("status 101") && String::from_utf8_lossy(&head.stderr).is_empty(), "{head:?}");
    let full = shell("$F list --all >/dev/full");
    assert_eq!(full.status.code(), Some(1), "{full:?}");
    assert!(String::from_utf8_lossy(&full.stderr).contains("No space left"), "{full:?}");
    assert!(shell(&format!("$F archive {file} 2>/dev/full")).status.success());
    // A schema file that never ends is refused, not read into memory.
    let config = env.path("zero.yaml");
    std::fs::write(
        &config,
        format!("schema: /dev/zero\ncatalogue: {{type: posix, root: {0}}}\nstore: {{type: posix, root: {0}}}\n", env.root.display()),
    )
    .unwrap();
    assert!(env.fails(&["--config", &config, "list", "--all"]).contains("schema /dev/zero: larger than"));
    // A request naming too many values is refused, whatever the data sets' types.
    assert!(env.fails(&["list", "class=od,expver=0001,step=0/to/99999/by/1/0/to/99999/by/1"]).contains("at most 100000 may be named"));
    // Out-of-range values are refused by name, not wrapped.
    let err = String::from_utf8_lossy(&env.run(&["list", "class=od,expver=0001,date=-9223372036854775808"]).stderr).into_owned();
    assert!(err.contains("before year 1"), "{err}");
}

/// An input truncated while it is archived ends the command with a clear error, never a
/// crash by signal (it is read through a mapping, where a truncated file faults).
#[test]
fn an_input_truncated_while_archived_is_an_error_not_a_crash() {
    use std::os::unix::process::ExitStatusExt;
    let env = Env::new();
    let steps: Vec<String> = (0..=240).step_by(3).map(|s| s.to_string()).collect();
    let file = env.sample(
        "big.grib",
        &["--steps", &steps.join("/"), "--levels", "1000/925/850/700/500/300/200/100", "--params", "130/131/132/133/135/138/155/157"],
    );
    let len = std::fs::metadata(&file).unwrap().len();
    for delay_ms in [0, 5, 20, 60] {
        let copy = env.path("copy.grib");
        std::fs::copy(&file, &copy).unwrap();
        let child = Command::new(BIN)
            .args(["archive", &copy])
            .env("FIELDSTORE_ROOT", &env.root)
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        std::fs::OpenOptions::new().write(true).open(&copy).unwrap().set_len(len / 3).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.signal(), None, "{delay_ms} ms: killed by a signal: {stderr}");
        assert!(out.status.success() || stderr.contains("fieldstore: error:"), "{delay_ms} ms: {stderr}");
    }
}

/// When ecCodes cannot read one of its definition files it logs an error and goes on with
/// keys missing (here an ensemble member without `number`, which would replace another
/// member): the archive fails naming ecCodes' words, and stores nothing (issue 17 point 9).
#[test]
fn an_error_eccodes_logs_while_decoding_fails_the_archive() {
    let env = Env::new();
    let file = env.sample("ens.grib", &["--stream", "enfo", "--type", "pf", "--numbers", "1/2"]);
    let system = Path::new("/usr/share/eccodes/definitions");
    assert!(system.is_dir(), "Debian's libeccodes-dev installs its definitions there");
    let broken = env.work.join("definitions/grib2");
    std::fs::create_dir_all(&broken).unwrap();
    std::fs::write(broken.join("template.4.eps.def"), "this is not ( a definition\n").unwrap();
    let path = format!("{}:{}", env.work.join("definitions").display(), system.display());
    let out = Command::new(BIN)
        .args(["archive", &file])
        .env("FIELDSTORE_ROOT", &env.root)
        .env("ECCODES_DEFINITION_PATH", &path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && stderr.contains("ecCodes reported") && stderr.contains("template.4.eps.def"), "{stderr}");
    assert!(!stderr.contains("ECCODES ERROR"), "ecCodes' own lines stay off standard error: {stderr}");
    assert!(env.fails(&["list", "--all"]).contains("find a store at"), "nothing was archived");
}

/// `bench explicit-keys` (what `bench compare` runs in each process) prints the peer's phase
/// lines; with `--read`, a process of its own lists and retrieves what an earlier one archived,
/// and a store without them is an error, not a zero timing.
#[test]
fn bench_explicit_keys_writes_then_reads_in_a_new_process() {
    let env = Env::new();
    let config = fieldstore_bench::compare::peer_config(&env.root, fieldstore_bench::compare::Commit::Auto).unwrap();
    let config = config.to_str().unwrap();
    let workload = ["--nsteps", "2", "--nlevels", "3", "--nparams", "4", "--field-size", "100"];
    let phases = |out: &str| out.lines().map(|l| l.split(' ').take(3).collect::<Vec<_>>().join(" ")).collect::<Vec<_>>();

    let empty = env.fails(&[&["--config", config, "bench", "explicit-keys"], &workload[..], &["--read"]].concat());
    assert!(empty.contains("expected 24"), "{empty}");
    let written = env.ok(&[&["--config", config, "bench", "explicit-keys"], &workload[..]].concat());
    assert_eq!(phases(&written), ["archive 24 2400", "list 24 2400", "retrieve 24 2400"]);
    let read = env.ok(&[&["--config", config, "bench", "explicit-keys"], &workload[..], &["--read"]].concat());
    assert_eq!(phases(&read), ["list 24 2400", "retrieve 24 2400"]);
}

/// `info` shows an S3 section's keys but never its secret key (checked against the tests' S3
/// server, as `info` reaches the store; tokens: `BackendConfig::shown_options`'s test).
#[test]
fn info_never_prints_a_credential() {
    let Some(server) = fieldstore_testing::s3_server("FIELDSTORE_TEST_S3_") else { return };
    let env = Env::new();
    let config = env.path("s3.yaml");
    let store = format!(
        "{{type: s3, endpoint: '{}', bucket: {}, prefix: info-test/, access_key_id: {}, secret_access_key: '{}'}}",
        server.endpoint,
        fieldstore_testing::S3_TEST_BUCKET,
        server.access_key,
        server.secret_key
    );
    std::fs::write(&config, format!("catalogue: {{type: posix, root: {}, create: true}}\nstore: {store}\n", env.root.display())).unwrap();
    env.ok(&["--config", &config, "archive", &env.sample("one.grib", &["--steps", "0"])]);
    for args in [&["--config", &config, "info"][..], &["--config", &config, "info", "--json"]] {
        let shown = env.ok(args);
        assert!(shown.contains(&server.access_key) && shown.contains("(secret)"), "{shown}");
        assert!(!shown.contains(&server.secret_key), "{shown}");
    }
}

/// What an attacker tried on the command line: names outside ecCodes' alphabet (which crashed
/// it), numbers that size allocations, a combination never stored whose every value is.
#[test]
fn hostile_arguments_are_refused_by_name() {
    let env = Env::new();
    let file = env.sample("ens.grib", &["--steps", "0"]);
    for (modifier, named) in [("é=1", "\"é\""), ("shortNamé=t", "\"shortNamé\""), ("paramId=é", "paramId=\"é\"")] {
        let err = env.fails(&["archive", "--modifiers", modifier, &file]);
        assert!(err.contains(named), "{modifier}: {err}");
    }
    for size in ["18446744073709551615", "1000000000000"] {
        let err = env.fails(&["bench", "hammer", "--field-size", size]);
        assert!(err.contains("--field-size") && err.contains("1 GiB"), "{size}: {err}");
    }
    let err = env.fails(&["bench", "hammer", "--nsteps", "99999999999"]);
    assert!(err.contains("--nsteps") && err.contains("1000000"), "{err}");
    let err = env.fails(&["bench", "hammer", "--procs", "100000"]);
    assert!(err.contains("--procs") && err.contains("1 to 4096"), "{err}");
    let err = env.fails(&["bench", "sweep", "--sizes", "1024,99999999999999", "--out", &env.path("sweep")]);
    assert!(err.contains("--sizes") && err.contains("1 GiB"), "{err}");
    // One flush of member 1 at step 0 and member 2 at step 6: member 2 at step 0 is not stored.
    let one = env.sample("one.grib", &["--stream", "enfo", "--type", "pf", "--numbers", "1", "--steps", "0"]);
    let two = env.sample("two.grib", &["--stream", "enfo", "--type", "pf", "--numbers", "2", "--steps", "6"]);
    let mixed = env.path("mixed.grib");
    std::fs::write(&mixed, [std::fs::read(one).unwrap(), std::fs::read(two).unwrap()].concat()).unwrap();
    env.ok(&["archive", &mixed]);
    let out = env.path("none.grib");
    let err = env.fails(&["retrieve", "class=od,expver=0001,number=2,step=0", "-o", &out]);
    assert!(err.contains("no field of") && err.contains("number=2") && err.contains("not together"), "{err}");
    assert!(!Path::new(&out).exists(), "nothing is written for nothing matched");
}

/// A new FDB5 user's day (issue 38, item 6): the bad value named, unreadable values refused
/// with exit 1 as FDB5 does, typos named, a retrieve found in part says what it did not find,
/// an empty input is refused, and a wipe says what it would remove and suggests nothing it
/// refuses.
#[test]
fn a_new_fdb5_users_day() {
    let env = Env::new();
    env.ok(&["archive", &env.sample("a.grib", &["--stream", "enfo", "--type", "pf", "--numbers", "1", "--steps", "0/6"])]);
    let run = |args: &[&str]| {
        let out = env.run(args);
        (out.status.code(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (code, why) = run(&["list", "class=od,expver=0001,param=xyz"]);
    assert_eq!(code, Some(0), "{why}");
    assert!(why.contains("param=xyz is not on the axis (stored: 130)"), "{why}");
    assert_eq!(env.ok(&["list", "class=od,expver=0001,param=xyz/130"]).lines().count(), 2, "a known value beside an unknown name");
    for (request, named) in [
        ("date=20231301", "bad value \"20231301\" for keyword 'date'"),
        ("date=01/12/2023", "for keyword 'date'"),
        ("number=abc", "bad value \"abc\" for keyword 'number'"),
        ("step=1/to/3/by/0", "'by' must not be zero"),
    ] {
        let (code, why) = run(&["list", &format!("class=od,expver=0001,{request}")]);
        assert_eq!(code, Some(1), "{request}: {why}");
        assert!(why.contains(named), "{request}: {why}");
    }
    let (code, why) = run(&["list", "clas=od,expver=0001"]);
    assert_eq!(code, Some(1));
    assert!(why.contains("unknown keyword 'clas'"), "{why}");

    let out = env.path("part.grib");
    let (code, why) = run(&["retrieve", "class=od,expver=0001,step=6/48", "-o", &out]);
    assert_eq!(code, Some(0), "{why}");
    assert!(why.contains("not found: step=48") && why.contains("retrieved 1 fields"), "{why}");

    let empty = env.path("empty.grib");
    std::fs::write(&empty, b"").unwrap();
    let (code, why) = run(&["archive", &empty]);
    assert_eq!(code, Some(1));
    assert!(why.contains("empty.grib is empty"), "{why}");

    let why = env.fails(&["wipe", "class=od,expver=0001"]);
    assert!(why.contains("names no stream") && !why.contains("--all"), "{why}");
    let dry = env.ok(&["wipe", "class=od,expver=0001,stream=enfo,date=20231201,time=1200"]);
    assert!(dry.contains("would wipe (dry run; add --doit) data set") && dry.contains("would remove") && dry.contains(".data"), "{dry}");
    let done = env.ok(&["wipe", "class=od,expver=0001,stream=enfo,date=20231201,time=1200", "--doit"]);
    assert!(done.contains("  removed") && done.contains(".data"), "{done}");
}

/// `stats` says what the catalogue keeps (FDB5's DB statistics), in text and JSON, and a wipe
/// names the catalogue's files it removes besides the store's, dry run or done, as fdb-wipe does.
#[test]
fn stats_and_wipe_name_the_catalogues_own_files() {
    let env = Env::new();
    let file = env.sample("a.grib", &["--steps", "0/6"]);
    env.ok(&["archive", &file]);
    let text = env.ok(&["stats", "class=od,expver=0001"]);
    for line in ["TOC/log records: 2\n", "TOC/log size: ", "schema size: ", "index files/objects: 1 (", "owned data files: 1 ("] {
        assert!(text.contains(line), "{line:?} in {text}");
    }
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["stats", "class=od,expver=0001", "--json"])).unwrap();
    let catalogue = &json["catalogue"];
    assert_eq!(
        (catalogue["records"].as_u64(), catalogue["index_files"].as_u64(), catalogue["data_files"].as_u64()),
        (Some(2), Some(1), Some(1))
    );
    assert!(catalogue["record_bytes"].as_u64() > Some(0) && catalogue["schema_bytes"].as_u64() > Some(0), "{json}");
    assert!(catalogue["data_bytes"].as_u64() > catalogue["index_bytes"].as_u64(), "{json}");

    let dataset = "class=od,expver=0001,stream=oper,date=20231201,time=1200";
    env.ok(&["lock", dataset, "--action", "retrieve"]);
    let json: serde_json::Value = serde_json::from_str(&env.ok(&["wipe", dataset, "--json"])).unwrap();
    assert_eq!(json["catalogue_files"].as_array().map(Vec::len), Some(3), "{json}");
    assert_eq!(json["control_files"].as_array().map(Vec::len), Some(1), "{json}");
    assert_eq!(json["catalogue_removed"].as_array().map(Vec::len), Some(1), "{json}");
    for (args, verb) in [(vec!["wipe", dataset], "would remove"), (vec!["wipe", dataset, "--doit"], "removed")] {
        let out = env.ok(&args);
        for name in [".data", ".index", "/key", "/schema", "/toc", "/lock.retrieve"] {
            assert!(out.lines().any(|l| l.starts_with(&format!("  {verb} ")) && l.ends_with(name)), "{name} in {out}");
        }
    }
}
