//! One character budget over every kind of memory an agent keeps: the
//! state's items, MEMORY.md, the run log's last entries, world topics and
//! daily logs, offered kind by kind in the agent's `[context] order` and
//! item by item within each kind, into one [`Block`] that never passes the
//! budget and lists all it left out.
//!
//! ```text
//! # Session Memory          the state, as axe-state-context shows it
//! # Your Memory             MEMORY.md
//! # Recent Runs             run-log entries, newest first
//! # World Knowledge         ## <topic> and its text, by name
//! # Recent Experiences      daily logs, newest first
//! ```
//!
//! A kind's heading and the section that turns it on are its row of
//! [`crate::kinds::KINDS`]; how it offers its items is its arm of
//! [`offer`]. Reading follows the budget: the state and the log's
//! tail are read whole (every item's size is needed to fill and to list),
//! but a note file that cannot fit by its size alone is listed unread.
//! A note file or directory that cannot be read (no permission, a `world`
//! that is a regular file) is skipped and said in the block, under its
//! kind, as a recall says it: the other files of the kind still go in.

use std::borrow::Cow;
use std::path::PathBuf;

use time::Date;

use super::block::{Block, Part, Place};
use super::notes::{self, Kind as NoteKind, Workspace};
use super::{log, state};
use crate::kinds::MemoryKind;
use crate::lock::Wait;
use crate::settings::Settings;
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};

/// How a kind offers its items to the block (its row's `offer`): from
/// what is loaded, under its row's heading.
pub type Offer = for<'a> fn(&'a Loaded<'a>, MemoryKind, &mut Block<'a>) -> Result<()>;

/// What a kind offers from: everything loaded for the block. The three
/// kinds of a release build are loaded ahead (the notes workspace once
/// for its three parts); another kind reads what it needs from `cfg` and
/// `request` in its own `offer`.
pub struct Loaded<'a> {
    pub agent: &'a str,
    pub cfg: &'a Settings,
    pub request: &'a Request<'a>,
    /// Where the run stands, for the state.
    now: state::Current<'a>,
    state: Option<state::View<'a>>,
    /// The run log's last entries, as in the file.
    log: Option<&'a [u8]>,
    notes: Option<Notes>,
}

/// The notes files the block may show, most wanted first.
struct Notes {
    ws: Workspace,
    files: Vec<notes::NoteFile>,
    /// Directories that could not be listed, by the kind they hold.
    unreadable: Vec<(NoteKind, notes::Unreadable)>,
    /// Conflict files a sync left (relative to the workspace).
    conflicts: Vec<String>,
}

/// What to assemble.
pub struct Request<'a> {
    /// Where the memory is: the command's directories.
    pub dirs: &'a Dirs,
    /// How long a file's lock is waited for.
    pub wait: Wait,
    pub budget: usize,
    /// The state's current task (shown first) and phase (its errors
    /// first).
    pub now: state::Current<'a>,
    /// Whether to list what went in and what did not.
    pub listing: bool,
    /// The run log's last entries when the caller has read them already
    /// (`axe-run`, for its memory warnings); else they are read here.
    pub log: Option<&'a [u8]>,
    /// The last day whose daily log is shown (UTC).
    pub today: Date,
}

/// The assembled block; as JSON, what `axe-context --json` prints.
#[derive(Debug, Default, serde::Serialize)]
pub struct Assembled {
    pub budget: usize,
    pub chars: usize,
    /// The kinds offered, in order: those in the order whose memory the
    /// agent keeps.
    pub kinds: Vec<&'static str>,
    pub text: String,
    pub included: Vec<Part<'static>>,
    pub left_out: Vec<Part<'static>>,
}

/// The block of `agent` (configured by `cfg`). A kind that cannot be read
/// is reported to `failed` and left out; the others still go in.
pub fn assemble(
    agent: &str,
    cfg: &Settings,
    request: &Request,
    failed: &mut dyn FnMut(MemoryKind, Error),
) -> Assembled {
    let order = cfg.context.order();
    let wants = |k: MemoryKind| order.contains(&k);
    let kept: Vec<MemoryKind> = order
        .iter()
        .copied()
        .filter(|k| cfg.keeps(k.row().section))
        .collect();
    let keeps = |k: MemoryKind| kept.contains(&k);

    // Loaded first, then offered: the block borrows from what is loaded.
    let state_file = keeps(MemoryKind::State)
        .then(|| load_state(request, agent, cfg))
        .and_then(|r| r.map_err(|e| failed(MemoryKind::State, e)).ok());
    let log_tail = keeps(MemoryKind::Log)
        .then(|| match request.log {
            Some(read) => Ok(Cow::Borrowed(read)),
            None => load_log(request, agent, cfg).map(Cow::Owned),
        })
        .and_then(|r| r.map_err(|e| failed(MemoryKind::Log, e)).ok());
    // The notes workspace is loaded once for all the kinds it holds.
    let note_kinds = || kept.iter().copied().filter(|k| k.row().note.is_some());
    let notes = note_kinds()
        .next()
        .is_some()
        .then(|| load_notes(request.dirs, agent, cfg, request.today, wants))
        .and_then(|r| {
            // Reported once, under the first of the notes kinds it stops.
            let first = note_kinds().next();
            r.map_err(|e| {
                if let Some(k) = first {
                    failed(k, e);
                }
            })
            .ok()
        });
    let state = state_file.as_ref().and_then(|(path, bytes)| {
        state::view(path, bytes)
            .map_err(|e| failed(MemoryKind::State, e))
            .ok()
    });
    let loaded = Loaded {
        agent,
        cfg,
        request,
        now: request.now,
        state,
        log: log_tail.as_deref(),
        notes,
    };

    let mut block = match request.listing {
        true => Block::listing(request.budget),
        false => Block::new(request.budget),
    };
    for &kind in &kept {
        if let Err(e) = (kind.row().offer)(&loaded, kind, &mut block) {
            failed(kind, e);
        }
    }
    let owned = |parts: Vec<Part>| parts.into_iter().map(Part::into_owned).collect();
    Assembled {
        budget: request.budget,
        chars: block.chars(),
        kinds: kept.iter().map(|k| k.name()).collect(),
        included: owned(std::mem::take(&mut block.included)),
        left_out: owned(std::mem::take(&mut block.left_out)),
        text: block.text,
    }
}

fn load_state(request: &Request, agent: &str, cfg: &Settings) -> Result<(PathBuf, Vec<u8>)> {
    let path = state::file_path(request.dirs, agent, &cfg.state.path)?;
    let bytes = state::read(&path, request.wait)?;
    Ok((path, bytes))
}

fn load_log(request: &Request, agent: &str, cfg: &Settings) -> Result<Vec<u8>> {
    let path = log::file_path(request.dirs, agent, &cfg.log.path)?;
    log::load(&path, cfg.log.last_n.get(), request.wait)
}

fn load_notes(
    dirs: &Dirs,
    agent: &str,
    cfg: &Settings,
    today: Date,
    wants: impl Fn(MemoryKind) -> bool,
) -> Result<Notes> {
    let ws = Workspace::of(dirs, &cfg.notes)?;
    let days = match wants(MemoryKind::Daily) {
        true => cfg.notes.recall_days.get(),
        false => 0,
    };
    let (files, unreadable) = notes::files(&ws, agent, days, today);
    let conflicts = ws.conflicts(agent);
    Ok(Notes {
        ws,
        files,
        unreadable,
        conflicts,
    })
}

pub(crate) fn offer_state<'a>(
    l: &'a Loaded<'a>,
    kind: MemoryKind,
    b: &mut Block<'a>,
) -> Result<()> {
    if let Some(view) = &l.state {
        state::offer(view, l.now, kind.row().heading, b);
    }
    Ok(())
}

/// The run log's entries, newest first. Text before the first entry (a
/// log written by hand, read whole with `last_n = 0`) is not an entry.
pub(crate) fn offer_log<'a>(l: &'a Loaded<'a>, kind: MemoryKind, b: &mut Block<'a>) -> Result<()> {
    let place = Place {
        section: kind.row().heading,
        group: "",
    };
    for entry in log::entries(l.log.unwrap_or_default()).into_iter().rev() {
        let text = String::from_utf8_lossy(entry);
        let header = text.lines().next().unwrap_or_default();
        let when = header.strip_prefix("## ").unwrap_or(header).trim();
        b.offer(
            place,
            "log",
            Cow::Owned(when.to_owned()),
            &["\n", text.trim_end(), "\n"],
        );
    }
    Ok(())
}

/// The notes files of `of`, most wanted first. One whose size alone
/// shows it cannot fit is listed unread.
pub(crate) fn offer_notes<'a>(l: &'a Loaded<'a>, of: MemoryKind, b: &mut Block<'a>) -> Result<()> {
    let heading = of.row().heading;
    let (Some(n), Some(kind)) = (&l.notes, of.row().note) else {
        return Ok(());
    };
    let name = of.name();
    let place = Place {
        section: heading,
        group: "",
    };
    // Said where the kind's files would be, in what the budget holds.
    let unreadable = |b: &mut Block<'a>, u: &notes::Unreadable| {
        let path = n.ws.relative(&u.path);
        let said = format!("(Could not read {path}: {}.)", u.why);
        b.offer(
            place,
            name,
            Cow::Owned(format!("{path} (unreadable)")),
            &["\n", &said, "\n"],
        );
    };
    for (_, u) in n.unreadable.iter().filter(|(k, _)| *k == kind) {
        unreadable(b, u);
    }
    // Said first, under the kind of the note it is beside, until resolved.
    let beside = |c: &&String| match c.starts_with("world/") {
        true => kind == NoteKind::World,
        false => kind == NoteKind::Memory,
    };
    let conflicts: Vec<String> = n.conflicts.iter().filter(beside).cloned().collect();
    if let Some(said) = notes::conflict::line(&conflicts) {
        let item = Cow::Owned(format!("{} (sync conflict)", conflicts.join(", ")));
        b.offer(place, name, item, &["\n", &said, "\n"]);
    }
    for f in n.files.iter().filter(|f| f.kind == kind) {
        let Some(size) = f.size(&n.ws) else { continue };
        let item = Cow::Owned(n.ws.relative(&f.path));
        if !b.could_fit(size) {
            b.skip_file(name, item, size);
            continue;
        }
        let text = match f.read(&n.ws) {
            Ok(text) => text,
            Err(u) => {
                unreadable(b, &u);
                continue;
            }
        };
        let Some(text) = text.and_then(notes::shown) else {
            continue;
        };
        let text = String::from_utf8_lossy(&text);
        let title: [&str; 3] = match kind {
            NoteKind::World => ["## ", &f.title, "\n\n"],
            _ => ["", "", ""],
        };
        let [t0, t1, t2] = title;
        b.offer(place, name, item, &["\n", t0, t1, t2, &text, "\n"]);
    }
    Ok(())
}
