//! The servers a remote comparison (`bench compare --remote`) runs each system through, on
//! loopback: FDB5's `fdb-server` in its documented catalogue + store setup (two servers, as
//! FDB5's `tests/fdb/remote` runs them) and `fieldstore serve`, both without TLS as FDB5's
//! has none. Each gives the client config its processes use; dropped, the servers stop.
//! Also the floor of a remote transfer here: what one loopback TCP connection moves.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fieldstore::error::IoContext;
use fieldstore::{Error, ErrorKind, Result};

use crate::compare::{Fdb5Tools, PEER_SCHEMA};

/// How long a server may take to start listening.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Servers of one system, running: stopped when dropped.
pub struct Served {
    children: Vec<Child>,
    /// The config a client process of the system names.
    pub client_config: PathBuf,
    /// The environment a client process of the system needs.
    pub client_env: Vec<(&'static str, std::ffi::OsString)>,
}

impl Drop for Served {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Served {
    /// FDB5's catalogue server and store server, their data under `dir`; the client config is
    /// FDB5's `type: remote`.
    pub fn fdb5(tools: &Fdb5Tools, dir: &Path) -> Result<Served> {
        let schema = write(dir, "schema", PEER_SCHEMA)?;
        let (catalogue_port, store_port) = (free_port()?, free_port()?);
        let space = |name: &str| -> Result<String> {
            let root = dir.join(name);
            std::fs::create_dir_all(&root).ctx("creating", &root)?;
            Ok(format!("spaces:\n- handler: Default\n  roots:\n  - path: {}\n", root.display()))
        };
        let catalogue = format!(
            "type: catalogue\nserverPort: {catalogue_port}\nserverThreaded: true\nstores:\n- default: \"localhost:{store_port}\"\nschema: {}\n{}",
            schema.display(),
            space("catalogue")?
        );
        let store = format!("type: store\nserverPort: {store_port}\nserverThreaded: true\n{}", space("store")?);
        let mut served = Served { children: Vec::new(), client_config: PathBuf::new(), client_env: Vec::new() };
        for (name, config, port) in [("catalogue", catalogue, catalogue_port), ("store", store, store_port)] {
            let config = write(dir, &format!("fdb5-{name}.yaml"), &config)?;
            let log = dir.join(format!("fdb5-{name}.log"));
            let mut command = tools.command("fdb-server");
            command.env("FDB5_CONFIG_FILE", &config).env("FDB_HOME", dir);
            let out = log.with_extension("out");
            command.stdout(std::fs::File::create(&out).ctx("creating", &out)?);
            served.children.push(spawn_logged(command, &log)?);
            wait_listening(served.children.last_mut().expect("pushed"), port, &log)?;
        }
        let client = format!("type: remote\nstore: remote\nengine: remote\nhost: localhost\nport: {catalogue_port}\n");
        served.client_config = write(dir, "fdb5-client.yaml", &client)?;
        served.client_env = vec![
            ("FDB5_CONFIG_FILE", served.client_config.clone().into()),
            ("FDB_HOME", dir.into()),
            ("LD_LIBRARY_PATH", tools.library_path.clone().into()),
        ];
        Ok(served)
    }

    /// `program serve` over the store `config` names, on a free loopback port; the client
    /// config is fieldstore's `type: remote`.
    pub fn fieldstore(program: &Path, config: &Path, dir: &Path) -> Result<Served> {
        std::fs::create_dir_all(dir).ctx("creating", dir)?;
        let log = dir.join("serve.log");
        let mut command = Command::new(program);
        command.arg("--config").arg(config).args(["serve", "--listen", "127.0.0.1:0"]).stdout(Stdio::piped());
        let mut served = Served { children: vec![spawn_logged(command, &log)?], client_config: PathBuf::new(), client_env: Vec::new() };
        let stdout =
            served.children[0].stdout.take().ok_or_else(|| Error::new(ErrorKind::Io, "fieldstore serve has no standard output"))?;
        // Its first line, `listening on ADDRESS`, waited for START_TIMEOUT at most.
        let (line, told) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut text = String::new();
            let _ = BufReader::new(stdout).read_line(&mut text);
            let _ = line.send(text);
        });
        let said = told.recv_timeout(START_TIMEOUT).unwrap_or_default();
        let Some(address) = said.trim().strip_prefix("listening on ").map(String::from) else {
            return Err(Error::new(ErrorKind::Unavailable, format!("fieldstore serve did not start: see {}", log.display())));
        };
        let section = format!("{{type: remote, endpoint: 'http://{address}'}}");
        served.client_config = write(dir, "remote.yaml", &format!("catalogue: {section}\nstore: {section}\n"))?;
        served.client_env = vec![("FIELDSTORE_CONFIG", served.client_config.clone().into())];
        Ok(served)
    }
}

fn write(dir: &Path, name: &str, text: &str) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).ctx("creating", dir)?;
    let path = dir.join(name);
    std::fs::write(&path, text).ctx("writing", &path)?;
    Ok(path)
}

/// Starts `command` with its standard error in `log` (its standard output as the caller set).
fn spawn_logged(mut command: Command, log: &Path) -> Result<Child> {
    let file = std::fs::File::create(log).ctx("creating", log)?;
    command.stdin(Stdio::null()).stderr(file);
    command.spawn().map_err(|e| Error::caused_by(ErrorKind::Unavailable, format!("{}", command.get_program().to_string_lossy()), e))
}

/// A loopback port free now (a server started next takes it).
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| Error::caused_by(ErrorKind::Io, "no free port", e))?;
    Ok(listener.local_addr().map_err(|e| Error::caused_by(ErrorKind::Io, "no free port", e))?.port())
}

/// Waits until `port` accepts connections; an error if `child` exits or it takes too long.
fn wait_listening(child: &mut Child, port: u16, log: &Path) -> Result<()> {
    let started = Instant::now();
    while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
        let exited = child.try_wait().ok().flatten();
        if exited.is_some() || started.elapsed() > START_TIMEOUT {
            let why = exited.map_or_else(|| "did not listen in time".to_string(), |status| format!("exited ({status})"));
            return Err(Error::new(ErrorKind::Unavailable, format!("the server of port {port} {why}: see {}", log.display())));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Bytes a second one loopback TCP connection carries from one thread's buffer to another's
/// (1 MiB writes and reads: larger ones leave the CPU caches, and are slower), over `bytes`
/// bytes: the floor of any remote transfer here.
pub fn loopback_floor(bytes: usize) -> Result<f64> {
    const BLOCK: usize = 1 << 20;
    let failed = |e: std::io::Error| Error::caused_by(ErrorKind::Io, "the loopback floor's connection", e);
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(failed)?;
    let address = listener.local_addr().map_err(failed)?;
    let sender = std::thread::spawn(move || -> std::io::Result<()> {
        let (mut connection, _) = listener.accept()?;
        let block = vec![7u8; BLOCK];
        let mut left = bytes;
        while left > 0 {
            let n = left.min(BLOCK);
            connection.write_all(&block[..n])?;
            left -= n;
        }
        Ok(())
    });
    let mut connection = TcpStream::connect(address).map_err(failed)?;
    let mut block = vec![0u8; BLOCK];
    let started = Instant::now();
    let mut received = 0usize;
    loop {
        match connection.read(&mut block).map_err(failed)? {
            0 => break,
            n => received += n,
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    sender.join().map_err(|_| Error::new(ErrorKind::Io, "the loopback floor's sender stopped"))?.map_err(failed)?;
    if received != bytes {
        return Err(Error::new(ErrorKind::Io, format!("the loopback floor's connection carried {received} bytes of {bytes}")));
    }
    Ok(bytes as f64 / seconds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loopback_floor_carries_every_byte() {
        assert!(loopback_floor(40 << 20).unwrap() > 0.0);
    }
}
