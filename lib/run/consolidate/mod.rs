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
//!
//! What the model is shown is `prompt`; the record its tools' writes
//! are told to, `journal`; a dry run's copy, `scratch`; the automatic
//! consolidation after a run, `after_run`; and `--undo`, `undo`.

mod after_run;
mod journal;
mod prompt;
mod scratch;
mod undo;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::details::Detail;
use super::prepared::Overrides;
use super::session::Session;
use super::{converse, once};
use axe_agent::{AgentConfig, Agents};
use axe_base::error::{Error, Result};
use axe_base::lock::Recover;
use axe_llm::{Deadline, Message, Usage};
use axe_memory::Wait;
use axe_memory::notes::history;
use axe_memory::notes::{self, Workspace};
use axe_memory::secrets::Secrets;
use journal::{Journal, OnDisk, Wrote};
use prompt::{SYSTEM, gather, only_notes, seen, task};
use scratch::Scratch;

pub use after_run::after_run;
pub use undo::{Undone, undo};

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
    let details = std::mem::take(&mut *session.details.lock().recover());
    let journaled = std::mem::take(&mut *journal.state.lock().recover());
    let memory_rel = ws.relative(&ws.memory(name));
    done.conflicts = conflicts(
        &details,
        journaled.own_refusals.clone(),
        &memory_rel,
        &secrets,
    );
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

/// The outputs of the rewrites refused as stale: the file changed after
/// it was shown (typed by the tool: another error may repeat its words).
/// Its entries are then not marked, so the next run sees them again. One
/// refused because the file held what this consolidation itself wrote
/// (two reflects in one reply, each in `own`) lost to no one.
fn conflicts(
    details: &[Detail],
    mut own: Vec<String>,
    memory_rel: &str,
    secrets: &Secrets,
) -> Vec<String> {
    details
        .iter()
        .filter(|d| d.conflict)
        .filter(|d| {
            let path = match d.name.as_str() {
                "reflect" => Some(memory_rel.to_owned()),
                _ => d
                    .input
                    .get("topic")
                    .and_then(|t| t.as_str())
                    .and_then(|t| notes::topic_name(t, secrets).ok())
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
        .collect()
}
