//! `search`: the sections of every notes file, ranked by BM25 against a
//! query. A section is a heading line and what follows it up to the next
//! heading (so each `## HH:MM` entry of a daily log is one), or the text
//! before a file's first heading.
//!
//! One pass over the files: each section's length and the counts of the
//! query's terms are taken as the bytes go by, and a matching section is
//! kept as a few numbers; only the best are read again for their line, so
//! memory stays small however much the notes hold or match.
//!
//! A file or directory that cannot be read (no permission, a `world` that
//! is a regular file) is skipped and named in the result, never the end of
//! the search.

use std::io;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use super::note::Unreadable;
use super::workspace::{At, Scope, Workspace};
use crate::error::{Error, Result};

/// BM25's usual constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// One ranked section.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Found {
    /// Relative to the workspace.
    pub path: String,
    /// The 1-based line shown: the section's first line with a query term.
    pub line: usize,
    pub text: String,
    pub score: f64,
}

/// What a search found, and what it could not read.
#[derive(Debug, Default)]
pub struct Searched {
    /// Best first.
    pub found: Vec<Found>,
    /// Skipped, in the order met.
    pub unreadable: Vec<Unreadable>,
}

/// A section while it is read.
#[derive(Default)]
struct Section {
    /// Its length in bytes: BM25's document length.
    len: usize,
    counts: Vec<u32>,
    /// The 1-based number of its first line with a query term.
    first_hit: Option<usize>,
}

/// A matching section, as numbers: its counts are `counts[at..at + n]`
/// of the search's one flat list.
struct Hit {
    file: u32,
    line: u32,
    len: u32,
    at: usize,
}

/// The words of `text`, lower-cased: runs of letters and digits.
pub fn terms(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let word = word.to_lowercase();
        if !out.contains(&word) {
            out.push(word);
        }
    }
    out
}

/// The best `limit` sections for `query` in the files of `scope`.
pub fn search(ws: &Workspace, scope: Scope, query: &str, limit: usize) -> Result<Searched> {
    let terms = terms(query);
    if terms.is_empty() {
        return Err(Error::Usage("the query has no words to search for".into()));
    }
    let mut unreadable = Vec::new();
    let files = files(ws, scope, &mut unreadable);
    let mut hits: Vec<Hit> = Vec::new();
    let mut counts: Vec<u32> = Vec::new();
    let (mut sections, mut total_len) = (0usize, 0usize);
    let (mut buf, mut lower) = (Vec::new(), Vec::new());
    for (index, file) in files.iter().enumerate() {
        buf.clear();
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
        if !may_match(&buf, &terms, &mut lower) {
            sections += count_sections(&buf);
            total_len += buf.len();
            continue;
        }
        scan(&buf, &terms, |s: Section| {
            sections += 1;
            total_len += s.len;
            if let Some(line) = s.first_hit {
                hits.push(Hit {
                    file: index as u32,
                    line: line as u32,
                    len: s.len as u32,
                    at: counts.len(),
                });
                counts.extend_from_slice(&s.counts);
            }
        });
    }
    let counts_of = |h: &Hit| &counts[h.at..h.at + terms.len()];
    let n = sections as f64;
    let avg = (total_len as f64 / n.max(1.0)).max(1.0);
    let idf: Vec<f64> = (0..terms.len())
        .map(|t| {
            let df = hits.iter().filter(|h| counts_of(h)[t] > 0).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut scored: Vec<(f64, &Hit)> = hits
        .iter()
        .map(|h| {
            let norm = K1 * (1.0 - B + B * f64::from(h.len) / avg);
            let score = counts_of(h)
                .iter()
                .zip(&idf)
                .map(|(&tf, idf)| {
                    let tf = f64::from(tf);
                    idf * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum();
            (score, h)
        })
        .collect();
    // Best first; equal scores in file and line order (files are listed in
    // path order), so the output is stable.
    scored.sort_by(|(a, x), (b, y)| {
        b.total_cmp(a)
            .then_with(|| x.file.cmp(&y.file))
            .then_with(|| x.line.cmp(&y.line))
    });
    scored.truncate(limit);
    let found = scored
        .into_iter()
        .map(|(score, h)| {
            let file = &files[h.file as usize];
            Ok(Found {
                path: ws.relative(&file.path),
                line: h.line as usize,
                text: line_text(ws, file, h.line as usize, &mut buf)?,
                score,
            })
        })
        .collect::<Result<_>>()?;
    Ok(Searched { found, unreadable })
}

/// Line `number` (1-based) of `file`, read again: only the shown few are.
fn line_text(ws: &Workspace, file: &Listed, number: usize, buf: &mut Vec<u8>) -> Result<String> {
    buf.clear();
    read(ws, file, buf).map_err(|e| Error::memory("", "read", &file.path, &e))?;
    let line = buf
        .split(|&b| b == b'\n')
        .nth(number - 1)
        .unwrap_or_default();
    Ok(String::from_utf8_lossy(line).trim().to_owned())
}

/// A notes file to search: its path, and where it is read from (its
/// directory opened once, not once per file).
struct Listed {
    path: PathBuf,
    at: At,
}

/// The bytes of `file` into `buf`, when it is a notes file to read.
fn read(ws: &Workspace, file: &Listed, buf: &mut Vec<u8>) -> io::Result<()> {
    file.at.read_into(ws, buf).map(|_| ())
}

/// Bytes that are part of a word: ASCII letters and digits, and every byte
/// above ASCII (letters of other scripts, compared whole).
const WORD: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b >= 0x80;
        b += 1;
    }
    table
};

/// Whether `text` may hold one of `terms`: an ASCII case-insensitive
/// substring search (so a yes may be part of a longer word). Terms of other
/// scripts always may.
fn may_match(text: &[u8], terms: &[String], lower: &mut Vec<u8>) -> bool {
    if terms.iter().any(|t| !t.is_ascii()) {
        return true;
    }
    lower.clear();
    lower.extend(text.iter().map(u8::to_ascii_lowercase));
    terms
        .iter()
        .any(|t| memchr::memmem::find(lower, t.as_bytes()).is_some())
}

/// How many sections [`scan`] would find in `text`.
fn count_sections(text: &[u8]) -> usize {
    if text.is_empty() {
        return 0;
    }
    1 + memchr::memmem::find_iter(&text[..text.len() - 1], b"\n#").count()
}

/// Hands each section of `text` to `done`. One pass over the bytes: this
/// loop is most of a search's time, so it is written for speed.
fn scan(text: &[u8], terms: &[String], mut done: impl FnMut(Section)) {
    let fresh = || Section {
        counts: vec![0; terms.len()],
        ..Section::default()
    };
    let mut section = fresh();
    let (mut started, mut line, mut line_start, mut from) = (false, 1usize, true, 0);
    let mut i = 0;
    while i < text.len() {
        let b = text[i];
        if line_start {
            if b == b'#' && started {
                section.len = i - from;
                from = i;
                done(std::mem::replace(&mut section, fresh()));
            }
            started = true;
            line_start = false;
        }
        if b == b'\n' {
            line += 1;
            line_start = true;
            i += 1;
        } else if WORD[usize::from(b)] {
            let start = i;
            while i < text.len() && WORD[usize::from(text[i])] {
                i += 1;
            }
            let word = &text[start..i];
            if let Some(t) = terms.iter().position(|t| same(t, word)) {
                section.counts[t] += 1;
                section.first_hit.get_or_insert(line);
            }
        } else {
            i += 1;
        }
    }
    if started {
        section.len = text.len() - from;
        done(section);
    }
}

/// Whether `word` is the lower-cased `term`.
fn same(term: &str, word: &[u8]) -> bool {
    if term.len() == word.len() && term.as_bytes().eq_ignore_ascii_case(word) {
        return true;
    }
    // Only other scripts can differ in length once lower-cased.
    !term.is_ascii() && std::str::from_utf8(word).is_ok_and(|w| w.to_lowercase() == term)
}

/// The notes files of `scope`: world topics, then each agent's MEMORY.md
/// and daily logs; a directory that cannot be listed goes to `unreadable`.
fn files(ws: &Workspace, scope: Scope, unreadable: &mut Vec<Unreadable>) -> Vec<Listed> {
    let mut files = md_files(ws, &ws.world(), unreadable);
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
        });
        files.extend(md_files(ws, &ws.daily_dir(&agent), unreadable));
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
            })
            .collect(),
        Err(e) => {
            unreadable.push(Unreadable::new(dir.to_path_buf(), &e));
            Vec::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(text: &str, query: &str) -> Vec<(usize, Vec<u32>, Option<usize>)> {
        let mut out = Vec::new();
        scan(text.as_bytes(), &terms(query), |s| {
            out.push((s.len, s.counts, s.first_hit));
        });
        out
    }

    #[test]
    fn sections_split_at_headings() {
        let text = "intro words\n## 10:00\n\nDeploys are Blue-green.\n## 11:00\n\nnothing here\n";
        assert_eq!(
            sections(text, "blue deploys"),
            [
                (12, vec![0, 0], None),
                (34, vec![1, 1], Some(4)),
                (23, vec![0, 0], None),
            ]
        );
        assert_eq!(count_sections(text.as_bytes()), 3);
        assert_eq!(count_sections(b"## a\nb\n## c"), 2);
        assert_eq!(count_sections(b""), 0);
        let mut lower = Vec::new();
        let terms = terms("Blue");
        assert!(may_match(b"BLUE sky", &terms, &mut lower));
        assert!(!may_match(b"red sky", &terms, &mut lower));
    }

    #[test]
    fn terms_are_lower_case_words_once() {
        assert_eq!(terms("Blue-green, BLUE! über"), ["blue", "green", "über"]);
        assert!(same("über", "Über".as_bytes()));
        assert!(!same("blue", b"blues"));
    }
}
