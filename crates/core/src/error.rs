//! The one error type of fieldstore. Every variant names the culprit (file, line, keyword,
//! value, data set) so that the CLI can print a single clear message, and has a kind
//! ([`ErrorKind`]) that callers decide on: a Python exception class, a C return code, a retry.

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

    /// Anything else, with its kind and a message naming the culprit.
    #[error("{message}")]
    Other { kind: ErrorKind, message: String },

    /// An operating-system error, with the path it concerns. The OS message is part of the
    /// text, so it is not also exposed as a source: printers would show it twice.
    #[error("{action} {path}: {cause}")]
    Io { action: &'static str, path: PathBuf, cause: std::io::Error },
}

/// What kind of failure an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// A request, key, value or input the caller gave cannot be used as it is.
    BadRequest,
    /// A configuration or schema cannot be used as it is.
    BadConfig,
    /// What was asked for is not there (a data set, a container, a store).
    NotFound,
    /// What was to be created is there already.
    AlreadyExists,
    /// The action is locked on a data set.
    Locked,
    /// Stored data failed a check: damaged, or not what this fieldstore writes.
    Corrupt,
    /// The operating system or a storage library failed.
    Io,
    /// A backend did not answer in time.
    Timeout,
    /// A backend cannot be reached or loaded (no cluster, no library).
    Unavailable,
    /// Valid, but not something fieldstore does (yet).
    Unsupported,
    /// Another party changed the data meanwhile (a data set wiped under a writer).
    Conflict,
}

impl Error {
    /// An error of `kind` with a message naming the culprit.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error::Other { kind, message: message.into() }
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::SchemaSyntax { .. } | Error::Config { .. } => ErrorKind::BadConfig,
            Error::RequestSyntax { .. }
            | Error::BadValue { .. }
            | Error::TooManyValues { .. }
            | Error::NoRule { .. }
            | Error::Grib { .. } => ErrorKind::BadRequest,
            Error::Locked { .. } => ErrorKind::Locked,
            Error::Corrupt { .. } => ErrorKind::Corrupt,
            Error::Wiped { .. } => ErrorKind::Conflict,
            Error::Other { kind, .. } => *kind,
            Error::Io { cause, .. } => match cause.kind() {
                std::io::ErrorKind::NotFound => ErrorKind::NotFound,
                std::io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
                std::io::ErrorKind::TimedOut => ErrorKind::Timeout,
                std::io::ErrorKind::Unsupported => ErrorKind::Unsupported,
                _ => ErrorKind::Io,
            },
        }
    }

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_has_a_kind() {
        let missing = Error::io("open", "/x", std::io::Error::from(std::io::ErrorKind::NotFound));
        assert_eq!(missing.kind(), ErrorKind::NotFound);
        assert_eq!(Error::io("write", "/x", std::io::Error::other("disk full")).kind(), ErrorKind::Io);
        assert_eq!(Error::Wiped { dataset: "d".into() }.kind(), ErrorKind::Conflict);
        assert_eq!(Error::bad_value("step", "x", "not a step").kind(), ErrorKind::BadRequest);
        assert_eq!(Error::Config { source_name: "c".into(), message: "m".into() }.kind(), ErrorKind::BadConfig);
        let other = Error::new(ErrorKind::Timeout, "no answer from the cluster");
        assert_eq!((other.kind(), other.to_string().as_str()), (ErrorKind::Timeout, "no answer from the cluster"));
        assert_eq!(serde_json::to_string(&ErrorKind::AlreadyExists).unwrap(), "\"already_exists\"");
    }
}
