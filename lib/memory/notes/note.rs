//! The lines that follow a recall or a search: what was left out to keep
//! within the budget, and what could not be read.
//!
//! ```text
//! (Left out to keep within 2000 characters: world/zeta.md (120 bytes) and 2,950 more topics, 2 more daily logs. Use search_notes or raise recall_chars to see them.)
//! (Could not read: world/secret.md (permission denied).)
//! ```
//!
//! A recall's budget holds these lines too, so each names as many files
//! as fit in the room it is given and counts the rest: with thousands of
//! topics left out, naming them all would be longer than the recall.

use std::path::PathBuf;

use super::workspace::Workspace;

/// Which part of the workspace a file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    World,
    Memory,
    Daily,
}

/// A file a recall left out, and its size in bytes.
#[derive(Debug, Clone)]
pub struct LeftOut {
    pub kind: Kind,
    pub path: PathBuf,
    pub bytes: u64,
}

/// A file or directory that could not be read, and why; skipped, so that
/// one broken file does not hide all the others.
#[derive(Debug, Clone)]
pub struct Unreadable {
    pub path: PathBuf,
    /// The reason, as `describe_io` words it: `permission denied`.
    pub why: String,
}

impl Unreadable {
    pub fn new(path: PathBuf, err: &std::io::Error) -> Unreadable {
        // The walk names the part that is not a directory; when that is
        // this path itself, the note names it already.
        let why = match axe_base::beneath::not_a_dir(err) {
            Some(at) if at == path => "not a directory".to_owned(),
            _ => axe_base::error::describe_io(err),
        };
        Unreadable { path, why }
    }
}

/// The lines about a recall's left-out and unreadable files, for `room`
/// characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Note {
    /// Nothing was left out and everything could be read.
    Nothing,
    /// The lines, within the room.
    Fits(String),
    /// Even the shortest lines pass the room: these.
    TooLong(String),
}

/// The lines for `left_out` (of a recall within `budget` characters) and
/// `unreadable`, one line each, together within `room` characters if they
/// can be.
pub fn compose(
    ws: &Workspace,
    left_out: &[LeftOut],
    unreadable: &[Unreadable],
    budget: usize,
    room: usize,
) -> Note {
    if left_out.is_empty() && unreadable.is_empty() {
        return Note::Nothing;
    }
    // What could not be read is named first (there are seldom many, and
    // each is something broken), leaving the room the shortest left-out
    // line needs; the left-out line takes what is left.
    let reserved = match left_out.is_empty() {
        true => 0,
        false => chars(&left_out_count(left_out.len())) + usize::from(!unreadable.is_empty()),
    };
    let broken = match unreadable.is_empty() {
        true => None,
        false => match unreadable_line(ws, unreadable, room.saturating_sub(reserved)) {
            Some(line) => Some(line),
            None => return Note::TooLong(shortest(left_out, unreadable)),
        },
    };
    let mut lines = Vec::new();
    if !left_out.is_empty() {
        let used = broken.as_ref().map_or(0, |l| chars(l) + 1);
        match left_out_line(ws, left_out, budget, room.saturating_sub(used)) {
            Some(line) => lines.push(line),
            None => return Note::TooLong(shortest(left_out, unreadable)),
        }
    }
    lines.extend(broken);
    Note::Fits(lines.join("\n"))
}

/// The line for `unreadable` with no room limit, for a search; `None` when
/// everything could be read.
pub fn unreadable_note(ws: &Workspace, unreadable: &[Unreadable]) -> Option<String> {
    if unreadable.is_empty() {
        return None;
    }
    unreadable_line(ws, unreadable, usize::MAX)
}

/// The lines in their shortest forms, counting and naming nothing.
fn shortest(left_out: &[LeftOut], unreadable: &[Unreadable]) -> String {
    let mut lines = Vec::new();
    if !left_out.is_empty() {
        lines.push(left_out_count(left_out.len()));
    }
    if !unreadable.is_empty() {
        lines.push(could_not_read(unreadable.len()));
    }
    lines.join("\n")
}

fn left_out_count(n: usize) -> String {
    format!("(Left out: {}.)", files(n))
}

/// The shortest unreadable line, which is also what [`list`] makes when
/// it names none.
fn could_not_read(n: usize) -> String {
    format!("(Could not read: {}.)", files(n))
}

/// What a recall keeps room for, as it fills: a note that counts what it
/// left out by kind and gives the advice, and counts what it could not
/// read; the shortest note when the budget is smaller than that. (A
/// smaller room would leave more text in and say less about the rest.)
pub fn room_wanted(left_out: &[LeftOut], unreadable: &[Unreadable], budget: usize) -> usize {
    if left_out.is_empty() && unreadable.is_empty() {
        return 0;
    }
    let broken = match unreadable.is_empty() {
        true => 0,
        false => chars(&could_not_read(unreadable.len())) + usize::from(!left_out.is_empty()),
    };
    let left = match left_out.is_empty() {
        true => 0,
        false => {
            chars(&advice_head(budget)) + chars(&by_kind(counts(left_out), "")) + chars(ADVICE)
        }
    };
    match left + broken <= budget {
        true => left + broken,
        false => chars(&shortest(left_out, unreadable)),
    }
}

fn advice_head(budget: usize) -> String {
    format!("(Left out to keep within {budget} characters: ")
}

const ADVICE: &str = ". Use search_notes or raise recall_chars to see them.)";

/// How many of `left_out` are MEMORY.md, topics and daily logs.
fn counts(left_out: &[LeftOut]) -> [usize; 3] {
    let mut counts = [0; 3];
    for l in left_out {
        counts[match l.kind {
            Kind::Memory => 0,
            Kind::World => 1,
            Kind::Daily => 2,
        }] += 1;
    }
    counts
}

/// `MEMORY.md, 2,950 topics, 2 daily logs`, with `more` before the kinds
/// when some are named before.
fn by_kind([memory, world, daily]: [usize; 3], more: &str) -> String {
    let mut parts = Vec::new();
    if memory > 0 {
        parts.push("MEMORY.md".to_owned());
    }
    if world > 0 {
        parts.push(format!(
            "{} {more}{}",
            grouped(world),
            plural(world, "topic")
        ));
    }
    if daily > 0 {
        let logs = plural(daily, "daily log");
        parts.push(format!("{} {more}{logs}", grouped(daily)));
    }
    parts.join(", ")
}

fn left_out_line(
    ws: &Workspace,
    left_out: &[LeftOut],
    budget: usize,
    room: usize,
) -> Option<String> {
    let names: Vec<String> = left_out
        .iter()
        .map(|l| format!("{} ({} bytes)", ws.relative(&l.path), l.bytes))
        .collect();
    // What is left unnamed when the first `k` are named, by kind.
    let mut after = vec![[0usize; 3]; left_out.len() + 1];
    for k in (0..left_out.len()).rev() {
        let one = counts(&left_out[k..=k]);
        after[k] = [0, 1, 2].map(|i| after[k + 1][i] + one[i]);
    }
    let rest = |k: usize| by_kind(after[k], if k > 0 { "more " } else { "" });
    // Shorter and shorter: with the advice, then without it, then only
    // the count.
    list(&advice_head(budget), &names, rest, ADVICE, room)
        .or_else(|| list("(Left out: ", &names, rest, ".)", room))
        .or_else(|| {
            let short = left_out_count(left_out.len());
            (chars(&short) <= room).then_some(short)
        })
}

fn unreadable_line(ws: &Workspace, unreadable: &[Unreadable], room: usize) -> Option<String> {
    let names: Vec<String> = unreadable
        .iter()
        .map(|u| format!("{} ({})", ws.relative(&u.path), u.why))
        .collect();
    let n = names.len();
    let rest = |k: usize| match k {
        0 => files(n),
        _ => format!("{} more", grouped(n - k)),
    };
    list("(Could not read: ", &names, rest, ".)", room)
}

/// `head`, then as many of `names` as fit (most wanted first, apart by
/// commas), then `rest(k)` for the rest when `k` are named (after " and "
/// when any are), then `tail`: the longest that fits in `room`.
fn list(
    head: &str,
    names: &[String],
    rest: impl Fn(usize) -> String,
    tail: &str,
    room: usize,
) -> Option<String> {
    let fixed = chars(head) + chars(tail);
    // The characters of the first k names with their commas.
    let mut named = vec![0usize; names.len() + 1];
    for (k, name) in names.iter().enumerate() {
        named[k + 1] = named[k] + chars(name) + if k > 0 { 2 } else { 0 };
    }
    let k = (0..=names.len()).rev().find(|&k| {
        let rest = match (k, k == names.len()) {
            (_, true) => 0,
            (0, false) => chars(&rest(0)),
            (_, false) => " and ".len() + chars(&rest(k)),
        };
        fixed + named[k] + rest <= room
    })?;
    let mut line = String::from(head);
    line.push_str(&names[..k].join(", "));
    if k < names.len() {
        if k > 0 {
            line.push_str(" and ");
        }
        line.push_str(&rest(k));
    }
    line.push_str(tail);
    Some(line)
}

/// `1 file`, `2,950 files`.
fn files(n: usize) -> String {
    format!("{} {}", grouped(n), plural(n, "file"))
}

fn plural(n: usize, word: &str) -> String {
    match n {
        1 => word.to_owned(),
        _ => format!("{word}s"),
    }
}

/// `2950` as `2,950`.
fn grouped(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

pub(super) fn chars(s: &str) -> usize {
    s.chars().count()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn left(kind: Kind, path: &str) -> LeftOut {
        LeftOut {
            kind,
            path: PathBuf::from(path),
            bytes: 10,
        }
    }

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(2950), "2,950");
        assert_eq!(grouped(1_234_567), "1,234,567");
    }

    #[test]
    fn a_note_names_what_fits_and_counts_the_rest() {
        let ws = Workspace::at("/ws");
        let mut all = vec![left(Kind::Memory, "/ws/agents/a/MEMORY.md")];
        all.extend((0..3000).map(|i| left(Kind::World, &format!("/ws/world/t{i}.md"))));
        all.push(left(Kind::Daily, "/ws/agents/a/daily/2026-01-01.md"));
        let bad = [Unreadable {
            path: PathBuf::from("/ws/world/x.md"),
            why: "permission denied".into(),
        }];
        for room in [0, 20, 60, 100, 150, 400, 2000, 100_000, usize::MAX] {
            match compose(&ws, &all, &bad, 2000, room) {
                Note::Fits(note) => {
                    assert!(chars(&note) <= room, "{room}: {note}");
                    assert!(note.contains("\n(Could not read: "), "{note}");
                    if room >= 400 {
                        assert!(
                            note.ends_with("\n(Could not read: world/x.md (permission denied).)")
                        );
                    }
                }
                Note::TooLong(note) => {
                    assert!(room < 60, "{room}");
                    assert_eq!(note, "(Left out: 3,002 files.)\n(Could not read: 1 file.)");
                }
                Note::Nothing => panic!("something to say"),
            }
        }
        let Note::Fits(note) = compose(&ws, &all, &[], 2000, 165) else {
            panic!()
        };
        assert_eq!(
            note,
            "(Left out to keep within 2000 characters: agents/a/MEMORY.md (10 bytes) and 3,000 more topics, 1 more daily log. Use search_notes or raise recall_chars to see them.)"
        );
        let Note::Fits(note) = compose(&ws, &all[1..], &[], 2000, 121) else {
            panic!()
        };
        assert_eq!(
            note,
            "(Left out to keep within 2000 characters: 3,000 topics, 1 daily log. Use search_notes or raise recall_chars to see them.)"
        );
        assert_eq!(compose(&ws, &[], &[], 10, 0), Note::Nothing);
    }
}
