//! Where a data set's objects are ([`Layout`]): under a prefix of their own in one bucket
//! (`bucket`), or in a bucket of their own (`bucket_prefix`: `PREFIX` and the MD5 of the data
//! set's key, created when first written; the catalogue's list in `PREFIXdatasets`).
//!
//! ```text
//! bucket:         BUCKET/INSTANCE/DATASET/...        BUCKET/INSTANCE/datasets/DATASET
//! bucket_prefix:  PREFIX<md5>/INSTANCE/...           PREFIXdatasets/INSTANCE/datasets/DATASET
//! ```
//!
//! INSTANCE is the section's `prefix` (often empty). Every other object name is the same in
//! both: a catalogue or store names its objects relative to a data set's [`Place`].

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use object_store::path::Path;

use fieldstore_core::error::Result;
use fieldstore_core::unique::{is_object_name, unique_object_name};
use fieldstore_core::Key;

use crate::client::S3Client;
use crate::config::{Layout, S3Config};

/// The buckets of a section.
pub struct Buckets {
    layout: Layout,
    /// The client of the one bucket, or of the bucket holding the list of data sets.
    home: S3Client,
    /// Clients of data sets' buckets, by bucket (one per bucket per handle).
    clients: Mutex<HashMap<String, S3Client>>,
    /// Buckets this handle created or found (so each is created once).
    ensured: Mutex<HashSet<String>>,
}

/// Where one data set's objects are: a bucket, and the path they start with.
#[derive(Clone)]
pub struct Place {
    /// The bucket's client.
    pub client: S3Client,
    /// The data set's segment in a shared bucket; none in a bucket of its own.
    dataset: Option<String>,
}

impl Place {
    /// The object `parts` name in the data set's place.
    pub fn path(&self, parts: &[&str]) -> Path {
        let mut all: Vec<&str> = self.dataset.iter().map(String::as_str).collect();
        all.extend_from_slice(parts);
        self.client.path(&all)
    }

    /// The place for messages: `s3 bucket B prefix P/`.
    pub fn describe(&self) -> String {
        format!("s3 bucket {} prefix {}/", self.client.bucket(), self.path(&[]))
    }
}

impl Buckets {
    /// The section's buckets: the one bucket (created if missing with `create_bucket`), or the
    /// home bucket of the list (created if missing); fails now, with a clear error, when the
    /// endpoint cannot be reached, refuses the credentials, or (one bucket, not
    /// `create_bucket`) has no such bucket.
    pub fn connect(config: &S3Config, section: &str) -> Result<Buckets> {
        let layout = config.layout(section)?;
        let home = match &layout {
            Layout::OneBucket(bucket) if config.create_bucket => created_if_missing(config, bucket, section)?,
            Layout::OneBucket(bucket) => S3Client::connect(config, bucket, section)?,
            Layout::BucketPerDataset(prefix) => created_if_missing(config, &format!("{prefix}datasets"), section)?,
        };
        Ok(Buckets { layout, home, clients: Mutex::new(HashMap::new()), ensured: Mutex::new(HashSet::new()) })
    }

    /// The client of the bucket holding the list of data sets (the one bucket, or the home).
    pub fn home(&self) -> &S3Client {
        &self.home
    }

    /// The data set's place; its bucket created first if `create` and missing. `None`: the
    /// data set's bucket does not exist (and not `create`).
    pub fn place(&self, dataset: &Key, create: bool) -> Result<Option<Place>> {
        match &self.layout {
            Layout::OneBucket(_) => Ok(Some(Place { client: self.home.clone(), dataset: Some(dataset.to_string()) })),
            Layout::BucketPerDataset(prefix) => {
                let bucket = dataset_bucket(prefix, dataset);
                let client = self.client(&bucket)?;
                if create {
                    self.ensure(&client, &bucket)?;
                } else if !self.ensured_already(&bucket) && !client.bucket_exists()? {
                    return Ok(None);
                }
                Ok(Some(Place { client, dataset: None }))
            }
        }
    }

    /// The client of a bucket this section's layout may name: the one bucket, or a data set's
    /// bucket; `None` for any other bucket.
    pub fn bucket(&self, bucket: &str) -> Result<Option<S3Client>> {
        match &self.layout {
            Layout::OneBucket(one) => Ok((one == bucket).then(|| self.home.clone())),
            Layout::BucketPerDataset(prefix) => match bucket.strip_prefix(prefix.as_str()) {
                Some(md5) if is_object_name(md5) => self.client(bucket).map(Some),
                _ => Ok(None),
            },
        }
    }

    /// Where a data set's objects are, for humans (without asking the server).
    pub fn describe(&self, dataset: &Key) -> String {
        match &self.layout {
            Layout::OneBucket(bucket) => format!("s3 bucket {bucket} prefix {}/", self.home.path(&[&dataset.to_string()])),
            Layout::BucketPerDataset(prefix) => format!("s3 bucket {} prefix {}/", dataset_bucket(prefix, dataset), self.home.path(&[])),
        }
    }

    /// Whether a data set's objects are in a bucket shared with others (their names then
    /// carry the data set's segment).
    pub fn shares_buckets(&self) -> bool {
        matches!(self.layout, Layout::OneBucket(_))
    }

    fn client(&self, bucket: &str) -> Result<S3Client> {
        let mut clients = self.clients.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(client) = clients.get(bucket) {
            return Ok(client.clone());
        }
        let client = self.home.with_bucket(bucket)?;
        clients.insert(bucket.to_string(), client.clone());
        Ok(client)
    }

    fn ensured_already(&self, bucket: &str) -> bool {
        self.ensured.lock().unwrap_or_else(|p| p.into_inner()).contains(bucket)
    }

    fn ensure(&self, client: &S3Client, bucket: &str) -> Result<()> {
        if self.ensured_already(bucket) {
            return Ok(());
        }
        if !client.bucket_exists()? {
            client.create_bucket(bucket)?;
        }
        self.ensured.lock().unwrap_or_else(|p| p.into_inner()).insert(bucket.to_string());
        Ok(())
    }
}

/// The client of `bucket`, which it creates first if the server has no such bucket.
fn created_if_missing(config: &S3Config, bucket: &str, section: &str) -> Result<S3Client> {
    // Whether the bucket is there checks the endpoint and the credentials too.
    let client = S3Client::unchecked(config, bucket, section)?;
    if !client.bucket_exists()? {
        client.create_bucket(bucket)?;
    }
    Ok(client)
}

/// The bucket a data set gets under `prefix` (`bucket_prefix`).
pub fn dataset_bucket(prefix: &str, dataset: &Key) -> String {
    format!("{prefix}{}", unique_object_name(&dataset.to_string()))
}
