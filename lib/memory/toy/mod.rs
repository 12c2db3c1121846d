//! A toy kind of memory, compiled in test builds only (the `test-hooks`
//! feature): the proof that a kind is its folder and its row. Its
//! section `[toy]` holds one line of text, which is its one item in the
//! shared block; its files would be `toy/<agent>.md`, merged by entry
//! as a run log is. Nothing outside this folder names it but its row in
//! `kinds.rs` (and its field of `Settings`); `tests/kinds.rs` finds it in
//! `agents show`, the `agents init` template, `axe-context` and
//! `axe-sync init`'s `.gitattributes`.

use std::borrow::Cow;

use crate::block::{Block, Place};
pub mod settings;

use crate::kind::MemoryKind;
use crate::row::{Kind, Loaded, Merge, Resources, Row};
use axe_base::count::non_negative;
use axe_base::error::Result;

/// The toy kind.
pub const KIND: Kind = Kind {
    section: "toy",
    enabled: |s| s.toy.enabled,
    validate: |s| non_negative(&[("toy.size", s.toy.size)]),
    show: |_, s| vec![("Toy:", s.toy.enabled, s.toy.text.clone())],
    template: "# A toy kind of memory, in test builds only\n# [toy]\n# enabled = false\n# text = \"\"\n# size = 0\n",
};

/// Its one part.
pub const ROW: Row = Row {
    kind: MemoryKind::Toy,
    name: "toy",
    section: &KIND,
    note: None,
    heading: "# Toy\n",
    offer,
    merge: Merge::RunLog,
    holds: |p| matches!(p, ["toy", n] if n.ends_with(".md")),
    pattern: "toy/*.md",
    mime: "text/markdown",
    uri: "axe://toy/",
    resources: Some(Resources {
        list: |_, agent, _| vec![(format!("{agent}.md"), "toy".to_owned())],
        read: |_, agent, s, rest| {
            Ok((rest == format!("{agent}.md")).then(|| s.toy.text.clone().into_bytes()))
        },
    }),
};

/// Its text, as one item.
fn offer<'a>(l: &'a Loaded<'a>, row: &'static Row, b: &mut Block<'a>) -> Result<()> {
    let place = Place {
        section: row.heading,
        group: "",
    };
    let text = &l.cfg.toy.text;
    b.offer(place, "toy", Cow::Borrowed("text"), &["\n", text, "\n"]);
    Ok(())
}
