//! The notes tools: `recall`, `remember`, `reflect`, `learn_fact` and
//! `search_notes`, offered to an agent with `[notes] enabled`, over the
//! same operations as the `axe-notes-*` executables.
//!
//! A `reflect` never overwrites what the model has not seen: it passes the
//! hash of MEMORY.md from the model's last `recall` in this conversation,
//! so a rewrite by someone else in between makes it a conflict, and the
//! model is told to recall again. Without a recall, it may only write a
//! MEMORY.md that is empty. `learn_fact` does the same for a topic it
//! recalled.

use serde_json::{Value, json};
use time::OffsetDateTime;

use super::tool::{Context, Tool, arg};
use crate::error::Error;
use crate::llm::{ToolCall, ToolDef};
use crate::memory::hash::sha256_hex;
use crate::memory::notes::{self, Kind, Scope, Workspace};
use crate::stderr::note;

pub const RECALL: Tool = Tool {
    name: "recall",
    offer: |ctx| {
        offered(
            ctx,
            "recall",
            "Read your notes: the shared world facts, your MEMORY.md and your daily logs of the last days. Call it before you start.",
            json!({"days": {"type": "integer", "description": "Days of daily logs to read, today included (default: your recall_days)"}}),
            &[],
        )
    },
    run: recall,
    crashed: "recall error: the tool crashed",
};

pub const REMEMBER: Tool = Tool {
    name: "remember",
    offer: |ctx| {
        offered(
            ctx,
            "remember",
            "Append an entry to today's daily log: what happened or what you found that is worth keeping.",
            json!({"content": {"type": "string", "description": "What to remember"}}),
            &["content"],
        )
    },
    run: remember,
    crashed: "remember error: the tool crashed",
};

pub const REFLECT: Tool = Tool {
    name: "reflect",
    offer: |ctx| {
        offered(
            ctx,
            "reflect",
            "Rewrite your MEMORY.md, your curated long-term memory. It replaces the whole file: recall first and keep what still holds.",
            json!({"content": {"type": "string", "description": "The whole new MEMORY.md"}}),
            &["content"],
        )
    },
    run: reflect,
    crashed: "reflect error: the tool crashed",
};

pub const LEARN_FACT: Tool = Tool {
    name: "learn_fact",
    offer: |ctx| {
        offered(
            ctx,
            "learn_fact",
            "Write a fact about the world under a topic, shared with every agent of the workspace. It replaces the topic's text.",
            json!({
                "topic": {"type": "string", "description": "The topic, e.g. people or deploys"},
                "content": {"type": "string", "description": "The whole text of the topic"},
            }),
            &["topic", "content"],
        )
    },
    run: learn_fact,
    crashed: "learn_fact error: the tool crashed",
};

pub const SEARCH: Tool = Tool {
    name: "search_notes",
    offer: |ctx| {
        offered(
            ctx,
            "search_notes",
            "Search all your notes, older ones included, for words; the best matching lines first.",
            json!({
                "query": {"type": "string", "description": "The words to look for"},
                "limit": {"type": "integer", "description": "How many results (default 10)"},
            }),
            &["query"],
        )
    },
    run: search,
    crashed: "search_notes error: the tool crashed",
};

/// The definition of a notes tool, when the agent has notes.
fn offered(
    ctx: &Context,
    name: &str,
    description: &str,
    properties: Value,
    required: &[&str],
) -> Option<ToolDef> {
    ctx.agent.notes.as_ref()?;
    Some(ToolDef {
        name: name.to_owned(),
        description: description.to_owned(),
        parameters: json!({"type": "object", "properties": properties, "required": required}),
    })
}

/// The workspace of the agent, which offered the tool only if it has one.
fn workspace<'a>(ctx: &'a Context) -> Result<&'a Workspace, String> {
    ctx.agent
        .notes
        .as_ref()
        .ok_or_else(|| "notes are not enabled for this agent".to_owned())
}

/// One `-v` line per call, as the agent's.
fn trace(ctx: &Context, what: std::fmt::Arguments) {
    if ctx.session.verbose {
        note(format_args!("[notes] {}: {what}", ctx.agent.name));
    }
}

/// An integer argument, if given as one.
fn number(call: &ToolCall, key: &str) -> Option<u64> {
    match call.arguments.get(key) {
        Some(Value::Number(n)) => n.as_u64(),
        Some(Value::String(s)) => s.trim().parse().ok(),
        _ => None,
    }
}

fn recall(ctx: &Context, call: &ToolCall) -> Result<String, String> {
    let ws = workspace(ctx)?;
    let cfg = &ctx.agent.cfg.notes;
    let days = number(call, "days").unwrap_or(cfg.recall_days.get());
    let today = OffsetDateTime::now_utc().date();
    let r = notes::recall(
        ws,
        &ctx.agent.name,
        days,
        today,
        cfg.recall_chars.as_usize(),
    )
    .map_err(|e| format!("recall error: {e}"))?;
    {
        let mut seen = ctx.notes_seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.memory = Some(r.memory_sha256.clone());
        for item in r.items.iter().filter(|i| i.kind == Kind::World) {
            seen.world.retain(|(t, _)| *t != item.title);
            seen.world.push((item.title.clone(), item.sha256.clone()));
        }
    }
    let mut text = String::from_utf8_lossy(&notes::render(&r)).into_owned();
    if let Some(left) = notes::left_out_note(ws, &r) {
        text.push_str("\n\n");
        text.push_str(&left);
    }
    trace(
        ctx,
        format_args!("recall {days} days, {} characters", r.chars()),
    );
    Ok(text)
}

fn remember(ctx: &Context, call: &ToolCall) -> Result<String, String> {
    let ws = workspace(ctx)?;
    let content = arg(call, "content");
    let cap = ctx.agent.cfg.notes.max_memory_chars.as_usize();
    let path = notes::remember(
        ws,
        &ctx.agent.name,
        content.as_bytes(),
        OffsetDateTime::now_utc(),
        cap,
    )
    .map_err(|e| format!("remember error: {e}"))?;
    let shown = ws.relative(&path);
    trace(ctx, format_args!("remember -> {shown}"));
    Ok(format!("Remembered in {shown}."))
}

fn reflect(ctx: &Context, call: &ToolCall) -> Result<String, String> {
    let ws = workspace(ctx)?;
    let agent = &ctx.agent.name;
    let path = ws.memory(agent);
    let seen = ctx
        .notes_seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .memory
        .clone();
    // Without a recall, only a MEMORY.md with nothing in it may be written.
    let expected = seen.unwrap_or_else(|| sha256_hex(b""));
    let cap = (
        ctx.agent.cfg.notes.max_memory_chars.as_usize(),
        "max_memory_chars",
    );
    let content = arg(call, "content");
    match notes::rewrite(ws, &path, content.as_bytes(), Some(&expected), cap) {
        Ok(done) => {
            ctx.notes_seen
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .memory = Some(done.sha256);
            trace(
                ctx,
                format_args!("reflect -> MEMORY.md, {} characters", done.chars),
            );
            Ok(format!("MEMORY.md rewritten ({} characters).", done.chars))
        }
        Err(Error::Conflict(_)) => {
            trace(
                ctx,
                format_args!("reflect refused: MEMORY.md changed since the last recall"),
            );
            Err("reflect error: MEMORY.md has changed since you last read it (or you have not read it in this conversation), so it was not overwritten. Call recall, merge what is there with what you want to keep, then call reflect again.".into())
        }
        Err(e) => Err(format!("reflect error: {e}")),
    }
}

fn learn_fact(ctx: &Context, call: &ToolCall) -> Result<String, String> {
    let ws = workspace(ctx)?;
    let topic =
        notes::topic_name(&arg(call, "topic")).map_err(|e| format!("learn_fact error: {e}"))?;
    let path = ws.topic(&topic);
    let expected = ctx
        .notes_seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .world
        .iter()
        .find(|(t, _)| *t == topic)
        .map(|(_, sha)| sha.clone());
    let cap = (
        ctx.agent.cfg.notes.max_topic_chars.as_usize(),
        "max_topic_chars",
    );
    let content = arg(call, "content");
    match notes::rewrite(ws, &path, content.as_bytes(), expected.as_deref(), cap) {
        Ok(done) => {
            let mut seen = ctx.notes_seen.lock().unwrap_or_else(|e| e.into_inner());
            seen.world.retain(|(t, _)| *t != topic);
            seen.world.push((topic.clone(), done.sha256));
            trace(
                ctx,
                format_args!("learn_fact -> world/{topic}.md, {} characters", done.chars),
            );
            Ok(format!(
                "Learned world/{topic}.md ({} characters).",
                done.chars
            ))
        }
        Err(Error::Conflict(_)) => Err(format!(
            "learn_fact error: world/{topic}.md has changed since you last read it, so it was not overwritten. Call recall, merge, then call learn_fact again."
        )),
        Err(e) => Err(format!("learn_fact error: {e}")),
    }
}

fn search(ctx: &Context, call: &ToolCall) -> Result<String, String> {
    let ws = workspace(ctx)?;
    let query = arg(call, "query");
    let want = number(call, "limit").map_or(10, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let found = notes::search(ws, Scope::Agent(&ctx.agent.name), &query, want)
        .map_err(|e| format!("search_notes error: {e}"))?;
    trace(
        ctx,
        format_args!("search_notes \"{query}\": {} results", found.len()),
    );
    if found.is_empty() {
        return Ok("No notes match.".into());
    }
    Ok(found
        .iter()
        .map(|f| format!("{}:{}: {}", f.path, f.line, f.text))
        .collect::<Vec<_>>()
        .join("\n"))
}
