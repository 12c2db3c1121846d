//! What a kind is to the code outside its folder: its value ([`Kind`],
//! one a folder), the parts the block and the memory repository see
//! ([`Row`]), and what a row's offer reads ([`Loaded`], for a
//! [`Request`]). The tables of them are `kinds`; this module is below the
//! folders' values and the tables, so neither names the other back.

use time::Date;

use crate::block::Block;
use crate::kind::MemoryKind;
use crate::lock::Wait;
use crate::notes::{self, Kind as NoteKind, Workspace};
use crate::settings::Settings;
use crate::state;
use axe_base::dirs::Dirs;
use axe_base::error::Result;

/// A kind of memory as its folder offers it (`log::KIND`,
/// `notes::KIND`, `state::KIND`): its agent-file section and what the
/// layers above do with it through this value, never by its name.
#[derive(Debug)]
pub struct Kind {
    /// Its section of an agent file, as [`Settings`] takes it whole: the
    /// TOML key (`memory`, `notes`, `state`).
    pub section: &'static str,
    /// Whether the agent's settings turn it on.
    pub enabled: fn(&Settings) -> bool,
    /// Its section's checks, in Go's order and words, the first failure
    /// winning (the agent's validation calls each kind's in [`KINDS`]'
    /// order).
    pub validate: fn(&Settings) -> Result<()>,
    /// Its lines in `agents show`: label, whether shown, value (the
    /// directories, for paths in effect).
    pub show: fn(&Dirs, &Settings) -> Vec<Shown>,
    /// Its commented section in the `agents init` template, whole lines,
    /// after the template's own. Empty for the three kinds of a release
    /// build, whose sections the template lays out line by line in Go's
    /// order with what `agents init`'s flags fill in
    /// (`axe_agent::scaffold`).
    pub template: &'static str,
}

/// A line of `agents show`: its label, whether it is shown, its value.
pub type Shown = (&'static str, bool, String);

/// A resource's bytes.
pub type Read = Vec<u8>;

/// A resource: the rest of its URI after its row's `uri`, and its title.
pub type Listed = (String, String);

impl PartialEq for Kind {
    /// One kind a section: the section names it.
    fn eq(&self, other: &Kind) -> bool {
        self.section == other.section
    }
}

/// How two versions of one of a kind's files merge (`axe-sync` and its
/// git merge drivers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Entries united, laid out as a run log.
    RunLog,
    /// Entries united, laid out as a daily log.
    Daily,
    /// Merged by meaning, as a state.
    State,
    /// Line by line, a conflict kept beside.
    Lines,
}

impl Merge {
    /// The name of its git merge driver (`merge=axe-<driver>` in
    /// `.gitattributes`).
    pub const fn driver(self) -> &'static str {
        match self {
            Merge::RunLog => "runlog",
            Merge::Daily => "daily",
            Merge::State => "state",
            Merge::Lines => "lines",
        }
    }
}

/// One part of a kind, to the code outside its folder: what the shared
/// block, `[context] order`, `axe-sync` and the MCP resources ask of it.
/// The notes kind has three (MEMORY.md, world topics, daily logs); the
/// others one.
#[derive(Debug, Clone, Copy)]
pub struct Row {
    pub kind: MemoryKind,
    /// As `[context] order`, `axe-context --json`'s `kinds` and warnings
    /// name it.
    pub name: &'static str,
    /// The kind whose folder lays these files out and whose section turns
    /// them on.
    pub section: &'static Kind,
    /// The notes kind of its files, for a kind the notes workspace holds.
    pub note: Option<NoteKind>,
    /// Its heading in the shared block.
    pub heading: &'static str,
    /// How it offers its items to the shared block, under its heading.
    pub offer: Offer,
    pub merge: Merge,
    /// Whether a file at these path components of the memory repository
    /// (the data directory, or a notes workspace synced with `--dir`) is
    /// one of its files: the layout `log::file_path`, `state::file_path`
    /// and the notes workspace give them.
    pub holds: fn(&[&str]) -> bool,
    /// The same files as a git pattern (`.gitattributes`, where the
    /// merge driver of each kind is named).
    pub pattern: &'static str,
    /// Its MIME type as an MCP resource.
    pub mime: &'static str,
    /// Where its MCP resources' URIs start: the notes workspace's kinds
    /// share `axe://notes/`, the URIs mirroring where the files are.
    pub uri: &'static str,
    /// What `axe-mcp` lists and reads of it, for an agent served whole
    /// that keeps it. `None` for the five kinds of a release build, whose
    /// listing `axe-mcp` does itself (`resources.rs`: the notes workspace
    /// it holds, each kind's own bounds).
    pub resources: Option<Resources>,
}

/// A kind's MCP resources through its row.
#[derive(Debug, Clone, Copy)]
pub struct Resources {
    /// Its resources now: the rest of each URI after the row's `uri`, and
    /// its title.
    pub list: fn(&Dirs, &str, &Settings) -> Vec<Listed>,
    /// The resource at the rest of a URI; `None` for none there.
    pub read: fn(&Dirs, &str, &Settings, &str) -> Result<Option<Read>>,
}

/// How a kind offers its items to the block (its row's `offer`): from
/// what is loaded, under its row's heading.
pub type Offer = for<'a> fn(&'a Loaded<'a>, &'static Row, &mut Block<'a>) -> Result<()>;

/// What a kind offers from: everything loaded for the block. The three
/// kinds of a release build are loaded ahead (the notes workspace once
/// for its three parts); another kind reads what it needs from `cfg` and
/// `request` in its own `offer`.
pub struct Loaded<'a> {
    pub agent: &'a str,
    pub cfg: &'a Settings,
    pub request: &'a Request<'a>,
    /// Where the run stands, for the state.
    pub(crate) now: state::Current<'a>,
    pub(crate) state: Option<state::View<'a>>,
    /// The run log's last entries, as in the file.
    pub(crate) log: Option<&'a [u8]>,
    pub(crate) notes: Option<Notes>,
}

/// The notes files the block may show, most wanted first.
pub(crate) struct Notes {
    pub(crate) ws: Workspace,
    pub(crate) files: Vec<notes::NoteFile>,
    /// Directories that could not be listed, by the kind they hold.
    pub(crate) unreadable: Vec<(NoteKind, notes::Unreadable)>,
    /// Conflict files a sync left (relative to the workspace).
    pub(crate) conflicts: Vec<String>,
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

impl Settings {
    /// Whether the agent keeps `kind`.
    pub fn keeps(&self, kind: &Kind) -> bool {
        (kind.enabled)(self)
    }
}
