//! A daily log's entries, each known by an identity that stays the same
//! wherever the entry goes: a sync merge of two machines' logs moves the
//! bytes of an entry (another machine's entries land before it) but never
//! changes its day, its `## HH:MM` header or its text, so the identity is
//! made of those three and not of where the entry lies in its file.

use super::workspace::{Workspace, day};
use crate::error::io_error;
use crate::hash::sha256_hex;
use axe_base::error::Result;

/// One entry of a daily log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `2026-11-22 <16 hex digits>`: the day first, so a set of them
    /// sorts by day and a prune can drop the ids of the days it removed.
    pub id: String,
    /// The log's day, `2026-11-22`.
    pub day: String,
    /// `14:05`, as the header gives it.
    pub time: String,
    /// The text under the header, surrounding blank lines trimmed.
    pub text: String,
}

/// The entries of the daily log of `day` whose text is `bytes`, in file
/// order. A line that starts with `## ` starts an entry (a remember
/// escapes such lines of its text, so none is forged); what comes before
/// the first (the `# <date>` line) is no entry.
pub fn parse(day: &str, bytes: &[u8]) -> Vec<Entry> {
    let text = String::from_utf8_lossy(bytes);
    let mut entries = Vec::new();
    let mut current: Option<(String, String)> = None;
    let close = |current: Option<(String, String)>, entries: &mut Vec<Entry>| {
        if let Some((time, body)) = current {
            let body = body.trim_matches('\n').trim_end().to_owned();
            let id = format!(
                "{day} {}",
                &sha256_hex(format!("{day}\n{time}\n{body}").as_bytes())[..16]
            );
            entries.push(Entry {
                id,
                day: day.to_owned(),
                time,
                text: body,
            });
        }
    };
    for line in text.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("## ") {
            close(current.take(), &mut entries);
            current = Some((header.trim().to_owned(), String::new()));
        } else if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
        }
    }
    close(current, &mut entries);
    entries
}

/// Every entry of `agent`'s daily logs, oldest day first, each log read
/// up to its last whole entry (an append cut off is no entry yet).
pub fn all(ws: &Workspace, agent: &str) -> Result<Vec<Entry>> {
    let path = ws.daily_dir(agent);
    let Some(dir) = ws
        .open_dir(&path)
        .map_err(|e| io_error("", "open", &path, e))?
    else {
        return Ok(Vec::new());
    };
    let files = Workspace::md_files(&dir).map_err(|e| io_error("", "read", &path, e))?;
    let mut entries = Vec::new();
    for (name, at) in files {
        let Some(date) = super::prune::dated(&name) else {
            continue;
        };
        let mut bytes = Vec::new();
        at.read_into(ws, &mut bytes)
            .map_err(|e| io_error("", "read", path.join(&name), e))?;
        entries.extend(parse(&day(date), &bytes));
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn an_entry_is_known_by_its_day_header_and_text_not_its_place() {
        let one = "# 2026-11-22\n\n## 09:00\n\nfirst\n\n## 10:00\n\nsecond\n";
        let merged = "# 2026-11-22\n\n## 08:00\n\nother machine\n\n## 09:00\n\nfirst\n\n## 10:00\n\nsecond\n";
        let a = parse("2026-11-22", one.as_bytes());
        let b = parse("2026-11-22", merged.as_bytes());
        assert_eq!(a.len(), 2);
        assert_eq!(b.len(), 3);
        assert_eq!(a[0].id, b[1].id);
        assert_eq!(a[1].id, b[2].id);
        assert_eq!(a[0].text, "first");
        assert!(a[0].id.starts_with("2026-11-22 "));
        // An escaped header (one space more) is text, not an entry.
        let escaped = parse("2026-11-22", b"# x\n\n## 09:00\n\n ## not one\n");
        assert_eq!(escaped.len(), 1);
        assert_eq!(escaped[0].text, " ## not one");
    }
}
