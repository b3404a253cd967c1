//! The server's TLS: its certificate chain and key from PEM files, and optionally the CA
//! whose certificates clients must present (mutual TLS). HTTP/2 is offered first (ALPN).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::server::WebPkiClientVerifier;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use fieldstore_core::{Error, ErrorKind, Result};

/// The PEM files of a server's TLS.
#[derive(Clone, Debug)]
pub struct TlsFiles {
    /// The server's certificate chain.
    pub certificate: PathBuf,
    /// Its private key.
    pub key: PathBuf,
    /// With one, only clients presenting a certificate this CA signed may connect.
    pub client_ca: Option<PathBuf>,
}

fn bad(what: &str, path: &Path, cause: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::caused_by(ErrorKind::BadConfig, format!("{what} {}", path.display()), cause)
}

fn certificates(path: &Path) -> Result<Vec<CertificateDer<'static>>> {
    let certificates = CertificateDer::pem_file_iter(path).map_err(|e| bad("cannot read the certificates of", path, e))?;
    let certificates =
        certificates.collect::<std::result::Result<Vec<_>, _>>().map_err(|e| bad("cannot read the certificates of", path, e))?;
    if certificates.is_empty() {
        return Err(Error::new(ErrorKind::BadConfig, format!("{} holds no PEM certificate", path.display())));
    }
    Ok(certificates)
}

impl TlsFiles {
    /// The rustls configuration these files make.
    pub fn server_config(&self) -> Result<Arc<ServerConfig>> {
        let chain = certificates(&self.certificate)?;
        let key = PrivateKeyDer::from_pem_file(&self.key).map_err(|e| bad("cannot read the private key of", &self.key, e))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| Error::caused_by(ErrorKind::BadConfig, "TLS versions", e))?;
        let builder = match &self.client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let mut roots = RootCertStore::empty();
                for certificate in certificates(ca)? {
                    roots.add(certificate).map_err(|e| bad("cannot use the CA certificate of", ca, e))?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                    .build()
                    .map_err(|e| bad("cannot check clients against", ca, e))?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config =
            builder.with_single_cert(chain, key).map_err(|e| bad("the key does not fit the certificate", &self.certificate, e))?;
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }
}
