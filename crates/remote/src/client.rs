//! The connection to one server: HTTP/2 (or HTTP/1.1 where the server offers only that) over
//! rustls, every call bounded in time, errors naming the server.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::{StatusCode, Url};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use fieldstore_core::api::{Operation, Remote, RemoteArchiver};
use fieldstore_core::{Error, ErrorKind, Key, Result};

use crate::config::RemoteConfig;
use crate::protocol::{self, Archived, ErrorBody};

/// How many archive frames may wait to be sent before `archive` waits for the network.
const FRAMES_IN_FLIGHT: usize = 64;
/// Fields smaller than this are gathered into one frame batch before they are sent.
const BATCH_BYTES: usize = 256 * 1024;

/// A connection pool to one server, shared by every thread of the handle (a clone shares it).
#[derive(Clone)]
pub struct Client {
    endpoint: String,
    base: Url,
    http: reqwest::Client,
    /// The bearer token, never printed.
    token: Option<String>,
    runtime: Arc<OwnedRuntime>,
    /// How long a call may wait for the server (a read, a call, a flush's answer).
    idle: Duration,
    /// How many times a request is sent again after a failure that allows it.
    retries: u32,
}

/// The client's runtime. Its last handle may be dropped on one of its own threads (a task
/// holding a client ends there): it is then shut down in the background, never waited for.
struct OwnedRuntime(Option<Runtime>);

impl std::ops::Deref for OwnedRuntime {
    type Target = Runtime;
    fn deref(&self) -> &Runtime {
        self.0.as_ref().expect("present until dropped")
    }
}

impl Drop for OwnedRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Client {
    /// Connects lazily: the first call opens the connection.
    pub fn new(config: &RemoteConfig, source: &str) -> Result<Client> {
        let base = Url::parse(&config.endpoint).map_err(|e| Error::config_because(source, format!("endpoint '{}'", config.endpoint), e))?;
        if !matches!(base.scheme(), "https" | "http") {
            return Err(Error::config(source, format!("endpoint '{}': the scheme must be https (or http, without TLS)", config.endpoint)));
        }
        let mut http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs_f64(config.connect_timeout))
            .pool_idle_timeout(Duration::from_secs(60))
            .http2_adaptive_window(true);
        if let Some(ca) = &config.ca {
            let pem = std::fs::read(ca).map_err(|e| Error::io("read the CA certificate", ca, e))?;
            let certificates = reqwest::Certificate::from_pem_bundle(&pem)
                .map_err(|e| Error::config_because(source, format!("ca '{}'", ca.display()), e))?;
            for certificate in certificates {
                http = http.add_root_certificate(certificate);
            }
        }
        if let (Some(cert), Some(key)) = (&config.client_certificate, &config.client_key) {
            let mut pem = std::fs::read(cert).map_err(|e| Error::io("read the client certificate", cert, e))?;
            pem.extend(std::fs::read(key).map_err(|e| Error::io("read the client key", key, e))?);
            let identity =
                reqwest::Identity::from_pem(&pem).map_err(|e| Error::config_because(source, "client_certificate and client_key", e))?;
            http = http.identity(identity);
        }
        let http = http.build().map_err(|e| Error::config_because(source, "cannot set up TLS", e))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("fieldstore-remote")
            .on_thread_start(crate::block_sigpipe_in_this_thread)
            .enable_all()
            .build()
            .map_err(|e| Error::caused_by(ErrorKind::Io, "cannot start the remote client's threads", e))?;
        let token = config.token()?;
        let endpoint = config.endpoint.trim_end_matches('/').to_string();
        let idle = Duration::from_secs_f64(config.idle_timeout);
        let runtime = Arc::new(OwnedRuntime(Some(runtime)));
        Ok(Client { endpoint, base, http, token, runtime, idle, retries: config.retries })
    }

    fn url(&self, path: &str) -> Url {
        let mut url = self.base.clone();
        url.set_path(path);
        url
    }

    fn request(&self, method: reqwest::Method, url: Url) -> reqwest::RequestBuilder {
        let request = self.http.request(method, url);
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// The error of a failed exchange, naming the server.
    fn unreachable(&self, e: reqwest::Error) -> Error {
        let kind = if e.is_timeout() { ErrorKind::Timeout } else { ErrorKind::Unavailable };
        Error::caused_by(kind, format!("server {}", self.endpoint), e)
    }

    /// A failed exchange, and whether the request may be sent again.
    fn lost(&self, e: reqwest::Error) -> Failed {
        Failed { unsent: e.is_connect(), error: self.unreachable(e), later: None }
    }

    /// The response if it is a success; else the error its body carries.
    async fn successful(&self, response: reqwest::Response) -> std::result::Result<reqwest::Response, Failed> {
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let later = response.headers().get(reqwest::header::RETRY_AFTER).and_then(|v| v.to_str().ok()?.trim().parse::<u64>().ok());
        let body = response.bytes().await.map_err(|e| self.lost(e))?;
        let error = match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(error) => Error::new(error.kind, format!("server {}: {}", self.endpoint, error.message)),
            Err(_) => Error::new(status_kind(status), format!("server {}: {status}: {}", self.endpoint, String::from_utf8_lossy(&body))),
        };
        Err(Failed { error, unsent: false, later: later.map(Duration::from_secs) })
    }

    /// The body of a successful answer.
    async fn answer(&self, response: reqwest::Response) -> std::result::Result<Bytes, Failed> {
        self.successful(response).await?.bytes().await.map_err(|e| self.lost(e))
    }

    /// Makes `attempt` until it succeeds, fails in a way that forbids another, or has been
    /// made `retries` times more, pausing between attempts: the server's `Retry-After`, else
    /// a growing, jittered backoff. Any request that never reached the server is made again;
    /// one that did only if it `changes_nothing`.
    async fn retrying<T, F, A>(&self, changes_nothing: bool, mut attempt: A) -> Result<T>
    where
        A: FnMut() -> F,
        F: std::future::Future<Output = std::result::Result<T, Failed>>,
    {
        let mut made = 0;
        loop {
            let failed = match attempt().await {
                Ok(done) => return Ok(done),
                Err(failed) => failed,
            };
            let repeatable = failed.unsent || (changes_nothing && failed.error.kind() == ErrorKind::Unavailable);
            if !repeatable {
                return Err(failed.error);
            }
            if made >= self.retries {
                let kind = failed.error.kind();
                return Err(Error::caused_by(kind, format!("{} attempts failed, the last", made + 1), failed.error));
            }
            tokio::time::sleep(failed.later.map_or_else(|| backoff(made), |later| later.min(MAX_PAUSE))).await;
            made += 1;
        }
    }

    /// POSTs the JSON `body` to `path`, sent again as [`Client::retrying`] allows; the
    /// answer's body.
    fn post(&self, path: &str, body: Vec<u8>, changes_nothing: bool) -> Result<Vec<u8>> {
        let (client, url, body) = (self.clone(), self.url(path), Bytes::from(body));
        self.run(async move {
            let this = &client;
            let answer = this.retrying(changes_nothing, || {
                let request = this.request(reqwest::Method::POST, url.clone()).header("content-type", "application/json");
                let sent = request.body(body.clone()).send();
                async move { this.answer(sent.await.map_err(|e| this.lost(e))?).await }
            });
            Ok(answer.await?.to_vec())
        })
    }

    /// Runs `work` on the client's threads (where every socket is written, SIGPIPE blocked),
    /// and waits for it.
    fn run<T: Send + 'static>(&self, work: impl std::future::Future<Output = Result<T>> + Send + 'static) -> Result<T> {
        let started = self.runtime.spawn(self.bounded(work));
        self.finish(started)
    }

    /// `work`, failing with a timeout naming the server once it has waited `idle_timeout`.
    fn bounded<T>(&self, work: impl std::future::Future<Output = Result<T>>) -> impl std::future::Future<Output = Result<T>> {
        let (idle, endpoint) = (self.idle, self.endpoint.clone());
        async move {
            tokio::time::timeout(idle, work).await.unwrap_or_else(|_| {
                Err(Error::new(
                    ErrorKind::Timeout,
                    format!("server {endpoint} did not answer within {} s (idle_timeout)", idle.as_secs_f64()),
                ))
            })
        }
    }

    /// Waits for work started on the client's threads. The caller's thread only waits (a
    /// plain thread park, not the runtime's `block_on`): a handle's calls work from any
    /// thread, even one of another async runtime, which they then block for their time.
    pub fn finish<T>(&self, started: tokio::task::JoinHandle<Result<T>>) -> Result<T> {
        futures::executor::block_on(started)
            .map_err(|e| Error::caused_by(ErrorKind::Io, format!("a call to server {} stopped", self.endpoint), e))?
    }

    /// Reads `length` bytes at `offset` of a location the server gave.
    pub fn read(&self, uri: &str, offset: u64, length: usize) -> Result<Vec<u8>> {
        self.finish(self.start_read(uri, offset, length, Vec::new()))
    }

    /// [`Client::read`] into `buffer` (reused, whatever it holds), started now and finished
    /// by [`Client::finish`].
    pub fn start_read(&self, uri: &str, offset: u64, length: usize, buffer: Vec<u8>) -> tokio::task::JoinHandle<Result<Vec<u8>>> {
        let (client, uri) = (self.clone(), uri.to_string());
        self.runtime.spawn(self.bounded(async move { client.read_async(&uri, offset, length, buffer).await }))
    }

    /// [`Client::read_once`], made again after a lost connection or a busy server.
    async fn read_async(&self, uri: &str, offset: u64, length: usize, mut buffer: Vec<u8>) -> Result<Vec<u8>> {
        let mut url = self.url(protocol::READ);
        url.query_pairs_mut().append_pair("uri", uri).append_pair("offset", &offset.to_string()).append_pair("length", &length.to_string());
        self.retrying(true, || {
            let (url, buffer) = (url.clone(), std::mem::take(&mut buffer));
            async move { self.read_once(url, uri, offset, length, buffer).await }
        })
        .await
    }

    /// The bytes land in `buffer` as they arrive: one copy, whatever the read's length.
    async fn read_once(
        &self,
        url: Url,
        uri: &str,
        offset: u64,
        length: usize,
        mut buffer: Vec<u8>,
    ) -> std::result::Result<Vec<u8>, Failed> {
        let response = self.request(reqwest::Method::GET, url).send().await.map_err(|e| self.lost(e))?;
        let mut response = self.successful(response).await?;
        buffer.clear();
        buffer.reserve(length);
        let short = |got: usize| {
            let message = format!("server {} sent {got} bytes of {uri} at {offset}, not {length}", self.endpoint);
            Failed::from(Error::new(ErrorKind::Corrupt, message))
        };
        while let Some(piece) = response.chunk().await.map_err(|e| self.lost(e))? {
            if buffer.len() + piece.len() > length {
                return Err(short(buffer.len() + piece.len()));
            }
            buffer.extend_from_slice(&piece);
        }
        if buffer.len() != length {
            return Err(short(buffer.len()));
        }
        Ok(buffer)
    }
}

impl Remote for Client {
    fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn call(&self, operation: &Operation) -> Result<Vec<u8>> {
        let body = serde_json::to_vec(operation).map_err(|e| Error::caused_by(ErrorKind::BadRequest, "cannot encode a call", e))?;
        self.post(protocol::CALL, body, operation.changes_nothing())
    }

    fn post_repeatable(&self, path: &str, body: Vec<u8>) -> Result<Vec<u8>> {
        self.post(path, body, true)
    }

    fn archiver(&self) -> Result<Box<dyn RemoteArchiver>> {
        Ok(Box::new(Archiving { client: self.clone(), stream: None, batch: Vec::new(), fields: 0, session: new_session() }))
    }
}

/// A new session name: 128 random bits in hex (from the standard library's per-process random
/// hash keys; a session is no secret, the server keeps it per identity).
fn new_session() -> String {
    use std::hash::{BuildHasher, Hasher};
    let half = || {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
        hasher.finish()
    };
    format!("{:016x}{:016x}", half(), half())
}

/// The longest pause before a request is sent again, whatever the server asks.
const MAX_PAUSE: Duration = Duration::from_secs(10);

/// A failed attempt at a request ([`Client::retrying`]).
struct Failed {
    error: Error,
    /// The request never reached the server (no connection was made): it may be sent again,
    /// whatever it does.
    unsent: bool,
    /// The server asked to be called again after this long (`Retry-After`).
    later: Option<Duration>,
}

impl From<Error> for Failed {
    fn from(error: Error) -> Failed {
        Failed { error, unsent: false, later: None }
    }
}

/// The pause before attempt `made + 1` is made again: 100 ms growing threefold per attempt,
/// at most [`MAX_PAUSE`], less up to half at random (clients that lost one server together do
/// not all come back at once).
fn backoff(made: u32) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let full = Duration::from_millis(100).saturating_mul(3u32.saturating_pow(made)).min(MAX_PAUSE);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(made);
    let jitter = (hasher.finish() % 1000) as f64 / 2000.0;
    full.mul_f64(1.0 - jitter)
}

/// The kind of an error the server answered without a body of ours (a proxy's, say).
fn status_kind(status: StatusCode) -> ErrorKind {
    match status {
        StatusCode::BAD_REQUEST | StatusCode::PAYLOAD_TOO_LARGE => ErrorKind::BadRequest,
        StatusCode::NOT_FOUND => ErrorKind::NotFound,
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => ErrorKind::Denied,
        StatusCode::REQUEST_TIMEOUT | StatusCode::GATEWAY_TIMEOUT => ErrorKind::Timeout,
        StatusCode::TOO_MANY_REQUESTS | StatusCode::SERVICE_UNAVAILABLE | StatusCode::BAD_GATEWAY => ErrorKind::Unavailable,
        _ => ErrorKind::Io,
    }
}

/// One archive request in flight: its body's sender, and the answer to come at its end.
struct Stream {
    frames: mpsc::Sender<Bytes>,
    answer: tokio::task::JoinHandle<Result<Archived>>,
}

/// Fields archived through the server: each flush is one request whose body streams every
/// field archived since the last, ending with the end frame.
struct Archiving {
    client: Client,
    stream: Option<Stream>,
    /// Frames gathered before they are sent (small fields travel many to a piece).
    batch: Vec<u8>,
    /// Fields archived since the last flush, which its answer must count.
    fields: u64,
    /// This archiver's session on the server ([`protocol::SESSION`]).
    session: String,
}

impl Archiving {
    fn start(&self) -> Stream {
        let (frames, receiver) = mpsc::channel::<Bytes>(FRAMES_IN_FLIGHT);
        let (client, session) = (self.client.clone(), self.session.clone());
        let answer = self.client.runtime.spawn(async move {
            let body = ReceiverStream::new(receiver).map(Ok::<_, std::io::Error>);
            let request = client.request(reqwest::Method::POST, client.url(protocol::ARCHIVE));
            let request = request.header("content-type", protocol::FIELDS_TYPE).header(protocol::SESSION, session);
            let response = request.body(reqwest::Body::wrap_stream(body)).send().await.map_err(|e| client.unreachable(e))?;
            let body = client.answer(response).await.map_err(|failed| failed.error)?;
            serde_json::from_slice(&body).map_err(|e| {
                Error::caused_by(ErrorKind::Corrupt, format!("server {} answered an archive with something else", client.endpoint), e)
            })
        });
        Stream { frames, answer }
    }

    /// Sends the gathered frames; an error if the request ended already (the server refused
    /// it: its answer says why).
    fn send_batch(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        if self.stream.is_none() {
            self.stream = Some(self.start());
        }
        let piece = Bytes::from(std::mem::take(&mut self.batch));
        let stream = self.stream.as_ref().expect("started above");
        if futures::executor::block_on(stream.frames.send(piece)).is_ok() {
            return Ok(());
        }
        // The request is over before its end: its answer is the error.
        let stream = self.stream.take().expect("taken once");
        match self.finish(stream) {
            Ok(_) => Err(Error::new(ErrorKind::Io, format!("server {} ended an archive before its end", self.client.endpoint))),
            Err(e) => Err(e),
        }
    }

    /// Ends the body and waits, `idle_timeout` at most, for the server's answer.
    fn finish(&self, stream: Stream) -> Result<Archived> {
        drop(stream.frames);
        let answer = stream.answer;
        let endpoint = &self.client.endpoint;
        // Waited for here, not by a task of its own: a flush's round trip wakes one thread less.
        let _timers = self.client.runtime.enter();
        futures::executor::block_on(self.client.bounded(async move {
            answer.await.map_err(|e| Error::caused_by(ErrorKind::Io, format!("an archive to server {endpoint} stopped"), e))?
        }))
    }
}

impl RemoteArchiver for Archiving {
    fn archive(&mut self, identifier: &Key, data: &[u8]) -> Result<()> {
        protocol::encode_field(identifier, data, &mut self.batch)?;
        self.fields += 1;
        if self.batch.len() >= BATCH_BYTES {
            self.send_batch()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() && self.stream.is_none() {
            return Ok(());
        }
        protocol::encode_end(&mut self.batch);
        let sent = self.send_batch();
        let sent_fields = std::mem::take(&mut self.fields);
        let Some(stream) = self.stream.take() else { return sent };
        sent?;
        let archived = self.finish(stream)?;
        if archived.fields != sent_fields {
            let message = format!("server {} flushed {} fields of the {sent_fields} sent", self.client.endpoint, archived.fields);
            return Err(Error::new(ErrorKind::Corrupt, message));
        }
        Ok(())
    }

    fn discard(&mut self) {
        self.batch.clear();
        self.fields = 0;
        if let Some(stream) = self.stream.take() {
            stream.answer.abort();
        }
    }
}

impl Drop for Archiving {
    /// Fields archived and not flushed are dropped: the body ends without its end frame, and
    /// the server flushes none of them.
    fn drop(&mut self) {
        if let Some(stream) = self.stream.take() {
            stream.answer.abort();
        }
    }
}
