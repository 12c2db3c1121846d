//! Merging files of entries (run logs, daily logs): the union of the
//! entries of both sides, each once, in time order, none split.
//!
//! An entry starts at a line beginning with `## ` (a run log's RFC 3339
//! time; a run log escapes such lines in a result) and runs to the next;
//! in a daily log, whose text is kept as written, only at a `## HH:MM`
//! line, so a heading in a note's markdown stays inside its entry. What
//! comes before the first is the preamble (a daily log's `# <date>`
//! line). Its identity is its text without the white space it ends with:
//! the same entry synced twice, or reached by two paths, is kept once.
//!
//! Three-way: an entry the base had and one side no longer has was removed
//! on purpose there (a trim of the run log) and stays removed; an entry
//! either side added is kept. Each side's own order is kept, and entries
//! only the other side has are placed among them by their headers, which
//! sort as times; so the result never interleaves the lines of two
//! entries, and both machines reach the same text once each has merged
//! the other.

use std::collections::HashSet;

/// How entries are laid out in the file, so a merged file reads as one
/// its writer made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// A run log: `## <time>` … and a blank line after each entry.
    RunLog,
    /// A daily log: `# <date>`, then a blank line before each entry.
    Daily,
}

/// A file cut into its preamble and its entries.
struct Parsed<'a> {
    preamble: &'a [u8],
    entries: Vec<&'a [u8]>,
}

fn parse(layout: Layout, bytes: &[u8]) -> Parsed<'_> {
    let mut starts = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if starts_entry(layout, &bytes[at..]) {
            starts.push(at);
        }
        at = match memchr::memchr(b'\n', &bytes[at..]) {
            Some(i) => at + i + 1,
            None => bytes.len(),
        };
    }
    let preamble = &bytes[..starts.first().copied().unwrap_or(bytes.len())];
    let entries = starts
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let end = starts.get(i + 1).copied().unwrap_or(bytes.len());
            bytes[s..end].trim_ascii_end()
        })
        .collect();
    Parsed { preamble, entries }
}

/// Whether the line at the start of `rest` starts an entry.
fn starts_entry(layout: Layout, rest: &[u8]) -> bool {
    let Some(header) = rest.strip_prefix(b"## ") else {
        return false;
    };
    match (layout, header) {
        (Layout::RunLog, _) => true,
        (Layout::Daily, [h1, h2, b':', m1, m2, ..]) => {
            [h1, h2, m1, m2].iter().all(|b| b.is_ascii_digit())
        }
        (Layout::Daily, _) => false,
    }
}

/// How many entries `bytes` holds.
pub fn count(layout: Layout, bytes: &[u8]) -> usize {
    parse(layout, bytes).entries.len()
}

/// The header line of an entry, without `## `: what orders it.
fn header(entry: &[u8]) -> &[u8] {
    let line = entry.split(|&b| b == b'\n').next().unwrap_or_default();
    &line[3.min(line.len())..]
}

/// The entries of `ours` and `theirs` merged against `base`.
pub fn merge(layout: Layout, base: &[u8], ours: &[u8], theirs: &[u8]) -> Vec<u8> {
    let parse = |bytes| parse(layout, bytes);
    let (base, ours, theirs) = (parse(base), parse(ours), parse(theirs));
    let in_base: HashSet<&[u8]> = base.entries.iter().copied().collect();
    let in_ours: HashSet<&[u8]> = ours.entries.iter().copied().collect();
    let in_theirs: HashSet<&[u8]> = theirs.entries.iter().copied().collect();
    // Ours, less what they removed since the base.
    let kept: Vec<&[u8]> = ours
        .entries
        .iter()
        .copied()
        .filter(|e| !in_base.contains(e) || in_theirs.contains(e))
        .collect();
    // Theirs that we have neither nor removed, each once.
    let mut seen = HashSet::new();
    let added: Vec<&[u8]> = theirs
        .entries
        .iter()
        .copied()
        .filter(|e| !in_ours.contains(e) && !in_base.contains(e) && seen.insert(*e))
        .collect();
    let mut merged = Vec::with_capacity(kept.len() + added.len());
    let mut added = added.into_iter().peekable();
    for entry in kept {
        while let Some(next) = added.next_if(|a| header(a) < header(entry)) {
            merged.push(next);
        }
        merged.push(entry);
    }
    merged.extend(added);
    let preamble = match ours.preamble.trim_ascii().is_empty() {
        true => theirs.preamble,
        false => ours.preamble,
    };
    render(layout, preamble, &merged)
}

fn render(layout: Layout, preamble: &[u8], entries: &[&[u8]]) -> Vec<u8> {
    let size = preamble.len() + entries.iter().map(|e| e.len() + 2).sum::<usize>();
    let mut out = Vec::with_capacity(size);
    match layout {
        Layout::RunLog => {
            out.extend_from_slice(preamble);
            for e in entries {
                out.extend_from_slice(e);
                out.extend_from_slice(b"\n\n");
            }
        }
        Layout::Daily => {
            let preamble = preamble.trim_ascii_end();
            if !preamble.is_empty() {
                out.extend_from_slice(preamble);
                out.push(b'\n');
            }
            for e in entries {
                out.push(b'\n');
                out.extend_from_slice(e);
                out.push(b'\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &[u8] = b"# 2026-11-22\n\n## 09:00\n\nfirst\n";

    #[test]
    fn both_sides_additions_are_kept_once_in_time_order() {
        let ours = [BASE, b"\n## 10:00\n\nours\n"].concat();
        let theirs = [BASE, b"\n## 09:30\n\ntheirs\n\n## 11:00\n\nlate\n"].concat();
        let merged = merge(Layout::Daily, BASE, &ours, &theirs);
        assert_eq!(
            String::from_utf8(merged.clone()).unwrap(),
            "# 2026-11-22\n\n## 09:00\n\nfirst\n\n## 09:30\n\ntheirs\n\n## 10:00\n\nours\n\n## 11:00\n\nlate\n"
        );
        // Merging again changes nothing: an entry is never doubled.
        assert_eq!(merge(Layout::Daily, BASE, &merged, &theirs), merged);
    }

    #[test]
    fn an_entry_removed_on_one_side_stays_removed() {
        let base = b"## 2026-01-01T00:00:00Z\n**Task:** a\n**Result:** x\n\n";
        let ours = b"";
        let theirs = [
            &base[..],
            b"## 2026-01-02T00:00:00Z\n**Task:** b\n**Result:** y\n\n",
        ]
        .concat();
        let merged = merge(Layout::RunLog, base, ours, &theirs);
        assert_eq!(
            merged,
            b"## 2026-01-02T00:00:00Z\n**Task:** b\n**Result:** y\n\n"
        );
    }

    #[test]
    fn a_file_removed_on_one_side_keeps_only_the_other_sides_new_entries() {
        let theirs = [BASE, b"\n## 10:00\n\nnew\n"].concat();
        let merged = merge(Layout::Daily, BASE, b"", &theirs);
        assert_eq!(merged, b"# 2026-11-22\n\n## 10:00\n\nnew\n");
        assert_eq!(
            count(Layout::Daily, &merge(Layout::Daily, BASE, b"", BASE)),
            0
        );
    }

    #[test]
    fn unrelated_files_are_united() {
        let ours = b"## 2026-01-01T00:00:00Z\n**Task:** a\n**Result:** x\n\n";
        let theirs = b"## 2026-01-01T00:00:00Z\n**Task:** a\n**Result:** x\n\n## 2026-01-01T00:00:01Z\n**Task:** b\n**Result:** y\n\n";
        assert_eq!(merge(Layout::RunLog, b"", ours, theirs), theirs);
    }
}
