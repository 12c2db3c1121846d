//! Where a workspace's files are, and keeping every path inside it.

use std::ffi::OsString;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use time::Date;

use crate::agent::NotesConfig;
use crate::beneath::{self, Dir};
use crate::error::{Error, Result};

/// A notes workspace: a directory, created as it is written to.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub root: PathBuf,
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
        Workspace { root: root.into() }
    }

    /// The workspace `[notes]` names: `<data>/notes` when unset, a
    /// relative path from the agents directory.
    pub fn of(cfg: &NotesConfig) -> Result<Workspace> {
        if cfg.workspace.is_empty() {
            return Ok(Workspace::at(crate::dirs::data_dir()?.join("notes")));
        }
        let path = PathBuf::from(&cfg.workspace);
        if path.is_absolute() {
            return Ok(Workspace::at(path));
        }
        Ok(Workspace::at(crate::agent::agents_dir()?.join(path)))
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
        let rel = path
            .strip_prefix(&self.root)
            .map_err(|_| self.outside(path))?;
        let fail = |e: io::Error| match beneath::is_outside(&e) {
            true => self.outside(path),
            false => Error::memory("", "open", path, &e),
        };
        match Dir::root(&self.root, create).map_err(fail)? {
            Some(root) => walk(&root, rel).map_err(fail),
            None => Ok(None),
        }
    }

    fn outside(&self, path: &Path) -> Error {
        Error::Input(format!(
            "{} leads outside the notes workspace {}",
            path.display(),
            self.root.display()
        ))
    }

    /// Refuses `path` when it, or the nearest part of it that exists,
    /// resolves outside the workspace (a symlink pointing out, even one
    /// whose target does not exist yet, which a write would create).
    pub fn check_inside(&self, path: &Path) -> Result<()> {
        self.inside(path, 8)
    }

    fn inside(&self, path: &Path, links: u8) -> Result<()> {
        let outside = || {
            Error::Input(format!(
                "{} leads outside the notes workspace {}",
                path.display(),
                self.root.display()
            ))
        };
        let io_err = |e: io::Error| Error::memory("", "resolve", path, &e);
        let root = match fs::canonicalize(&self.root) {
            Ok(root) => root,
            // Nothing exists yet, so nothing can point out of it.
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(io_err(e)),
        };
        if let Ok(meta) = fs::symlink_metadata(path)
            && meta.file_type().is_symlink()
        {
            let target = fs::read_link(path).map_err(io_err)?;
            let target = match path.parent() {
                Some(parent) if target.is_relative() => parent.join(target),
                _ => target,
            };
            if links == 0 {
                return Err(outside());
            }
            return self.inside(&target, links - 1);
        }
        let mut probe = path;
        loop {
            match fs::canonicalize(probe) {
                Ok(real) if real.starts_with(&root) => return Ok(()),
                Ok(_) => return Err(outside()),
                Err(e) if e.kind() == io::ErrorKind::NotFound => match probe.parent() {
                    Some(parent) => probe = parent,
                    None => return Ok(()),
                },
                Err(e) => return Err(io_err(e)),
            }
        }
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
        match dir.read_into(&name, &mut bytes) {
            Ok(true) => Ok(Some(bytes)),
            Ok(false) => Ok(None),
            Err(e) => Err(Error::memory("", "read", path, &e)),
        }
    }

    /// Reads the file at `path` into `buf` when it is a regular file inside
    /// the workspace, and says whether it was; `dir_inside` tells that its
    /// directory was checked. Anything else (missing, outside, a FIFO) is
    /// passed over, not an error: recall and search go on without it.
    pub fn read_into(&self, path: &Path, dir_inside: bool, buf: &mut Vec<u8>) -> io::Result<bool> {
        if !dir_inside {
            return Ok(false);
        }
        let Ok(Some((dir, name))) = self.file(path, false) else {
            return Ok(false);
        };
        match dir.read_into(&name, buf) {
            Err(e) if e.kind() == io::ErrorKind::Other => Ok(false),
            other => other,
        }
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
