//! Tools a model may call, usable outside a conversation. Every source of
//! tools is a [`ToolSource`] and [`Tools`] is the one place a call goes
//! to its source. A tool of this crate is a row ([`Tool`]) of a table over
//! a context of its kind: the memory tools ([`MEMORY`]) need only whose
//! memory and what this caller has seen ([`Memory`]), so the same rows
//! serve `axe-run`'s conversations (which add their own sources,
//! `call_agent` and MCP servers, in `run::tools`) and `axe-mcp`. A new
//! memory tool is its argument struct ([`args!`]), a function here and a
//! row in [`MEMORY`].
//!
//! Whatever goes wrong in a tool is an error result for the model, never
//! an error of the caller. A call whose arguments do not match the schema
//! its tool was offered with is refused in [`Tools::call`], for every tool
//! of every source, before it runs.

pub mod args;
pub mod builtin;
mod error;
mod kinds;
pub mod mcp;
mod notes;
mod schema;
mod source;
mod tool;

pub use error::ToolError;
pub use source::{Offered, Table, ToolSource, Tools};
pub use tool::{Memory, NotesSeen, Reply, Served, Tool};

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

/// The memory tools over `memory`: a source whose calls of one reply all
/// start from what had been seen when the reply came.
pub type MemoryTools = Table<Memory>;

/// The memory tools offered over `memory`.
pub fn memory_tools(memory: Memory) -> MemoryTools {
    Table::new(MEMORY, memory, Memory::reply_came)
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::{Value, json};

    use super::*;
    use axe_llm::ToolCall;
    use axe_memory::notes::Workspace;
    use axe_memory::settings::NotesConfig;

    fn call_of(name: &str, args: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.as_object().cloned().unwrap_or_default(),
        }
    }

    fn memory(notes: Option<Workspace>) -> Memory {
        Memory {
            agent: "a".into(),
            dirs: axe_base::dirs::Dirs::from_env(),
            notes_cfg: NotesConfig::default(),
            notes,
            seen: Mutex::new(NotesSeen::default()),
            at_reply: Mutex::default(),
            verbose: false,
            report: std::sync::Arc::new(axe_base::report::Stderr),
            secrets: axe_memory::secrets::Secrets::with_keys(Vec::new()),
            redacted: Mutex::default(),
            served: None,
            deadline: None,
            wait: axe_memory::Wait::default(),
            needs_if_match: false,
        }
    }

    /// With `-v`, each notes call is said to the caller's reporter, not
    /// written to stderr: a caller that collects gets the line.
    #[test]
    fn a_verbose_notes_call_is_said_to_the_callers_reporter() {
        let tmp = tempfile::tempdir().unwrap();
        let report = std::sync::Arc::new(axe_base::report::Collected::default());
        let mut m = memory(Some(Workspace::at(tmp.path())));
        m.verbose = true;
        m.report = report.clone();
        let source = memory_tools(m);
        let tools = Tools::new(vec![&source], |_| true);
        tools.reply_came();
        let done = tools
            .call(&call_of("remember", json!({"content": "green"})))
            .expect("a memory tool")
            .unwrap();
        let path = done.data["path"].as_str().unwrap().to_owned();
        assert_eq!(report.lines(), [format!("[notes] a: remember -> {path}")]);
    }

    /// A memory tool that fails on a real I/O error (its daily directory
    /// is a file) tells the model the line it always did, and keeps the
    /// memory's typed error and its io::Error as causes.
    #[test]
    fn a_memory_tools_failure_keeps_its_cause() {
        use std::error::Error as _;
        let tmp = tempfile::tempdir().unwrap();
        let agent = tmp.path().join("agents/a");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::write(agent.join("daily"), "not a directory").unwrap();
        let source = memory_tools(memory(Some(Workspace::at(tmp.path()))));
        let tools = Tools::new(vec![&source], |_| true);
        tools.reply_came();
        let failed = tools
            .call(&call_of("remember", json!({"content": "green"})))
            .expect("a memory tool")
            .unwrap_err();
        let line = failed.to_string();
        assert!(line.starts_with("remember error: open "), "{line}");
        assert!(line.ends_with("daily is not a directory"), "{line}");
        let mut levels = Vec::new();
        let mut at = failed.source();
        while let Some(e) = at {
            levels.push(e);
            at = e.source();
        }
        assert!(
            levels
                .iter()
                .any(|e| e.is::<axe_memory::error::MemoryError>()),
            "{levels:?}"
        );
        let io = levels
            .last()
            .and_then(|e| e.downcast_ref::<std::io::Error>());
        assert!(io.is_some(), "the I/O error is the last cause: {levels:?}");
    }

    /// The memory tools served with no conversation at all: a caller that
    /// holds an agent's memory settings and what it has seen, as a server
    /// for other agents would.
    #[test]
    fn memory_tools_run_outside_a_conversation() {
        let tmp = tempfile::tempdir().unwrap();
        let source = memory_tools(memory(Some(Workspace::at(tmp.path()))));
        let tools = Tools::new(vec![&source], |_| true);
        let names: Vec<&str> = tools.defs().iter().map(|d| d.name.as_str()).collect();
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
        // Each call its own reply, as a server's requests are.
        let run = |name: &str, args: Value| {
            tools.reply_came();
            tools.call(&call_of(name, args)).expect("a memory tool")
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
            run("search_notes", json!({"query": "*"}))
                .unwrap_err()
                .to_string(),
            "search_notes error: the query has no words to search for"
        );
        assert!(
            run("reflect", json!({"content": "kept"})).is_ok(),
            "seen whole by the recall"
        );
        // The schema check is the dispatcher's, for every tool.
        let bad = run("reflect", json!({"contents": "x"}))
            .unwrap_err()
            .to_string();
        assert!(
            bad.starts_with("reflect error: unknown argument \"contents\""),
            "{bad}"
        );
        // A tool of another source is not this one's to run.
        assert!(tools.call(&call_of("call_agent", json!({}))).is_none());
        // Without notes, nothing is offered and nothing runs.
        let none = memory_tools(memory(None));
        let tools = Tools::new(vec![&none], |_| true);
        assert!(tools.defs().is_empty());
        assert!(tools.call(&call_of("recall", json!({}))).is_none());
    }

    /// How many times the counting table's definition was built.
    static BUILT: AtomicUsize = AtomicUsize::new(0);

    args! {
        struct Echo {
            text: String = "What to say",
        }
    }

    const COUNTED: &[Tool<()>] = &[Tool {
        name: "echo",
        description: "Say it back",
        offered: |_| true,
        schema: || {
            BUILT.fetch_add(1, Ordering::SeqCst);
            Echo::schema()
        },
        run: |_, args| Ok(Reply::text(<Echo as args::Args>::parse(args)?.text)),
        output: || json!({}),
        reads: true,
        workdir: false,
    }];

    /// A source's definitions, schemas included, are made once when it is
    /// built, not again on every call (nor on every turn): a call is
    /// checked against the schema made then.
    #[test]
    fn schemas_are_made_once_per_source() {
        let source = Table::new(COUNTED, (), |_| {});
        let tools = Tools::new(vec![&source], |_| true);
        for turn in 0..3 {
            tools.reply_came();
            let said = tools.call(&call_of("echo", json!({"text": turn.to_string()})));
            assert_eq!(said.unwrap().unwrap().text, turn.to_string());
        }
        let bad = tools.call(&call_of("echo", json!({"text": 1}))).unwrap();
        assert_eq!(
            bad.unwrap_err().to_string(),
            "echo error: \"text\" argument must be a string, not a number"
        );
        assert_eq!(tools.defs().len(), 1);
        assert_eq!(BUILT.load(Ordering::SeqCst), 1);
    }

    /// A name is offered once, by the first source that has it; what
    /// `keep` refuses is neither offered nor run.
    #[test]
    fn the_first_source_wins_a_name_and_keep_filters() {
        // Not COUNTED: that one's builds are counted by the test above.
        const FIRST: &[Tool<()>] = &[Tool {
            name: "echo",
            description: "Say it back",
            offered: |_| true,
            schema: Echo::schema,
            run: |_, args| Ok(Reply::text(<Echo as args::Args>::parse(args)?.text)),
            output: || json!({}),
            reads: true,
            workdir: false,
        }];
        const SECOND: &[Tool<()>] = &[Tool {
            name: "echo",
            description: "Another echo",
            offered: |_| true,
            schema: || json!({"type": "object"}),
            run: |_, _| Ok(Reply::text("second".into())),
            output: || json!({}),
            reads: false,
            workdir: false,
        }];
        let (first, second) = (
            Table::new(FIRST, (), |_| {}),
            Table::new(SECOND, (), |_| {}),
        );
        let tools = Tools::new(vec![&first, &second], |_| true);
        assert_eq!(tools.defs().len(), 1);
        assert_eq!(tools.defs()[0].description, "Say it back");
        let said = tools.call(&call_of("echo", json!({"text": "first"})));
        assert_eq!(said.unwrap().unwrap().text, "first");
        let writes = Tools::new(vec![&first, &second], |t| !t.reads);
        assert_eq!(writes.defs()[0].description, "Another echo");
        let said = writes.call(&call_of("echo", json!({})));
        assert_eq!(said.unwrap().unwrap().text, "second");
        let none = Tools::new(vec![&first], |t| !t.reads);
        assert!(none.call(&call_of("echo", json!({"text": "x"}))).is_none());
        assert_eq!(none.crashed("echo"), "the tool crashed");
        assert_eq!(tools.crashed("echo"), "echo error: the tool crashed");
    }

    /// Every tool's schema is its argument struct's: an object whose
    /// required arguments it names, each property typed and described.
    #[test]
    fn every_row_has_a_schema_of_described_typed_properties() {
        let builtin = builtin::BUILTIN.iter().map(|t| (t.name, (t.schema)()));
        for (name, schema) in MEMORY.iter().map(|t| (t.name, (t.schema)())).chain(builtin) {
            assert_eq!(schema["type"], "object", "{name}");
            let properties = schema["properties"].as_object().unwrap();
            for (arg, p) in properties {
                assert!(p["type"].is_string(), "{name}.{arg}");
                assert!(p["description"].is_string(), "{name}.{arg}");
            }
            for r in schema["required"].as_array().unwrap() {
                assert!(properties.contains_key(r.as_str().unwrap()), "{name}");
            }
        }
    }
}
