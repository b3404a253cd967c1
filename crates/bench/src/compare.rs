//! Side-by-side runs: FDB5 (through `../shared/peer/fdb5-peer.sh`, its C API) and fieldstore
//! on the same workload (same keys, same schema, one flush per step) on the same file system,
//! plus `dd` to that file system as the storage's own limit.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use fieldstore::{Config, ListOptions, Request};
use serde::Serialize;

use crate::hammer::{Hammer, Payload};
use crate::payload::{synthetic, Check};

/// The schema the FDB5 peer script uses; fieldstore is given the same one.
pub const PEER_SCHEMA: &str = "param: Param; step: Step; date: Date; levelist: Double; expver: Expver; time: Time; number: Integer;\n\
[ class, expver, stream, date, time, domain? [ type, levtype [ step, number?, levelist?, param ]]]\n";

/// The explicit-key workload of the peer: steps 0.., levels 10, 20, ..., params 1.., one
/// ensemble member.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Workload {
    pub nsteps: usize,
    pub nlevels: usize,
    pub nparams: usize,
    pub field_size: usize,
    pub member: usize,
}

impl Workload {
    pub fn fields(&self) -> usize {
        self.nsteps * self.nlevels * self.nparams
    }

    fn hammer(&self) -> Hammer {
        Hammer {
            class: "od".into(),
            expver: "0001".into(),
            nsteps: self.nsteps,
            step: 0,
            nlevels: self.nlevels,
            level: 0,
            levels: Some((1..=self.nlevels).map(|l| (l * 10).to_string()).collect()),
            nparams: self.nparams,
            params: None,
            nensembles: 1,
            number: self.member,
            payload: Payload::Synthetic(synthetic(self.field_size)),
            check: Check::None,
            itt: None,
        }
    }
}

/// Seconds per phase of one run.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Timings {
    pub archive: f64,
    pub list: f64,
    pub retrieve: f64,
}

/// Runs worker processes at once (one per ensemble member), each printing the peer's
/// `phase fields bytes seconds` lines; a phase of the group takes as long as its slowest
/// process (they start together).
pub fn run_group(commands: Vec<Command>, w: &Workload) -> Result<Timings, String> {
    let children: Vec<_> = commands
        .into_iter()
        .map(|mut c| c.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| format!("starting a worker: {e}")))
        .collect::<Result<_, _>>()?;
    let mut group = Timings::default();
    for child in children {
        let out = child.wait_with_output().map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("a worker failed: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let t = parse_phases(&String::from_utf8_lossy(&out.stdout), w.fields())?;
        group.archive = group.archive.max(t.archive);
        group.list = group.list.max(t.list);
        group.retrieve = group.retrieve.max(t.retrieve);
    }
    Ok(group)
}

/// Parses `archive|list|retrieve FIELDS BYTES SECONDS` lines.
pub fn parse_phases(stdout: &str, expected_fields: usize) -> Result<Timings, String> {
    let mut t = Timings::default();
    for line in stdout.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        let (Some(phase), Some(seconds)) = (parts.first(), parts.get(3).and_then(|s| s.parse::<f64>().ok())) else { continue };
        let fields: usize = parts.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
        if fields != expected_fields {
            return Err(format!("{phase}: {fields} fields, expected {expected_fields}"));
        }
        match *phase {
            "archive" => t.archive = seconds,
            "list" => t.list = seconds,
            "retrieve" => t.retrieve = seconds,
            _ => {}
        }
    }
    if t.archive == 0.0 || t.retrieve == 0.0 {
        return Err(format!("incomplete worker output: {stdout:?}"));
    }
    Ok(t)
}

/// The FDB5 peer for one member. With `private_home`, the peer runs in a venv of its own
/// that links to the installed one: the peer script rewrites its schema and config files on
/// every start, and concurrent peers sharing them can read a half-written schema.
pub fn fdb5_command(peer_script: &Path, root: &Path, w: &Workload, member: usize, private_home: bool) -> Result<Command, String> {
    let mut c = Command::new("bash");
    c.arg(peer_script).arg(root).args([w.nsteps, w.nlevels, w.nparams, w.field_size, member].map(|v| v.to_string()));
    if private_home {
        c.env("FDB5_PEER_VENV", peer_venv_for(member)?);
    }
    Ok(c)
}

/// A venv for one concurrent peer: links to the shared install, with its own `fdb-home`.
fn peer_venv_for(member: usize) -> Result<PathBuf, String> {
    let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_default();
    let shared = std::env::var_os("FDB5_PEER_VENV").map(PathBuf::from).unwrap_or_else(|| home.join(".cache/fdb5-peer"));
    if !shared.join("bin/python").exists() || !shared.join("fdb5_keybench").exists() {
        return Err(format!("run one single-process compare first: it installs FDB5 into {}", shared.display()));
    }
    let own = shared.with_file_name(format!("fdb5-peer-member-{member}"));
    std::fs::create_dir_all(&own).map_err(|e| format!("{}: {e}", own.display()))?;
    for entry in ["bin", "lib", "lib64", "include", "pyvenv.cfg", "fdb5_keybench"] {
        let link = own.join(entry);
        if shared.join(entry).exists() && std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(shared.join(entry), &link).map_err(|e| format!("{}: {e}", link.display()))?;
        }
    }
    Ok(own)
}

/// Runs the peer's workload for `w.member` through fieldstore with a config (see
/// [`peer_config`]): archive with one flush per step, then list the member and retrieve
/// everything in one request from a new handle.
pub fn run_fieldstore(config: &Path, w: &Workload) -> Result<Timings, String> {
    let config = Config::from_file(config).map_err(|e| e.to_string())?;
    let hammer = w.hammer();
    let err = |e: fieldstore::Error| e.to_string();

    let writer = fieldstore::open(&config).map_err(err)?;
    let archive = hammer.write(&writer).map_err(err)?.seconds;
    drop(writer);

    // Like the peer: a new handle lists the member, then retrieves everything in one request.
    let reader = fieldstore::open(&config).map_err(err)?;
    let base = "class=od,expver=0001,stream=enfo,date=20231201,time=1200,domain=g,type=pf,levtype=pl";
    let t = Instant::now();
    let listed = reader.list(&Request::parse(&format!("{base},number={}", w.member)).map_err(err)?, ListOptions::default()).map_err(err)?;
    let list = t.elapsed().as_secs_f64();
    if listed.fields.len() != w.fields() {
        return Err(format!("fieldstore list: {} fields, expected {}", listed.fields.len(), w.fields()));
    }
    let join = |n: usize, f: &dyn Fn(usize) -> String| (0..n).map(f).collect::<Vec<_>>().join("/");
    let request = format!(
        "{base},number={},step={},levelist={},param={}",
        w.member,
        join(w.nsteps, &|s| s.to_string()),
        join(w.nlevels, &|l| ((l + 1) * 10).to_string()),
        join(w.nparams, &|p| (p + 1).to_string())
    );
    let t = Instant::now();
    let (mut data_reader, _) = reader.retrieve(&Request::parse(&request).map_err(err)?).map_err(err)?;
    // Read in 16 MiB blocks, as the peer does.
    let mut block = vec![0u8; 16 << 20];
    let mut total = 0u64;
    loop {
        let n = std::io::Read::read(&mut data_reader, &mut block).map_err(|e| e.to_string())?;
        if n == 0 {
            break;
        }
        total += n as u64;
    }
    let retrieve = t.elapsed().as_secs_f64();
    if total != (w.fields() * w.field_size) as u64 {
        return Err(format!("fieldstore retrieve: {total} bytes, expected {}", w.fields() * w.field_size));
    }
    Ok(Timings { archive, list, retrieve })
}

/// `dd` of `bytes` in 1 MiB blocks to a file in `dir`, with `fdatasync`: bytes per second.
pub fn dd_write(dir: &Path, bytes: usize) -> Result<f64, String> {
    let file: PathBuf = dir.join("dd.bench");
    let count = bytes.div_ceil(1 << 20).max(1);
    let t = Instant::now();
    let status = Command::new("dd")
        .args(["if=/dev/zero", &format!("of={}", file.display()), "bs=1M", &format!("count={count}"), "conv=fdatasync"])
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("dd: {e}"))?;
    let seconds = t.elapsed().as_secs_f64();
    let _ = std::fs::remove_file(&file);
    if !status.success() {
        return Err("dd failed".into());
    }
    Ok((count << 20) as f64 / seconds)
}

/// Writes a GRIB file of the workload's fields (GRIB2, ensemble member `member`, pressure
/// levels 100, 200, ..., ten real parameters cycled) made with ecCodes.
pub fn write_grib_workload(path: &Path, w: &Workload) -> Result<usize, String> {
    const PARAMS: [&str; 10] = ["129", "130", "131", "132", "133", "135", "138", "155", "157", "60"];
    let mut out = Vec::new();
    let member = w.member.to_string();
    for step in 0..w.nsteps {
        for level in 1..=w.nlevels {
            for p in 0..w.nparams {
                let (step, level) = (step.to_string(), (level * 100).to_string());
                let keys = [
                    ("centre", "98"),
                    ("setLocalDefinition", "1"),
                    ("localDefinitionNumber", "1"),
                    ("class", "od"),
                    ("stream", "enfo"),
                    ("type", "pf"),
                    ("expver", "0001"),
                    ("date", "20231201"),
                    ("time", "1200"),
                    ("levtype", "pl"),
                    ("step", &step),
                    ("level", &level),
                    ("paramId", PARAMS[p % PARAMS.len()]),
                    ("productDefinitionTemplateNumber", "1"),
                    ("number", &member),
                ];
                out.extend_from_slice(&fieldstore::grib::sample_message("GRIB2", &keys).map_err(|e| e.to_string())?);
            }
        }
    }
    std::fs::write(path, &out).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(out.len())
}

/// Seconds taken by a command (a whole process, start-up included), which must succeed.
pub fn time_command(program: &Path, args: &[&std::ffi::OsStr]) -> Result<f64, String> {
    let t = Instant::now();
    let out = Command::new(program).args(args).output().map_err(|e| format!("{}: {e}", program.display()))?;
    if !out.status.success() {
        return Err(format!("{} failed: {}", program.display(), String::from_utf8_lossy(&out.stderr)));
    }
    Ok(t.elapsed().as_secs_f64())
}

/// Removes a run's directory, then waits until the file system has settled (`syncfs`: the
/// deletion and any write-back durable), so that the next run, of either system, does not pay
/// for the last one's clean-up: on a disk mounted with `discard`, the first journal commit after
/// a large deletion also trims the freed blocks, a fixed cost that weighs most on the faster run.
pub fn clear(dir: &Path) {
    let _ = std::fs::remove_dir_all(dir);
    if let Some(parent) = dir.parent().and_then(|p| std::fs::File::open(p).ok()) {
        // SAFETY: a valid descriptor; syncfs only writes back the file system's dirty state.
        unsafe { libc::syncfs(std::os::fd::AsRawFd::as_raw_fd(&parent)) };
    }
}

/// A config for fieldstore at `root` with the peer's schema, its POSIX catalogue committing in
/// mode `commit` (`auto`, `embedded`, `ordered`).
pub fn peer_config(root: &Path, commit: &str) -> Result<PathBuf, String> {
    std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
    let schema = root.join("schema");
    std::fs::write(&schema, PEER_SCHEMA).map_err(|e| e.to_string())?;
    let config = root.join("config.yaml");
    let data = root.join("data");
    std::fs::write(
        &config,
        format!(
            "schema: {}\ncatalogue: {{type: posix, root: {1}, commit: {commit}}}\nstore: {{type: posix, root: {1}}}\n",
            schema.display(),
            data.display()
        ),
    )
    .map_err(|e| e.to_string())?;
    Ok(config)
}
