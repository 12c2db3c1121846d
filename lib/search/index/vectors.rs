//! Meaning beside words: each section's embedding (`axe_embed`), kept in a
//! cache beside the index, and the sections nearest a query by cosine.
//!
//! The cache is content-addressed: a section's key is a hash of the model's
//! id and the text embedded, so a section that did not change is never
//! embedded twice, wherever it moves, and a vector of another model is
//! never used. One file per model, `vectors-<model id>`, in the index's
//! directory (`<cache>/notes-index/<workspace>/`): a cache, never the
//! truth; deleting it costs the time to embed again.
//!
//! Written as the index writes its files: the whole file to a temp file
//! renamed over the old one, holding the old one's lock, tried once (a
//! search never waits for another's write; what it embedded is written by
//! the next). Under the lock, the entries another search wrote meanwhile
//! are kept. A reader takes no lock. A file that is not whole (its length
//! is not its header's, or its checksum is wrong) is rebuilt, never
//! trusted.
//!
//! The search is brute force: every section's vector against the query's
//! (384 multiplies each). At 200,000 sections (about 100 MB of notes)
//! that is a few tens of milliseconds, but the file is then 300 MB, read
//! and checked whole at every search: past some 50,000 sections (25 MB of
//! notes) reading it costs more than the lexical search, which is where
//! an approximate index (HNSW) and a mapped file would pay.

use std::collections::HashMap;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use axe_base::beneath::{Dir, Open};
use axe_embed::Model;
use serde::Serialize;

use axe_memory::lock::{self, Wait};
use axe_memory::notes::workspace::Workspace;
use axe_memory::replace;

const MAGIC: &[u8; 16] = b"axe-vectors 1\n\0\0";
const HEAD: usize = 16 + 16 + 8 + 8;
const KEY: usize = 16;
const SUM: usize = 16;

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
    /// What this search embedded was written to the cache.
    pub saved: bool,
    /// Why nothing could be kept, if so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A section to rank: where it is, and the text embedded for it.
pub struct Section {
    pub file: usize,
    pub line: usize,
    pub text: String,
}

/// The vectors of one model: keys to rows of one flat list.
#[derive(Default)]
struct Store {
    dim: usize,
    rows: HashMap<[u8; KEY], usize>,
    values: Vec<f32>,
}

impl Store {
    fn get(&self, key: &[u8; KEY]) -> Option<&[f32]> {
        let &row = self.rows.get(key)?;
        self.values.get(row * self.dim..(row + 1) * self.dim)
    }

    fn insert(&mut self, key: [u8; KEY], v: &[f32]) {
        if v.len() != self.dim || self.rows.contains_key(&key) {
            return;
        }
        self.rows.insert(key, self.rows.len());
        self.values.extend_from_slice(v);
    }

    /// The file's bytes: header, records in row order, checksum.
    fn bytes(&self, model: &str, keep: &dyn Fn(&[u8; KEY]) -> bool) -> Vec<u8> {
        let mut ordered: Vec<(&[u8; KEY], usize)> = self
            .rows
            .iter()
            .filter(|(k, _)| keep(k))
            .map(|(k, &r)| (k, r))
            .collect();
        ordered.sort_by_key(|&(_, r)| r);
        let mut out = Vec::with_capacity(HEAD + ordered.len() * (KEY + 4 * self.dim) + SUM);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&id_bytes(model));
        out.extend_from_slice(&(self.dim as u64).to_le_bytes());
        out.extend_from_slice(&(ordered.len() as u64).to_le_bytes());
        for (key, row) in ordered {
            out.extend_from_slice(key);
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
        };
        for rec in body[HEAD..].chunks_exact(record) {
            let key: [u8; KEY] = rec[..KEY].try_into().ok()?;
            let v: Vec<f32> = rec[KEY..]
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            store.insert(key, &v);
        }
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

/// A section's key: its text embedded under this model.
fn key(model: &str, text: &str) -> [u8; KEY] {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(model.as_bytes());
    ctx.update(&[0]);
    ctx.update(text.as_bytes());
    let mut key = [0u8; KEY];
    key.copy_from_slice(&ctx.finish().as_ref()[..KEY]);
    key
}

fn file_name(model: &str) -> String {
    format!("vectors-{model}")
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

/// The `limit` sections nearest `query` by meaning, as (section number
/// in `sections`, cosine), best first; sections not yet in the cache
/// are embedded (until `until`) and kept there. `whole`: `sections` is
/// every section of the workspace, so vectors of no section of it are
/// dropped from the cache when it is written.
pub fn nearest(
    ws: &Workspace,
    model: &Model,
    query: &str,
    sections: &[Section],
    limit: usize,
    whole: bool,
    until: Option<Instant>,
) -> (Vec<(usize, f32)>, VectorsUsed) {
    let id = model.id().to_owned();
    let dim = model.dim();
    let mut used = VectorsUsed {
        model: id.clone(),
        sections: sections.len(),
        ..VectorsUsed::default()
    };
    let dir = place(ws);
    let name = file_name(&id);
    let mut store = match &dir {
        Ok(dir) => {
            let read = dir
                .open(OsStr::new(&name), Open::Read)
                .ok()
                .flatten()
                .and_then(|f| read_all(&f));
            match read.map(|b| Store::parse(&b, &id, dim)) {
                Some(Some(store)) => store,
                _ => {
                    used.rebuilt = true;
                    Store {
                        dim,
                        ..Store::default()
                    }
                }
            }
        }
        Err(why) => {
            used.why = Some(why.clone());
            Store {
                dim,
                ..Store::default()
            }
        }
    };
    let keys: Vec<[u8; KEY]> = sections.iter().map(|s| key(&id, &s.text)).collect();
    let missing: Vec<usize> = (0..sections.len())
        .filter(|&i| store.get(&keys[i]).is_none())
        .collect();
    used.cached = sections.len() - missing.len();
    // Embedded a batch at a time, so a deadline stops it between batches.
    let before = store.rows.len();
    for chunk in missing.chunks(32) {
        if until.is_some_and(|u| Instant::now() >= u) {
            break;
        }
        let texts: Vec<&str> = chunk.iter().map(|&i| sections[i].text.as_str()).collect();
        for (&i, v) in chunk.iter().zip(model.embed(&texts)) {
            store.insert(keys[i], &v);
        }
    }
    used.embedded = store.rows.len() - before;
    used.unembedded = missing.len() - used.embedded;
    let q = model.embed(&[query]).remove(0);
    let mut scored: Vec<(usize, f32)> = keys
        .iter()
        .enumerate()
        .filter_map(|(i, k)| {
            let v = store.get(k)?;
            Some((i, v.iter().zip(&q).map(|(a, b)| a * b).sum::<f32>()))
        })
        .collect();
    scored.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    scored.truncate(limit);
    let stale = whole && store.rows.len() > sections.len();
    if let Ok(dir) = &dir
        && (used.embedded > 0 || used.rebuilt || stale)
    {
        let live: std::collections::HashSet<[u8; KEY]> = keys.iter().copied().collect();
        let keep = |k: &[u8; KEY]| !whole || live.contains(k);
        used.saved = save(dir, &name, &id, store, &keep).is_ok();
    }
    (scored, used)
}

/// Writes `store` (what `keep` keeps) as the cache, with what another
/// search wrote since it was read; tried once.
fn save(
    dir: &Dir,
    name: &str,
    id: &str,
    mut store: Store,
    keep: &dyn Fn(&[u8; KEY]) -> bool,
) -> Result<(), ()> {
    let (file, _) = lock::create_locked(
        dir,
        OsStr::new(name),
        Open::Update,
        Wait::For(Duration::ZERO),
    )
    .map_err(|_| ())?;
    if let Some(theirs) = read_all(&file).and_then(|b| Store::parse(&b, id, store.dim)) {
        for (k, &row) in &theirs.rows {
            store.insert(*k, &theirs.values[row * theirs.dim..(row + 1) * theirs.dim]);
        }
    }
    let bytes = store.bytes(id, keep);
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
        s.insert([1; KEY], &[0.5, -0.5]);
        s.insert([2; KEY], &[1.0, 0.0]);
        let bytes = s.bytes("0123456789abcdef", &|_| true);
        let back = Store::parse(&bytes, "0123456789abcdef", 2).unwrap();
        assert_eq!(back.get(&[1; KEY]).unwrap(), [0.5, -0.5]);
        assert_eq!(back.get(&[2; KEY]).unwrap(), [1.0, 0.0]);
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
        let kept = s.bytes("0123456789abcdef", &|k| k[0] == 2);
        let back = Store::parse(&kept, "0123456789abcdef", 2).unwrap();
        assert!(back.get(&[1; KEY]).is_none() && back.get(&[2; KEY]).is_some());
    }

    #[test]
    fn fusion_rewards_agreement() {
        let fused = fuse(&[vec!["a", "b", "c"], vec!["c", "d", "a"]], 60.0);
        let order: Vec<&str> = fused.iter().map(|(t, _)| *t).collect();
        assert_eq!(order, ["a", "c", "b", "d"]);
    }
}
