//! The object API of the field-io and ior benchmarks on S3: pool = a bucket (and a prefix),
//! container = a folder, key-value = a folder with one object per key, array = a folder of
//! segments, one object per write.
//!
//! ```text
//! PREFIX/CONTAINER/.container              marks the container as created
//! PREFIX/CONTAINER/kv/NAME/KEY             one key's value
//! PREFIX/CONTAINER/array/NAME/OFFSET       the bytes one write wrote at OFFSET (20 digits)
//! ```
//!
//! S3 objects cannot be changed in part, so an array keeps each write as an object of its own
//! (what the benchmarks do: ior writes each transfer once, field-io each field whole at 0); a
//! handle lists the segments when opened and a read fetches the ranges of those it overlaps.
//! Writes at the same offset replace one another; writes that overlap others are not meant
//! for this form (the later offset's bytes are read where they overlap).

use object_store::path::Path;
use object_store::{ObjectStoreExt, PutPayload};

use fieldstore_core::error::{Error, ErrorKind, Result};
use fieldstore_objects::{Array, Container, KeyValue, Pool};

use crate::client::S3Client;

/// The object marking a container as created (no key or name escapes to it: names are
/// escaped segments of their own folders).
const CONTAINER_MARKER: &str = ".container";

/// The benchmarks' object pool in an S3 bucket: containers are folders under its prefix.
pub struct S3Pool {
    client: S3Client,
}

impl S3Pool {
    /// A pool in `client`'s bucket, under its prefix.
    pub fn new(client: S3Client) -> Self {
        S3Pool { client }
    }
}

impl Pool for S3Pool {
    fn container(&self, name: &str, create: bool) -> Result<Box<dyn Container>> {
        let container = S3Container { client: self.client.clone(), name: name.to_string() };
        let marker = container.path(&[CONTAINER_MARKER]);
        let store = self.client.store().clone();
        if create {
            // A PUT is idempotent, so racing creators end with the same container.
            self.client.run(async move { store.put(&marker, PutPayload::new()).await.map(drop) })?;
        } else if !self.client.run(async move { exists(&store, &marker).await })? {
            return Err(Error::new(ErrorKind::NotFound, format!("container {name:?} does not exist (s3 bucket {})", self.client.bucket())));
        }
        Ok(Box::new(container))
    }

    fn remove_container(&self, name: &str) -> Result<()> {
        let container = S3Container { client: self.client.clone(), name: name.to_string() };
        // The marker goes last, so an interrupted removal leaves a container that can be
        // removed again.
        for folder in ["kv", "array"] {
            let objects = self.client.list_meta(container.path(&[folder]), None)?;
            self.client.delete_all(objects.into_iter().map(|meta| meta.location).collect())?;
        }
        self.client.delete(container.path(&[CONTAINER_MARKER]))
    }
}

/// Whether an object exists.
async fn exists(store: &object_store::aws::AmazonS3, path: &Path) -> object_store::Result<bool> {
    match store.head(path).await {
        Ok(_) => Ok(true),
        Err(object_store::Error::NotFound { .. }) => Ok(false),
        Err(e) => Err(e),
    }
}

struct S3Container {
    client: S3Client,
    name: String,
}

impl S3Container {
    fn path(&self, parts: &[&str]) -> Path {
        let mut all = vec![self.name.as_str()];
        all.extend_from_slice(parts);
        self.client.path(&all)
    }
}

impl Container for S3Container {
    fn kv(&self, name: &str) -> Result<Box<dyn KeyValue>> {
        Ok(Box::new(S3KeyValue { client: self.client.clone(), folder: self.path(&["kv", name]) }))
    }

    fn array(&self, name: &str, create: bool) -> Result<Box<dyn Array>> {
        let folder = self.path(&["array", name]);
        let segments = segments(&self.client, &folder)?;
        if !create && segments.is_empty() {
            return Err(Error::new(
                ErrorKind::NotFound,
                format!("array {name:?} does not exist (s3 bucket {} {folder}/)", self.client.bucket()),
            ));
        }
        Ok(Box::new(S3Array { client: self.client.clone(), folder, segments }))
    }
}

struct S3KeyValue {
    client: S3Client,
    folder: Path,
}

impl S3KeyValue {
    fn key_path(&self, key: &str) -> Path {
        self.folder.clone().join(key)
    }
}

impl KeyValue for S3KeyValue {
    fn put(&mut self, key: &str, value: &[u8]) -> Result<()> {
        let (store, path, payload) = (self.client.store().clone(), self.key_path(key), PutPayload::from(value.to_vec()));
        self.client.run(async move { store.put(&path, payload).await.map(drop) })
    }

    fn get(&self, key: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.client.start_get(self.key_path(key))?.wait()?.map(|(bytes, _)| bytes.to_vec()))
    }

    fn keys(&self) -> Result<Vec<String>> {
        self.client.list(self.folder.clone(), None)
    }
}

/// One write of an array: where it starts and how long it is.
#[derive(Clone, Copy, Debug)]
struct Segment {
    offset: u64,
    length: u64,
}

/// The segments under an array's folder, by offset.
fn segments(client: &S3Client, folder: &Path) -> Result<Vec<Segment>> {
    let mut segments = client
        .list_meta(folder.clone(), None)?
        .iter()
        .map(|meta| {
            let name = client.name_of(&meta.location)?;
            let offset =
                name.parse::<u64>().map_err(|e| Error::corrupt_because("array segment", format!("{folder}/{name}"), "not an offset", e))?;
            Ok(Segment { offset, length: meta.size })
        })
        .collect::<Result<Vec<_>>>()?;
    segments.sort_by_key(|s| s.offset);
    Ok(segments)
}

struct S3Array {
    client: S3Client,
    folder: Path,
    /// The segments known to this handle, by offset: listed when it was opened, and its own
    /// writes since.
    segments: Vec<Segment>,
}

impl S3Array {
    fn segment_path(&self, offset: u64) -> Path {
        self.folder.clone().join(format!("{offset:020}"))
    }
}

impl Array for S3Array {
    fn write(&mut self, offset: u64, data: &[u8]) -> Result<()> {
        let (store, path, payload) = (self.client.store().clone(), self.segment_path(offset), PutPayload::from(data.to_vec()));
        self.client.run(async move { store.put(&path, payload).await.map(drop) })?;
        let segment = Segment { offset, length: data.len() as u64 };
        match self.segments.binary_search_by_key(&offset, |s| s.offset) {
            Ok(i) => self.segments[i] = segment,
            Err(i) => self.segments.insert(i, segment),
        }
        Ok(())
    }

    /// Fetches, all at once, the part of each segment the range overlaps.
    fn read(&self, offset: u64, buf: &mut [u8]) -> Result<()> {
        let end = offset.checked_add(buf.len() as u64).ok_or_else(|| Error::new(ErrorKind::BadRequest, "read range overflows"))?;
        if end > self.size()? {
            return Err(Error::new(
                ErrorKind::BadRequest,
                format!("array {}: reading {offset}..{end} is past its end ({})", self.folder, self.size()?),
            ));
        }
        let mut parts = Vec::new();
        for segment in self.segments.iter().filter(|s| s.offset < end && s.offset + s.length > offset) {
            let (from, to) = (offset.max(segment.offset), end.min(segment.offset + segment.length));
            let (store, path) = (self.client.store().clone(), self.segment_path(segment.offset));
            let range = from - segment.offset..to - segment.offset;
            parts.push((from, self.client.spawn(async move { store.get_range(&path, range).await })?));
        }
        for (from, part) in parts {
            let bytes = part.wait()?;
            let at = (from - offset) as usize;
            buf.get_mut(at..at + bytes.len())
                .ok_or_else(|| Error::corrupt("array segment", self.folder.to_string(), "longer than listed"))?
                .copy_from_slice(&bytes);
        }
        Ok(())
    }

    fn size(&self) -> Result<u64> {
        Ok(self.segments.iter().map(|s| s.offset + s.length).max().unwrap_or(0))
    }
}
