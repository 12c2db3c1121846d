//! A dry run's scratch copy of the notes.

use std::fs;
use std::path::{Path, PathBuf};

use time::OffsetDateTime;

use axe_base::error::Result;
use axe_memory::error::io_error;
use axe_memory::notes::Workspace;

/// A dry run's scratch copy of the notes a consolidation reads: the
/// world topics, the agent's MEMORY.md and daily logs. Removed when done.
pub(super) struct Scratch {
    pub(super) root: PathBuf,
    /// Removes it, should a signal end the process during the model's call.
    _on_end: axe_base::signals::RemovedOnEnd,
}

impl Scratch {
    pub(super) fn of(ws: &Workspace, agent: &str) -> Result<Scratch> {
        let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
        let root =
            std::env::temp_dir().join(format!("axe-consolidate-{}-{nanos}", std::process::id()));
        let fail = |e: std::io::Error| io_error("", "create", &root, e);
        {
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new()
                .mode(0o700)
                .create(&root)
                .map_err(fail)?;
        }
        let scratch = Scratch {
            _on_end: axe_base::signals::remove_on_end(root.clone()),
            root,
        };
        // Removed again by its drop should a copy fail.
        for dir in [ws.world(), ws.daily_dir(agent)] {
            let Some(opened) = ws
                .open_dir(&dir)
                .map_err(|e| io_error("", "open", &dir, e))?
            else {
                continue;
            };
            let files = Workspace::md_files(&opened).map_err(|e| io_error("", "read", &dir, e))?;
            for (name, at) in files {
                let mut bytes = Vec::new();
                if at.read_into(ws, &mut bytes).unwrap_or(false) {
                    scratch.put(&dir.join(name), ws, &bytes)?;
                }
            }
        }
        if let Some(text) = ws.read(&ws.memory(agent))? {
            scratch.put(&ws.memory(agent), ws, &text)?;
        }
        Ok(scratch)
    }

    /// `bytes` at the place of `path` (a path in `ws`) in the copy.
    fn put(&self, path: &Path, ws: &Workspace, bytes: &[u8]) -> Result<()> {
        let to = self.root.join(ws.relative(path));
        let fail = |e: std::io::Error| io_error("", "write", &to, e);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(fail)?;
        }
        fs::write(&to, bytes).map_err(fail)
    }
}

impl Drop for Scratch {
    /// Gone however the dry run ends, an error included.
    fn drop(&mut self) {
        // Best effort: a leftover in the temp directory costs space only.
        let _ = fs::remove_dir_all(&self.root);
    }
}
