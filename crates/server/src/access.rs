//! Who may do what: identities known by the SHA-256 of their bearer token (the token itself
//! is never kept, logged or printed), each allowed per [`Permission`] on request patterns.
//!
//! ```yaml
//! identities:
//!   - name: operations
//!     token_sha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//!     allow:
//!       read: ["class=od", "class=rd"]
//!       archive: ["class=rd,expver=x*"]
//!       wipe: ["class=rd,expver=x*"]
//! ```
//!
//! A pattern is `keyword=glob[/glob...]` pairs (`*` matches any characters); `*` alone
//! allows everything. A request is allowed by a pattern when it names every keyword of the
//! pattern, each value matching one of its globs (`all` and ranges only where the glob is
//! `*`); a data set or field key when its values match likewise. One pattern allowing is
//! enough.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use sha2::{Digest, Sha256};

use fieldstore_core::api::{Permission, Scope};
use fieldstore_core::request::{ValueItem, Values};
use fieldstore_core::{Error, ErrorKind, Key, Request, Result};

/// The identities a server knows, or none: every caller allowed everything (a server started
/// so says it loudly).
pub enum Access {
    /// Every caller may do everything.
    Open,
    /// Callers present a token of one of these.
    Tokens(Vec<Identity>),
}

/// One identity of the access file.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Identity {
    /// Its name, in logs and errors.
    pub name: String,
    /// The SHA-256 of its token, in hex (`fieldstore token` makes both).
    #[serde(default)]
    pub token_sha256: Option<String>,
    /// The SHA-256 of the client certificate it presents (mutual TLS, `--client-ca`), in hex:
    /// `openssl x509 -in client.pem -outform DER | sha256sum`.
    #[serde(default)]
    pub certificate_sha256: Option<String>,
    /// Its patterns per permission.
    #[serde(default)]
    pub allow: BTreeMap<Permission, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AccessFile {
    identities: Vec<Identity>,
}

/// The hex SHA-256 of a token, as the access file keeps it.
pub fn token_hash(token: &str) -> String {
    sha256_hex(token.as_bytes())
}

/// The SHA-256 of `bytes`, in hex: how the access file names tokens and client certificates.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// `bytes` in lower-case hex.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Access {
    /// Reads an access file; every pattern is checked.
    pub fn load(path: &Path) -> Result<Access> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| Error::io("read the access file", path, e))?;
        let file: AccessFile = serde_yaml::from_str(&text).map_err(|e| Error::config_because(&source, "cannot read the access file", e))?;
        let mut names = std::collections::BTreeSet::new();
        for identity in &file.identities {
            if identity.name.trim().is_empty() || !names.insert(identity.name.as_str()) {
                return Err(Error::config(&source, format!("identity '{}': each identity needs a name of its own", identity.name)));
            }
            let hashes = [("token_sha256", &identity.token_sha256), ("certificate_sha256", &identity.certificate_sha256)];
            if hashes.iter().all(|(_, hash)| hash.is_none()) {
                return Err(Error::config(&source, format!("identity '{}': needs token_sha256 or certificate_sha256", identity.name)));
            }
            for (name, hash) in hashes {
                if hash.as_ref().is_some_and(|hash| hash.len() != 64 || !hash.bytes().all(|b| b.is_ascii_hexdigit())) {
                    return Err(Error::config(&source, format!("identity '{}': {name} is not 64 hex digits", identity.name)));
                }
            }
            for pattern in identity.allow.values().flatten() {
                Pattern::parse(pattern)
                    .map_err(|e| Error::config_because(&source, format!("identity '{}': pattern '{pattern}'", identity.name), e))?;
            }
        }
        Ok(Access::Tokens(file.identities))
    }

    /// Refuses patterns naming keywords of the schema's element level (`step`, `param`, ...):
    /// a caller allowed a data set's collocation reads the files that hold it, so permissions
    /// stop at the collocation level.
    pub fn check_against(&self, schema: &fieldstore_core::Schema) -> Result<()> {
        let Access::Tokens(identities) = self else { return Ok(()) };
        let element: std::collections::BTreeSet<&str> =
            schema.paths().flat_map(|path| path.levels[2].predicates.iter().map(|p| p.keyword.as_str())).collect();
        for identity in identities {
            for pattern in identity.allow.values().flatten() {
                for (keyword, _) in Pattern::parse(pattern)?.keywords {
                    if element.contains(keyword.as_str()) {
                        let message = format!(
                            "identity '{}': pattern '{pattern}' names '{keyword}', a keyword of the schema's fields: permissions name data sets and collocations",
                            identity.name
                        );
                        return Err(Error::new(ErrorKind::BadConfig, message));
                    }
                }
            }
        }
        Ok(())
    }

    /// The place of `identity` among this access's identities (to find it again on another
    /// thread).
    pub fn position(&self, identity: &Identity) -> Option<usize> {
        match self {
            Access::Tokens(identities) => identities.iter().position(|i| std::ptr::eq(i, identity)),
            Access::Open => None,
        }
    }

    /// The identity at `position` ([`Access::position`]).
    pub fn identity(&self, position: usize) -> Option<&Identity> {
        match self {
            Access::Tokens(identities) => identities.get(position),
            Access::Open => None,
        }
    }

    /// The identity a caller is: the one of its bearer token (`Authorization: Bearer`), else
    /// the one of the client certificate its connection presented (its SHA-256, in hex);
    /// `None` for an open server.
    pub fn identify(&self, token: Option<&str>, certificate: Option<&str>) -> Result<Option<&Identity>> {
        let Access::Tokens(identities) = self else { return Ok(None) };
        let find = |hash: &str, of: fn(&Identity) -> Option<&String>| {
            identities.iter().find(|i| of(i).is_some_and(|known| constant_time_eq(known.to_ascii_lowercase().as_bytes(), hash.as_bytes())))
        };
        match (token, certificate) {
            (Some(token), _) => find(&token_hash(token), |i| i.token_sha256.as_ref())
                .map(Some)
                .ok_or_else(|| Error::new(ErrorKind::Denied, "unknown token")),
            (None, Some(certificate)) => find(&certificate.to_ascii_lowercase(), |i| i.certificate_sha256.as_ref())
                .map(Some)
                .ok_or_else(|| Error::new(ErrorKind::Denied, "unknown client certificate: no identity has its SHA-256")),
            (None, None) => Err(Error::new(
                ErrorKind::Denied,
                "no bearer token: this server knows its callers by their tokens (or their client certificates)",
            )),
        }
    }
}

/// Compares without stopping at the first difference, so the time says nothing of a hash or
/// a signature.
pub(crate) fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Identity {
    /// Whether it may read the whole store (then it is told what is stored when nothing
    /// matched).
    pub fn reads_everything(&self) -> bool {
        self.allow.get(&Permission::Read).is_some_and(|patterns| patterns.iter().any(|p| p.trim() == "*"))
    }

    /// Whether this identity may do `permission` on `scope`; an error saying what it may not.
    pub fn check(&self, permission: Permission, scope: &Scope<'_>) -> Result<()> {
        let patterns = self.allow.get(&permission).map(Vec::as_slice).unwrap_or_default();
        let allowed = match scope {
            Scope::Nothing => true,
            Scope::Store => patterns.iter().any(|p| p.trim() == "*"),
            Scope::Request(text) => {
                let request = Request::parse(text)?;
                patterns.iter().any(|p| Pattern::parse(p).is_ok_and(|p| p.allows_request(&request)))
            }
            Scope::Datasets(keys) => keys.iter().all(|key| self.allows_key(permission, key)),
        };
        if allowed {
            return Ok(());
        }
        let what = match scope {
            Scope::Store | Scope::Nothing => "the store itself".to_string(),
            Scope::Request(text) => format!("'{text}'"),
            Scope::Datasets(keys) => keys.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(" and "),
        };
        let may = match patterns {
            [] => "nothing".to_string(),
            patterns => patterns.join(" or "),
        };
        let permission = serde_json::to_value(permission).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
        Err(Error::new(ErrorKind::Denied, format!("identity '{}' may not {permission} {what}: it may {permission} {may}", self.name)))
    }

    /// Whether the identity has any pattern of `permission` (may do it anywhere at all).
    pub fn may(&self, permission: Permission) -> bool {
        self.allow.get(&permission).is_some_and(|patterns| !patterns.is_empty())
    }

    /// Whether a data set's or field's key is within one of the patterns of `permission`.
    pub fn allows_key(&self, permission: Permission, key: &Key) -> bool {
        let patterns = self.allow.get(&permission).map(Vec::as_slice).unwrap_or_default();
        patterns.iter().any(|p| Pattern::parse(p).is_ok_and(|p| p.allows_key(key)))
    }
}

/// A parsed pattern: each keyword's globs; none at all for `*`.
struct Pattern {
    keywords: Vec<(String, Vec<String>)>,
}

impl Pattern {
    fn parse(text: &str) -> Result<Pattern> {
        if text.trim() == "*" {
            return Ok(Pattern { keywords: Vec::new() });
        }
        let mut keywords = Vec::new();
        for pair in text.split(',') {
            let Some((keyword, globs)) = pair.split_once('=') else {
                return Err(Error::new(ErrorKind::BadConfig, format!("'{pair}' is not keyword=glob")));
            };
            let globs: Vec<String> = globs.split('/').map(|g| g.trim().to_string()).collect();
            if globs.iter().any(String::is_empty) {
                return Err(Error::new(ErrorKind::BadConfig, format!("'{pair}' has an empty glob")));
            }
            keywords.push((keyword.trim().to_ascii_lowercase(), globs));
        }
        Ok(Pattern { keywords })
    }

    fn allows_request(&self, request: &Request) -> bool {
        self.keywords.iter().all(|(keyword, globs)| match request.get(keyword) {
            None => false,
            Some(Values::All) => globs.iter().any(|g| g == "*"),
            Some(Values::List(items)) => items.iter().all(|item| match item {
                ValueItem::Single(value) => globs.iter().any(|g| glob_matches(g, value)),
                ValueItem::Range { .. } => globs.iter().any(|g| g == "*"),
            }),
        })
    }

    fn allows_key(&self, key: &Key) -> bool {
        self.keywords.iter().all(|(keyword, globs)| key.get(keyword).is_some_and(|value| globs.iter().any(|g| glob_matches(g, value))))
    }
}

/// Whether `value` matches `glob`, whose `*` match any characters (none included).
fn glob_matches(glob: &str, value: &str) -> bool {
    let mut parts = glob.split('*');
    let first = parts.next().unwrap_or_default();
    let Some(mut rest) = value.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else { return rest.is_empty() };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(allow: &[(Permission, &[&str])]) -> Identity {
        let allow = allow.iter().map(|(p, v)| (*p, v.iter().map(|s| s.to_string()).collect())).collect();
        let certificate = Some("ab".repeat(32));
        Identity { name: "ops".into(), token_sha256: Some(token_hash("secret")), certificate_sha256: certificate, allow }
    }

    #[test]
    fn globs_match_as_written() {
        for (glob, value, expected) in [
            ("x*", "x001", true),
            ("x*", "0001", false),
            ("*", "", true),
            ("od", "od", true),
            ("od", "odd", false),
            ("a*c", "abc", true),
            ("a*c", "ab", false),
            ("*1", "0001", true),
            ("a*b*c", "aXbYc", true),
            ("ab*b", "ab", false),
        ] {
            assert_eq!(glob_matches(glob, value), expected, "{glob} against {value}");
        }
    }

    #[test]
    fn requests_are_allowed_only_within_a_pattern() {
        let ops = identity(&[(Permission::Read, &["class=od", "class=rd,expver=x*"]), (Permission::Wipe, &["class=rd,expver=x*"])]);
        let read = |r: &str| ops.check(Permission::Read, &Scope::Request(r));
        assert!(read("class=od,expver=0001,step=1").is_ok());
        assert!(read("class=rd,expver=x001/x002").is_ok());
        assert!(read("class=rd,expver=0001").is_err());
        assert!(read("expver=x001").is_err(), "a request must name the pattern's keywords");
        assert!(read("class=all").is_err());
        assert!(read("class=od/rd,expver=x1").is_err(), "one pattern must allow the whole request");
        let error = ops.check(Permission::Wipe, &Scope::Request("class=od")).unwrap_err();
        assert_eq!(error.kind(), ErrorKind::Denied);
        assert!(error.to_string().contains("identity 'ops' may not wipe 'class=od'"), "{error}");
        assert!(ops.check(Permission::Archive, &Scope::Request("class=rd,expver=x1")).is_err(), "no archive pattern");
        assert!(ops.check(Permission::Admin, &Scope::Store).is_err());
        let key = Key::parse("class=rd,expver=x9,stream=oper").unwrap();
        assert!(ops.allows_key(Permission::Wipe, &key));
        assert!(!ops.allows_key(Permission::Wipe, &Key::parse("class=od,expver=x9").unwrap()));
    }

    #[test]
    fn tokens_are_known_by_their_hash() {
        let access = Access::Tokens(vec![identity(&[])]);
        assert_eq!(access.identify(Some("secret"), None).unwrap().unwrap().name, "ops");
        assert_eq!(access.identify(Some("guess"), None).unwrap_err().kind(), ErrorKind::Denied);
        assert_eq!(access.identify(None, None).unwrap_err().kind(), ErrorKind::Denied);
        assert!(Access::Open.identify(None, None).unwrap().is_none());
        // A client certificate identifies where no token is given; a token wins over it.
        assert_eq!(access.identify(None, Some(&"AB".repeat(32))).unwrap().unwrap().name, "ops");
        assert!(access.identify(None, Some(&"cd".repeat(32))).unwrap_err().to_string().contains("unknown client certificate"));
        assert_eq!(access.identify(Some("guess"), Some(&"ab".repeat(32))).unwrap_err().kind(), ErrorKind::Denied);
    }
}
