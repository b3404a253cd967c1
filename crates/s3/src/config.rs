//! The `type: s3` sections of a config ([`S3CatalogueConfig`], [`S3StoreConfig`]) and where
//! credentials come from: a leaf, which the crate root's factory opens backends from.
//!
//! ```yaml
//! store:
//!   type: s3
//!   endpoint: "http://127.0.0.1:7480"   # none: AWS itself, by region
//!   region: us-east-1
//!   bucket: fields                      # one bucket; each data set under a prefix of its own
//!   create_bucket: false                # true: create the bucket if missing (with `bucket`)
//!   # bucket_prefix: fdb-                 # or: a bucket per data set (fdb-<md5 of its key>)
//!   prefix: run1/                       # starts every object name (instances sharing a bucket)
//!   path_style: true                    # default: true with an endpoint, false on AWS
//!   verify_tls: true
//!   connect_timeout_seconds: 5
//!   timeout_seconds: 30
//!   retries: 3
//!   writes_in_flight: 8
//!   reads_in_flight: 8
//!   pack: false                         # true: a writer's fields of a collocation between two
//!                                       # flushes in one object (many small fields)
//! ```
//!
//! Credentials: `access_key_id` and `secret_access_key` (and `session_token`) in the section,
//! else the section's `profile` of the AWS credentials file, else the standard
//! `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` (and `AWS_SESSION_TOKEN`) variables, else the
//! profile `$AWS_PROFILE` (or `default`) of the credentials file. A secret is never printed:
//! not in errors, logs, or `Debug` output.

use std::fmt;
use std::num::{NonZeroU32, NonZeroUsize};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_core::factory::Section;
use fieldstore_core::window::InFlight;

/// An S3 section's keys: where the endpoint is, how to reach it and where data sets go there,
/// as a catalogue and a store share them, and the store's own keys (private: read through
/// [`S3StoreConfig`], refused by [`S3CatalogueConfig`]). One type for both sections, so that an
/// unknown key's error names the key and lists every key (serde's `flatten`, which would split
/// it, loses both).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3Config {
    /// The server's URL (`http://` or `https://`); none: AWS, by `region`.
    #[serde(default)]
    pub endpoint: Option<String>,
    /// The region requests are signed for (servers other than AWS mostly accept any).
    #[serde(default = "default_region")]
    pub region: String,
    /// One bucket (it must exist) holding every data set, each under a prefix of its own.
    #[serde(default)]
    pub bucket: Option<String>,
    /// With `bucket`: create it when it is missing (the credentials need `s3:CreateBucket`)
    /// rather than fail with "no such bucket". `bucket_prefix` creates its buckets anyway.
    #[serde(default)]
    pub create_bucket: bool,
    /// Instead of `bucket`: a bucket per data set, named this prefix and the MD5 of the data
    /// set's key (created as needed), and `PREFIXdatasets` holding the catalogue's list; for
    /// clouds that limit objects or requests per bucket. At most 31 characters of AWS's bucket
    /// names: lowercase letters, digits, `-` and `.`.
    #[serde(default)]
    pub bucket_prefix: Option<String>,
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
    /// A profile of the AWS credentials file to take the credentials from.
    #[serde(default)]
    pub profile: Option<String>,
    /// Writes a store writer keeps in flight (stores only).
    #[serde(default)]
    writes_in_flight: Option<NonZeroUsize>,
    /// Objects a retrieve keeps in flight (stores only).
    #[serde(default)]
    reads_in_flight: Option<NonZeroUsize>,
    /// A writer's fields of one collocation between two flushes go into one object, PUT at the
    /// flush (or before it would pass 16 MiB), instead of an object each (stores only).
    #[serde(default)]
    pack: bool,
}

/// An S3 catalogue's section: the endpoint and buckets ([`S3Config`]); a store's keys are
/// refused, each by name.
#[derive(Clone, Debug)]
pub struct S3CatalogueConfig {
    /// The endpoint, its credentials and buckets.
    pub s3: S3Config,
}

/// An S3 store's section: the endpoint and buckets ([`S3Config`]), the requests kept in
/// flight, and whether a writer packs its fields.
#[derive(Clone, Debug)]
pub struct S3StoreConfig {
    /// The endpoint, its credentials and buckets.
    pub s3: S3Config,
    /// The writes a writer and the reads a retrieve keep in flight.
    pub in_flight: InFlight,
    /// Whether a writer's fields of one collocation between two flushes go into one object.
    pub pack: bool,
}

impl S3CatalogueConfig {
    /// The catalogue's section, checked.
    pub fn from_section(section: &Section<'_>) -> Result<S3CatalogueConfig> {
        let s3: S3Config = section.typed()?;
        fieldstore_core::window::refuse_in_catalogue(
            section,
            "s3",
            s3.writes_in_flight.map(NonZeroUsize::get),
            s3.reads_in_flight.map(NonZeroUsize::get),
        )?;
        if s3.pack {
            return Err(section.error(format!(
                "{}.pack (type 's3'): 'pack' packs a store's fields; a catalogue has none (put it in the store section)",
                section.name
            )));
        }
        Ok(S3CatalogueConfig { s3 })
    }
}

impl S3StoreConfig {
    /// The store's section, checked.
    pub fn from_section(section: &Section<'_>) -> Result<S3StoreConfig> {
        let s3: S3Config = section.typed()?;
        let in_flight = InFlight::new(s3.writes_in_flight.map(NonZeroUsize::get), s3.reads_in_flight.map(NonZeroUsize::get));
        Ok(S3StoreConfig { in_flight, pack: s3.pack, s3 })
    }
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
            bucket: Some(bucket.into()),
            create_bucket: false,
            bucket_prefix: None,
            prefix: prefix.into(),
            path_style: None,
            verify_tls: true,
            connect_timeout_seconds: default_connect_timeout(),
            timeout_seconds: default_timeout(),
            retries: default_retries(),
            access_key_id: None,
            secret_access_key: None,
            session_token: None,
            profile: None,
            writes_in_flight: None,
            reads_in_flight: None,
            pack: false,
        }
    }

    /// The credentials, from the first place that has them: the section's keys, the profile
    /// the section names, the standard AWS variables, the profile `$AWS_PROFILE` names (else
    /// `default`); an error naming every place when none has them. Profiles are read from
    /// `$AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/credentials`.
    pub fn credentials(&self, section: &str) -> Result<Credentials> {
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let bad = |what: String| Error::new(ErrorKind::BadConfig, format!("{section} (type 's3'): {what}"));
        match (&self.access_key_id, &self.secret_access_key) {
            (Some(id), Some(secret)) => {
                return Ok(Credentials {
                    access_key_id: id.clone(),
                    secret_access_key: secret.clone(),
                    session_token: self.session_token.clone(),
                })
            }
            (None, None) => {}
            _ => return Err(bad("give both access_key_id and secret_access_key, or neither".into())),
        }
        let file = env("AWS_SHARED_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .or_else(|| env("HOME").map(|home| PathBuf::from(home).join(".aws/credentials")));
        if let Some(profile) = &self.profile {
            let file =
                file.ok_or_else(|| bad(format!("profile '{profile}': no credentials file (set AWS_SHARED_CREDENTIALS_FILE or HOME)")))?;
            return from_profile(&file, profile)?.ok_or_else(|| {
                bad(format!("profile '{profile}' is not in {} (or lacks aws_access_key_id or aws_secret_access_key)", file.display()))
            });
        }
        if let (Some(access_key_id), Some(secret)) = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY")) {
            return Ok(Credentials {
                access_key_id,
                secret_access_key: Secret(secret),
                session_token: env("AWS_SESSION_TOKEN").map(Secret),
            });
        }
        let profile = env("AWS_PROFILE").unwrap_or_else(|| "default".into());
        if let Some(credentials) = file.as_deref().filter(|f| f.exists()).map(|f| from_profile(f, &profile)).transpose()?.flatten() {
            return Ok(credentials);
        }
        Err(bad(format!(
            "no credentials: set access_key_id and secret_access_key, or profile, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or put profile '{profile}' in {}",
            file.map_or_else(|| "~/.aws/credentials".into(), |f| f.display().to_string())
        )))
    }
}

/// A profile's credentials in an AWS credentials file; `None` if it has no such profile or
/// the profile lacks a key.
fn from_profile(file: &Path, profile: &str) -> Result<Option<Credentials>> {
    let ini = ini::Ini::load_from_file(file)
        .map_err(|e| Error::caused_by(ErrorKind::BadConfig, format!("AWS credentials file {}", file.display()), e))?;
    let Some(keys) = ini.section(Some(profile)) else { return Ok(None) };
    Ok(match (keys.get("aws_access_key_id"), keys.get("aws_secret_access_key")) {
        (Some(id), Some(secret)) => Some(Credentials {
            access_key_id: id.to_string(),
            secret_access_key: Secret(secret.to_string()),
            session_token: keys.get("aws_session_token").map(|t| Secret(t.to_string())),
        }),
        _ => None,
    })
}

/// Where a section keeps its data sets.
#[derive(Clone, Debug)]
pub enum Layout {
    /// One bucket, a prefix per data set.
    OneBucket(String),
    /// A bucket per data set, named from this prefix.
    BucketPerDataset(String),
}

impl S3Config {
    /// The section's layout: exactly one of `bucket` and `bucket_prefix`, the latter with
    /// room for the MD5 in a bucket name.
    pub fn layout(&self, section: &str) -> Result<Layout> {
        let bad = |what: String| Error::new(ErrorKind::BadConfig, format!("{section} (type 's3'): {what}"));
        match (&self.bucket, &self.bucket_prefix) {
            (Some(bucket), None) if !bucket.is_empty() => Ok(Layout::OneBucket(bucket.clone())),
            (None, Some(_)) if self.create_bucket => {
                Err(bad("create_bucket applies to bucket; bucket_prefix creates its buckets itself (leave create_bucket out)".into()))
            }
            (None, Some(prefix)) => {
                let valid = prefix.len() <= 31
                    && prefix.bytes().next().is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
                    && prefix.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.');
                if !valid {
                    return Err(bad(format!(
                        "bucket_prefix {prefix:?}: use at most 31 lowercase letters, digits, '-' and '.', starting with a letter or digit (a bucket name is the prefix and 32 hex digits)"
                    )));
                }
                Ok(Layout::BucketPerDataset(prefix.clone()))
            }
            (Some(_), Some(_)) => Err(bad("give bucket (one bucket) or bucket_prefix (a bucket per data set), not both".into())),
            _ => Err(bad("name the bucket: bucket (one bucket) or bucket_prefix (a bucket per data set)".into())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fieldstore_core::config::Config;

    /// Both sections of `s3` with `catalogue`'s and `store`'s keys added.
    fn parsed(catalogue: &str, store: &str) -> Config {
        Config::parse("t.yaml", &format!("catalogue: {{type: s3, bucket: b{catalogue}}}\nstore: {{type: s3, bucket: b{store}}}\n")).unwrap()
    }

    #[test]
    fn a_store_section_takes_the_store_s_keys_and_a_catalogue_section_refuses_them_by_name() {
        let config = parsed("", ", writes_in_flight: 3, reads_in_flight: 5, pack: true");
        let store = S3StoreConfig::from_section(&Section { name: "store", config: &config.store, source: "t.yaml" }).unwrap();
        assert_eq!((store.in_flight.writes, store.in_flight.reads, store.pack, store.s3.bucket.as_deref()), (3, 5, true, Some("b")));
        let catalogue = S3CatalogueConfig::from_section(&Section { name: "catalogue", config: &config.catalogue, source: "t.yaml" });
        assert_eq!(catalogue.unwrap().s3.bucket.as_deref(), Some("b"));
        for (key, says) in [
            ("reads_in_flight: 2", "catalogue.reads_in_flight (type 's3'): only a store keeps operations in flight"),
            ("pack: true", "catalogue.pack (type 's3'): 'pack' packs a store's fields"),
        ] {
            let config = parsed(&format!(", {key}"), "");
            let section = Section { name: "catalogue", config: &config.catalogue, source: "t.yaml" };
            let refused = S3CatalogueConfig::from_section(&section).unwrap_err().report().to_string();
            assert!(refused.contains(says), "{refused}");
        }
    }

    #[test]
    fn an_unknown_key_is_named_with_every_key_of_the_section() {
        let config = parsed("", ", writes_in_flite: 3");
        let unknown = S3StoreConfig::from_section(&Section { name: "store", config: &config.store, source: "t.yaml" });
        let unknown = unknown.unwrap_err().report().to_string();
        assert!(
            unknown.contains("store.writes_in_flite (type 's3'): unknown field `writes_in_flite`, expected one of `endpoint`"),
            "{unknown}"
        );
        assert!(unknown.contains("`writes_in_flight`"), "{unknown}");
    }
}
