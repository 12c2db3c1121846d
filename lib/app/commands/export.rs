//! `axe-export FORMAT`: the notes workspace in formats other tools read:
//! the reference MCP memory server's JSONL, one JSON object per entry, or
//! a self-contained folder of markdown.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::import::graph::{self, Entity, MEMORY_TYPE, Relation, TOPIC_TYPE};
use super::notes;
use axe_agent::Agents;
use axe_base::beneath::{self, Dir, Open};
use axe_base::error::{Error, Result};
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_memory::error::io_error;
use axe_memory::notes::{Workspace, topic_name};
use axe_memory::secrets::Secrets;
use axe_memory::{Wait, log, state};

pub const COMMAND: Command = Command {
    name: "axe-export",
    about: "Export the notes as MCP memory server JSONL, JSON lines or markdown",
    usage: &["[OPTIONS] <FORMAT>"],
    args: &[FORMAT],
    flags: &[AGENT, notes::WORKSPACE, OUTPUT],
    rules: &[
        Rule::Required(Item::Arg(&FORMAT)),
        Rule::Conflict(Item::Flag(&AGENT), Item::Flag(&notes::WORKSPACE)),
    ],
    description: "\
FORMAT is one of:
  mcp-memory  The reference MCP memory server's JSONL (its MEMORY_FILE_PATH):
              each world topic an entity (a topic axe-import made from one
              as it was: type, observations and relations; any other with
              entity type axe-topic and its lines as observations), each
              agent's MEMORY.md an entity of type axe-memory named after the
              agent. axe-import mcp-memory brings it back to the same notes.
  jsonl       One JSON object per entry, for jq and Nushell: {kind, agent,
              path, time, heading, text}; kind memory, world, daily, log or
              state; a daily log's entries by their ## HH:MM, other notes'
              by their markdown headings, a run log's by entry (heading its
              task, text its result), a state's by item (heading task,
              decision, error or fact); time (RFC 3339) for a daily or run
              log entry, else null.
  markdown    A self-contained folder (--output DIR: new, or empty and your
              own): world/, agents/<agent>/MEMORY.md and daily/, and an
              index.md linking them; every file in it made new, never
              through a symlink.

The workspace is --agent's (its own files only: its MEMORY.md and daily
logs, and the world topics), --workspace DIR, or the default one (every
agent's). Output goes
to stdout unless --output; a file is replaced whole, never left half
written. Conflict files and hidden files are not exported.",
    run: Run::Action(run),
};

const FORMAT: Arg = Arg {
    name: "FORMAT",
    noun: "format",
    help: "mcp-memory, jsonl or markdown",
    complete: Complete::Nothing,
    many: false,
};

const AGENT: Flag = Flag::with_value(
    "agent",
    "AGENT",
    "Export this agent's notes workspace and only its own files",
)
.completes(Complete::Agent);

const OUTPUT: Flag = Flag::with_value(
    "output",
    "FILE",
    "Write to FILE (for markdown: a new or empty directory) instead of stdout",
)
.short('o')
.completes(Complete::File);

const FORMATS: [&str; 3] = ["mcp-memory", "jsonl", "markdown"];

/// One note: its kind, agent, path in the workspace and text.
struct Note {
    kind: &'static str,
    agent: Option<String>,
    rel: String,
    text: String,
}

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let format = m
        .args()
        .first()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !FORMATS.contains(&format.as_str()) {
        return Err(Error::Usage(format!(
            "unknown format \"{format}\": one of {}",
            FORMATS.join(", ")
        )));
    }
    let output = m.value(&OUTPUT).map(PathBuf::from);
    if output.as_ref().is_some_and(|o| o.as_os_str().is_empty()) {
        return Err(Error::Usage("--output must not be empty".into()));
    }
    let target = notes::of_flags(m, &AGENT, &notes::WORKSPACE)?;
    let notes = collect(&target.ws, target.agent.as_deref())?;
    if format == "markdown" {
        let Some(dir) = output else {
            return Err(Error::Usage(
                "markdown needs --output DIR, a new or empty directory".into(),
            ));
        };
        return folder(&dir, &notes, out);
    }
    let text = match format.as_str() {
        "mcp-memory" => mcp_memory(&notes),
        _ => {
            let mut text = jsonl(&notes)?;
            if !m.given(&notes::WORKSPACE) {
                text.push_str(&logs_and_states(&target.agents, target.agent.as_deref())?);
            }
            text
        }
    };
    match output {
        Some(path) => write_whole(&path, text.as_bytes()),
        None => out.write_all(text.as_bytes()).map_err(Error::Output),
    }
}

/// The notes of `ws`: world topics, then each agent's MEMORY.md and daily
/// logs (only `agent`'s when given), by name.
fn collect(ws: &Workspace, agent: Option<&str>) -> Result<Vec<Note>> {
    let mut notes = Vec::new();
    let read = |notes: &mut Vec<Note>, kind, agent: Option<&str>, path: PathBuf| -> Result<()> {
        if let Some(bytes) = ws.read(&path)? {
            notes.push(Note {
                kind,
                agent: agent.map(str::to_owned),
                rel: ws.relative(&path),
                text: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        Ok(())
    };
    for name in md_names(ws, &ws.world())? {
        read(&mut notes, "world", None, ws.world().join(name))?;
    }
    let agents = match agent {
        Some(a) => vec![a.to_owned()],
        None => dir_names(ws, &ws.root.join("agents"))?,
    };
    for a in &agents {
        read(&mut notes, "memory", Some(a), ws.memory(a))?;
        for name in md_names(ws, &ws.daily_dir(a))? {
            read(&mut notes, "daily", Some(a), ws.daily_dir(a).join(name))?;
        }
    }
    Ok(notes)
}

fn md_names(ws: &Workspace, dir: &Path) -> Result<Vec<String>> {
    let Some(opened) = ws
        .open_dir(dir)
        .map_err(|e| io_error("failed to export", "open", dir, e))?
    else {
        return Ok(Vec::new());
    };
    let files =
        Workspace::md_files(&opened).map_err(|e| io_error("failed to export", "list", dir, e))?;
    Ok(files.into_iter().map(|(n, _)| n).collect())
}

fn dir_names(ws: &Workspace, dir: &Path) -> Result<Vec<String>> {
    let Some(opened) = ws
        .open_dir(dir)
        .map_err(|e| io_error("failed to export", "open", dir, e))?
    else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = opened
        .list()
        .map_err(|e| io_error("failed to export", "list", dir, e))?
        .into_iter()
        .filter(|(_, k)| *k == rustix::fs::FileType::Directory)
        .filter_map(|(n, _)| n.into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    Ok(names)
}

/// The notes as the reference server's JSONL (see `import::graph`).
fn mcp_memory(notes: &[Note]) -> String {
    let mut entities: Vec<Entity> = Vec::new();
    let mut relations: Vec<Relation> = Vec::new();
    for note in notes {
        let stem = note
            .rel
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".md");
        match note.kind {
            "world" => match graph::parse_topic(&note.text) {
                Some((name, entity, rels))
                    if topic_name(&name, &Secrets::off()).is_ok_and(|n| n == stem) =>
                {
                    entities.extend(entity);
                    relations.extend(rels);
                }
                _ => entities.push(Entity {
                    name: stem.to_owned(),
                    entity_type: TOPIC_TYPE.into(),
                    observations: graph::lines_of(&note.text),
                }),
            },
            "memory" => entities.push(Entity {
                name: note.agent.clone().unwrap_or_default(),
                entity_type: MEMORY_TYPE.into(),
                observations: graph::lines_of(&note.text),
            }),
            _ => {}
        }
    }
    relations.sort();
    relations.dedup();
    let mut out = String::new();
    for e in &entities {
        out.push_str(&graph::entity_line(e));
        out.push('\n');
    }
    for r in &relations {
        out.push_str(&graph::relation_line(r));
        out.push('\n');
    }
    out
}

#[derive(Serialize)]
struct Entry<'a> {
    kind: &'a str,
    agent: Option<&'a str>,
    path: &'a str,
    time: Option<String>,
    heading: Option<&'a str>,
    text: String,
}

/// One JSON object per entry of every note.
fn jsonl(notes: &[Note]) -> Result<String> {
    let mut out = String::new();
    for note in notes {
        let day = note
            .rel
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".md");
        for (heading, text) in entries(note) {
            // Only a real time: a heading such as `## 25:99`, or a file
            // whose name is no day, gives none.
            let time = match note.kind {
                "daily" => heading
                    .map(|h| format!("{day}T{h}:00Z"))
                    .filter(|t| OffsetDateTime::parse(t, &Rfc3339).is_ok()),
                _ => None,
            };
            let entry = Entry {
                kind: note.kind,
                agent: note.agent.as_deref(),
                path: &note.rel,
                time,
                heading,
                text,
            };
            out.push_str(&serde_json::to_string(&entry).map_err(|e| Error::Input(e.to_string()))?);
            out.push('\n');
        }
    }
    Ok(out)
}

/// The run logs' entries and the states' items, as JSON lines: `agent`'s
/// (where its agent file puts them), else every agent's in the data
/// directory. A log's entry: `time` its header, `heading` its task, `text`
/// its result; a state's item: `heading` what it is (`task`, `decision`,
/// `error`, `fact`), `text` a fact's text or the item as JSON.
fn logs_and_states(agents: &Agents, agent: Option<&str>) -> Result<String> {
    let data = agents.dirs().data()?;
    let found = |dir: &Path, ext: &str| -> Vec<(String, PathBuf)> {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut found: Vec<(String, PathBuf)> = entries
            .filter_map(|e| {
                let path = e.ok()?.path();
                let name = path.file_name()?.to_str()?.strip_suffix(ext)?.to_owned();
                (!name.starts_with('.') && path.is_file()).then_some((name, path))
            })
            .collect();
        found.sort();
        found
    };
    let (logs, states) = match agent {
        Some(a) => {
            let (cfg, _) = super::args::memory_agent(agents, a)?;
            let dirs = agents.dirs();
            (
                vec![(a.to_owned(), log::file_path(dirs, a, &cfg.memory.log.path)?)],
                vec![(
                    a.to_owned(),
                    state::file_path(dirs, a, &cfg.memory.state.path)?,
                )],
            )
        }
        None => (
            found(&data.join("memory"), ".md"),
            found(&data.join("state"), ".json"),
        ),
    };
    let shown = |path: &Path| {
        path.strip_prefix(&data)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let mut out = String::new();
    let mut push = |entry: &Entry| -> Result<()> {
        out.push_str(&serde_json::to_string(entry).map_err(|e| Error::Input(e.to_string()))?);
        out.push('\n');
        Ok(())
    };
    for (a, path) in &logs {
        if !path.is_file() {
            continue;
        }
        for record in log::tail(path, 0, Wait::default())?.records() {
            let record = record?;
            push(&Entry {
                kind: "log",
                agent: Some(a),
                path: &shown(path),
                time: Some(record.timestamp),
                heading: record.task.as_deref(),
                text: record.result,
            })?;
        }
    }
    for (a, path) in &states {
        if !path.is_file() {
            continue;
        }
        let st = state::load(path, Wait::default())?;
        let mut items: Vec<(&str, String)> = Vec::new();
        items.extend(st.tasks.values().map(|t| ("task", json(t))));
        items.extend(st.decisions.iter().map(|d| ("decision", json(d))));
        items.extend(st.errors.iter().map(|e| ("error", json(e))));
        items.extend(st.key_facts.iter().map(|f| ("fact", f.clone())));
        for (heading, text) in items {
            push(&Entry {
                kind: "state",
                agent: Some(a),
                path: &shown(path),
                time: None,
                heading: Some(heading),
                text,
            })?;
        }
    }
    Ok(out)
}

/// A state's item as one line of JSON.
fn json(item: &impl Serialize) -> String {
    // Plain data of strings and numbers: serialising cannot fail.
    serde_json::to_string(item).unwrap_or_default()
}

/// A note's entries: a daily log's by its `## HH:MM` lines (the `# date`
/// line no entry), any other's by its markdown headings (what comes
/// before the first, frontmatter and all, an entry without a heading).
fn entries(note: &Note) -> Vec<(Option<&str>, String)> {
    let daily = note.kind == "daily";
    fn is_head(daily: bool, line: &str) -> Option<&str> {
        if daily {
            let h = line.strip_prefix("## ")?;
            let b = h.as_bytes();
            (b.len() == 5 && b[2] == b':' && [0, 1, 3, 4].iter().all(|&i| b[i].is_ascii_digit()))
                .then_some(h)
        } else {
            let t = line.trim_start_matches('#');
            (t.len() < line.len() && line.len() - t.len() <= 6 && t.starts_with(' '))
                .then(|| t.trim())
        }
    }
    let mut found: Vec<(Option<&str>, Vec<&str>)> = vec![(None, Vec::new())];
    let mut fenced = false;
    for line in note.text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        match is_head(daily, line).filter(|_| !fenced) {
            Some(h) => found.push((Some(h), Vec::new())),
            None => found.last_mut().map(|(_, l)| l.push(line)).unwrap_or(()),
        }
    }
    found
        .into_iter()
        .filter_map(|(h, lines)| {
            let text = lines.join("\n").trim().to_owned();
            let preamble_only = h.is_none() && (daily || text.is_empty());
            (!preamble_only).then_some((h, text))
        })
        .collect()
}

/// The notes as a folder of their own, with an index, written as memory
/// is (`axe_base::beneath`): the folder is opened once and must be the
/// user's own and empty; every folder and file in it is made new through
/// the handle of the folder it is in, so a symlink put there meanwhile
/// (by whoever else can write there) fails the export and is never
/// written through.
fn folder(dir: &Path, notes: &[Note], out: &mut dyn Write) -> Result<()> {
    let fail =
        |op: &'static str, p: &Path, e: std::io::Error| io_error("failed to export", op, p, e);
    let root = match Dir::root(dir, false).map_err(|e| fail("open", dir, e))? {
        Some(root) => root,
        None => {
            beneath::create_dirs(dir).map_err(|e| fail("mkdir", dir, e))?;
            Dir::root(dir, false)
                .map_err(|e| fail("open", dir, e))?
                .ok_or_else(|| fail("open", dir, std::io::ErrorKind::NotFound.into()))?
        }
    };
    // Another user's folder (one made in /tmp before us, say) is theirs
    // to change under us: never written into, as a careful tool never
    // writes into a directory it does not own in a sticky /tmp.
    let owner = root
        .entry(OsStr::new("."))
        .map_err(|e| fail("open", dir, e))?
        .map(|e| e.uid);
    let me = rustix::process::geteuid().as_raw();
    if let Some(uid) = owner.filter(|&uid| uid != me) {
        return Err(Error::Input(format!(
            "{} belongs to another user (uid {uid}): export markdown into a directory of your own",
            dir.display()
        )));
    }
    if !root.list().map_err(|e| fail("list", dir, e))?.is_empty() {
        return Err(Error::Input(format!(
            "{} is not empty: export markdown into a new or empty directory",
            dir.display()
        )));
    }
    gate();
    // A new file at `rel` under the folder: never one that is there.
    let create = |rel: &str| -> Result<std::fs::File> {
        let path = dir.join(rel);
        let (held, name) = root
            .file(Path::new(rel), true)
            .map_err(|e| fail("create", &path, e))?
            .ok_or_else(|| fail("create", &path, std::io::ErrorKind::NotFound.into()))?;
        held.create(&name, Open::Append)
            .map_err(|e| fail("create", &path, e))?
            .ok_or_else(|| fail("create", &path, std::io::ErrorKind::AlreadyExists.into()))
    };
    let mut index = String::from("# Notes exported by axe\n");
    let mut section = String::new();
    for note in notes {
        let path = dir.join(&note.rel);
        create(&note.rel)?
            .write_all(note.text.as_bytes())
            .map_err(|e| fail("write", &path, e))?;
        let title = match note.kind {
            "world" => "World topics".to_owned(),
            _ => format!("Agent {}", note.agent.as_deref().unwrap_or_default()),
        };
        if title != section {
            index.push_str(&format!("\n## {title}\n\n"));
            section = title;
        }
        index.push_str(&format!(
            "- [{}]({})\n",
            note.rel,
            note.rel.replace(' ', "%20")
        ));
        writeln!(out, "{}", path.display()).map_err(Error::Output)?;
    }
    let path = dir.join("index.md");
    create("index.md")?
        .write_all(index.as_bytes())
        .map_err(|e| fail("write", &path, e))?;
    writeln!(out, "{}", path.display()).map_err(Error::Output)
}

/// A pause for axe's own tests, once the folder is checked and before
/// anything is written in it, so a test can plant links meanwhile: with
/// `AXE_TEST_EXPORT_GATE` naming a FIFO, the export waits until the test
/// has opened it and closed it again. Only builds with the `test-hooks`
/// feature (the tests' own) have it.
fn gate() {
    #[cfg(feature = "test-hooks")]
    if let Some(fifo) = std::env::var_os("AXE_TEST_EXPORT_GATE") {
        let _ = std::fs::read(fifo);
    }
}

/// Replaces `path` with `bytes` through a temp file beside it, so a
/// reader (the memory server starting) sees the old file or the new one.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    let fail =
        |op: &'static str, p: &Path, e: std::io::Error| io_error("failed to export", op, p, e);
    let name = path
        .file_name()
        .ok_or_else(|| Error::Usage(format!("--output {} names no file", path.display())))?;
    let mut temp_name = std::ffi::OsString::from(".");
    temp_name.push(name);
    temp_name.push(format!(".axe-export-{}", std::process::id()));
    let temp = path.with_file_name(temp_name);
    // A new file, never one already at that name: its name is known in
    // advance, and a symlink planted there would be written through.
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)
        .map_err(|e| fail("create", &temp, e))?;
    let result = (|| {
        f.write_all(bytes).map_err(|e| fail("write", &temp, e))?;
        f.sync_all().map_err(|e| fail("sync", &temp, e))?;
        std::fs::rename(&temp, path).map_err(|e| fail("rename", path, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_temp_file_is_new_not_a_link_planted_at_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("memory.jsonl");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let temp = dir
            .path()
            .join(format!(".memory.jsonl.axe-export-{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &temp).unwrap();
        // Refused, or written elsewhere: never through the link.
        let _ = write_whole(&out, b"new\n");
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert!(!out.is_symlink());
    }
}
