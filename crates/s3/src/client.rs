//! One S3 endpoint and bucket, through `object_store`'s S3 client: object names under the
//! section's prefix, requests run on a runtime of this backend's own (fieldstore's API is
//! synchronous; callers wait on a channel, so no caller ever needs to be outside or inside
//! some async runtime), and the client's errors mapped to fieldstore's kinds with the bucket
//! and endpoint named, never a credential.

use std::future::Future;
use std::sync::{mpsc, Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::{AmazonS3, AmazonS3Builder, AwsAuthorizer, AwsCredential};
use object_store::client::{HttpConnector, HttpError, HttpErrorKind, HttpRequestBody, ReqwestConnector};
use object_store::path::{Path, PathPart};
use object_store::{BackoffConfig, ClientOptions, ObjectMeta, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, RetryConfig};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::unique::{unique_object_name, unique_suffix};

use crate::config::{Credentials, S3Config};

/// The runtime every S3 client of the process runs its requests on.
fn runtime() -> Result<&'static tokio::runtime::Runtime> {
    // The failure is kept (shared: every later call reports it) rather than retried.
    static RUNTIME: OnceLock<std::result::Result<tokio::runtime::Runtime, Arc<std::io::Error>>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("fieldstore-s3")
                .enable_all()
                .build()
                .map_err(Arc::new)
        })
        .as_ref()
        .map_err(|e| Error::caused_by(ErrorKind::Io, "S3: cannot start the client's runtime", e.clone()))
}

/// An object's bytes and entity tag.
pub type Fetched = (Bytes, Option<String>);

/// An S3 bucket at an endpoint, and the prefix this instance's objects are under.
#[derive(Clone)]
pub struct S3Client {
    store: Arc<AmazonS3>,
    bucket: Arc<str>,
    settings: Arc<Settings>,
}

/// How to reach the endpoint: what opening another bucket there needs.
struct Settings {
    /// The endpoint, for messages (a URL holds no credential: those are never in it).
    endpoint: String,
    region: String,
    path_style: bool,
    prefix: String,
    credentials: Credentials,
    options: ClientOptions,
    retry: RetryConfig,
}

/// `endpoint` if it is an `http://` or `https://` URL of a host and nothing else, else an
/// error naming what is wrong, before any client thread starts (`object_store` panics on some
/// URLs it cannot parse). A URL holding a user name or password is refused without echoing
/// it: credentials belong in their own keys, which are never printed.
fn checked_endpoint(endpoint: &str, section: &str) -> Result<String> {
    let message = |what: String| format!("{section} (type 's3'): endpoint {what}");
    let bad = |what: String| Err(Error::new(ErrorKind::BadConfig, message(what)));
    if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
        return bad(format!("{:?} is not an http:// or https:// URL", endpoint.split('@').next_back().unwrap_or_default()));
    }
    let url = match url::Url::parse(endpoint) {
        Ok(url) => url,
        // The URL's text is echoed only where it cannot hold a password.
        Err(e) if endpoint.contains('@') => return Err(Error::caused_by(ErrorKind::BadConfig, message("is not a URL".into()), e)),
        Err(e) => return Err(Error::caused_by(ErrorKind::BadConfig, message(format!("{endpoint:?} is not a URL")), e)),
    };
    if !url.username().is_empty() || url.password().is_some() {
        return bad("holds a user name or password: give access_key_id and secret_access_key instead".into());
    }
    if url.host_str().is_none_or(str::is_empty) || url.query().is_some() || url.fragment().is_some() {
        return bad(format!("{endpoint:?} must name a host and nothing else (scheme://host[:port][/path])"));
    }
    Ok(endpoint.to_string())
}

impl S3Client {
    /// A client of `bucket` at the section's endpoint, not checked (see [`S3Client::connect`]).
    pub fn unchecked(config: &S3Config, bucket: &str, section: &str) -> Result<S3Client> {
        let credentials = config.credentials(section)?;
        let endpoint = match &config.endpoint {
            Some(endpoint) => checked_endpoint(endpoint, section)?,
            None => format!("https://s3.{}.amazonaws.com", config.region),
        };
        let timeout = Duration::from_secs(config.timeout_seconds.get().into());
        let options = ClientOptions::new()
            .with_allow_http(endpoint.starts_with("http://"))
            .with_allow_invalid_certificates(!config.verify_tls)
            .with_connect_timeout(Duration::from_secs(config.connect_timeout_seconds.get().into()))
            .with_timeout(timeout);
        let settings = Settings {
            endpoint,
            region: config.region.clone(),
            path_style: config.path_style.unwrap_or(config.endpoint.is_some()),
            prefix: config.prefix.clone(),
            credentials,
            options,
            retry: RetryConfig { backoff: BackoffConfig::default(), max_retries: config.retries as usize, retry_timeout: timeout },
        };
        S3Client::for_bucket(Arc::new(settings), bucket)
    }

    /// A client of `bucket` at the section's endpoint; fails now, with a clear error, when the
    /// endpoint cannot be reached, refuses the credentials, or has no such bucket.
    pub fn connect(config: &S3Config, bucket: &str, section: &str) -> Result<S3Client> {
        let client = S3Client::unchecked(config, bucket, section)?;
        if let Some(missing) = client.missing_bucket()? {
            return Err(Error::caused_by(ErrorKind::NotFound, client.message("no such bucket (create it first)"), missing));
        }
        Ok(client)
    }

    /// A client of another bucket at the same endpoint, with the same settings (not checked).
    pub fn with_bucket(&self, bucket: &str) -> Result<S3Client> {
        S3Client::for_bucket(self.settings.clone(), bucket)
    }

    fn for_bucket(settings: Arc<Settings>, bucket: &str) -> Result<S3Client> {
        let credentials = &settings.credentials;
        let mut builder = AmazonS3Builder::new()
            .with_endpoint(&settings.endpoint)
            .with_region(&settings.region)
            .with_bucket_name(bucket)
            .with_access_key_id(&credentials.access_key_id)
            .with_secret_access_key(credentials.secret_access_key.expose())
            .with_virtual_hosted_style_request(!settings.path_style)
            .with_client_options(settings.options.clone())
            .with_retry(settings.retry.clone());
        if let Some(token) = &credentials.session_token {
            builder = builder.with_token(token.expose());
        }
        let store = builder
            .build()
            .map_err(|e| Error::caused_by(ErrorKind::BadConfig, format!("S3 bucket '{bucket}' at {}", settings.endpoint), e))?;
        Ok(S3Client { store: Arc::new(store), bucket: bucket.into(), settings })
    }

    /// Creates `bucket` at this client's endpoint unless this account has it already (signed
    /// by `object_store`'s own signer: its client has no call for it).
    pub fn create_bucket(&self, bucket: &str) -> Result<()> {
        let settings = &self.settings;
        let url = if settings.path_style {
            format!("{}/{bucket}", settings.endpoint.trim_end_matches('/'))
        } else {
            let (scheme, host) = settings.endpoint.split_once("://").unwrap_or(("https", &settings.endpoint));
            format!("{scheme}://{bucket}.{}", host.trim_end_matches('/'))
        };
        // Outside us-east-1, AWS wants the region in the body.
        let body = match settings.region.as_str() {
            "us-east-1" => String::new(),
            region => format!("<CreateBucketConfiguration><LocationConstraint>{region}</LocationConstraint></CreateBucketConfiguration>"),
        };
        let mut request = http::Request::builder()
            .method(http::Method::PUT)
            .uri(&url)
            .body(HttpRequestBody::from(body.into_bytes()))
            .map_err(|e| Error::caused_by(ErrorKind::BadConfig, format!("S3 bucket '{bucket}'"), e))?;
        let credential = AwsCredential {
            key_id: settings.credentials.access_key_id.clone(),
            secret_key: settings.credentials.secret_access_key.expose().to_string(),
            token: settings.credentials.session_token.as_ref().map(|t| t.expose().to_string()),
        };
        AwsAuthorizer::new(&credential, "s3", &settings.region).try_authorize(&mut request, None).map_err(|e| self.error(e))?;
        let http = ReqwestConnector::default().connect(&settings.options).map_err(|e| self.error(e))?;
        let status = self.run(async move {
            let response = http.execute(request).await.map_err(|e| object_store::Error::Generic { store: "S3", source: Box::new(e) })?;
            Ok(response.status())
        })?;
        // 409: BucketAlreadyOwnedByYou (or another's bucket: the next request says so).
        if status.is_success() || status == http::StatusCode::CONFLICT {
            return Ok(());
        }
        Err(Error::new(ErrorKind::Io, format!("S3 bucket '{bucket}' at {}: creating it answered HTTP {status}", settings.endpoint)))
    }

    /// Whether the bucket exists: a GET of a name nobody writes answers "no such key" if it
    /// does, "no such bucket" if not; anything else (unreachable, refused credentials) is the
    /// error.
    pub fn bucket_exists(&self) -> Result<bool> {
        Ok(self.missing_bucket()?.is_none())
    }

    /// The server's "no such bucket" if the bucket is missing ([`S3Client::bucket_exists`]).
    fn missing_bucket(&self) -> Result<Option<object_store::Error>> {
        let probe = self.path(&[".fieldstore-probe"]);
        let store = self.store.clone();
        self.run(async move {
            match store.get(&probe).await {
                Err(e) if is_no_such_bucket(&e) => Ok(Some(e)),
                Ok(_) | Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    /// Whether the server honours `If-None-Match: *` (the S3 catalogue's every guarantee
    /// rests on it): a probe object created twice must fail the second time. It is removed
    /// after. An error naming the server's failing when it does not.
    pub fn check_conditional_put(&self) -> Result<()> {
        let probe = self.path(&[&format!(".fieldstore-probe-{}", unique_object_name(&unique_suffix()))]);
        let store = self.store.clone();
        let created_twice = self.run(async move {
            let create = || PutOptions { mode: PutMode::Create, ..PutOptions::default() };
            store.put_opts(&probe, PutPayload::new(), create()).await?;
            let second = store.put_opts(&probe, PutPayload::new(), create()).await;
            store.delete(&probe).await?;
            match second {
                Ok(_) => Ok(true),
                Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
                Err(e) => Err(e),
            }
        })?;
        if created_twice {
            return Err(Error::new(
                ErrorKind::Unsupported,
                format!(
                    "S3 bucket '{}' at {}: the server ignores conditional PUTs (If-None-Match: *), on which the S3 catalogue's guarantees rest; use a server that honours them (AWS S3, Ceph's RADOS gateway, SeaweedFS, MinIO), or another catalogue with the S3 store",
                    self.bucket, self.settings.endpoint
                ),
            ));
        }
        Ok(())
    }

    /// The underlying client, for requests made by the store.
    pub fn store(&self) -> &Arc<AmazonS3> {
        &self.store
    }

    /// The bucket's name.
    pub fn bucket(&self) -> &str {
        &self.bucket
    }

    /// The object `parts` names under this instance's prefix; each part is one path segment,
    /// escaped by `object_store` (a `/` in a part cannot make another segment).
    pub fn path(&self, parts: &[&str]) -> Path {
        let prefix = self.settings.prefix.split('/').filter(|p| !p.is_empty()).map(PathPart::from);
        Path::from_iter(prefix.chain(parts.iter().map(|p| PathPart::from(*p))))
    }

    /// The names under `folder` (each object's last segment, as its text), in order; only
    /// those after `offset` if given.
    pub fn list(&self, folder: Path, offset: Option<Path>) -> Result<Vec<String>> {
        let mut names = self.list_meta(folder, offset)?.iter().map(|meta| self.name_of(&meta.location)).collect::<Result<Vec<_>>>()?;
        names.sort();
        Ok(names)
    }

    /// Every object under `folder`, at any depth (only those after `offset` if given), with
    /// its size and entity tag.
    pub fn list_meta(&self, folder: Path, offset: Option<Path>) -> Result<Vec<ObjectMeta>> {
        let store = self.store.clone();
        self.run(async move {
            let listing = match &offset {
                Some(offset) => store.list_with_offset(Some(&folder), offset),
                None => store.list(Some(&folder)),
            };
            listing.try_collect().await
        })
    }

    /// An object's last segment, as its text.
    pub fn name_of(&self, path: &Path) -> Result<String> {
        let part = path.parts().next_back().ok_or_else(|| Error::corrupt("object name", format!("s3 bucket {}", self.bucket), "empty"))?;
        // `object_store` escapes `%` in a segment, so decoding is unambiguous.
        let name = percent_encoding::percent_decode_str(part.as_ref()).decode_utf8().map_err(|e| {
            Error::corrupt_because("object name", format!("s3 bucket {}", self.bucket), format!("{:?} is not UTF-8", part.as_ref()), e)
        })?;
        Ok(name.into_owned())
    }

    /// Starts a GET of a whole object: its bytes and entity tag, `None` if there is none.
    pub fn start_get(&self, path: Path) -> Result<Pending<Option<Fetched>>> {
        let store = self.store.clone();
        self.spawn(async move {
            match store.get(&path).await {
                Ok(got) => {
                    let tag = got.meta.e_tag.clone();
                    got.bytes().await.map(|bytes| Some((bytes, tag)))
                }
                Err(object_store::Error::NotFound { .. }) => Ok(None),
                Err(e) => Err(e),
            }
        })
    }

    /// Removes an object; one already gone is no error (S3 answers such a DELETE with success).
    pub fn delete(&self, path: Path) -> Result<()> {
        let store = self.store.clone();
        self.run(async move { store.delete(&path).await })
    }

    /// Removes objects by bulk deletes (S3's DeleteObjects, up to 1,000 objects a request).
    pub fn delete_all(&self, paths: Vec<Path>) -> Result<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let store = self.store.clone();
        self.run(async move {
            let locations = futures::stream::iter(paths.into_iter().map(Ok)).boxed();
            store.delete_stream(locations).try_for_each(|_| async { Ok(()) }).await
        })
    }

    /// Runs `request` on the backend's runtime and waits for it; its error mapped (see
    /// [`S3Client::error`]).
    pub fn run<T, F>(&self, request: F) -> Result<T>
    where
        T: Send + 'static,
        F: Future<Output = object_store::Result<T>> + Send + 'static,
    {
        self.spawn(request)?.wait()
    }

    /// Starts `request` on the backend's runtime; [`Pending::wait`] gives its answer.
    pub fn spawn<T, F>(&self, request: F) -> Result<Pending<T>>
    where
        T: Send + 'static,
        F: Future<Output = object_store::Result<T>> + Send + 'static,
    {
        let (sender, receiver) = mpsc::sync_channel(1);
        runtime()?.spawn(async move {
            // The waiter may have gone (a writer discarding its writes): nobody to tell.
            let _ = sender.send(request.await);
        });
        Ok(Pending { receiver, answer: None, client: self.clone() })
    }

    /// A client error as fieldstore's, naming the bucket and endpoint, the client's error kept
    /// as its source. The kind comes from the error's variant, and where the variant says
    /// nothing (`Generic`: the request did not complete) from the transport's failure among its
    /// sources (`transport_failure`).
    pub fn error(&self, e: object_store::Error) -> Error {
        use object_store::Error as Client;
        let (kind, what) = match &e {
            Client::NotFound { .. } if is_no_such_bucket(&e) => (ErrorKind::NotFound, "no such bucket".into()),
            Client::NotFound { path, .. } => (ErrorKind::NotFound, format!("no object {path}")),
            Client::AlreadyExists { path, .. } => (ErrorKind::AlreadyExists, format!("object {path} exists already")),
            Client::Precondition { path, .. } => (ErrorKind::Conflict, format!("object {path} changed meanwhile")),
            Client::PermissionDenied { .. } | Client::Unauthenticated { .. } => {
                (ErrorKind::BadConfig, "the server refused the credentials or their permissions".into())
            }
            _ => match transport_failure(&e) {
                Some(ErrorKind::Timeout) => (ErrorKind::Timeout, "no answer in time".into()),
                Some(kind) => (kind, "cannot reach the endpoint".into()),
                None => (ErrorKind::Io, "the request failed".into()),
            },
        };
        Error::caused_by(kind, self.message(&what), e)
    }

    /// `what` went wrong with the bucket at the endpoint.
    fn message(&self, what: &str) -> String {
        format!("S3 bucket '{}' at {}: {what}", self.bucket, self.settings.endpoint)
    }
}

/// Whether a "not found" answer is S3's "no such bucket". S3 answers a missing bucket and a
/// missing object alike, with HTTP 404, and `object_store` keeps the answer's body in an error
/// type it does not export (`RetryError`), so no typed distinction is left: only the S3 error
/// code in the body, which that error's text holds. The narrowest check there is: that code's
/// element, in the source's text (never the path's, which callers choose); an answer without
/// a body (a HEAD's) reads as a missing object.
fn is_no_such_bucket(error: &object_store::Error) -> bool {
    matches!(error, object_store::Error::NotFound { source, .. } if source.to_string().contains("<Code>NoSuchBucket</Code>"))
}

/// The kind of a request's failure to complete, from the typed errors among `error`'s sources:
/// the HTTP connector's ([`HttpError`], whose kind `object_store` derives from `reqwest`'s and
/// `hyper`'s errors), else an I/O error's. `None` when no source says (the request completed
/// and its answer was refused, or failed before it was sent).
fn transport_failure(error: &(dyn std::error::Error + 'static)) -> Option<ErrorKind> {
    let mut next = Some(error);
    while let Some(cause) = next {
        if let Some(http) = cause.downcast_ref::<HttpError>() {
            match http.kind() {
                HttpErrorKind::Timeout => return Some(ErrorKind::Timeout),
                HttpErrorKind::Connect | HttpErrorKind::Request | HttpErrorKind::Interrupted => return Some(ErrorKind::Unavailable),
                // Decoding an answer, or unknown: an I/O error below may still say.
                _ => {}
            }
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>() {
            use std::io::ErrorKind as Io;
            match io.kind() {
                Io::TimedOut => return Some(ErrorKind::Timeout),
                Io::ConnectionRefused
                | Io::ConnectionReset
                | Io::ConnectionAborted
                | Io::NotConnected
                | Io::BrokenPipe
                | Io::UnexpectedEof
                | Io::HostUnreachable
                | Io::NetworkUnreachable
                | Io::AddrNotAvailable => return Some(ErrorKind::Unavailable),
                _ => {}
            }
        }
        next = cause.source();
    }
    None
}

/// A request in flight ([`S3Client::spawn`]).
pub struct Pending<T> {
    receiver: mpsc::Receiver<object_store::Result<T>>,
    /// The answer, once [`Pending::is_done`] found it.
    answer: Option<object_store::Result<T>>,
    client: S3Client,
}

impl<T> Pending<T> {
    /// Waits for the answer.
    pub fn wait(mut self) -> Result<T> {
        let answer = match self.answer.take() {
            Some(answer) => Ok(answer),
            None => self.receiver.recv(),
        };
        match answer {
            Ok(answer) => answer.map_err(|e| self.client.error(e)),
            Err(e) => {
                Err(Error::caused_by(ErrorKind::Io, format!("S3 bucket '{}': a request ended without an answer", self.client.bucket), e))
            }
        }
    }

    /// Whether the answer is in (without waiting).
    pub fn is_done(&mut self) -> bool {
        if self.answer.is_none() {
            match self.receiver.try_recv() {
                Ok(answer) => self.answer = Some(answer),
                Err(mpsc::TryRecvError::Empty) => return false,
                Err(mpsc::TryRecvError::Disconnected) => return true,
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind as Io;

    fn client() -> S3Client {
        let config: S3Config =
            serde_yaml::from_str("{endpoint: 'http://127.0.0.1:9', bucket: b, access_key_id: k, secret_access_key: s}").unwrap();
        S3Client::unchecked(&config, "b", "test").unwrap()
    }

    fn generic(cause: impl std::error::Error + Send + Sync + 'static) -> object_store::Error {
        object_store::Error::Generic { store: "S3", source: Box::new(cause) }
    }

    fn not_found(path: &str, says: &str) -> object_store::Error {
        object_store::Error::NotFound { path: path.into(), source: says.into() }
    }

    /// Each error's text says what the text matching this replaced would have misread.
    #[test]
    fn kinds_come_from_the_client_s_typed_errors_which_stay_the_source() {
        let client = client();
        for (error, kind, says) in [
            (generic(HttpError::new(HttpErrorKind::Connect, std::io::Error::other("no answer"))), ErrorKind::Unavailable, "cannot reach"),
            (generic(HttpError::new(HttpErrorKind::Timeout, std::io::Error::other("connect"))), ErrorKind::Timeout, "no answer in time"),
            (generic(HttpError::new(HttpErrorKind::Decode, std::io::Error::other("timed out"))), ErrorKind::Io, "the request failed"),
            (generic(std::io::Error::from(Io::ConnectionRefused)), ErrorKind::Unavailable, "cannot reach"),
            (generic(std::io::Error::from(Io::TimedOut)), ErrorKind::Timeout, "no answer in time"),
            (not_found("NoSuchBucket/x", "404 Not Found"), ErrorKind::NotFound, "no object NoSuchBucket/x"),
            (not_found("x", "404 Not Found: <Error><Code>NoSuchBucket</Code></Error>"), ErrorKind::NotFound, "no such bucket"),
        ] {
            let error = client.error(error);
            assert_eq!(error.kind(), kind, "{}", error.report());
            assert!(error.to_string().contains(says), "{error}");
            let source = std::error::Error::source(&error);
            assert!(source.is_some_and(|s| s.is::<object_store::Error>()), "the client's error is the source: {error:?}");
        }
    }
}
