//! Links between the files of one source, rewritten to the places the
//! files got in the workspace: Claude Code's MEMORY.md is an index of
//! `[title](topic.md)` links to files that become `world/<name>.md`, and
//! an Obsidian vault links its notes by `[[name]]`. A link to anything
//! not imported from the same source (a web page, an anchor, a file left
//! out) is kept as it is.

use std::collections::HashMap;

/// Where the files of one source went: each source path (relative to
/// the source's root, `/` between components) to its workspace path.
#[derive(Debug, Default)]
pub struct Moved {
    by_path: HashMap<String, String>,
    /// For `[[name]]` links: a note's path without `.md`, and its file
    /// name without `.md` when no other note has that name, as Obsidian
    /// resolves them.
    by_name: HashMap<String, Option<String>>,
}

impl Moved {
    /// `src` (a source path) went to `dest` (a workspace path).
    pub fn add(&mut self, src: &str, dest: &str) {
        self.by_path.insert(src.to_owned(), dest.to_owned());
        let Some(stem) = src.strip_suffix(".md") else {
            return;
        };
        let topic = dest
            .rsplit('/')
            .next()
            .unwrap_or(dest)
            .trim_end_matches(".md")
            .to_owned();
        self.by_name.insert(stem.to_owned(), Some(topic.clone()));
        let base = stem.rsplit('/').next().unwrap_or(stem);
        if base != stem {
            self.by_name
                .entry(base.to_owned())
                .and_modify(|t| {
                    if t.as_deref() != Some(topic.as_str()) {
                        *t = None;
                    }
                })
                .or_insert(Some(topic));
        }
    }

    /// `text`, the file that was at `from` in the source and is now at
    /// `to` in the workspace, with its `](target)` links (and with
    /// `wiki`, its `[[target]]` links) to other files of the source
    /// rewritten to where they are now.
    pub fn rewrite(&self, text: &[u8], from: &str, to: &str, wiki: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(text.len());
        let mut i = 0;
        while i < text.len() {
            if text[i..].starts_with(b"](")
                && let Some((target, end)) = inline_target(text, i + 2)
                && let Some(new) = self.inline(target, from, to)
            {
                out.extend_from_slice(b"](");
                out.extend_from_slice(new.as_bytes());
                i = end;
                continue;
            }
            if wiki
                && text[i..].starts_with(b"[[")
                && let Some(close) = find(&text[i + 2..], b"]]")
                && let Ok(inner) = std::str::from_utf8(&text[i + 2..i + 2 + close])
                && let Some(new) = self.wiki(inner)
            {
                out.extend_from_slice(b"[[");
                out.extend_from_slice(new.as_bytes());
                i += 2 + close;
                continue;
            }
            out.push(text[i]);
            i += 1;
        }
        out
    }

    /// The new target of an inline link to `target` in the file that was
    /// at `from`, now at `to`; `None` to keep it.
    fn inline(&self, target: &[u8], from: &str, to: &str) -> Option<String> {
        let target = std::str::from_utf8(target).ok()?;
        let (path, fragment) = match target.find('#') {
            Some(at) => target.split_at(at),
            None => (target, ""),
        };
        // A URL (`https:`, `mailto:`), an anchor, an absolute path.
        if path.is_empty() || path.starts_with('/') || path.contains(':') {
            return None;
        }
        let path = percent_decoded(path)?;
        let src = joined(parent(from), &path)?;
        let dest = self.by_path.get(&src)?;
        let rel = relative(parent(to), dest);
        Some(format!("{}{fragment}", rel.replace(' ', "%20")))
    }

    /// `[[target#heading|alias]]`'s inside with `target` the note's new
    /// name; the alias, or else the name as written, still shown.
    fn wiki(&self, inner: &str) -> Option<String> {
        let (link, alias) = match inner.split_once('|') {
            Some((l, a)) => (l, Some(a)),
            None => (inner, None),
        };
        let (name, heading) = match link.find('#') {
            Some(at) => link.split_at(at),
            None => (link, ""),
        };
        let key = name.trim().trim_end_matches(".md");
        let topic = self.by_name.get(key)?.as_ref()?;
        if topic == key {
            return None;
        }
        let shown = alias.unwrap_or(name);
        Some(format!("{topic}{heading}|{shown}"))
    }
}

/// The target of the inline link starting at `at` (just past `](`) and
/// where the link's target ends (at its `)` or its title): `None` when
/// it is no link target (a space or line break first, no `)`).
fn inline_target(text: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = &text[at..];
    let end = rest
        .iter()
        .position(|&b| b == b')' || b == b' ' || b == b'\n' || b == b'\t')?;
    if end == 0 || rest[end] == b'\n' || rest[end] == b'\t' {
        return None;
    }
    Some((&rest[..end], at + end))
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len())
        .position(|w| w == needle)
        .filter(|&p| !hay[..p].contains(&b'\n'))
}

/// `%20` and the like decoded; `None` when it is not UTF-8 then.
fn percent_decoded(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// The folder of `path` (`""` at the root).
fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |at| &path[..at])
}

/// `rel` followed from the folder `dir`, `.` and `..` resolved; `None`
/// when it leaves the root.
fn joined(dir: &str, rel: &str) -> Option<String> {
    let mut parts: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    for p in rel.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            p => parts.push(p),
        }
    }
    Some(parts.join("/"))
}

/// The path from the folder `dir` to `path`, both from one root.
fn relative(dir: &str, path: &str) -> String {
    let from: Vec<&str> = dir.split('/').filter(|p| !p.is_empty()).collect();
    let to: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn moved() -> Moved {
        let mut m = Moved::default();
        m.add("MEMORY.md", "agents/app/MEMORY.md");
        m.add("API_conventions.md", "world/api-conventions.md");
        m.add("people/Ada Lovelace.md", "world/people-ada-lovelace.md");
        m
    }

    fn rewrite(text: &str, from: &str, to: &str, wiki: bool) -> String {
        String::from_utf8(moved().rewrite(text.as_bytes(), from, to, wiki)).unwrap()
    }

    #[test]
    fn links_follow_the_files() {
        assert_eq!(
            rewrite(
                "- [API](API_conventions.md#errors \"t\") and [web](https://x.org/a.md) [gone](gone.md)",
                "MEMORY.md",
                "agents/app/MEMORY.md",
                false
            ),
            "- [API](../../world/api-conventions.md#errors \"t\") and [web](https://x.org/a.md) [gone](gone.md)"
        );
        assert_eq!(
            rewrite(
                "[Ada](../people/Ada%20Lovelace.md) [[Ada Lovelace]] [[people/Ada Lovelace#Life|her]]",
                "notes/x.md",
                "world/notes-x.md",
                true
            ),
            "[Ada](people-ada-lovelace.md) [[people-ada-lovelace|Ada Lovelace]] [[people-ada-lovelace#Life|her]]"
        );
        // Leaving the root, or no wikilinks for this source: kept.
        assert_eq!(
            rewrite(
                "[x](../../MEMORY.md) [[Ada Lovelace]]",
                "a.md",
                "world/a.md",
                false
            ),
            "[x](../../MEMORY.md) [[Ada Lovelace]]"
        );
        // Rewritten again: the same.
        let once = rewrite("[[Ada Lovelace]]", "a.md", "world/a.md", true);
        assert_eq!(rewrite(&once, "a.md", "world/a.md", true), once);
    }
}
