//! fieldstore's remote access, the client side. A config whose `catalogue:` and `store:` are
//! `type: remote` (the same `endpoint`) gives a `FieldStore` whose every call runs on a
//! `fieldstore serve` (the `fieldstore-server` crate): one HTTP/2 request per call, archives
//! streamed with the flush as their end, reads of the server's locations several at a time.
//! docs/remote.md describes the protocol ([`protocol`]) and its guarantees.
//!
//! ```yaml
//! catalogue: {type: remote, endpoint: "https://fdb.example.org:8443", token_file: ~/.fieldstore-token}
//! store: {type: remote, endpoint: "https://fdb.example.org:8443", token_file: ~/.fieldstore-token}
//! ```

mod backend;
mod client;
mod config;
pub mod protocol;

pub use backend::{RemoteCatalogue, RemoteStore};
pub use client::Client;
pub use config::{RemoteConfig, TOKEN_VARIABLE};

/// Blocks SIGPIPE in the calling thread: a socket the peer closed then fails the write with
/// `EPIPE`, an error, instead of ending the process (whose SIGPIPE may be the default, as the
/// CLI's and C programs' are). Every thread of the client's and the server's runtimes calls it
/// as it starts; the disposition of the process is left as it is.
pub fn block_sigpipe_in_this_thread() {
    // SAFETY: sigemptyset, sigaddset and pthread_sigmask only read and write the set given,
    // a local, and this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

use fieldstore_core::backend::{Catalogue, Store};
use fieldstore_core::factory::{Factory, Section};
use fieldstore_core::Result;

/// The remote backend's factory: `type: remote` catalogues and stores.
pub const FACTORY: Factory = Factory { name: "remote", catalogue: Some(open_catalogue), store: Some(open_store), object_pool: None };

fn client(section: &Section<'_>) -> Result<Client> {
    let config: RemoteConfig = section.typed()?;
    config.check(section.source)?;
    Client::new(&config, section.source)
}

fn open_catalogue(section: &Section<'_>) -> Result<Box<dyn Catalogue>> {
    Ok(Box::new(RemoteCatalogue::new(client(section)?)))
}

fn open_store(section: &Section<'_>) -> Result<Box<dyn Store>> {
    Ok(Box::new(RemoteStore::new(client(section)?)))
}
