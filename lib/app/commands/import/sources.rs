//! Reading what other tools keep, as items for the notes workspace.
//!
//! Every file is read through directory handles (`axe_base::beneath`)
//! without following a symlink, so a link in a memory directory cannot
//! bring in a file from elsewhere (say, `~/.ssh/id_ed25519`); it is
//! named and left out. Each file is read only up to [`FILE_LIMIT`]: a
//! larger one is named and left out, never read into memory whole.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::graph::{self, Entity, MEMORY_TYPE, Relation, TOPIC_TYPE};
use axe_base::beneath::{self, Dir};
use axe_base::error::{Error, Result};
use axe_memory::error::io_error;
use axe_memory::log::escape_headers;
use axe_memory::notes::topic_name;
use axe_memory::secrets::Secrets;

/// The largest file an import reads: 16 MiB, far past any tool's memory
/// file (Claude Code loads 25 KB of MEMORY.md).
pub const FILE_LIMIT: u64 = 16 << 20;

/// How deep `markdown DIR` descends, and how many notes it takes.
const MAX_DEPTH: usize = 32;
const MAX_FILES: usize = 100_000;

/// Where an item goes in the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The agent's MEMORY.md.
    Memory,
    /// The world topic of this name (sanitised later, as `learn` does).
    Topic(String),
    /// The agent's daily log of this day (`YYYY-MM-DD`); the text is a
    /// whole daily log.
    Daily(String),
}

#[derive(Debug, Clone)]
pub struct Item {
    /// The agent of a MEMORY.md or daily log.
    pub agent: Option<String>,
    pub target: Target,
    pub text: Vec<u8>,
    /// Where it came from, for messages.
    pub from: String,
    /// Where it was in its source, for the links to it and in it.
    pub src: Option<Src>,
}

/// A file's place in its source: the folder it was read from (one of a
/// source's, by number) and its path there (`/` between components), and
/// whether the source links its notes by `[[name]]` too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Src {
    pub root: usize,
    pub path: String,
    pub wiki: bool,
}

impl Src {
    fn at(root: usize, path: impl Into<String>) -> Option<Src> {
        Some(Src {
            root,
            path: path.into(),
            wiki: false,
        })
    }
}

/// What a source gave, and what it left out (one line each).
#[derive(Debug, Default)]
pub struct Read {
    pub items: Vec<Item>,
    pub problems: Vec<String>,
}

impl Read {
    fn item(&mut self, agent: Option<&str>, target: Target, text: Vec<u8>, from: impl ToString) {
        self.items.push(Item {
            agent: agent.map(str::to_owned),
            target,
            text,
            from: from.to_string(),
            src: None,
        });
    }

    /// Gives the item added last its place in its source.
    fn placed(&mut self, src: Option<Src>) {
        if let Some(last) = self.items.last_mut() {
            last.src = src;
        }
    }

    /// A name in `dir` that is not UTF-8 cannot name a topic or an agent:
    /// noted, as well as it can be shown, rather than passed over.
    fn not_utf8(&mut self, shown: &Path) {
        self.problems.push(format!(
            "{}: the name is not UTF-8; left out",
            shown.display()
        ));
    }

    /// The regular file `name` in `dir`, or `None` with the reason noted.
    fn file(&mut self, dir: &Dir, name: &OsStr) -> Option<Vec<u8>> {
        let mut buf = Vec::new();
        match dir.read_into(name, &mut buf, FILE_LIMIT) {
            Ok(true) => Some(buf),
            Ok(false) => None,
            Err(e) => {
                let why = match beneath::is_link(&e) {
                    true => "a symlink, not followed".to_owned(),
                    false => axe_base::error::describe_io(&e),
                };
                self.problems
                    .push(format!("{}: {why}; left out", dir.join(name).display()));
                None
            }
        }
    }
}

impl Read {
    /// The directory `name` in `dir` (at `shown`), entered without
    /// following a symlink; `None` when there is none, with the reason
    /// noted when something else is there.
    fn dir(&mut self, dir: &Dir, name: &str, shown: &Path) -> Option<Dir> {
        let why = match dir.child(OsStr::new(name)) {
            Ok(found) => return found,
            // A file where Claude Code keeps a folder: nothing of its own.
            Err(e) if beneath::not_a_dir(&e).is_some() => return None,
            Err(e) if beneath::is_link(&e) => "a symlink, not followed".to_owned(),
            Err(e) => axe_base::error::describe_io(&e),
        };
        self.problems
            .push(format!("{}: {why}; left out", shown.display()));
        None
    }
}

fn open(path: &Path) -> Result<Dir> {
    match Dir::root(path, false) {
        Ok(Some(dir)) => Ok(dir),
        Ok(None) => Err(Error::Input(format!("{} does not exist", path.display()))),
        Err(e) => Err(Error::Input(format!(
            "cannot open {}: {}",
            path.display(),
            axe_base::error::describe_io(&e)
        ))),
    }
}

fn home() -> Result<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
        .ok_or_else(|| Error::Input("HOME is not set: give the PATH to import".into()))
}

/// The `.md` files directly in `dir` (regular, not hidden), sorted; one
/// whose name is not UTF-8 is noted in `read`.
fn md_names(dir: &Dir, read: &mut Read) -> Result<Vec<String>> {
    let mut names = Vec::new();
    let listed = dir
        .list()
        .map_err(|e| io_error("failed to import", "list", dir.join(""), e))?;
    for (name, kind) in listed {
        if !matches!(kind, FileType::RegularFile | FileType::Symlink)
            || !name.as_bytes().ends_with(b".md")
            || name.as_bytes().starts_with(b".")
        {
            continue;
        }
        match name.into_string() {
            Ok(n) => names.push(n),
            Err(n) => read.not_utf8(&dir.join(&n)),
        }
    }
    names.sort();
    Ok(names)
}

/// An agent's name made of a directory's name: as a topic's name is
/// made (`-home-me-src-app` is `home-me-src-app`).
pub fn agent_of(dir_name: &str) -> Option<String> {
    topic_name(dir_name, &Secrets::off()).ok()
}

/// Claude Code's auto memory: `~/.claude/projects/<project>/memory/`,
/// `MEMORY.md` (the index Claude Code loads, its first 200 lines) and
/// topic files beside it, each with frontmatter (`name`, `description`,
/// `type`: user, feedback, project or reference), as Claude Code's memory
/// instructions lay them out (code.claude.com/docs/en/memory, "Auto
/// memory"). MEMORY.md becomes the agent's MEMORY.md; each topic file a
/// world topic named after its file, frontmatter and all; with
/// `with_claude_md`, `~/.claude/CLAUDE.md` (the user's instructions) the
/// world topic `claude-md`.
pub fn claude_code(path: Option<&Path>, agent: Option<&str>, with_claude_md: bool) -> Result<Read> {
    let mut read = Read::default();
    let projects: Vec<(PathBuf, String, Dir)> = match path {
        Some(p) => {
            let (memory, named, dir) = memory_dir(p, &mut read)?;
            let name = agent
                .map(str::to_owned)
                .or_else(|| named.and_then(OsStr::to_str).and_then(agent_of));
            let name = name.ok_or_else(|| {
                Error::Usage(format!("no agent name in {}: give --agent", p.display()))
            })?;
            vec![(memory, name, dir)]
        }
        None => {
            let root = home()?.join(".claude/projects");
            let dir = open(&root)?;
            // Links too: each is named, not passed over in silence.
            let mut names: Vec<String> = dir
                .list()
                .map_err(|e| io_error("failed to import", "list", &root, e))?
                .into_iter()
                .filter(|(_, k)| matches!(k, FileType::Directory | FileType::Symlink))
                .filter_map(|(n, _)| n.into_string().ok())
                .collect();
            names.sort();
            let mut found = Vec::new();
            for n in names {
                // Each project and its memory directory entered by
                // handle, never through a symlink: a link there would
                // bring a folder from anywhere in as synced world topics.
                let project = root.join(&n);
                let Some(project_dir) = read.dir(&dir, &n, &project) else {
                    continue;
                };
                let memory = project.join("memory");
                let Some(memory_dir) = read.dir(&project_dir, "memory", &memory) else {
                    continue;
                };
                match agent.map(str::to_owned).or_else(|| agent_of(&n)) {
                    Some(a) => found.push((memory, a, memory_dir)),
                    None => read.problems.push(format!(
                        "{}: no agent name in it; left out",
                        project.display()
                    )),
                }
            }
            found
        }
    };
    for (root, (dir_path, name, dir)) in projects.into_iter().enumerate() {
        for file in md_names(&dir, &mut read)? {
            let Some(text) = read.file(&dir, OsStr::new(&file)) else {
                continue;
            };
            let target = match file.as_str() {
                "MEMORY.md" => Target::Memory,
                _ => Target::Topic(file.trim_end_matches(".md").to_owned()),
            };
            read.item(Some(&name), target, text, dir_path.join(&file).display());
            read.placed(Src::at(root, file));
        }
    }
    if with_claude_md {
        let claude = home()?.join(".claude");
        if let Some(dir) = Dir::root(&claude, false).ok().flatten()
            && let Some(text) = read.file(&dir, OsStr::new("CLAUDE.md"))
        {
            read.item(
                agent,
                Target::Topic("claude-md".into()),
                text,
                claude.join("CLAUDE.md").display(),
            );
        }
    }
    Ok(read)
}

/// The memory folder `path` names for `claude-code`, the name its agent
/// is given after, and the folder: `path` itself when it is named
/// `memory` or holds `.md` files (a memory folder by another name), else
/// the project folder's `memory/`, entered without following a symlink.
/// Anything else is refused, naming where it looked: an import that
/// finds nothing would say "nothing new" and leave the agent without
/// its memory.
fn memory_dir<'a>(path: &'a Path, read: &mut Read) -> Result<(PathBuf, Option<&'a OsStr>, Dir)> {
    let given = open(path)?;
    if path.file_name() == Some(OsStr::new("memory")) {
        return Ok((
            path.to_owned(),
            path.parent().and_then(Path::file_name),
            given,
        ));
    }
    let memory = path.join("memory");
    let why = match given.child(OsStr::new("memory")) {
        Ok(Some(dir)) => return Ok((memory, path.file_name(), dir)),
        Ok(None) => None,
        Err(e) if beneath::not_a_dir(&e).is_some() => Some("not a folder".to_owned()),
        Err(e) if beneath::is_link(&e) => Some("a symlink, not followed".to_owned()),
        Err(e) => Some(axe_base::error::describe_io(&e)),
    };
    if why.is_none() && !md_names(&given, read)?.is_empty() {
        return Ok((path.to_owned(), path.file_name(), given));
    }
    let found = match why {
        Some(why) => format!(" ({why})"),
        None => String::new(),
    };
    Err(Error::Config(format!(
        "no Claude Code memory in {}: looked for the project's memory folder {}{found} and for .md files in {}",
        path.display(),
        memory.display(),
        path.display(),
    )))
}

/// Codex's memories: `~/.codex/memories/` holds `MEMORY.md` (the
/// searchable registry), `memory_summary.md` (what every prompt is
/// given), `raw_memories.md` and `rollout_summaries/` (a recap per
/// rollout), as Codex's own memory prompt lays them out (openai/codex,
/// `codex-rs/core/templates/memories/read_path.md`). MEMORY.md becomes
/// the agent's (`codex` unless `--agent`); the rest world topics:
/// `codex-memory-summary`, `codex-raw-memories`, `codex-rollout-<name>`.
pub fn codex(path: Option<&Path>, agent: Option<&str>) -> Result<Read> {
    let root = match path {
        Some(p) => p.to_owned(),
        None => home()?.join(".codex/memories"),
    };
    let agent = agent.unwrap_or("codex");
    let dir = open(&root)?;
    let mut read = Read::default();
    for file in md_names(&dir, &mut read)? {
        let target = match file.as_str() {
            "MEMORY.md" => Target::Memory,
            "memory_summary.md" => Target::Topic("codex memory summary".into()),
            "raw_memories.md" => Target::Topic("codex raw memories".into()),
            other => Target::Topic(format!("codex {}", other.trim_end_matches(".md"))),
        };
        if let Some(text) = read.file(&dir, OsStr::new(&file)) {
            read.item(Some(agent), target, text, root.join(&file).display());
            read.placed(Src::at(0, file));
        }
    }
    let rollouts = root.join("rollout_summaries");
    if let Some(sub) = read.dir(&dir, "rollout_summaries", &rollouts) {
        for file in md_names(&sub, &mut read)? {
            if let Some(text) = read.file(&sub, OsStr::new(&file)) {
                let topic = format!("codex rollout {}", file.trim_end_matches(".md"));
                read.item(
                    Some(agent),
                    Target::Topic(topic),
                    text,
                    rollouts.join(&file).display(),
                );
                read.placed(Src::at(0, format!("rollout_summaries/{file}")));
            }
        }
    }
    Ok(read)
}

/// Any folder of markdown notes (basic-memory, an Obsidian vault): each
/// `.md` file, at any depth, a world topic named after its path in the
/// folder (`people/Ada Lovelace.md` is `people-ada-lovelace`), kept as it
/// is, frontmatter and all. Hidden files and folders (`.obsidian`,
/// `.git`) are passed over.
pub fn markdown(path: &Path) -> Result<Read> {
    let mut read = Read::default();
    let root = open(path)?;
    let mut stack = vec![(root, String::new(), 0usize)];
    let mut count = 0;
    while let Some((dir, prefix, depth)) = stack.pop() {
        let mut entries = dir
            .list()
            .map_err(|e| io_error("failed to import", "list", dir.join(""), e))?;
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, kind) in entries {
            if name.as_bytes().starts_with(b".") {
                continue;
            }
            let name = match name.into_string() {
                Ok(n) => n,
                Err(n) if kind == FileType::Directory || n.as_bytes().ends_with(b".md") => {
                    read.not_utf8(&path.join(&prefix).join(n));
                    continue;
                }
                Err(_) => continue,
            };
            let shown = format!("{prefix}{name}");
            match kind {
                FileType::Directory if depth < MAX_DEPTH => {
                    if let Some(sub) = read.dir(&dir, &name, &path.join(&shown)) {
                        stack.push((sub, format!("{shown}/"), depth + 1));
                    }
                }
                FileType::Directory => read.problems.push(format!(
                    "{shown}: deeper than {MAX_DEPTH} folders; left out"
                )),
                _ if !name.ends_with(".md") => {}
                _ if count >= MAX_FILES => {
                    read.problems
                        .push(format!("{shown}: past {MAX_FILES} notes; left out"));
                }
                _ => {
                    count += 1;
                    if let Some(text) = read.file(&dir, OsStr::new(&name)) {
                        let topic = shown.trim_end_matches(".md").to_owned();
                        read.item(
                            None,
                            Target::Topic(topic),
                            text,
                            path.join(&shown).display(),
                        );
                        read.placed(Some(Src {
                            root: 0,
                            path: shown,
                            wiki: true,
                        }));
                    }
                }
            }
        }
    }
    Ok(read)
}

/// Reads the file `path` names (bounded), for the JSON sources, less a
/// UTF-8 byte order mark an editor may have put first: JSON has none, and
/// it would cost the first line or the whole file.
fn json_file(path: &Path) -> Result<Vec<u8>> {
    let mut bytes = axe_base::read::bytes(path, FILE_LIMIT).map_err(|e| {
        Error::Input(format!(
            "cannot read {}: {}",
            path.display(),
            axe_base::error::describe_io(&e)
        ))
    })?;
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    Ok(bytes)
}

/// The reference MCP memory server's JSONL ([`graph`]): each entity a
/// world topic, each relation a line in both its ends' topics; axe's own
/// `axe-memory` entities an agent's MEMORY.md, `axe-topic` ones a topic
/// verbatim. A malformed line is named by its number and left out.
pub fn mcp_memory(path: &Path) -> Result<Read> {
    let bytes = json_file(path)?;
    let (g, problems) = graph::parse_jsonl(&bytes);
    let mut read = Read {
        problems: problems
            .into_iter()
            .map(|p| format!("{}: {p}", path.display()))
            .collect(),
        ..Read::default()
    };
    // Every name a topic is made for, in the file's order, with its
    // entity (the graph's own, not an axe one beside it: an agent's
    // MEMORY.md is named after the agent) and the relations it is an end
    // of: indices, so a large graph is read in one pass.
    let mut names: Vec<&str> = Vec::new();
    let mut of_name: HashMap<&str, (Option<&Entity>, Vec<&Relation>)> = HashMap::new();
    let axe_topics: HashSet<&str> = g
        .entities
        .iter()
        .filter(|e| e.entity_type == TOPIC_TYPE)
        .map(|e| e.name.as_str())
        .collect();
    for e in &g.entities {
        if e.entity_type == MEMORY_TYPE {
            let text = graph::text_of(&e.observations).into_bytes();
            let from = format!("{}: entity of type {MEMORY_TYPE}", path.display());
            read.item(Some(&e.name), Target::Memory, text, from);
        } else if e.entity_type == TOPIC_TYPE {
            let text = graph::text_of(&e.observations).into_bytes();
            read.item(None, Target::Topic(e.name.clone()), text, path.display());
        } else if let Some((first, _)) = of_name.get_mut(e.name.as_str()) {
            first.get_or_insert(e);
        } else {
            names.push(&e.name);
            of_name.insert(&e.name, (Some(e), Vec::new()));
        }
    }
    for r in &g.relations {
        let ends: &[&String] = match r.from == r.to {
            true => &[&r.from],
            false => &[&r.from, &r.to],
        };
        for end in ends {
            if axe_topics.contains(end.as_str()) && !of_name.contains_key(end.as_str()) {
                continue;
            }
            let (_, rels) = of_name.entry(end.as_str()).or_insert_with(|| {
                names.push(end.as_str());
                (None, Vec::new())
            });
            rels.push(r);
        }
    }
    for name in names {
        let (entity, rels) = &of_name[name];
        let text = graph::topic(name, *entity, rels).into_bytes();
        read.item(None, Target::Topic(name.to_owned()), text, path.display());
    }
    Ok(read)
}

/// mem0's memories as its API and export give them (docs.mem0.ai, "Get
/// All Memories" / "Export Memories": `{"results": [...]}` or a bare
/// array; each `{"id", "memory", "user_id", "agent_id", "created_at",
/// ...}`): each memory an entry in a daily log, at the day and minute
/// (UTC) of its `created_at`, of the agent `--agent`, else its
/// `agent_id`, else its `user_id`, else `mem0`.
pub fn mem0(path: &Path, agent: Option<&str>) -> Result<Read> {
    let bytes = json_file(path)?;
    let shown = path.display();
    let value: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::Input(format!("{shown} is not JSON: {e}")))?;
    let list = match &value {
        Value::Array(a) => a,
        Value::Object(o) => match ["results", "memories"].iter().find_map(|k| o.get(*k)) {
            Some(Value::Array(a)) => a,
            _ => {
                return Err(Error::Input(format!(
                    "{shown}: no \"results\" or \"memories\" list of memories"
                )));
            }
        },
        _ => return Err(Error::Input(format!("{shown}: not a list of memories"))),
    };
    let mut read = Read::default();
    let mut days: BTreeMap<(String, String), Day> = BTreeMap::new();
    for (i, m) in list.iter().enumerate() {
        let n = i + 1;
        let text = m.get("memory").and_then(Value::as_str).map(str::trim);
        let Some(text) = text.filter(|t| !t.is_empty()) else {
            read.problems
                .push(format!("{shown}: memory {n}: no \"memory\" text; left out"));
            continue;
        };
        // The day of the log is the UTC day: the same whatever the zone
        // of the machine or of the date. A date whose UTC day is outside
        // years 1 to 9999 has no log to go in (`to_offset` would panic).
        let at = match m.get("created_at").and_then(Value::as_str) {
            None => Err("no \"created_at\" time"),
            Some(s) => OffsetDateTime::parse(s, &Rfc3339)
                .map_err(|_| "\"created_at\" is not an RFC 3339 time with a zone")
                .and_then(|t| {
                    t.checked_to_offset(time::UtcOffset::UTC)
                        .ok_or("\"created_at\" is out of range in UTC")
                }),
        };
        let at = match at {
            Ok(at) => at,
            Err(why) => {
                read.problems
                    .push(format!("{shown}: memory {n}: {why}; left out"));
                continue;
            }
        };
        let owner = agent.map(str::to_owned).or_else(|| {
            ["agent_id", "user_id"]
                .iter()
                .find_map(|k| m.get(*k).and_then(Value::as_str))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        });
        let owner = owner.unwrap_or_else(|| "mem0".into());
        let day = format!(
            "{:04}-{:02}-{:02}",
            at.year(),
            u8::from(at.month()),
            at.day()
        );
        // As `remember` writes an entry (notes/daily.rs): `## ` lines in
        // the text one space in, so none starts an entry of its own.
        let mut entry = format!("## {:02}:{:02}\n\n", at.hour(), at.minute()).into_bytes();
        escape_headers(text.as_bytes(), &mut entry);
        entry.truncate(entry.trim_ascii_end().len());
        let (numbers, entries) = days.entry((owner, day)).or_default();
        numbers.push(n);
        entries.push(entry);
    }
    for ((owner, day), (numbers, entries)) in days {
        let from = match numbers.as_slice() {
            [n] => format!("{shown}: memory {n}"),
            [n, rest @ ..] => format!("{shown}: memory {n} and {} more", rest.len()),
            [] => continue,
        };
        let text = daily_log(&day, entries);
        read.item(Some(&owner), Target::Daily(day), text, from);
    }
    Ok(read)
}

/// One (agent, day)'s memories: their numbers in the file, for
/// messages, and their entries.
type Day = (Vec<usize>, Vec<Vec<u8>>);

/// A day's log of `entries` (each `## HH:MM` and its text) as sync's
/// entry merge makes it of them one at a time: each once, in time order,
/// those of one minute in the order given. Made in one pass: merging a
/// day of 100,000 memories one by one reads the growing log each time.
fn daily_log(day: &str, entries: Vec<Vec<u8>>) -> Vec<u8> {
    let mut seen = HashSet::new();
    let mut entries: Vec<Vec<u8>> = entries
        .into_iter()
        .filter(|e| seen.insert(e.clone()))
        .collect();
    // Stable: `## HH:MM` is the first line, the same length in every entry.
    entries.sort_by(|a, b| a[..8.min(a.len())].cmp(&b[..8.min(b.len())]));
    let mut text = format!("# {day}\n").into_bytes();
    for e in entries {
        text.push(b'\n');
        text.extend_from_slice(&e);
        text.push(b'\n');
    }
    text
}
