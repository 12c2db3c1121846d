//! `recall`: what an agent knows, as agnx lays it out, within a budget.
//!
//! ```text
//! # World Knowledge
//!
//! ## <topic>
//!
//! <world/topic.md>
//!
//! ---
//!
//! # Your Memory
//!
//! <MEMORY.md>
//!
//! ---
//!
//! # Recent Experiences
//!
//! <today's log>
//!
//! ---
//!
//! <yesterday's log>
//! ```
//!
//! Empty sections are left out; with nothing at all the text is "No
//! memories found". When the whole would pass the character budget, whole
//! items are left out until it fits, least wanted first: the world
//! topics, largest first, then the oldest daily logs, MEMORY.md last
//! (the agent's own notes before what every agent shares, which an
//! import may have filled with a whole vault; see [`recall`]). A note after
//! the text says what was left out, and what could not be read (a file
//! without permission, a `world` that is not a directory): such a file is
//! skipped, never the whole recall. The budget holds the note too, and
//! for a recall served to an MCP client ([`recall_hashed`]) the paragraph
//! after it naming each file's sha256 (reflect's and learn_fact's
//! `if_match`): a client that cuts a long result must not lose the hashes
//! of files it showed, nor keep the hash of a file it cut.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use time::{Date, Duration};

use super::conflict;
use super::note::{self, Note, Unreadable};
pub use super::note::{Kind, LeftOut};
use super::workspace::{At, Workspace, day};
use crate::hash::sha256_hex;
use axe_base::error::Result;

/// One file of a recall.
#[derive(Debug, Clone)]
pub struct Item {
    pub kind: Kind,
    pub path: PathBuf,
    /// The topic for world files.
    pub title: String,
    pub text: Vec<u8>,
    pub chars: usize,
    pub sha256: String,
    /// The file's size.
    pub bytes: u64,
}

/// What a recall found and what it kept.
#[derive(Debug, Clone)]
pub struct Recalled {
    /// Included, in the order shown.
    pub items: Vec<Item>,
    /// Left out to keep within the budget, most wanted first.
    pub left_out: Vec<LeftOut>,
    /// Skipped: they could not be read.
    pub unreadable: Vec<Unreadable>,
    pub budget: usize,
    /// The SHA-256 of MEMORY.md when it was seen whole: shown, or with
    /// nothing in it to show (the hash of the empty file when there is
    /// none), for a reflect that must not overwrite what it did not see.
    /// `None` when it was left out or could not be read: a rewrite must not
    /// take it as seen, nor may the hash be handed out for `--if-match`.
    pub memory_sha256: Option<String>,
    /// The line naming conflict files a sync left for this agent's notes,
    /// shown first until they are resolved; the budget holds it.
    pub conflict: Option<String>,
    /// Whether the answer ends with the hash paragraph ([`recall_hashed`]).
    pub hashed: bool,
    /// The paragraph's line for a MEMORY.md seen empty (so not an item),
    /// when hashed.
    pub empty_memory: Option<String>,
}

const SEPARATOR: &str = "\n\n---\n\n";
const WORLD: &str = "# World Knowledge\n\n";
const MEMORY: &str = "# Your Memory\n\n";
const RECENT: &str = "# Recent Experiences\n\n";
const NOTHING: &str = "No memories found";
/// Between the text and the note.
const BEFORE_NOTE: &str = "\n\n";
/// What begins the hash paragraph of a served recall; a line a file
/// follows it.
const HASHES: &str =
    "\n\nThe sha256 of each file shown whole, for reflect's and learn_fact's if_match:";

/// A file a recall may show, before it is read.
#[derive(Debug, Clone)]
pub struct NoteFile {
    pub kind: Kind,
    pub path: PathBuf,
    /// The topic of a world file.
    pub title: String,
    /// Where it is read from.
    at: At,
}

impl NoteFile {
    /// Its size, when it is a regular, non-empty file inside the
    /// workspace.
    pub fn size(&self, ws: &Workspace) -> Option<u64> {
        self.at.size(ws)
    }

    /// Its bytes; `None` when it is missing, not a regular file, or leads
    /// out of the workspace (skipped, as context files are). An error is
    /// the file's alone: the caller skips it and says so.
    pub fn read(&self, ws: &Workspace) -> std::result::Result<Option<Vec<u8>>, Unreadable> {
        let mut bytes = Vec::new();
        match self.at.read_into(ws, &mut bytes) {
            Ok(true) => Ok(Some(bytes)),
            Ok(false) => Ok(None),
            Err(e) => Err(Unreadable::new(self.path.clone(), &e)),
        }
    }
}

/// The files a recall of `agent` may show, most wanted first: the
/// agent's own MEMORY.md, its daily logs of the `days` days up to
/// `today`, newest first, then the world topics, by name; and the
/// directories that could not be read, each with the kind of what it
/// holds (a `world` that is a regular file takes away the topics, not
/// MEMORY.md or the days).
pub fn files(
    ws: &Workspace,
    agent: &str,
    days: u64,
    today: Date,
) -> (Vec<NoteFile>, Vec<(Kind, Unreadable)>) {
    let mut unreadable = Vec::new();
    let open = |path: PathBuf, kind: Kind, unreadable: &mut Vec<_>| match ws.open_dir(&path) {
        Ok(dir) => dir,
        Err(e) => {
            unreadable.push((kind, Unreadable::new(path, &e)));
            None
        }
    };
    let agent_dir = open(ws.agent_dir(agent), Kind::Memory, &mut unreadable);
    let mut wanted = vec![NoteFile {
        kind: Kind::Memory,
        path: ws.memory(agent),
        title: String::new(),
        at: At::new(agent_dir, "MEMORY.md"),
    }];
    // Listed before the days are opened, so what could not be read is
    // said in the order it always was: the topics, then the days.
    let topics = match world(ws) {
        Ok(topics) => topics,
        Err(u) => {
            unreadable.push((Kind::World, u));
            Vec::new()
        }
    };
    // Opened once, so that a `daily` that is a regular file is said once,
    // not once a day.
    let daily = match days {
        0 => None,
        _ => open(ws.daily_dir(agent), Kind::Daily, &mut unreadable),
    };
    if let Some(dir) = daily {
        // A calendar window, not a directory listing: the cost is the
        // same whether the log goes back a week or ten years.
        let mut date = today;
        for _ in 0..days.min(36_600) {
            let name = format!("{}.md", day(date));
            wanted.push(NoteFile {
                kind: Kind::Daily,
                path: ws.daily(agent, date),
                title: String::new(),
                at: At::new(Some(Arc::clone(&dir)), &name).appended(),
            });
            match date.checked_sub(Duration::days(1)) {
                Some(d) => date = d,
                None => break,
            }
        }
    }
    wanted.extend(topics);
    (wanted, unreadable)
}

/// Text as shown: a file's bytes without trailing white space, `None`
/// when nothing is left.
pub fn shown(bytes: Vec<u8>) -> Option<Vec<u8>> {
    Some(trim_end(bytes)).filter(|t| !t.is_empty())
}

/// Reads `agent`'s world facts, MEMORY.md and the daily logs of the
/// `days` days up to `today` (UTC), within `budget` characters, the note
/// on what was left out or could not be read included.
///
/// Files are taken in the order they are wanted most: the
/// agent's own notes first, MEMORY.md then its daily logs newest first,
/// then the world topics, smallest first. The first that does not fit,
/// and every one after it, is left out, so leaving out starts with the
/// largest world topic and reaches the agent's own notes last: a bulk
/// import of world topics (a vault, another tool's memory) never pushes
/// today's log out, and one long topic does not hide the short ones. A
/// file left out is never read, so the cost follows what is shown. When
/// the note does not fit in what is left, the last files taken are left
/// out too until it does.
pub fn recall(
    ws: &Workspace,
    agent: &str,
    days: u64,
    today: Date,
    budget: usize,
) -> Result<Recalled> {
    recall_with(ws, agent, days, today, budget, false, &mut Reads::default())
}

/// [`recall`] whose answer ends with the paragraph naming the sha256 of
/// each file shown whole, within the same budget: a file whose hash line
/// does not fit is left out like one whose text does not. What it reads
/// is kept in `reads`, for the same recall made again within a smaller
/// budget.
pub fn recall_hashed(
    ws: &Workspace,
    agent: &str,
    days: u64,
    today: Date,
    budget: usize,
    reads: &mut Reads,
) -> Result<Recalled> {
    recall_with(ws, agent, days, today, budget, true, reads)
}

/// What one recall read, kept while it is made again within a smaller
/// budget (a served recall, until it fits what clients show): each
/// directory listed, each file sized, read and hashed once, so the
/// rounds see the same files and a day's log of 2,000 lines is not read
/// and hashed twice.
#[derive(Default)]
pub struct Reads {
    listed: Option<Listed>,
    sizes: HashMap<PathBuf, Option<u64>>,
    bytes: HashMap<PathBuf, std::result::Result<Option<Vec<u8>>, Unreadable>>,
    hashes: HashMap<PathBuf, String>,
}

struct Listed {
    conflict: Option<String>,
    wanted: Vec<NoteFile>,
    broken: Vec<(Kind, Unreadable)>,
}

impl Reads {
    fn size(&mut self, ws: &Workspace, f: &NoteFile) -> Option<u64> {
        *self
            .sizes
            .entry(f.path.clone())
            .or_insert_with(|| f.size(ws))
    }

    fn read(
        &mut self,
        ws: &Workspace,
        f: &NoteFile,
    ) -> std::result::Result<Option<Vec<u8>>, Unreadable> {
        self.bytes
            .entry(f.path.clone())
            .or_insert_with(|| f.read(ws))
            .clone()
    }

    fn sha256(&mut self, path: &Path, bytes: &[u8]) -> String {
        self.hashes
            .entry(path.to_owned())
            .or_insert_with(|| sha256_hex(bytes))
            .clone()
    }
}

fn recall_with(
    ws: &Workspace,
    agent: &str,
    days: u64,
    today: Date,
    budget: usize,
    hashed: bool,
    reads: &mut Reads,
) -> Result<Recalled> {
    let listed = reads.listed.get_or_insert_with(|| {
        let conflict = conflict::line(&ws.conflicts(agent));
        let (wanted, broken) = files(ws, agent, days, today);
        Listed {
            conflict,
            wanted,
            broken,
        }
    });
    let conflict = listed.conflict.clone();
    let (mut wanted, broken) = (listed.wanted.clone(), listed.broken.clone());
    let reserved = conflict
        .as_ref()
        .map_or(0, |l| l.chars().count() + BEFORE_NOTE.len());
    let budget = budget.saturating_sub(reserved);
    // Stable: MEMORY.md and the days keep their places before the topics,
    // topics of one size stay in name order.
    wanted.sort_by_cached_key(|f| match f.kind {
        Kind::World => (1, reads.size(ws, f).unwrap_or(0)),
        Kind::Memory | Kind::Daily => (0, 0),
    });
    let mut unreadable: Vec<Unreadable> = broken.into_iter().map(|(_, u)| u).collect();
    let mut wanted = wanted.into_iter();
    let (mut items, mut left_out, mut full) = (Vec::new(), Vec::new(), false);
    // A file of more than four bytes a character of the budget cannot
    // fit: it is named, never read (a huge or sparse file costs nothing).
    let too_big =
        |c: &NoteFile, left_out: &mut Vec<LeftOut>, reads: &mut Reads| match reads.size(ws, c) {
            Some(bytes) if bytes / 4 > budget as u64 => {
                left_out.push(LeftOut {
                    kind: c.kind,
                    path: c.path.clone(),
                    bytes,
                });
                true
            }
            _ => false,
        };
    let Some(memory_file) = wanted.next() else {
        return Err(axe_base::error::Error::Memory(
            "no MEMORY.md to recall".into(),
        ));
    };
    let (memory, mut memory_shown) = match too_big(&memory_file, &mut left_out, reads) {
        true => (None, false),
        false => match reads.read(ws, &memory_file) {
            Ok(memory) => (memory, true),
            Err(u) => {
                unreadable.push(u);
                (None, false)
            }
        },
    };
    full |= !left_out.is_empty();
    let memory_sha256 = memory_shown
        .then(|| reads.sha256(&memory_file.path, memory.as_deref().unwrap_or_default()));
    // The hash lines, counted as they are taken: what the budget holds
    // besides the texts.
    let mut lines = Lines {
        ws,
        hashed,
        chars: 0,
    };
    let empty_memory = match (&memory_sha256, &memory) {
        (Some(sha), m)
            if hashed
                && m.as_ref()
                    .is_none_or(|t| t.iter().all(u8::is_ascii_whitespace)) =>
        {
            Some(format!("{} (empty) {sha}", ws.relative(&memory_file.path)))
        }
        _ => None,
    };
    // Left unsaid when even it does not fit: an empty MEMORY.md may be
    // written without its hash anyway.
    let empty_memory = empty_memory.filter(|l| HASHES.len() + 1 + l.chars().count() <= budget);
    lines.chars += empty_memory.as_ref().map_or(0, |l| 1 + l.chars().count());
    if let Some(text) = memory.filter(|t| !t.iter().all(u8::is_ascii_whitespace)) {
        let sha256 = reads.sha256(&memory_file.path, &text);
        let memory = item(Kind::Memory, memory_file.path, String::new(), text, sha256);
        if let Err(it) = add(memory, &mut items, budget, &mut lines) {
            left_out.push(it);
            full = true;
        }
    }
    for c in wanted {
        if full {
            // Past the budget: named, not read.
            if let Some(bytes) = reads.size(ws, &c) {
                left_out.push(LeftOut {
                    kind: c.kind,
                    path: c.path,
                    bytes,
                });
            }
            continue;
        }
        if too_big(&c, &mut left_out, reads) {
            full = true;
            continue;
        }
        let text = match reads.read(ws, &c) {
            Ok(text) => text,
            Err(u) => {
                unreadable.push(u);
                continue;
            }
        };
        if let Some(text) = text.filter(|t| !t.iter().all(u8::is_ascii_whitespace))
            && let Err(it) = add(
                {
                    let sha256 = reads.sha256(&c.path, &text);
                    item(c.kind, c.path, c.title, text, sha256)
                },
                &mut items,
                budget,
                &mut lines,
            )
        {
            left_out.push(it);
            full = true;
        }
    }
    // Room for the note: the last taken go out until it fits. Each gives
    // back at least its heading's characters, and the note wants a line
    // or two, so this ends after a few rounds.
    while !items.is_empty() {
        let wanted = note::room_wanted(&left_out, &unreadable, budget);
        if wanted == 0 || size(&items) + lines.size() + BEFORE_NOTE.len() + wanted <= budget {
            break;
        }
        let it = items.pop().expect("not empty");
        lines.chars -= lines.of(&it);
        left_out.insert(0, left(it));
    }
    memory_shown &= !left_out.iter().any(|l| l.kind == Kind::Memory);
    let memory_sha256 = memory_sha256.filter(|_| memory_shown);
    // Shown world first (by name), then MEMORY.md, then the days, as
    // agnx shows them.
    items.sort_by(|a, b| {
        a.kind.cmp(&b.kind).then_with(|| match a.kind {
            Kind::World => a.title.cmp(&b.title),
            Kind::Memory | Kind::Daily => std::cmp::Ordering::Equal,
        })
    });
    Ok(Recalled {
        items,
        left_out,
        unreadable,
        budget,
        memory_sha256,
        conflict,
        hashed,
        empty_memory,
    })
}

/// The hash paragraph's characters so far.
struct Lines<'a> {
    ws: &'a Workspace,
    hashed: bool,
    /// Of the lines, each with the line break before it.
    chars: usize,
}

impl Lines<'_> {
    /// The line `item` adds: a line break, its path, a space, its hash.
    fn of(&self, item: &Item) -> usize {
        match self.hashed {
            true => 1 + self.ws.relative(&item.path).chars().count() + 1 + item.sha256.len(),
            false => 0,
        }
    }

    /// The whole paragraph: its head and lines, nothing without lines.
    fn size(&self) -> usize {
        match self.chars {
            0 => 0,
            n => HASHES.len() + n,
        }
    }
}

/// Adds `item` if the recall, its hash line included, stays within
/// `budget`; else hands it back as left out.
fn add(item: Item, items: &mut Vec<Item>, budget: usize, lines: &mut Lines) -> Result<(), LeftOut> {
    let line = lines.of(&item);
    items.push(item);
    lines.chars += line;
    if size(items) + lines.size() <= budget {
        return Ok(());
    }
    lines.chars -= line;
    Err(left(items.pop().expect("just pushed")))
}

fn left(item: Item) -> LeftOut {
    LeftOut {
        kind: item.kind,
        bytes: item.bytes,
        path: item.path,
    }
}

/// An item of the file at `path` holding `bytes`; its hash is the file's
/// (what `--if-match` compares), its text the bytes without trailing
/// white space (what is shown).
fn item(kind: Kind, path: PathBuf, title: String, bytes: Vec<u8>, sha256: String) -> Item {
    let size = bytes.len() as u64;
    let text = trim_end(bytes);
    Item {
        kind,
        chars: chars(&text),
        sha256,
        bytes: size,
        path,
        title,
        text,
    }
}

/// Text with trailing white space removed, as it is shown.
fn trim_end(mut text: Vec<u8>) -> Vec<u8> {
    while text.last().is_some_and(u8::is_ascii_whitespace) {
        text.pop();
    }
    text
}

/// Characters, a byte that is not UTF-8 counting as one.
fn chars(bytes: &[u8]) -> usize {
    bytes
        .utf8_chunks()
        .map(|c| c.valid().chars().count() + c.invalid().len())
        .sum()
}

/// `world/*.md`, in file name order, not yet read; none when there is no
/// `world`.
fn world(ws: &Workspace) -> std::result::Result<Vec<NoteFile>, Unreadable> {
    let path = ws.world();
    let listed = ws
        .open_dir(&path)
        .and_then(|dir| dir.map(|d| Workspace::md_files(&d)).transpose())
        .map_err(|e| Unreadable::new(path.clone(), &e))?;
    Ok(listed
        .unwrap_or_default()
        .into_iter()
        .map(|(name, at)| NoteFile {
            kind: Kind::World,
            path: path.join(&name),
            title: name.trim_end_matches(".md").to_owned(),
            at,
        })
        .collect())
}

/// The characters [`render`] makes of `items`, computed without making it.
fn size(items: &[Item]) -> usize {
    let (mut world, mut memory, mut recent) = (None::<usize>, None::<usize>, None::<usize>);
    for i in items {
        match i.kind {
            Kind::World => {
                let one = 3 + i.title.chars().count() + 2 + i.chars;
                world = Some(world.map_or(WORLD.len() + one, |w| w + 2 + one));
            }
            Kind::Memory => memory = Some(MEMORY.len() + i.chars),
            Kind::Daily => {
                recent =
                    Some(recent.map_or(RECENT.len() + i.chars, |r| r + SEPARATOR.len() + i.chars));
            }
        }
    }
    let sections: Vec<usize> = [world, memory, recent].into_iter().flatten().collect();
    if sections.is_empty() {
        return NOTHING.len();
    }
    sections.iter().sum::<usize>() + SEPARATOR.len() * (sections.len() - 1)
}

/// The recall's text: the sections of what it shows, as agnx lays them
/// out.
pub fn render(r: &Recalled) -> Vec<u8> {
    let of = |kind: Kind| r.items.iter().filter(move |i| i.kind == kind);
    let mut sections: Vec<Vec<u8>> = Vec::new();
    let world: Vec<Vec<u8>> = of(Kind::World)
        .map(|i| [format!("## {}\n\n", i.title).as_bytes(), &i.text].concat())
        .collect();
    if !world.is_empty() {
        sections.push([WORLD.as_bytes(), &world.join(&b"\n\n"[..])].concat());
    }
    if let Some(m) = of(Kind::Memory).next() {
        sections.push([MEMORY.as_bytes(), &m.text].concat());
    }
    let recent: Vec<&[u8]> = of(Kind::Daily).map(|i| i.text.as_slice()).collect();
    if !recent.is_empty() {
        sections.push([RECENT.as_bytes(), &recent.join(SEPARATOR.as_bytes())].concat());
    }
    if sections.is_empty() {
        return NOTHING.as_bytes().to_vec();
    }
    sections.join(SEPARATOR.as_bytes())
}

/// The recall as the model and `axe-notes-recall` show it: the text, then
/// the note on what it left out or could not read; within the budget.
pub fn answer(ws: &Workspace, r: &Recalled) -> Vec<u8> {
    let mut text = answer_within(ws, r);
    text.extend_from_slice(hashes(ws, r).as_bytes());
    match &r.conflict {
        Some(line) => [line.as_bytes(), BEFORE_NOTE.as_bytes(), &text].concat(),
        None => text,
    }
}

/// The paragraph after a hashed recall's text naming each file shown
/// whole and its hash, and MEMORY.md's when it was seen empty; empty when
/// not hashed or nothing was seen.
pub fn hashes(ws: &Workspace, r: &Recalled) -> String {
    if !r.hashed {
        return String::new();
    }
    let lines: Vec<String> = r
        .items
        .iter()
        .map(|i| format!("{} {}", ws.relative(&i.path), i.sha256))
        .chain(r.empty_memory.clone())
        .collect();
    match lines.is_empty() {
        true => String::new(),
        false => format!("{HASHES}\n{}", lines.join("\n")),
    }
}

/// What [`answer`] says besides the files' texts: the conflict line and
/// the note on what was left out or could not be read, as it shows them;
/// `None` when it says nothing more. For a caller that hands the files
/// over one by one (an MCP client's structured result) and must still
/// say all the text says.
pub fn remarks(ws: &Workspace, r: &Recalled) -> Option<String> {
    let body = answer_within(ws, r);
    let rendered = render(r);
    let note = match r.items.is_empty() {
        // Nothing shown: the whole text is the note, unless it is ours.
        true => Some(body).filter(|b| b != NOTHING.as_bytes()),
        false => body
            .strip_prefix(rendered.as_slice())
            .and_then(|rest| rest.strip_prefix(BEFORE_NOTE.as_bytes()))
            .map(<[u8]>::to_vec),
    };
    let said: Vec<String> = [r.conflict.clone(), note.map(|n| lossy(&n))]
        .into_iter()
        .flatten()
        .collect();
    (!said.is_empty()).then(|| said.join(BEFORE_NOTE))
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// [`answer`] without the conflict line, within what the budget leaves it.
fn answer_within(ws: &Workspace, r: &Recalled) -> Vec<u8> {
    let shown = !r.items.is_empty();
    let budget = r.budget.saturating_sub(hashes(ws, r).chars().count());
    let room = match shown {
        true => budget.saturating_sub(size(&r.items) + BEFORE_NOTE.len()),
        false => budget,
    };
    let note = match note::compose(ws, &r.left_out, &r.unreadable, r.budget, room) {
        Note::Nothing => None,
        Note::Fits(note) | Note::TooLong(note) => Some(note),
    };
    let mut text = match (shown, &note) {
        // With a note there is more to say than "No memories found".
        (false, Some(_)) => Vec::new(),
        _ => render(r),
    };
    if let Some(note) = note {
        if !text.is_empty() {
            text.extend_from_slice(BEFORE_NOTE.as_bytes());
        }
        text.extend_from_slice(note.as_bytes());
    }
    if shown {
        // `recall` made the note fit.
        return text;
    }
    // Nothing shown: the text is ours, and a budget too small even for
    // it is still kept, cut at a character.
    let text = String::from_utf8_lossy(&text);
    match text.char_indices().nth(budget) {
        Some((at, _)) => text[..at].as_bytes().to_vec(),
        None => text.as_bytes().to_vec(),
    }
}

impl Recalled {
    /// The characters the included items make.
    pub fn chars(&self) -> usize {
        size(&self.items)
    }

    /// MEMORY.md's hash when the model has seen it whole (see
    /// [`Recalled::memory_sha256`]).
    pub fn memory_seen(&self) -> Option<&str> {
        self.memory_sha256.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn it(kind: Kind, title: &str, text: &str) -> Item {
        item(
            kind,
            PathBuf::from(title),
            title.to_owned(),
            text.as_bytes().to_vec(),
            sha256_hex(text.as_bytes()),
        )
    }

    fn recalled(items: Vec<Item>) -> Recalled {
        Recalled {
            items,
            left_out: Vec::new(),
            unreadable: Vec::new(),
            budget: 0,
            memory_sha256: None,
            conflict: None,
            hashed: false,
            empty_memory: None,
        }
    }

    #[test]
    fn size_is_what_render_makes() {
        let all = [
            it(Kind::World, "ops", "Deploys are blue-green."),
            it(Kind::World, "people", "Ada leads.\n"),
            it(Kind::Memory, "", "I review Rust. é"),
            it(Kind::Daily, "", "# 2026-11-22\n\n## 10:00\n\nx"),
            it(Kind::Daily, "", "# 2026-11-21\n\n## 09:00\n\ny"),
        ];
        // Every subset, by bit mask.
        for mask in 0..(1u32 << all.len()) {
            let items: Vec<Item> = all
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, x)| x.clone())
                .collect();
            let shown = String::from_utf8(render(&recalled(items.clone()))).unwrap();
            assert_eq!(size(&items), shown.chars().count(), "{mask:b}: {shown}");
        }
    }

    #[test]
    fn the_layout_is_agnx() {
        let r = recalled(vec![
            it(Kind::World, "ops", "blue-green"),
            it(Kind::Memory, "", "mine"),
            it(Kind::Daily, "", "today"),
            it(Kind::Daily, "", "yesterday"),
        ]);
        assert_eq!(
            String::from_utf8(render(&r)).unwrap(),
            "# World Knowledge\n\n## ops\n\nblue-green\n\n---\n\n# Your Memory\n\nmine\n\n---\n\n\
             # Recent Experiences\n\ntoday\n\n---\n\nyesterday"
        );
    }

    #[test]
    fn a_tiny_budget_is_kept_even_with_nothing_to_show() {
        let ws = Workspace::at("/ws");
        let mut r = recalled(Vec::new());
        r.budget = 5;
        assert_eq!(answer(&ws, &r), b"No me");
        r.left_out.push(LeftOut {
            kind: Kind::World,
            path: PathBuf::from("/ws/world/a.md"),
            bytes: 10,
        });
        r.budget = 10;
        assert_eq!(answer(&ws, &r), b"(Left out:");
        r.budget = 1000;
        assert_eq!(
            String::from_utf8(answer(&ws, &r)).unwrap(),
            "(Left out to keep within 1000 characters: world/a.md (10 bytes). Use search_notes or raise recall_chars to see them.)"
        );
    }
}
