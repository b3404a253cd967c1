//! The `type: remote` section of a config.

use std::path::PathBuf;

use serde::Deserialize;

use fieldstore_core::{Error, ErrorKind, Result};

/// The environment variable a token may come from, where the config names none.
pub const TOKEN_VARIABLE: &str = "FIELDSTORE_TOKEN";

/// How to reach a server: the `catalogue:` and `store:` sections of a remote config, both
/// `type: remote` with the same endpoint.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RemoteConfig {
    /// `https://host:port` (or `http://`, a server without TLS).
    pub endpoint: String,
    /// A file holding the bearer token (its first line); else `$FIELDSTORE_TOKEN`; else none.
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// PEM certificates to trust besides the system's (a site's own CA, a self-signed server).
    #[serde(default)]
    pub ca: Option<PathBuf>,
    /// A PEM certificate to present (mutual TLS), with `client_key`.
    #[serde(default)]
    pub client_certificate: Option<PathBuf>,
    /// The PEM private key of `client_certificate`.
    #[serde(default)]
    pub client_key: Option<PathBuf>,
    /// Seconds to wait for a connection.
    #[serde(default = "default_connect_timeout")]
    pub connect_timeout: f64,
    /// Seconds to wait for the server's next bytes before a call fails.
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout: f64,
    /// How many times a request is sent again after a failure that allows it: one that never
    /// reached the server, or one that only reads after a lost connection or a busy server.
    #[serde(default = "default_retries")]
    pub retries: u32,
}

/// Most retries a config may ask for (with the backoff's pauses, about a minute).
const MAX_RETRIES: u32 = 10;

fn default_retries() -> u32 {
    3
}

fn default_connect_timeout() -> f64 {
    10.0
}

fn default_idle_timeout() -> f64 {
    300.0
}

impl RemoteConfig {
    /// The bearer token: `token_file`'s first line, else `$FIELDSTORE_TOKEN`, else none.
    pub fn token(&self) -> Result<Option<String>> {
        let token = match &self.token_file {
            Some(file) => {
                let text = std::fs::read_to_string(file).map_err(|e| Error::io("read the token file", file, e))?;
                text.lines().next().unwrap_or_default().trim().to_string()
            }
            None => std::env::var(TOKEN_VARIABLE).unwrap_or_default(),
        };
        if token.is_empty() {
            return Ok(None);
        }
        if !token.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(Error::new(ErrorKind::BadConfig, "the token has characters a bearer token cannot carry"));
        }
        Ok(Some(token))
    }

    /// Checked values: timeouts positive and finite, retries bounded.
    pub fn check(&self, source: &str) -> Result<()> {
        if self.retries > MAX_RETRIES {
            return Err(Error::config(source, format!("retries: {} is more than {MAX_RETRIES}", self.retries)));
        }
        for (name, seconds) in [("connect_timeout", self.connect_timeout), ("idle_timeout", self.idle_timeout)] {
            if !(seconds.is_finite() && seconds > 0.0 && seconds < 1e9) {
                return Err(Error::config(source, format!("{name}: {seconds} is not a number of seconds above 0")));
            }
        }
        Ok(())
    }
}
