//! Every executable but `axe` (the launchers, each `bins/axe-NAME.rs`
//! that says `axe_launch::launcher!`, and the four whole programs of the
//! hooks' hot path) is linked by GNU ld where it is installed. lld, which
//! Rust links with on x86_64 Linux since 1.90, keeps whatever the unwind
//! tables of any object it links name: a launcher runs libc and
//! lib/launch, yet got std's panic and backtrace machinery (316 KB
//! against 18 KB with GNU ld), and a whole program got the exception
//! tables of the whole library (379 KB of `.gcc_except_table`, where its
//! code needs 41 KB: 2.12 MB against 1.80 MB an executable; bench/RESULTS.md,
//! the install). Without `ld.bfd` they still work, only larger. `axe`
//! stays with lld: it runs all the library, so GNU ld saves it 40 KB.
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
        match path.file_stem().and_then(|s| s.to_str()) {
            Some("axe") | None => {}
            Some(name) => println!("cargo::rustc-link-arg-bin={name}=-fuse-ld=bfd"),
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
