//! Where a workspace's files are, and keeping every path inside it.

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustix::fs::FileType;

use time::Date;

use super::conflict::is_conflict;
use super::settings::NotesConfig;
use crate::append;
use crate::error::MemoryError;
use axe_base::beneath::{self, Dir, Stamp};
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};

/// The largest notes file read: far past any budget (a recall leaves out
/// unread what cannot fit), so only a file that is not notes reaches it,
/// and it is refused rather than read into memory whole.
pub const READ_LIMIT: u64 = 64 << 20;

/// A notes workspace: a directory, created as it is written to.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
    /// Told of every rewrite through this workspace (a consolidation's
    /// record of what it wrote); `None` for nearly every caller.
    witness: Option<Witnessed>,
    /// Where search keeps indexes (`<cache>/notes-index`), each workspace
    /// in a directory of its own; `None`: search reads every file.
    index: Option<PathBuf>,
    /// The embedding model its searches rank by meaning with, when one is
    /// configured: its folder (axe-search loads it once a process).
    meaning: Option<PathBuf>,
}

/// A [`Witness`], shared by the clones of one workspace.
#[derive(Clone)]
struct Witnessed(Arc<dyn Witness>);

impl std::fmt::Debug for Witnessed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Witness")
    }
}

/// What is told of each rewrite of a notes file through a workspace, under
/// the file's lock: what was there and what goes in, before it goes in,
/// so a record of it is on disk before the file changes.
pub trait Witness: Send + Sync {
    /// `path` is about to hold `after`; `before` is what it holds now
    /// (`None`: it did not exist). An error refuses the write.
    fn writing(&self, path: &Path, before: Option<&[u8]>, after: &[u8]) -> Result<()>;
    /// The write announced last for `path` did not happen.
    fn not_written(&self, path: &Path);
    /// A write to `path` was refused: it holds `now` (a SHA-256), not the
    /// text the writer had seen.
    fn refused(&self, path: &Path, now: &str);
}

/// Which files a search reads: the whole workspace, or what one agent
/// sees (world facts and its own files).
#[derive(Debug, Clone, Copy)]
pub enum Scope<'a> {
    All,
    Agent(&'a str),
}

impl Workspace {
    pub fn at(root: impl Into<PathBuf>) -> Workspace {
        Workspace {
            root: root.into(),
            witness: None,
            index: None,
            meaning: None,
        }
    }

    /// This workspace, searched through an index kept under `cache` (see
    /// `index`): a cache, rebuilt from the notes whenever it is missing,
    /// out of date or torn.
    pub fn indexed_in(self, cache: PathBuf) -> Workspace {
        Workspace {
            index: Some(cache.join("notes-index")),
            ..self
        }
    }

    /// This workspace, searched through an index under axe's cache
    /// directory; without one (no `$HOME`), searched as before.
    pub fn cached(self) -> Workspace {
        match axe_base::dirs::cache_dir() {
            Ok(cache) => self.indexed_in(cache),
            Err(_) => self,
        }
    }

    /// This workspace, searched by meaning too with the model in `dir`
    /// (loaded at its first search); `None` leaves it as it is.
    pub fn with_meaning(self, dir: Option<PathBuf>) -> Workspace {
        match dir {
            Some(dir) => Workspace {
                meaning: Some(dir),
                ..self
            },
            None => self,
        }
    }

    /// The folder of its embedding model, if one is configured.
    pub fn meaning(&self) -> Option<&Path> {
        self.meaning.as_deref()
    }

    /// Where indexes of workspaces are kept, if anywhere.
    pub fn index_root(&self) -> Option<&Path> {
        self.index.as_deref()
    }

    /// This workspace, its rewrites told to `witness`.
    pub fn witnessed(self, witness: Arc<dyn Witness>) -> Workspace {
        Workspace {
            witness: Some(Witnessed(witness)),
            ..self
        }
    }

    /// Who is told of its rewrites, if anyone.
    pub fn witness(&self) -> Option<&dyn Witness> {
        self.witness.as_ref().map(|w| &*w.0)
    }

    /// The workspace `[notes]` names: `<data>/notes` when unset, a
    /// relative path from the agents directory (`<config>/agents`).
    pub fn of(dirs: &Dirs, cfg: &NotesConfig) -> Result<Workspace> {
        let root = if cfg.workspace.is_empty() {
            dirs.data()?.join("notes")
        } else if Path::new(&cfg.workspace).is_absolute() {
            PathBuf::from(&cfg.workspace)
        } else {
            dirs.agents()?.join(&cfg.workspace)
        };
        Ok(Workspace::at(root).cached())
    }

    pub fn world(&self) -> PathBuf {
        self.root.join("world")
    }

    /// `world/<topic>.md`; `topic` is already sanitised.
    pub fn topic(&self, topic: &str) -> PathBuf {
        self.world().join(format!("{topic}.md"))
    }

    pub fn agent_dir(&self, agent: &str) -> PathBuf {
        self.root.join("agents").join(agent)
    }

    pub fn memory(&self, agent: &str) -> PathBuf {
        self.agent_dir(agent).join("MEMORY.md")
    }

    pub fn daily_dir(&self, agent: &str) -> PathBuf {
        self.agent_dir(agent).join("daily")
    }

    pub fn daily(&self, agent: &str, date: Date) -> PathBuf {
        self.daily_dir(agent).join(format!("{}.md", day(date)))
    }

    /// `path` as shown to people and models: relative to the workspace.
    pub fn relative(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The directory holding the file at `path` (a path in this workspace,
    /// as [`Workspace::memory`] gives) and its name there, reached through
    /// directory handles from the root: no symlink, `..` or swap leads
    /// outside, and nothing is created before that is known. With
    /// `create`, missing directories (the root too) are made; without,
    /// `None` when one is missing.
    pub fn file(&self, path: &Path, create: bool) -> Result<Option<(Dir, OsString)>> {
        self.walk(path, create, |root, rel| root.file(rel, create))
    }

    /// The directory at `path` in this workspace, as [`Workspace::file`].
    pub fn dir(&self, path: &Path, create: bool) -> Result<Option<Dir>> {
        self.walk(path, create, |root, rel| root.dir(rel, create))
    }

    fn walk<T>(
        &self,
        path: &Path,
        create: bool,
        walk: impl FnOnce(&Dir, &Path) -> io::Result<Option<T>>,
    ) -> Result<Option<T>> {
        self.walk_io(path, create, walk)
            .map_err(|e| match beneath::is_outside(&e) {
                true => self.outside(path),
                false => crate::error::io_error("", "open", path, e),
            })
    }

    /// [`Workspace::walk`] with the I/O error as it is: "leads outside"
    /// for a path out of the workspace.
    fn walk_io<T>(
        &self,
        path: &Path,
        create: bool,
        walk: impl FnOnce(&Dir, &Path) -> io::Result<Option<T>>,
    ) -> io::Result<Option<T>> {
        let rel = path
            .strip_prefix(&self.root)
            .map_err(|_| io::Error::other(beneath::Outside))?;
        match Dir::root(&self.root, create)? {
            Some(root) => walk(&root, rel),
            None => Ok(None),
        }
    }

    /// The directory at `path` in this workspace, opened once for reading
    /// the files in it ([`At`]); `None` when it does not exist.
    pub fn open_dir(&self, path: &Path) -> io::Result<Option<Arc<Dir>>> {
        Ok(self
            .walk_io(path, false, |root, rel| root.dir(rel, false))?
            .map(Arc::new))
    }

    /// The notes files of the directory `dir`: names ending in `.md`, not
    /// hidden (a write's temp file or marker), sorted. One whose append
    /// marker is in the listing too is read up to its last whole entry
    /// ([`At::appended`]); the rest need not look for one.
    pub fn md_files(dir: &Arc<Dir>) -> io::Result<Vec<(String, At)>> {
        let all: Vec<String> = dir
            .list()?
            .into_iter()
            .filter_map(|(name, _)| name.into_string().ok())
            .collect();
        let markers: std::collections::HashSet<&str> = all
            .iter()
            .filter_map(|n| n.strip_prefix('.')?.strip_suffix(".axe-append"))
            .collect();
        let mut names: Vec<&String> = all
            .iter()
            .filter(|n| n.ends_with(".md") && !n.starts_with('.') && !is_conflict(n))
            .collect();
        names.sort();
        Ok(names
            .into_iter()
            .map(|n| {
                let at = At::new(Some(Arc::clone(dir)), n);
                let at = match markers.contains(n.as_str()) {
                    true => at.appended(),
                    false => at,
                };
                (n.clone(), at)
            })
            .collect())
    }

    /// The conflict files a sync left that concern `agent`: beside its
    /// MEMORY.md (its daily logs' too) and among the world topics, by
    /// name, relative to the workspace.
    pub fn conflicts(&self, agent: &str) -> Vec<String> {
        let mut found = Vec::new();
        for dir in [self.agent_dir(agent), self.world()] {
            let Ok(Some(opened)) = self.open_dir(&dir) else {
                continue;
            };
            let Ok(names) = opened.list() else {
                continue;
            };
            let mut names: Vec<String> = names
                .into_iter()
                .filter_map(|(n, _)| n.into_string().ok())
                .filter(|n| is_conflict(n) && !n.starts_with('.'))
                .collect();
            names.sort();
            found.extend(names.into_iter().map(|n| self.relative(&dir.join(n))));
        }
        found
    }

    fn outside(&self, path: &Path) -> Error {
        MemoryError::Outside {
            path: path.to_path_buf(),
            root: self.root.clone(),
        }
        .into()
    }
}

impl Workspace {
    /// The bytes of the regular file at `path` in this workspace, reached
    /// as [`Workspace::file`] reaches it; `None` when it does not exist. A
    /// path leading outside, a FIFO or a device is an error.
    pub fn read(&self, path: &Path) -> Result<Option<Vec<u8>>> {
        let Some((dir, name)) = self.file(path, false)? else {
            return Ok(None);
        };
        let mut bytes = Vec::new();
        match dir.read_into(&name, &mut bytes, READ_LIMIT) {
            Ok(true) => Ok(Some(bytes)),
            Ok(false) => Ok(None),
            Err(e) => Err(crate::error::io_error("", "read", path, e)),
        }
    }
}

/// A notes file to read: its name in a directory reached through handles
/// and opened once ([`Workspace::open_dir`]), so that a directory swapped
/// after the listing cannot redirect the read. No directory: nothing to
/// read.
#[derive(Debug, Clone)]
pub struct At {
    dir: Option<Arc<Dir>>,
    name: OsString,
    /// Appended to (a daily log): read up to its last whole entry.
    appended: bool,
}

impl At {
    pub fn new(dir: Option<Arc<Dir>>, name: &str) -> At {
        At {
            dir,
            name: OsString::from(name),
            appended: false,
        }
    }

    /// The same file, known to be appended to: a read stops before an
    /// entry whose writer died mid-write (see `memory::append`).
    pub fn appended(self) -> At {
        At {
            appended: true,
            ..self
        }
    }

    /// Reads the file into `buf` and says whether there was one to read:
    /// missing, not a regular file (a FIFO), or a symlink leading out of
    /// the workspace is passed over, not an error; recall and search go on
    /// without it. A symlink inside is followed from the root.
    pub fn read_into(&self, ws: &Workspace, buf: &mut Vec<u8>) -> io::Result<bool> {
        let Some(dir) = &self.dir else {
            return Ok(false);
        };
        let read = |dir: &Dir, name: &OsStr, buf: &mut Vec<u8>| match dir
            .read_into(name, buf, READ_LIMIT)
        {
            Err(e) if e.kind() == io::ErrorKind::IsADirectory || beneath::is_not_regular(&e) => {
                Ok(false)
            }
            other => other,
        };
        let start = buf.len();
        let (found, from) = match read(dir, &self.name, buf) {
            Err(e) if beneath::is_link(&e) => match self.resolve(ws, dir) {
                Some((target, name)) => (read(&target, &name, buf)?, Some((target, name))),
                None => (false, None),
            },
            other => (other?, None),
        };
        if found && self.appended {
            let (dir, name) = match &from {
                Some((d, n)) => (d, n.as_os_str()),
                None => (dir.as_ref(), self.name.as_os_str()),
            };
            let read = (buf.len() - start) as u64;
            buf.truncate(start + append::whole_read(dir, name, read) as usize);
        }
        Ok(found)
    }

    /// Its identity and times ([`Stamp`]), when what a read gives is the
    /// file's bytes whole: a regular file here, not a symlink, not one
    /// being appended to (read up to its last whole entry). `None`: it
    /// must be read to be known.
    pub fn stamp(&self) -> Option<Stamp> {
        match (&self.dir, self.appended) {
            (Some(dir), false) => dir.stamp(&self.name).ok().flatten(),
            _ => None,
        }
    }

    /// Its size, when it is a regular, non-empty file inside the workspace.
    pub fn size(&self, ws: &Workspace) -> Option<u64> {
        let dir = self.dir.as_ref()?;
        let mut entry = dir.entry(&self.name).ok()??;
        if entry.kind == FileType::Symlink {
            let (target, name) = self.resolve(ws, dir)?;
            entry = target.entry(&name).ok()??;
        }
        (entry.kind == FileType::RegularFile && entry.len > 0).then_some(entry.len)
    }

    /// Where the symlink this is leads, walked from the workspace's root;
    /// `None` when it leads outside or nowhere.
    fn resolve(&self, ws: &Workspace, dir: &Dir) -> Option<(Dir, OsString)> {
        ws.walk_io(&dir.join(&self.name), false, |root, rel| {
            root.file(rel, false)
        })
        .ok()?
    }
}

/// `2026-11-22`.
pub fn day(date: Date) -> String {
    format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        u8::from(date.month()),
        date.day()
    )
}
