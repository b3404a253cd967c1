//! The one error type of fieldstore. Every variant names the culprit (file, line, keyword,
//! value, data set) so that the CLI can print a single clear message, and has a kind
//! ([`ErrorKind`]) that callers decide on: a Python exception class, a C return code, a retry.
//!
//! An error built from another keeps it as its [`source`](std::error::Error::source), and
//! its own message does not repeat it (the Rust convention: a printer that walks the chain
//! would show it twice). [`Error::report`] prints the whole chain on one line, `a: b: c`, as
//! the CLI, Python and C show it.
//!
//! Callers decide on [`Error::kind`], never on a variant: the variants name what fieldstore
//! itself detects, and a backend reports its own failures with any of them, mostly
//! [`Error::Other`]. Both enums are `#[non_exhaustive]`: new ones may come.

use std::path::PathBuf;

/// Result alias used throughout fieldstore.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The cause an error keeps: any error that may cross threads.
pub type Cause = Box<dyn std::error::Error + Send + Sync + 'static>;

/// A fieldstore failure, naming its culprit; [`Error::kind`] says what kind of failure it is.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A schema file could not be parsed.
    #[error("schema {source_name}:{line}:{column}: {message}")]
    SchemaSyntax {
        /// The schema's file path, or another name for where its text came from.
        source_name: String,
        /// The line of the fault, counted from 1.
        line: usize,
        /// The column of the fault in characters, counted from 1.
        column: usize,
        /// What is wrong there.
        message: String,
    },

    /// A MARS request could not be parsed.
    #[error("request {context}: {message}")]
    RequestSyntax {
        /// The request, item or key text at fault, as written.
        context: String,
        /// What is wrong with it.
        message: String,
    },

    /// A key value is not acceptable for its keyword's type or for storage.
    #[error("bad value {value:?} for keyword '{keyword}': {reason}")]
    BadValue {
        /// The keyword the value was given for.
        keyword: String,
        /// The value as given.
        value: String,
        /// Why it is refused.
        reason: String,
    },

    /// A request names more values for a keyword than any request may (whatever the types
    /// that read them).
    #[error("the request names {count} values or more for keyword '{keyword}': at most {limit} may be named")]
    TooManyValues {
        /// The keyword with too many values.
        keyword: String,
        /// How many values had been counted when the limit was passed: the request names at least as many.
        count: usize,
        /// The most values one keyword of a request may name.
        limit: usize,
    },

    /// No schema rule accepts this identifier on archive.
    #[error("no schema rule matches {identifier}: {reason}")]
    NoRule {
        /// The field's identifier (its key) as text.
        identifier: String,
        /// Why the closest rule does not accept it.
        reason: String,
    },

    /// A configuration file is invalid.
    #[error("config {source_name}: {message}")]
    Config {
        /// The configuration file's path, or where the text came from (e.g. `$FDB5_CONFIG`).
        source_name: String,
        /// What is wrong with it.
        message: String,
        /// The failure that showed it, where another error did (a YAML parser's, a file read's).
        #[source]
        cause: Option<Cause>,
    },

    /// An action is locked on a data set (see `control`).
    #[error("data set {dataset} is locked for {action}")]
    Locked {
        /// The locked data set's key as text.
        dataset: String,
        /// The action that is locked, e.g. `archive`.
        action: String,
    },

    /// Stored data failed a check (checksum, framing, truncation).
    #[error("corrupt {what} in {path}: {reason}")]
    Corrupt {
        /// What failed the check, e.g. `index file` or `log record`.
        what: String,
        /// Where it is stored: a file path, or a description of an object or container.
        path: PathBuf,
        /// What the check found.
        reason: String,
        /// The failure that showed it, where another error did (a decoder's, a reader's).
        #[source]
        cause: Option<Cause>,
    },

    /// A GRIB message could not be read or has no usable MARS metadata.
    #[error("GRIB {context}: {message}")]
    Grib {
        /// Which message or GRIB action it concerns, e.g. a file and message number.
        context: String,
        /// What went wrong, as ecCodes or fieldstore reports it.
        message: String,
    },

    /// A data set was wiped while this handle archived into it: what it archived since its
    /// last flush went with it (the handle's next archive creates the data set again).
    #[error("data set {dataset} was wiped while this flush published its fields: they went with it")]
    Wiped {
        /// The wiped data set's key as text.
        dataset: String,
    },

    /// A failure handed out more than once: a reader answers every call after a failed read
    /// with the error it stopped at. Reads as the error it shares.
    #[error(transparent)]
    Shared(std::sync::Arc<Error>),

    /// Anything else, with its kind and a message naming the culprit.
    #[error("{message}")]
    Other {
        /// What kind of failure it is.
        kind: ErrorKind,
        /// The message naming the culprit; the cause's own message follows it in a report.
        message: String,
        /// The failure this one comes from, if another error is its cause.
        #[source]
        cause: Option<Cause>,
    },

    /// An operating-system error, with the path it concerns (the OS message is its source).
    #[error("{action} {path}")]
    Io {
        /// What was being done, e.g. `open` or `write`.
        action: &'static str,
        /// The path the action concerned.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        cause: std::io::Error,
    },
}

/// What kind of failure an error is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
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
    /// The caller is not known, or may not do this (a server's authentication and
    /// authorisation).
    Denied,
}

impl Error {
    /// An error of `kind` with a message naming the culprit, detected here (no other error
    /// caused it: for one that did, [`Error::caused_by`]).
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error::Other { kind, message: message.into(), cause: None }
    }

    /// An error of `kind` that `cause` led to: `message` names the culprit, and `cause` stays
    /// its [`source`](std::error::Error::source), whose text a report prints after it.
    pub fn caused_by(kind: ErrorKind, message: impl Into<String>, cause: impl Into<Cause>) -> Self {
        Error::Other { kind, message: message.into(), cause: Some(cause.into()) }
    }

    /// The whole chain on one line, each cause after its effect: `a: b: c`. What users see
    /// (the CLI's message, a Python exception's, `fdb_error_string`'s).
    pub fn report(&self) -> Report<'_> {
        Report(self)
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
            Error::Shared(error) => error.kind(),
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

    /// Whether an operating-system error somewhere in the chain is the file system refusing a
    /// write: no permission, or mounted read-only.
    pub fn is_write_refused(&self) -> bool {
        self.os_error_kind()
            .is_some_and(|kind| matches!(kind, std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem))
    }

    /// Whether the chain says a data set was wiped under a writer ([`Error::Wiped`]): the
    /// one failure of a catalogue's flush after which its pending entries are gone (a
    /// [`ErrorKind::Conflict`] of another cause, such as a server's "changed meanwhile",
    /// leaves them pending).
    pub fn is_wiped(&self) -> bool {
        chain(self).any(|error| match error.downcast_ref::<Error>() {
            Some(Error::Wiped { .. }) => true,
            Some(Error::Shared(shared)) => shared.is_wiped(),
            _ => false,
        })
    }

    /// The kind of the first operating-system error in the chain, if one is there.
    fn os_error_kind(&self) -> Option<std::io::ErrorKind> {
        chain(self).find_map(|error| error.downcast_ref::<std::io::Error>()).map(std::io::Error::kind)
    }

    /// A [`Error::BadValue`]: `value` is not acceptable for `keyword`, for `reason`.
    pub fn bad_value(keyword: &str, value: &str, reason: impl Into<String>) -> Self {
        Error::BadValue { keyword: keyword.to_string(), value: value.to_string(), reason: reason.into() }
    }

    /// A [`Error::Config`]: the config from `source_name` cannot be used, for `message`.
    pub fn config(source_name: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config { source_name: source_name.into(), message: message.into(), cause: None }
    }

    /// A [`Error::Config`] that another error (`cause`, a parser's or a file read's) showed.
    pub fn config_because(source_name: impl Into<String>, message: impl Into<String>, cause: impl Into<Cause>) -> Self {
        Error::Config { source_name: source_name.into(), message: message.into(), cause: Some(cause.into()) }
    }

    /// A [`Error::Corrupt`]: `what`, stored at `path`, failed a check for `reason`.
    pub fn corrupt(what: impl Into<String>, path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Corrupt { what: what.into(), path: path.into(), reason: reason.into(), cause: None }
    }

    /// A [`Error::Corrupt`] that another error (`cause`, a decoder's or reader's) showed.
    pub fn corrupt_because(what: impl Into<String>, path: impl Into<PathBuf>, reason: impl Into<String>, cause: impl Into<Cause>) -> Self {
        Error::Corrupt { what: what.into(), path: path.into(), reason: reason.into(), cause: Some(cause.into()) }
    }
}

/// `error` and its causes, each after its effect.
fn chain<'a>(error: &'a (dyn std::error::Error + 'static)) -> impl Iterator<Item = &'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |error| error.source())
}

/// An error and its causes on one line, `a: b: c` (see [`Error::report`]).
#[derive(Clone, Copy, Debug)]
pub struct Report<'a>(&'a (dyn std::error::Error + 'static));

impl<'a> Report<'a> {
    /// The report of any error, fieldstore's or another's.
    pub fn of(error: &'a (dyn std::error::Error + 'static)) -> Self {
        Report(error)
    }
}

impl std::fmt::Display for Report<'_> {
    /// Each cause after a `: `, on one line (a cause's line breaks, such as a server's XML
    /// reply, become spaces). A cause whose text the line already ends with is left out:
    /// some libraries' errors print their own source as well as return it (`object_store`'s
    /// do), and the user would read it twice.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut line = self.0.to_string();
        let mut next = self.0.source();
        while let Some(cause) = next {
            let text = one_line(&cause.to_string());
            if !line.ends_with(&text) {
                line.push_str(": ");
                line.push_str(&text);
            }
            next = cause.source();
        }
        f.write_str(&line)
    }
}

/// `text` with its line breaks, and the blanks around them, made one space.
fn one_line(text: &str) -> String {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
}

/// Adds path context to `std::io::Result`s.
pub trait IoContext<T> {
    /// Turns an I/O error into an [`Error::Io`] naming `action` and `path`.
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
        assert_eq!(Error::config("c", "m").kind(), ErrorKind::BadConfig);
        let other = Error::new(ErrorKind::Timeout, "no answer from the cluster");
        assert_eq!((other.kind(), other.to_string().as_str()), (ErrorKind::Timeout, "no answer from the cluster"));
        assert_eq!(serde_json::to_string(&ErrorKind::AlreadyExists).unwrap(), "\"already_exists\"");
    }

    #[test]
    fn an_error_keeps_its_cause_and_a_report_prints_the_chain() {
        use std::error::Error as _;
        let io = Error::io("open", "/x", std::io::Error::from(std::io::ErrorKind::PermissionDenied));
        assert_eq!(io.to_string(), "open /x");
        assert!(io.source().is_some_and(|s| s.is::<std::io::Error>()));
        assert_eq!(io.report().to_string(), "open /x: permission denied");
        let wrapped = Error::caused_by(ErrorKind::Unavailable, "store 'a'", io);
        assert_eq!(wrapped.report().to_string(), "store 'a': open /x: permission denied");
        assert_eq!(wrapped.kind(), ErrorKind::Unavailable);
        assert!(wrapped.is_write_refused(), "the OS error is found anywhere in the chain");
        let corrupt = Error::corrupt_because("index", "/i", "unreadable", std::io::Error::other("short read"));
        assert_eq!(corrupt.report().to_string(), "corrupt index in /i: unreadable: short read");
        assert!(!Error::new(ErrorKind::Io, "x").is_write_refused());
    }

    #[test]
    fn only_a_wipe_in_the_chain_is_a_wipe() {
        let wiped = || Error::Wiped { dataset: "d".into() };
        assert!(wiped().is_wiped());
        assert!(Error::caused_by(ErrorKind::Conflict, "flush", wiped()).is_wiped());
        assert!(Error::Shared(std::sync::Arc::new(wiped())).is_wiped());
        assert!(!Error::new(ErrorKind::Conflict, "changed meanwhile").is_wiped(), "a conflict of another cause");
    }

    /// An error that prints its source as well as returning it, as `object_store`'s do.
    #[derive(Debug)]
    struct Echoing(std::io::Error);

    impl std::fmt::Display for Echoing {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "request failed: {}", self.0)
        }
    }

    impl std::error::Error for Echoing {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_report_is_one_line_and_names_each_cause_once() {
        let reply = std::io::Error::other("<Error>\n  <Code>AccessDenied</Code>\n</Error>");
        let error = Error::caused_by(ErrorKind::Io, "S3 bucket 'b'", Echoing(reply));
        assert_eq!(error.report().to_string(), "S3 bucket 'b': request failed: <Error> <Code>AccessDenied</Code> </Error>");
    }
}
