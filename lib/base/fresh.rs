//! Whether what was made from some files is still what they would make:
//! the stamps of the files and directories a value was read from, taken
//! before reading them, for a cache that keeps the value while none of
//! them changed (`axe-mcp --http` keeps each agent's opened memory so, and
//! a request then costs a few `stat`s instead of reading and parsing its
//! agent file and config.toml).
//!
//! A stamp is a path's device, inode, size, modification and change times
//! (followed through symlinks), or that nothing is there: an edit in
//! place changes the times, a save by rename the inode, and a file
//! created, removed or renamed in a directory that directory's times. A
//! path that changed within [`RACY`] of the stamp is never called
//! unchanged: a write in the same clock tick as the read could leave
//! every stamp alike (git's "racy clean" problem); its reader reads again
//! until the path has been still for that long.

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::beneath::Stamp;

/// How recent a change may be and its stamp still be trusted: above any
/// file system's time granularity (FAT's 2 s included).
pub const RACY: Duration = Duration::from_secs(2);

/// The stamps of the paths a value was made from.
#[derive(Debug, Clone)]
pub struct Sources {
    stamps: Vec<(PathBuf, Option<Stamp>)>,
    /// Whether a path had changed within [`RACY`] when stamped.
    racy: bool,
}

impl Sources {
    /// Stamps `paths` now: call before reading them.
    pub fn of(paths: impl IntoIterator<Item = PathBuf>) -> Sources {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(i64::MAX, |d| {
                i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)
            });
        let racy_ns = i64::try_from(RACY.as_nanos()).unwrap_or(i64::MAX);
        let stamps: Vec<_> = paths.into_iter().map(|p| (stamp(&p), p)).collect();
        let racy = stamps.iter().any(|(s, _)| {
            s.is_some_and(|s| now.saturating_sub(s.mtime_ns.max(s.ctime_ns)) < racy_ns)
        });
        Sources {
            stamps: stamps.into_iter().map(|(s, p)| (p, s)).collect(),
            racy,
        }
    }

    /// Whether every path is as it was stamped, and was then still long
    /// enough for the stamp to say so.
    pub fn unchanged(&self) -> bool {
        !self.racy && self.stamps.iter().all(|(p, s)| stamp(p) == *s)
    }
}

/// The stamp of what is at `path`, a file or a directory; `None` when
/// nothing is (or it cannot be looked at, which a change may end too).
fn stamp(path: &std::path::Path) -> Option<Stamp> {
    std::fs::metadata(path).ok().map(|m| Stamp::of(&m))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// Puts `path`'s modification time an hour back, so that a change
    /// made now cannot fall in the same clock tick as its stamp.
    fn back(path: &std::path::Path) {
        let hour_ago = SystemTime::now() - Duration::from_secs(3600);
        fs::File::open(path)
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();
    }

    /// Sources stamped as if still long enough: the change time of a file
    /// just made is now, whatever its modification time says.
    fn still(paths: &[&std::path::Path]) -> Sources {
        let mut sources = Sources::of(paths.iter().map(|p| p.to_path_buf()));
        sources.racy = false;
        sources
    }

    #[test]
    fn a_just_written_file_is_never_called_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.toml");
        fs::write(&file, "x").unwrap();
        let sources = Sources::of([file.clone()]);
        assert!(!sources.unchanged(), "changed within RACY: read again");
    }

    #[test]
    fn a_change_of_any_source_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let (file, absent) = (dir.path().join("a.toml"), dir.path().join("b.toml"));
        fs::write(&file, "x").unwrap();
        back(&file);
        back(dir.path());
        let sources = still(&[&file, &absent, dir.path()]);
        assert!(sources.unchanged());
        // An edit in place, of the same length.
        fs::write(&file, "y").unwrap();
        assert!(!sources.unchanged());
        // A file appearing where there was none.
        let sources = still(&[&absent]);
        fs::write(&absent, "z").unwrap();
        assert!(!sources.unchanged());
        // A directory's entries changing.
        back(dir.path());
        let sources = still(&[dir.path()]);
        fs::remove_file(&absent).unwrap();
        assert!(!sources.unchanged());
    }
}
