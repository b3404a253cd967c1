//! Gives the shared library its SONAME, `libfieldstore_c.so.MAJOR`, so programs linked against
//! it load a compatible version (scripts/c-install.sh installs the versioned file and its
//! links), and records the commit built for `fdb_vcs_version`.

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".into());
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libfieldstore_c.so.{major}");
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| s.trim().to_string())
        .filter(|s| s.len() == 40)
        .unwrap_or_else(|| "0".repeat(40));
    println!("cargo:rustc-env=FIELDSTORE_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // A new commit moves HEAD or the branch it names.
    for path in ["../../.git/HEAD", "../../.git/refs/heads"] {
        if std::path::Path::new(path).exists() {
            println!("cargo:rerun-if-changed={path}");
        }
    }
}
