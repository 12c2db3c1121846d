//! The launchers (each `bins/axe-NAME.rs` that says `axe_launch::launcher!`)
//! are linked by GNU ld where it is installed. What they run is libc and
//! lib/launch, yet every Rust program links std's object, and lld keeps
//! whatever the unwind tables of any object it links name: std's panic
//! and backtrace machinery, 300 KB. GNU ld keeps only what the running
//! code reaches: 18 KB a launcher against 316 KB with lld, which Rust
//! links with on x86_64 Linux since 1.90 (bench/RESULTS.md, the install).
//! Without `ld.bfd` the launchers still work, only larger. Only the
//! launchers: GNU ld takes twice as long as lld over the big programs.
//!
//! Bins are read again when one changes (a new executable), and that
//! rebuilds the package; they rarely change.

use std::path::Path;

fn main() {
    println!("cargo::rerun-if-changed=bins");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux");
    if !linux || !on_path("ld.bfd") {
        return;
    }
    let Ok(bins) = std::fs::read_dir("bins") else {
        return;
    };
    for path in bins.flatten().map(|entry| entry.path()) {
        let launcher =
            std::fs::read_to_string(&path).is_ok_and(|text| text.contains("axe_launch::launcher!"));
        if let (true, Some(name)) = (launcher, path.file_stem().and_then(|s| s.to_str())) {
            println!("cargo::rustc-link-arg-bin={name}=-fuse-ld=bfd");
        }
    }
}

/// Whether an executable file `name` is in a directory on PATH, where
/// the C compiler that links looks for it.
fn on_path(name: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else {
        return false;
    };
    std::env::split_paths(&path).any(|dir| Path::new(&dir).join(name).is_file())
}
