//! `search`: the sections of every notes file (see `scan`), ranked
//! against a query by BM25F: a word counts more in a world topic's name
//! than in a heading, and more in a heading than in the text.
//!
//! A question is searched as its words of substance (`query` leaves out
//! its stop words), and a date it names (`dates`) ranks that day's or
//! month's daily logs higher.
//!
//! One pass over the files: each section's length and the counts of the
//! query's clauses are taken as the bytes go by, and a matching section is
//! kept as a few numbers; only the best are read again for their line, so
//! memory stays small however much the notes hold or match.
//!
//! A file or directory that cannot be read (no permission, a `world` that
//! is a regular file) is skipped and named in the result, never the end of
//! the search.
//!
//! A search keeps its caller's deadline (`axe-run`'s `--timeout`, a call
//! to `axe-mcp`, `axe-notes-search --timeout`): past it, the files not yet
//! searched (the one being read included) are counted in the result and
//! what the others hold is ranked, so a caller is never held past its
//! time and still gets what was found.

use std::collections::HashMap;
use std::io;
use std::path::Path;
use std::time::Instant;

use crate::files::{Listed, dated_path, files, line_starts, listed_at, read};
use crate::index::vectors::{self, Mode, VectorsUsed};
use crate::index::{self, Index, Used};
use crate::meaning;
use axe_base::error::Result;
use axe_memory::notes::dates;
use axe_memory::notes::note::Unreadable;
use axe_memory::notes::query;
use axe_memory::notes::scan::{self, BODY, FIELDS, HEADING, Scanner, TOPIC};
use axe_memory::notes::snippet;
use axe_memory::notes::workspace::{Scope, Workspace};

/// BM25's constants. Only the body's length is weighed: a topic's name
/// and a heading are one short line each. `B` is below the usual 0.75: a
/// note or a turn of a conversation is a few lines, and the longer one is
/// most often the one that tells more (the turn that gives the facts,
/// beside "great, well done!"), not a long text that mentions everything;
/// weighing its length fully put it behind a short line naming a word in
/// passing (bench/RESULTS.md, the judged set: 0.75 -> 0.5 took recall@5
/// from 0.542 to 0.549; anywhere from 0.1 to 0.5 gave the same).
const K1: f64 = 1.2;
const B: f64 = 0.5;

/// What a word is worth in each field, against one in the body. A topic
/// is named for what it is about, and a heading for what its section is,
/// so a word there says more than a word in passing; but not so much that
/// a section whose text is full of the words falls far behind.
const WEIGHTS: [f64; FIELDS] = {
    let mut w = [0.0; FIELDS];
    w[TOPIC] = 5.0;
    w[HEADING] = 3.0;
    w[BODY] = 1.0;
    w
};

/// How much more a section of a day's log counts when the query names
/// its day or month (`in May`, `on 2026-05-03`): a date the question
/// gives is one the answer was most likely written on.
const DATED: f64 = 2.0;

/// One ranked section.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Found {
    /// Relative to the workspace.
    pub path: String,
    /// The 1-based line shown: the section's first line with a match (its
    /// first line when only the topic's name matched).
    pub line: usize,
    /// That line.
    pub text: String,
    pub score: f64,
    /// The section's heading without its `#`s; none for the text before
    /// a file's first heading.
    pub heading: Option<String>,
    /// The line, or when it is long the part around the match, with `…`
    /// where it was cut.
    pub snippet: String,
}

impl std::fmt::Display for Found {
    /// `path:line: snippet`, grep's way, with the heading in brackets
    /// first when the line is not the heading itself:
    /// `agents/a/daily/2026-11-20.md:5: [10:00] Rolled back the canary.`
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}:{}: ", self.path, self.line)?;
        if let Some(heading) = &self.heading
            && !self.text.starts_with('#')
        {
            write!(f, "[{heading}] ")?;
        }
        f.write_str(&self.snippet)
    }
}

/// What a search found, and what it could not read.
#[derive(Debug, Default)]
pub struct Searched {
    /// Best first.
    pub found: Vec<Found>,
    /// Skipped, in the order met.
    pub unreadable: Vec<Unreadable>,
    /// The files not searched because the deadline came first.
    pub unsearched: usize,
    /// Whether an index narrowed the files read, and how fresh it was.
    pub index: Used,
    /// How it ranked.
    pub mode: Option<Mode>,
    /// What the ranking by meaning did, when it ranked by meaning.
    pub vectors: Option<VectorsUsed>,
}

/// Where a counted section is: a file this search read (its number in
/// the list read), or one the index scored (its number in the plan).
#[derive(Clone, Copy)]
enum Origin {
    Read(u32),
    Indexed(u32),
}

/// A matching section, as numbers: its counts are `counts[at..at +
/// FIELDS * clauses]` of the search's one flat list. `line` orders the
/// sections of one file: the line to show for one read, the section's
/// number for one the index scored.
struct Hit {
    origin: Origin,
    line: u32,
    start: u32,
    len: u32,
    at: usize,
}

/// The sections counted so far, and the statistics of all.
#[derive(Default)]
struct Counted {
    hits: Vec<Hit>,
    counts: Vec<u32>,
    sections: usize,
    total_len: usize,
}

/// Reads and scans `files`, adding what they hold to `c`; past `until`,
/// says how many were not searched. `plan`, when given, says which the
/// index knows hold none of the query's words (counted, unread).
#[allow(clippy::too_many_arguments)]
fn scan_files(
    ws: &Workspace,
    files: &[Listed],
    scanner: &mut Scanner,
    clauses: usize,
    until: Option<Instant>,
    c: &mut Counted,
    unreadable: &mut Vec<Unreadable>,
    read_files: &mut usize,
) -> usize {
    let mut buf = Vec::new();
    let past = || until.is_some_and(|until| Instant::now() >= until);
    for (index, file) in files.iter().enumerate() {
        if past() {
            return files.len() - index;
        }
        let topic = file.topic.as_deref().and_then(|t| scanner.topic(t));
        buf.clear();
        *read_files += 1;
        match read(ws, file, &mut buf) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => {
                unreadable.push(Unreadable::new(file.path.clone(), &e));
                continue;
            }
        }
        // Most files hold none of the words: then counting their sections
        // is all they need, which is much quicker than reading their words.
        if topic.is_none() && !scanner.may_match(&buf) {
            c.sections += scan::count_sections(&buf);
            c.total_len += buf.len();
            continue;
        }
        // The topic's name is the title of the file's first section.
        let mut topic = topic;
        // A file cut off by the deadline counts for nothing: not half its
        // sections.
        let before = (c.hits.len(), c.counts.len(), c.sections, c.total_len);
        let whole = scanner.scan(&buf, until, |mut s| {
            c.sections += 1;
            c.total_len += s.len;
            if let Some(named) = topic.take() {
                s.counts[TOPIC * clauses..(TOPIC + 1) * clauses].copy_from_slice(&named);
                s.first_hit.get_or_insert(s.start);
            }
            if let Some(line) = s.first_hit {
                c.hits.push(Hit {
                    origin: Origin::Read(index as u32),
                    line: line as u32,
                    start: s.start as u32,
                    len: s.len as u32,
                    at: c.counts.len(),
                });
                c.counts.extend_from_slice(&s.counts);
            }
        });
        if !whole {
            c.hits.truncate(before.0);
            c.counts.truncate(before.1);
            (c.sections, c.total_len) = (before.2, before.3);
            return files.len() - index;
        }
    }
    0
}

/// Each hit's BM25F score: the same numbers, in the same order, wherever
/// its counts came from (a read or the index), so the same score to the
/// last bit.
fn scores(c: &Counted, clauses: usize, dated: impl Fn(&Hit) -> bool) -> Vec<f64> {
    let counts_of = |h: &Hit| &c.counts[h.at..h.at + FIELDS * clauses];
    let n = c.sections as f64;
    let avg = (c.total_len as f64 / n.max(1.0)).max(1.0);
    let idf: Vec<f64> = (0..clauses)
        .map(|cl| {
            let df = c
                .hits
                .iter()
                .filter(|h| (0..FIELDS).any(|f| counts_of(h)[f * clauses + cl] > 0))
                .count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    c.hits
        .iter()
        .map(|h| {
            let counts = counts_of(h);
            let body = 1.0 - B + B * f64::from(h.len) / avg;
            let score = (0..clauses)
                .map(|cl| {
                    // BM25F: the fields' counts weighed into one, then
                    // saturated once.
                    let tf: f64 = (0..FIELDS)
                        .map(|f| {
                            let tf = f64::from(counts[f * clauses + cl]) * WEIGHTS[f];
                            if f == BODY { tf / body } else { tf }
                        })
                        .sum();
                    idf[cl] * tf * (K1 + 1.0) / (tf + K1)
                })
                .sum::<f64>();
            if dated(h) { score * DATED } else { score }
        })
        .collect()
}

/// The best `limit` hits, best first; equal scores in the order files
/// are searched in (`index::order_key`) and by line, so the output is
/// stable. Only the hits that may make it are given their file's path.
fn best(
    scores: &[f64],
    c: &Counted,
    limit: usize,
    path: &mut dyn FnMut(&Hit) -> String,
) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..scores.len()).collect();
    if limit == 0 {
        return Vec::new();
    }
    if idx.len() > limit {
        idx.select_nth_unstable_by(limit - 1, |&a, &b| scores[b].total_cmp(&scores[a]));
        let t = scores[idx[limit - 1]];
        idx.retain(|&i| scores[i].total_cmp(&t) != std::cmp::Ordering::Less);
    }
    let paths: std::collections::HashMap<usize, String> =
        idx.iter().map(|&i| (i, path(&c.hits[i]))).collect();
    idx.sort_by(|&a, &b| {
        scores[b]
            .total_cmp(&scores[a])
            .then_with(|| index::order_key(&paths[&a]).cmp(&index::order_key(&paths[&b])))
            .then_with(|| c.hits[a].line.cmp(&c.hits[b].line))
    });
    idx.truncate(limit);
    idx
}

/// The best `limit` sections for `query` (see `query` for what it may
/// hold) in the files of `scope`, of those searched by `until`: by
/// words and meaning fused when the workspace has an embedding model,
/// else by words.
pub fn search(
    ws: &Workspace,
    scope: Scope,
    query: &str,
    limit: usize,
    until: Option<Instant>,
) -> Result<Searched> {
    search_mode(ws, scope, query, limit, until, None)
}

/// Candidates each side brings to the fusion, and reciprocal rank
/// fusion's k: measured on the judged set (bench/RESULTS.md), the usual
/// 60 gave recall@5 0.626 and found 0.386 of the paraphrases; 1, which
/// lets each side's first few lead, gave 0.690 and 0.586 (5: 0.678, 20:
/// 0.632), every kind of question at or above the words alone.
const CANDIDATES: usize = 50;
const RRF_K: f64 = 1.0;

/// [`search`] ranked as `mode` says (`None`: hybrid with a model, else
/// lexical). Meaning without a model is a usage error; a model that does
/// not load, a config error.
pub fn search_mode(
    ws: &Workspace,
    scope: Scope,
    query: &str,
    limit: usize,
    until: Option<Instant>,
    mode: Option<Mode>,
) -> Result<Searched> {
    let mode = mode.unwrap_or(match ws.meaning() {
        Some(_) => Mode::Hybrid,
        None => Mode::Lexical,
    });
    if mode == Mode::Lexical {
        let mut searched = lexical(ws, scope, query, limit, until)?;
        searched.mode = Some(mode);
        return Ok(searched);
    }
    let meaning = ws.meaning().ok_or_else(|| {
        axe_base::error::Error::Usage(format!(
            "--mode {} needs an embedding model: set AXE_EMBEDDINGS=DIR or [search] embeddings = \"DIR\" in config.toml",
            mode.name()
        ))
    })?;
    let model = vectors::model(meaning).map_err(axe_base::error::Error::Config)?;
    let wide = limit.max(CANDIDATES);
    let mut searched = match mode {
        Mode::Hybrid => lexical(ws, scope, query, wide, until)?,
        _ => Searched::default(),
    };
    let (named, _) = dates::named(query);
    let (near, used, unreadable, index) =
        meaning::nearest(ws, scope, &model, query, wide, &named, until);
    if mode == Mode::Vector {
        searched.unreadable = unreadable;
        searched.index = index.unwrap_or_default();
    }
    // Each file's sections, read once: to show a section found by
    // meaning, and to know which section a result by words is in.
    let mut read_parts: HashMap<String, (Vec<u8>, Vec<meaning::Part>)> = HashMap::new();
    let paths = near
        .iter()
        .map(|n| &n.path)
        .chain(searched.found.iter().map(|f| &f.path));
    for path in paths {
        if read_parts.contains_key(path) {
            continue;
        }
        let file = listed_at(ws, path);
        let mut buf = Vec::new();
        if read(ws, &file, &mut buf).is_ok() {
            let parts = meaning::parts(&buf, file.topic.as_deref());
            read_parts.insert(path.clone(), (buf, parts));
        }
    }
    // A section found by meaning, shown by its heading and its first line
    // of text; none when its file changed since (its key is not there).
    let found_of = |n: &meaning::Near, score: f64| -> Option<Found> {
        let (buf, parts) = read_parts.get(n.path.as_str())?;
        let part = parts.get(n.nth as usize).filter(|p| p.key == n.key)?;
        let (from, to) = part.lines;
        let starts = line_starts(buf);
        let first = shown_line(buf, &starts, from as u32 + 1);
        let body = shown_line(buf, &starts, from as u32 + 2);
        let (line, text) = match first.1.starts_with('#') && body.0 <= to && !body.1.is_empty() {
            true => body,
            false => first.clone(),
        };
        Some(Found {
            path: n.path.clone(),
            line,
            heading: snippet::heading(&first.1),
            snippet: snippet::snippet(&text, 0),
            text,
            score,
        })
    };
    searched.found = if mode == Mode::Vector {
        near.iter()
            .filter_map(|n| found_of(n, f64::from(n.cos)))
            .take(limit)
            .collect()
    } else {
        // A result by words is its section: the one its line is in.
        let section_of = |f: &Found| {
            let (_, parts) = read_parts.get(f.path.as_str())?;
            let nth = parts
                .iter()
                .position(|p| p.lines.0 < f.line && f.line <= p.lines.1)?;
            Some((f.path.clone(), nth as u32))
        };
        let mut by_words: HashMap<(String, u32), Found> = HashMap::new();
        let mut lexical = Vec::new();
        for f in std::mem::take(&mut searched.found) {
            if let Some(k) = section_of(&f) {
                lexical.push(k.clone());
                by_words.entry(k).or_insert(f);
            }
        }
        let vector: Vec<(String, u32)> = near.iter().map(|n| (n.path.clone(), n.nth)).collect();
        let near_of: HashMap<(String, u32), &meaning::Near> =
            near.iter().map(|n| ((n.path.clone(), n.nth), n)).collect();
        vectors::fuse(&[lexical, vector], RRF_K)
            .into_iter()
            .filter_map(|(k, score)| match by_words.remove(&k) {
                Some(f) => Some(Found { score, ..f }),
                None => found_of(near_of.get(&k)?, score),
            })
            .take(limit)
            .collect()
    };
    searched.mode = Some(mode);
    searched.vectors = Some(used);
    Ok(searched)
}

fn lexical(
    ws: &Workspace,
    scope: Scope,
    query: &str,
    limit: usize,
    until: Option<Instant>,
) -> Result<Searched> {
    let (named, query) = dates::named(query);
    let query = query::parse(&query)?;
    let why = match Index::open(ws, false, until) {
        Ok(index) => match indexed(ws, scope, &named, &query, limit, until, index)? {
            Ok(searched) => return Ok(searched),
            Err(why) => why,
        },
        Err(why) => why,
    };
    let clauses = query.clauses.len();
    let mut scanner = Scanner::new(&query);
    let mut unreadable = Vec::new();
    let files = files(ws, scope, &mut unreadable);
    let mut c = Counted::default();
    let mut read_files = 0;
    let unsearched = scan_files(
        ws,
        &files,
        &mut scanner,
        clauses,
        until,
        &mut c,
        &mut unreadable,
        &mut read_files,
    );
    let scored = scores(&c, clauses, |h| match h.origin {
        Origin::Read(i) => {
            files[i as usize].daily && dated_path(&named, &ws.relative(&files[i as usize].path))
        }
        Origin::Indexed(_) => false,
    });
    let shown = best(&scored, &c, limit, &mut |h| match h.origin {
        Origin::Read(i) => ws.relative(&files[i as usize].path),
        Origin::Indexed(_) => String::new(),
    });
    let mut found = Vec::new();
    let mut buf = Vec::new();
    for i in shown {
        let h = &c.hits[i];
        let Origin::Read(f) = h.origin else { continue };
        let file = &files[f as usize];
        found.push(found_read(ws, file, h, scored[i], &mut buf, &mut scanner)?);
    }
    Ok(Searched {
        found,
        unreadable,
        unsearched,
        index: Used {
            read: read_files,
            why: Some(why),
            ..Used::default()
        },
        ..Searched::default()
    })
}

/// A shown section: `line` of `text` (from `path`), the heading of the
/// section that begins at line `start`.
fn found_in(
    ws: &Workspace,
    path: &Path,
    text: &[u8],
    line: u32,
    start: u32,
    score: f64,
    scanner: &mut Scanner,
) -> Found {
    let starts = line_starts(text);
    let (line, shown) = shown_line(text, &starts, line);
    let at = scanner.first_match(&shown).unwrap_or(0);
    Found {
        path: ws.relative(path),
        line,
        heading: snippet::heading(&shown_line(text, &starts, start).1),
        snippet: snippet::snippet(&shown, at),
        text: shown,
        score,
    }
}

/// The search through the index: every section scored from it, the
/// files it cannot score read, and only the best sections' files read
/// to be shown. `Ok(Err(why))`: search without it.
fn indexed(
    ws: &Workspace,
    scope: Scope,
    named: &[dates::When],
    query: &query::Query,
    limit: usize,
    until: Option<Instant>,
    mut index: Index,
) -> Result<std::result::Result<Searched, String>> {
    let clauses = query.clauses.len();
    let mut scanner = Scanner::new(query);
    let mut torn = false;
    // Files found changed as they were shown: read and scanned at the next
    // try, as without the index.
    let mut changed = std::collections::HashSet::new();
    // A shown file found changed since it was read: read again, and the
    // search done again (twice at most; then without the index).
    for pass in 0..3 {
        let mut plan = match index.plan(scope, query, &mut |t| scanner.topic(t), &changed) {
            Ok(plan) => plan,
            Err(_) if !torn => {
                torn = true;
                index = match Index::open(ws, true, until) {
                    Ok(index) => index,
                    Err(why) => return Ok(Err(why)),
                };
                continue;
            }
            Err(_) => return Ok(Err("the index is torn".into())),
        };
        let mut unreadable: Vec<Unreadable> = std::mem::take(&mut plan.unreadable)
            .into_iter()
            .map(|(p, e)| Unreadable::new(ws.root.join(p), &e))
            .collect();
        let files: Vec<Listed> = plan.scan.iter().map(|p| listed_at(ws, p)).collect();
        let mut c = Counted {
            sections: plan.sections,
            total_len: plan.bytes,
            ..Counted::default()
        };
        for (i, h) in plan.hits.iter().enumerate() {
            c.hits.push(Hit {
                origin: Origin::Indexed(i as u32),
                line: h.section,
                start: 0,
                len: h.len,
                at: h.at,
            });
        }
        c.counts = std::mem::take(&mut plan.counts);
        let mut read_files = 0;
        let unsearched = scan_files(
            ws,
            &files,
            &mut scanner,
            clauses,
            until,
            &mut c,
            &mut unreadable,
            &mut read_files,
        );
        let mut paths: std::collections::HashMap<u32, String> = std::collections::HashMap::new();
        let mut path_of = |i: u32| -> String {
            paths
                .entry(i)
                .or_insert_with(|| index.hit_path(&plan.hits[i as usize]).unwrap_or_default())
                .clone()
        };
        let scored = scores(&c, clauses, |h| match h.origin {
            Origin::Read(i) => files[i as usize].daily && dated_path(named, &plan.scan[i as usize]),
            Origin::Indexed(i) => {
                !named.is_empty()
                    && dated_path(
                        named,
                        &index.hit_path(&plan.hits[i as usize]).unwrap_or_default(),
                    )
            }
        });
        let shown = best(&scored, &c, limit, &mut |h| match h.origin {
            Origin::Read(i) => plan.scan[i as usize].clone(),
            Origin::Indexed(i) => path_of(i),
        });
        let mut found = Vec::new();
        let mut stale = None;
        let mut buf = Vec::new();
        let mut shown_files = std::collections::HashSet::new();
        #[cfg(feature = "test-hooks")]
        if pass == 0
            && let Ok(spec) = std::env::var("AXE_TEST_APPEND_BEFORE_SHOW")
            && let Some((path, text)) = spec.split_once('\n')
        {
            // A test's moment: another writer's lines land after this
            // search's refresh and before it shows what it found.
            let _ = std::fs::OpenOptions::new()
                .append(true)
                .open(ws.root.join(path))
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
        }
        #[cfg(not(feature = "test-hooks"))]
        let _ = pass;
        for i in shown {
            let h = &c.hits[i];
            match h.origin {
                Origin::Read(f) => {
                    let file = &files[f as usize];
                    found.push(found_read(ws, file, h, scored[i], &mut buf, &mut scanner)?);
                }
                Origin::Indexed(k) => {
                    let ih = &plan.hits[k as usize];
                    let Ok(entry) = index.hit_file(ih) else {
                        return Ok(Err("the index is torn".into()));
                    };
                    let file = listed_at(ws, &entry.path);
                    // Stat'ed and read before shown: a file changed since
                    // the index read it is read again, and the search done
                    // again. Unless the index read it after this search
                    // began (a day's log appended to by another client as
                    // this search ran): the write is then one the search
                    // may leave out, and the section is shown if its text
                    // is still what the index read (its key).
                    buf.clear();
                    let stamp = file.stamp();
                    let read_whole = stamp.is_some() && read(ws, &file, &mut buf).is_ok();
                    let same = read_whole
                        && stamp == Some(entry.stamp)
                        && buf.len() as u64 == entry.stamp.len;
                    let since = !same && read_whole && index.read_during(&entry);
                    shown_files.insert(entry.path.clone());
                    let mut section = None;
                    let Ok(want_n) = index.section_in_file(ih) else {
                        return Ok(Err("the index is torn".into()));
                    };
                    let key = match since {
                        true => match index.key(ih.seg, ih.section) {
                            Ok(key) => key,
                            Err(_) => return Ok(Err("the index is torn".into())),
                        },
                        false => 0,
                    };
                    let Ok(at) = index.offset_in_file(ih) else {
                        return Ok(Err("the index is torn".into()));
                    };
                    // Only the section is scanned and shown: from where
                    // the index says it begins to the next heading (a
                    // day's log is hundreds of them).
                    let text = match (same || since, buf.get(at..)) {
                        (true, Some(rest)) => {
                            let end =
                                memchr::memmem::find(rest, b"\n#").map_or(rest.len(), |i| i + 1);
                            &rest[..end]
                        }
                        _ => &[][..],
                    };
                    if !text.is_empty() {
                        let mut topic = match want_n {
                            0 => file.topic.as_deref().and_then(|t| scanner.topic(t)),
                            _ => None,
                        };
                        let want = &c.counts[h.at..h.at + FIELDS * clauses];
                        let mut first = true;
                        scanner.scan(text, None, |mut s| {
                            if let Some(named) = topic.take() {
                                s.counts[TOPIC * clauses..(TOPIC + 1) * clauses]
                                    .copy_from_slice(&named);
                                s.first_hit.get_or_insert(s.start);
                            }
                            // Since the index read it, its length may
                            // differ by the blank line an append puts
                            // before its entry; its text (the key, of the
                            // text trimmed) not.
                            if std::mem::take(&mut first)
                                && s.counts == want
                                && match same {
                                    true => s.len as u32 == ih.len,
                                    false => text.get(..s.len).is_some_and(|raw| {
                                        vectors::section_key(file.topic.as_deref(), raw) == key
                                    }),
                                }
                            {
                                section = s.first_hit.map(|l| (l as u32, s.start as u32));
                            }
                        });
                    }
                    match section {
                        Some((line, start)) => {
                            let mut shown = found_in(
                                ws,
                                &file.path,
                                text,
                                line,
                                start,
                                scored[i],
                                &mut scanner,
                            );
                            shown.line += memchr::memchr_iter(b'\n', &buf[..at]).count();
                            found.push(shown);
                        }
                        None => {
                            stale = Some(entry.path);
                            break;
                        }
                    }
                }
            }
        }
        if let Some(path) = stale {
            if index.stale(ws, &path).is_err() {
                return Ok(Err("the index is torn".into()));
            }
            changed.insert(path);
            continue;
        }
        let mut used = index.save(ws);
        used.read = read_files + shown_files.len();
        used.current = plan.files;
        used.skipped = plan.files.saturating_sub(used.read);
        return Ok(Ok(Searched {
            found,
            unreadable,
            unsearched,
            index: used,
            ..Searched::default()
        }));
    }
    Ok(Err("the notes changed while searched".into()))
}

/// Builds the index of `ws` again, whole, from every notes file (see
/// `index`); the next search uses it.
pub fn reindex(ws: &Workspace) -> Used {
    match Index::open(ws, true, None) {
        Ok(index) => index.save(ws),
        Err(why) => Used {
            why: Some(why),
            ..Used::default()
        },
    }
}

/// Line `number` (1-based) of `text`, whose lines begin at `starts`,
/// trimmed, and its number; a blank one gives way to the next that is not
/// (a section found by its topic's name alone may begin with blank lines).
fn shown_line(text: &[u8], starts: &[usize], number: u32) -> (usize, String) {
    let first = number as usize - 1;
    for (i, &start) in starts.iter().enumerate().skip(first) {
        let end = starts.get(i + 1).map_or(text.len(), |next| next - 1);
        let line = String::from_utf8_lossy(&text[start..end]).trim().to_owned();
        if !line.is_empty() {
            return (i + 1, line);
        }
    }
    (number as usize, String::new())
}

/// The result `h` of `file`, a file the search read: read again (into
/// `buf`) for its line.
fn found_read(
    ws: &Workspace,
    file: &Listed,
    h: &Hit,
    score: f64,
    buf: &mut Vec<u8>,
    scanner: &mut Scanner,
) -> Result<Found> {
    buf.clear();
    read(ws, file, buf).map_err(|e| axe_memory::error::io_error("", "read", &file.path, e))?;
    Ok(found_in(
        ws, &file.path, buf, h.line, h.start, score, scanner,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_past_its_deadline_counts_what_it_did_not_search() {
        let tmp = tempfile::tempdir().unwrap();
        let ws = Workspace::at(tmp.path());
        std::fs::create_dir_all(tmp.path().join("world")).unwrap();
        for name in ["a", "b", "c"] {
            let path = tmp.path().join(format!("world/{name}.md"));
            std::fs::write(path, "We deploy on Tuesdays.\n").unwrap();
        }
        let searched = search(&ws, Scope::All, "deploy", 10, None).unwrap();
        assert_eq!((searched.found.len(), searched.unsearched), (3, 0));
        let past = Some(Instant::now());
        let searched = search(&ws, Scope::All, "deploy", 10, past).unwrap();
        assert!(searched.found.is_empty());
        assert_eq!(searched.unsearched, 3);
    }

    /// The paths `texts` (world topics named in path order) come out in
    /// when searched for "kayak".
    fn ranked(texts: &[&str]) -> Vec<String> {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("world")).unwrap();
        for (i, text) in texts.iter().enumerate() {
            let path = tmp.path().join(format!("world/t{i}.md"));
            std::fs::write(path, text).unwrap();
        }
        let ws = Workspace::at(tmp.path());
        let searched = search(&ws, Scope::All, "kayak", 10, None).unwrap();
        searched.found.into_iter().map(|f| f.path).collect()
    }

    /// BM25's `b` from both sides: a section's length weighs (of two
    /// naming the word once, the shorter first, though a tie would put it
    /// second), but little (one naming it twice at three times the length
    /// still comes first, which a `b` of 2/3 or more would undo).
    #[test]
    fn length_weighs_but_little() {
        // `text` made `len` bytes long with a word that is no query's.
        let padded = |text: &str, len: usize| format!("{text}{}", "x".repeat(len - text.len()));
        let short = padded("a kayak. ", 40);
        let long = padded("a kayak. ", 120);
        let twice = padded("a kayak, a kayak. ", 120);
        assert_eq!(ranked(&[&long, &short]), ["world/t1.md", "world/t0.md"]);
        assert_eq!(ranked(&[&short, &twice]), ["world/t1.md", "world/t0.md"]);
    }

    #[test]
    fn a_result_shows_its_heading_unless_the_line_is_the_heading() {
        let mut found = Found {
            path: "agents/a/daily/2026-11-20.md".into(),
            line: 5,
            text: "Rolled back the canary.".into(),
            score: 1.0,
            heading: Some("10:00".into()),
            snippet: "Rolled back the canary.".into(),
        };
        assert_eq!(
            found.to_string(),
            "agents/a/daily/2026-11-20.md:5: [10:00] Rolled back the canary."
        );
        found.text = "## 10:00 canary".into();
        found.snippet = found.text.clone();
        assert_eq!(
            found.to_string(),
            "agents/a/daily/2026-11-20.md:5: ## 10:00 canary"
        );
        found.heading = None;
        found.text = "Rolled back.".into();
        found.snippet = found.text.clone();
        assert_eq!(
            found.to_string(),
            "agents/a/daily/2026-11-20.md:5: Rolled back."
        );
    }
}
