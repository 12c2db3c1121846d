//! The search index of a workspace: a cache, never the truth. For each
//! notes file it keeps the [`Stamp`] the file had when read (device,
//! inode, size, modification and change times) and its number of
//! sections, and for each word (folded, as the scanner sees it) the files
//! that hold it. A search asks it which files may hold the query's words
//! and reads only those; the others count in the ranking's statistics by
//! their recorded sections and size, exactly as if read. The scorer is
//! the same, so the results are the same, byte for byte.
//!
//! Where: `<cache>/notes-index/<sha256 of the workspace's real path,
//! 16 digits>/`, never inside the workspace (then no index is used), so a
//! sync never carries it; deleting it loses nothing.
//!
//! Kept up to date lazily, by the next search: each file listed is
//! stat'ed, and one whose stamp differs from its entry (or that has
//! none) is read and its words taken again; a file changed within
//! [`RACY_NS`] of its read is read again until it is not (a write in the
//! same tick as the read could leave size and times alike). The writers
//! (remember, learn, reflect, import, sync) do nothing more than write
//! the notes: remember keeps its 2 ms.
//!
//! Two files: `base`, the whole index, and `delta`, the files changed
//! since, which names the base it goes with (a delta of another base is
//! passed over). A search that found files changed writes a new delta,
//! or a new base when the delta has grown past a quarter of it, each to
//! a temp file renamed over the old (`replace`), holding the old file's
//! lock (`lock`), tried once: a search never waits for another's write,
//! it skips saving. A reader takes no lock: it sees the old file or the
//! new one. A file that is not whole (`segment::Torn`: killed mid-write
//! on a file system without ordering, truncated, garbage) is rebuilt.

mod segment;

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::File;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axe_base::beneath::{Dir, Open};
use serde::Serialize;

use super::fold;
use super::query::Query;
use super::scan::{WORD, count_sections};
use super::terms::Matcher;
use super::workspace::{At, Workspace};
use crate::lock::{self, Wait};
use crate::replace;
use segment::{Builder, Entry, Segment};

/// A file whose modification time is this close to its read is read
/// again at the next search: it may have changed in the same tick.
const RACY_NS: i64 = 2_000_000_000;

const BASE: &str = "base";
const DELTA: &str = "delta";

/// What a search does with one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Read it and scan it.
    Scan,
    /// It holds none of the query's clauses: count it, unread.
    Skip { sections: usize, len: usize },
}

/// Whether a search used the index, and how fresh it was: `--json`'s
/// `index`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Used {
    pub used: bool,
    /// Files whose entry was current.
    pub current: usize,
    /// Files read again for the index at this search (new or changed).
    pub reindexed: usize,
    /// Files the index showed hold none of the query's words: not read.
    pub skipped: usize,
    /// Files the search read (those that may match; all without an
    /// index).
    pub read: usize,
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

/// A notes file a search lists: its path relative to the workspace, and
/// where it is read from.
pub struct Listed<'a> {
    pub path: String,
    pub at: &'a At,
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

/// Hands every word of `text`, folded, to `each`, as the scanner splits
/// and folds them (`scan::Scanner::scan`): ASCII words lower-cased,
/// others through `fold::words`.
fn each_word(text: &[u8], word: &mut Vec<u8>, each: &mut dyn FnMut(&[u8])) {
    let mut i = 0;
    let mut lower = Vec::new();
    while i < text.len() {
        if !WORD[usize::from(text[i])] {
            i += 1;
            continue;
        }
        let start = i;
        let mut high = 0;
        while i < text.len() && WORD[usize::from(text[i])] {
            high |= text[i];
            i += 1;
        }
        let w = &text[start..i];
        if high < 0x80 {
            lower.clear();
            lower.extend(w.iter().map(u8::to_ascii_lowercase));
            each(&lower);
        } else {
            fold::words(w, word, |w, _| each(w));
        }
    }
}

/// The index's directory for `ws`, when it has one that is not inside
/// the workspace.
fn place(ws: &Workspace) -> Result<PathBuf, String> {
    let cache = ws.index_root().ok_or("no cache directory")?;
    let root = std::fs::canonicalize(&ws.root).map_err(|e| format!("workspace: {e}"))?;
    let inside = || Err("the cache directory is inside the workspace".to_owned());
    if cache.starts_with(&ws.root) || cache.starts_with(&root) {
        return inside();
    }
    std::fs::create_dir_all(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    let real = std::fs::canonicalize(cache).map_err(|e| format!("{}: {e}", cache.display()))?;
    if real.starts_with(&root) {
        return inside();
    }
    let name = crate::hash::sha256_hex(root.as_os_str().as_encoded_bytes());
    Ok(real.join(&name[..16]))
}

/// The index file `name` in `dir`, when it is there and whole.
fn load(dir: &Dir, name: &str) -> Option<Segment> {
    let file = dir.open(OsStr::new(name), Open::Read).ok()??;
    Segment::read(file).ok()
}

/// The index of one workspace, brought up to date for the files of one
/// search.
pub struct Index {
    dir: Dir,
    base: Option<Segment>,
    delta: Option<Segment>,
    /// Per segment (base, delta), per file: the listed file it is, when
    /// current.
    owner: [Vec<Option<u32>>; 2],
    /// The files read again, and per one the listed file it is.
    fresh: Builder,
    fresh_owner: Vec<u32>,
    /// Of those, the ones that changed what is stored.
    changed: usize,
    /// Per listed file: its sections and size, when the index knows them.
    known: Vec<Option<(u32, u64)>>,
    /// Whether the listing was the whole workspace: entries of files not
    /// in it are of files gone.
    whole: bool,
    used: Used,
}

impl Index {
    /// The index of `ws`, checked against the files of `listed` (the
    /// whole workspace when `whole`); rebuilt whole when `rebuild`. Past
    /// `until`, no more files are read for it (they are searched as
    /// without an index). `Err` says why there is none.
    pub fn open(
        ws: &Workspace,
        listed: &[Listed],
        whole: bool,
        rebuild: bool,
        until: Option<Instant>,
    ) -> Result<Index, String> {
        let place = place(ws)?;
        let dir = Dir::root(&place, true)
            .map_err(|e| format!("{}: {e}", place.display()))?
            .ok_or("no index directory")?;
        // It holds the notes' words: the owner's alone, whatever the
        // umask gave the directory.
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(&place, std::fs::Permissions::from_mode(0o700));
        let base = (!rebuild).then(|| load(&dir, BASE)).flatten();
        let delta = base
            .as_ref()
            .and_then(|b| load(&dir, DELTA).filter(|d| d.base == b.generation));
        let mut index = Index {
            owner: [
                vec![None; base.as_ref().map_or(0, |s| s.files.len())],
                vec![None; delta.as_ref().map_or(0, |s| s.files.len())],
            ],
            dir,
            base,
            delta,
            fresh: Builder::default(),
            fresh_owner: Vec::new(),
            changed: 0,
            known: vec![None; listed.len()],
            whole,
            used: Used {
                used: true,
                rebuilt: rebuild,
                ..Used::default()
            },
        };
        if index.base.is_none() {
            index.used.rebuilt = true;
        }
        index.refresh(ws, listed, until);
        Ok(index)
    }

    /// Finds each listed file's entry, and reads again those that have
    /// none current.
    fn refresh(&mut self, ws: &Workspace, listed: &[Listed], until: Option<Instant>) {
        let mut entries: HashMap<&str, (usize, u32)> = HashMap::new();
        for (s, seg) in [&self.base, &self.delta].into_iter().enumerate() {
            for (f, e) in seg.iter().flat_map(|seg| seg.files.iter().enumerate()) {
                entries.insert(&e.path, (s, f as u32));
            }
        }
        let segs = [&self.base, &self.delta];
        let mut buf = Vec::new();
        let mut word = Vec::new();
        let mut past = false;
        for (i, file) in listed.iter().enumerate() {
            let Some(stamp) = file.at.stamp() else {
                continue;
            };
            let stored = entries.get(file.path.as_str()).and_then(|&(s, f)| {
                let e = &segs[s].as_ref()?.files[f as usize];
                Some((s, f, e))
            });
            if let Some((s, f, e)) = stored
                && e.stamp == stamp
                && stamp.mtime_ns < e.read_at - RACY_NS
            {
                self.owner[s][f as usize] = Some(i as u32);
                self.known[i] = Some((e.sections, stamp.len));
                self.used.current += 1;
                continue;
            }
            if past || (i % 64 == 0 && until.is_some_and(|u| Instant::now() >= u)) {
                past = true;
                continue;
            }
            let read_at = now_ns();
            buf.clear();
            // Read as the search reads it; anything amiss and the file
            // is left to the search, which reports it.
            if !matches!(file.at.read_into(ws, &mut buf), Ok(true)) || buf.len() as u64 != stamp.len
            {
                continue;
            }
            let sections = count_sections(&buf) as u32;
            let racy = stamp.mtime_ns >= read_at - RACY_NS;
            let same = stored.is_some_and(|(_, _, e)| e.stamp == stamp && racy);
            if !same {
                self.changed += 1;
            }
            let entry = Entry {
                path: file.path.clone(),
                stamp,
                read_at,
                sections,
            };
            self.fresh
                .add(entry, |each| each_word(&buf, &mut word, each));
            self.fresh_owner.push(i as u32);
            self.known[i] = Some((sections, stamp.len));
            self.used.reindexed += 1;
        }
    }

    /// For each listed file, whether the search must read it for
    /// `query`. A file is skipped only when the index knows it and, for
    /// every clause, one of the clause's words is in none of its words.
    /// `None` when a list read is torn: the index must be built again.
    pub fn plan(&mut self, query: &Query) -> Option<Vec<Plan>> {
        let mut matcher = Matcher::new(&query.atoms);
        let mut has = vec![0u64; self.known.len()];
        let mut torn = false;
        let mut list = Vec::new();
        for (s, seg) in [&self.base, &self.delta].into_iter().enumerate() {
            let Some(seg) = seg else { continue };
            let mut seen = vec![false; seg.word_count()];
            for atom in &query.atoms {
                for key in atom.keys() {
                    for w in seg.beginning(key) {
                        if std::mem::replace(&mut seen[w], true) {
                            continue;
                        }
                        let bits = matcher.folded(seg.word(w));
                        if bits == 0 {
                            continue;
                        }
                        list.clear();
                        if seg.files_of(w, &mut list).is_err() {
                            torn = true;
                            continue;
                        }
                        for &f in &list {
                            if let Some(i) = self.owner[s][f as usize] {
                                has[i as usize] |= bits;
                            }
                        }
                    }
                }
            }
        }
        for (w, files) in self.fresh.words() {
            let bits = matcher.folded(w);
            if bits != 0 {
                for &f in files {
                    has[self.fresh_owner[f as usize] as usize] |= bits;
                }
            }
        }
        if torn {
            return None;
        }
        let holds = |bits: u64| {
            query
                .clauses
                .iter()
                .any(|c| c.iter().all(|&a| bits & 1 << a != 0))
        };
        let plan = self
            .known
            .iter()
            .zip(&has)
            .map(|(known, &bits)| match known {
                Some((sections, len)) if !holds(bits) => Plan::Skip {
                    sections: *sections as usize,
                    len: *len as usize,
                },
                _ => Plan::Scan,
            })
            .collect();
        Some(plan)
    }

    /// Writes back what this search learnt, if anything, and says how it
    /// went.
    pub fn save(mut self) -> Used {
        if self.changed > 0 || self.used.rebuilt {
            self.used.saved = self.write().is_ok();
        }
        self.used.age_seconds = self
            .base_made()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .map(|d| d.as_secs());
        self.used
    }

    /// When the base was written.
    fn base_made(&self) -> Option<SystemTime> {
        let file = self.dir.open(OsStr::new(BASE), Open::Read).ok()??;
        file.metadata().ok()?.modified().ok()
    }

    /// Which entries of segment `s` go on: those not read again, still
    /// listed and current (or, when the listing is not the whole
    /// workspace, not listed: another agent's, checked at its search).
    fn keep(&self, s: usize, newer: &HashSet<&str>, listed_paths: &HashSet<&str>) -> Vec<bool> {
        let seg = [&self.base, &self.delta][s].as_ref();
        seg.map(|seg| {
            seg.files
                .iter()
                .enumerate()
                .map(|(f, e)| {
                    let p = e.path.as_str();
                    !newer.contains(p)
                        && match listed_paths.contains(p) {
                            true => self.owner[s][f].is_some(),
                            false => !self.whole,
                        }
                })
                .collect()
        })
        .unwrap_or_default()
    }

    fn write(&mut self) -> Result<(), ()> {
        let (base_file, _) = lock::create_locked(
            &self.dir,
            OsStr::new(BASE),
            Open::Update,
            Wait::For(Duration::ZERO),
        )
        .map_err(|_| ())?;
        // Another search wrote a base since this one read it: its turn.
        let same = |seg: &Option<Segment>, file: &File| match seg {
            Some(seg) => seg.same_file(file),
            None => true,
        };
        if !self.used.rebuilt && !same(&self.base, &base_file) {
            return Err(());
        }
        let fresh = std::mem::take(&mut self.fresh);
        let fresh_paths: HashSet<&str> = fresh.files.iter().map(|e| e.path.as_str()).collect();
        let listed_paths: HashSet<&str> = self
            .owner
            .iter()
            .zip([&self.base, &self.delta])
            .flat_map(|(owner, seg)| {
                owner
                    .iter()
                    .zip(seg.iter().flat_map(|s| s.files.iter()))
                    .filter(|(o, _)| o.is_some())
                    .map(|(_, e)| e.path.as_str())
            })
            .chain(fresh_paths.iter().copied())
            .collect();
        let number = generation();
        let Some(base) = self.base.as_ref().filter(|_| !self.used.rebuilt) else {
            // A base of what this search read.
            self.replace(&base_file, BASE, &fresh, number, 0)?;
            self.remove_delta();
            return Ok(());
        };
        let mut delta = Builder::default();
        let keep = self.keep(1, &fresh_paths, &listed_paths);
        if let Some(d) = &self.delta {
            delta.add_segment(d, &keep).map_err(|_| ())?;
        }
        let mut newer = fresh_paths.clone();
        if delta.files.len() + fresh.files.len() <= base.files.len() / 4 + 16 {
            delta.append(fresh);
            let (delta_file, _) = lock::create_locked(
                &self.dir,
                OsStr::new(DELTA),
                Open::Update,
                Wait::For(Duration::ZERO),
            )
            .map_err(|_| ())?;
            if !same(&self.delta, &delta_file) {
                return Err(());
            }
            return self.replace(&delta_file, DELTA, &delta, number, base.generation);
        }
        // The delta has grown: one base of all.
        for e in &delta.files {
            newer.insert(e.path.as_str());
        }
        let keep_base = self.keep(0, &newer, &listed_paths);
        let mut all = Builder::default();
        all.add_segment(base, &keep_base).map_err(|_| ())?;
        all.append(delta);
        all.append(fresh);
        self.replace(&base_file, BASE, &all, number, 0)?;
        self.remove_delta();
        Ok(())
    }

    fn replace(
        &self,
        locked: &File,
        name: &str,
        b: &Builder,
        number: u64,
        base: u64,
    ) -> Result<(), ()> {
        replace::replace(locked, &self.dir, OsStr::new(name), |f, _| {
            let mut out = std::io::BufWriter::new(f);
            b.write(number, base, &mut out)?;
            std::io::Write::flush(&mut out)?;
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

    fn remove_delta(&self) {
        // A delta left names the old base and is passed over anyway.
        let _ = self.dir.remove(OsStr::new(DELTA));
    }
}
