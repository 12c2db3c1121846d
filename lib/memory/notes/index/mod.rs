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
//! Kept up to date lazily, by the next search. A file the query may
//! match is read and scanned whatever its entry says; a file the index
//! would skip is stat'ed first, and skipped only when its stamp is its
//! entry's. One whose stamp differs (or that has no entry) is read and
//! its words taken again; a file changed within
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
pub(crate) mod vectors;

use std::collections::{HashMap, HashSet};
use std::ffi::OsStr;
use std::fs::File;
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axe_base::beneath::{Dir, Open, Stamp};
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

/// The stamps of the files `which` of `listed`, taken by as many threads
/// as there are cores (up to 4) when there are many.
fn stat_all(listed: &[Listed], which: &[usize]) -> Vec<(usize, Option<Stamp>)> {
    let stamp = |&i: &usize| (i, listed[i].at.stamp());
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(4));
    if threads < 2 || which.len() < 4096 {
        return which.iter().map(stamp).collect();
    }
    let chunk = which.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let parts: Vec<_> = which
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().map(stamp).collect::<Vec<_>>()))
            .collect();
        // A thread that panicked leaves its files unchecked: read.
        parts
            .into_iter()
            .flat_map(|p| p.join().unwrap_or_default())
            .collect()
    })
}

/// The index file `name` in `dir`, when it is there and whole.
fn load(dir: &Dir, name: &str) -> Option<Segment> {
    let file = dir.open(OsStr::new(name), Open::Read).ok()??;
    Segment::read(file).ok()
}

/// The index of one workspace, for the files of one search.
pub struct Index {
    dir: Dir,
    base: Option<Segment>,
    delta: Option<Segment>,
    /// Per listed file: its entry (segment, number), if it has one.
    entry: Vec<Option<(usize, u32)>>,
    /// Per segment (base, delta), per entry: whether this search lists
    /// its file, and whether it found the entry out of date.
    listed: [Vec<bool>; 2],
    stale: [Vec<bool>; 2],
    /// The files read again at this search, and per listed file its
    /// number there.
    fresh: Builder,
    fresh_of: Vec<Option<u32>>,
    /// Of those, the ones that changed what is stored.
    changed: usize,
    /// Whether the listing was the whole workspace: entries of files not
    /// in it are of files gone.
    whole: bool,
    used: Used,
}

impl Index {
    /// The index of `ws` for the files of `listed` (the whole workspace
    /// when `whole`); built again from the files when `rebuild`, or when
    /// there is none whole. Past `until`, no more files are read for it
    /// (they are searched as without an index). `Err` says why there is
    /// none.
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
        let sizes = [&base, &delta].map(|s| s.as_ref().map_or(0, |s| s.files.len()));
        let mut index = Index {
            dir,
            entry: vec![None; listed.len()],
            listed: sizes.map(|n| vec![false; n]),
            stale: sizes.map(|n| vec![false; n]),
            fresh: Builder::default(),
            fresh_of: vec![None; listed.len()],
            changed: 0,
            whole,
            used: Used {
                used: true,
                rebuilt: rebuild || base.is_none(),
                ..Used::default()
            },
            base,
            delta,
        };
        // The delta's entry of a file, when it has one, else the base's.
        let mut entries: HashMap<&str, (usize, u32)> = HashMap::new();
        for (s, seg) in [&index.base, &index.delta].into_iter().enumerate() {
            for (f, e) in seg.iter().flat_map(|seg| seg.files.iter().enumerate()) {
                entries.insert(&e.path, (s, f as u32));
            }
        }
        for (i, file) in listed.iter().enumerate() {
            if let Some(&(s, f)) = entries.get(file.path.as_str()) {
                index.entry[i] = Some((s, f));
                index.listed[s][f as usize] = true;
            }
        }
        drop(entries);
        if index.used.rebuilt {
            let (mut buf, mut word) = (Vec::new(), Vec::new());
            for (i, file) in listed.iter().enumerate() {
                if i % 64 == 0 && until.is_some_and(|u| Instant::now() >= u) {
                    break;
                }
                index.reread(ws, file, i, &mut buf, &mut word, None);
            }
        }
        Ok(index)
    }

    /// The entry of `(segment, number)`.
    fn stored(&self, (s, f): (usize, u32)) -> Option<&Entry> {
        [&self.base, &self.delta][s]
            .as_ref()
            .map(|seg| &seg.files[f as usize])
    }

    /// Reads listed file `i` again for the index, and says which atoms of
    /// `matcher`'s its words match; `None` when it could not be read
    /// whole (the search reads it, and reports what is amiss).
    fn reread(
        &mut self,
        ws: &Workspace,
        file: &Listed,
        i: usize,
        buf: &mut Vec<u8>,
        word: &mut Vec<u8>,
        mut matcher: Option<&mut Matcher>,
    ) -> Option<u64> {
        let stamp = file.at.stamp()?;
        let read_at = now_ns();
        buf.clear();
        if !matches!(file.at.read_into(ws, buf), Ok(true)) || buf.len() as u64 != stamp.len {
            return None;
        }
        let sections = count_sections(buf) as u32;
        let racy = stamp.mtime_ns >= read_at - RACY_NS;
        // Read again only for being as new as its entry: nothing to save.
        let same = self.entry[i]
            .and_then(|e| self.stored(e))
            .is_some_and(|e| e.stamp == stamp && racy);
        if !same {
            self.changed += 1;
        }
        let entry = Entry {
            path: file.path.clone(),
            stamp,
            read_at,
            sections,
        };
        self.fresh_of[i] = Some(self.fresh.files.len() as u32);
        let mut bits = 0;
        self.fresh.add(entry, |add| {
            each_word(buf, word, &mut |w| {
                add(w);
                if let Some(m) = matcher.as_deref_mut() {
                    bits |= m.folded(w);
                }
            })
        });
        self.used.reindexed += 1;
        Some(bits)
    }

    /// For each listed file, whether the search must read it for
    /// `query`. A file is skipped only when its entry is current (its
    /// stamp checked now) and, for every clause, one of the clause's
    /// words is in none of its words; a file that may match is read
    /// whatever its entry, so its stamp is not even looked at. A file
    /// whose entry is out of date, or that has none, is read again for
    /// the index. `None` when a list read is torn: the index must be
    /// built again.
    pub fn plan(
        &mut self,
        ws: &Workspace,
        listed: &[Listed],
        query: &Query,
        until: Option<Instant>,
    ) -> Option<Vec<Plan>> {
        let mut matcher = Matcher::new(&query.atoms);
        let mut bits_of =
            [&self.base, &self.delta].map(|s| vec![0u64; s.as_ref().map_or(0, |s| s.files.len())]);
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
                        seg.files_of(w, &mut list).ok()?;
                        for &f in &list {
                            bits_of[s][f as usize] |= bits;
                        }
                    }
                }
            }
        }
        // The files read again when the index was opened.
        let mut fresh_bits = vec![0u64; self.fresh.files.len()];
        for (w, files) in self.fresh.words() {
            let bits = matcher.folded(w);
            if bits != 0 {
                for &f in files {
                    fresh_bits[f as usize] |= bits;
                }
            }
        }
        let holds = |bits: u64| {
            query
                .clauses
                .iter()
                .any(|c| c.iter().all(|&a| bits & 1 << a != 0))
        };
        let skip = |sections: u32, len: u64| Plan::Skip {
            sections: sections as usize,
            len: len as usize,
        };
        // The stamps of the files the index would skip, taken on every
        // core: one stat each is most of a warm search's time.
        let checked: Vec<usize> = (0..listed.len())
            .filter(|&i| self.fresh_of[i].is_none())
            .filter(|&i| self.entry[i].is_some_and(|(s, f)| !holds(bits_of[s][f as usize])))
            .collect();
        let mut stamps = vec![None; listed.len()];
        for (i, stamp) in stat_all(listed, &checked) {
            stamps[i] = stamp;
        }
        let (mut buf, mut word) = (Vec::new(), Vec::new());
        let mut past = false;
        let mut plan = Vec::with_capacity(listed.len());
        for (i, file) in listed.iter().enumerate() {
            past = past || (i % 64 == 0 && until.is_some_and(|u| Instant::now() >= u));
            if let Some(k) = self.fresh_of[i] {
                let e = &self.fresh.files[k as usize];
                plan.push(match holds(fresh_bits[k as usize]) {
                    true => Plan::Scan,
                    false => skip(e.sections, e.stamp.len),
                });
                continue;
            }
            if let Some((s, f)) = self.entry[i] {
                if holds(bits_of[s][f as usize]) {
                    plan.push(Plan::Scan);
                    continue;
                }
                let e = self.stored((s, f))?;
                let sections = e.sections;
                let current =
                    stamps[i].filter(|st| *st == e.stamp && st.mtime_ns < e.read_at - RACY_NS);
                if let Some(st) = current {
                    self.used.current += 1;
                    plan.push(skip(sections, st.len));
                    continue;
                }
                self.stale[s][f as usize] = true;
            }
            let bits = match past {
                true => None,
                false => self.reread(ws, file, i, &mut buf, &mut word, Some(&mut matcher)),
            };
            plan.push(match bits {
                Some(bits) if !holds(bits) => {
                    let k = self.fresh.files.len() - 1;
                    let e = &self.fresh.files[k];
                    skip(e.sections, e.stamp.len)
                }
                _ => Plan::Scan,
            });
        }
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

    /// Which entries of segment `s` go on: those not read again nor
    /// found out of date, of files listed (or, when the listing is not
    /// the whole workspace, not listed: another agent's, checked at its
    /// search).
    fn keep(&self, s: usize, newer: &HashSet<&str>) -> Vec<bool> {
        let seg = [&self.base, &self.delta][s].as_ref();
        seg.map(|seg| {
            seg.files
                .iter()
                .enumerate()
                .map(|(f, e)| {
                    !newer.contains(e.path.as_str())
                        && !self.stale[s][f]
                        && (self.listed[s][f] || !self.whole)
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
        let number = generation();
        let Some(base) = self.base.as_ref().filter(|_| !self.used.rebuilt) else {
            // A base of what this search read.
            self.replace(&base_file, BASE, &fresh, number, 0)?;
            self.remove_delta();
            return Ok(());
        };
        let mut delta = Builder::default();
        let keep = self.keep(1, &fresh_paths);
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
        let keep_base = self.keep(0, &newer);
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
