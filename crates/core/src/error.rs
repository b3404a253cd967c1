//! The one error type of fieldstore. Every variant names the culprit (file, line, keyword,
//! value, data set) so that the CLI can print a single clear message.

use std::path::PathBuf;

/// Result alias used throughout fieldstore.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A schema file could not be parsed.
    #[error("schema {source_name}:{line}:{column}: {message}")]
    SchemaSyntax { source_name: String, line: usize, column: usize, message: String },

    /// A MARS request could not be parsed.
    #[error("request {context}: {message}")]
    RequestSyntax { context: String, message: String },

    /// A key value is not acceptable for its keyword's type or for storage.
    #[error("bad value {value:?} for keyword '{keyword}': {reason}")]
    BadValue { keyword: String, value: String, reason: String },

    /// A request names more values for a keyword than any request may (whatever the types
    /// that read them).
    #[error("the request names {count} values or more for keyword '{keyword}': at most {limit} may be named")]
    TooManyValues { keyword: String, count: usize, limit: usize },

    /// No schema rule accepts this identifier on archive.
    #[error("no schema rule matches {identifier}: {reason}")]
    NoRule { identifier: String, reason: String },

    /// A configuration file is invalid.
    #[error("config {source_name}: {message}")]
    Config { source_name: String, message: String },

    /// An action is locked on a data set (see `control`).
    #[error("data set {dataset} is locked for {action}")]
    Locked { dataset: String, action: String },

    /// Stored data failed a check (checksum, framing, truncation).
    #[error("corrupt {what} in {path}: {reason}")]
    Corrupt { what: String, path: PathBuf, reason: String },

    /// A GRIB message could not be read or has no usable MARS metadata.
    #[error("GRIB {context}: {message}")]
    Grib { context: String, message: String },

    /// A data set was wiped while this handle archived into it: what it archived since its
    /// last flush went with it (the handle's next archive creates the data set again).
    #[error("data set {dataset} was wiped while this flush published its fields: they went with it")]
    Wiped { dataset: String },

    /// The caller asked for something that does not exist or cannot be done.
    #[error("{0}")]
    Invalid(String),

    /// An operating-system error, with the path it concerns. The OS message is part of the
    /// text, so it is not also exposed as a source: printers would show it twice.
    #[error("{action} {path}: {cause}")]
    Io { action: &'static str, path: PathBuf, cause: std::io::Error },
}

impl Error {
    /// Wraps an I/O error with the action and path it concerns.
    pub fn io(action: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { action, path: path.into(), cause: source }
    }

    /// Whether this is the file system refusing a write: no permission, or mounted read-only.
    pub fn is_write_refused(&self) -> bool {
        matches!(self, Error::Io { cause, .. }
            if matches!(cause.kind(), std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem))
    }

    pub fn bad_value(keyword: &str, value: &str, reason: impl Into<String>) -> Self {
        Error::BadValue { keyword: keyword.to_string(), value: value.to_string(), reason: reason.into() }
    }

    pub fn corrupt(what: impl Into<String>, path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Corrupt { what: what.into(), path: path.into(), reason: reason.into() }
    }
}

/// Adds path context to `std::io::Result`s.
pub trait IoContext<T> {
    fn ctx(self, action: &'static str, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn ctx(self, action: &'static str, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|e| Error::io(action, path, e))
    }
}
