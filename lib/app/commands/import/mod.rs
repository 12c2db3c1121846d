//! `axe-import SOURCE [PATH]`: memory other tools keep (Claude Code,
//! Codex, the reference MCP memory server, mem0, any markdown folder)
//! merged into the notes workspace by entry, as `axe-sync` merges, never
//! over what is there.

pub mod graph;
mod links;
mod merge;
mod sources;

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::args::{self, WAIT};
use axe_agent::Agents;
use axe_base::error::{Error, Result};
use axe_base::stderr::{escape, is_bidi, note};
use axe_cli::{Arg, Command, Complete, Flag, Item as CliItem, Matches, Rule, Run};
use axe_memory::notes::{Workspace, topic_name};
use axe_memory::secrets::Secrets;
use axe_memory::settings::NotesConfig;
use merge::{Action, Done, How, Planned};
use sources::{Item, Target};

pub const COMMAND: Command = Command {
    name: "axe-import",
    about: "Import memory from Claude Code, Codex, an MCP memory server, mem0 or markdown",
    usage: &["[OPTIONS] <SOURCE> [PATH]"],
    args: &[SOURCE, PATH],
    flags: &[AGENT, WITH_CLAUDE_MD, DRY_RUN, JSON, WAIT],
    rules: &[Rule::Required(CliItem::Arg(&SOURCE))],
    description: "\
SOURCE is one of:
  claude-code  Claude Code's auto memory: PATH is a project folder (its
               memory/ is read) or a memory folder [default: every
               ~/.claude/projects/<project>/memory, each the agent named
               after its project]; a PATH holding neither is refused, exit
               2. MEMORY.md becomes the agent's MEMORY.md, every other file
               a world topic named after it, frontmatter kept;
               --with-claude-md adds ~/.claude/CLAUDE.md as the world topic
               claude-md.
  codex        Codex's memories [default PATH: ~/.codex/memories]: MEMORY.md
               the agent's (codex unless --agent), memory_summary.md,
               raw_memories.md and rollout_summaries/*.md world topics
               codex-memory-summary, codex-raw-memories, codex-rollout-NAME.
  mcp-memory   The reference MCP memory server's JSONL file (PATH): each
               entity a world topic (Type: and its observations as lines),
               each relation a line in both its ends' topics.
  mem0         mem0's JSON export (PATH): each memory an entry of a daily log
               at its created_at, of --agent, else its agent_id or user_id.
  markdown     A folder of markdown notes (PATH; basic-memory, Obsidian): each
               note a world topic named after its path, frontmatter kept.

A link in an imported file to another file of the same source
([title](topic.md), or [[name]] in a markdown folder) is rewritten to the
name that file got (../../world/topic.md from MEMORY.md).

Nothing is overwritten: daily logs are merged entry by entry, as axe-sync
merges them; a MEMORY.md or world topic is written when new, kept when it
holds the imported lines already, replaced when the imported text holds all
of its lines, and otherwise left as it is with the imported text written
beside it (world/NAME.conflict-import-<time>-<hash>.md): exit code 7 until
that file is merged in and removed. Importing the same source again changes
nothing. Everything passes the secret scanner memory writes use. Files and
the folders they are in are read without following symlinks, files up to
16 MiB each; a malformed JSONL line or a file left out is named on stderr
and the rest imported.",
    run: Run::Action(run),
};

const SOURCE: Arg = Arg {
    name: "SOURCE",
    noun: "source",
    help: "claude-code, codex, mcp-memory, mem0 or markdown",
    complete: Complete::Nothing,
    many: false,
};

const PATH: Arg = Arg {
    name: "PATH",
    noun: "path",
    help: "The directory or file to import [default: the tool's own place]",
    complete: Complete::File,
    many: false,
};

const AGENT: Flag = Flag::with_value(
    "agent",
    "AGENT",
    "The agent whose memory it becomes (its notes workspace, MEMORY.md, daily logs)",
)
.completes(Complete::Agent);

const WITH_CLAUDE_MD: Flag = Flag::switch(
    "with-claude-md",
    "claude-code: import ~/.claude/CLAUDE.md too, as the world topic claude-md",
);

const DRY_RUN: Flag = Flag::switch(
    "dry-run",
    "Print every file the import would write, with its size; write nothing",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {source, dry_run, files: [{workspace, path, action, bytes, conflict}], problems, redacted} as JSON",
);

/// The sources, by the word that names them.
const SOURCES: [&str; 5] = ["claude-code", "codex", "mcp-memory", "mem0", "markdown"];

#[derive(Serialize)]
struct Json<'a> {
    source: &'a str,
    dry_run: bool,
    files: Vec<FileJson>,
    problems: Vec<String>,
    /// Notes the secret scanner took something out of.
    redacted: Vec<String>,
}

#[derive(Serialize)]
struct FileJson {
    workspace: String,
    #[serde(flatten)]
    done: Done,
}

/// A workspace and what goes into it.
struct Dest {
    ws: Workspace,
    secrets: Secrets,
    plan: Vec<Planned>,
    /// Each planned file's place in `plan`, by its path.
    placed: HashMap<String, usize>,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let source = m.args().first().map(|s| s.to_string_lossy().into_owned());
    let source = source.unwrap_or_default();
    if !SOURCES.contains(&source.as_str()) {
        return Err(Error::Usage(format!(
            "unknown source \"{source}\": one of {}",
            SOURCES.join(", ")
        )));
    }
    let path = m.args().get(1).map(PathBuf::from);
    let agent = m.string(&AGENT)?;
    let agents = args::env_agents();
    // What every memory write scans for, to check the names a source
    // gives and to keep what is printed clean.
    let scan = axe_agent::config::secrets(&agents, None);
    if let Some(a) = agent {
        axe_agent::check_name(a)?;
        if let Some(why) = agent_problem(a, &scan) {
            return Err(Error::InvalidAgentName(format!(
                "agent name {a:?} cannot take an import: {why}"
            )));
        }
    }
    let wait = args::wait(m)?;
    let dry_run = m.flag(&DRY_RUN);
    let need = |what: &str| {
        path.clone()
            .ok_or_else(|| Error::Usage(format!("{source} needs the PATH of {what}")))
    };
    let read = match source.as_str() {
        "claude-code" => sources::claude_code(path.as_deref(), agent, m.flag(&WITH_CLAUDE_MD))?,
        "codex" => sources::codex(path.as_deref(), agent)?,
        "mcp-memory" => sources::mcp_memory(&need("the server's JSONL file")?)?,
        "mem0" => sources::mem0(&need("mem0's JSON export")?, agent)?,
        _ => sources::markdown(&need("the folder of notes")?)?,
    };
    let mut problems = read.problems;
    let mut redacted = Vec::new();
    let dests = plan(
        &agents,
        &scan,
        read.items,
        agent,
        &mut problems,
        &mut redacted,
    )?;
    // A problem quotes what the source held (a name, a path): printed,
    // on stderr or in --json, only through the scanner.
    for p in &mut problems {
        if let (Cow::Owned(clean), _) = scan.redact_str(p) {
            *p = clean;
        }
    }
    let mut files = Vec::new();
    for dest in dests.values() {
        for done in merge::apply(&dest.ws, &dest.plan, wait, dry_run)? {
            files.push(FileJson {
                workspace: dest.ws.root.display().to_string(),
                done,
            });
        }
    }
    let conflicts: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let c = f.done.conflict.as_ref()?;
            Some(Path::new(&f.workspace).join(c).display().to_string())
        })
        .collect();
    if m.flag(&JSON) {
        axe_cli::write_json(
            out,
            &Json {
                source: &source,
                dry_run,
                files,
                problems,
                redacted,
            },
        )?;
    } else {
        for p in &problems {
            note(format_args!("axe-import: {p}"));
        }
        for r in &redacted {
            note(format_args!(
                "axe-import: {r}: what looked like a secret was redacted"
            ));
        }
        report(out, &files, dry_run)?;
    }
    if conflicts.is_empty() {
        return Ok(());
    }
    let one = conflicts.len() == 1;
    let (text, it, file) = match one {
        true => ("text", "it", "the file"),
        false => ("texts", "them", "the files"),
    };
    // A dry run wrote nothing: it says what an import would keep, not
    // files to merge that are not there.
    Err(Error::Unresolved(match dry_run {
        true => format!(
            "{} imported {text} would differ from the notes there: an import would keep {it} beside {it}: {}",
            conflicts.len(),
            conflicts.join(", "),
        ),
        false => format!(
            "{} imported {text} differed from the notes there: kept beside {it}: {}; merge {it} in and remove {file}",
            conflicts.len(),
            conflicts.join(", "),
        ),
    }))
}

/// One line per file written (or, in a dry run, that would be): what,
/// where, how large.
fn report(out: &mut dyn Write, files: &[FileJson], dry_run: bool) -> Result<()> {
    let mut unchanged = 0;
    for f in files {
        let full = |rel: &str| Path::new(&f.workspace).join(rel).display().to_string();
        let (verb, path, bytes) = match f.done.action {
            Action::Unchanged => {
                unchanged += 1;
                continue;
            }
            Action::Created => ("create", full(&f.done.path), f.done.bytes),
            Action::Merged => ("merge", full(&f.done.path), f.done.bytes),
            Action::Conflict => match f.done.conflict_bytes {
                Some(0) | None => {
                    unchanged += 1;
                    continue;
                }
                Some(n) => (
                    "conflict",
                    full(f.done.conflict.as_deref().unwrap_or_default()),
                    n,
                ),
            },
        };
        let verb = match (dry_run, verb) {
            (true, v) => format!("would {v}"),
            (false, "create") => "created".into(),
            (false, "merge") => "merged".into(),
            (false, v) => v.into(),
        };
        // A path holds names a source gave: shown escaped.
        let line = format!("{verb}\t{path}\t{bytes} bytes");
        writeln!(out, "{}", escape(&line)).map_err(Error::Output)?;
    }
    if unchanged > 0 && files.iter().all(|f| f.done.action == Action::Unchanged) {
        note(format_args!(
            "axe-import: nothing new: the {unchanged} {} there already",
            if unchanged == 1 {
                "note it reaches is"
            } else {
                "notes it reaches are"
            }
        ));
    }
    Ok(())
}

/// The longest agent name a source may give, in bytes: as long as a
/// topic's name may be, so the files made of it (`<name>.toml`, sync's
/// and a write's markers beside it) fit a file name's 255 bytes.
const AGENT_MAX_BYTES: usize = 200;

/// Why `name`, given by a source (mem0's `user_id`, an entity's name, a
/// project's folder), cannot be an agent's, if it cannot. Its folder is
/// synced to every machine and its name printed: no path, nothing hidden
/// or unprintable, nothing that looks like a secret.
fn agent_problem(name: &str, scan: &Secrets) -> Option<&'static str> {
    if axe_agent::check_name(name).is_err() {
        Some("empty, \".\", \"..\" or holding a path separator")
    } else if name.starts_with('.') {
        Some("it starts with a dot, so would be hidden")
    } else if name.chars().any(char::is_control) {
        Some("it holds a control character")
    } else if name.chars().any(is_bidi) {
        Some("it holds a bidi control, which would show it in another order")
    } else if name.len() > AGENT_MAX_BYTES {
        Some("it is longer than 200 bytes")
    } else if !scan.find(name.as_bytes()).is_empty() {
        Some("it looks like a secret")
    } else {
        None
    }
}

/// The items as files of the workspaces they go to: agents' workspaces
/// (by their `[notes]`), the default one for what has no agent. Names
/// are made as `learn` makes them; links between the files of a source
/// are rewritten to those names; texts are redacted as memory writes
/// are; two items for one daily log are merged by entry, two different
/// texts for one other note both planned, merged in turn.
fn plan(
    agents: &Agents,
    scan: &Secrets,
    items: Vec<Item>,
    agent: Option<&str>,
    problems: &mut Vec<String>,
    redacted: &mut Vec<String>,
) -> Result<BTreeMap<PathBuf, Dest>> {
    let mut dests: BTreeMap<PathBuf, Dest> = BTreeMap::new();
    let mut resolved: BTreeMap<Option<String>, PathBuf> = BTreeMap::new();
    let mut was_redacted: HashSet<String> = HashSet::new();
    // Where each item goes, then where each file of a source went, for
    // the links between them.
    let mut placed = Vec::new();
    let mut moved: HashMap<(PathBuf, usize), links::Moved> = HashMap::new();
    for item in items {
        let who = item.agent.clone().or_else(|| agent.map(str::to_owned));
        if let Some(why) = who.as_deref().and_then(|w| agent_problem(w, scan)) {
            let name = who.as_deref().unwrap_or_default();
            problems.push(format!(
                "{}: {name:?} names no agent: {why}; left out",
                item.from
            ));
            continue;
        }
        let root = match resolved.get(&who) {
            Some(r) => r.clone(),
            None => {
                let (cfg, redact) = match &who {
                    Some(name) => {
                        let (cfg, _) = args::memory_agent(agents, name)?;
                        (cfg.memory.notes, cfg.memory.log.redact)
                    }
                    None => (NotesConfig::default(), None),
                };
                let ws = Workspace::of(agents.dirs(), &cfg)?;
                let root = ws.root.clone();
                dests.entry(root.clone()).or_insert_with(|| Dest {
                    ws,
                    secrets: axe_agent::config::secrets(agents, redact),
                    plan: Vec::new(),
                    placed: HashMap::new(),
                });
                resolved.insert(who.clone(), root.clone());
                root
            }
        };
        let Some(dest) = dests.get(&root) else {
            continue;
        };
        let (rel, how) = match (&item.target, &who) {
            (Target::Topic(topic), _) => match topic_name(topic, &dest.secrets) {
                Ok(name) => (format!("world/{name}.md"), How::Lines),
                Err(e) => {
                    problems.push(format!("{}: {e}; left out", item.from));
                    continue;
                }
            },
            (Target::Memory, Some(a)) => (format!("agents/{a}/MEMORY.md"), How::Lines),
            (Target::Daily(day), Some(a)) => (format!("agents/{a}/daily/{day}.md"), How::Daily),
            (_, None) => {
                problems.push(format!(
                    "{}: no agent to give it to: give --agent; left out",
                    item.from
                ));
                continue;
            }
        };
        if let Some(src) = &item.src {
            moved
                .entry((root.clone(), src.root))
                .or_default()
                .add(&src.path, &rel);
        }
        placed.push((item, root, rel, how));
    }
    for (item, root, rel, how) in placed {
        let Some(dest) = dests.get_mut(&root) else {
            continue;
        };
        let links = item
            .src
            .as_ref()
            .and_then(|src| Some((src, moved.get(&(root.clone(), src.root))?)));
        let text = match links {
            Some((src, m)) => Cow::Owned(m.rewrite(&item.text, &src.path, &rel, src.wiki)),
            None => Cow::Borrowed(&item.text),
        };
        let clean = dest.secrets.redact(&text);
        if !clean.kinds.is_empty() && was_redacted.insert(rel.clone()) {
            redacted.push(rel.clone());
        }
        // Conflict-marker lines one space in, as every memory write keeps
        // them: an imported file holding a pair would stop every sync.
        let text = axe_memory::markers::neutralise(&clean.text).into_owned();
        match dest.placed.get(&rel).map(|&i| &mut dest.plan[i]) {
            None => {
                dest.placed.insert(rel.clone(), dest.plan.len());
                dest.plan.push(Planned { rel, how, text });
            }
            Some(p) if how == How::Daily => {
                p.text = axe_sync::merge_entries(axe_sync::Layout::Daily, b"", &p.text, &text);
            }
            Some(p) if p.text == text => {}
            // Another source's text for the same note (two projects'
            // `debugging.md`, `Ada` and `ada`): merged after the first as
            // with a note already there, a conflict file if it differs.
            Some(_) => dest.plan.push(Planned { rel, how, text }),
        }
    }
    Ok(dests)
}
