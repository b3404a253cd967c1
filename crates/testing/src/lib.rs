//! What fieldstore's tests share across crates: the services some of them talk to (a Ceph
//! cluster, the libdaos emulation, a browser), found from the environment `scripts/test.sh`
//! sets. Where one is missing, a plain `cargo test` skips what needs it and says so on standard
//! error; with `FIELDSTORE_TEST_REQUIRE_SERVICES` set (`scripts/test.sh` sets it, so CI never
//! skips in silence) a missing service fails the test instead.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The variable that turns a skip into a failure.
pub const REQUIRE_ENV: &str = "FIELDSTORE_TEST_REQUIRE_SERVICES";

/// A Ceph cluster's `ceph.conf` (`FIELDSTORE_TEST_CEPH_CONF`, exported by
/// `scripts/ceph-cluster.sh`), or `None` after saying that the running test skips what needs
/// it.
pub fn ceph_conf() -> Option<PathBuf> {
    match std::env::var("FIELDSTORE_TEST_CEPH_CONF") {
        Ok(conf) if !conf.is_empty() => Some(PathBuf::from(conf)),
        _ => skip("a Ceph cluster ($FIELDSTORE_TEST_CEPH_CONF is not set)", "scripts/ceph-cluster.sh start DIR, then export DIR/env"),
    }
}

/// An S3 server of the tests: its endpoint and credentials.
#[derive(Clone, Debug)]
pub struct S3Server {
    /// `http://127.0.0.1:PORT`.
    pub endpoint: String,
    /// The access key id.
    pub access_key: String,
    /// The secret access key.
    pub secret_key: String,
}

/// The bucket `scripts/test-services.sh` creates on each S3 server for the tests.
pub const S3_TEST_BUCKET: &str = "fieldstore-test";

/// The S3 server whose variables start with `prefix` (`FIELDSTORE_TEST_S3_` for Ceph's RADOS
/// gateway, `FIELDSTORE_TEST_S3_SEAWEED_` for SeaweedFS), or `None` after saying that the
/// running test skips what needs it.
pub fn s3_server(prefix: &str) -> Option<S3Server> {
    let var = |name: &str| std::env::var(format!("{prefix}{name}")).ok().filter(|v| !v.is_empty());
    match (var("ENDPOINT"), var("ACCESS_KEY"), var("SECRET_KEY")) {
        (Some(endpoint), Some(access_key), Some(secret_key)) => Some(S3Server { endpoint, access_key, secret_key }),
        _ => skip(
            &format!("an S3 server (${prefix}ENDPOINT, ACCESS_KEY and SECRET_KEY are not set)"),
            "scripts/test.sh starts them (scripts/test-services.sh)",
        ),
    }
}

/// A pool of the test cluster, by the variable `scripts/ceph-cluster.sh` exports, else its
/// default name.
pub fn rados_pool(variable: &str, default: &str) -> String {
    std::env::var(variable).unwrap_or_else(|_| default.to_string())
}

/// The libdaos emulation (`FIELDSTORE_TEST_DAOS_LIBRARY`, else the one the workspace built
/// beside this test) and the directory its pools live in (`DAOS_EMULATION_ROOT`, which the
/// emulation itself reads, so it must be in the environment); `None` (said) without them.
pub fn daos_emulation() -> Option<(String, PathBuf)> {
    let how = "scripts/test.sh sets it; by hand: export DAOS_EMULATION_ROOT=$(mktemp -d)";
    let Some(root) = std::env::var_os("DAOS_EMULATION_ROOT").filter(|r| !r.is_empty()).map(PathBuf::from) else {
        return skip("the libdaos emulation ($DAOS_EMULATION_ROOT is not set)", how);
    };
    let built = build_dir().join("libdaos.so");
    let library = match std::env::var("FIELDSTORE_TEST_DAOS_LIBRARY") {
        Ok(library) if !library.is_empty() => library,
        _ if built.exists() => built.display().to_string(),
        _ => {
            return skip("the libdaos emulation (not built; $FIELDSTORE_TEST_DAOS_LIBRARY is not set)", "cargo build --workspace builds it")
        }
    };
    std::fs::create_dir_all(&root).expect("the DAOS emulation's directory");
    Some((library, root))
}

/// A library the workspace builds beside the binaries under test (`target/PROFILE/NAME`, such
/// as the fault injector `libfieldstore_faults.so`), or `None` after saying that the running
/// test skips what needs it: `cargo test -p ...` alone does not build another package's
/// library.
pub fn workspace_library(file: &str, package: &str) -> Option<PathBuf> {
    let built = build_dir().join(file);
    match built.exists() {
        true => Some(built),
        false => skip(&format!("{} (not built)", built.display()), &format!("cargo build -p {package} (or cargo build --workspace)")),
    }
}

/// Whether Ceph's client library `librados.so.2` can be loaded, else `false` (said): a
/// machine without Ceph still runs the tests that need no cluster.
pub fn librados() -> bool {
    let name = std::ffi::CString::new("librados.so.2").expect("no NUL");
    // SAFETY: dlopen with a valid C string; the handle is closed at once.
    let handle = unsafe { dlopen(name.as_ptr(), RTLD_NOW) };
    if handle.is_null() {
        return skip::<()>("Ceph's client library librados.so.2", "Debian: apt-get install librados2 (scripts/test.sh does)").is_some();
    }
    // SAFETY: a handle dlopen returned, closed once.
    unsafe { dlclose(handle) };
    true
}

const RTLD_NOW: std::ffi::c_int = 2;

extern "C" {
    fn dlopen(filename: *const std::ffi::c_char, flags: std::ffi::c_int) -> *mut std::ffi::c_void;
    fn dlclose(handle: *mut std::ffi::c_void) -> std::ffi::c_int;
}

/// Whether a browser for the report tests is installed (`chromium`), else `None` (said).
pub fn chromium() -> Option<PathBuf> {
    program("chromium", "chromium (a browser)")
}

/// The AWS command line (`aws`), for the tests of the commands docs/s3.md gives, else `None`
/// (said).
pub fn aws_cli() -> Option<PathBuf> {
    program("aws", "the AWS command line")
}

/// `name` on `PATH`, else `None` after saying that the running test skips what needs `what`.
fn program(name: &str, what: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    match std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.exists()) {
        Some(found) => Some(found),
        None => skip(what, "scripts/test.sh installs it"),
    }
}

/// Renders a page in headless Chromium and returns the DOM after its scripts ran, and what
/// Chromium logged (console errors show as `Uncaught ...`); `None` (said) without Chromium.
pub fn render_in_chromium(page: &Path, profile: &Path) -> Option<(String, String)> {
    let chromium = chromium()?;
    let out = std::process::Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .expect("chromium runs");
    Some((String::from_utf8_lossy(&out.stdout).into_owned(), String::from_utf8_lossy(&out.stderr).into_owned()))
}

/// The directory of this build's artifacts (`target/debug`): test binaries run from its
/// `deps/`.
fn build_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test's own path");
    exe.parent().and_then(Path::parent).expect("a test binary in target/PROFILE/deps").to_path_buf()
}

/// Says that the running test (the harness names its thread after it) skips what needs
/// `what`, or fails it where services are required. Written to standard error itself, which
/// the harness does not capture, so the skip shows.
fn skip<T>(what: &str, how: &str) -> Option<T> {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    if std::env::var_os(REQUIRE_ENV).is_some() {
        panic!("{test} needs {what}: {how} ({REQUIRE_ENV} is set, so nothing is skipped)");
    }
    let _ = writeln!(std::io::stderr(), "skipped: {test}: needs {what}: {how}");
    None
}
