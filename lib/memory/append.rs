//! Adding to the end of a file whole or not at all, and creating what an
//! append needs: shared by every memory kind that appends (the run log,
//! daily notes).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` at the end of the locked `file`, or nothing at all: if
/// the disk fills or a size limit hits halfway, the file is cut back to
/// where it was.
pub fn write_whole(mut file: &File, bytes: &[u8]) -> io::Result<()> {
    let before = file.metadata()?.len();
    let result = match file.write(bytes) {
        // The normal case: one write, so even a reader that ignores the
        // lock never sees half an entry.
        Ok(n) if n == bytes.len() => Ok(()),
        Ok(n) => file.write_all(&bytes[n..]),
        Err(e) => Err(e),
    };
    if let Err(e) = result {
        // Best effort: the original error is the one worth reporting.
        let _ = file.set_len(before);
        return Err(e);
    }
    Ok(())
}

/// Creates `dir` and its parents with mode 0755.
pub fn create_dirs(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o755);
    builder.create(dir)
}

/// The mode a file gets when `options` create it (before the umask).
pub fn set_mode(options: &mut OpenOptions, mode: u32) {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(options, mode);
    #[cfg(not(unix))]
    let _ = (options, mode);
}
