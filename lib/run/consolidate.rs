//! One consolidation of an agent's notes: the model is shown MEMORY.md
//! whole, the world topics it names and the daily-log entries no
//! consolidation took in yet (with the run log's entries and the state's
//! decisions, where the agent keeps them), and rewrites them through the
//! notes tools it always has, so their caps, `if_match`, redaction and
//! locks hold here as in any run. What the prompt showed whole counts as
//! seen, as a recall's would.
//!
//! A consolidation's record (see `axe_memory::notes::history`) holds
//! exactly what the consolidation itself wrote: for each file its tools
//! wrote, the bytes there at the moment of its first write (read under
//! the file's lock, not at the start of the run) and the hash of what it
//! left; the record is on disk before the file changes, so a run that
//! dies midway loses nothing it replaced. A change someone else made
//! while the model was thinking is never in it, and neither is a file it
//! did not write. Once it is done the record names, unless a rewrite
//! lost to another writer, the entries it took in, so the next
//! consolidation starts after them. An undo restores a file only while it
//! holds the consolidation's bytes, all its files or none, and never
//! removes a file it did not create.
//!
//! It may write world topics, which are every agent's: the agent may in
//! any run (learn_fact is one of its notes tools), and moving a fact
//! every agent shares out of MEMORY.md is part of consolidating, so
//! refusing it here would widen nothing and lose that. What it replaces
//! in a topic is recorded as in MEMORY.md, and undone the same way.
//!
//! A dry run does the same in a scratch copy of the notes it reads, and
//! reports what its tools wrote there.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::prepared::{Overrides, Prepared};
use super::session::Session;
use super::{converse, once};
use axe_agent::{AgentConfig, Agents};
use axe_base::error::{Error, Result};
use axe_base::report::Report;
use axe_llm::{Deadline, Message, Usage};
use axe_memory::Wait;
use axe_memory::error::io_error;
use axe_memory::hash::sha256_hex;
use axe_memory::notes::entries::{self, Entry};
use axe_memory::notes::history::{self, Kept, Record};
use axe_memory::notes::{self, Witness, Workspace};
use axe_memory::secrets::Secrets;

/// What the model is told it is doing.
const SYSTEM: &str = "\
You consolidate an agent's notes between its sessions. Its MEMORY.md is its curated \
long-term memory, read at the start of every run; its daily logs are what happened, \
entry by entry. You are given MEMORY.md whole, the world topics it names, and the \
daily-log entries written since the last consolidation.

Keep what will still matter in a month: durable facts, decisions and why they were \
made, the user's preferences, names, dates, plans as they stand now. Leave out what \
was routine or is already in MEMORY.md. When a new entry supersedes something in \
MEMORY.md (a plan changed, a value was moved, a decision was reversed), replace the \
old statement rather than keeping both, and say in your final answer what you removed \
as superseded and why. Keep dates where they matter (\"since 2026-05-03\").

Write MEMORY.md with reflect: one call with its whole new text, which must stay \
within its cap of {cap} characters: merge and shorten rather than append. A fact about \
the world shared by every agent (a person, a system, a place) goes to its topic with \
learn_fact, the topic's whole new text. What you were shown counts as read: you need \
not recall first. If a write is refused because the file changed meanwhile, stop: \
do not write again, the next consolidation will see the change. If nothing is worth \
keeping, write nothing. End with a short answer: what you kept, what you merged, \
what you removed as superseded.";

/// How a consolidation ran.
pub struct Options {
    pub dry_run: bool,
    /// `-v`: the notes tools' lines and the turns, on stderr.
    pub verbose: bool,
    /// The longest it may take.
    pub timeout: Duration,
    /// How long a notes lock is waited for; `None`: until the deadline.
    pub wait: Option<Wait>,
    /// Record the calls in the ledger (off: `--no-log`).
    pub log: bool,
}

/// One file it changed (or, dry, would change).
#[derive(Debug, Clone, Serialize)]
pub struct Changed {
    /// Relative to the workspace.
    pub path: String,
    /// `null`: it did not exist.
    pub sha256_before: Option<String>,
    /// `null`: it does not exist (any more).
    pub sha256_after: Option<String>,
    #[serde(skip)]
    pub before: Vec<u8>,
    #[serde(skip)]
    pub after: Vec<u8>,
}

/// What a consolidation did.
#[derive(Debug, Serialize)]
pub struct Done {
    pub agent: String,
    pub dry_run: bool,
    /// Whether the model was asked: not when nothing was new.
    pub model_called: bool,
    /// The ids of the entries it took in (`<day> <hash>`).
    pub entries: Vec<String>,
    /// New entries left for the next consolidation, over the prompt's
    /// budget (`recall_chars`).
    pub entries_left: usize,
    pub files: Vec<Changed>,
    /// The record of the previous texts, relative to the workspace.
    pub history: Option<String>,
    pub usage: Usage,
    /// The model's last answer.
    pub answer: String,
    /// The writes refused because the file had changed since it was shown.
    pub conflicts: Vec<String>,
}

/// What the model is shown.
struct Gathered {
    memory: Option<Vec<u8>>,
    topics: Vec<(String, Vec<u8>)>,
    new: Vec<Entry>,
    left: usize,
}

/// When the last finished consolidation of `records` started.
fn last_done(records: &[history::Stored]) -> Option<OffsetDateTime> {
    records
        .iter()
        .rev()
        .find(|s| s.record.done)
        .and_then(|s| OffsetDateTime::parse(&s.record.at, &Rfc3339).ok())
}

/// Consolidates the notes of the agent `name` (its file `cfg`).
pub fn consolidate(agents: Agents, name: &str, cfg: AgentConfig, opts: &Options) -> Result<Done> {
    if !cfg.memory.notes.enabled {
        return Err(Error::Config(format!(
            "agent \"{name}\" keeps no notes ([notes] enabled is not true): nothing to consolidate"
        )));
    }
    let ws = Workspace::of(agents.dirs(), &cfg.memory.notes)?;
    let gathered = gather(&ws, name, &cfg)?;
    let mut done = Done {
        agent: name.to_owned(),
        dry_run: opts.dry_run,
        model_called: false,
        entries: Vec::new(),
        entries_left: gathered.left,
        files: Vec::new(),
        history: None,
        usage: Usage::default(),
        answer: String::new(),
        conflicts: Vec::new(),
    };
    if gathered.new.is_empty() {
        return Ok(done);
    }
    let deadline = Deadline::after(opts.timeout);
    let wait = opts.wait.unwrap_or(Wait::Until(deadline.at));
    // A dry run works on a scratch copy: the tools write there, and the
    // copy is compared with the notes afterwards.
    let scratch = match opts.dry_run {
        true => Some(Scratch::of(&ws, name)?),
        false => None,
    };
    let mut cfg = only_notes(cfg);
    if let Some(s) = &scratch {
        cfg.memory.notes.workspace = s.root.to_string_lossy().into_owned();
    }
    let config = axe_agent::config::load(&agents)?;
    let config_dir = agents.dirs().config()?;
    let mut session = Session::new(config, (config_dir, agents, wait), &cfg, opts.verbose);
    if !opts.log {
        session.ledger.stop();
    }
    let mut agent =
        once::prepare(&session, name, cfg, &Overrides::default()).map_err(|(_, e)| e)?;
    session.endpoint(agent.provider)?;
    let task = task(&agent, &gathered);
    agent.system = SYSTEM.replace(
        "{cap}",
        &agent.cfg.memory.notes.max_memory_chars.get().to_string(),
    );
    agent.system_stable = agent.system.len();
    agent.notes_seen = seen(&gathered);
    let secrets = session.secrets(&agent.cfg);
    let record_at = OffsetDateTime::now_utc();
    let at = record_at.format(&Rfc3339).unwrap_or_default();
    // Every rewrite its tools make is told to the journal under the
    // file's lock, before the file changes: a run that dies midway has
    // its record on disk with what it replaced.
    let journal = Arc::new(Journal {
        written: agent.notes.clone().unwrap_or_else(|| ws.clone()),
        record: match scratch {
            Some(_) => None,
            None => Some(OnDisk {
                ws: ws.clone(),
                path: history::new_path(&ws, name, record_at),
                at: at.clone(),
                secrets: secrets.clone(),
                wait,
            }),
        },
        state: Mutex::default(),
    });
    agent.notes = agent.notes.take().map(|w| w.witnessed(journal.clone()));
    done.model_called = true;
    let conversed = converse::alone(&session, &agent, vec![Message::user(task)], deadline);
    let details = std::mem::take(&mut *session.details.lock().unwrap_or_else(|e| e.into_inner()));
    let journaled = std::mem::take(&mut *journal.state.lock().unwrap_or_else(|e| e.into_inner()));
    // A rewrite refused as stale: the file changed after it was shown
    // (typed by the tool: another error may repeat its words). Its
    // entries are then not marked, so the next run sees them again. One
    // refused because the file held what this consolidation itself wrote
    // (two reflects in one reply) lost to no one.
    let mut own = journaled.own_refusals.clone();
    let memory_rel = ws.relative(&ws.memory(name));
    done.conflicts = details
        .iter()
        .filter(|d| d.conflict)
        .filter(|d| {
            let path = match d.name.as_str() {
                "reflect" => Some(memory_rel.clone()),
                _ => d
                    .input
                    .get("topic")
                    .and_then(|t| t.as_str())
                    .and_then(|t| notes::topic_name(t, &secrets).ok())
                    .map(|t| format!("world/{t}.md")),
            };
            match own.iter().position(|p| Some(p) == path.as_ref()) {
                Some(i) => {
                    own.remove(i);
                    false
                }
                None => true,
            }
        })
        .map(|d| d.output.clone())
        .collect();
    // What it wrote, as its tools wrote it: nothing another writer did.
    let wrote: Vec<&Wrote> = journaled.files.iter().filter(|w| w.changed()).collect();
    done.files = wrote.iter().map(|w| w.changed_file()).collect();
    let Some(on_disk) = &journal.record else {
        drop(scratch);
        let outcome = conversed?;
        done.usage = outcome.usage;
        done.answer = outcome.reply.content;
        done.entries = gathered.new.iter().map(|e| e.id.clone()).collect();
        return Ok(done);
    };
    let finished = conversed.as_ref().is_ok_and(|o| o.exceeded.is_none());
    let clean = finished && done.conflicts.is_empty();
    let mut record = on_disk.record(&wrote);
    record.done = clean;
    if clean {
        record.entries = gathered.new.iter().map(|e| e.id.clone()).collect();
    }
    if record.files.is_empty() && !clean {
        // Nothing written and nothing taken in: nothing to keep.
        if journaled.stored {
            history::remove(&ws, &on_disk.path)?;
        }
    } else {
        history::write(&ws, &on_disk.path, &record, &secrets, wait)?;
        done.history = Some(ws.relative(&on_disk.path));
    }
    let outcome = conversed?;
    done.usage = outcome.usage;
    done.answer = outcome.reply.content;
    done.entries = record.entries;
    if let Some((used, max)) = outcome.exceeded {
        return Err(Error::Budget { used, max });
    }
    Ok(done)
}

/// A consolidation's record of what its tools wrote, told by the workspace
/// they write through (a [`Witness`]), under each file's lock. It holds
/// exactly what the consolidation itself wrote: for each file, the bytes
/// there at its first write (not at the start of the run: a change made
/// meanwhile by someone else is theirs, and is the text replaced) and the
/// hash of its last. A file it did not write is never in it, so an undo
/// never touches one.
struct Journal {
    /// Where the tools write (the notes, or a dry run's copy), to name
    /// the files relative to it.
    written: Workspace,
    /// Where the record goes; `None` for a dry run.
    record: Option<OnDisk>,
    state: Mutex<Journaled>,
}

/// The record's place and what writing it takes.
struct OnDisk {
    ws: Workspace,
    path: PathBuf,
    at: String,
    secrets: Secrets,
    wait: Wait,
}

impl OnDisk {
    /// The record of `wrote`, not done, no entry taken in.
    fn record(&self, wrote: &[&Wrote]) -> Record {
        Record {
            at: self.at.clone(),
            done: false,
            entries: Vec::new(),
            files: wrote.iter().map(|w| w.kept()).collect(),
            at_write: true,
        }
    }
}

#[derive(Default)]
struct Journaled {
    files: Vec<Wrote>,
    /// Each file's entry before the write under way, put back should it
    /// not happen (one write of a file at a time: its lock).
    pending: Vec<(String, Option<Wrote>)>,
    /// The files whose write was refused because they held what this
    /// consolidation had written itself.
    own_refusals: Vec<String>,
    /// Whether the record is on disk.
    stored: bool,
}

/// One file the consolidation wrote.
#[derive(Clone)]
struct Wrote {
    path: String,
    /// What it held just before the first write; `None`: it did not exist.
    before: Option<Vec<u8>>,
    /// What the last write put in.
    after: Vec<u8>,
    /// The hash of every text written, the last one last.
    hashes: Vec<String>,
}

impl Wrote {
    fn changed(&self) -> bool {
        self.before.as_deref() != Some(self.after.as_slice())
    }

    fn kept(&self) -> Kept {
        Kept {
            path: self.path.clone(),
            before: self.before.clone(),
            sha256_before: sha256_hex(self.before.as_deref().unwrap_or_default()),
            sha256_after: Some(sha256_hex(&self.after)),
        }
    }

    fn changed_file(&self) -> Changed {
        Changed {
            path: self.path.clone(),
            sha256_before: self.before.as_deref().map(sha256_hex),
            sha256_after: Some(sha256_hex(&self.after)),
            before: self.before.clone().unwrap_or_default(),
            after: self.after.clone(),
        }
    }
}

impl Journal {
    fn state(&self) -> std::sync::MutexGuard<'_, Journaled> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The record with what is journaled now, on disk (a dry run keeps none).
    fn store(&self, state: &mut Journaled) -> Result<()> {
        let Some(on_disk) = &self.record else {
            return Ok(());
        };
        let wrote: Vec<&Wrote> = state.files.iter().collect();
        let record = on_disk.record(&wrote);
        history::write(
            &on_disk.ws,
            &on_disk.path,
            &record,
            &on_disk.secrets,
            on_disk.wait,
        )?;
        state.stored = true;
        Ok(())
    }
}

impl Witness for Journal {
    fn writing(&self, path: &Path, before: Option<&[u8]>, after: &[u8]) -> Result<()> {
        let rel = self.written.relative(path);
        let mut state = self.state();
        let at = state.files.iter().position(|w| w.path == rel);
        let was = at.map(|i| state.files[i].clone());
        state.pending.retain(|(p, _)| *p != rel);
        state.pending.push((rel.clone(), was));
        match at {
            Some(i) => {
                let w = &mut state.files[i];
                w.after = after.to_vec();
                w.hashes.push(sha256_hex(after));
            }
            None => state.files.push(Wrote {
                path: rel.clone(),
                before: before.map(<[u8]>::to_vec),
                after: after.to_vec(),
                hashes: vec![sha256_hex(after)],
            }),
        }
        let stored = self.store(&mut state);
        if stored.is_err() {
            // Not recorded, so not written: the file keeps its text.
            put_back(&mut state, &rel);
        }
        stored
    }

    fn not_written(&self, path: &Path) {
        let rel = self.written.relative(path);
        let mut state = self.state();
        put_back(&mut state, &rel);
        // Best effort: a record that names a write that did not happen
        // only makes an undo refuse (the file holds neither text).
        let _ = self.store(&mut state);
    }

    fn refused(&self, path: &Path, now: &str) {
        let rel = self.written.relative(path);
        let mut state = self.state();
        let own = state
            .files
            .iter()
            .any(|w| w.path == rel && w.hashes.iter().any(|h| h.eq_ignore_ascii_case(now)));
        if own {
            state.own_refusals.push(rel);
        }
    }
}

/// `rel`'s entry as it was before the write announced last.
fn put_back(state: &mut Journaled, rel: &str) {
    let Some(i) = state.pending.iter().position(|(p, _)| p == rel) else {
        return;
    };
    let (_, was) = state.pending.remove(i);
    state.files.retain(|w| w.path != rel);
    if let Some(was) = was {
        state.files.push(was);
    }
}

/// The agent as a consolidation runs it: its notes tools and nothing
/// else (no built-in tool, MCP server or sub-agent, no context file or
/// skill), since all it is to do is rewrite its notes.
fn only_notes(mut cfg: AgentConfig) -> AgentConfig {
    cfg.tools.clear();
    cfg.mcp_servers.clear();
    cfg.sub_agents.clear();
    cfg.files.clear();
    cfg.skill.clear();
    cfg.memory.context.budget = None;
    cfg
}

/// MEMORY.md, the world topics it names and the new entries, within the
/// agent's `recall_chars` (the oldest entries first; the rest wait for
/// the next consolidation).
fn gather(ws: &Workspace, agent: &str, cfg: &AgentConfig) -> Result<Gathered> {
    let memory = ws.read(&ws.memory(agent))?;
    let text = String::from_utf8_lossy(memory.as_deref().unwrap_or_default()).to_lowercase();
    let mut topics = Vec::new();
    let world = ws.world();
    if let Some(dir) = ws
        .open_dir(&world)
        .map_err(|e| io_error("", "open", &world, e))?
    {
        let files = Workspace::md_files(&dir).map_err(|e| io_error("", "read", &world, e))?;
        for (file, at) in files {
            let stem = file.trim_end_matches(".md");
            if !names(&text, stem) {
                continue;
            }
            let mut bytes = Vec::new();
            if at
                .read_into(ws, &mut bytes)
                .map_err(|e| io_error("", "read", world.join(&file), e))?
            {
                topics.push((stem.to_owned(), bytes));
            }
        }
    }
    let consolidated = history::consolidated(&history::list(ws, agent)?);
    let fresh: Vec<Entry> = entries::all(ws, agent)?
        .into_iter()
        .filter(|e| !consolidated.contains(&e.id))
        .collect();
    let shown: usize =
        memory.as_ref().map_or(0, Vec::len) + topics.iter().map(|(_, t)| t.len()).sum::<usize>();
    let mut budget = cfg
        .memory
        .notes
        .recall_chars
        .as_usize()
        .saturating_sub(shown);
    let mut new = Vec::new();
    for e in &fresh {
        let size = e.text.len() + 32;
        // The first always goes, or one long entry would wait forever.
        if !new.is_empty() && size > budget {
            break;
        }
        budget = budget.saturating_sub(size);
        new.push(e.clone());
    }
    Ok(Gathered {
        left: fresh.len() - new.len(),
        memory,
        topics,
        new,
    })
}

/// Whether MEMORY.md's text (lower case) names the topic `stem`: as
/// `world/<stem>` or as the words of its name, standing apart.
fn names(text: &str, stem: &str) -> bool {
    let words = stem.replace('-', " ");
    [stem, words.as_str()].iter().any(|needle| {
        text.match_indices(needle).any(|(at, _)| {
            let before = text[..at].chars().next_back();
            let after = text[at + needle.len()..].chars().next();
            !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
        })
    })
}

/// The user message: what to consolidate.
fn task(agent: &Prepared, g: &Gathered) -> String {
    let mut t = format!("Consolidate the notes of the agent \"{}\".\n\n", agent.name);
    let memory = g.memory.as_deref().unwrap_or_default();
    t.push_str(&format!(
        "## MEMORY.md ({} characters; its cap is {})\n\n",
        String::from_utf8_lossy(memory).chars().count(),
        agent.cfg.memory.notes.max_memory_chars.get()
    ));
    match memory.trim_ascii().is_empty() {
        true => t.push_str("(empty)\n\n"),
        false => t.push_str(&format!(
            "{}\n\n",
            String::from_utf8_lossy(memory).trim_end()
        )),
    }
    if !g.topics.is_empty() {
        t.push_str("## The world topics MEMORY.md names\n\n");
        for (topic, text) in &g.topics {
            t.push_str(&format!(
                "### world/{topic}.md (learn_fact topic \"{topic}\")\n\n{}\n\n",
                String::from_utf8_lossy(text).trim_end()
            ));
        }
    }
    t.push_str(&format!(
        "## New daily-log entries since the last consolidation ({}, oldest first)\n\n",
        g.new.len()
    ));
    for e in &g.new {
        t.push_str(&format!("### {} {}\n\n{}\n\n", e.day, e.time, e.text));
    }
    if let Some(r) = agent
        .recall
        .as_ref()
        .filter(|r| !r.entries.trim().is_empty())
    {
        t.push_str("## Its recent runs (the run log)\n\n");
        t.push_str(r.entries.trim_end());
        t.push_str("\n\n");
    }
    if let Some(path) = &agent.state {
        let budget = agent.cfg.memory.state.context_budget.as_usize();
        let block = axe_memory::state::read(path, agent.wait)
            .ok()
            .and_then(|bytes| {
                let view = axe_memory::state::view(path, &bytes).ok()?;
                let now = axe_memory::state::Current {
                    task: None,
                    phase: None,
                };
                Some(
                    axe_memory::state::build(&view, now, axe_memory::block::Block::new(budget))
                        .text,
                )
            });
        if let Some(block) = block.filter(|b| !b.trim().is_empty()) {
            t.push_str("## Its state (decisions and what it is doing)\n\n");
            t.push_str(block.trim_end());
            t.push_str("\n\n");
        }
    }
    t.push_str("Rewrite MEMORY.md (reflect) and any topic (learn_fact) as the instructions say.");
    t
}

/// What the prompt showed whole, as the notes tools count it seen.
fn seen(g: &Gathered) -> axe_tools::NotesSeen {
    axe_tools::NotesSeen {
        memory: Some(sha256_hex(g.memory.as_deref().unwrap_or_default())),
        world: g
            .topics
            .iter()
            .map(|(t, text)| (t.clone(), sha256_hex(text)))
            .collect(),
        recalled: false,
        unseen_world: Vec::new(),
    }
}

/// A dry run's scratch copy of the notes a consolidation reads: the
/// world topics, the agent's MEMORY.md and daily logs. Removed when done.
struct Scratch {
    root: PathBuf,
    /// Removes it, should a signal end the process during the model's call.
    _on_end: axe_base::signals::RemovedOnEnd,
}

impl Scratch {
    fn of(ws: &Workspace, agent: &str) -> Result<Scratch> {
        let nanos = OffsetDateTime::now_utc().unix_timestamp_nanos();
        let root =
            std::env::temp_dir().join(format!("axe-consolidate-{}-{nanos}", std::process::id()));
        let fail = |e: std::io::Error| io_error("", "create", &root, e);
        {
            use std::os::unix::fs::DirBuilderExt;
            fs::DirBuilder::new()
                .mode(0o700)
                .create(&root)
                .map_err(fail)?;
        }
        let scratch = Scratch {
            _on_end: axe_base::signals::remove_on_end(root.clone()),
            root,
        };
        // Removed again by its drop should a copy fail.
        for dir in [ws.world(), ws.daily_dir(agent)] {
            let Some(opened) = ws
                .open_dir(&dir)
                .map_err(|e| io_error("", "open", &dir, e))?
            else {
                continue;
            };
            let files = Workspace::md_files(&opened).map_err(|e| io_error("", "read", &dir, e))?;
            for (name, at) in files {
                let mut bytes = Vec::new();
                if at.read_into(ws, &mut bytes).unwrap_or(false) {
                    scratch.put(&dir.join(name), ws, &bytes)?;
                }
            }
        }
        if let Some(text) = ws.read(&ws.memory(agent))? {
            scratch.put(&ws.memory(agent), ws, &text)?;
        }
        Ok(scratch)
    }

    /// `bytes` at the place of `path` (a path in `ws`) in the copy.
    fn put(&self, path: &Path, ws: &Workspace, bytes: &[u8]) -> Result<()> {
        let to = self.root.join(ws.relative(path));
        let fail = |e: std::io::Error| io_error("", "write", &to, e);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(fail)?;
        }
        fs::write(&to, bytes).map_err(fail)
    }
}

impl Drop for Scratch {
    /// Gone however the dry run ends, an error included.
    fn drop(&mut self) {
        // Best effort: a leftover in the temp directory costs space only.
        let _ = fs::remove_dir_all(&self.root);
    }
}

/// Runs the automatic consolidation after a successful run of the agent
/// `name` (its settings `cfg`) when `[notes] consolidate_every` asks for
/// one and it is due: the last one is older than that, and at least
/// `consolidate_min_entries` entries are new. It never fails the run:
/// trouble is a warning. A MEMORY.md whose lock someone holds (a write
/// under way, another consolidation) skips it until the next run; it
/// runs under a deadline of its own, the agent's `timeout`. With
/// `verbose` it says what it did, or why not; without `log` (the
/// command's `--no-log`) its calls are not recorded in the ledger.
pub fn after_run(
    agents: &Agents,
    name: &str,
    cfg: &AgentConfig,
    (verbose, log): (bool, bool),
    report: &dyn Report,
) {
    let say = |line: String| {
        if verbose {
            report.note(format_args!("[notes] consolidation: {line}"));
        }
    };
    match due(agents, name, cfg) {
        Ok(Due::Off) => {}
        Ok(Due::Not(why)) => say(format!("not due ({why})")),
        Ok(Due::Busy) => say("skipped: MEMORY.md is locked by another writer".to_owned()),
        Ok(Due::Yes(new)) => {
            let opts = Options {
                // A command's --no-log keeps every call it makes out of
                // the ledger, this one too.
                log,
                dry_run: false,
                verbose: false,
                timeout: match cfg.timeout.get() {
                    0 => AUTO_TIMEOUT,
                    seconds => Duration::from_secs(seconds),
                },
                wait: Some(Wait::For(AUTO_WAIT)),
            };
            match consolidate(agents.clone(), name, cfg.clone(), &opts) {
                Ok(done) if done.conflicts.is_empty() => say(format!(
                    "ran over {} of {new} new entries, {} file(s) changed",
                    done.entries.len(),
                    done.files.len()
                )),
                Ok(_) => report.note(format_args!(
                    "Warning: the consolidation of \"{name}\" lost a rewrite to a concurrent one; its entries wait for the next"
                )),
                Err(e) => report.note(format_args!(
                    "Warning: the consolidation of \"{name}\" failed: {e}"
                )),
            }
        }
        Err(e) => report.note(format_args!(
            "Warning: cannot tell whether \"{name}\" is due a consolidation: {e}"
        )),
    }
}

/// How long an automatic consolidation may take when the agent sets no
/// `timeout`.
const AUTO_TIMEOUT: Duration = Duration::from_secs(120);

/// How long its notes writes wait for a lock: briefly, since whoever holds
/// one is writing the notes now and the next run can consolidate.
const AUTO_WAIT: Duration = Duration::from_secs(5);

/// Whether an automatic consolidation is due.
enum Due {
    /// `consolidate_every` is not set (or the agent keeps no notes).
    Off,
    Not(String),
    Busy,
    /// Due, with this many new entries.
    Yes(usize),
}

fn due(agents: &Agents, name: &str, cfg: &AgentConfig) -> Result<Due> {
    let Some(every) = cfg
        .memory
        .notes
        .consolidate_every()?
        .filter(|_| cfg.memory.notes.enabled)
    else {
        return Ok(Due::Off);
    };
    let ws = Workspace::of(agents.dirs(), &cfg.memory.notes)?;
    let records = history::list(&ws, name)?;
    // The period first: within it no daily log need be read at all.
    if let Some(last) = last_done(&records) {
        let seconds = i64::try_from(every).unwrap_or(i64::MAX);
        // A period past the calendar's end: never due again.
        let next = last.checked_add(time::Duration::seconds(seconds));
        if next.is_none_or(|next| OffsetDateTime::now_utc() < next) {
            return Ok(Due::Not(format!(
                "the last one was at {}, less than consolidate_every ({}) ago",
                last.format(&Rfc3339).unwrap_or_default(),
                cfg.memory.notes.consolidate_every.trim()
            )));
        }
    }
    let consolidated = history::consolidated(&records);
    let new = entries::all(&ws, name)?
        .iter()
        .filter(|e| !consolidated.contains(&e.id))
        .count();
    let min = cfg.memory.notes.consolidate_min_entries.as_usize().max(1);
    if new < min {
        return Ok(Due::Not(format!(
            "{new} new entries, fewer than consolidate_min_entries ({min})"
        )));
    }
    let memory = ws.memory(name);
    if let Some((dir, file)) = ws.file(&memory, false)? {
        let probe = axe_memory::lock::open_locked(
            &dir,
            &file,
            axe_base::beneath::Open::Read,
            axe_memory::lock::Mode::Exclusive,
            Wait::For(Duration::ZERO),
        );
        if probe.is_err() {
            return Ok(Due::Busy);
        }
    }
    Ok(Due::Yes(new))
}

/// What `--undo` restored.
#[derive(Debug, Serialize)]
pub struct Undone {
    pub agent: String,
    /// The record undone, relative to the workspace.
    pub history: String,
    /// The files given back their previous text (or removed, when the
    /// consolidation created them).
    pub restored: Vec<String>,
    /// The files an older record says it created, left as they are: such
    /// a record cannot tell a topic it created from one it rewrote.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub left: Vec<String>,
    /// The entries that count as new again.
    pub entries: usize,
}

/// Restores the files the last consolidation of `agent` changed, when
/// none changed since; then its record goes, so its entries are new again.
/// A file changed since is a conflict, and nothing is written.
pub fn undo(ws: &Workspace, agent: &str, secrets: &Secrets, wait: Wait) -> Result<Undone> {
    let last = match history::newest(ws, agent)? {
        None => {
            return Err(Error::Input(format!(
                "nothing to undo: no consolidation of \"{agent}\" is on record in {}",
                ws.relative(&history::dir(ws, agent))
            )));
        }
        Some((path, Err(why))) => {
            return Err(Error::Input(format!(
                "{} is not a consolidation record ({why}): nothing was restored",
                ws.relative(&path)
            )));
        }
        Some((path, Ok(record))) => history::Stored { path, record },
    };
    let last = &last;
    // A record may have come from another machine: it names only this
    // agent's MEMORY.md and world topics, or nothing is restored.
    let memory = ws.relative(&ws.memory(agent));
    for k in &last.record.files {
        let topic = k
            .path
            .strip_prefix("world/")
            .and_then(|t| t.strip_suffix(".md"))
            .filter(|t| notes::topic_file_name(t).is_ok_and(|s| s == *t));
        if k.path != memory && topic.is_none() {
            return Err(Error::Input(format!(
                "{} names {:?}, which is not {memory} or a world topic: nothing was restored",
                ws.relative(&last.path),
                k.path
            )));
        }
    }
    let current = |k: &Kept| -> Result<String> {
        Ok(sha256_hex(
            &ws.read(&ws.root.join(&k.path))?.unwrap_or_default(),
        ))
    };
    // A file back at its text before (an undo cut short by a conflict on
    // the next file, or given back by hand) is left as it is, so undoing
    // again finishes the rest rather than refusing for good.
    let mut back = Vec::new();
    for k in &last.record.files {
        let now = current(k)?;
        let expected = k.sha256_after.as_deref().unwrap_or(&k.sha256_before);
        if now != expected && k.sha256_after.is_some() && now == k.sha256_before {
            back.push(k.path.clone());
            continue;
        }
        if now != expected && k.sha256_after.is_none() {
            // Its run ended before it could say what it wrote (killed, a
            // crash): its rewrite and another writer's look the same.
            return Err(Error::Conflict(format!(
                "the consolidation of {} did not finish, and {} changed since it started (by it or by another writer): nothing was restored; its previous text is kept in {}",
                last.record.at,
                k.path,
                ws.relative(&last.path)
            )));
        }
        if now != expected {
            return Err(Error::Conflict(format!(
                "{} changed since the consolidation of {} (its sha256 is now {now}, not {expected}): nothing was restored",
                k.path, last.record.at
            )));
        }
    }
    let mut restored = Vec::new();
    let mut left = Vec::new();
    for k in &last.record.files {
        let Some(after) = k.sha256_after.as_ref().filter(|_| !back.contains(&k.path)) else {
            continue;
        };
        let path = ws.root.join(&k.path);
        match &k.before {
            Some(bytes) => {
                notes::rewrite(
                    ws,
                    &path,
                    bytes,
                    Some(after),
                    (usize::MAX, ""),
                    secrets,
                    wait,
                )?;
            }
            // An older record took its texts as the run started, so its
            // "did not exist" may name a topic someone made meanwhile:
            // every agent's, it is left rather than removed.
            None if !last.record.at_write && k.path != memory => {
                left.push(k.path.clone());
                continue;
            }
            None => {
                if !history::remove_if(ws, &path, after, wait)? {
                    return Err(Error::Conflict(format!(
                        "{} changed while the consolidation of {} was being undone, so it was kept; the record {} is kept",
                        k.path,
                        last.record.at,
                        ws.relative(&last.path)
                    )));
                }
            }
        }
        restored.push(k.path.clone());
    }
    history::remove(ws, &last.path)?;
    Ok(Undone {
        agent: agent.to_owned(),
        history: ws.relative(&last.path),
        restored,
        left,
        entries: if last.record.done {
            last.record.entries.len()
        } else {
            0
        },
    })
}

#[cfg(test)]
mod tests {
    use super::names;

    #[test]
    fn memory_names_a_topic_by_its_words_standing_apart() {
        assert!(names("see world/deploys.md", "deploys"));
        assert!(names("the deploy process is blue-green", "deploy-process"));
        assert!(!names("redeploys weekly", "deploys"));
        assert!(!names("nothing here", "people"));
    }
}
