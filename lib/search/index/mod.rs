//! The search index of a workspace: a cache, never the truth. It keeps
//! what BM25F needs to rank every section of the notes (see `segment`):
//! per word, the sections that hold it with how often it is in their
//! heading and their body; per section, its length and file; per file,
//! the [`Stamp`] it had when read; per notes directory, the stamp it had
//! when listed, with its files' sections and bytes. A search scores every
//! section from it without reading the notes, then reads only the files
//! of the sections it shows, scanning them again as a search without an
//! index does, so the results are the same, byte for byte (the scores
//! are computed the same way, from the same counts). A query with a
//! phrase (`"rolled back"`) reads the files that hold all of a phrase's
//! words and scans them: the index keeps no positions.
//!
//! Why this shape (bench/RESULTS.md, "Search's index"): the file-level
//! index before it read every file holding any query word (a third of
//! them for two words) and stat'ed every other, 240-260 ms over the
//! bench's 102 MB; scoring from postings and reading ten files takes 20
//! ms there and about 35-50 ms over 1 GB, for an index a fifth of the
//! notes' size. The words are the scanner's own (folded as it folds,
//! placed in heading or body as it places them), so a query's atoms
//! match the same words with or without the index: SQLite's FTS or
//! tantivy would tokenize and score their own way, and weigh on the
//! small executables' size and start-up.
//!
//! Where: `<cache>/notes-index/<sha256 of the workspace's real path,
//! 16 digits>/`, never inside the workspace (then no index is used), so a
//! sync never carries it; deleting it loses nothing.
//!
//! # How fresh it is
//!
//! Stat'ing every file at every search cost about 3.3 µs a file (120 ms
//! for the bench's 36,000 files, over a second for a gigabyte of notes),
//! so a search does not; it checks, in a few milliseconds whatever the
//! size:
//!
//! - **every notes directory's stamp** (`world`, `agents`, each
//!   `agents/<name>/daily`; a few hundred stats): a file created, renamed
//!   or removed by anything (an editor that saves by renaming, `git
//!   checkout`, `rm`) changes it, and a directory that changed is listed
//!   again, its files stat'ed and the changed ones read again;
//! - **each agent's MEMORY.md**, stat'ed;
//! - **the journal**: axe's own writers (remember, learn, reflect,
//!   import, sync's merge) append the path they wrote to `journal` beside
//!   the index (one `O_APPEND` write, no sync: the index is a cache), and
//!   the next search reads those files again;
//! - **a rotating slice** of [`SLICE`] files, stat'ed: a file changed in
//!   place by another program (an editor that writes in place, `echo >>`)
//!   is found within `files / SLICE` searches (36 at 36,000 files), or at
//!   once by `--reindex`; and every file an answer shows is stat'ed and
//!   read before it is shown, so a changed file is never shown from the
//!   index's counts (the search is run again with it read afresh). Save
//!   for a file this search's refresh read (after the search began): a
//!   write since came during the search, which may leave it out, so the
//!   section is shown when its text is still the one scored (its key).
//!   That is a day's log other clients append to as a team server
//!   searches it.
//!
//! A file changed within [`RACY_NS`] of its read is read again at each
//! search until it is not (a write in the same tick as the read could
//! leave size and times alike).
//!
//! # Files
//!
//! `base`, the whole index, and `delta`, the files changed since (and
//! those gone), which names the base it goes with (a delta of another
//! base is passed over). A search that found files changed writes a new
//! delta; past [`DELTA_MAX`] files the base is built again. Each is
//! written to a temp file renamed over the old (`replace`), holding the
//! base's lock (`lock`), tried once: a search never waits for another's
//! write, it skips saving. A reader takes no lock: it sees the old file
//! or the new one. A file that is not whole (`segment::Torn`) is rebuilt.
//!
//! Searches of one workspace in one process (the team server's) share
//! the refresh: see `flight`.

mod column;
mod flight;
mod segment;
pub(crate) mod vectors;

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axe_base::beneath::{Dir, Open, Stamp};
use rustix::fs::FileType;
use serde::Serialize;

use axe_memory::lock::{self, Wait};
use axe_memory::notes::fold;
use axe_memory::notes::journal;
use axe_memory::notes::query::Query;
use axe_memory::notes::scan::{BODY, FIELDS, HEADING, TOPIC, WORD};
use axe_memory::notes::terms::Matcher;
use axe_memory::notes::workspace::{At, Scope, Workspace};
use axe_memory::replace;
use segment::{AGENT, AGENTS, Builder, DAILY, DirEntry, Entry, GONE, SCAN, Segment, Torn, WORLD};

/// A file whose modification time is this close to its read is read
/// again at the next search: it may have changed in the same tick.
const RACY_NS: i64 = 2_000_000_000;

/// Files stat'ed at each search beyond those it must: about 3 ms.
pub const SLICE: u32 = 1024;

/// Past this many files changed since the base, the base is built again.
const DELTA_MAX: usize = 4096;

const BASE: &str = "base";
const DELTA: &str = "delta";
use journal::JOURNAL;
const CURSOR: &str = "cursor";

/// Whether a search used the index, and how fresh it was: `--json`'s
/// `index`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Used {
    pub used: bool,
    /// Files whose entry was current (scored from the index).
    pub current: usize,
    /// Files read again for the index at this search (new or changed).
    pub reindexed: usize,
    /// Files scored from the index, not read.
    pub skipped: usize,
    /// Files the search read (scanned, or shown; all without an index).
    pub read: usize,
    /// Files and directories stat'ed to see whether they changed.
    pub checked: usize,
    /// Built whole at this search (none yet, torn, `--reindex`).
    pub rebuilt: bool,
    /// What this search learnt was written back.
    pub saved: bool,
    /// Seconds since the whole index was last built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub age_seconds: Option<u64>,
    /// Why it was not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// A number for a new index file: the time and the process.
fn generation() -> u64 {
    (now_ns() as u64) ^ (u64::from(std::process::id()) << 40) | 1
}

/// The stamp of a directory or file by its path (a directory followed
/// through symlinks, a file not).
fn stamp_of(path: &Path, follow: bool) -> Option<Stamp> {
    let m = match follow {
        true => std::fs::metadata(path),
        false => std::fs::symlink_metadata(path),
    }
    .ok()?;
    if !follow && !m.file_type().is_file() {
        return None;
    }
    Some(Stamp::of(&m))
}

/// Whether anything is at `path` (a symlink too).
fn exists(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Hands every word of `text` to `add` as the scanner splits, folds and
/// places them (`scan::Scanner::scan`): sections begin at a line that
/// begins with `#`; a heading line's words, and a word that begins a
/// body line and ends at a `:` (a label), count as the heading's. Each
/// section is keyed by the text its vector is made of (`vectors::key`),
/// `topic` a world topic's name.
fn add_text(text: &[u8], topic: Option<&str>, word: &mut Vec<u8>, add: &mut segment::Adder) {
    let key = |raw: &[u8]| vectors::section_key(topic, raw);
    let (mut started, mut line_start, mut from) = (false, true, 0);
    let mut field = BODY;
    let mut lower = Vec::new();
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if line_start {
            if b == b'#' {
                if started {
                    add.end_section(i - from, key(&text[from..i]));
                    from = i;
                }
                field = HEADING;
            }
            started = true;
            line_start = false;
        }
        if b == b'\n' {
            field = BODY;
            line_start = true;
            i += 1;
        } else if WORD[usize::from(b)] {
            let start = i;
            let mut high = 0;
            while i < text.len() && WORD[usize::from(text[i])] {
                high |= text[i];
                i += 1;
            }
            let label = field == BODY
                && text.get(i) == Some(&b':')
                && (start == 0 || text[start - 1] == b'\n');
            let heading = field == HEADING || label;
            let w = &text[start..i];
            if high < 0x80 {
                lower.clear();
                lower.extend(w.iter().map(u8::to_ascii_lowercase));
                add.word(&lower, heading);
            } else {
                fold::words(w, word, |w, _| add.word(w, heading));
            }
        } else {
            i += 1;
        }
    }
    if started {
        add.end_section(text.len() - from, key(&text[from..]));
    }
}

/// Whether the notes directory `path` is in `scope`.
fn in_scope(scope: Scope, path: &str) -> bool {
    match scope {
        Scope::All => true,
        Scope::Agent(a) => {
            path == "world"
                || path
                    .strip_prefix("agents/")
                    .is_some_and(|r| r == a || r.strip_prefix(a).is_some_and(|r| r == "/daily"))
        }
    }
}

/// The index's directory for `ws`, when it has one that is not inside
/// the workspace; the cache directory made if missing.
fn place(ws: &Workspace) -> Result<PathBuf, String> {
    journal::place_if(ws, true)
}

/// The index file `name` in `dir`, when it is there and whole.
fn load(dir: &Dir, name: &str) -> Option<Arc<Segment>> {
    let file = dir.open(OsStr::new(name), Open::Read).ok()??;
    Segment::read(file).ok().map(Arc::new)
}

/// The order files are searched in, which breaks ties: the world's
/// topics, then each agent's MEMORY.md and daily logs, by name.
pub fn order_key(path: &str) -> (u8, &str, u8, &str) {
    if let Some(name) = path.strip_prefix("world/") {
        return (0, "", 0, name);
    }
    let rest = path.strip_prefix("agents/").unwrap_or(path);
    match rest.split_once('/') {
        Some((agent, "MEMORY.md")) => (1, agent, 0, ""),
        Some((agent, daily)) => (1, agent, 1, daily.strip_prefix("daily/").unwrap_or(daily)),
        None => (1, rest, 0, ""),
    }
}

/// Directories that could not be listed, and why, as a search without
/// an index reports them: the world's first, then by path.
pub type Unlisted = Vec<(String, std::io::Error)>;

/// A directory of the notes, with what it lists.
struct Listing {
    files: Vec<(String, At)>,
}

/// The notes directories of the workspace and their files, as a search
/// without an index lists them (`search::files`): `agents` first when
/// `agents` is set, else the ones named.
fn list(ws: &Workspace, dirs: &[(String, u8)], unreadable: &mut Unlisted) -> Vec<Listing> {
    let mut out = Vec::new();
    for (path, kind) in dirs {
        let full = ws.root.join(path);
        let opened = match ws.open_dir(&full) {
            Ok(d) => d,
            Err(e) => {
                unreadable.push((path.clone(), e));
                None
            }
        };
        let files = match (*kind, &opened) {
            (AGENT, _) => vec![("MEMORY.md".to_owned(), At::new(opened.clone(), "MEMORY.md"))],
            (AGENTS, _) | (_, None) => Vec::new(),
            (_, Some(d)) => Workspace::md_files(d).unwrap_or_else(|e| {
                unreadable.push((path.clone(), e));
                Vec::new()
            }),
        };
        out.push(Listing { files });
    }
    out
}

/// The agents the `agents` directory holds (directories and symlinks),
/// sorted.
fn agents(ws: &Workspace) -> Vec<String> {
    let listed = ws
        .open_dir(&ws.root.join("agents"))
        .and_then(|d| d.map(|d| d.list()).transpose());
    let mut names: Vec<String> = listed
        .ok()
        .flatten()
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, kind)| matches!(kind, FileType::Directory | FileType::Symlink))
        .filter_map(|(name, _)| name.into_string().ok())
        .collect();
    names.sort();
    names
}

fn agent_dirs(agent: &str) -> [(String, u8); 2] {
    [
        (format!("agents/{agent}"), AGENT),
        (format!("agents/{agent}/daily"), DAILY),
    ]
}

/// A scored section the index found.
pub struct Hit {
    /// Which segment (base, delta, fresh) and file.
    pub seg: u8,
    pub file: u32,
    /// Its number in its segment: sections are numbered file after file,
    /// in order ([`Index::section_in_file`]).
    pub section: u32,
    pub len: u32,
    /// Where its counts begin in [`Plan::counts`].
    pub at: usize,
}

/// A current file whose sections the index holds: its segment (base,
/// delta, fresh), its number there, its first section and how many.
pub struct Held {
    pub seg: u8,
    pub file: u32,
    pub first: u32,
    pub sections: u32,
}

/// What the index gives a search for a query.
pub struct Plan {
    /// Sections scored from the index.
    pub hits: Vec<Hit>,
    pub counts: Vec<u32>,
    /// Files to read and scan (relative paths): those never scored from
    /// the index, and for a phrase those that may hold it.
    pub scan: Vec<String>,
    /// The current files in scope.
    pub files: usize,
    /// Sections and bytes of the files in scope not in `scan`.
    pub sections: usize,
    pub bytes: usize,
    /// Directories that could not be listed.
    pub unreadable: Unlisted,
}

/// The index of one workspace, made current for one search.
pub struct Index {
    dir: Arc<Dir>,
    /// Base, delta, and the files read again at this search.
    segs: [Option<Arc<Segment>>; 3],
    /// Per segment, per file: whether a later segment replaced it (or it
    /// is gone).
    dead: [Vec<bool>; 3],
    /// Current directories: path -> (segment, number).
    dirs: HashMap<String, (usize, usize)>,
    /// The delta's and this search's files: path -> (segment, number),
    /// the later one.
    over: HashMap<String, (usize, u32)>,
    /// What this search learnt.
    changed: bool,
    journal: Option<u64>,
    unreadable: Unlisted,
    used: Used,
    /// When this search asked for the index (nanoseconds since the
    /// epoch): a file it read since is as fresh as the search.
    began: i64,
}

/// Another search's copy, as `flight` hands it over: the segments
/// shared, what each search changes its own.
impl Clone for Index {
    fn clone(&self) -> Index {
        Index {
            dir: Arc::clone(&self.dir),
            segs: self.segs.clone(),
            dead: self.dead.clone(),
            dirs: self.dirs.clone(),
            over: self.over.clone(),
            changed: self.changed,
            journal: self.journal,
            unreadable: self
                .unreadable
                .iter()
                .map(|(path, e)| {
                    let e = match e.raw_os_error() {
                        Some(n) => std::io::Error::from_raw_os_error(n),
                        None => std::io::Error::new(e.kind(), e.to_string()),
                    };
                    (path.clone(), e)
                })
                .collect(),
            used: self.used.clone(),
            began: self.began,
        }
    }
}

/// What a freshness pass gathers before it becomes a segment.
struct Fresh {
    b: Builder,
    paths: HashSet<String>,
    word: Vec<u8>,
    buf: Vec<u8>,
}

impl Fresh {
    fn new() -> Fresh {
        Fresh {
            b: Builder::default(),
            paths: HashSet::new(),
            word: Vec::new(),
            buf: Vec::new(),
        }
    }

    fn dir(&mut self, path: &str, kind: u8, stamp: Option<Stamp>, listed_at: i64) -> u32 {
        self.b.dir(DirEntry {
            path: path.to_owned(),
            kind,
            stamp,
            listed_at,
            first_file: 0,
            files: 0,
            sections: 0,
            bytes: 0,
        })
    }

    /// Reads `at` (at `path`, in directory `dir`) and adds its words; one
    /// that has no stamp or cannot be read whole is added as read at
    /// every search.
    fn read(&mut self, ws: &Workspace, dir: u32, path: String, at: &At) -> bool {
        if !self.paths.insert(path.clone()) {
            return false;
        }
        let read_at = now_ns();
        let stamp = at.stamp();
        self.buf.clear();
        let whole = stamp.is_some_and(|s| {
            matches!(at.read_into(ws, &mut self.buf), Ok(true)) && self.buf.len() as u64 == s.len
        });
        let (stamp, flags) = match (stamp, whole) {
            (Some(s), true) => (s, 0),
            _ => (
                Stamp {
                    dev: 0,
                    ino: 0,
                    len: 0,
                    mtime_ns: 0,
                    ctime_ns: 0,
                },
                SCAN,
            ),
        };
        let entry = Entry {
            path,
            stamp,
            read_at,
            first_section: 0,
            sections: 0,
            flags,
            dir,
        };
        let topic = entry
            .path
            .strip_prefix("world/")
            .map(|name| name.strip_suffix(".md").unwrap_or(name).to_owned());
        let (buf, word) = (&self.buf, &mut self.word);
        self.b.add(entry, |add| {
            if flags == 0 {
                add_text(buf, topic.as_deref(), word, add);
            }
        });
        true
    }

    fn gone(&mut self, dir: u32, path: String) {
        if !self.paths.insert(path.clone()) {
            return;
        }
        let entry = Entry {
            path,
            stamp: Stamp {
                dev: 0,
                ino: 0,
                len: 0,
                mtime_ns: 0,
                ctime_ns: 0,
            },
            read_at: 0,
            first_section: 0,
            sections: 0,
            flags: GONE,
            dir,
        };
        self.b.add(entry, |_| {});
    }
}

/// Whether an entry read at `read_at` with `stamp` is current for a file
/// whose stamp is now `now`.
fn current(stamp: &Stamp, read_at: i64, now: Option<Stamp>) -> bool {
    now.is_some_and(|n| n == *stamp && n.mtime_ns < read_at - RACY_NS)
}

impl Index {
    /// The index of `ws`, made current (see the module's doc) and what
    /// that learnt written back; built again from the notes when
    /// `rebuild`, or when there is none whole. `Err` says why there is
    /// none. Searches of one workspace in one process share a refresh
    /// that began after they did (`flight`); one that took another's
    /// says it read and wrote nothing itself.
    pub fn open(ws: &Workspace, rebuild: bool, until: Option<Instant>) -> Result<Index, String> {
        let began = now_ns();
        let place = place(ws)?;
        if rebuild {
            return Index::open_at(ws, &place, true, until, began);
        }
        let (opened, ran) = flight::shared(&place, || {
            let mut index = Index::open_at(ws, &place, false, until, began)?;
            index.settle(ws);
            Ok(index)
        });
        let mut index = opened?;
        index.began = began;
        if !ran {
            index.used = Used {
                used: true,
                ..Used::default()
            };
        }
        Ok(index)
    }

    fn open_at(
        ws: &Workspace,
        place: &Path,
        rebuild: bool,
        until: Option<Instant>,
        began: i64,
    ) -> Result<Index, String> {
        let dir = Dir::root(place, true)
            .map_err(|e| format!("{}: {e}", place.display()))?
            .ok_or("no index directory")?;
        // It holds the notes' words: the owner's alone, whatever the
        // umask gave the directory.
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(place, std::fs::Permissions::from_mode(0o700));
        let mut index = Index {
            dir: Arc::new(dir),
            segs: [None, None, None],
            dead: Default::default(),
            dirs: HashMap::new(),
            over: HashMap::new(),
            changed: false,
            journal: None,
            unreadable: Vec::new(),
            used: Used {
                used: true,
                ..Used::default()
            },
            began,
        };
        // The writers' journal: they append to it only when it is there.
        let _ = index.dir.open(OsStr::new(JOURNAL), Open::Append);
        let base = (!rebuild).then(|| load(&index.dir, BASE)).flatten();
        match base {
            Some(base) => {
                let delta = load(&index.dir, DELTA).filter(|d| d.base == base.generation);
                index.segs = [Some(base), delta, None];
                index.view().map_err(|_| "the index is torn")?;
                index.refresh(ws).map_err(|_| "the index is torn")?;
            }
            None => index.build(ws, until)?,
        }
        Ok(index)
    }

    /// Builds the base again from every notes file.
    /// Past `until`, it gives up: the search goes on without it.
    fn build(&mut self, ws: &Workspace, until: Option<Instant>) -> Result<(), String> {
        self.used.rebuilt = true;
        // Files the journal names from now on are read again anyway.
        let journal = self.journal_len();
        // Every MEMORY.md together: a search stats them all, and reads
        // their entries from one block.
        let mut dirs = vec![("world".to_owned(), WORLD)];
        let names = agents(ws);
        for agent in &names {
            dirs.push(agent_dirs(agent)[0].clone());
        }
        for agent in &names {
            dirs.push(agent_dirs(agent)[1].clone());
        }
        let mut fresh = Fresh::new();
        let agents_listed = now_ns();
        let agents_stamp = stamp_of(&ws.root.join("agents"), true);
        fresh.dir("agents", AGENTS, agents_stamp, agents_listed);
        let mut unreadable = Vec::new();
        for (path, kind) in dirs {
            let listed_at = now_ns();
            let stamp = stamp_of(&ws.root.join(&path), true);
            let listing = list(ws, &[(path.clone(), kind)], &mut unreadable);
            let d = fresh.dir(&path, kind, stamp, listed_at);
            for l in listing {
                for (name, at) in l.files {
                    if until.is_some_and(|u| Instant::now() >= u) {
                        return Err("the index was not built before the deadline".into());
                    }
                    let p = format!("{path}/{name}");
                    if kind == AGENT && !exists(&ws.root.join(&p)) {
                        continue;
                    }
                    self.used.reindexed += fresh.read(ws, d, p, &at) as usize;
                }
            }
        }
        // A directory not listed whole is listed again next time.
        for (path, _) in &unreadable {
            if let Some(d) = fresh.b.dirs.iter_mut().find(|d| &d.path == path) {
                d.stamp = None;
            }
        }
        self.unreadable = unreadable;
        let number = generation();
        let mut bytes = Vec::new();
        fresh
            .b
            .write(number, 0, &mut bytes)
            .map_err(|e| format!("index: {e}"))?;
        self.used.saved = self.write_file(BASE, &bytes, None).is_ok();
        if self.used.saved {
            self.remove(DELTA);
            self.truncate_journal(journal);
        }
        let seg = Segment::from_bytes(bytes).map_err(|_| "the index is torn")?;
        self.segs = [Some(Arc::new(seg)), None, None];
        self.view().map_err(|_| "the index is torn".to_owned())
    }

    /// The dead files and current directories of the segments as they
    /// are.
    fn view(&mut self) -> Result<(), Torn> {
        self.dead = Default::default();
        self.dirs.clear();
        for (s, seg) in self.segs.iter().enumerate() {
            let Some(seg) = seg else { continue };
            self.dead[s] = vec![false; seg.file_count as usize];
            for (d, dir) in seg.dirs.iter().enumerate() {
                self.dirs.insert(dir.path.clone(), (s, d));
            }
        }
        // A later segment's entry replaces an earlier one's.
        let mut later: HashMap<String, (usize, u32)> = HashMap::new();
        for s in (1..3).rev() {
            let Some(seg) = &self.segs[s] else { continue };
            for f in 0..seg.file_count {
                let e = seg.file(f)?;
                if later.contains_key(&e.path) || e.flags & GONE != 0 {
                    self.dead[s][f as usize] = true;
                }
                later.entry(e.path).or_insert((s, f));
            }
        }
        if let Some(base) = &self.segs[0] {
            let by_path: HashMap<&str, usize> = base
                .dirs
                .iter()
                .enumerate()
                .map(|(i, d)| (d.path.as_str(), i))
                .collect();
            for path in later.keys() {
                let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
                if let Some(&d) = by_path.get(dir)
                    && let Some(f) = base.find(d, name)?
                {
                    self.dead[0][f as usize] = true;
                }
            }
        }
        self.over = later;
        Ok(())
    }

    /// The current entry of `path`, if any: (segment, number, entry).
    fn entry_of(&self, path: &str) -> Result<Option<(usize, u32, Entry)>, Torn> {
        if let Some(&(s, f)) = self.over.get(path) {
            let e = self.segs[s].as_ref().ok_or(Torn)?.file(f)?;
            return Ok(match e.flags & GONE {
                0 => Some((s, f, e)),
                _ => None,
            });
        }
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        if let Some(base) = &self.segs[0]
            && let Some(d) = base.dirs.iter().position(|d| d.path == dir)
            && let Some(f) = base.find(d, name)?
            && !self.dead[0][f as usize]
        {
            return Ok(Some((0, f, base.file(f)?)));
        }
        Ok(None)
    }

    /// The current files of directory `dir`: (path, stamp, read_at).
    fn files_in(&self, dir: &str) -> Result<Vec<(String, Entry)>, Torn> {
        let mut out = Vec::new();
        for (s, seg) in self.segs.iter().enumerate() {
            let Some(seg) = seg else { continue };
            let Some(d) = seg.dirs.iter().position(|d| d.path == dir) else {
                continue;
            };
            let range = match s {
                0 => seg.dirs[d].first_file..seg.dirs[d].first_file + seg.dirs[d].files,
                _ => 0..seg.file_count,
            };
            for f in range {
                if self.dead[s][f as usize] {
                    continue;
                }
                let e = seg.file(f)?;
                if e.dir as usize == d {
                    out.push((e.path.clone(), e));
                }
            }
        }
        Ok(out)
    }

    /// Brings the index up to date with the notes, as the module's doc
    /// says, without reading what did not change.
    fn refresh(&mut self, ws: &Workspace) -> Result<(), Torn> {
        let mut fresh = Fresh::new();
        let mut checked = 0;
        // The directories: the agents first, then each listed one.
        let mut dirs: Vec<(String, u8, Option<Stamp>, i64)> = Vec::new();
        for (s, d) in self.dirs.values() {
            let dir = &self.segs[*s].as_ref().ok_or(Torn)?.dirs[*d];
            dirs.push((dir.path.clone(), dir.kind, dir.stamp, dir.listed_at));
        }
        dirs.sort_by(|a, b| a.0.cmp(&b.0));
        let known: HashSet<String> = dirs.iter().map(|d| d.0.clone()).collect();
        let mut relist: Vec<(String, u8)> = Vec::new();
        for (path, kind, stamp, listed_at) in &dirs {
            let now = stamp_of(&ws.root.join(path), true);
            checked += 1;
            // Not there then nor now is the same; a stamp within a tick of
            // its listing is not trusted.
            let same = now == *stamp && now.is_none_or(|n| n.mtime_ns < listed_at - RACY_NS);
            match *kind {
                AGENTS if !same => {
                    let listed_at = now_ns();
                    let names = agents(ws);
                    fresh.dir(path, AGENTS, stamp_of(&ws.root.join(path), true), listed_at);
                    let mut want = HashSet::new();
                    for a in &names {
                        for (p, k) in agent_dirs(a) {
                            want.insert(p.clone());
                            if !known.contains(&p) {
                                relist.push((p, k));
                            }
                        }
                    }
                    // Agents gone: their directories listed again (empty).
                    for (p, k, _, _) in &dirs {
                        if matches!(*k, AGENT | DAILY) && !want.contains(p) {
                            relist.push((p.clone(), *k));
                        }
                    }
                }
                WORLD | DAILY if !same => relist.push((path.clone(), *kind)),
                _ => {}
            }
        }
        relist.sort();
        relist.dedup();
        let relisted: HashSet<String> = relist.iter().map(|r| r.0.clone()).collect();
        for (path, kind) in &relist {
            let listed_at = now_ns();
            let there = std::fs::metadata(ws.root.join(path)).is_ok();
            let stamp = stamp_of(&ws.root.join(path), true);
            let mut unreadable = Vec::new();
            let listing = match there {
                true => list(ws, &[(path.clone(), *kind)], &mut unreadable),
                false => Vec::new(),
            };
            let stamp = if unreadable.is_empty() { stamp } else { None };
            self.unreadable.extend(unreadable);
            let d = fresh.dir(path, *kind, stamp, listed_at);
            let old = self.files_in(path)?;
            let mut seen = HashSet::new();
            for l in listing {
                for (name, at) in l.files {
                    let p = format!("{path}/{name}");
                    let now = at.stamp();
                    checked += 1;
                    if *kind == AGENT && !exists(&ws.root.join(&p)) {
                        continue;
                    }
                    seen.insert(p.clone());
                    let keep = old
                        .iter()
                        .find(|(q, _)| *q == p)
                        .is_some_and(|(_, e)| e.flags == 0 && current(&e.stamp, e.read_at, now));
                    if !keep {
                        self.used.reindexed += fresh.read(ws, d, p, &at) as usize;
                    }
                }
            }
            for (p, _) in old {
                if !seen.contains(&p) {
                    fresh.gone(d, p);
                }
            }
        }
        // Each agent's MEMORY.md, and what the journal names.
        let mut named: Vec<String> = dirs
            .iter()
            .filter(|d| d.1 == AGENT && !relisted.contains(&d.0))
            .map(|d| format!("{}/MEMORY.md", d.0))
            .collect();
        let (journal, len) = self.read_journal();
        self.journal = Some(len);
        named.extend(journal);
        // The rotating slice of the base, and every file of the delta
        // (at most DELTA_MAX, most often the day's few logs).
        let cursor = self.cursor();
        if let Some(base) = &self.segs[0] {
            let n = base.file_count;
            if n > 0 {
                let start = (cursor % u64::from(n)) as u32;
                let k = SLICE.min(n);
                for i in 0..k {
                    let f = (start + i) % n;
                    if !self.dead[0][f as usize] {
                        named.push(base.file(f)?.path);
                    }
                }
                self.set_cursor(u64::from(start) + u64::from(k));
            }
        }
        if let Some(delta) = &self.segs[1] {
            for f in 0..delta.file_count {
                if !self.dead[1][f as usize] {
                    named.push(delta.file(f)?.path);
                }
            }
        }
        let mut opened: HashMap<String, Option<Arc<Dir>>> = HashMap::new();
        named.sort();
        named.dedup();
        for p in named {
            let Some((dir, name)) = p.rsplit_once('/') else {
                continue;
            };
            if relisted.contains(dir) {
                continue;
            }
            // Only notes files: a line of the journal is not trusted.
            let Some(&(s, d)) = self.dirs.get(dir) else {
                continue;
            };
            let kind = self.segs[s].as_ref().ok_or(Torn)?.dirs[d].kind;
            if !name.ends_with(".md")
                || name.starts_with('.')
                || kind == AGENTS
                || (kind == AGENT && name != "MEMORY.md")
            {
                continue;
            }
            let now = stamp_of(&ws.root.join(&p), false);
            checked += 1;
            let entry = self.entry_of(&p)?;
            // A file read at every search is not read for the index: a
            // change of what it is shows in its directory.
            if let Some((_, _, e)) = &entry
                && (e.flags & SCAN != 0 || current(&e.stamp, e.read_at, now))
            {
                continue;
            }
            let handle = opened
                .entry(dir.to_owned())
                .or_insert_with(|| ws.open_dir(&ws.root.join(dir)).ok().flatten())
                .clone();
            let at = At::new(handle, name);
            let d = fresh.dir_of(self, dir)?;
            if !exists(&ws.root.join(&p)) {
                if entry.is_some() {
                    fresh.gone(d, p);
                }
                continue;
            }
            self.used.reindexed += fresh.read(ws, d, p, &at) as usize;
        }
        self.used.checked = checked;
        if fresh.paths.is_empty() && fresh.b.dirs.is_empty() {
            return Ok(());
        }
        self.changed = true;
        self.segs[2] = Some(Arc::new(fresh.b.into_segment()?));
        self.view()
    }

    /// The journal's paths, and its length read.
    fn read_journal(&self) -> (Vec<String>, u64) {
        let Ok(Some(f)) = self.dir.open(OsStr::new(JOURNAL), Open::Read) else {
            return (Vec::new(), 0);
        };
        let len = f.metadata().map_or(0, |m| m.len()).min(16 << 20);
        let mut bytes = vec![0; len as usize];
        if f.read_exact_at(&mut bytes, 0).is_err() {
            return (Vec::new(), 0);
        }
        // A line cut short (a writer killed mid-write) is left out: its
        // file is found by the rotating check.
        let whole = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let paths = String::from_utf8_lossy(&bytes[..whole])
            .lines()
            .filter(|l| !l.is_empty() && !l.split('/').any(|c| c == ".." || c.is_empty()))
            .map(str::to_owned)
            .collect();
        (paths, len)
    }

    fn journal_len(&self) -> u64 {
        match self.dir.open(OsStr::new(JOURNAL), Open::Read) {
            Ok(Some(f)) => f.metadata().map_or(0, |m| m.len()),
            _ => 0,
        }
    }

    /// Empties the journal when no writer added to it since it was read
    /// (one that did is read again next time).
    fn truncate_journal(&self, read: u64) {
        if let Ok(Some(f)) = self.dir.open(OsStr::new(JOURNAL), Open::Update)
            && f.metadata().is_ok_and(|m| m.len() == read)
        {
            let _ = f.set_len(0);
        }
    }

    fn cursor(&self) -> u64 {
        let mut b = [0u8; 8];
        match self.dir.open(OsStr::new(CURSOR), Open::Read) {
            Ok(Some(f)) if f.read_exact_at(&mut b, 0).is_ok() => u64::from_le_bytes(b),
            _ => 0,
        }
    }

    fn set_cursor(&self, n: u64) {
        if let Ok(Some(f)) = self.dir.open(OsStr::new(CURSOR), Open::Update) {
            let _ = f.write_all_at(&n.to_le_bytes(), 0);
        }
    }

    /// The sections of the current files in `scope` for `query`, scored
    /// from the index; `topic` gives a world topic's counts from its name.
    /// The files `read` are read and scanned, not scored from the index
    /// (one found changed as the search showed it).
    pub fn plan(
        &mut self,
        scope: Scope,
        query: &Query,
        topic: &mut dyn FnMut(&str) -> Option<Vec<u32>>,
        read: &HashSet<String>,
    ) -> Result<Plan, Torn> {
        let clauses = query.clauses.len();
        let in_scope = |path: &str| in_scope(scope, path);
        let mut matcher = Matcher::new(&query.atoms);
        // Single words are scored from the index; a phrase's files read.
        let single: Vec<Option<usize>> = query
            .clauses
            .iter()
            .map(|c| (c.len() == 1).then_some(c[0]))
            .collect();
        let phrases: Vec<&Vec<usize>> = query.clauses.iter().filter(|c| c.len() > 1).collect();
        let mut plan = Plan {
            hits: Vec::new(),
            counts: Vec::new(),
            scan: Vec::new(),
            files: 0,
            sections: 0,
            bytes: 0,
            unreadable: {
                let mut u = std::mem::take(&mut self.unreadable);
                u.sort_by(|a, b| (a.0 != "world", &a.0).cmp(&(b.0 != "world", &b.0)));
                u
            },
        };
        let mut scanned: HashSet<(usize, u32)> = HashSet::new();
        let mut extra = Vec::new();
        for p in read {
            match self.entry_of(p)? {
                Some((s, f, _)) => {
                    scanned.insert((s, f));
                }
                None => extra.push(p.clone()),
            }
        }
        for (s, seg) in self.segs.iter().enumerate() {
            let Some(seg) = seg else { continue };
            let scope_of: Vec<bool> = seg.dirs.iter().map(|d| in_scope(&d.path)).collect();
            let live = |f: u32| -> Result<Option<(u32, u32, u32)>, Torn> {
                let (first, n, flags, dir) = seg.file_brief(f)?;
                Ok(
                    (!self.dead[s][f as usize] && scope_of[dir as usize] && flags & GONE == 0)
                        .then_some((first, n, flags)),
                )
            };
            // The words of the query in this segment, and what they match.
            let mut terms: Vec<(u32, u64)> = Vec::new();
            let mut seen = HashSet::new();
            for atom in &query.atoms {
                for key in atom.keys() {
                    seg.beginning(key, &mut |text, i| {
                        if seen.insert(i) {
                            let bits = matcher.folded(text);
                            if bits != 0 {
                                terms.push((i, bits));
                            }
                        }
                        Ok(())
                    })?;
                }
            }
            // The files a phrase may be in: all its words.
            for phrase in &phrases {
                let mut files: Option<HashSet<u32>> = None;
                for &a in phrase.iter() {
                    let mut with = HashSet::new();
                    for &(i, bits) in &terms {
                        if bits & 1 << a != 0 {
                            seg.postings(i, &mut |sec, _, _| {
                                with.insert(sec);
                            })?;
                        }
                    }
                    let mut holding = HashSet::new();
                    for sec in with {
                        holding.insert(seg.section(sec)?.1);
                    }
                    files = Some(match files {
                        None => holding,
                        Some(f) => f.intersection(&holding).copied().collect(),
                    });
                }
                for f in files.unwrap_or_default() {
                    if live(f)?.is_some() {
                        scanned.insert((s, f));
                    }
                }
            }
            // Files read at every search; then the sections and bytes of
            // the others.
            if s > 0 {
                for f in 0..seg.file_count {
                    if live(f)?.is_some_and(|(_, _, flags)| flags & SCAN != 0) {
                        scanned.insert((s, f));
                    }
                }
            } else {
                for &f in &seg.scan {
                    if live(f)?.is_some() {
                        scanned.insert((0, f));
                    }
                }
            }
            match s {
                0 => {
                    for (d, dir) in seg.dirs.iter().enumerate() {
                        if scope_of[d] {
                            plan.sections += dir.sections as usize;
                            plan.bytes += dir.bytes as usize;
                            plan.files += dir.files as usize;
                        }
                    }
                    for (f, &dead) in self.dead[0].iter().enumerate() {
                        if !dead {
                            continue;
                        }
                        let (_, n, flags, dir) = seg.file_brief(f as u32)?;
                        if scope_of[dir as usize] {
                            plan.files -= 1;
                            if flags & (SCAN | GONE) == 0 {
                                plan.sections -= n as usize;
                                plan.bytes -= seg.file(f as u32)?.stamp.len as usize;
                            }
                        }
                    }
                }
                _ => {
                    for f in 0..seg.file_count {
                        if let Some((_, n, flags)) = live(f)? {
                            plan.files += 1;
                            if flags & SCAN == 0 {
                                plan.sections += n as usize;
                                plan.bytes += seg.file(f)?.stamp.len as usize;
                            }
                        }
                    }
                }
            }
            for &(s2, f) in &scanned {
                if s2 == s && seg.file_brief(f)?.2 & SCAN == 0 {
                    let (_, n, _, _) = seg.file_brief(f)?;
                    plan.sections -= n as usize;
                    plan.bytes -= seg.file(f)?.stamp.len as usize;
                }
            }
            // The sections: counts of each single word, by field.
            // Whether a file's sections are scored: current, in scope, not
            // read. For the base, by its directories' ranges of files,
            // without reading the file's entry.
            let ranges: Vec<(u32, u32)> = seg
                .dirs
                .iter()
                .enumerate()
                .filter(|(d, _)| scope_of[*d])
                .map(|(_, d)| (d.first_file, d.first_file + d.files))
                .collect();
            let everything = scope_of.iter().all(|&x| x);
            let scored = |f: u32| -> Result<bool, Torn> {
                if self.dead[s][f as usize] || (!scanned.is_empty() && scanned.contains(&(s, f))) {
                    return Ok(false);
                }
                match s {
                    0 if everything => Ok(true),
                    0 => Ok(ranges.iter().any(|&(a, b)| a <= f && f < b)),
                    _ => Ok(live(f)?.is_some()),
                }
            };
            // The single words' postings, merged in section order: each
            // section met once, its counts summed as it goes by (no table
            // over every section: a gigabyte of notes has a million).
            let first_hit = plan.hits.len();
            let mut streams = Vec::new();
            for &(i, bits) in &terms {
                let cs: Vec<usize> = (0..clauses)
                    .filter(|&c| single[c].is_some_and(|a| bits & 1 << a != 0))
                    .collect();
                if !cs.is_empty() {
                    streams.push((seg.postings_of(i)?, cs));
                }
            }
            let mut heap = std::collections::BinaryHeap::new();
            for (k, (p, _)) in streams.iter_mut().enumerate() {
                if let Some(x) = p.next()? {
                    heap.push(std::cmp::Reverse((x.0, k, x.1, x.2)));
                }
            }
            // The section being summed, and where its counts are (None:
            // not one to score).
            let mut at_sec: Option<(u32, Option<usize>)> = None;
            while let Some(std::cmp::Reverse((sec, k, heading, body))) = heap.pop() {
                if let Some(x) = streams[k].0.next()? {
                    heap.push(std::cmp::Reverse((x.0, k, x.1, x.2)));
                }
                let at = match at_sec {
                    Some((s2, at)) if s2 == sec => at,
                    _ => {
                        let (len, file) = seg.section(sec)?;
                        let at = match scored(file)? {
                            true => {
                                let at = plan.counts.len();
                                plan.counts.resize(at + FIELDS * clauses, 0);
                                plan.hits.push(Hit {
                                    seg: s as u8,
                                    file,
                                    section: sec,
                                    len,
                                    at,
                                });
                                Some(at)
                            }
                            false => None,
                        };
                        at_sec = Some((sec, at));
                        at
                    }
                };
                if let Some(at) = at {
                    for &c in &streams[k].1 {
                        plan.counts[at + HEADING * clauses + c] += heading;
                        plan.counts[at + BODY * clauses + c] += body;
                    }
                }
            }
            let merged = first_hit..plan.hits.len();
            // A world topic's name counts in its first section.
            let world = seg.dirs.iter().position(|d| d.path == "world");
            if let Some(w) = world.filter(|&w| scope_of[w]) {
                let range = match s {
                    0 => seg.dirs[w].first_file..seg.dirs[w].first_file + seg.dirs[w].files,
                    _ => 0..seg.file_count,
                };
                for f in range {
                    let Some((first, n, _)) = live(f)? else {
                        continue;
                    };
                    let (.., dir) = seg.file_brief(f)?;
                    if dir as usize != w || n == 0 || scanned.contains(&(s, f)) {
                        continue;
                    }
                    let name = seg.name(f)?;
                    let name = std::str::from_utf8(&name).map_err(|_| Torn)?;
                    let Some(named) = topic(name.strip_suffix(".md").unwrap_or(name)) else {
                        continue;
                    };
                    let sorted = &plan.hits[merged.clone()];
                    let found = sorted
                        .binary_search_by_key(&first, |h| h.section)
                        .ok()
                        .map(|k| sorted[k].at);
                    let at = match found {
                        Some(at) => at,
                        None => {
                            let at = plan.counts.len();
                            plan.counts.resize(at + FIELDS * clauses, 0);
                            plan.hits.push(Hit {
                                seg: s as u8,
                                file: f,
                                section: first,
                                len: seg.section(first)?.0,
                                at,
                            });
                            at
                        }
                    };
                    plan.counts[at + TOPIC * clauses..at + (TOPIC + 1) * clauses]
                        .copy_from_slice(&named);
                }
            }
        }
        for (s, f) in scanned {
            plan.scan
                .push(self.segs[s].as_ref().ok_or(Torn)?.file(f)?.path);
        }
        plan.scan.extend(extra);
        plan.scan.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
        Ok(plan)
    }

    /// The current files in `scope` whose sections the index holds, in
    /// the order of their sections; and the paths of those read at every
    /// search, in the order searched.
    pub fn files_with_sections(&self, scope: Scope) -> Result<(Vec<Held>, Vec<String>), Torn> {
        let (mut held, mut scan) = (Vec::new(), Vec::new());
        for (s, seg) in self.segs.iter().enumerate() {
            let Some(seg) = seg else { continue };
            let scope_of: Vec<bool> = seg.dirs.iter().map(|d| in_scope(scope, &d.path)).collect();
            let mut each = |f: u32| -> Result<(), Torn> {
                let (first, n, flags, dir) = seg.file_brief(f)?;
                if self.dead[s][f as usize] || !scope_of[dir as usize] || flags & GONE != 0 {
                    return Ok(());
                }
                match flags & SCAN {
                    0 => held.push(Held {
                        seg: s as u8,
                        file: f,
                        first,
                        sections: n,
                    }),
                    _ => scan.push(seg.file(f)?.path),
                }
                Ok(())
            };
            // In the order of their sections: the base's vectors are read
            // in that order.
            (0..seg.file_count).try_for_each(&mut each)?;
        }
        scan.sort_by(|a, b| order_key(a).cmp(&order_key(b)));
        Ok((held, scan))
    }

    /// The sections the base holds of `path` (first, how many), current
    /// or replaced by a later segment: where its vectors were.
    pub fn base_sections(&self, path: &str) -> Option<(u32, u32)> {
        let base = self.segs[0].as_ref()?;
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        let d = base.dirs.iter().position(|d| d.path == dir)?;
        let f = base.find(d, name).ok()??;
        let (first, n, flags, _) = base.file_brief(f).ok()?;
        (flags & (SCAN | GONE) == 0).then_some((first, n))
    }

    /// The base, if there is one.
    pub fn base(&self) -> Option<&Segment> {
        self.segs[0].as_deref()
    }

    /// Section `s` of segment `seg`'s key.
    pub fn key(&self, seg: u8, s: u32) -> Result<u64, Torn> {
        self.segs[seg as usize].as_ref().ok_or(Torn)?.key(s)
    }

    /// Where a hit's section begins in its file as the index read it:
    /// the bytes of the file's sections before it.
    pub fn offset_in_file(&self, h: &Hit) -> Result<usize, Torn> {
        let seg = self.segs[h.seg as usize].as_ref().ok_or(Torn)?;
        let first = h.section - self.section_in_file(h)?;
        (first..h.section).try_fold(0usize, |at, s| Ok(at + seg.section(s)?.0 as usize))
    }

    /// Whether `entry` was read since this search began: what it holds
    /// is then as fresh as the search, and a write since is one the
    /// search may leave out.
    pub fn read_during(&self, entry: &Entry) -> bool {
        entry.flags == 0 && entry.read_at >= self.began
    }

    /// The path and stamp of file `f` of segment `seg`.
    pub fn file(&self, seg: u8, f: u32) -> Result<Entry, Torn> {
        self.segs[seg as usize].as_ref().ok_or(Torn)?.file(f)
    }

    /// The path and stamp of a hit's file.
    pub fn hit_file(&self, h: &Hit) -> Result<Entry, Torn> {
        self.segs[h.seg as usize].as_ref().ok_or(Torn)?.file(h.file)
    }

    /// A hit's section's number in its file.
    pub fn section_in_file(&self, h: &Hit) -> Result<u32, Torn> {
        let seg = self.segs[h.seg as usize].as_ref().ok_or(Torn)?;
        let (first, n, _, _) = seg.file_brief(h.file)?;
        h.section.checked_sub(first).filter(|&k| k < n).ok_or(Torn)
    }

    /// The name of a hit's file, for ordering.
    pub fn hit_path(&self, h: &Hit) -> Result<String, Torn> {
        Ok(self.hit_file(h)?.path)
    }

    /// The file at `path` changed since it was read: the next plan reads
    /// it again.
    pub fn stale(&mut self, ws: &Workspace, path: &str) -> Result<(), Torn> {
        let Some((dir, name)) = path.rsplit_once('/') else {
            return Ok(());
        };
        let mut fresh = Fresh::new();
        // Keep what this search read again before.
        let mut b = Builder::default();
        if let Some(seg) = &self.segs[2] {
            let keep: Vec<bool> = (0..seg.file_count)
                .map(|f| seg.file(f).map(|e| e.path != path))
                .collect::<Result<_, _>>()?;
            b.add_segment(seg, &keep)?;
        }
        fresh.b = b;
        let d = fresh.dir_of(self, dir)?;
        let handle = ws.open_dir(&ws.root.join(dir)).ok().flatten();
        fresh.read(ws, d, path.to_owned(), &At::new(handle, name));
        self.used.reindexed += 1;
        self.changed = true;
        self.segs[2] = Some(Arc::new(fresh.b.into_segment()?));
        self.view()
    }

    /// Writes back what this search learnt since it opened the index
    /// (a file found changed as it was shown), if anything, and says how
    /// it went.
    pub fn save(mut self, ws: &Workspace) -> Used {
        self.settle(ws);
        self.used.age_seconds = self
            .base_made()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .map(|d| d.as_secs());
        self.used
    }

    /// Writes back what the index learnt, if anything: a delta, which
    /// then stands for the files read again. Past [`DELTA_MAX`] files
    /// changed since the base (a checkout of another branch, an import),
    /// the base is built again from the notes instead: else every search
    /// would read them all again.
    fn settle(&mut self, ws: &Workspace) {
        if !self.changed || self.used.rebuilt {
            return;
        }
        self.changed = false;
        let saved = match self.write_delta() {
            Ok(delta) => {
                // What is on disk now, so a later save of this search
                // finds the delta it wrote there.
                let before = [self.segs[1].take(), self.segs[2].take()];
                self.segs[1] = Some(Arc::new(delta));
                if self.view().is_err() {
                    [self.segs[1], self.segs[2]] = before;
                    let _ = self.view();
                }
                true
            }
            Err(true) => {
                let reindexed = self.used.reindexed;
                let built = self.build(ws, None).is_ok() && self.used.saved;
                self.used.reindexed += reindexed;
                built
            }
            Err(false) => false,
        };
        self.used.saved |= saved;
        if saved && let Some(len) = self.journal {
            self.truncate_journal(len);
        }
    }

    /// When the base was written.
    fn base_made(&self) -> Option<SystemTime> {
        let file = self.dir.open(OsStr::new(BASE), Open::Read).ok()??;
        file.metadata().ok()?.modified().ok()
    }

    /// The delta written; `Err(true)`: too many files for a delta.
    fn write_delta(&mut self) -> Result<Segment, bool> {
        let base = self.segs[0].as_ref().ok_or(false)?;
        let mut b = Builder::default();
        for s in 1..3 {
            let Some(seg) = &self.segs[s] else { continue };
            let keep: Vec<bool> = self.dead[s].iter().map(|d| !d).collect();
            // Tombstones stay while the base has the file.
            let keep: Vec<bool> = keep
                .iter()
                .enumerate()
                .map(|(f, &k)| {
                    k || seg
                        .file(f as u32)
                        .is_ok_and(|e| e.flags & GONE != 0 && self.later_gone(s, f as u32, &e))
                })
                .collect();
            b.add_segment(seg, &keep).map_err(|_| false)?;
        }
        if b.files.len() > DELTA_MAX {
            return Err(true);
        }
        let mut bytes = Vec::new();
        b.write(generation(), base.generation, &mut bytes)
            .map_err(|_| false)?;
        let (base_file, _) = lock::create_locked(
            &self.dir,
            OsStr::new(BASE),
            Open::Update,
            Wait::For(Duration::ZERO),
        )
        .map_err(|_| false)?;
        // Another search wrote a base or a delta since this one read
        // them: its turn (writing over it would lose what it learnt).
        if !base.same_file(&base_file) {
            return Err(false);
        }
        let on_disk = self.dir.open(OsStr::new(DELTA), Open::Read).ok().flatten();
        let same = match (&self.segs[1], on_disk) {
            // One this search wrote is in memory: known by its number.
            (Some(seg), Some(f)) => {
                seg.same_file(&f) || Segment::read(f).is_ok_and(|d| d.generation == seg.generation)
            }
            (Some(_), None) => false,
            (None, Some(f)) => Segment::read(f).is_ok_and(|d| d.base != base.generation),
            (None, None) => true,
        };
        if !same {
            return Err(false);
        }
        self.write_file(DELTA, &bytes, Some(&base_file))
            .map_err(|_| false)?;
        Segment::from_bytes(bytes).map_err(|_| false)
    }

    /// Whether tombstone `f` of segment `s` is the latest word on its
    /// path (no later entry brought it back).
    fn later_gone(&self, s: usize, _f: u32, e: &Entry) -> bool {
        match s {
            2 => true,
            _ => self.segs[2].as_ref().is_none_or(|fresh| {
                (0..fresh.file_count).all(|g| fresh.file(g).is_ok_and(|x| x.path != e.path))
            }),
        }
    }

    /// Writes index file `name` whole, holding the base's lock (taken
    /// here unless `locked` is it).
    fn write_file(&self, name: &str, bytes: &[u8], locked: Option<&File>) -> Result<(), ()> {
        let taken;
        let base_lock = match locked {
            Some(f) => f,
            None => {
                taken = lock::create_locked(
                    &self.dir,
                    OsStr::new(BASE),
                    Open::Update,
                    Wait::For(Duration::ZERO),
                )
                .map_err(|_| ())?
                .0;
                &taken
            }
        };
        let target = match name {
            BASE => None,
            _ => Some(
                lock::create_locked(
                    &self.dir,
                    OsStr::new(name),
                    Open::Update,
                    Wait::For(Duration::ZERO),
                )
                .map_err(|_| ())?
                .0,
            ),
        };
        if name == DELTA {
            return self.write_unsynced(name, bytes);
        }
        let file = target.as_ref().unwrap_or(base_lock);
        replace::replace(file, &self.dir, OsStr::new(name), |f, _| {
            let mut out = std::io::BufWriter::new(f);
            out.write_all(bytes)?;
            out.flush()?;
            #[cfg(feature = "test-hooks")]
            if std::env::var_os("AXE_TEST_INDEX_STALL").is_some() {
                // A kill -9 test's moment: the new file written, not yet
                // renamed.
                loop {
                    std::thread::sleep(Duration::from_secs(1));
                }
            }
            Ok(())
        })
        .map_err(|_| ())
    }

    /// Writes index file `name` whole through a temp file renamed over
    /// it, without a sync: the delta is written after most searches that
    /// follow a write, and a sync costs tens of milliseconds. It is only a
    /// cache: after a crash that left it half written it is torn, found
    /// so (its length, its checksums), and passed over. Called holding
    /// its lock, which swept a temp file a killed writer left.
    fn write_unsynced(&self, name: &str, bytes: &[u8]) -> Result<(), ()> {
        let temp = format!(".{name}.axe-new");
        let temp = OsStr::new(&temp);
        let _ = self.dir.remove(temp);
        let mut file = self.dir.open(temp, Open::New).ok().flatten().ok_or(())?;
        let written =
            file.write_all(bytes).is_ok() && self.dir.rename(temp, OsStr::new(name)).is_ok();
        if !written {
            let _ = self.dir.remove(temp);
            return Err(());
        }
        Ok(())
    }

    fn remove(&self, name: &str) {
        // A delta left names the old base and is passed over anyway.
        let _ = self.dir.remove(OsStr::new(name));
    }
}

impl Fresh {
    /// The number in this fresh segment of the current directory `dir`.
    fn dir_of(&mut self, index: &Index, dir: &str) -> Result<u32, Torn> {
        if let Some(i) = self.b.dirs.iter().position(|d| d.path == dir) {
            return Ok(i as u32);
        }
        let &(s, d) = index.dirs.get(dir).ok_or(Torn)?;
        let e = &index.segs[s].as_ref().ok_or(Torn)?.dirs[d];
        Ok(self.dir(dir, e.kind, e.stamp, e.listed_at))
    }
}
