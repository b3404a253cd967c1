//! The protocol's endpoints ([`fieldstore_remote::protocol`]): each identifies its caller,
//! checks what the caller may do, and runs the handle's blocking calls on the blocking pool.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{FromRequestParts, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use futures::StreamExt;
use hmac::{Hmac, Mac};
use serde::Deserialize;
use sha2::Sha256;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};
use tokio_stream::wrappers::ReceiverStream;

use fieldstore_core::api::{Answering, Archiver, FieldStore, ListOptions, Need, Operation, Permission, Scope, NOTHING_ALLOWED_MATCHED};
use fieldstore_core::backend::{ControlAction, FieldLocation};
use fieldstore_core::{Error, ErrorKind, Key, Request, Result};
use fieldstore_remote::protocol::{self, Archived, ErrorBody, FieldFrames, Frame};

use crate::access::{constant_time_eq, Access, Identity};
use crate::memory::{Budget, Held};
use crate::metrics::{InFlight, Metrics};
use crate::pieces::{self, Pieces};
use crate::sessions::{session_name, Sessions};
use crate::Limits;

/// The pieces a read is streamed in.
const READ_PIECE: u64 = 4 << 20;

/// How many read pieces' buffers a server keeps for later reads (64 MiB).
const PIECES_KEPT: usize = 16;

/// Pieces a read holds at most: one being read, two waiting to be sent (its channel), one
/// being sent.
const PIECES_PER_READ: u64 = 4;

/// The most bytes one read holds of the memory budget.
pub(crate) const READ_PIECES_HELD: u64 = PIECES_PER_READ * READ_PIECE;

/// The largest call body.
const CALL_LIMIT: usize = 2 << 20;

/// How long an archive body may send nothing before it is dropped, unflushed.
const BODY_IDLE: Duration = Duration::from_secs(60);

/// What every request shares.
pub struct Served {
    /// The handle served.
    pub fs: Arc<FieldStore>,
    /// Who may do what.
    pub access: Access,
    /// The key locations are signed with: a location read back must be one this server gave
    /// the same identity (random per server start).
    pub signing_key: [u8; 32],
    /// The longest field an archive may carry.
    pub max_field: u64,
    /// The counters `/metrics` shows.
    pub metrics: Metrics,
    /// Each identity's requests in flight ("" on an open server), bounded.
    pub in_flight: HashMap<String, Arc<Semaphore>>,
    /// The bound of each identity's requests in flight.
    pub max_in_flight: usize,
    /// Extracts points for clients ([`crate::extract`]), knowing the packings it learnt.
    pub extractor: fieldstore_extract::Extractor,
    /// Archivers kept between a client's archive requests.
    sessions: Sessions,
    /// The buffers reads are sent from.
    pieces: Arc<Pieces>,
    /// The bytes requests may hold, all together.
    pub(crate) memory: Budget,
}

impl Served {
    /// What every request shares: each identity may have `limits.max_in_flight` requests at
    /// once.
    pub fn new(fs: FieldStore, access: Access, signing_key: [u8; 32], limits: Limits) -> Self {
        let Limits { max_field, max_in_flight, max_memory } = limits;
        let names: Vec<String> = match &access {
            Access::Open => vec![String::new()],
            Access::Tokens(identities) => identities.iter().map(|i| i.name.clone()).collect(),
        };
        let in_flight = names.into_iter().map(|name| (name, Arc::new(Semaphore::new(max_in_flight)))).collect();
        Served {
            fs: Arc::new(fs),
            access,
            signing_key,
            max_field,
            metrics: Metrics::new(),
            in_flight,
            max_in_flight,
            extractor: fieldstore_extract::Extractor::new(),
            sessions: Sessions::default(),
            pieces: Pieces::new(READ_PIECE as usize, PIECES_KEPT),
            memory: Budget::new(max_memory),
        }
    }
}

pub(crate) type Shared = Arc<Served>;

/// The router of every endpoint and of the web catalogue's page, every answer with the
/// security headers ([`crate::web::add_security_headers`]; HSTS when served over `tls`).
pub fn router(served: Shared, tls: bool) -> Router {
    Router::new()
        .route(protocol::HEALTH, get(|| async { "ok\n" }))
        .route(protocol::METRICS, get(metrics))
        .route(protocol::CALL, post(call))
        .route(protocol::ARCHIVE, post(archive))
        .route(protocol::READ, get(read))
        .route(protocol::LIST, get(list))
        .route(protocol::RETRIEVE, get(retrieve))
        .route(fieldstore_extract::remote::EXTRACT, post(crate::extract::extract))
        .route(fieldstore_extract::remote::SCAN, post(crate::extract::scan))
        .merge(crate::web::routes())
        .with_state(served)
        .layer(axum::middleware::map_response(move |response: Response| async move { crate::web::add_security_headers(tls, response) }))
}

/// A failed request's answer: the status its kind maps to, the error as JSON.
pub(crate) fn failure(error: &Error) -> Response {
    let status = match error.kind() {
        ErrorKind::BadRequest | ErrorKind::BadConfig => StatusCode::BAD_REQUEST,
        ErrorKind::NotFound => StatusCode::NOT_FOUND,
        ErrorKind::AlreadyExists | ErrorKind::Conflict => StatusCode::CONFLICT,
        ErrorKind::Locked => StatusCode::LOCKED,
        ErrorKind::Timeout => StatusCode::GATEWAY_TIMEOUT,
        ErrorKind::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        ErrorKind::Unsupported => StatusCode::NOT_IMPLEMENTED,
        ErrorKind::Denied => StatusCode::FORBIDDEN,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    let body = serde_json::to_vec(&ErrorBody::of(error)).unwrap_or_default();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Runs a blocking call on the blocking pool; a panic there is an error, never a crash.
pub(crate) async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work).await.map_err(|e| Error::caused_by(ErrorKind::Io, "the call stopped", e))?
}

/// A request let in: who asks, its place among that identity's requests in flight, and when
/// it began. Dropped when the request ends (for a retrieve, when its stream does).
pub(crate) struct Admitted<'s> {
    pub(crate) identity: Option<&'s Identity>,
    permit: Option<OwnedSemaphorePermit>,
    _in_flight: InFlight,
    started: Instant,
}

/// The SHA-256 (hex) of the certificate a connection's client presented and the server's
/// `--client-ca` verified, which the connection puts in each of its requests' extensions.
#[derive(Clone)]
pub struct ClientCertificate(pub String);

/// Who a request says it is: its bearer token, and its connection's client certificate.
pub(crate) struct Caller {
    token: Option<String>,
    certificate: Option<ClientCertificate>,
}

impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> std::result::Result<Self, Self::Rejection> {
        let token = parts.headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).and_then(bearer_token);
        Ok(Caller { token: token.map(|t| t.trim().to_string()), certificate: parts.extensions.get::<ClientCertificate>().cloned() })
    }
}

/// Identifies the caller from its bearer token or client certificate and takes one of its
/// places in flight, waiting [`ADMISSION_WAIT`] at most for one; the answer to give instead if
/// it is unknown or still has too many requests in flight (429, `Retry-After`: clients that
/// only read try again).
pub(crate) async fn admit<'s>(served: &'s Served, caller: &Caller) -> std::result::Result<Admitted<'s>, Box<Response>> {
    let certificate = caller.certificate.as_ref().map(|c| c.0.as_str());
    let identity = served.access.identify(caller.token.as_deref(), certificate).map_err(|e| Box::new(refused_identity(&e)))?;
    let name = identity.map_or("", |i| i.name.as_str());
    let places = served.in_flight.get(name).cloned();
    let waited = match places {
        Some(places) => tokio::time::timeout(ADMISSION_WAIT, places.acquire_owned()).await.ok().and_then(|p| p.ok()),
        None => None,
    };
    let permit = waited.ok_or_else(|| {
        let message = format!(
            "identity '{name}' has had {} requests in flight for {} s: try again later",
            served.max_in_flight,
            ADMISSION_WAIT.as_secs()
        );
        let mut response = failure(&Error::new(ErrorKind::Unavailable, message));
        *response.status_mut() = StatusCode::TOO_MANY_REQUESTS;
        response.headers_mut().insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
        Box::new(response)
    })?;
    Ok(Admitted { identity, permit: Some(permit), _in_flight: served.metrics.begin(), started: Instant::now() })
}

/// How long a request waits for a place among its identity's requests in flight before it is
/// refused: a burst of an identity's clients queues rather than fails.
const ADMISSION_WAIT: Duration = Duration::from_secs(10);

/// The token of an `Authorization: Bearer TOKEN` value (the scheme in any case).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then_some(token)
}

/// Logs and counts an answered request, and gives its answer: `sent` bytes of the body of
/// `answer`, or the error's.
pub(crate) fn answer(
    served: &Served,
    admitted: &Admitted<'_>,
    operation: &str,
    received: u64,
    outcome: Result<(Response, u64)>,
) -> Response {
    let identity = admitted.identity.map_or("-", |i| i.name.as_str());
    let took = admitted.started.elapsed();
    let ms = took.as_secs_f64() * 1e3;
    match outcome {
        Ok((response, sent)) => {
            tracing::info!(identity, operation, ms, received, sent, "done");
            served.metrics.record(operation, "ok", took, received, sent);
            response
        }
        Err(error) => {
            tracing::warn!(identity, operation, ms, kind = ?error.kind(), error = %error.report(), "failed");
            let kind = serde_json::to_value(error.kind()).ok().and_then(|k| k.as_str().map(String::from)).unwrap_or_default();
            served.metrics.record(operation, &kind, took, received, 0);
            failure(&error)
        }
    }
}

/// A byte stream of `length` bytes as the answer (its length said, so no chunked framing; a
/// stream that ends short ends broken).
fn streamed(body: Body, length: u64) -> Response {
    ([(header::CONTENT_TYPE, "application/octet-stream".to_string()), (header::CONTENT_LENGTH, length.to_string())], body).into_response()
}

/// A body as the answer, counted.
pub(crate) fn bytes_answer(content_type: &'static str, body: Vec<u8>) -> (Response, u64) {
    let sent = body.len() as u64;
    (([(header::CONTENT_TYPE, content_type)], body).into_response(), sent)
}

async fn metrics(State(served): State<Shared>) -> Response {
    ([(header::CONTENT_TYPE, "application/openmetrics-text; version=1.0.0; charset=utf-8")], served.metrics.text()).into_response()
}

pub(crate) fn check(identity: Option<&Identity>, permission: Permission, scope: &Scope<'_>) -> Result<()> {
    identity.map_or(Ok(()), |identity| identity.check(permission, scope))
}

/// The name a location is signed for.
pub(crate) fn name(identity: Option<&Identity>) -> String {
    identity.map_or(String::new(), |i| i.name.clone())
}

/// The signature of `uri` for the identity `name`, in hex.
fn signature(key: &[u8; 32], name: &str, uri: &str) -> String {
    let mut mac = <Hmac<Sha256>>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(name.as_bytes());
    mac.update(&[0]);
    mac.update(uri.as_bytes());
    crate::access::hex(&mac.finalize().into_bytes()[..16])
}

/// `uri#signature`: what clients are given, and read back with.
pub(crate) fn sign(key: &[u8; 32], name: &str, location: &mut FieldLocation) {
    let signed = format!("{}#{}", location.uri, signature(key, name, &location.uri));
    location.uri = signed.into();
}

/// The URI of a signed one, if the signature is this server's for `name`.
fn verify<'u>(key: &[u8; 32], name: &str, signed: &'u str) -> Result<&'u str> {
    let refused = || Error::new(ErrorKind::Denied, "a location this server did not give this identity");
    let (uri, given) = signed.rsplit_once('#').ok_or_else(refused)?;
    if constant_time_eq(signature(key, name, uri).as_bytes(), given.as_bytes()) {
        Ok(uri)
    } else {
        Err(refused())
    }
}

async fn call(State(served): State<Shared>, caller: Caller, body: Body) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let (operation, received) = match read_call(body).await {
        Ok(read) => read,
        Err(e) => return answer(&served, &admitted, "invalid", 0, Err(e)),
    };
    let name = operation_name(&operation);
    let outcome = run_call(&served, admitted.identity, operation).await.map(|answer| bytes_answer("application/json", answer));
    answer(&served, &admitted, &name, received, outcome)
}

/// A call's body, read once the caller is admitted: at most [`CALL_LIMIT`] bytes, within
/// [`BODY_IDLE`], parsed on the blocking pool (a key of many keywords costs its parse there).
async fn read_call(body: Body) -> Result<(Operation, u64)> {
    read_body(body, CALL_LIMIT, "a call").await
}

/// A JSON body of at most `limit` bytes (`what` it is, for errors), read within
/// [`BODY_IDLE`] and parsed on the blocking pool; and its length.
pub(crate) async fn read_body<T: serde::de::DeserializeOwned + Send + 'static>(
    body: Body,
    limit: usize,
    what: &'static str,
) -> Result<(T, u64)> {
    let bytes = match tokio::time::timeout(BODY_IDLE, axum::body::to_bytes(body, limit)).await {
        Err(_) => return Err(Error::new(ErrorKind::Timeout, format!("{what}'s body did not arrive within {} s", BODY_IDLE.as_secs()))),
        Ok(Err(e)) => return Err(Error::caused_by(ErrorKind::BadRequest, format!("{what}'s body (at most {limit} bytes)"), e)),
        Ok(Ok(bytes)) => bytes,
    };
    let received = bytes.len() as u64;
    let parsed = blocking(move || {
        serde_json::from_slice::<T>(&bytes).map_err(|e| Error::caused_by(ErrorKind::BadRequest, format!("not {what}"), e))
    })
    .await?;
    Ok((parsed, received))
}

/// The operation's name, as its JSON spells it (`op`): the metrics' label.
fn operation_name(operation: &Operation) -> String {
    let json = serde_json::to_value(operation).ok();
    json.as_ref().and_then(|v| v.get("op")).and_then(|o| o.as_str()).unwrap_or("call").to_string()
}

fn refused_identity(error: &Error) -> Response {
    let mut response = failure(error);
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response.headers_mut().insert(header::WWW_AUTHENTICATE, header::HeaderValue::from_static("Bearer"));
    response
}

async fn run_call(served: &Shared, identity: Option<&Identity>, operation: Operation) -> Result<Vec<u8>> {
    let operation = operation.honouring_locks();
    let explanations = identity.is_none_or(|i| i.reads_everything());
    if let Some(identity) = identity {
        authorise(served, identity, &operation.needs()).await?;
    }
    let (served, name) = (served.clone(), name(identity));
    let outcome = blocking(move || {
        let answering = Answering { locations: &|location| sign(&served.signing_key, &name, location), explanations };
        operation.run(&served.fs, &answering)
    })
    .await;
    outcome.map_err(|e| hide_beyond_access(explanations, e))
}

/// A caller allowed part of the store (no `explanations`) is not told what is stored beyond
/// it: why nothing matched becomes [`NOTHING_ALLOWED_MATCHED`].
pub(crate) fn hide_beyond_access(explanations: bool, error: Error) -> Error {
    match (explanations, error.kind()) {
        (false, ErrorKind::NotFound) => Error::new(ErrorKind::NotFound, NOTHING_ALLOWED_MATCHED),
        _ => error,
    }
}

/// Whether `identity` may do what has `needs` (an operation's): each need allowed by one of
/// its permissions; a need on whole data sets checked on every data set its request names,
/// and data set keys checked to be keys of the server's schema (a key of other keywords could
/// name another data set's place). The refusal names the first need none allows.
pub(crate) async fn authorise(served: &Shared, identity: &Identity, needs: &[Need<'_>]) -> Result<()> {
    for need in needs {
        let refusals: Vec<Error> = need.any_of.iter().filter_map(|p| identity.check(*p, &need.scope).err()).collect();
        if refusals.len() == need.any_of.len() {
            if let Some(first) = refusals.into_iter().next() {
                return Err(first);
            }
        }
        if let Scope::Datasets(keys) = &need.scope {
            for key in keys {
                let canonical = served.fs.dataset_named(&Request::parse(&key.to_string())?)?;
                if canonical != **key {
                    return Err(Error::new(
                        ErrorKind::BadRequest,
                        format!("{key} is not a data set of this server's schema (its data set key: {canonical})"),
                    ));
                }
            }
        }
        if let (true, Scope::Request(text)) = (need.whole_datasets, &need.scope) {
            let (served, text) = (served.clone(), text.to_string());
            let datasets = blocking(move || {
                let everything = ListOptions { depth: 1, ..ListOptions::default() };
                Ok(served.fs.resolve(&Request::parse(&text)?, everything, None)?.datasets)
            })
            .await?;
            for dataset in &datasets {
                if !need.any_of.iter().any(|p| identity.allows_key(*p, dataset)) {
                    return Err(Error::new(
                        ErrorKind::Denied,
                        format!("identity '{}' may not act on data set {dataset}, which the request names whole", identity.name),
                    ));
                }
            }
        }
    }
    Ok(())
}

async fn archive(State(served): State<Shared>, caller: Caller, headers: HeaderMap, body: Body) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let session = session_name(headers.get(protocol::SESSION).and_then(|v| v.to_str().ok())).map(String::from);
    let outcome = match admitted.identity.filter(|identity| !identity.may(Permission::Archive)) {
        // Refused before any of the body is read (nor any of the memory budget taken for it).
        Some(identity) => Err(Error::new(ErrorKind::Denied, format!("identity '{}' may not archive anything", identity.name))),
        None => receive_archive(&served, admitted.identity, session, body).await,
    };
    let received = outcome.as_ref().map_or(0, |archived| archived.bytes);
    let outcome = outcome.map(|archived| (axum::Json(archived).into_response(), 0));
    answer(&served, &admitted, "archive", received, outcome)
}

/// Feeds the body's pieces to a blocking archiver as they come; answers once it flushed.
async fn receive_archive(served: &Shared, identity: Option<&Identity>, session: Option<String>, body: Body) -> Result<Archived> {
    let mut stream = body.into_data_stream();
    // A small body (a flush of small fields) is gathered whole first, then archived by the
    // blocking thread at once: no hand-over per piece, whose wake-ups cost more than its work.
    let (mut gathered, mut gathered_bytes, mut broken, mut ended) = (Vec::new(), 0, None, false);
    while !ended && gathered_bytes < SMALL_BODY {
        match next_piece(&mut stream).await {
            Ok(Some(piece)) => {
                gathered_bytes += piece.len();
                gathered.push(piece);
            }
            Ok(None) => ended = true,
            Err(e) => (ended, broken) = (true, Some(e)),
        }
    }
    let (served, name) = (served.clone(), name(identity));
    let identity = identity.and_then(|identity| served.access.position(identity));
    if ended {
        let archived = tokio::task::block_in_place(|| archive_session(&served, identity, &name, session, gathered.into_iter()));
        return archived.map_err(|error| broken.unwrap_or(error));
    }
    let (pieces, received) = mpsc::channel::<Bytes>(16);
    let archiving = tokio::task::spawn_blocking(move || {
        let mut received = received;
        let body = gathered.into_iter().chain(std::iter::from_fn(|| received.blocking_recv()));
        archive_session(&served, identity, &name, session, body)
    });
    while !ended {
        match next_piece(&mut stream).await {
            // An archiver that stopped takes no more: its error is the answer.
            Ok(Some(piece)) => ended = pieces.send(piece).await.is_err(),
            Ok(None) => ended = true,
            Err(e) => (ended, broken) = (true, Some(e)),
        }
    }
    drop(pieces);
    let archived = archiving.await.map_err(|e| Error::caused_by(ErrorKind::Io, "the archive stopped", e))?;
    // Once flushed (the end frame came), a body broken after it changes nothing; before,
    // the break is the reason.
    archived.map_err(|error| broken.unwrap_or(error))
}

/// Archives a body with the archiver parked for `session` (or a new one), and parks it again.
fn archive_session(
    served: &Served,
    identity: Option<usize>,
    name: &str,
    session: Option<String>,
    body: impl Iterator<Item = Bytes>,
) -> Result<Archived> {
    let parked = session.as_deref().and_then(|session| served.sessions.take(name, session));
    let archiver = match parked {
        Some(archiver) => archiver,
        None => served.fs.archiver()?,
    };
    let (archived, archiver) = archive_pieces(served, identity, body, archiver)?;
    if let Some(session) = &session {
        served.sessions.park(name, session, archiver);
    }
    Ok(archived)
}

/// Bodies up to this size are received whole before they are archived.
const SMALL_BODY: usize = 512 * 1024;

/// The next piece of an archive body; `None` at its end; an error if it broke off or sent
/// nothing for [`BODY_IDLE`].
async fn next_piece(stream: &mut axum::body::BodyDataStream) -> Result<Option<Bytes>> {
    let Ok(next) = tokio::time::timeout(BODY_IDLE, stream.next()).await else {
        let message = format!("the archive body sent nothing for {} s: nothing of it was flushed", BODY_IDLE.as_secs());
        return Err(Error::new(ErrorKind::Timeout, message));
    };
    next.transpose().map_err(|e| Error::caused_by(ErrorKind::BadRequest, "the archive body broke off: nothing of it was flushed", e))
}

/// Archives each field of the body, and flushes at its end frame. A body that ends
/// otherwise, or an error, drops the archiver unflushed: none of its fields becomes visible.
fn archive_pieces(
    served: &Served,
    identity: Option<usize>,
    body: impl Iterator<Item = Bytes>,
    mut archiver: Archiver,
) -> Result<(Archived, Archiver)> {
    let identity = identity.and_then(|at| served.access.identity(at));
    let mut frames = FieldFrames::new(served.max_field);
    let mut archived = Archived::default();
    let mut held = Held::none(&served.memory);
    for piece in body {
        frames.push(piece);
        while let Some(frame) = frames.next_frame()? {
            match frame {
                Frame::Field(identifier, data) => {
                    check_archive(identity, &identifier)?;
                    archiver.archive(&identifier, &data)?;
                    archived.fields += 1;
                    archived.bytes += data.len() as u64;
                }
                Frame::End => archiver.flush()?,
            }
        }
        // The frame being received, whole, before its bytes come (the client waits meanwhile),
        // if its identifier may be archived.
        if let Some(text) = frames.frame_identifier() {
            check_archive(identity, &Key::parse(text)?)?;
        }
        held.set(frames.frame_bytes() as u64)?;
    }
    if !frames.ended() {
        return Err(Error::new(ErrorKind::BadRequest, "the archive body ended before its end frame: nothing of it was flushed"));
    }
    Ok((archived, archiver))
}

/// Refuses a field `identity` may not archive.
fn check_archive(identity: Option<&Identity>, identifier: &Key) -> Result<()> {
    match identity.filter(|i| !i.allows_key(Permission::Archive, identifier)) {
        Some(identity) => Err(Error::new(ErrorKind::Denied, format!("identity '{}' may not archive {identifier}", identity.name))),
        None => Ok(()),
    }
}

/// The query of a read.
#[derive(Deserialize)]
struct ReadQuery {
    uri: String,
    offset: u64,
    length: u64,
}

async fn read(State(served): State<Shared>, caller: Caller, Query(query): Query<ReadQuery>) -> Response {
    let mut admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let permit = admitted.permit.take();
    let outcome = read_range(&served, admitted.identity, query, permit).await;
    let outcome = outcome.map(|(body, length)| (streamed(body, length), length));
    answer(&served, &admitted, "read", 0, outcome)
}

/// The bytes of a read, streamed in pieces as they are read: a server holds a few pieces per
/// read, whatever its length.
async fn read_range(
    served: &Shared,
    identity: Option<&Identity>,
    query: ReadQuery,
    permit: Option<OwnedSemaphorePermit>,
) -> Result<(Body, u64)> {
    let uri = verify(&served.signing_key, &name(identity), &query.uri)?.to_string();
    // The first piece is read before answering, so that a location that cannot be read is
    // an error status, not a broken stream.
    let served = served.clone();
    let (pieces, received) = mpsc::channel::<std::io::Result<Bytes>>(2);
    let (first, read) = tokio::sync::oneshot::channel::<Result<()>>();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut first = Some(first);
        let mut at = 0u64;
        while at < query.length || first.is_some() {
            let length = (query.length - at).min(READ_PIECE) as usize;
            let outcome = read_piece(&served, &uri, query.offset, at, length, query.length < SMALL_READ);
            // The first piece's error is the answer's status; a later one breaks the stream.
            let piece = match (outcome, first.take()) {
                (Ok(piece), None) => piece,
                (Ok(piece), Some(first)) => {
                    let _ = first.send(Ok(()));
                    piece
                }
                (Err(e), Some(first)) => return drop(first.send(Err(e))),
                (Err(e), None) => return drop(pieces.blocking_send(Err(std::io::Error::other(e.report().to_string())))),
            };
            if pieces.blocking_send(Ok(piece)).is_err() {
                return; // The client went away.
            }
            at += length as u64;
        }
    });
    read.await.map_err(|e| Error::caused_by(ErrorKind::Io, "the read stopped", e))??;
    Ok((Body::from_stream(ReceiverStream::new(received)), query.length))
}

/// Reads below this length are read into buffers of their own length, counted as such: a
/// point read does not take a 4 MiB piece of the memory budget.
const SMALL_READ: u64 = 1 << 20;

/// One piece of a read: `length` bytes at `at` of the read from `offset`, held within the
/// memory budget until sent. A piece's buffer is one of the pool's (whole pieces: counted
/// whole, whatever part is sent) unless the read is `small`.
fn read_piece(served: &Served, uri: &str, offset: u64, at: u64, length: usize, small: bool) -> Result<Bytes> {
    let held = served.memory.take(if small { length as u64 } else { READ_PIECE })?;
    let offset = offset.checked_add(at).ok_or_else(|| Error::new(ErrorKind::BadRequest, "offset beyond any file"))?;
    if !small {
        if let Some(mapping) = served.fs.map_stored(uri, offset, length)? {
            return Ok(pieces::lent(mapping, held));
        }
    }
    let mut buffer = if small { vec![0; length] } else { served.pieces.take() };
    // Every byte sent is one this read wrote: a store fills the slice or fails (Store::read),
    // so no byte of an earlier read, another identity's perhaps, is ever sent.
    let outcome = served.fs.read_stored(uri, offset, &mut buffer[..length]);
    let piece = served.pieces.send(buffer, length, held);
    outcome.map(|()| piece)
}

/// The query of a list or retrieve.
#[derive(Deserialize)]
struct RequestQuery {
    request: String,
}

async fn list(State(served): State<Shared>, caller: Caller, Query(query): Query<RequestQuery>) -> Response {
    let admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    let outcome = list_lines(&served, admitted.identity, query.request).await;
    let outcome = outcome.map(|lines| (([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(lines)).into_response(), 0));
    answer(&served, &admitted, "list", 0, outcome)
}

/// Lines of a listing sent at once.
const LIST_PIECE: usize = 256 * 1024;

/// The fields a request names, one JSON line each, sent in pieces as they are encoded: a
/// server holds the resolved fields and a piece of lines, not the whole answer. An error in
/// resolving is the answer's status; none can come after.
async fn list_lines(served: &Shared, identity: Option<&Identity>, request: String) -> Result<ReceiverStream<std::io::Result<Bytes>>> {
    check(identity, Permission::Read, &Scope::Request(&request))?;
    let (served, name) = (served.clone(), name(identity));
    let (pieces, lines) = mpsc::channel::<std::io::Result<Bytes>>(2);
    let matches = blocking({
        let served = served.clone();
        move || served.fs.resolve(&Request::parse(&request)?, ListOptions::default(), Some(ControlAction::List))
    })
    .await?;
    tokio::task::spawn_blocking(move || {
        let mut piece = Vec::new();
        let mut sent = 0;
        // One signature per file, shared by its fields' lines.
        let mut signed: HashMap<Arc<str>, Arc<str>> = HashMap::new();
        for mut field in matches.fields {
            let uri = signed.entry(field.location.uri.clone()).or_insert_with(|| {
                let mut location = field.location.clone();
                sign(&served.signing_key, &name, &mut location);
                location.uri
            });
            field.location.uri = uri.clone();
            if let Err(e) = serde_json::to_writer(&mut piece, &field) {
                return drop(pieces.blocking_send(Err(std::io::Error::other(e))));
            }
            piece.push(b'\n');
            if piece.len() >= LIST_PIECE {
                sent += piece.len() as u64;
                if pieces.blocking_send(Ok(Bytes::from(std::mem::take(&mut piece)))).is_err() {
                    break; // The client went away.
                }
            }
        }
        sent += piece.len() as u64;
        let _ = pieces.blocking_send(Ok(Bytes::from(piece)));
        served.metrics.streamed("list", sent);
    });
    Ok(ReceiverStream::new(lines))
}

async fn retrieve(State(served): State<Shared>, caller: Caller, Query(query): Query<RequestQuery>) -> Response {
    let mut admitted = match admit(&served, &caller).await {
        Ok(admitted) => admitted,
        Err(refused) => return *refused,
    };
    // The identity's place is held until the stream ends.
    let permit = admitted.permit.take();
    let outcome = start_retrieve(&served, admitted.identity, query.request, permit).await;
    let outcome = outcome.map(|(body, length)| (streamed(body, length), length));
    answer(&served, &admitted, "retrieve", 0, outcome)
}

/// Resolves the request, then streams the fields' bytes as they are read. An error once the
/// first bytes went out ends the stream broken, so no client takes it for whole.
async fn start_retrieve(
    served: &Shared,
    identity: Option<&Identity>,
    request: String,
    permit: Option<OwnedSemaphorePermit>,
) -> Result<(Body, u64)> {
    check(identity, Permission::Read, &Scope::Request(&request))?;
    let explanations = identity.is_none_or(|i| i.reads_everything());
    let served = served.clone();
    let reader = blocking(move || {
        let (reader, why) = served.fs.retrieve(&Request::parse(&request)?)?;
        match why {
            Some(_) if reader.fields().is_empty() && !explanations => {
                Err(Error::new(ErrorKind::NotFound, format!("{NOTHING_ALLOWED_MATCHED}: {request}")))
            }
            Some(why) if reader.fields().is_empty() => Err(Error::new(ErrorKind::NotFound, format!("nothing matches {request}: {why}"))),
            _ => Ok(reader),
        }
    })
    .await?;
    let length = reader.total_bytes();
    let (pieces, received) = mpsc::channel::<std::io::Result<Bytes>>(4);
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let mut reader = reader;
        let mut out = ChannelWriter { pieces: pieces.clone() };
        if let Err(e) = reader.write_to(&mut out) {
            let _ = pieces.blocking_send(Err(e));
        }
    });
    Ok((Body::from_stream(ReceiverStream::new(received)), length))
}

/// Sends what a reader writes to the response body.
struct ChannelWriter {
    pieces: mpsc::Sender<std::io::Result<Bytes>>,
}

impl std::io::Write for ChannelWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let gone = || std::io::Error::new(std::io::ErrorKind::BrokenPipe, "the client went away");
        self.pieces.blocking_send(Ok(Bytes::copy_from_slice(buf))).map_err(|_| gone())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_location_reads_back_only_for_the_identity_it_was_signed_for() {
        let key = [7u8; 32];
        let mut location = FieldLocation { uri: "class=od/data.1".into(), offset: 0, length: 1, crc32c: None };
        sign(&key, "ops", &mut location);
        assert_eq!(verify(&key, "ops", &location.uri).unwrap(), "class=od/data.1");
        assert_eq!(verify(&key, "other", &location.uri).unwrap_err().kind(), ErrorKind::Denied);
        assert!(verify(&[8u8; 32], "ops", &location.uri).is_err(), "another server's key");
        assert!(verify(&key, "ops", "class=od/data.1").is_err(), "unsigned");
        let forged = location.uri.replace("data.1", "data.2");
        assert!(verify(&key, "ops", &forged).is_err(), "another file under the same signature");
    }
}
