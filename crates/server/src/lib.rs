//! `fieldstore serve`: a configured store served to remote clients (`type: remote`, the
//! `fieldstore-remote` crate, or `curl`). HTTP/2 and HTTP/1.1 over rustls; callers known by
//! bearer tokens kept hashed ([`access`]), each allowed per operation on request patterns;
//! every location handed out signed for its identity, so a read can only reach what a listing
//! allowed. docs/remote.md is the reference.
//!
//! Secure by default: a server without TLS or without an access file says so in its log and
//! listens on loopback only, unless told that it may listen elsewhere anyway.

pub mod access;
mod extract;
mod memory;
mod metrics;
mod pieces;
mod routes;
mod sessions;
mod tls;
pub mod web;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use rand::RngCore;
use tokio::net::TcpListener;
use tower::ServiceExt;

use fieldstore_core::api::FieldStore;
use fieldstore_core::{Error, ErrorKind, Result};

pub use access::{token_hash, Access};
pub use tls::TlsFiles;

/// How long a client has to finish its TLS handshake, and to send a request's headers.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// The most connections served at once; more are closed as they come.
const MAX_CONNECTIONS: usize = 4096;
/// How long in-flight requests may take to finish at shutdown.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(30);

/// How to serve.
pub struct ServeOptions {
    /// The address to listen on (port 0: any free one, told to `ready`).
    pub listen: SocketAddr,
    /// TLS; `None`: plain HTTP (loopback only, unless `insecure_anywhere`).
    pub tls: Option<TlsFiles>,
    /// Who may do what; [`Access::Open`]: anyone anything (loopback only likewise).
    pub access: Access,
    /// Listen beyond loopback without TLS or without an access file.
    pub insecure_anywhere: bool,
    /// How much each request and all of them may take.
    pub limits: Limits,
}

/// How much each request and all of them may take (`fieldstore serve`'s `--max-*` options).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The longest field an archive may carry (a read of any length is sent in pieces).
    pub max_field: u64,
    /// How many requests each identity may have in flight at once; more wait for a place,
    /// then are answered 429.
    pub max_in_flight: usize,
    /// The bytes the server may hold for fields being received and reads being sent, all
    /// requests together (the memory module); at least `max_field` and a read's pieces more.
    pub max_memory: u64,
}

/// The longest field a server takes (an archive frame is taken from the memory budget whole).
pub const MAX_FIELD: u64 = u32::MAX as u64 - fieldstore_remote::protocol::LARGEST_FRAME_HEADER;

impl Default for Limits {
    fn default() -> Self {
        Limits { max_field: 1 << 30, max_in_flight: 64, max_memory: 4 << 30 }
    }
}

impl Limits {
    /// Refuses limits a server could not serve by: a field must fit in the memory budget.
    fn check(&self) -> Result<()> {
        let least = self.max_field.saturating_add(routes::READ_PIECES_HELD);
        if self.max_memory < least {
            return Err(Error::new(
                ErrorKind::BadConfig,
                format!(
                    "--max-memory {} is less than --max-field {} and a read's pieces: at least {least}",
                    self.max_memory, self.max_field
                ),
            ));
        }
        // An archive frame is taken from the budget whole, in one piece of at most u32::MAX.
        if self.max_field.saturating_add(fieldstore_remote::protocol::LARGEST_FRAME_HEADER) > u64::from(u32::MAX) {
            return Err(Error::new(ErrorKind::BadConfig, format!("--max-field {}: at most {} bytes", self.max_field, MAX_FIELD)));
        }
        if self.max_in_flight == 0 {
            return Err(Error::new(ErrorKind::BadConfig, "--max-in-flight 0 would refuse every request"));
        }
        Ok(())
    }
}

/// Serves `fs` until SIGTERM or SIGINT: then stops accepting, lets the requests in flight
/// finish (archives not at their end are dropped unflushed), and returns. `ready` is told the
/// address once the server listens.
pub fn serve(fs: FieldStore, options: ServeOptions, ready: impl FnOnce(SocketAddr)) -> Result<()> {
    // The accepting thread's own writes too (TLS alerts are written from the tasks).
    fieldstore_remote::block_sigpipe_in_this_thread();
    runtime()?.block_on(serve_until(fs, options, ready, stop_signal()))
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("fieldstore-serve")
        .on_thread_start(fieldstore_remote::block_sigpipe_in_this_thread)
        .enable_all()
        .build()
        .map_err(|e| Error::caused_by(ErrorKind::Io, "cannot start the server's threads", e))
}

/// A server on threads of its own, in this process (tests, programs embedding one): it stops
/// as [`serve`] does when dropped.
pub struct Background {
    /// The address it listens on.
    pub address: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<Result<()>>>,
}

impl Background {
    /// Starts serving `fs`; returns once it listens.
    pub fn start(fs: FieldStore, options: ServeOptions) -> Result<Background> {
        let runtime = runtime()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (listening, address) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("fieldstore-serve".into())
            .spawn(move || {
                let ready = |address| {
                    let _ = listening.send(address);
                };
                runtime.block_on(serve_until(fs, options, ready, async move { drop(stopped.await) }))
            })
            .map_err(|e| Error::caused_by(ErrorKind::Io, "cannot start the server's thread", e))?;
        match address.recv() {
            Ok(address) => Ok(Background { address, stop: Some(stop), thread: Some(thread) }),
            // It stopped before it listened: its error says why.
            Err(_) => {
                let stopped = thread.join().map_err(|_| Error::new(ErrorKind::Io, "the server's thread panicked"))?;
                Err(stopped.err().unwrap_or_else(|| Error::new(ErrorKind::Io, "the server stopped before it listened")))
            }
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Says in the log what is not secured, and refuses to listen beyond loopback so.
fn check_security(options: &ServeOptions) -> Result<()> {
    let mut unsafe_parts = Vec::new();
    if options.tls.is_none() {
        unsafe_parts.push("without TLS: tokens and data travel in the clear");
    }
    if matches!(options.access, Access::Open) {
        unsafe_parts.push("without an access file: every caller may read, archive, wipe and purge everything");
    }
    for part in &unsafe_parts {
        tracing::warn!("SERVING {part}");
        eprintln!("WARNING: fieldstore serve is running {part}");
    }
    if !unsafe_parts.is_empty() && !options.listen.ip().is_loopback() && !options.insecure_anywhere {
        let message = format!(
            "will not listen on {} {}: give TLS and an access file, or --insecure-anywhere",
            options.listen,
            unsafe_parts.join(" and ")
        );
        return Err(Error::new(ErrorKind::BadConfig, message));
    }
    Ok(())
}

/// Serves until `stop` resolves.
async fn serve_until(
    fs: FieldStore,
    options: ServeOptions,
    ready: impl FnOnce(SocketAddr),
    stop: impl std::future::Future<Output = ()>,
) -> Result<()> {
    check_security(&options)?;
    options.limits.check()?;
    let tls = options.tls.as_ref().map(TlsFiles::server_config).transpose()?.map(tokio_rustls::TlsAcceptor::from);
    options.access.check_against(fs.schema())?;
    let mut signing_key = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut signing_key);
    let served = Arc::new(routes::Served::new(fs, options.access, signing_key, options.limits));
    let app = routes::router(served, tls.is_some());
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|e| Error::caused_by(ErrorKind::Io, format!("cannot listen on {}", options.listen), e))?;
    let address = listener.local_addr().map_err(|e| Error::caused_by(ErrorKind::Io, "cannot read the address listened on", e))?;
    tracing::info!(%address, tls = tls.is_some(), "serving");
    ready(address);
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(stop);
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => { tracing::warn!(error = %e, "accept failed"); continue; }
            },
            () = &mut stop => break,
        };
        let Ok(connection) = connections.clone().try_acquire_owned() else {
            tracing::warn!(%peer, "{MAX_CONNECTIONS} connections open already: closed");
            continue;
        };
        let _ = tcp.set_nodelay(true);
        let app = app.clone();
        let mut builder = auto::Builder::new(TokioExecutor::new());
        builder.http1().timer(TokioTimer::new()).header_read_timeout(HANDSHAKE_TIMEOUT);
        builder.http2().timer(TokioTimer::new()).keep_alive_interval(Some(Duration::from_secs(30))).max_concurrent_streams(256);
        let tls = tls.clone();
        let watcher = graceful.watcher();
        tokio::spawn(async move {
            let _connection = connection;
            let served = match tls {
                None => watcher.watch(builder.serve_connection(TokioIo::new(tcp), TowerToHyperService::new(app)).into_owned()).await,
                Some(acceptor) => match tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(tcp)).await {
                    Ok(Ok(stream)) => {
                        // Its requests carry the client certificate it presented, if any.
                        let certificate = client_certificate(&stream);
                        let service =
                            TowerToHyperService::new(app.map_request(move |mut request: hyper::Request<hyper::body::Incoming>| {
                                if let Some(certificate) = &certificate {
                                    request.extensions_mut().insert(certificate.clone());
                                }
                                request
                            }));
                        watcher.watch(builder.serve_connection(TokioIo::new(stream), service).into_owned()).await
                    }
                    Ok(Err(e)) => return tracing::info!(%peer, error = %e, "TLS handshake failed"),
                    Err(_) => return tracing::info!(%peer, "TLS handshake timed out"),
                },
            };
            if let Err(e) = served {
                tracing::debug!(%peer, error = %e, "connection ended");
            }
        });
    }
    tracing::info!("stopping: no new connections; finishing the requests in flight");
    drop(listener);
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::warn!("requests still in flight after {SHUTDOWN_GRACE:?}: stopped");
    }
    Ok(())
}

/// The SHA-256 of the certificate the client of a TLS connection presented (which the
/// server's `--client-ca` verified in the handshake), if it presented one.
fn client_certificate(stream: &tokio_rustls::server::TlsStream<tokio::net::TcpStream>) -> Option<routes::ClientCertificate> {
    let (_, connection) = stream.get_ref();
    let certificate = connection.peer_certificates()?.first()?;
    Some(routes::ClientCertificate(access::sha256_hex(certificate.as_ref())))
}

/// SIGTERM or SIGINT.
async fn stop_signal() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut int)) = (signal(SignalKind::terminate()), signal(SignalKind::interrupt())) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => {},
        _ = int.recv() => {},
    }
}

/// Logs to standard error, one JSON object per line (or text for a terminal), at the level
/// `$FIELDSTORE_LOG` names (`info` by default).
pub fn log_to_stderr(json: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("FIELDSTORE_LOG").unwrap_or_else(|_| "info".into());
    let logs = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = if json { logs.json().try_init() } else { logs.try_init() };
}

/// A new random token, 32 bytes in hex: for `fieldstore token`.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    access::hex(&bytes)
}
