//! Finds libreset and generates its declarations.
//!
//! Header: $RESET_INCLUDE_DIR, else pkg-config's include path of `reset`,
//! else the source tree this crate sits in (../../../include).
//! Library: $RESET_LIB_DIR, else pkg-config's library path of `reset`, else
//! the default linker path.
//! Declarations: the Debian `bindgen` command (or $BINDGEN) is run on the
//! header, so no crates.io bindgen is needed and the crate builds offline.
use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

fn pkg_config(flag: &str, prefix: &str) -> Option<String> {
    let output = Command::new("pkg-config").args([flag, "reset"]).output().ok()?;
    if !output.status.success() {
        return None;
    }
    String::from_utf8(output.stdout)
        .ok()?
        .split_whitespace()
        .find_map(|word| word.strip_prefix(prefix).map(str::to_owned))
}

fn main() {
    for var in ["RESET_INCLUDE_DIR", "RESET_LIB_DIR", "BINDGEN", "PKG_CONFIG_PATH"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let include = env::var("RESET_INCLUDE_DIR")
        .ok()
        .or_else(|| pkg_config("--cflags-only-I", "-I"))
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../../../include"));
    let header = include.join("reset.h");
    if !header.exists() {
        panic!("reset.h not found at {}: set RESET_INCLUDE_DIR or install libreset's pkg-config file",
               header.display());
    }
    println!("cargo:rerun-if-changed={}", header.display());

    if let Some(dir) = env::var("RESET_LIB_DIR").ok().or_else(|| pkg_config("--libs-only-L", "-L")) {
        println!("cargo:rustc-link-search=native={dir}");
        // Dependents (the reset crate's tests) read this as DEP_RESET_LIB_DIR.
        println!("cargo:lib_dir={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=reset");
    println!("cargo:include={}", include.display());

    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("reset_bindings.rs");
    generate(&header, &out);
}

fn generate(header: &Path, out: &Path) {
    let bindgen = env::var("BINDGEN").unwrap_or_else(|_| "bindgen".into());
    let status = Command::new(&bindgen)
        .arg(header)
        .args(["--allowlist-function", "reset_.*", "--allowlist-type", "reset_.*"])
        .args(["--allowlist-var", "RESET_.*", "--no-layout-tests", "--no-doc-comments", "--size_t-is-usize", "-o"])
        .arg(out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run `{bindgen}` (apt-get install bindgen, or set BINDGEN): {e}"));
    assert!(status.success(), "`{bindgen}` failed on {}", header.display());
}
