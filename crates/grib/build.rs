//! Links the system ecCodes (Debian: libeccodes-dev). `ECCODES_LIB_DIR` overrides the search.
fn main() {
    println!("cargo:rerun-if-env-changed=ECCODES_LIB_DIR");
    if let Ok(dir) = std::env::var("ECCODES_LIB_DIR") {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=eccodes");
}
