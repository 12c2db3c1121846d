//! A run's artifact directory and what its agents wrote there. The
//! directory is passed to every tool that needs it, never through the
//! process environment: two runs in one process (a library caller, a test)
//! cannot see each other's.

use std::path::PathBuf;
use std::sync::Mutex;

use axe_base::lock::Recover;

use serde::Serialize;

/// One file an agent wrote in the artifact directory, as `--json` lists
/// it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Artifact {
    /// Relative to the artifact directory, as the model named it.
    pub path: String,
    /// The agent that wrote it last.
    pub agent: String,
    /// Its size in bytes after that write.
    pub size: u64,
}

/// A run's artifact directory.
#[derive(Debug)]
pub struct Artifacts {
    pub dir: PathBuf,
    /// Made for this run alone: removed when it ends unless kept.
    pub temporary: bool,
    written: Mutex<Vec<Artifact>>,
}

impl Artifacts {
    pub fn new(dir: PathBuf, temporary: bool) -> Artifacts {
        Artifacts {
            dir,
            temporary,
            written: Mutex::new(Vec::new()),
        }
    }

    /// Notes that `agent` wrote `size` bytes to `path`; a file written
    /// again is listed once, as it is now.
    pub fn record(&self, path: &str, agent: &str, size: u64) {
        let entry = Artifact {
            path: path.trim_start_matches("./").to_owned(),
            agent: agent.to_owned(),
            size,
        };
        let mut written = self.written.lock().recover();
        match written.iter_mut().find(|a| a.path == entry.path) {
            Some(a) => *a = entry,
            None => written.push(entry),
        }
    }

    /// What was written, in the order the files were first written.
    pub fn written(&self) -> Vec<Artifact> {
        self.written.lock().recover().clone()
    }

    /// Ends the run's use of the directory: a temporary one is removed
    /// unless `keep`; the path of one kept is returned, to be said.
    pub fn finish(&self, keep: bool) -> Option<PathBuf> {
        if !self.temporary {
            return None;
        }
        if keep {
            return Some(self.dir.clone());
        }
        // Best effort: it is under the cache directory.
        let _ = std::fs::remove_dir_all(&self.dir);
        None
    }
}
