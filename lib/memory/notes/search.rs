//! `search`: the sections of every notes file, ranked by BM25 against a
//! query. A section is a heading line and what follows it up to the next
//! heading (so each `## HH:MM` entry of a daily log is one), or the text
//! before a file's first heading.
//!
//! One pass over the files: each section's length and the counts of the
//! query's terms are taken as the bytes go by, so memory follows the
//! matches, not the notes.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::workspace::{Scope, Workspace};
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

/// A section while it is read.
#[derive(Default)]
struct Section {
    len: usize,
    counts: Vec<u32>,
    first_hit: Option<(usize, String)>,
}

/// A matching section once read.
struct Hit {
    file: usize,
    len: usize,
    counts: Vec<u32>,
    line: usize,
    text: String,
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
pub fn search(ws: &Workspace, scope: Scope, query: &str, limit: usize) -> Result<Vec<Found>> {
    let terms = terms(query);
    if terms.is_empty() {
        return Err(Error::Usage("the query has no words to search for".into()));
    }
    let files = files(ws, scope)?;
    let mut hits: Vec<Hit> = Vec::new();
    let (mut sections, mut total_len) = (0usize, 0usize);
    let mut buf = Vec::new();
    for (index, path) in files.iter().enumerate() {
        buf.clear();
        match read(path, &mut buf) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::memory("", "read", path, &e)),
        }
        scan(&buf, &terms, |s: Section| {
            sections += 1;
            total_len += s.len;
            if let Some((line, text)) = s.first_hit {
                hits.push(Hit {
                    file: index,
                    len: s.len,
                    counts: s.counts,
                    line,
                    text,
                });
            }
        });
    }
    let n = sections as f64;
    let avg = (total_len as f64 / n.max(1.0)).max(1.0);
    let idf: Vec<f64> = (0..terms.len())
        .map(|t| {
            let df = hits.iter().filter(|h| h.counts[t] > 0).count() as f64;
            (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
        })
        .collect();
    let mut found: Vec<Found> = hits
        .into_iter()
        .map(|h| {
            let norm = K1 * (1.0 - B + B * h.len as f64 / avg);
            let score = h
                .counts
                .iter()
                .zip(&idf)
                .map(|(&tf, idf)| {
                    let tf = f64::from(tf);
                    idf * tf * (K1 + 1.0) / (tf + norm)
                })
                .sum();
            Found {
                path: ws.relative(&files[h.file]),
                line: h.line,
                text: h.text,
                score,
            }
        })
        .collect();
    // Best first; equal scores in file and line order, so output is stable.
    found.sort_by(|a, b| {
        b.score
            .total_cmp(&a.score)
            .then_with(|| a.path.cmp(&b.path))
            .then_with(|| a.line.cmp(&b.line))
    });
    found.truncate(limit);
    Ok(found)
}

fn read(path: &Path, buf: &mut Vec<u8>) -> io::Result<()> {
    use std::io::Read;
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut file = options.open(path)?;
    if !file.metadata()?.is_file() {
        return Ok(());
    }
    file.read_to_end(buf).map(|_| ())
}

/// Hands each section of `text` to `done`.
fn scan(text: &[u8], terms: &[String], mut done: impl FnMut(Section)) {
    let mut section = Section {
        counts: vec![0; terms.len()],
        ..Section::default()
    };
    let mut started = false;
    for (number, line) in text.split(|&b| b == b'\n').enumerate() {
        if line.first() == Some(&b'#') && started {
            done(std::mem::replace(
                &mut section,
                Section {
                    counts: vec![0; terms.len()],
                    ..Section::default()
                },
            ));
        }
        started = true;
        let mut hit = false;
        for word in words(line) {
            section.len += 1;
            if let Some(t) = terms.iter().position(|t| same(t, word)) {
                section.counts[t] += 1;
                hit = true;
            }
        }
        if hit && section.first_hit.is_none() {
            let shown = String::from_utf8_lossy(line).trim().to_owned();
            section.first_hit = Some((number + 1, shown));
        }
    }
    if started {
        done(section);
    }
}

/// The words of a line as bytes: runs of ASCII letters and digits, and of
/// any bytes above ASCII (letters of other scripts, compared whole).
fn words(line: &[u8]) -> impl Iterator<Item = &[u8]> {
    line.split(|&b| b.is_ascii() && !b.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// Whether `word` is the lower-cased `term`.
fn same(term: &str, word: &[u8]) -> bool {
    if word.is_ascii() {
        return term.len() == word.len() && term.as_bytes().eq_ignore_ascii_case(word);
    }
    std::str::from_utf8(word).is_ok_and(|w| w.to_lowercase() == term)
}

/// The notes files of `scope`: world topics, then each agent's MEMORY.md
/// and daily logs.
fn files(ws: &Workspace, scope: Scope) -> Result<Vec<PathBuf>> {
    let mut files = md_files(&ws.world())?;
    let agents: Vec<String> = match scope {
        Scope::Agent(agent) => vec![agent.to_owned()],
        Scope::All => {
            let mut names: Vec<String> = match fs::read_dir(ws.root.join("agents")) {
                Ok(entries) => entries
                    .filter_map(|e| e.ok()?.file_name().into_string().ok())
                    .collect(),
                Err(_) => Vec::new(),
            };
            names.sort();
            names
        }
    };
    for agent in agents {
        files.push(ws.memory(&agent));
        files.extend(md_files(&ws.daily_dir(&agent))?);
    }
    files.retain(|f| ws.check_inside(f).is_ok());
    Ok(files)
}

/// The `*.md` files of `dir`, by name; none when it does not exist.
fn md_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(Error::memory("", "read", dir, &e)),
    };
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md") && !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names.into_iter().map(|n| dir.join(n)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sections(text: &str, query: &str) -> Vec<(usize, Vec<u32>, Option<usize>)> {
        let mut out = Vec::new();
        scan(text.as_bytes(), &terms(query), |s| {
            out.push((s.len, s.counts, s.first_hit.map(|h| h.0)));
        });
        out
    }

    #[test]
    fn sections_split_at_headings() {
        let text = "intro words\n## 10:00\n\nDeploys are Blue-green.\n## 11:00\n\nnothing here\n";
        assert_eq!(
            sections(text, "blue deploys"),
            [
                (2, vec![0, 0], None),
                (6, vec![1, 1], Some(4)),
                (4, vec![0, 0], None),
            ]
        );
    }

    #[test]
    fn terms_are_lower_case_words_once() {
        assert_eq!(terms("Blue-green, BLUE! über"), ["blue", "green", "über"]);
        assert!(same("über", "Über".as_bytes()));
        assert!(!same("blue", b"blues"));
    }
}
