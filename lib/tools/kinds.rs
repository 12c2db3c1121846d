//! The tools over the run log, the structured state and the one budgeted
//! block, offered where the whole of an agent's memory is served to
//! another agent (`axe-mcp`). Inside `axe-run` these kinds are in the
//! prompt already, so a conversation's [`Memory`] has no [`Served`] and
//! they are not offered there.

use crate::error::ToolError;
use serde_json::{Value, json};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use super::tool::{Memory, Reply, Served, Tool, redacted_schema};
use crate::args::Args;
use axe_memory::block::Block;
use axe_memory::log;
use axe_memory::secrets::Place;
use axe_memory::shared_block::{self, Request};
use axe_memory::state::{self, Current, Outcome};

crate::args! {
    pub struct LogRecent {
        last: Option<u64> = "How many entries, newest last (default: your memory.last_n, else 10; 0: all)",
    }
}

crate::args! {
    pub struct LogAppend {
        task: String = "What you were asked",
        result: String = "What you answered or did",
    }
}

crate::args! {
    pub struct StateContext {
        task: Option<String> = "The task now worked on, shown first",
        phase: Option<String> = "Its phase now: its errors come first",
        budget: Option<u64> = "The most characters (default: your state.context_budget)",
    }
}

crate::args! {
    pub struct StateRecord {
        signals: Option<String> = "Lines starting with AXE_MEMORY:; other lines are ignored",
        task: Option<String> = "The task they are about (default: main)",
        phase: Option<String> = "Its phase now",
        outcome: Option<String> = "success or failure: a run ended, counted as an iteration",
        error: Option<String> = "With failure: what went wrong",
    }
}

crate::args! {
    pub struct WholeContext {
        budget: Option<u64> = "The most characters (default: your context.budget, else 8000)",
        task: Option<String> = "The state's task now",
        phase: Option<String> = "Its phase now",
    }
}

pub const LOG_RECENT: Tool<Memory> = Tool {
    name: "log_recent",
    description: "Read the last entries of your run log: what each run was asked and answered.",
    offered: |m| serves(m, |s| s.cfg.log.enabled),
    schema: LogRecent::schema,
    run: |m, args| log_recent(m, LogRecent::parse(args)?),
    output: || {
        json!({"type": "object", "properties": {"entries": {"type": "array", "items": {"type": "object", "properties": {
            "timestamp": {"type": "string"},
            "task": {"type": "string", "description": "Absent for an entry without a task line"},
            "result": {"type": "string"},
        }, "required": ["timestamp", "result"]}}}, "required": ["entries"]})
    },
    reads: true,
    workdir: false,
};

pub const LOG_APPEND: Tool<Memory> = Tool {
    name: "log_append",
    description: "Add an entry to your run log: the task you were given and your answer.",
    offered: |m| serves(m, |s| s.cfg.log.enabled),
    schema: LogAppend::schema,
    run: |m, args| log_append(m, LogAppend::parse(args)?),
    output: || {
        json!({"type": "object", "properties": {
            "timestamp": {"type": "string"}, "bytes": {"type": "integer"}, "redacted": redacted_schema(),
        }, "required": ["timestamp", "bytes", "redacted"]})
    },
    reads: false,
    workdir: false,
};

pub const STATE_CONTEXT: Tool<Memory> = Tool {
    name: "state_context",
    description: "Read your structured state as a Session Memory block: the current task, its phase and steps, unresolved errors, decisions and key facts.",
    offered: |m| serves(m, |s| s.cfg.state.enabled),
    schema: StateContext::schema,
    run: |m, args| state_context(m, StateContext::parse(args)?),
    output: block_output,
    reads: true,
    workdir: false,
};

pub const STATE_RECORD: Tool<Memory> = Tool {
    name: "state_record",
    description: "Record in your structured state: signal lines (AXE_MEMORY: STEP_DONE ..., KEY_FACT ..., DECISION ..., ERROR ...) and, if a run ended, its outcome.",
    offered: |m| serves(m, |s| s.cfg.state.enabled),
    schema: StateRecord::schema,
    run: |m, args| state_record(m, StateRecord::parse(args)?),
    output: || {
        json!({"type": "object", "properties": {
            "recorded": {"type": "array", "items": {"type": "object", "properties": {
                "kind": {"type": "string", "enum": ["KEY_FACT", "DECISION", "STEP_DONE", "STEP_PENDING", "FILE_MODIFIED", "ERROR"]},
                "text": {"type": "string"},
            }, "required": ["kind", "text"]}},
            "rejected": {"type": "array", "items": {"type": "object", "properties": {
                "line": {"type": "integer"}, "text": {"type": "string"}, "reason": {"type": "string"},
            }, "required": ["line", "text", "reason"]}},
            "iteration": {"type": "integer"},
            "redacted": redacted_schema(),
        }, "required": ["recorded", "rejected", "iteration", "redacted"]})
    },
    reads: false,
    workdir: false,
};

pub const CONTEXT: Tool<Memory> = Tool {
    name: "context",
    description: "Read one block of all your memory within a character budget: the state, MEMORY.md, the run log's last entries, world facts and daily logs, most wanted first.",
    offered: |m| serves(m, |_| true),
    schema: WholeContext::schema,
    run: |m, args| whole_context(m, WholeContext::parse(args)?),
    output: block_output,
    reads: true,
    workdir: false,
};

/// The block a budget was filled with: its text (all a client that shows
/// its model only the structured result can show it), and what it left
/// out.
fn block_output() -> Value {
    json!({"type": "object", "properties": {
        "text": {"type": "string", "description": "The block, as the text content gives it"},
        "budget": {"type": "integer"}, "chars": {"type": "integer"},
        "left_out": {"type": "array", "items": {"type": "string"}},
    }, "required": ["text", "budget", "chars", "left_out"]})
}

/// Whether the memory is served whole and keeps the kind `keeps` asks
/// for.
fn serves(m: &Memory, keeps: fn(&Served) -> bool) -> bool {
    m.served.as_ref().is_some_and(keeps)
}

fn served<'a>(m: &'a Memory, tool: &str) -> Result<&'a Served, ToolError> {
    m.served
        .as_ref()
        .ok_or_else(|| format!("{tool} error: not served here").into())
}

fn log_recent(m: &Memory, args: LogRecent) -> Result<Reply, ToolError> {
    let fail = |e: axe_base::error::Error| ToolError::of("log_recent", e);
    let cfg = &served(m, "log_recent")?.cfg.log;
    let last = args.last.unwrap_or(match cfg.last_n.get() {
        0 => 10,
        n => n,
    });
    let path = log::file_path(&m.dirs, &m.agent, &cfg.path).map_err(fail)?;
    let tail = log::tail(&path, last, m.wait).map_err(fail)?;
    let mut entries = Vec::new();
    let mut text = String::new();
    for record in tail.records() {
        let record = record.map_err(fail)?;
        text.push_str(&format!(
            "## {}\n**Task:** {}\n**Result:** {}\n\n",
            record.timestamp,
            record.task.as_deref().unwrap_or("(none)"),
            record.result.trim_end()
        ));
        let mut entry = json!({"timestamp": record.timestamp, "result": record.result});
        // Absent rather than null: strict clients refuse a schema whose
        // type is a list (["string", "null"]).
        if let Some(task) = &record.task {
            entry["task"] = json!(task);
        }
        entries.push(entry);
    }
    if entries.is_empty() {
        text = "No entries in the run log.".into();
    }
    Ok(Reply {
        text: text.trim_end().to_owned(),
        data: json!({"entries": entries}),
    })
}

fn log_append(m: &Memory, args: LogAppend) -> Result<Reply, ToolError> {
    let fail = |e: axe_base::error::Error| ToolError::of("log_append", e);
    let cfg = &served(m, "log_append")?.cfg.log;
    let path = log::file_path(&m.dirs, &m.agent, &cfg.path).map_err(fail)?;
    let done = log::append(
        &path,
        args.task.as_bytes(),
        args.result.as_bytes(),
        OffsetDateTime::now_utc(),
        &m.secrets,
        m.wait,
    )
    .map_err(fail)?;
    let (said, redacted) = m.took_out(Place::RunLog, &done.redacted);
    Ok(Reply {
        text: format!("Appended the entry of {}.{said}", done.timestamp),
        data: json!({"timestamp": done.timestamp, "bytes": done.bytes, "redacted": redacted}),
    })
}

fn state_context(m: &Memory, args: StateContext) -> Result<Reply, ToolError> {
    let fail = |e: axe_base::error::Error| ToolError::of("state_context", e);
    let cfg = &served(m, "state_context")?.cfg.state;
    let path = state::file_path(&m.dirs, &m.agent, &cfg.path).map_err(fail)?;
    let bytes = state::read(&path, m.wait).map_err(fail)?;
    let view = state::view(&path, &bytes).map_err(fail)?;
    let budget = args.budget.map_or(cfg.context_budget.as_usize(), as_usize);
    let now = Current {
        task: given(&args.task),
        phase: given(&args.phase),
    };
    let built = state::build(&view, now, Block::listing(budget));
    let left_out: Vec<String> = built.left_out.iter().map(|p| p.item.to_string()).collect();
    Ok(Reply {
        data: json!({"text": built.text, "budget": budget, "chars": built.chars(), "left_out": left_out}),
        text: built.text,
    })
}

fn state_record(m: &Memory, args: StateRecord) -> Result<Reply, ToolError> {
    let fail = |e: axe_base::error::Error| ToolError::of("state_record", e);
    let cfg = &served(m, "state_record")?.cfg.state;
    let success = match args.outcome.as_deref().unwrap_or_default() {
        "" => None,
        "success" => Some(true),
        "failure" => Some(false),
        other => {
            return Err(format!(
                "state_record error: outcome is success or failure, not \"{other}\""
            )
            .into());
        }
    };
    let path = state::file_path(&m.dirs, &m.agent, &cfg.path).map_err(fail)?;
    let parsed = state::parse(args.signals.as_deref().unwrap_or_default());
    let task = given(&args.task).unwrap_or(state::DEFAULT_TASK);
    let phase = given(&args.phase);
    let error = given(&args.error);
    let at = OffsetDateTime::now_utc()
        .format(&Rfc3339)
        .unwrap_or_default();
    let saved = state::update(&path, cfg.max_entries.as_usize(), &m.secrets, m.wait, |s| {
        if phase.is_some() {
            s.task(task, phase);
        }
        s.apply(&parsed.signals, task, phase);
        if let Some(success) = success {
            let outcome = Outcome {
                success,
                error,
                at: at.clone(),
                ..Outcome::default()
            };
            s.record(task, phase, &outcome);
        }
    })
    .map_err(fail)?;
    let iteration = saved.state.iteration;
    let mut text = format!("Recorded {} signal(s)", parsed.signals.len());
    if let Some(success) = success {
        let ended = if success { "a success" } else { "a failure" };
        text.push_str(&format!(" and {ended} (iteration {iteration})"));
    }
    text.push('.');
    let (said, redacted) = m.took_out(Place::State, &saved.redacted);
    text.push_str(&said);
    for r in &parsed.rejected {
        text.push_str(&format!(
            "\nNot recorded, line {}: {}: {}",
            r.line, r.reason, r.text
        ));
    }
    Ok(Reply {
        text,
        data: json!({"recorded": parsed.signals, "rejected": parsed.rejected, "iteration": iteration, "redacted": redacted}),
    })
}

fn whole_context(m: &Memory, args: WholeContext) -> Result<Reply, ToolError> {
    let cfg = &served(m, "context")?.cfg;
    let budget = args.budget.map_or_else(
        || cfg.context.budget.map_or(8000, |b| b.as_usize()),
        as_usize,
    );
    let request = Request {
        dirs: &m.dirs,
        wait: m.wait,
        budget,
        now: Current {
            task: given(&args.task).or(Some(state::DEFAULT_TASK)),
            phase: given(&args.phase),
        },
        listing: true,
        log: None,
        today: OffsetDateTime::now_utc().date(),
    };
    let mut broken = Vec::new();
    let built = shared_block::assemble(&m.agent, cfg, &request, &mut |kind, e| {
        broken.push(format!("{}: {e}", kind.name()));
    });
    let mut text = built.text.clone();
    if !broken.is_empty() {
        text.push_str(&format!("\n\n(Could not read: {}.)", broken.join("; ")));
    }
    let left_out: Vec<String> = built.left_out.iter().map(|p| p.item.to_string()).collect();
    Ok(Reply {
        data: json!({"text": text, "budget": budget, "chars": built.chars, "left_out": left_out}),
        text,
    })
}

fn as_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

/// An optional text argument, when it was given and not empty.
fn given(text: &Option<String>) -> Option<&str> {
    text.as_deref().filter(|t| !t.is_empty())
}
