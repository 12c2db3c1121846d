//! Meaning beside words: each section's embedding (`axe_embed`), kept
//! beside the index, and the sections nearest a query by cosine.
//!
//! A section's vector is addressed by its text: its key is a hash of the
//! text embedded (`key`), which the index keeps for every section, so a
//! section that did not change is never embedded twice, wherever it
//! moves. Per model (its id in the file names, so a vector of another
//! model is never used), in the index's directory
//! (`<cache>/notes-index/<workspace>/`), two files, both caches:
//!
//! - **the column** (`vectors-<model id>.base`, see `column`): one row per
//!   section of the base index, in its order, so that scoring every
//!   section is one pass over one file, without a lookup per section;
//! - **the pool** (`vectors-<model id>`): the vectors of every other
//!   section (the delta's, files read at every search, sections embedded
//!   since the column was written), by key. Past [`FOLD`] of them (beyond
//!   those of sections outside the base), the column is written again
//!   with them, and when the base is built again, the column is made anew
//!   for it from the old one's rows by key.
//!
//! Written as the index writes its files: the whole file to a temp file
//! renamed over the old one, holding the old one's lock, tried once (a
//! search never waits for another's write; what it embedded is written by
//! the next). Under the lock, the entries another search wrote to the
//! pool meanwhile are kept. A reader takes no lock. A file that is not
//! whole (a length not its head's, a checksum wrong) is not trusted: the
//! pool is begun again, a column's torn block is embedded again.
//!
//! The search is exact, brute force: every section's vector against the
//! query's, 384 multiplies a section, from one byte a number (bench/RESULTS.md:
//! 0.2 s over a gigabyte's 1.1 million sections, 34 ms over 100 MB's).

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axe_base::beneath::{Dir, Open};
use axe_embed::Model;
use serde::Serialize;

use axe_memory::lock::{self, Wait};
use axe_memory::notes::workspace::Workspace;
use axe_memory::replace;

use super::column::{self, Column};
use super::segment::Segment;

const MAGIC: &[u8; 16] = b"axe-vectors 2\n\0\0";
const HEAD: usize = 16 + 16 + 8 + 8;
const KEY: usize = 8;
const SUM: usize = 16;

/// Vectors of the base's sections the pool holds before the column is
/// written again with them: a pool of 4,096 is 6 MB, read at every
/// search; the column, at a gigabyte of notes, 440 MB written.
pub const FOLD: usize = 4096;

/// Vectors a search embeds before it writes them into the column (or,
/// without an index, the pool) and goes on: a first search of a gigabyte
/// of notes embeds a million sections, hours with a real model, which
/// would otherwise be 1.7 GB of memory and lost whole to a kill.
const CHECKPOINT: usize = 65_536;

/// How a search ranks: by words (BM25F), by meaning (cosine of
/// embeddings), or both fused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Lexical,
    Hybrid,
    Vector,
}

impl Mode {
    pub fn parse(name: &str) -> Option<Mode> {
        match name {
            "lexical" => Some(Mode::Lexical),
            "hybrid" => Some(Mode::Hybrid),
            "vector" => Some(Mode::Vector),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Lexical => "lexical",
            Mode::Hybrid => "hybrid",
            Mode::Vector => "vector",
        }
    }
}

/// The embedding model in `dir` (a workspace's, named by `AXE_EMBEDDINGS`
/// or `[search] embeddings`), loaded once a process: `axe-mcp --http`
/// opens an agent's memory per session or stateless request, and loading
/// is a quarter of a second and 90 MB. The error is its one line, and is
/// not kept: a model fixed is loaded at the next search.
pub fn model(dir: &Path) -> Result<Arc<Model>, String> {
    static LOADED: OnceLock<Mutex<HashMap<PathBuf, Arc<Model>>>> = OnceLock::new();
    let loaded = LOADED.get_or_init(Default::default);
    // Held while loading: requests at once wait for one load.
    let mut loaded = loaded.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(model) = loaded.get(dir) {
        return Ok(Arc::clone(model));
    }
    let model = Arc::new(Model::load(dir).map_err(|e| e.to_string())?);
    loaded.insert(dir.to_owned(), Arc::clone(&model));
    Ok(model)
}

/// What the vector side of a search did: `--json`'s `vectors`.
#[derive(Debug, Default, Clone, Serialize)]
pub struct VectorsUsed {
    /// The model's id (`axe_embed::Model::id`).
    pub model: String,
    /// Sections ranked by meaning.
    pub sections: usize,
    /// Of those, embedded at this search (new or changed since the last).
    pub embedded: usize,
    /// Found in the cache.
    pub cached: usize,
    /// Not embedded: the deadline came first. Left out of the ranking by
    /// meaning (the words still find them); the next search goes on.
    #[serde(skip_serializing_if = "is_zero")]
    pub unembedded: usize,
    /// The cache was missing or not whole, and was begun again.
    pub rebuilt: bool,
    /// The base's column was written again (the base built again, or
    /// enough vectors waiting in the pool).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub folded: bool,
    /// What this search embedded was written to the cache.
    pub saved: bool,
    /// Why nothing could be kept, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The text a section's vector is made of, from its bytes `raw` (its
/// heading line and the lines to the next heading) in a file of the world
/// topic `topic`, if any: trimmed, after the topic's name (which the
/// words count in its first section). None for a section of blanks.
pub fn section_text(topic: Option<&str>, raw: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(raw);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    Some(match topic {
        Some(topic) => format!("{topic}\n{text}"),
        None => text.to_owned(),
    })
}

/// A section's key: 8 bytes of the SHA-256 of its text, never 0 (which
/// the index keeps for a section of blanks). At a million sections, the
/// chance that two texts share one is about 1 in 30 million.
pub fn key(text: &str) -> u64 {
    key_of(&[text.as_bytes()])
}

/// The key of the text [`section_text`] makes of `raw` and `topic`,
/// without making it: what the index computes for every section it reads.
pub fn section_key(topic: Option<&str>, raw: &[u8]) -> u64 {
    let text = String::from_utf8_lossy(raw);
    let text = text.trim();
    match (text.is_empty(), topic) {
        (true, _) => 0,
        (false, Some(topic)) => key_of(&[topic.as_bytes(), b"\n", text.as_bytes()]),
        (false, None) => key_of(&[text.as_bytes()]),
    }
}

/// The key of the text `parts` make, one after another.
fn key_of(parts: &[&[u8]]) -> u64 {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    for part in parts {
        ctx.update(part);
    }
    let mut k = [0; 8];
    k.copy_from_slice(&ctx.finish().as_ref()[..8]);
    u64::from_le_bytes(k).max(1)
}

/// The pool's vectors: keys to rows of one flat list, and whether this
/// search met each.
#[derive(Default)]
struct Store {
    dim: usize,
    rows: HashMap<u64, usize>,
    values: Vec<f32>,
    met: Vec<bool>,
}

impl Store {
    fn get(&mut self, key: u64) -> Option<&[f32]> {
        let &row = self.rows.get(&key)?;
        self.met[row] = true;
        self.values.get(row * self.dim..(row + 1) * self.dim)
    }

    /// Leaves out the rows `gone` says.
    fn drop_rows(&mut self, gone: &[bool]) {
        let mut kept = Store {
            dim: self.dim,
            ..Store::default()
        };
        let mut rows: Vec<(u64, usize)> = self.rows.iter().map(|(&k, &r)| (k, r)).collect();
        rows.sort_by_key(|&(_, r)| r);
        for (k, r) in rows {
            if !gone.get(r).copied().unwrap_or(false) {
                kept.insert(k, &self.values[r * self.dim..(r + 1) * self.dim]);
                let last = kept.met.len() - 1;
                kept.met[last] = self.met[r];
            }
        }
        *self = kept;
    }

    fn insert(&mut self, key: u64, v: &[f32]) {
        if v.len() != self.dim || self.rows.contains_key(&key) {
            return;
        }
        self.rows.insert(key, self.rows.len());
        self.values.extend_from_slice(v);
        self.met.push(true);
    }

    /// The file's bytes: header, records in row order, checksum.
    fn bytes(&self, model: &str, keep: &dyn Fn(u64, usize) -> bool) -> Vec<u8> {
        let mut ordered: Vec<(u64, usize)> = self
            .rows
            .iter()
            .filter(|&(&k, &r)| keep(k, r))
            .map(|(&k, &r)| (k, r))
            .collect();
        ordered.sort_by_key(|&(_, r)| r);
        let mut out = Vec::with_capacity(HEAD + ordered.len() * (KEY + 4 * self.dim) + SUM);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&id_bytes(model));
        out.extend_from_slice(&(self.dim as u64).to_le_bytes());
        out.extend_from_slice(&(ordered.len() as u64).to_le_bytes());
        for (key, row) in ordered {
            out.extend_from_slice(&key.to_le_bytes());
            for v in &self.values[row * self.dim..(row + 1) * self.dim] {
                out.extend_from_slice(&v.to_le_bytes());
            }
        }
        let sum = ring::digest::digest(&ring::digest::SHA256, &out);
        out.extend_from_slice(&sum.as_ref()[..SUM]);
        out
    }

    /// A file's store, if it is whole and of `model` with `dim`.
    fn parse(bytes: &[u8], model: &str, dim: usize) -> Option<Store> {
        let (body, sum) = bytes.split_at_checked(bytes.len().checked_sub(SUM)?)?;
        if body.len() < HEAD || &body[..16] != MAGIC || body[16..32] != id_bytes(model) {
            return None;
        }
        let number = |at: usize| -> Option<u64> {
            Some(u64::from_le_bytes(body.get(at..at + 8)?.try_into().ok()?))
        };
        if number(32)? != dim as u64 {
            return None;
        }
        let count = usize::try_from(number(40)?).ok()?;
        let record = KEY + 4 * dim;
        // Checked against the length before anything is allocated.
        if count.checked_mul(record)?.checked_add(HEAD)? != body.len() {
            return None;
        }
        if ring::digest::digest(&ring::digest::SHA256, body).as_ref()[..SUM] != *sum {
            return None;
        }
        let mut store = Store {
            dim,
            rows: HashMap::with_capacity(count),
            values: Vec::with_capacity(count * dim),
            met: Vec::with_capacity(count),
        };
        for rec in body[HEAD..].chunks_exact(record) {
            let key = u64::from_le_bytes(rec[..KEY].try_into().ok()?);
            let v: Vec<f32> = rec[KEY..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            store.insert(key, &v);
        }
        store.met.iter_mut().for_each(|m| *m = false);
        Some(store)
    }
}

fn id_bytes(model: &str) -> [u8; 16] {
    let mut id = [0u8; 16];
    for (d, s) in id.iter_mut().zip(model.as_bytes()) {
        *d = *s;
    }
    id
}

fn pool_name(model: &str) -> String {
    format!("vectors-{model}")
}

fn column_name(model: &str) -> String {
    format!("vectors-{model}.base")
}

/// The column of model `id` in `dir`, if there is a whole one.
fn open_column(dir: &Dir, id: &str, dim: usize) -> Option<Column> {
    let file = dir.open(OsStr::new(&column_name(id)), Open::Read).ok()??;
    Column::open(file, &id_bytes(id), dim)
}

/// The cache's directory for `ws`: the index's.
fn place(ws: &Workspace) -> Result<Dir, String> {
    let place = super::place(ws)?;
    let dir = Dir::root(&place, true)
        .map_err(|e| format!("{}: {e}", place.display()))?
        .ok_or("no index directory")?;
    use std::os::unix::fs::PermissionsExt;
    // It holds what the notes say: the owner's alone.
    let _ = std::fs::set_permissions(&place, std::fs::Permissions::from_mode(0o700));
    Ok(dir)
}

/// Reads a whole file through `file`, up to the size it says it has.
fn read_all(file: &std::fs::File) -> Option<Vec<u8>> {
    let len = file.metadata().ok()?.len();
    let mut bytes = Vec::with_capacity(usize::try_from(len).ok()?);
    file.take(len).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// The vectors of one workspace under one model, for one search: the
/// query's, the pool, and the column of the base (when it is the
/// current base's).
pub struct Vectors<'m> {
    model: &'m Model,
    id: String,
    dir: Result<Dir, String>,
    pool: Store,
    column: Option<Column>,
    /// The column is the current base's.
    current: bool,
    query: Vec<f32>,
    /// The query as the column's rows are scored with it.
    ready: column::Query,
    /// Sections met outside the base's column.
    outside: usize,
    /// Per pool row: written into the column (so left out of the pool).
    folded: Vec<bool>,
    pub used: VectorsUsed,
}

impl<'m> Vectors<'m> {
    /// Opens `ws`'s vectors of `model` and embeds `query`; `base` is the
    /// index's base, if there is one. A column of another base (the base
    /// built again) is made anew for this one first, from its rows by key,
    /// so that no section is embedded again for having moved.
    pub fn open(
        ws: &Workspace,
        model: &'m Model,
        query: &str,
        base: Option<&Segment>,
    ) -> Vectors<'m> {
        let query = model.embed(&[query]).remove(0);
        let id = model.id().to_owned();
        let dim = model.dim();
        let mut used = VectorsUsed {
            model: id.clone(),
            ..VectorsUsed::default()
        };
        let dir = place(ws);
        let open = |name: &str| -> Option<std::fs::File> {
            dir.as_ref().ok()?.open(OsStr::new(name), Open::Read).ok()?
        };
        let pool = match open(&pool_name(&id)).and_then(|f| read_all(&f)) {
            Some(bytes) => Store::parse(&bytes, &id, dim),
            None => None,
        };
        let pool = pool.unwrap_or_else(|| {
            used.rebuilt = dir.is_ok();
            Store {
                dim,
                ..Store::default()
            }
        });
        let column = || dir.as_ref().ok().and_then(|d| open_column(d, &id, dim));
        let mut found = column();
        let mut folded = Vec::new();
        if let (Ok(d), Some(base)) = (&dir, base)
            && found
                .as_ref()
                .is_some_and(|c| c.generation != base.generation)
        {
            // Another search doing it at once: this one's rows are taken
            // from the pool, or embedded, until it is done.
            if let Ok(f) = fold(d, &id, dim, base, found.take(), &pool) {
                folded = f;
                used.folded = true;
            }
            found = column();
        }
        if let Err(why) = &dir {
            used.why = Some(why.clone());
        }
        Vectors {
            model,
            current: base.is_some()
                && found.as_ref().map(|c| c.generation) == base.map(|b| b.generation),
            column: found,
            id,
            dir,
            pool,
            folded,
            ready: column::Query::new(&query),
            query,
            outside: 0,
            used,
        }
    }

    /// The cosine of the section with `key`, row `row` of the base if it
    /// is one of its sections; None when it has no vector yet (or a blank
    /// section, key 0).
    pub fn score(&mut self, row: Option<u32>, key: u64) -> Option<f32> {
        if key == 0 {
            return None;
        }
        if let Some(r) = row
            && self.current
            && let Some(column) = &mut self.column
            && let Some((k, scale, bytes)) = column.row(r as usize)
            && k == key
        {
            self.used.cached += 1;
            return Some(column::dot(&self.ready, bytes, scale));
        }
        if row.is_none() {
            self.outside += 1;
        }
        let v = self.pool.get(key)?;
        self.used.cached += 1;
        Some(v.iter().zip(&self.query).map(|(a, b)| a * b).sum())
    }

    /// The cosine of the section with `key` from rows `rows` of the
    /// column, if one of them has it: a file the base holds, changed
    /// since (a new entry appended to a day's log), keeps the vectors of
    /// the sections it still has.
    pub fn score_moved(&mut self, key: u64, rows: std::ops::Range<u32>) -> Option<f32> {
        if key == 0 || !self.current {
            return None;
        }
        let column = self.column.as_mut()?;
        for r in rows {
            if let Some((k, scale, bytes)) = column.row(r as usize)
                && k == key
            {
                self.used.cached += 1;
                return Some(column::dot(&self.ready, bytes, scale));
            }
        }
        None
    }

    /// Embeds `texts` (each with its key), keeps their vectors, and gives
    /// their cosines with the query.
    pub fn embed(&mut self, texts: &[(u64, &str)]) -> Vec<f32> {
        let strs: Vec<&str> = texts.iter().map(|t| t.1).collect();
        let vectors = self.model.embed(&strs);
        self.used.embedded += texts.len();
        texts
            .iter()
            .zip(vectors)
            .map(|(&(key, _), v)| {
                self.pool.insert(key, &v);
                v.iter().zip(&self.query).map(|(a, b)| a * b).sum()
            })
            .collect()
    }

    /// Keeps what this search embedded so far when it is [`CHECKPOINT`]
    /// vectors or more: written into the column of `base`, those leave
    /// the pool.
    pub fn checkpoint(&mut self, base: Option<&Segment>) {
        let Ok(dir) = &self.dir else {
            return;
        };
        if self.pool.rows.len() < CHECKPOINT + self.outside {
            return;
        }
        // Without an index there is no column; the pool is written at
        // the end (a workspace whose cache is inside it, rare).
        let Some(base) = base else {
            return;
        };
        let dim = self.pool.dim;
        let folded = fold(dir, &self.id, dim, base, self.column.take(), &self.pool);
        self.column = open_column(dir, &self.id, dim);
        if let Ok(folded) = folded {
            self.used.folded = true;
            self.current = self
                .column
                .as_ref()
                .is_some_and(|c| c.generation == base.generation);
            self.pool.drop_rows(&folded);
            self.folded.clear();
        }
    }

    /// Writes what this search embedded, and the column again when it
    /// was found torn or [`FOLD`] of the base's vectors wait in the pool.
    /// `whole`: every section was met, so the pool's vectors of no
    /// section are dropped.
    pub fn save(mut self, base: Option<&Segment>, whole: bool) -> VectorsUsed {
        let Ok(dir) = &self.dir else {
            return self.used;
        };
        if let Some(base) = base {
            let torn = self.column.as_ref().is_some_and(|c| c.torn);
            let waiting = self.pool.rows.len().saturating_sub(self.outside);
            if (torn || waiting >= FOLD)
                && let Ok(f) = fold(
                    dir,
                    &self.id,
                    self.pool.dim,
                    base,
                    self.column.take(),
                    &self.pool,
                )
            {
                self.folded = f;
                self.used.folded = true;
            }
        }
        let met = std::mem::take(&mut self.pool.met);
        let folded = std::mem::take(&mut self.folded);
        let gone = |row: usize| {
            folded.get(row).copied().unwrap_or(false)
                || (whole && !met.get(row).copied().unwrap_or(true))
        };
        let dropping = (0..self.pool.rows.len()).any(gone);
        if self.used.embedded == 0 && !self.used.rebuilt && !dropping {
            return self.used;
        }
        let keep = |_: u64, row: usize| !gone(row);
        self.used.saved = save(dir, &pool_name(&self.id), &self.id, self.pool, &keep).is_ok();
        self.used
    }
}

/// Writes the pool `store` (what `keep` keeps) as `name`, with what
/// another search wrote since it was read; tried once.
fn save(
    dir: &Dir,
    name: &str,
    id: &str,
    mut store: Store,
    keep: &dyn Fn(u64, usize) -> bool,
) -> Result<(), ()> {
    let (file, _) = lock::create_locked(
        dir,
        OsStr::new(name),
        Open::Update,
        Wait::For(Duration::ZERO),
    )
    .map_err(|_| ())?;
    let ours = store.rows.len();
    if let Some(theirs) = read_all(&file).and_then(|b| Store::parse(&b, id, store.dim)) {
        for (&k, &row) in &theirs.rows {
            store.insert(k, &theirs.values[row * theirs.dim..(row + 1) * theirs.dim]);
        }
    }
    // Theirs are kept as they were written.
    let keep = |k: u64, row: usize| row >= ours || keep(k, row);
    let bytes = store.bytes(id, &keep);
    replace::replace(&file, dir, OsStr::new(name), |f, _| {
        f.write_all(&bytes)?;
        #[cfg(feature = "test-hooks")]
        if std::env::var_os("AXE_TEST_VECTORS_TORN").is_some() {
            // A torn-file test's moment: the file cut short, as a crash
            // on a file system without ordering could leave it.
            f.set_len(bytes.len() as u64 / 2)?;
        }
        Ok(())
    })
    .map_err(|_| ())
}

/// Writes the column of `base` (the current base): each section's row
/// from `old` (by row when it is this base's, else by key) or from the
/// pool. Gives, per pool row, whether it went into the column.
fn fold(
    dir: &Dir,
    id: &str,
    dim: usize,
    base: &Segment,
    old: Option<Column>,
    pool: &Store,
) -> Result<Vec<bool>, ()> {
    let name = column_name(id);
    let (file, _) = lock::create_locked(
        dir,
        OsStr::new(&name),
        Open::Update,
        Wait::For(Duration::ZERO),
    )
    .map_err(|_| ())?;
    // The old column's rows when they move (the base built again): all of
    // them in memory at once, by key, so they are read once and in order.
    let mut old = old;
    let mut moved: HashMap<u64, Vec<u8>> = HashMap::new();
    if let Some(c) = old.as_mut().filter(|c| c.generation != base.generation) {
        for r in 0..c.rows {
            if let Some((k, scale, bytes)) = c.row(r)
                && k != 0
            {
                let mut row = Vec::with_capacity(12 + dim);
                row.extend_from_slice(&k.to_le_bytes());
                row.extend_from_slice(&scale.to_le_bytes());
                row.extend_from_slice(bytes);
                moved.insert(k, row);
            }
        }
        old = None;
    }
    let mut folded = vec![false; pool.rows.len()];
    let mut torn = false;
    let mut put = |r: usize, buf: &mut Vec<u8>| {
        let Ok(key) = base.key(r as u32) else {
            torn = true;
            return;
        };
        if key == 0 {
            return;
        }
        if let Some(c) = old.as_mut()
            && let Some((k, scale, bytes)) = c.row(r)
            && k == key
        {
            buf.extend_from_slice(&k.to_le_bytes());
            buf.extend_from_slice(&scale.to_le_bytes());
            buf.extend_from_slice(bytes);
        } else if let Some(row) = moved.get(&key) {
            buf.extend_from_slice(row);
        } else if let Some(&p) = pool.rows.get(&key) {
            folded[p] = true;
            buf.extend_from_slice(&key.to_le_bytes());
            let at = buf.len();
            buf.extend_from_slice(&[0; 4]);
            let scale = column::quantize(&pool.values[p * dim..(p + 1) * dim], buf);
            buf[at..at + 4].copy_from_slice(&scale.to_le_bytes());
        }
    };
    let rows = base.section_count as usize;
    replace::replace(&file, dir, OsStr::new(&name), |f, _| {
        let mut out = BufWriter::with_capacity(1 << 20, f);
        column::write(
            &mut out,
            &id_bytes(id),
            base.generation,
            dim,
            rows,
            &mut put,
        )?;
        out.flush()
    })
    .map_err(|_| ())?;
    if torn {
        return Err(());
    }
    Ok(folded)
}

/// Reciprocal rank fusion: each list gives a candidate 1 / (k + rank)
/// (rank from 1), summed; best first, ties in the order first met.
pub fn fuse<T: Eq + std::hash::Hash + Clone>(lists: &[Vec<T>], k: f64) -> Vec<(T, f64)> {
    let mut score: HashMap<T, (f64, usize)> = HashMap::new();
    let mut order = 0;
    for list in lists {
        for (rank, item) in list.iter().enumerate() {
            let e = score.entry(item.clone()).or_insert_with(|| {
                order += 1;
                (0.0, order)
            });
            e.0 += 1.0 / (k + rank as f64 + 1.0);
        }
    }
    let mut out: Vec<(T, f64, usize)> = score.into_iter().map(|(t, (s, o))| (t, s, o)).collect();
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.2.cmp(&b.2)));
    out.into_iter().map(|(t, s, _)| (t, s)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_round_trips_and_a_torn_one_is_refused() {
        let mut s = Store {
            dim: 2,
            ..Store::default()
        };
        s.insert(1, &[0.5, -0.5]);
        s.insert(2, &[1.0, 0.0]);
        let bytes = s.bytes("0123456789abcdef", &|_, _| true);
        let mut back = Store::parse(&bytes, "0123456789abcdef", 2).unwrap();
        assert_eq!(back.get(1).unwrap(), [0.5, -0.5]);
        assert_eq!(back.get(2).unwrap(), [1.0, 0.0]);
        assert!(Store::parse(&bytes, "another00000000", 2).is_none());
        assert!(Store::parse(&bytes, "0123456789abcdef", 3).is_none());
        assert!(Store::parse(&bytes[..bytes.len() - 1], "0123456789abcdef", 2).is_none());
        let mut flipped = bytes.clone();
        flipped[HEAD + 3] ^= 1;
        assert!(Store::parse(&flipped, "0123456789abcdef", 2).is_none());
        // A count that would allocate without bound.
        let mut huge = bytes.clone();
        huge[40..48].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(Store::parse(&huge, "0123456789abcdef", 2).is_none());
        let kept = s.bytes("0123456789abcdef", &|k, _| k == 2);
        let mut back = Store::parse(&kept, "0123456789abcdef", 2).unwrap();
        assert!(back.get(1).is_none() && back.get(2).is_some());
    }

    #[test]
    fn a_key_is_of_the_text_embedded() {
        assert_eq!(section_text(None, b"  \n\t\n"), None);
        assert_eq!(
            section_text(None, b"## 09:10\nhiked\n\n").unwrap(),
            "## 09:10\nhiked"
        );
        assert_eq!(
            section_text(Some("maya"), b"hikes\n").unwrap(),
            "maya\nhikes"
        );
        assert_ne!(key("a"), key("b"));
        for (topic, raw) in [
            (None, &b"## 9\nx \n"[..]),
            (Some("t"), b" y"),
            (Some("t"), b"\n\xff z"),
        ] {
            assert_eq!(
                section_key(topic, raw),
                key(&section_text(topic, raw).unwrap())
            );
        }
        assert_eq!(section_key(Some("t"), b" \n"), 0);
        assert_ne!(key(""), 0);
    }

    #[test]
    fn fusion_rewards_agreement() {
        let fused = fuse(&[vec!["a", "b", "c"], vec!["c", "d", "a"]], 60.0);
        let order: Vec<&str> = fused.iter().map(|(t, _)| *t).collect();
        assert_eq!(order, ["a", "c", "b", "d"]);
    }
}
