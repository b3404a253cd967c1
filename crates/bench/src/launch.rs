//! Where a benchmark process is: its rank, the number of processes and its node, from the
//! launcher's environment (Slurm, Open MPI, PMI) or from `FIELDSTORE_RANK`/`FIELDSTORE_SIZE`.

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};

/// A process's place in a parallel run.
#[derive(Clone, Debug, PartialEq)]
pub struct Place {
    /// The process's rank, from 0.
    pub rank: u32,
    /// How many processes the run has (at least `rank + 1`).
    pub size: u32,
    /// The name of the node it runs on.
    pub node: String,
}

const RANK_VARIABLES: [&str; 4] = ["FIELDSTORE_RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK"];
const SIZE_VARIABLES: [&str; 4] = ["FIELDSTORE_SIZE", "SLURM_NTASKS", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"];

impl Place {
    /// From the environment `lookup` gives (the process's own in practice).
    pub fn from_env(lookup: impl Fn(&str) -> Option<String>) -> Place {
        let first = |names: &[&str]| names.iter().find_map(|n| lookup(n)?.trim().parse::<u32>().ok());
        let node = lookup("SLURMD_NODENAME")
            .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|| "localhost".into());
        let rank = first(&RANK_VARIABLES).unwrap_or(0);
        Place { rank, size: first(&SIZE_VARIABLES).unwrap_or(rank + 1).max(rank + 1), node }
    }

    /// This process's place, from its environment.
    pub fn current() -> Place {
        Place::from_env(|n| std::env::var(n).ok())
    }

    /// The event log this process writes for a run's `--log FILE`: `FILE` itself when it runs
    /// alone, `FILE.RANK` when it is one of several.
    pub fn event_log(&self, file: &std::path::Path) -> std::path::PathBuf {
        if self.size > 1 {
            format!("{}.{}", file.display(), self.rank).into()
        } else {
            file.to_path_buf()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launchers_are_recognised_in_order() {
        let env =
            |pairs: &'static [(&'static str, &'static str)]| move |n: &str| pairs.iter().find(|(k, _)| *k == n).map(|(_, v)| v.to_string());
        let slurm = Place::from_env(env(&[("SLURM_PROCID", "5"), ("SLURM_NTASKS", "48"), ("SLURMD_NODENAME", "nid001")]));
        assert_eq!(slurm, Place { rank: 5, size: 48, node: "nid001".into() });
        let mpi = Place::from_env(env(&[("OMPI_COMM_WORLD_RANK", "3"), ("OMPI_COMM_WORLD_SIZE", "4")]));
        assert_eq!((mpi.rank, mpi.size), (3, 4));
        let ours = Place::from_env(env(&[("FIELDSTORE_RANK", "1"), ("SLURM_PROCID", "9")]));
        assert_eq!((ours.rank, ours.size), (1, 2), "FIELDSTORE_RANK wins; size at least rank + 1");
        assert_eq!(Place::from_env(env(&[])).rank, 0);
    }

    #[test]
    fn each_of_several_processes_logs_to_a_file_of_its_own() {
        let file = std::path::Path::new("/tmp/run.jsonl");
        assert_eq!(Place { rank: 0, size: 1, node: "n".into() }.event_log(file), file);
        assert_eq!(Place { rank: 2, size: 4, node: "n".into() }.event_log(file), std::path::Path::new("/tmp/run.jsonl.2"));
    }
}

/// How the processes of a run line up before starting.
#[derive(Clone, Debug, PartialEq)]
pub enum Barrier {
    /// Each process creates `DIR/arrived.RANK` and waits until `size` files exist (a shared
    /// file system across nodes).
    File(std::path::PathBuf),
    /// Rank 0 listens at the address; the others connect and wait for its go.
    Tcp(std::net::SocketAddr),
    /// Everyone waits until this wall-clock time (microseconds since the epoch).
    Deadline(u64),
}

/// Longest a process waits at a barrier before giving up.
pub const BARRIER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

impl Barrier {
    /// `file:DIR`, `tcp:HOST:PORT` or `deadline:MICROSECONDS`.
    pub fn parse(text: &str) -> Result<Barrier> {
        let refused = |e: fieldstore::error::Cause| Error::caused_by(ErrorKind::BadRequest, format!("barrier {text:?}"), e);
        match text.split_once(':') {
            Some(("file", dir)) if !dir.is_empty() => Ok(Barrier::File(dir.into())),
            Some(("tcp", addr)) => addr.parse().map(Barrier::Tcp).map_err(|e: std::net::AddrParseError| refused(e.into())),
            Some(("deadline", t)) => t.parse().map(Barrier::Deadline).map_err(|e: std::num::ParseIntError| refused(e.into())),
            _ => Err(Error::new(ErrorKind::BadRequest, format!("barrier {text:?}: use file:DIR, tcp:HOST:PORT or deadline:MICROSECONDS"))),
        }
    }

    /// The barrier as [`Barrier::parse`] reads it.
    pub fn describe(&self) -> String {
        match self {
            Barrier::File(d) => format!("file:{}", d.display()),
            Barrier::Tcp(a) => format!("tcp:{a}"),
            Barrier::Deadline(t) => format!("deadline:{t}"),
        }
    }

    /// Waits until every process of `place` has arrived (or the deadline has passed).
    pub fn wait(&self, place: &Place) -> Result<()> {
        let give_up = std::time::Instant::now() + BARRIER_TIMEOUT;
        match self {
            Barrier::Deadline(at) => {
                let now = crate::clock::micros_since_epoch();
                if *at > now {
                    std::thread::sleep(std::time::Duration::from_micros(at - now));
                }
                Ok(())
            }
            Barrier::File(dir) => {
                std::fs::create_dir_all(dir).ctx("creating", dir)?;
                let arrival = dir.join(format!("arrived.{}", place.rank));
                std::fs::write(&arrival, place.node.as_bytes()).ctx("writing", &arrival)?;
                loop {
                    let arrived = std::fs::read_dir(dir)
                        .ctx("reading", dir)?
                        .filter(|e| e.as_ref().is_ok_and(|e| e.file_name().to_string_lossy().starts_with("arrived.")))
                        .count();
                    if arrived >= place.size as usize {
                        return Ok(());
                    }
                    if std::time::Instant::now() > give_up {
                        let message =
                            format!("file barrier {}: {arrived} of {} processes arrived in {BARRIER_TIMEOUT:?}", dir.display(), place.size);
                        return Err(Error::new(ErrorKind::Timeout, message));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(2));
                }
            }
            Barrier::Tcp(addr) => tcp_barrier(*addr, place, give_up),
        }
    }
}

fn tcp_barrier(addr: std::net::SocketAddr, place: &Place, give_up: std::time::Instant) -> Result<()> {
    use std::io::{Read, Write};
    let failed = |e: std::io::Error| Error::caused_by(ErrorKind::Io, format!("tcp barrier {addr}"), e);
    if place.rank == 0 {
        let listener = std::net::TcpListener::bind(addr).map_err(failed)?;
        listener.set_nonblocking(true).map_err(failed)?;
        let mut waiting = Vec::new();
        while waiting.len() + 1 < place.size as usize {
            match listener.accept() {
                Ok((stream, _)) => waiting.push(stream),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if std::time::Instant::now() > give_up {
                        let message =
                            format!("tcp barrier {addr}: {} of {} processes arrived in {BARRIER_TIMEOUT:?}", waiting.len() + 1, place.size);
                        return Err(Error::new(ErrorKind::Timeout, message));
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                Err(e) => return Err(failed(e)),
            }
        }
        for mut s in waiting {
            s.set_nonblocking(false).map_err(failed)?;
            s.write_all(b"go").map_err(failed)?;
        }
        return Ok(());
    }
    loop {
        match std::net::TcpStream::connect_timeout(&addr, std::time::Duration::from_millis(200)) {
            Ok(mut s) => {
                s.set_read_timeout(Some(
                    give_up.saturating_duration_since(std::time::Instant::now()).max(std::time::Duration::from_millis(1)),
                ))
                .map_err(failed)?;
                let mut go = [0u8; 2];
                return s
                    .read_exact(&mut go)
                    .map_err(|e| Error::caused_by(ErrorKind::Io, format!("tcp barrier {addr}: waiting for rank 0"), e));
            }
            Err(_) if std::time::Instant::now() < give_up => std::thread::sleep(std::time::Duration::from_millis(5)),
            Err(e) => {
                let message = format!("tcp barrier {addr}: rank 0 not reachable in {BARRIER_TIMEOUT:?}");
                return Err(Error::caused_by(ErrorKind::Timeout, message, e));
            }
        }
    }
}

/// Marks processes started by [`launch_ranks`], so they do not start processes themselves.
pub const LAUNCHED: &str = "FIELDSTORE_LAUNCHED";

/// What the ranks of one mode did together, from the first I/O of any to the last.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Aggregate {
    /// The phase's mode (`write`, `read`, `list`).
    pub mode: String,
    /// How many ranks ran it.
    pub procs: usize,
    /// Fields moved by all of them.
    pub fields: u64,
    /// Bytes moved by all of them.
    pub bytes: u64,
    /// From the first I/O of any rank to the last.
    pub seconds: f64,
    /// The first I/O of any rank, microseconds since the epoch.
    pub first_io_us: u64,
    /// The last I/O of any rank, microseconds since the epoch.
    pub last_io_us: u64,
}

/// What a launch brought back: each rank's phase (JSON) and one aggregate per mode (pattern
/// B runs writers and readers at once).
pub struct Launched {
    /// Each rank's phase as it printed it, by rank.
    pub phases: Vec<serde_json::Value>,
    /// One per mode, sorted by mode.
    pub aggregates: Vec<Aggregate>,
}

/// Starts `procs` copies of this program with `args` (its own arguments, without `--procs`
/// and `--barrier`) as ranks 0..N-1 behind `barrier` (default: a file barrier under
/// `scratch`), each printing its phase as JSON, and waits for all of them, failed or not (a
/// rank left running after another failed would go on writing while the caller cleans up).
pub fn launch_ranks(procs: u32, barrier: Option<&str>, args: &[String], scratch: &std::path::Path) -> Result<Launched> {
    let barrier = barrier.map_or_else(|| format!("file:{}", scratch.join("barrier").display()), str::to_string);
    let program = std::env::current_exe().map_err(|e| Error::caused_by(ErrorKind::Io, "this program's path", e))?;
    let mut child_args = strip_option(&strip_option(args, "--procs"), "--barrier");
    child_args.retain(|arg| arg != "--json");
    child_args.extend(["--barrier".to_string(), barrier, "--json".to_string()]);
    let mut children = Vec::new();
    for rank in 0..procs {
        let child = std::process::Command::new(&program)
            .args(&child_args)
            .env(LAUNCHED, "1")
            .env("FIELDSTORE_RANK", rank.to_string())
            .env("FIELDSTORE_SIZE", procs.to_string())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| Error::caused_by(ErrorKind::Unavailable, format!("starting rank {rank}"), e));
        children.push(child);
    }
    let waited =
        |child: std::process::Child| child.wait_with_output().map_err(|e| Error::caused_by(ErrorKind::Io, "waiting for a rank", e));
    let outputs: Vec<_> = children.into_iter().map(|child| child.and_then(waited)).collect();
    let (mut phases, mut failed) = (Vec::new(), Vec::new());
    for (rank, out) in outputs.into_iter().enumerate() {
        match out {
            Ok(out) if out.status.success() => {
                let phase = serde_json::from_slice::<serde_json::Value>(&out.stdout)
                    .map_err(|e| Error::caused_by(ErrorKind::Corrupt, format!("rank {rank}'s output"), e))?;
                phases.push(phase)
            }
            _ => failed.push(rank.to_string()),
        }
    }
    if !failed.is_empty() {
        let message = format!("{} of {procs} processes failed (rank {}; their errors are above)", failed.len(), failed.join(", "));
        return Err(Error::new(ErrorKind::Io, message));
    }
    let aggregates = aggregate(&phases);
    Ok(Launched { phases, aggregates })
}

/// One aggregate per mode of the ranks' phases.
fn aggregate(phases: &[serde_json::Value]) -> Vec<Aggregate> {
    let mut modes: Vec<&str> = phases.iter().filter_map(|p| p["mode"].as_str()).collect();
    modes.sort_unstable();
    modes.dedup();
    modes
        .into_iter()
        .map(|mode| {
            let of_mode: Vec<&serde_json::Value> = phases.iter().filter(|p| p["mode"] == mode).collect();
            let sum = |k: &str| of_mode.iter().map(|p| p[k].as_u64().unwrap_or(0)).sum::<u64>();
            let first_io_us = of_mode.iter().filter_map(|p| p["first_io_us"].as_u64()).min().unwrap_or(0);
            let last_io_us = of_mode.iter().filter_map(|p| p["last_io_us"].as_u64()).max().unwrap_or(0);
            let seconds = last_io_us.saturating_sub(first_io_us) as f64 / 1e6;
            Aggregate {
                mode: mode.into(),
                procs: of_mode.len(),
                fields: sum("fields"),
                bytes: sum("bytes"),
                seconds,
                first_io_us,
                last_io_us,
            }
        })
        .collect()
}

/// `args` without `--name VALUE` / `--name=VALUE`.
fn strip_option(args: &[String], name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
        } else if a == name {
            skip = true;
        } else if !a.starts_with(&format!("{name}=")) {
            out.push(a.clone());
        }
    }
    out
}

#[cfg(test)]
mod barrier_tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// Starts `size` ranks at staggered times; returns when each was released.
    fn release_times(barrier: &Barrier, size: u32) -> Vec<Instant> {
        let handles: Vec<_> = (0..size)
            .map(|rank| {
                let barrier = barrier.clone();
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(40 * rank as u64));
                    barrier.wait(&Place { rank, size, node: "n".into() }).unwrap();
                    Instant::now()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    }

    fn assert_released_together(times: &[Instant], after: Instant) {
        let (first, last) = (times.iter().min().unwrap(), times.iter().max().unwrap());
        assert!(*first >= after, "a rank left before the last arrived");
        assert!(last.duration_since(*first) < Duration::from_millis(30), "ranks left {:?} apart", last.duration_since(*first));
    }

    #[test]
    fn file_barrier_releases_everyone_after_the_last_arrival() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let times = release_times(&Barrier::File(dir.path().join("b")), 4);
        assert_released_together(&times, start + Duration::from_millis(120));
    }

    #[test]
    fn tcp_barrier_releases_everyone_after_the_last_arrival() {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let barrier = Barrier::parse(&format!("tcp:127.0.0.1:{port}")).unwrap();
        let start = Instant::now();
        let times = release_times(&barrier, 4);
        assert_released_together(&times, start + Duration::from_millis(120));
    }

    #[test]
    fn deadline_barrier_waits_for_the_time_and_parsing_names_mistakes() {
        let at = crate::clock::micros_since_epoch() + 100_000;
        let start = Instant::now();
        Barrier::Deadline(at).wait(&Place { rank: 0, size: 1, node: "n".into() }).unwrap();
        assert!(start.elapsed() >= Duration::from_millis(95));
        assert!(Barrier::parse("udp:1").unwrap_err().to_string().contains("file:DIR"));
        assert!(Barrier::parse("tcp:nohost").is_err());
        assert_eq!(Barrier::parse("file:/x").unwrap(), Barrier::File("/x".into()));
    }
}
