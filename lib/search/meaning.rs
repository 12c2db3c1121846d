//! The side of a search that ranks by meaning: every section in scope
//! scored by the cosine of its vector with the query's (`index::vectors`),
//! the sections with none yet embedded until the deadline, and the best
//! kept.
//!
//! The sections come from the index, each with its key (a hash of its
//! text), so a search reads no notes file but those it embeds from or
//! shows: the files read at every search (a symlink, one being appended
//! to) and, without an index, every file, are read and cut into sections
//! here as the index cuts them.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::Instant;

use axe_embed::Model;
use axe_memory::notes::dates;
use axe_memory::notes::note::Unreadable;
use axe_memory::notes::workspace::{Scope, Workspace};

use crate::files::{Listed, dated_path, files, line_starts, listed_at, read};
use crate::index::vectors::{self, Vectors, VectorsUsed};
use crate::index::{Held, Index, Used};

/// A section of a file, as the index cuts them: from a line that begins
/// with `#` to the next such line.
pub struct Part {
    /// Its first line and the line after its last, from 0.
    pub lines: (usize, usize),
    /// Its key (`vectors::key`), 0 for one of blanks.
    pub key: u64,
    /// Its text as embedded, if not blank.
    pub text: Option<String>,
}

/// The sections of `buf`, a file of the world topic `topic` if any, in
/// order: blank ones too, so that their numbers are the index's.
pub fn parts(buf: &[u8], topic: Option<&str>) -> Vec<Part> {
    let starts = line_starts(buf);
    let mut out = Vec::new();
    if buf.is_empty() {
        return out;
    }
    let mut close = |from: usize, to: usize, end: usize| {
        let text = vectors::section_text(topic, &buf[starts[from]..end]);
        out.push(Part {
            lines: (from, to),
            key: text.as_deref().map_or(0, vectors::key),
            text,
        });
    };
    let mut from = 0;
    for (n, &at) in starts.iter().enumerate().skip(1) {
        if buf.get(at) == Some(&b'#') {
            close(from, n, at);
            from = n;
        }
    }
    close(from, starts.len(), buf.len());
    out
}

/// Where a section is: a file the index holds (segment, file, its number
/// in the file) or one read here (its number in the list read).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Src {
    Held(u8, u32, u32),
    Read(u32, u32),
}

/// A section found by meaning: its file (relative to the workspace), its
/// number in the file, its key, and its cosine with the query.
pub struct Near {
    pub path: String,
    pub nth: u32,
    pub key: u64,
    pub cos: f32,
}

/// The best `wide` so far, dated ones (a day's log the query names) in a
/// list of their own, which comes first: a vector knows no dates.
struct Best {
    wide: usize,
    lists: [BinaryHeap<Reverse<Ranked>>; 2],
    met: u64,
}

/// A section in [`Best`]: its cosine, the order met (reversed), where it
/// is and its key.
type Ranked = (Score, u64, Src, u64);

/// A cosine ordered as a number, for the heap.
#[derive(Clone, Copy, PartialEq)]
struct Score(f32);
impl Eq for Score {}
impl Ord for Score {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Best {
    fn push(&mut self, cos: f32, dated: bool, src: Src, key: u64) {
        // Ties to the one met first: a later one is the lesser.
        self.met += 1;
        let list = &mut self.lists[usize::from(!dated)];
        // Most are below the last kept: passed over without the heap.
        if list.len() >= self.wide
            && list
                .peek()
                .is_some_and(|Reverse(least)| least.0 >= Score(cos))
        {
            return;
        }
        list.push(Reverse((Score(cos), u64::MAX - self.met, src, key)));
        if list.len() > self.wide {
            list.pop();
        }
    }

    fn sorted(self) -> Vec<(f32, Src, u64)> {
        let mut out = Vec::new();
        for list in self.lists {
            let mut l: Vec<_> = list.into_iter().map(|Reverse(x)| x).collect();
            l.sort_by(|a, b| b.cmp(a));
            out.extend(l.into_iter().map(|(s, _, src, key)| (s.0, src, key)));
        }
        out.truncate(self.wide);
        out
    }
}

/// A section with no vector yet.
struct Missing {
    src: Src,
    key: u64,
    dated: bool,
    text: Option<String>,
}

/// The `wide` sections of `scope` nearest `query` by meaning, best first
/// (those of a day `named` first); embeds the sections that have no
/// vector yet until `until`.
pub fn nearest(
    ws: &Workspace,
    scope: Scope,
    model: &Model,
    query: &str,
    wide: usize,
    named: &[dates::When],
    until: Option<Instant>,
) -> (Vec<Near>, VectorsUsed, Vec<Unreadable>, Option<Used>) {
    let mut index = Index::open(ws, false, until).ok();
    let mut held = Vec::new();
    let mut unreadable = Vec::new();
    let read_list: Vec<Listed> = match index.as_ref().map(|i| i.files_with_sections(scope)) {
        Some(Ok((h, scan))) => {
            held = h;
            scan.iter().map(|p| listed_at(ws, p)).collect()
        }
        _ => {
            index = None;
            files(ws, scope, &mut unreadable)
        }
    };
    let dated_file = |path: &str| {
        !named.is_empty()
            && path.starts_with("agents/")
            && path
                .rsplit_once('/')
                .is_some_and(|(d, _)| d.ends_with("/daily"))
            && dated_path(named, path)
    };
    let mut v = Vectors::open(ws, model, query, index.as_ref().and_then(|i| i.base()));
    let mut best = Best {
        wide,
        lists: Default::default(),
        met: 0,
    };
    let mut missing = Vec::new();
    let mut sections = 0;
    let mut torn = false;
    if let Some(ix) = &index {
        'files: for &Held {
            seg,
            file: f,
            first,
            sections: n,
        } in &held
        {
            let path = || ix.file(seg, f).map(|e| e.path).unwrap_or_default();
            let dated = !named.is_empty() && dated_file(&path());
            // A file changed since the base read it: its sections that did
            // not change have their vectors in the base's rows of it.
            let before = match seg {
                0 => None,
                _ => ix.base_sections(&path()).map(|(a, n)| a..a + n),
            };
            for s in first..first + n {
                let Ok(key) = ix.key(seg, s) else {
                    torn = true;
                    break 'files;
                };
                if key == 0 {
                    continue;
                }
                sections += 1;
                let src = Src::Held(seg, f, s - first);
                let cos = v
                    .score((seg == 0).then_some(s), key)
                    .or_else(|| before.clone().and_then(|rows| v.score_moved(key, rows)));
                match cos {
                    Some(cos) => best.push(cos, dated, src, key),
                    None => missing.push(Missing {
                        src,
                        key,
                        dated,
                        text: None,
                    }),
                }
            }
        }
    }
    let mut buf = Vec::new();
    for (i, file) in read_list.iter().enumerate() {
        buf.clear();
        if read(ws, file, &mut buf).is_err() {
            continue;
        }
        let dated = file.daily && dated_file(&ws.relative(&file.path));
        for (nth, part) in parts(&buf, file.topic.as_deref()).into_iter().enumerate() {
            if part.key == 0 {
                continue;
            }
            sections += 1;
            let src = Src::Read(i as u32, nth as u32);
            match v.score(None, part.key) {
                Some(cos) => best.push(cos, dated, src, part.key),
                None => missing.push(Missing {
                    src,
                    key: part.key,
                    dated,
                    text: part.text,
                }),
            }
        }
    }
    // The sections without a vector, a batch at a time, so a deadline
    // stops it between batches; the texts of the index's sections read
    // from their files, a file at a time.
    let path_of = |src: Src| -> Option<String> {
        match src {
            Src::Held(seg, f, _) => Some(index.as_ref()?.file(seg, f).ok()?.path),
            Src::Read(i, _) => Some(ws.relative(&read_list[i as usize].path)),
        }
    };
    let mut embedded = 0;
    let mut at = 0;
    while at < missing.len() && until.is_none_or(|u| Instant::now() < u) {
        let mut batch: Vec<usize> = Vec::new();
        while batch.len() < 32 && at < missing.len() {
            if missing[at].text.is_none() {
                fill(ws, &mut missing, at, &path_of);
            }
            if missing[at].text.is_some() {
                batch.push(at);
            }
            at += 1;
        }
        let texts: Vec<(u64, &str)> = batch
            .iter()
            .filter_map(|&m| Some((missing[m].key, missing[m].text.as_deref()?)))
            .collect();
        for (&m, cos) in batch.iter().zip(v.embed(&texts)) {
            best.push(cos, missing[m].dated, missing[m].src, missing[m].key);
            missing[m].text = None;
        }
        embedded += batch.len();
        v.checkpoint(index.as_ref().and_then(|i| i.base()));
        #[cfg(feature = "test-hooks")]
        if std::env::var("AXE_TEST_VECTORS_DIE_AFTER")
            .ok()
            .and_then(|n| n.parse().ok())
            .is_some_and(|n: usize| embedded >= n)
        {
            // A kill -9's moment, in the middle of a first embedding.
            std::process::abort();
        }
    }
    v.used.sections = sections;
    v.used.unembedded = missing.len() - embedded;
    let whole = matches!(scope, Scope::All) && !torn;
    let used = v.save(index.as_ref().and_then(|i| i.base()), whole);
    let near = best
        .sorted()
        .into_iter()
        .filter_map(|(cos, src, key)| {
            let nth = match src {
                Src::Held(.., n) | Src::Read(_, n) => n,
            };
            Some(Near {
                path: path_of(src)?,
                nth,
                key,
                cos,
            })
        })
        .collect();
    let index_used = index.map(|i| i.save(ws));
    (near, used, unreadable, index_used)
}

/// Reads the file of `missing[at]` and gives the texts of its sections
/// that are missing (checked by key: a file changed since the index read
/// it gives none until the index reads it again).
fn fill(
    ws: &Workspace,
    missing: &mut [Missing],
    at: usize,
    path_of: &dyn Fn(Src) -> Option<String>,
) {
    let Src::Held(seg, f, _) = missing[at].src else {
        return;
    };
    let Some(path) = path_of(missing[at].src) else {
        return;
    };
    let file = listed_at(ws, &path);
    let mut buf = Vec::new();
    if read(ws, &file, &mut buf).is_err() {
        return;
    }
    let mut parts = parts(&buf, file.topic.as_deref());
    for m in missing[at..].iter_mut() {
        match m.src {
            Src::Held(s2, f2, nth) if (s2, f2) == (seg, f) => {
                if let Some(p) = parts.get_mut(nth as usize)
                    && p.key == m.key
                {
                    m.text = p.text.take();
                }
            }
            _ => break,
        }
    }
}
