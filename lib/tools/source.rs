//! One way tools are offered: every source of tools (the memory tools,
//! the built-in ones, `call_agent`, an agent's MCP servers) is a
//! [`ToolSource`], built once per conversation (or per `axe-mcp` server)
//! with the definitions it offers worked out then, and [`Tools`] is the
//! one place a call goes to its source, its arguments checked first.

use crate::error::ToolError;
use serde_json::Value;
use std::sync::{Arc, Mutex};

use axe_base::lock::Recover;

use crate::schema;
use crate::tool::{Reply, Tool};
use axe_llm::{ToolCall, ToolDef};

/// A tool as a source offers it.
#[derive(Debug, Clone)]
pub struct Offered {
    /// What the model (or an MCP client) is shown.
    pub def: ToolDef,
    /// What a call's arguments are checked against when it is not
    /// `def.parameters`: an MCP server's schema opened to arguments it
    /// does not name.
    pub check: Option<Value>,
    /// Whether it only reads: offered under `axe-mcp --read-only`, and
    /// said in MCP's annotations.
    pub reads: bool,
    /// The JSON Schema of [`Reply::data`], for callers that list it (an
    /// MCP client's `outputSchema`).
    pub output: Option<fn() -> Value>,
}

/// A source of tools.
pub trait ToolSource: Sync {
    /// What it offers, in order: worked out when the source was built.
    fn offered(&self) -> &[Offered];

    /// Runs the tool `offered()[index]` for `call`, whose arguments
    /// passed its schema.
    fn run(&self, index: usize, call: &ToolCall) -> Result<Reply, ToolError>;

    /// A reply of the model came with calls (or a client's request did).
    /// A source whose calls build on what earlier ones read (the notes
    /// tools) notes here what they all start from, whichever runs first.
    fn reply_came(&self) {}

    /// What the model is told when the tool `offered()[index]` panicked.
    fn crashed(&self, index: usize) -> String {
        format!("{} error: the tool crashed", self.offered()[index].def.name)
    }
}

/// The tools of one table over one context: the memory tools over an
/// agent's memory, the built-in tools over what they act on.
pub struct Table<C: 'static> {
    ctx: C,
    rows: Vec<&'static Tool<C>>,
    offered: Arc<[Offered]>,
    on_reply: fn(&C),
}

impl<C> Table<C> {
    /// The tools of `table` offered in `ctx`; `on_reply` is told of each
    /// reply that came with calls.
    pub fn new(table: &'static [Tool<C>], ctx: C, on_reply: fn(&C)) -> Table<C> {
        // The rows offered, and which they are (a table of more than 128
        // rows is not kept).
        let (mut rows, mut chosen) = (Vec::new(), Some(0u128));
        for (i, t) in table.iter().enumerate() {
            if (t.offered)(&ctx) {
                rows.push(t);
                chosen = chosen.and_then(|c| Some(c | 1u128.checked_shl(u32::try_from(i).ok()?)?));
            }
        }
        let offered = offered_of(table, &rows, chosen);
        Table {
            ctx,
            rows,
            offered,
            on_reply,
        }
    }

    /// What the tools work on.
    pub fn ctx(&self) -> &C {
        &self.ctx
    }
}

impl<C: Sync> ToolSource for Table<C> {
    fn offered(&self) -> &[Offered] {
        &self.offered
    }

    fn run(&self, index: usize, call: &ToolCall) -> Result<Reply, ToolError> {
        (self.rows[index].run)(&self.ctx, &call.arguments)
    }

    fn reply_came(&self) {
        (self.on_reply)(&self.ctx)
    }
}

/// The definitions of `rows` of `table`, made once a process for each
/// table and choice of its rows: a server builds a table for every
/// request (2% of its time under load when each made its own), and a
/// schema is some forty allocations.
fn offered_of<C>(
    table: &'static [Tool<C>],
    rows: &[&Tool<C>],
    chosen: Option<u128>,
) -> Arc<[Offered]> {
    type Key = (usize, u128);
    static MADE: Mutex<Vec<(Key, Arc<[Offered]>)>> = Mutex::new(Vec::new());
    let make = || -> Arc<[Offered]> {
        rows.iter()
            .map(|t| Offered {
                def: ToolDef {
                    name: t.name.to_owned(),
                    description: t.description.to_owned(),
                    parameters: Arc::new((t.schema)()),
                },
                check: None,
                reads: t.reads,
                output: Some(t.output),
            })
            .collect()
    };
    let Some(chosen) = chosen else {
        return make();
    };
    let key = (table.as_ptr().addr(), chosen);
    let mut made = MADE.lock().recover();
    if let Some((_, offered)) = made.iter().find(|(k, _)| *k == key) {
        return Arc::clone(offered);
    }
    let offered = make();
    made.push((key, Arc::clone(&offered)));
    offered
}

/// Where a call of a name goes.
struct Route {
    source: usize,
    index: usize,
}

/// Every tool of a conversation (or a server), from its sources: the
/// definitions offered, each name once (an earlier source's tool wins
/// the name), and the one dispatch of a call to its source.
pub struct Tools<'s> {
    sources: Vec<&'s dyn ToolSource>,
    /// The tools offered, in order: their definitions stay their
    /// sources' (a server answers a request with a new `Tools`, and a
    /// call needs no copy of every schema).
    routes: Vec<(String, Route)>,
    /// Whether a call's undeclared arguments (but near misses) are left
    /// out rather than refused: see [`Tools::for_clients`].
    clients: bool,
}

impl<'s> Tools<'s> {
    /// The tools of `sources`, in their order; those `keep` refuses are
    /// neither offered nor run.
    pub fn new(sources: Vec<&'s dyn ToolSource>, keep: impl Fn(&Offered) -> bool) -> Tools<'s> {
        let mut routes: Vec<(String, Route)> = Vec::new();
        for (source, s) in sources.iter().enumerate() {
            for (index, offered) in s.offered().iter().enumerate() {
                let name = &offered.def.name;
                if !keep(offered) || routes.iter().any(|(n, _)| n == name) {
                    continue;
                }
                routes.push((name.clone(), Route { source, index }));
            }
        }
        Tools {
            sources,
            routes,
            clients: false,
        }
    }

    /// These tools as an MCP client's model calls them: the client may
    /// add arguments of its own to every schema it shows (Gemini CLI's
    /// `wait_for_previous`), so an undeclared argument is left out before
    /// the check, unless it is a near miss of a declared one
    /// ([`schema::undeclared`]). Inside `axe-run` the model is shown the
    /// schema as it is, so there an undeclared argument stays an error.
    pub fn for_clients(mut self) -> Tools<'s> {
        self.clients = true;
        self
    }

    /// The definitions offered, in order.
    pub fn defs(&self) -> Vec<&ToolDef> {
        self.routes
            .iter()
            .map(|(_, r)| &self.sources[r.source].offered()[r.index].def)
            .collect()
    }

    /// The tool offered as `name`.
    pub fn get(&self, name: &str) -> Option<&Offered> {
        let route = self.route(name)?;
        Some(&self.sources[route.source].offered()[route.index])
    }

    fn route(&self, name: &str) -> Option<&Route> {
        self.routes.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// Tells every source a reply came with calls.
    pub fn reply_came(&self) {
        self.sources.iter().for_each(|s| s.reply_came());
    }

    /// Runs `call` with the tool it names once its arguments match that
    /// tool's schema: the one check every tool's call passes. `None` when
    /// no tool has that name.
    pub fn call(&self, call: &ToolCall) -> Option<Result<Reply, ToolError>> {
        let route = self.route(&call.name)?;
        let source = self.sources[route.source];
        let offered = &source.offered()[route.index];
        let schema = offered.check.as_ref().unwrap_or(&*offered.def.parameters);
        let trimmed;
        let call = match self.clients {
            true => {
                let extra = schema::undeclared(schema, &call.arguments);
                if extra.is_empty() {
                    call
                } else {
                    let mut arguments = call.arguments.clone();
                    arguments.retain(|k, _| !extra.contains(&k.as_str()));
                    trimmed = ToolCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments,
                    };
                    &trimmed
                }
            }
            false => call,
        };
        Some(
            schema::check(schema, &call.arguments)
                .map_err(|problems| ToolError::from(format!("{} error: {problems}", call.name)))
                .and_then(|()| source.run(route.index, call)),
        )
    }

    /// What the model is told when the tool `name` panicked.
    pub fn crashed(&self, name: &str) -> String {
        match self.route(name) {
            Some(r) => self.sources[r.source].crashed(r.index),
            None => "the tool crashed".into(),
        }
    }
}
