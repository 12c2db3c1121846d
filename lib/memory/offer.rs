//! How the three kinds of a release build offer their items to the
//! shared block, each under its row's heading, from what was loaded for
//! it (their rows' `offer`).

use std::borrow::Cow;

use crate::block::{Block, Place};
use crate::notes::{self, Kind as NoteKind};
use crate::row::{Loaded, Row};
use crate::{log, state};
use axe_base::error::Result;

/// The state's items, as `axe-state-context` shows them.
pub(crate) fn offer_state<'a>(
    l: &'a Loaded<'a>,
    row: &'static Row,
    b: &mut Block<'a>,
) -> Result<()> {
    if let Some(view) = &l.state {
        state::offer(view, l.now, row.heading, b);
    }
    Ok(())
}

/// The run log's entries, newest first. Text before the first entry (a
/// log written by hand, read whole with `last_n = 0`) is not an entry.
pub(crate) fn offer_log<'a>(l: &'a Loaded<'a>, row: &'static Row, b: &mut Block<'a>) -> Result<()> {
    let place = Place {
        section: row.heading,
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

/// The notes files of the row `of`, most wanted first. One whose size alone
/// shows it cannot fit is listed unread.
pub(crate) fn offer_notes<'a>(
    l: &'a Loaded<'a>,
    of: &'static Row,
    b: &mut Block<'a>,
) -> Result<()> {
    let heading = of.heading;
    let (Some(n), Some(kind)) = (&l.notes, of.note) else {
        return Ok(());
    };
    let name = of.kind.name();
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
