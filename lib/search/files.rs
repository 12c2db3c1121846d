//! The notes files a search goes through: those of a scope listed (world
//! topics, each agent's MEMORY.md and daily logs), one named by its path,
//! each read through its directory's handle; a day's log known by its
//! date, and a text's lines. Both the search by words (`search`) and the
//! one by meaning (`meaning`) take them from here.

use std::ffi::OsStr;
use std::io;
use std::path::{Path, PathBuf};

use axe_base::beneath::Stamp;
use rustix::fs::FileType;

use axe_memory::notes::dates;
use axe_memory::notes::note::Unreadable;
use axe_memory::notes::workspace::{At, Scope, Workspace};

/// The notes files of `scope`: world topics, then each agent's MEMORY.md
/// and daily logs; a directory that cannot be listed goes to `unreadable`.
pub fn files(ws: &Workspace, scope: Scope, unreadable: &mut Vec<Unreadable>) -> Vec<Listed> {
    let mut files = md_files(ws, &ws.world(), unreadable);
    for f in &mut files {
        f.topic = f
            .path
            .file_stem()
            .map(|name| name.to_string_lossy().into_owned());
    }
    let agents: Vec<String> = match scope {
        Scope::Agent(agent) => vec![agent.to_owned()],
        Scope::All => {
            // Listed through the workspace's handles like every other
            // directory: an `agents` that leads outside is not listed.
            let dir = ws.root.join("agents");
            let listed = ws
                .open_dir(&dir)
                .and_then(|d| d.map(|d| d.list()).transpose());
            let mut names: Vec<String> = match listed {
                Ok(entries) => entries
                    .unwrap_or_default()
                    .into_iter()
                    .filter(|(_, kind)| matches!(kind, FileType::Directory | FileType::Symlink))
                    .filter_map(|(name, _)| name.into_string().ok())
                    .collect(),
                Err(e) => {
                    unreadable.push(Unreadable::new(dir, &e));
                    Vec::new()
                }
            };
            names.sort();
            names
        }
    };
    for agent in agents {
        let dir = ws.agent_dir(&agent);
        let opened = ws.open_dir(&dir).unwrap_or_else(|e| {
            unreadable.push(Unreadable::new(dir, &e));
            None
        });
        files.push(Listed {
            path: ws.memory(&agent),
            at: At::new(opened, "MEMORY.md"),
            topic: None,
            daily: false,
        });
        let mut daily = md_files(ws, &ws.daily_dir(&agent), unreadable);
        daily.iter_mut().for_each(|f| f.daily = true);
        files.extend(daily);
    }
    files
}

/// The `*.md` files of `dir`, by name; none when it does not exist.
fn md_files(ws: &Workspace, dir: &Path, unreadable: &mut Vec<Unreadable>) -> Vec<Listed> {
    let listed = ws
        .open_dir(dir)
        .and_then(|opened| opened.map(|d| Workspace::md_files(&d)).transpose());
    match listed {
        Ok(files) => files
            .unwrap_or_default()
            .into_iter()
            .map(|(name, at)| Listed {
                path: dir.join(name),
                at,
                topic: None,
                daily: false,
            })
            .collect(),
        Err(e) => {
            unreadable.push(Unreadable::new(dir.to_path_buf(), &e));
            Vec::new()
        }
    }
}

/// A notes file to search: its path, where it is read from (its
/// directory opened once, not once per file), and for a world topic its
/// name.
pub struct Listed {
    pub path: PathBuf,
    at: At,
    pub topic: Option<String>,
    /// A day's log, named for its day.
    pub daily: bool,
}

impl Listed {
    /// Its stamp now, when it can be had.
    pub fn stamp(&self) -> Option<Stamp> {
        self.at.stamp()
    }
}

/// The bytes of `file` into `buf`, when it is a notes file to read.
pub fn read(ws: &Workspace, file: &Listed, buf: &mut Vec<u8>) -> io::Result<()> {
    file.at.read_into(ws, buf).map(|_| ())
}

/// A file to read, by its path relative to the workspace, as a listing
/// would give it (read up to its last whole entry when its append marker
/// is there).
pub fn listed_at(ws: &Workspace, rel: &str) -> Listed {
    let path = ws.root.join(rel);
    let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
    let opened = ws.open_dir(&ws.root.join(dir)).ok().flatten();
    let marker = format!(".{name}.axe-append");
    let appended = opened
        .as_ref()
        .is_some_and(|d| d.entry(OsStr::new(&marker)).ok().flatten().is_some());
    let at = At::new(opened, name);
    Listed {
        path,
        at: if appended { at.appended() } else { at },
        topic: dir
            .eq("world")
            .then(|| name.strip_suffix(".md").unwrap_or(name).to_owned()),
        daily: dir.ends_with("/daily") && dir.starts_with("agents/"),
    }
}

/// Whether the daily log at `path` (relative) is of a date `named` names.
pub fn dated_path(named: &[dates::When], path: &str) -> bool {
    let Some(day) = path
        .strip_prefix("agents/")
        .and_then(|r| r.split_once("/daily/"))
        .map(|(_, d)| d)
    else {
        return false;
    };
    !day.contains('/')
        && named.iter().any(|w| {
            Path::new(day)
                .file_stem()
                .and_then(|s| s.to_str())
                .is_some_and(|s| w.holds(s))
        })
}

/// Where each line of `text` begins.
pub fn line_starts(text: &[u8]) -> Vec<usize> {
    std::iter::once(0)
        .chain(memchr::memchr_iter(b'\n', text).map(|i| i + 1))
        .collect()
}
