//! The `type: s3` sections of a config, where credentials come from, and the backend's
//! [`FACTORY`].
//!
//! ```yaml
//! store:
//!   type: s3
//!   endpoint: "http://127.0.0.1:7480"   # none: AWS itself, by region
//!   region: us-east-1
//!   bucket: fields                      # one bucket; each data set under a prefix of its own
//!   prefix: run1/                       # starts every object name (instances sharing a bucket)
//!   path_style: true                    # default: true with an endpoint, false on AWS
//!   verify_tls: true
//!   connect_timeout_seconds: 5
//!   timeout_seconds: 30
//!   retries: 3
//!   writes_in_flight: 8
//!   reads_in_flight: 8
//! ```
//!
//! Credentials: `access_key_id` and `secret_access_key` (and `session_token`) in the section,
//! else the standard `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`)
//! variables. A secret is never printed: not in errors, logs, or `Debug` output.

use std::fmt;
use std::num::{NonZeroU32, NonZeroUsize};

use serde::Deserialize;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::factory::{Factory, Section};
use fieldstore_core::{Catalogue, Store};

use crate::client::S3Client;
use crate::store::S3Store;
use fieldstore_core::window::InFlight;

/// An S3 section.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    /// The server's URL (`http://` or `https://`); none: AWS, by `region`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The region requests are signed for (servers other than AWS mostly accept any).
    #[serde(default = "default_region")]
    pub region: String,
    /// The bucket (it must exist): each data set's objects under a prefix of their own.
    pub bucket: String,
    /// Starts every object name, so several instances can share a bucket.
    #[serde(default)]
    pub prefix: String,
    /// Path-style addressing (`endpoint/bucket/key`) rather than virtual hosts
    /// (`bucket.endpoint/key`); default: path style with an `endpoint`, virtual hosts on AWS.
    #[serde(default)]
    pub path_style: Option<bool>,
    /// Whether a TLS server's certificate is checked (turn off only for a test server).
    #[serde(default = "yes")]
    pub verify_tls: bool,
    /// Limit for opening a connection.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout_seconds: NonZeroU32,
    /// Limit for one request.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: NonZeroU32,
    /// Retries of a request that failed for a reason that may pass (a dropped connection, a
    /// server's 5xx), within the request's time limit.
    #[serde(default = "default_retries")]
    pub retries: u32,
    /// The access key id (else `$AWS_ACCESS_KEY_ID`).
    #[serde(default)]
    pub access_key_id: Option<String>,
    /// The secret access key (else `$AWS_SECRET_ACCESS_KEY`).
    #[serde(default)]
    pub secret_access_key: Option<Secret>,
    /// A session token of temporary credentials (else `$AWS_SESSION_TOKEN`).
    #[serde(default)]
    pub session_token: Option<Secret>,
    /// Writes a store writer keeps in flight (stores only).
    #[serde(default)]
    pub writes_in_flight: Option<NonZeroUsize>,
    /// Objects a retrieve keeps in flight (stores only).
    #[serde(default)]
    pub reads_in_flight: Option<NonZeroUsize>,
}

/// A credential that is never shown.
#[derive(Clone, Deserialize)]
#[serde(transparent)]
pub struct Secret(String);

impl Secret {
    /// The secret itself, for signing requests.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(secret)")
    }
}

/// The credentials requests are signed with.
#[derive(Clone, Debug)]
pub struct Credentials {
    /// The access key id (not secret: servers name it in their logs).
    pub access_key_id: String,
    /// The secret access key.
    pub secret_access_key: Secret,
    /// A session token, for temporary credentials.
    pub session_token: Option<Secret>,
}

fn default_region() -> String {
    "us-east-1".into()
}

fn yes() -> bool {
    true
}

fn default_connect_timeout() -> NonZeroU32 {
    NonZeroU32::new(5).expect("not 0")
}

fn default_timeout() -> NonZeroU32 {
    NonZeroU32::new(30).expect("not 0")
}

fn default_retries() -> u32 {
    3
}

impl S3Config {
    /// A section for `bucket` under `prefix`, with every other key at its default and the
    /// endpoint from `$AWS_ENDPOINT_URL` (AWS without it), the region from `$AWS_REGION`
    /// (`us-east-1` without it): what the benchmarks' object pools (`s3:BUCKET/PREFIX`) use.
    pub fn from_environment(bucket: &str, prefix: &str) -> S3Config {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        S3Config {
            endpoint: env("AWS_ENDPOINT_URL"),
            region: env("AWS_REGION").unwrap_or_else(default_region),
            bucket: bucket.into(),
            prefix: prefix.into(),
            path_style: None,
            verify_tls: true,
            connect_timeout_seconds: default_connect_timeout(),
            timeout_seconds: default_timeout(),
            retries: default_retries(),
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            writes_in_flight: None,
            reads_in_flight: None,
        }
    }

    /// The credentials: the section's, else the standard AWS variables; an error naming both
    /// places when neither has them.
    pub fn credentials(&self, section: &str) -> Result<Credentials> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let from_config = match (&self.access_key_id, &self.secret_access_key) {
            (Some(id), Some(secret)) => Some((id.clone(), secret.clone(), self.session_token.clone())),
            (None, None) => None,
            _ => {
                return Err(Error::new(
                    ErrorKind::BadConfig,
                    format!("{section} (type 's3'): give both access_key_id and secret_access_key, or neither"),
                ))
            }
        };
        let from_env = || match (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            (Some(id), Some(secret)) => Some((id, Secret(secret), env("AWS_SESSION_TOKEN").map(Secret))),
            _ => None,
        };
        let (access_key_id, secret_access_key, session_token) = from_config.or_else(from_env).ok_or_else(|| {
            Error::new(
                ErrorKind::BadConfig,
                format!("{section} (type 's3'): no credentials: set access_key_id and secret_access_key, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"),
            )
        })?;
        Ok(Credentials { access_key_id, secret_access_key, session_token })
    }
}

/// The S3 catalogue and store, for the facade's list of backends.
pub const FACTORY: Factory = Factory { name: "s3", catalogue: Some(open_catalogue), store: Some(open_store) };

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    let config: S3Config = section.typed()?;
    fieldstore_core::window::refuse_in_catalogue(
        section,
        "s3",
        config.writes_in_flight.map(NonZeroUsize::get),
        config.reads_in_flight.map(NonZeroUsize::get),
    )?;
    let client = S3Client::connect(&config, section.name)?;
    client.check_conditional_put()?;
    Ok(Box::new(crate::catalogue::open(client)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    let config: S3Config = section.typed()?;
    let limits = InFlight::new(config.writes_in_flight.map(NonZeroUsize::get), config.reads_in_flight.map(NonZeroUsize::get));
    let client = S3Client::connect(&config, section.name)?;
    Ok(Box::new(S3Store::new(client, limits)))
}
