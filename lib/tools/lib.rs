//! Tools a model may call, usable outside a conversation. A tool is a row
//! ([`Tool`]) over a context of its kind: the memory tools ([`MEMORY`])
//! need only whose memory and what this caller has seen ([`Memory`]), so
//! the same rows serve `axe-run`'s conversations (which add their own,
//! `call_agent`, in `run::tools`) and any other caller. A new memory tool
//! is a function here and a row in [`MEMORY`].
//!
//! Whatever goes wrong in a tool is an error result for the model, never
//! an error of the caller. A call whose arguments do not match the schema
//! its tool was offered with is refused in [`call`], for every tool of
//! every table, before it runs.

pub mod builtin;
mod kinds;
pub mod mcp;
mod notes;
mod schema;
mod tool;

pub use tool::{Call, Memory, NotesSeen, Reply, Served, Tool};

use axe_llm::{ToolCall, ToolDef};

/// The memory tools, in the order they are offered.
pub const MEMORY: &[Tool<Memory>] = &[
    notes::RECALL,
    notes::REMEMBER,
    notes::REFLECT,
    notes::LEARN_FACT,
    notes::SEARCH,
    kinds::CONTEXT,
    kinds::STATE_CONTEXT,
    kinds::STATE_RECORD,
    kinds::LOG_RECENT,
    kinds::LOG_APPEND,
];

/// The definitions of the tools of `table` offered in `ctx`.
pub fn offered<C>(table: &[Tool<C>], ctx: &C) -> Vec<ToolDef> {
    table.iter().filter_map(|t| (t.offer)(ctx)).collect()
}

/// The tool of `table` named `name`.
pub fn find<'t, C>(table: &'t [Tool<C>], name: &str) -> Option<&'t Tool<C>> {
    table.iter().find(|t| t.name == name)
}

/// Runs `call` with the tool of `table` it names, when that tool is
/// offered in `ctx`, its arguments checked against the schema it is
/// offered with; `seen` is what the caller had seen when the call was
/// made. `None` when `table` offers no tool of that name.
pub fn call<C>(
    table: &[Tool<C>],
    ctx: &C,
    call: &ToolCall,
    seen: &NotesSeen,
) -> Option<Result<Reply, String>> {
    let tool = find(table, &call.name)?;
    let def = (tool.offer)(ctx)?;
    Some(checked(&def, call, seen, |c| (tool.run)(ctx, c)))
}

/// Runs `call` with `run` once its arguments match the schema of `def`,
/// the tool it was offered as: the one check every tool's call passes.
pub fn checked<T>(
    def: &ToolDef,
    call: &ToolCall,
    seen: &NotesSeen,
    run: impl FnOnce(&Call) -> Result<T, String>,
) -> Result<T, String> {
    schema::check(&def.parameters, &call.arguments)
        .map_err(|problems| format!("{} error: {problems}", def.name))
        .and_then(|()| run(&Call { call, seen }))
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::{Value, json};

    use super::*;
    use axe_memory::notes::Workspace;
    use axe_memory::settings::NotesConfig;

    fn call_of(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.as_object().cloned().unwrap_or_default(),
        }
    }

    /// The memory tools served with no conversation at all: a caller that
    /// holds an agent's memory settings and what it has seen, as a server
    /// for other agents would.
    #[test]
    fn memory_tools_run_outside_a_conversation() {
        let tmp = tempfile::tempdir().unwrap();
        let memory = Memory {
            agent: "a".into(),
            notes_cfg: NotesConfig::default(),
            notes: Some(Workspace::at(tmp.path())),
            seen: Mutex::new(NotesSeen::default()),
            verbose: false,
            secrets: axe_memory::secrets::Secrets::with_keys(Vec::new()),
            redacted: Mutex::default(),
            served: None,
            deadline: None,
        };
        let names: Vec<String> = offered(MEMORY, &memory)
            .into_iter()
            .map(|d| d.name)
            .collect();
        assert_eq!(
            names,
            [
                "recall",
                "remember",
                "reflect",
                "learn_fact",
                "search_notes"
            ]
        );
        let run = |name: &str, args: Value| {
            let now = memory.seen.lock().unwrap().clone();
            call(MEMORY, &memory, &call_of(name, args), &now).expect("a memory tool")
        };
        let done = run("remember", json!({"content": "the build is green"})).unwrap();
        assert!(
            done.data["path"]
                .as_str()
                .unwrap()
                .starts_with("agents/a/daily/")
        );
        // Not seen yet: a reflect is refused and writes nothing.
        assert!(
            run("reflect", json!({"content": "x"})).is_ok(),
            "an empty MEMORY.md may be written"
        );
        let recalled = run("recall", json!({})).unwrap().text;
        assert!(recalled.contains("the build is green"), "{recalled}");
        // Any form of a word; the entry's heading (its time) named.
        let found = run("search_notes", json!({"query": "BUILDS"}))
            .unwrap()
            .text;
        assert!(
            found.starts_with("agents/a/daily/")
                && found.contains(".md:5: [")
                && found.ends_with("] the build is green"),
            "{found}"
        );
        assert_eq!(
            run("search_notes", json!({"query": "*"})).unwrap_err(),
            "search_notes error: the query has no words to search for"
        );
        assert!(
            run("reflect", json!({"content": "kept"})).is_ok(),
            "seen whole by the recall"
        );
        // The schema check is the table's, for every tool.
        let bad = run("reflect", json!({"contents": "x"})).unwrap_err();
        assert!(
            bad.starts_with("reflect error: unknown argument \"contents\""),
            "{bad}"
        );
        // A tool of another table is not this table's to run.
        assert!(
            call(
                MEMORY,
                &memory,
                &call_of("call_agent", json!({})),
                &NotesSeen::default()
            )
            .is_none()
        );
        // Without notes, nothing is offered and nothing runs.
        let none = Memory {
            notes: None,
            ..memory
        };
        assert!(offered(MEMORY, &none).is_empty());
        assert!(
            call(
                MEMORY,
                &none,
                &call_of("recall", json!({})),
                &NotesSeen::default()
            )
            .is_none()
        );
    }
}
