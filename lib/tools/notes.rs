//! The notes tools: `recall`, `remember`, `reflect`, `learn_fact` and
//! `search_notes`, offered to an agent with `[notes] enabled`, over the
//! same operations as the `axe-notes-*` executables.
//!
//! A `reflect` never overwrites what the model has not seen. What it has
//! "seen" of a file is what a recall result showed it whole: within
//! `recall_chars` and, served to an MCP client, within what every known
//! client shows its model uncut ([`CLIENT_BYTES`], [`CLIENT_LINES`]); or
//! what its own rewrite wrote. It passes the hash of MEMORY.md as the
//! model last saw it, so a rewrite by someone else in between makes it a
//! conflict, and the model is told to recall again. A MEMORY.md it has not
//! seen whole (no recall yet, or one that left it out) it may only write
//! when it is empty. `learn_fact` does the same for a topic; a topic that
//! does not exist may always be created. Every call of one reply carries
//! the hashes as they were when the reply came, so of two rewrites of one
//! file in a reply, one loses.
//!
//! Where the caller cannot stand for one conversation
//! ([`Memory::needs_if_match`]: over HTTP, or a client whose one
//! connection serves many sessions) nothing counts as seen: only the hash
//! the model passes as `if_match`, which it can have only from a recall
//! result (or its own rewrite) shown to it, licenses an overwrite.

use crate::error::ToolError;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::tool::{Memory, NotesSeen, Reply, Tool, redacted_schema};
use crate::args::Args;
use axe_base::error::Error;
use axe_base::lock::Recover;
use axe_memory::hash::sha256_hex;
use axe_memory::notes::{self, Kind, Scope, Workspace};
use axe_memory::secrets::Place;

crate::args! {
    pub struct Recall {
        days: Option<u64> = "Days of daily logs to read, today included (default: your recall_days)",
    }
}

crate::args! {
    pub struct Remember {
        content: String = "What to remember",
    }
}

crate::args! {
    pub struct Reflect {
        content: String = "The whole new MEMORY.md",
        if_match: Option<String> = "MEMORY.md's sha256 as your recall showed it (memory_sha256, or its line after the recall's text). Needed to overwrite a MEMORY.md that has text whenever this server cannot tell which conversation calls (over HTTP, or when its instructions say so); never pass a hash you were not shown",
    }
}

crate::args! {
    pub struct LearnFact {
        topic: String = "The topic, e.g. people or deploys",
        content: String = "The whole text of the topic",
        if_match: Option<String> = "The topic's sha256 as your recall showed it. Needed to overwrite an existing topic whenever this server cannot tell which conversation calls (over HTTP, or when its instructions say so)",
    }
}

crate::args! {
    pub struct Search {
        query: String = "The words to look for, e.g. rollback canary, deploy*, \"blue green\"",
        limit: Option<u64> [min 1] = "How many results (default 10)",
    }
}

pub const RECALL: Tool<Memory> = Tool {
    name: "recall",
    description: "Read your notes: the shared world facts, your MEMORY.md and your daily logs of the last days. Call it before you start.",
    offered: has_notes,
    schema: Recall::schema,
    run: |ctx, args| recall(ctx, Recall::parse(args)?),
    output: recall_output,
    reads: true,
    workdir: false,
};

pub const REMEMBER: Tool<Memory> = Tool {
    name: "remember",
    description: "Append an entry to today's daily log: what happened or what you found that is worth keeping.",
    offered: has_notes,
    schema: Remember::schema,
    run: |ctx, args| remember(ctx, Remember::parse(args)?),
    output: remember_output,
    reads: false,
    workdir: false,
};

pub const REFLECT: Tool<Memory> = Tool {
    name: "reflect",
    description: "Rewrite your MEMORY.md, your curated long-term memory. It replaces the whole file: recall first, keep what still holds, and pass the sha256 the recall showed for MEMORY.md as if_match. Without that hash it overwrites only a MEMORY.md shown to you whole on this connection (never over HTTP).",
    offered: has_notes,
    schema: Reflect::schema,
    run: |ctx, args| reflect(ctx, Reflect::parse(args)?),
    output: rewrite_output,
    reads: false,
    workdir: false,
};

pub const LEARN_FACT: Tool<Memory> = Tool {
    name: "learn_fact",
    description: "Write a fact about the world under a topic, shared with every agent of the workspace. It replaces the topic's text: to change an existing topic, recall first and pass the sha256 the recall showed for it as if_match. A new topic needs none.",
    offered: has_notes,
    schema: LearnFact::schema,
    run: |ctx, args| learn_fact(ctx, LearnFact::parse(args)?),
    output: rewrite_output,
    reads: false,
    workdir: false,
};

pub const SEARCH: Tool<Memory> = Tool {
    name: "search_notes",
    description: "Search all your notes, older ones included; the best matches first, each as path:line: [heading] snippet. Words match in any case, accent or English form (deploy finds deploys, deployed); end a word with * to find every word that begins so (deploy*); put words in double quotes to find them one after the other (\"blue green\").",
    offered: has_notes,
    schema: Search::schema,
    run: |ctx, args| search(ctx, Search::parse(args)?),
    output: search_output,
    reads: true,
    workdir: false,
};

/// The notes tools are offered when the agent has notes.
fn has_notes(ctx: &Memory) -> bool {
    ctx.notes.is_some()
}

/// The workspace of the agent, which offered the tool only if it has one.
fn workspace(ctx: &Memory) -> Result<&Workspace, ToolError> {
    ctx.notes
        .as_ref()
        .ok_or_else(|| "notes are not enabled for this agent".into())
}

/// One `-v` line per call, as the agent's.
fn trace(ctx: &Memory, what: std::fmt::Arguments) {
    if ctx.verbose {
        ctx.report
            .note(format_args!("[notes] {}: {what}", ctx.agent));
    }
}

/// Records what a recall showed whole as all the model has seen: a file it
/// left out or could not read is not seen, whatever was seen before.
fn saw(ctx: &Memory, r: &notes::Recalled) {
    let mut seen = ctx.seen.lock().recover();
    seen.memory = r.memory_seen().map(str::to_owned);
    seen.world = r
        .items
        .iter()
        .filter(|i| i.kind == Kind::World)
        .map(|i| (i.title.clone(), i.sha256.clone()))
        .collect();
    seen.recalled = true;
    let stem = |p: &std::path::Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    seen.unseen_world = r
        .left_out
        .iter()
        .filter(|l| l.kind == Kind::World)
        .map(|l| stem(&l.path))
        .chain(r.unreadable.iter().map(|u| stem(&u.path)))
        .collect();
}

/// The most of a tool result, in UTF-8 bytes and in lines, that every
/// known MCP client shows its model whole; a served recall keeps its text
/// and its structured content within both, so that no file it names as
/// shown (with the hash that licenses its rewrite) was cut by the client.
/// Gemini CLI cuts a result over 40,000 characters (UTF-16 units, never
/// more than UTF-8 bytes) to its first 8,000 and last 32,000; opencode
/// keeps the first 2,000 lines or 50 KiB; Claude Code warns past 25,000
/// tokens.
pub const CLIENT_BYTES: usize = 40_000;
/// See [`CLIENT_BYTES`].
pub const CLIENT_LINES: usize = 2_000;

fn recall(ctx: &Memory, args: Recall) -> Result<Reply, ToolError> {
    let ws = workspace(ctx)?;
    let cfg = &ctx.notes_cfg;
    let days = args.days.unwrap_or(cfg.recall_days.get());
    let today = OffsetDateTime::now_utc().date();
    let mut budget = cfg.recall_chars.as_usize();
    if ctx.served.is_some() {
        budget = budget.min(CLIENT_BYTES);
    }
    // A served recall is made again within a smaller budget until what
    // the client is sent fits every client's limit: the budget counts
    // characters, the limit bytes and lines, and the structured content
    // adds its keys and escapes. A few rounds: each cuts by what was over.
    let (mut rounds, mut reads) = (0, notes::Reads::default());
    let (r, reply) = loop {
        let recalled = match ctx.served {
            Some(_) => notes::recall_hashed(ws, &ctx.agent, days, today, budget, &mut reads),
            None => notes::recall(ws, &ctx.agent, days, today, budget),
        };
        let r = recalled.map_err(|e| ToolError::of("recall", e))?;
        let reply = recall_reply(ws, &r, days);
        rounds += 1;
        let over = match ctx.served {
            Some(_) => over_limit(&reply, budget),
            None => None,
        };
        match over {
            Some(smaller) if budget > 0 && rounds < 16 => budget = smaller.min(budget - 1),
            _ => break (r, reply),
        }
    };
    saw(ctx, &r);
    trace(
        ctx,
        format_args!("recall {days} days, {} characters", r.chars()),
    );
    Ok(reply)
}

/// A smaller budget than `budget` when `reply`, as text or as JSON, is
/// past what a client shows whole; `None` when it fits.
fn over_limit(reply: &Reply, budget: usize) -> Option<usize> {
    // JSON's text holds no line break (its strings' are escaped): only
    // its length counts, so it is counted, not made.
    let mut json = Counted(0);
    let _ = serde_json::to_writer(&mut json, &reply.data);
    let text = &reply.text;
    let mut want = None::<usize>;
    for (bytes, lines) in [(text.len(), text.split('\n').count()), (json.0, 1)] {
        if bytes > CLIENT_BYTES {
            // A character is at least a byte: the excess in bytes cut from
            // the budget in characters cuts at least that much text.
            let cut = budget.saturating_sub(bytes - CLIENT_BYTES);
            want = Some(want.map_or(cut, |w| w.min(cut)));
        }
        if lines > CLIENT_LINES {
            let cut = budget.saturating_mul(CLIENT_LINES) / lines;
            want = Some(want.map_or(cut, |w| w.min(cut)));
        }
    }
    want
}

/// A writer that counts what it is given.
struct Counted(usize);

impl std::io::Write for Counted {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What a recall answers: its text (with the hash paragraph when served)
/// and the same as data.
fn recall_reply(ws: &Workspace, r: &notes::Recalled, days: u64) -> Reply {
    let files: Vec<Value> = r
        .items
        .iter()
        .map(|i| {
            json!({
                "kind": i.kind,
                "path": ws.relative(&i.path),
                "sha256": i.sha256,
                "chars": i.chars,
                "text": String::from_utf8_lossy(&i.text),
            })
        })
        .collect();
    let left_out: Vec<Value> = r
        .left_out
        .iter()
        .map(|l| json!({"kind": l.kind, "path": ws.relative(&l.path), "bytes": l.bytes}))
        .collect();
    let mut data = json!({"days": days, "files": files, "left_out": left_out});
    // The hash only of a MEMORY.md shown whole: for a client without a
    // session it is the licence to overwrite (`if_match`), so one read
    // but left out to keep within the budget gets none.
    if let Some(sha) = r.memory_seen() {
        data["memory_sha256"] = json!(sha);
    }
    if let Some(said) = notes::remarks(ws, r) {
        data["note"] = json!(said);
    }
    // A client of `axe-mcp` may keep no session and must find the hashes
    // for `if_match` in the text too, as it finds them in the data: the
    // hashed recall ends with them, within its budget.
    let text = String::from_utf8_lossy(&notes::answer(ws, r)).into_owned();
    Reply { text, data }
}

fn recall_output() -> Value {
    let file = json!({"type": "object", "properties": {
        "kind": {"type": "string", "enum": ["world", "memory", "daily"]},
        "path": {"type": "string", "description": "Relative to the notes workspace"},
        "sha256": {"type": "string", "description": "The file's sha256, for reflect's or learn_fact's if_match"},
        "chars": {"type": "integer"},
        "text": {"type": "string", "description": "The file's whole text, trailing white space trimmed"},
    }, "required": ["kind", "path", "sha256", "chars", "text"]});
    json!({
        "type": "object",
        "properties": {
            "days": {"type": "integer"},
            "files": {"type": "array", "description": "Every file shown, whole: world topics, MEMORY.md, daily logs newest first", "items": file},
            "memory_sha256": {"type": "string", "description": "MEMORY.md's sha256 when it was shown whole (or is empty), for reflect's if_match; absent when the budget left it out or it could not be read"},
            "note": {"type": "string", "description": "What the recall says besides the files: conflict files a sync left, what was left out to keep within the budget, what could not be read; absent when nothing"},
            "left_out": {"type": "array", "items": {"type": "object", "properties": {
                "kind": {"type": "string", "enum": ["world", "memory", "daily"]},
                "path": {"type": "string"},
                "bytes": {"type": "integer"},
            }, "required": ["kind", "path", "bytes"]}},
        },
        "required": ["days", "files", "left_out"],
    })
}

fn remember(ctx: &Memory, args: Remember) -> Result<Reply, ToolError> {
    let ws = workspace(ctx)?;
    let cap = ctx.notes_cfg.max_memory_chars.as_usize();
    let done = notes::remember(
        ws,
        &ctx.agent,
        args.content.as_bytes(),
        OffsetDateTime::now_utc(),
        cap,
        &ctx.secrets,
        ctx.wait,
    )
    .map_err(|e| ToolError::of("remember", e))?;
    let shown = ws.relative(&done.path);
    trace(ctx, format_args!("remember -> {shown}"));
    let (said, redacted) = ctx.took_out(Place::DailyLog, &done.redacted);
    Ok(Reply {
        text: format!("Remembered in {shown}.{said}"),
        data: json!({"path": shown, "redacted": redacted}),
    })
}

fn remember_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "The daily log written, relative to the workspace"},
            "redacted": redacted_schema(),
        },
        "required": ["path", "redacted"],
    })
}

fn rewrite_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "sha256": {"type": "string", "description": "The new content's sha256: the next if_match"},
            "chars": {"type": "integer"},
            "redacted": redacted_schema(),
        },
        "required": ["path", "sha256", "chars", "redacted"],
    })
}

/// The hash a rewrite expects the file to have: the caller's `if_match`
/// (a client without a session), else what this caller saw whole, else
/// the empty file's (a file never seen may only be written when empty).
fn expected(if_match: Option<&str>, seen: Option<&str>) -> String {
    match if_match.unwrap_or_default().trim() {
        "" => seen.map_or_else(|| sha256_hex(b""), str::to_owned),
        given => given.to_owned(),
    }
}

/// Whether the caller gave an `if_match` (a client without a session).
fn given(if_match: Option<&str>) -> bool {
    !if_match.unwrap_or_default().trim().is_empty()
}

/// The content of a rewrite: refused when there is nothing in it, since a
/// whole file replaced by nothing is far more often a slip than a wish.
fn content<'a>(content: &'a str, tool: &str, what: &str) -> Result<&'a str, ToolError> {
    if content.trim().is_empty() {
        return Err(format!(
            "{tool} error: the content is empty, so nothing was written: send the whole new {what}"
        )
        .into());
    }
    Ok(content)
}

/// `content` over the file at `path`, which must still hash to
/// `expected`, within `cap`, through the agent's secrets.
fn write_over(
    ctx: &Memory,
    ws: &Workspace,
    path: &Path,
    content: &str,
    expected: &str,
    cap: (usize, &str),
) -> axe_base::error::Result<notes::Rewritten> {
    let bytes = content.as_bytes();
    notes::rewrite(ws, path, bytes, Some(expected), cap, &ctx.secrets, ctx.wait)
}

fn reflect(ctx: &Memory, args: Reflect) -> Result<Reply, ToolError> {
    let ws = workspace(ctx)?;
    let content = content(&args.content, "reflect", "MEMORY.md")?;
    let path = ws.memory(&ctx.agent);
    // Not seen whole: only a MEMORY.md with nothing in it may be written.
    let if_match = args.if_match.as_deref();
    let given = given(if_match);
    let at_reply = seen_at_reply(ctx);
    let seen = at_reply.memory.as_deref();
    let expected = expected(if_match, seen);
    let cap = (
        ctx.notes_cfg.max_memory_chars.as_usize(),
        "max_memory_chars",
    );
    match write_over(ctx, ws, &path, content, &expected, cap) {
        Ok(done) => {
            ctx.seen.lock().recover().memory = Some(done.sha256.clone());
            trace(
                ctx,
                format_args!("reflect -> MEMORY.md, {} characters", done.chars),
            );
            let (said, redacted) = ctx.took_out(Place::MemoryFile, &done.redacted);
            Ok(Reply {
                text: format!(
                    "MEMORY.md rewritten ({} characters).{said}{}",
                    done.chars,
                    next_if_match(ctx, &done.sha256)
                ),
                data: json!({"path": ws.relative(&path), "sha256": done.sha256, "chars": done.chars, "redacted": redacted}),
            })
        }
        Err(e) if matches!(e.as_reported(), Error::Conflict(_)) => {
            trace(
                ctx,
                format_args!("reflect refused: MEMORY.md changed since the last recall"),
            );
            // The conflict rides beneath the text, so a caller (a
            // consolidation) tells it from a refusal that only says so.
            Err(match (seen, given) {
                (Some(_), _) | (None, true) => ToolError::caused(
                    format!(
                        "reflect error: MEMORY.md has changed since you last read it, so it was not overwritten. Call recall, merge what is there with what you want to keep, then call reflect again{}.",
                        again(ctx, "MEMORY.md")
                    ),
                    e,
                ),
                (None, false) if ctx.needs_if_match => {
                    ToolError::caused(no_if_match("reflect", &ws.relative(&path), "MEMORY.md"), e)
                }
                (None, false) => not_seen("reflect", "MEMORY.md").into(),
            })
        }
        Err(e) => Err(ToolError::of("reflect", e)),
    }
}

/// What had been seen when the reply came; nothing where the caller
/// cannot stand for one conversation, which passes `if_match` instead.
fn seen_at_reply(ctx: &Memory) -> NotesSeen {
    match ctx.needs_if_match {
        true => NotesSeen::default(),
        false => ctx.seen_at_reply(),
    }
}

/// After a rewrite where `if_match` is needed: the hash to pass next, in
/// the text too, for a client that shows its model only the text.
fn next_if_match(ctx: &Memory, sha256: &str) -> String {
    match ctx.needs_if_match {
        true => format!(" Its sha256 is now {sha256}: pass it as if_match to rewrite it again."),
        false => String::new(),
    }
}

/// How a refused rewrite is tried again: with the new hash where
/// `if_match` is needed.
fn again(ctx: &Memory, what: &str) -> String {
    match ctx.needs_if_match {
        true => format!(", passing the sha256 the new recall shows for {what} as if_match"),
        false => String::new(),
    }
}

/// The refusal of an overwrite without `if_match` where it is needed: the
/// server cannot tell which conversation calls, so it says exactly what
/// to pass, never the hash itself.
fn no_if_match(tool: &str, path: &str, what: &str) -> String {
    format!(
        "{tool} error: {what} already has text, and this server cannot tell what you were shown (a connection here may serve many conversations), so it was not overwritten. Pass as if_match the sha256 your recall showed for {path} (in its data, and on the line \"{path} <sha256>\" after its text); if no recall in this conversation showed {what} whole, call recall first and keep what still holds."
    )
}

/// The refusal of a rewrite of a file the model has not seen whole.
fn not_seen(tool: &str, what: &str) -> String {
    format!(
        "{tool} error: {what} was not shown to you whole in this conversation, so it was not overwritten. Call recall first; if recall leaves {what} out to keep within recall_chars, it cannot be rewritten here."
    )
}

fn learn_fact(ctx: &Memory, args: LearnFact) -> Result<Reply, ToolError> {
    let ws = workspace(ctx)?;
    let topic =
        notes::topic_name(&args.topic, &ctx.secrets).map_err(|e| ToolError::of("learn_fact", e))?;
    let content = content(&args.content, "learn_fact", "text of the topic")?;
    let path = ws.topic(&topic);
    let at_reply: NotesSeen = seen_at_reply(ctx);
    let seen = at_reply
        .world
        .iter()
        .find(|(t, _)| *t == topic)
        .map(|(_, sha)| sha.as_str());
    let if_match = args.if_match.as_deref();
    let given = given(if_match);
    let expected = expected(if_match, seen);
    let cap = (ctx.notes_cfg.max_topic_chars.as_usize(), "max_topic_chars");
    match write_over(ctx, ws, &path, content, &expected, cap) {
        Ok(done) => {
            let mut seen = ctx.seen.lock().recover();
            seen.world.retain(|(t, _)| *t != topic);
            seen.world.push((topic.clone(), done.sha256.clone()));
            drop(seen);
            trace(
                ctx,
                format_args!("learn_fact -> world/{topic}.md, {} characters", done.chars),
            );
            let (said, redacted) = ctx.took_out(Place::Topic, &done.redacted);
            Ok(Reply {
                text: format!(
                    "Learned world/{topic}.md ({} characters).{said}{}",
                    done.chars,
                    next_if_match(ctx, &done.sha256)
                ),
                data: json!({"path": format!("world/{topic}.md"), "sha256": done.sha256, "chars": done.chars, "redacted": redacted}),
            })
        }
        Err(e) if matches!(e.as_reported(), Error::Conflict(_)) => Err(match (seen, given) {
            (Some(_), _) | (None, true) => ToolError::caused(
                format!(
                    "learn_fact error: world/{topic}.md has changed since you last read it, so it was not overwritten. Call recall, merge, then call learn_fact again{}.",
                    again(ctx, &format!("world/{topic}.md"))
                ),
                e,
            ),
            (None, false) if ctx.needs_if_match => ToolError::caused(
                no_if_match(
                    "learn_fact",
                    &format!("world/{topic}.md"),
                    &format!("world/{topic}.md"),
                ),
                e,
            ),
            // Recalled when it did not exist: someone made it since.
            (None, false) if at_reply.recalled && !at_reply.unseen_world.contains(&topic) => {
                ToolError::caused(
                    format!(
                        "learn_fact error: world/{topic}.md has changed since you last read it (someone made it after your recall), so it was not overwritten. Call recall, merge, then call learn_fact again."
                    ),
                    e,
                )
            }
            (None, false) => not_seen("learn_fact", &format!("world/{topic}.md")).into(),
        }),
        Err(e) => Err(ToolError::of("learn_fact", e)),
    }
}

/// How long one search may take when its caller has no deadline of its
/// own (`axe-mcp`): the server answers one request at a time, so one
/// client's search must not hold the others' for long.
pub const SEARCH_LIMIT: Duration = Duration::from_secs(10);

fn search(ctx: &Memory, args: Search) -> Result<Reply, ToolError> {
    let ws = workspace(ctx)?;
    let query = args.query.as_str();
    let want = args
        .limit
        .map_or(10, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let until = ctx
        .deadline
        .unwrap_or_else(|| Instant::now() + SEARCH_LIMIT);
    let searched = axe_search::search(ws, Scope::Agent(&ctx.agent), query, want, Some(until))
        .map_err(|e| ToolError::of("search_notes", e))?;
    let found = &searched.found;
    trace(
        ctx,
        format_args!("search_notes \"{query}\": {} results", found.len()),
    );
    let mut text = match found.is_empty() {
        true => "No notes match.".to_owned(),
        false => found
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    let results: Vec<Value> = found
        .iter()
        .map(|f| {
            let mut one =
                json!({"path": f.path, "line": f.line, "snippet": f.snippet, "score": f.score});
            // Absent rather than null: strict clients refuse a schema
            // whose type is a list (["string", "null"]).
            if let Some(heading) = &f.heading {
                one["heading"] = json!(heading);
            }
            one
        })
        .collect();
    // What else the text says (files it could not read, where it
    // stopped), in the data as `note` too: some clients show their model
    // only the one.
    let mut remarks = Vec::new();
    if let Some(note) = notes::unreadable_note(ws, &searched.unreadable) {
        remarks.push(note);
    }
    let mut data = json!({"results": results});
    if searched.unsearched > 0 {
        let limit = match ctx.deadline {
            Some(_) => "at the run's deadline".to_owned(),
            None => format!("after its limit of {} s", SEARCH_LIMIT.as_secs()),
        };
        remarks.push(format!(
            "(The search stopped {limit}: {} not searched.)",
            match searched.unsearched {
                1 => "1 file".to_owned(),
                n => format!("{n} files"),
            }
        ));
        data["unsearched"] = json!(searched.unsearched);
    }
    if !remarks.is_empty() {
        let note = remarks.join("\n\n");
        text.push_str("\n\n");
        text.push_str(&note);
        data["note"] = json!(note);
    }
    Ok(Reply { text, data })
}

fn search_output() -> Value {
    json!({
        "type": "object",
        "properties": {
            "results": {"type": "array", "items": {"type": "object", "properties": {
                "path": {"type": "string"},
                "line": {"type": "integer"},
                "heading": {"type": "string", "description": "The section's heading; absent for text before a file's first heading"},
                "snippet": {"type": "string"},
                "score": {"type": "number"},
            }, "required": ["path", "line", "snippet", "score"]}},
            "unsearched": {"type": "integer", "description": "Files not searched: the search stopped at its deadline; absent when every file was"},
            "note": {"type": "string", "description": "What could not be read, and where the search stopped; absent when there is nothing to say"},
        },
        "required": ["results"],
    })
}
