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

use super::block::{Block, Part};
use super::notes::{self, Workspace};
use super::{log, state};
use crate::kind::MemoryKind;
pub use crate::row::Request;
use crate::row::{Loaded, Notes};
use crate::settings::Settings;
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};

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
        if let Err(e) = (kind.row().offer)(&loaded, kind.row(), &mut block) {
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
