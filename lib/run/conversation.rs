//! Conversations kept per agent, so a run can go on where the last one
//! stopped (`axe-run -c`, `--cid ID`, `axe-llm -c`, `axe-chat`).
//!
//! One file per conversation, `<data>/conversations/agents/<agent>/<id>.jsonl`
//! (`axe-llm`'s under `<data>/conversations/llm/`): JSON lines, each a
//! message as `axe-run --json` gives them (tool calls and results
//! included), and after a turn the run log recorded, a line
//! `{"run_log": "<entry time>"}`, so the next turn leaves that entry out of
//! its prompt: the conversation carries it already.
//!
//! Written the way the run log is (lib/memory/append.rs): a turn's lines
//! are one whole append under the file's exclusive lock; read under the
//! shared lock up to the last whole append. Text goes through the same
//! [`Secrets`] as memory. Bounded: a conversation stops growing at
//! [`MAX_BYTES`] (the turn is then not kept, with a warning), only its
//! last [`MAX_MESSAGES`] messages are sent, and an agent keeps its
//! [`MAX_KEPT`] newest conversations, older ones going as a new one
//! starts ([`prune`] with another number for a tighter bound).
//!
//! Two runs continuing the same conversation at once each append their
//! whole turn; the file then holds both, one after the other.

use std::ffi::OsString;
use std::io::{self, Read};
use std::path::PathBuf;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use axe_base::beneath::{Dir, Open};
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_base::stderr::escape;
use axe_llm::{Message, Role};
use axe_memory::Wait;
use axe_memory::append::{whole_len, write_whole};
use axe_memory::error::io_error;
use axe_memory::lock::{Mode, create_locked, open_locked};
use axe_memory::secrets::{Kind, Secrets};

/// The largest conversation file kept; a turn that would pass it is not
/// saved.
pub const MAX_BYTES: u64 = 8 * 1024 * 1024;

/// The most earlier messages sent with a turn; older ones stay in the
/// file but are not sent (the cut starts at a user message).
pub const MAX_MESSAGES: usize = 400;

/// Conversations an agent keeps; the oldest go as new ones start.
pub const MAX_KEPT: usize = 200;

const SUFFIX: &str = ".jsonl";

/// Whose conversations: an agent's, or plain `axe-llm` calls'.
#[derive(Debug, Clone, Copy)]
pub enum Owner<'a> {
    Agent(&'a str),
    Llm,
}

impl<'a> Owner<'a> {
    /// The agent's conversations, or (`None`) axe-llm's: how a ledger
    /// record's agent names them.
    pub fn of(agent: Option<&'a str>) -> Owner<'a> {
        agent.map_or(Owner::Llm, Owner::Agent)
    }

    fn rel(self) -> PathBuf {
        match self {
            Owner::Agent(name) => ["conversations", "agents", name].iter().collect(),
            Owner::Llm => ["conversations", "llm"].iter().collect(),
        }
    }

    fn describe(self) -> String {
        match self {
            Owner::Agent(name) => format!("agent \"{name}\""),
            Owner::Llm => "axe-llm".to_owned(),
        }
    }
}

/// A conversation read back: its messages (the last [`MAX_MESSAGES`],
/// starting at a user message) and the run-log entries its turns wrote.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    pub id: String,
    pub messages: Vec<Message>,
    pub run_log: Vec<String>,
}

/// One line of a conversation file.
#[derive(Serialize, serde::Deserialize)]
#[serde(untagged)]
enum Line {
    RunLog { run_log: String },
    Message(Message),
}

/// Checks an id given with `--cid`: a name with no `/` and no leading
/// dot, so it can never name a path outside the agent's directory nor a
/// hidden file.
pub fn check_id(id: &str) -> Result<&str> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
        && !id.starts_with(['-', '.']);
    match ok {
        true => Ok(id),
        false => Err(Error::Usage(format!(
            "--cid: \"{id}\" is not a conversation id (letters, digits, -, _ and ., at most 64, not starting with - or .)"
        ))),
    }
}

/// A new id: the time, then bits of the clock and the process, so ids
/// sort by when their conversation started.
pub fn new_id() -> String {
    let now = time::OffsetDateTime::now_utc();
    let nanos = now.nanosecond();
    let mix = (u64::from(nanos) << 16) ^ u64::from(std::process::id());
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{:08x}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        mix & 0xffff_ffff
    )
}

fn dir(dirs: &Dirs, owner: Owner, create: bool) -> Result<Option<Dir>> {
    let data = dirs.data()?;
    let rel = owner.rel();
    let fail = |e: io::Error| {
        io_error(
            "failed to open the conversations directory",
            "open",
            data.join(&rel),
            e,
        )
    };
    let Some(root) = Dir::root(&data, create).map_err(fail)? else {
        return Ok(None);
    };
    root.dir(&rel, create).map_err(fail)
}

fn file_name(id: &str) -> OsString {
    OsString::from(format!("{id}{SUFFIX}"))
}

/// The owner's conversations, newest use first: `(id, bytes, modified)`.
pub fn list(dirs: &Dirs, owner: Owner) -> Result<Vec<Listed>> {
    let Some(dir) = dir(dirs, owner, false)? else {
        return Ok(Vec::new());
    };
    let names = dir
        .list()
        .map_err(|e| io_error("failed to list conversations", "readdir", dir.join(""), e))?;
    let mut found = Vec::new();
    for (name, kind) in names {
        let Some(id) = name.to_str().and_then(|n| n.strip_suffix(SUFFIX)) else {
            continue;
        };
        if !kind.is_file() || check_id(id).is_err() {
            continue;
        }
        let Ok(meta) = std::fs::symlink_metadata(dir.join(&name)) else {
            continue;
        };
        found.push(Listed {
            id: id.to_owned(),
            bytes: meta.len(),
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        });
    }
    // Newest use first; ids break ties, later starts first.
    found.sort_by(|a, b| b.modified.cmp(&a.modified).then(b.id.cmp(&a.id)));
    Ok(found)
}

/// The agents that have kept conversations, by name.
pub fn agents(dirs: &Dirs) -> Result<Vec<String>> {
    let data = dirs.data()?;
    let rel: PathBuf = ["conversations", "agents"].iter().collect();
    let fail = |e: io::Error| {
        io_error(
            "failed to list conversations",
            "readdir",
            data.join(&rel),
            e,
        )
    };
    let Some(root) = Dir::root(&data, false).map_err(fail)? else {
        return Ok(Vec::new());
    };
    let Some(dir) = root.dir(&rel, false).map_err(fail)? else {
        return Ok(Vec::new());
    };
    let mut names: Vec<String> = dir
        .list()
        .map_err(fail)?
        .into_iter()
        .filter(|(_, kind)| kind.is_dir())
        .filter_map(|(name, _)| name.into_string().ok())
        .collect();
    names.sort();
    Ok(names)
}

/// One conversation in [`list`].
#[derive(Debug, Clone)]
pub struct Listed {
    pub id: String,
    pub bytes: u64,
    pub modified: SystemTime,
}

/// The id of the owner's conversation used last, if any.
pub fn last(dirs: &Dirs, owner: Owner) -> Result<Option<String>> {
    Ok(list(dirs, owner)?.into_iter().next().map(|l| l.id))
}

/// How many known ids an unknown id's error names.
const NAMED: usize = 5;

/// The error for conversation `id` that `owner` does not have: the
/// nearest id it has ("did you mean"), then the ids it used last, then
/// `hint` (what to do instead), so a mistyped id is never a silent start.
pub fn unknown(dirs: &Dirs, owner: Owner, id: &str, hint: &str) -> Error {
    // An unreadable directory only loses the suggestions.
    let known: Vec<String> = list(dirs, owner)
        .unwrap_or_default()
        .into_iter()
        .map(|l| l.id)
        .collect();
    unknown_among(id, &owner.describe(), &known, hint)
}

/// [`unknown`] over `known` (the ids, newest use first) of `whose`.
pub fn unknown_among(id: &str, whose: &str, known: &[String], hint: &str) -> Error {
    let mut text = format!("no conversation \"{id}\" of {whose}");
    if let Some(near) = axe_base::suggest::near(id, known.iter().map(String::as_str)) {
        text.push_str(&format!(": did you mean \"{near}\"?"));
    }
    match known.len() {
        0 => text.push_str(" (it has none yet)"),
        n => {
            let named: Vec<&str> = known.iter().take(NAMED).map(String::as_str).collect();
            text.push_str(&format!(" (used last: {}", named.join(", ")));
            if n > NAMED {
                text.push_str(&format!(" and {} more", n - NAMED));
            }
            text.push(')');
        }
    }
    if !hint.is_empty() {
        text.push_str("; ");
        text.push_str(hint);
    }
    Error::Usage(text)
}

/// What a command was asked to go on with: `-c` (the owner's
/// conversation used last), `--cid ID`, and `--new` (an ID the owner
/// does not have is started rather than refused).
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked<'a> {
    pub last: bool,
    pub cid: Option<&'a str>,
    pub new: bool,
}

impl Asked<'_> {
    /// Whether a conversation was named at all (`-c` or `--cid`): such a
    /// command keeps its turn even where `[log] conversations = false`.
    pub fn any(&self) -> bool {
        self.last || self.cid.is_some()
    }
}

/// The conversation a command goes on with, read; `None` when it starts
/// a new one: no `-c` nor `--cid`, `-c` when the owner has none yet, or
/// (an empty conversation by the id given) `--cid ID --new` with an ID
/// the owner does not have. `--cid` of an unknown ID without `--new` is
/// the [`unknown`] error.
pub fn pick(dirs: &Dirs, owner: Owner, asked: Asked, wait: Wait) -> Result<Option<Loaded>> {
    match (asked.last, asked.cid) {
        (_, Some(id)) => match load_or_new(dirs, owner, id, wait)? {
            Some(loaded) => Ok(Some(loaded)),
            None if asked.new => Ok(Some(Loaded {
                id: id.to_owned(),
                ..Loaded::default()
            })),
            None => Err(unknown(
                dirs,
                owner,
                id,
                "--new starts a conversation by that name",
            )),
        },
        (true, None) => match last(dirs, owner)? {
            Some(id) => load(dirs, owner, &id, wait).map(Some),
            None => Ok(None),
        },
        (false, None) => Ok(None),
    }
}

/// Reads conversation `id`, as [`Loaded`]; an id that is not there is a
/// usage error naming whose conversations were looked in.
pub fn load(dirs: &Dirs, owner: Owner, id: &str, wait: Wait) -> Result<Loaded> {
    let id = check_id(id)?;
    let missing = || unknown(dirs, owner, id, "");
    let Some(dir) = dir(dirs, owner, false)? else {
        return Err(missing());
    };
    let name = file_name(id);
    let path = dir.join(&name);
    let fail = |op, e| io_error("failed to read conversation", op, &path, e);
    let Some(file) =
        open_locked(&dir, &name, Open::Read, Mode::Shared, wait).map_err(|e| fail("open", e))?
    else {
        return Err(missing());
    };
    let len = file.metadata().map_err(|e| fail("stat", e))?.len();
    let len = whole_len(&dir, &name, &file, len);
    if len > MAX_BYTES {
        return Err(Error::Input(format!(
            "conversation \"{id}\" is over {MAX_BYTES} bytes: start a new one"
        )));
    }
    let mut bytes = Vec::new();
    (&file)
        .take(len)
        .read_to_end(&mut bytes)
        .map_err(|e| fail("read", e))?;
    drop(file);
    let mut loaded = parse(&bytes).map_err(|(line, why)| {
        Error::Input(format!(
            "conversation \"{id}\" ({}): line {line}: {why}",
            path.display()
        ))
    })?;
    loaded.id = id.to_owned();
    Ok(loaded)
}

/// [`load`], or `None` when the owner has no conversation `id` yet.
pub fn load_or_new(dirs: &Dirs, owner: Owner, id: &str, wait: Wait) -> Result<Option<Loaded>> {
    let id = check_id(id)?;
    let exists = match dir(dirs, owner, false)? {
        Some(dir) => dir
            .entry(&file_name(id))
            .map_err(|e| {
                io_error(
                    "failed to read conversation",
                    "stat",
                    dir.join(file_name(id)),
                    e,
                )
            })?
            .is_some(),
        None => false,
    };
    match exists {
        true => load(dirs, owner, id, wait).map(Some),
        false => Ok(None),
    }
}

/// The lines of a conversation file; an error is `(line from 1, why)`.
fn parse(bytes: &[u8]) -> std::result::Result<Loaded, (usize, String)> {
    let mut loaded = Loaded::default();
    for (i, line) in bytes.split(|&b| b == b'\n').enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Line>(line) {
            Ok(Line::RunLog { run_log }) => loaded.run_log.push(run_log),
            Ok(Line::Message(m)) => loaded.messages.push(m),
            Err(e) => return Err((i + 1, e.to_string())),
        }
    }
    // Only the newest messages are sent, from a user message on, so no
    // tool result is sent without its call.
    if loaded.messages.len() > MAX_MESSAGES {
        let from = loaded.messages.len() - MAX_MESSAGES;
        let start = (from..loaded.messages.len())
            .find(|&i| loaded.messages[i].role == Role::User)
            .unwrap_or(loaded.messages.len());
        loaded.messages.drain(..start);
    }
    Ok(loaded)
}

/// Appends one turn to conversation `id` (created when new): `messages`,
/// then the run-log entry's time when the turn wrote one. Text goes
/// through `secrets`; what they took out is returned. A new conversation
/// makes the owner's oldest beyond [`MAX_KEPT`] go.
pub fn append(
    dirs: &Dirs,
    owner: Owner,
    id: &str,
    messages: &[Message],
    run_log: Option<&str>,
    (secrets, wait): (&Secrets, Wait),
) -> Result<Vec<Kind>> {
    let id = check_id(id)?;
    let mut kinds = Vec::new();
    let mut bytes = Vec::new();
    for m in messages {
        let m = redact(m, secrets, &mut kinds);
        serde_json::to_writer(&mut bytes, &Line::Message(m))
            .map_err(io::Error::other)
            .map_err(|e| Error::Input(format!("failed to save conversation \"{id}\": {e}")))?;
        bytes.push(b'\n');
    }
    if let Some(at) = run_log {
        let line = Line::RunLog {
            run_log: at.to_owned(),
        };
        serde_json::to_writer(&mut bytes, &line)
            .map_err(|e| Error::Input(format!("failed to save conversation \"{id}\": {e}")))?;
        bytes.push(b'\n');
    }
    let dir = dir(dirs, owner, true)?
        .ok_or_else(|| Error::Config("the conversations directory could not be created".into()))?;
    let name = file_name(id);
    let path = dir.join(&name);
    let fail = |op, e| io_error("failed to save conversation", op, &path, e);
    let (file, created) =
        create_locked(&dir, &name, Open::Append, wait).map_err(|e| fail("open", e))?;
    let len = file.metadata().map_err(|e| fail("stat", e))?.len();
    if len + bytes.len() as u64 > MAX_BYTES {
        return Err(fail(
            "write",
            io::Error::other(format!(
                "the conversation would pass {MAX_BYTES} bytes: this turn is not kept; start a new one"
            )),
        ));
    }
    write_whole(&dir, &name, &file, &bytes).map_err(|e| fail("write", e))?;
    drop(file);
    if created {
        prune(dirs, owner, MAX_KEPT)?;
    }
    Ok(kinds)
}

/// Removes the owner's conversations beyond the `keep` used last; says
/// how many went.
pub fn prune(dirs: &Dirs, owner: Owner, keep: usize) -> Result<usize> {
    let listed = list(dirs, owner)?;
    let Some(dir) = dir(dirs, owner, false)? else {
        return Ok(0);
    };
    let mut removed = 0;
    for old in listed.iter().skip(keep) {
        let name = file_name(&old.id);
        dir.remove(&name).map_err(|e| {
            io_error(
                "failed to remove conversation",
                "unlink",
                dir.join(&name),
                e,
            )
        })?;
        removed += 1;
    }
    Ok(removed)
}

/// Prints conversation `id` for a person: each message as `role: text`,
/// a tool call as one line `-> name(arguments)`, a result as `<- text`.
/// For `axe log show ID`.
pub fn show(dirs: &Dirs, owner: Owner, id: &str, out: &mut dyn io::Write) -> Result<()> {
    let loaded = load(dirs, owner, id, Wait::default())?;
    print(&loaded.messages, out)
}

/// The last `turns` turns of `messages` (a turn: a user message and what
/// followed it); all of them for 0.
pub fn last_turns(messages: &[Message], turns: usize) -> &[Message] {
    if turns == 0 {
        return messages;
    }
    let starts: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].role == Role::User)
        .collect();
    match starts.len().checked_sub(turns) {
        Some(from) => &messages[starts[from]..],
        None => messages,
    }
}

/// [`show`]'s text of `messages`.
pub fn print(messages: &[Message], out: &mut dyn io::Write) -> Result<()> {
    let mut text = String::new();
    for m in messages {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        // Every text here came from outside (a user, a model, a page a
        // tool read) and is shown on a terminal: escaped, a line at a time.
        if !m.content.is_empty() {
            let lines: Vec<_> = m.content.split('\n').map(escape).collect();
            text.push_str(&format!("{role}: {}\n", lines.join("\n")));
        }
        for c in &m.tool_calls {
            let call = format!("{}({})", c.name, Value::Object(c.arguments.clone()));
            text.push_str(&format!("  -> {}\n", escape(&call)));
        }
        for r in &m.tool_results {
            let first = r.content.lines().next().unwrap_or_default();
            text.push_str(&format!("  <- {}\n", escape(first)));
        }
    }
    out.write_all(text.as_bytes()).map_err(Error::Output)
}

/// `m` with every text in it through `secrets`, noting what went.
fn redact(m: &Message, secrets: &Secrets, kinds: &mut Vec<Kind>) -> Message {
    let mut m = m.clone();
    let mut text = |s: &mut String| {
        let (clean, found) = secrets.redact_str(s);
        if !found.is_empty() {
            *s = clean.into_owned();
            kinds.extend(found);
        }
    };
    text(&mut m.content);
    for c in &mut m.tool_calls {
        for v in c.arguments.values_mut() {
            strings(v, &mut text);
        }
    }
    for r in &mut m.tool_results {
        text(&mut r.content);
    }
    m
}

fn strings(v: &mut Value, f: &mut dyn FnMut(&mut String)) {
    match v {
        Value::String(s) => f(s),
        Value::Array(items) => items.iter_mut().for_each(|v| strings(v, f)),
        Value::Object(map) => map.values_mut().for_each(|v| strings(v, f)),
        _ => {}
    }
}

/// The run log's `entries` without those whose time is in `written`: the
/// entries a conversation's own turns wrote, which it carries already.
/// Entries start with `## ` at the start of a line (a result's own such
/// lines are escaped when written); how many are left is returned too.
pub fn without_entries(entries: &str, written: &[String]) -> (String, u64) {
    let mut kept = String::new();
    let mut count = 0;
    let mut keep = true;
    for line in entries.split_inclusive('\n') {
        if let Some(header) = line.strip_prefix("## ") {
            keep = !written.iter().any(|w| w == header.trim_end());
            if keep {
                count += 1;
            }
        }
        if keep {
            kept.push_str(line);
        }
    }
    (kept, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked() {
        assert!(check_id(&new_id()).is_ok());
        assert!(check_id("release-1.4").is_ok());
        for bad in ["", "../x", "a/b", "-x", ".", "..", ".x", &"a".repeat(65)] {
            assert!(check_id(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn entries_of_the_conversation_are_left_out() {
        let log = "## 1\n**Task:** a\n**Result:** b\n\n## 2\n**Task:** c\n**Result:** d\n\n";
        let (kept, n) = without_entries(log, &["1".to_owned()]);
        assert_eq!(kept, "## 2\n**Task:** c\n**Result:** d\n\n");
        assert_eq!(n, 1);
    }

    fn dirs(root: &std::path::Path) -> Dirs {
        Dirs::given(Some(&root.join("config")), Some(&root.join("data"))).unwrap()
    }

    fn said(text: &str) -> Vec<Message> {
        vec![
            Message::user(text),
            Message {
                role: Role::Assistant,
                content: format!("re: {text}"),
                tool_calls: Vec::new(),
                tool_results: Vec::new(),
            },
        ]
    }

    #[test]
    fn kept_listed_shown_and_pruned() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = dirs(tmp.path());
        let owner = Owner::Agent("a");
        let keep = (&Secrets::off(), Wait::default());
        assert!(last(&dirs, owner).unwrap().is_none());
        for id in ["one", "two", "three"] {
            append(&dirs, owner, id, &said(id), None, keep).unwrap();
            // The file changed last is the one used last.
            let path = dirs
                .data()
                .unwrap()
                .join(format!("conversations/agents/a/{id}.jsonl"));
            let file = std::fs::File::options().append(true).open(&path).unwrap();
            let at = SystemTime::UNIX_EPOCH
                + std::time::Duration::from_secs(match id {
                    "one" => 100,
                    "two" => 300,
                    _ => 200,
                });
            file.set_modified(at).unwrap();
        }
        let ids: Vec<String> = list(&dirs, owner)
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect();
        assert_eq!(ids, ["two", "three", "one"]);
        assert_eq!(last(&dirs, owner).unwrap().as_deref(), Some("two"));
        let mut shown = Vec::new();
        show(&dirs, owner, "one", &mut shown).unwrap();
        assert_eq!(
            String::from_utf8(shown).unwrap(),
            "user: one\nassistant: re: one\n"
        );
        assert_eq!(prune(&dirs, owner, 1).unwrap(), 2);
        let ids: Vec<String> = list(&dirs, owner)
            .unwrap()
            .into_iter()
            .map(|l| l.id)
            .collect();
        assert_eq!(ids, ["two"]);
        // Another owner's are apart.
        assert!(list(&dirs, Owner::Llm).unwrap().is_empty());
    }

    #[test]
    fn a_turn_past_the_bound_is_not_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs = dirs(tmp.path());
        let owner = Owner::Agent("a");
        let keep = (&Secrets::off(), Wait::default());
        append(&dirs, owner, "c", &said("small"), Some("T1"), keep).unwrap();
        let big = "x".repeat(MAX_BYTES as usize);
        let err = append(&dirs, owner, "c", &said(&big), None, keep).unwrap_err();
        assert!(err.to_string().contains("this turn is not kept"), "{err}");
        let loaded = load(&dirs, owner, "c", Wait::default()).unwrap();
        assert_eq!(loaded.messages, said("small"));
        assert_eq!(loaded.run_log, ["T1"]);
    }

    #[test]
    fn the_last_turns_start_at_a_user_message() {
        let mut all = said("one");
        all.extend(said("two"));
        all.extend(said("three"));
        assert_eq!(last_turns(&all, 0).len(), 6);
        assert_eq!(last_turns(&all, 1), &all[4..]);
        assert_eq!(last_turns(&all, 2), &all[2..]);
        assert_eq!(last_turns(&all, 9).len(), 6);
    }

    #[test]
    fn an_unknown_id_names_the_nearest_and_the_ids_kept() {
        let known: Vec<String> = ["20261127-101010-aaaa0001", "b", "c", "d", "e", "f", "g"]
            .map(str::to_owned)
            .to_vec();
        let e = unknown_among("20261127-101010-aaaa0002", "agent \"t\"", &known, "hint");
        assert_eq!(
            e.to_string(),
            "no conversation \"20261127-101010-aaaa0002\" of agent \"t\": did you mean \"20261127-101010-aaaa0001\"? (used last: 20261127-101010-aaaa0001, b, c, d, e and 2 more); hint"
        );
        let e = unknown_among("x", "axe-llm", &[], "");
        assert_eq!(
            e.to_string(),
            "no conversation \"x\" of axe-llm (it has none yet)"
        );
    }

    #[test]
    fn lines_read_back() {
        let text = "{\"role\":\"user\",\"content\":\"hi\"}\n{\"role\":\"assistant\",\"content\":\"yo\"}\n{\"run_log\":\"T\"}\n";
        let l = parse(text.as_bytes()).unwrap();
        assert_eq!(l.messages.len(), 2);
        assert_eq!(l.run_log, ["T"]);
        assert_eq!(parse(b"{\"x\":1}\n").unwrap_err().0, 1);
    }
}
