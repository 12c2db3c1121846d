//! The journal of a workspace's search index: what axe's writers tell
//! the index (kept by axe-search, in the cache directory) of the notes
//! files they wrote, so that the next search reads them again without a
//! stat of every file. Here, below the index, because the writers
//! (remember, every rewrite) are; the index reads and empties it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use super::Workspace;

/// The journal's file name in the index's directory.
pub const JOURNAL: &str = "journal";

/// The index's directory for `ws` (`<cache>/notes-index/<16 digits of
/// the SHA-256 of the workspace's real path>`), when it has one that is
/// not inside the workspace; the cache directory made only when `create`.
pub fn place_if(ws: &Workspace, create: bool) -> Result<PathBuf, String> {
    let cache = ws.index_root().ok_or("no cache directory")?;
    let root = std::fs::canonicalize(&ws.root).map_err(|e| format!("workspace: {e}"))?;
    let inside = || Err("the cache directory is inside the workspace".to_owned());
    if cache.starts_with(&ws.root) || cache.starts_with(&root) {
        return inside();
    }
    if create {
        std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    }
    let real = std::fs::canonicalize(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    if real.starts_with(&root) {
        return inside();
    }
    let name = crate::hash::sha256_hex(root.as_os_str().as_encoded_bytes());
    Ok(real.join(&name[..16]))
}

/// Tells the index of `ws`, if it has one, that the notes file at `path`
/// was written: the next search reads it again. One append of one line
/// (`O_APPEND`, never synced: the index is only a cache, and a line lost
/// is found by the rotating check); nothing when there is no index.
pub fn note_written(ws: &Workspace, path: &Path) {
    let Ok(place) = place_if(ws, false) else {
        return;
    };
    let rel = ws.relative(path);
    if rel.contains('\n') || Path::new(&rel).is_absolute() {
        return;
    }
    let file = std::fs::OpenOptions::new()
        .append(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(place.join(JOURNAL));
    // No index directory: no journal made (the index is built whole).
    // A line of its own even after one a writer killed mid-write left
    // unfinished.
    if let Ok(mut f) = file {
        let _ = f.write_all(format!("\n{rel}\n").as_bytes());
    }
}
