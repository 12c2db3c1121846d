//! `axe-mcp`: an agent's memory served over the Model Context Protocol on
//! stdin and stdout, so that any MCP client (Claude Code, Codex, Cursor,
//! another axe agent) reads and writes it with axe's guarantees: the
//! tools are the same source a model gets inside `axe-run`
//! ([`axe_tools::memory_tools`]), offered and dispatched the same way
//! ([`Tools`]), over the same locked, atomic write path.
//!
//! Both generations of the protocol are spoken: the handshake one
//! (`initialize`, then requests) and the stateless 2026-07-28 revision
//! (`server/discover`; every request names its version in `_meta`, and
//! results say their kind). One JSON-RPC message a line, nothing but
//! messages on stdout, diagnostics on stderr. A line that is not JSON is a
//! parse error and the server goes on; a line that is JSON but no message
//! is an invalid request: every line that is not a notification gets an
//! answer, since a client waits for it. A batch is answered as one where
//! the negotiated revision has batches (2025-03-26), refused elsewhere. A
//! tool's failure is a tool result with `isError`, never a protocol
//! error; end of input ends the server.
//!
//! `axe_tools::mcp` is the other side: other servers' tools for an agent's
//! run.

pub mod http;
mod resources;

use std::io::{BufRead, Write};

use serde_json::{Map, Value, json};

use axe_llm::ToolCall;
use axe_tools::mcp::VERSIONS;
use axe_tools::mcp::jsonrpc::{
    self, INVALID_PARAMS, INVALID_REQUEST, Line, METHOD_NOT_FOUND, PARSE_ERROR, UNSUPPORTED_VERSION,
};
use axe_tools::{Memory, MemoryTools, Tools};

/// The one revision with JSON-RPC batches: 2025-03-26 added them and
/// 2025-06-18 took them out again.
const BATCHES: &str = "2025-03-26";

/// The stateless revision: no handshake, the version in every request.
pub const STATELESS: &str = "2026-07-28";

/// Where a request names its protocol version in the stateless revision.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// What the server serves.
pub struct Server {
    pub memory: Memory,
    /// Only the tools that do not write.
    pub read_only: bool,
    /// Said to the client at `initialize`: whose memory, and how.
    pub instructions: String,
}

impl Server {
    /// Serves requests from `input` until it ends, replying on `output`.
    /// Only reading and writing the two streams can fail.
    pub fn serve(self, input: &mut impl BufRead, output: &mut dyn Write) -> std::io::Result<()> {
        let source = axe_tools::memory_tools(self.memory);
        Serving::new(&source, self.read_only, &self.instructions).serve(input, output)
    }
}

/// A server serving: its tools offered and listed once.
struct Serving<'s> {
    source: &'s MemoryTools,
    tools: Tools<'s>,
    /// What `tools/list` answers, made when first asked: over HTTP each
    /// request has a `Serving` of its own, and a call that lists nothing
    /// need not copy every tool's input and output schema.
    listed: std::cell::OnceCell<Value>,
    instructions: &'s str,
}

impl<'s> Serving<'s> {
    /// The one request handler over `source`, for stdio's one client or
    /// an HTTP session or request ([`http`]): all the memory offers, or
    /// with `read_only` what only reads.
    fn new(source: &'s MemoryTools, read_only: bool, instructions: &'s str) -> Serving<'s> {
        let tools = Tools::new(vec![source], |t| t.reads || !read_only).for_clients();
        Serving {
            source,
            tools,
            listed: std::cell::OnceCell::new(),
            instructions,
        }
    }

    fn memory(&self) -> &Memory {
        self.source.ctx()
    }

    fn serve(&self, input: &mut impl BufRead, output: &mut dyn Write) -> std::io::Result<()> {
        // The revision `initialize` settled on: whether batches exist.
        let mut negotiated = None;
        loop {
            let reply = match jsonrpc::read_line(input)? {
                Line::End => return Ok(()),
                Line::TooLong => Some(jsonrpc::error(
                    &Value::Null,
                    INVALID_REQUEST,
                    &format!("message over {} MiB", jsonrpc::MAX_LINE >> 20),
                )),
                Line::Message(line) if line.trim_ascii().is_empty() => None,
                Line::Message(line) => self.reply_to(&line, &mut negotiated),
            };
            if let Some(reply) = reply {
                serde_json::to_writer(&mut *output, &reply)?;
                output.write_all(b"\n")?;
                output.flush()?;
            }
        }
    }

    /// The reply to one line: a message, or a batch of them where the
    /// negotiated revision has batches (2025-03-26 only: added there,
    /// removed in 2025-06-18). Whatever else a line holds is an invalid
    /// request answered with `id: null`, never silence: a client waits for
    /// its reply.
    fn reply_to(&self, line: &[u8], negotiated: &mut Option<&'static str>) -> Option<Value> {
        match serde_json::from_slice(line) {
            Ok(message) => self.reply(&message, negotiated),
            Err(e) => Some(jsonrpc::error(&Value::Null, PARSE_ERROR, &e.to_string())),
        }
    }

    /// [`Serving::reply_to`] of a line already parsed (over HTTP, where
    /// the body was read for its method and headers first).
    fn reply(&self, message: &Value, negotiated: &mut Option<&'static str>) -> Option<Value> {
        let invalid = |why: &str| Some(jsonrpc::error(&Value::Null, INVALID_REQUEST, why));
        let batch = match message {
            Value::Object(_) => return self.handle(message, negotiated),
            Value::Array(batch) => batch,
            _ => return invalid("a message is a JSON object"),
        };
        if batch.is_empty() {
            return invalid("an empty batch");
        }
        if *negotiated != Some(BATCHES) {
            return invalid(&match negotiated {
                Some(v) => format!("protocol version {v} has no batches (only {BATCHES} has)"),
                None => format!("no batches before initialize settles on {BATCHES}"),
            });
        }
        if batch.len() > jsonrpc::MAX_BATCH {
            return invalid(&format!(
                "a batch of {} messages; at most {} are taken",
                batch.len(),
                jsonrpc::MAX_BATCH
            ));
        }
        let replies: Vec<Value> = batch
            .iter()
            .filter_map(|m| match m {
                Value::Object(_) if m["method"] == "initialize" => Some(jsonrpc::error(
                    m.get("id").unwrap_or(&Value::Null),
                    INVALID_REQUEST,
                    "initialize may not be part of a batch",
                )),
                Value::Object(_) => self.handle(m, negotiated),
                _ => invalid("a message is a JSON object"),
            })
            .collect();
        // A batch of notifications alone is answered with nothing.
        (!replies.is_empty()).then_some(Value::Array(replies))
    }

    /// The reply to one message; none for a notification.
    fn handle(&self, message: &Value, negotiated: &mut Option<&'static str>) -> Option<Value> {
        let id = message.get("id");
        if let Some(id) = id
            && !matches!(id, Value::String(_) | Value::Number(_) | Value::Null)
        {
            let why = "an id is a string or a number";
            return Some(jsonrpc::error(&Value::Null, INVALID_REQUEST, why));
        }
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A reply to us (we send no requests) or no message at all.
            let id = id.unwrap_or(&Value::Null);
            return Some(jsonrpc::error(
                id,
                INVALID_REQUEST,
                "a request needs a method",
            ));
        };
        // A notification: nothing to answer (initialized, cancelled, ...).
        let id = id?;
        let params = message.get("params").cloned().unwrap_or(json!({}));
        // A request of the stateless revision names its version; one we do
        // not speak gets the list we do.
        let version = params["_meta"][VERSION_KEY].as_str();
        if let Some(v) = version
            && v != STATELESS
            && !VERSIONS.contains(&v)
        {
            return Some(json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {
                    "code": UNSUPPORTED_VERSION,
                    "message": format!("unsupported protocol version: {v}"),
                    "data": {"requested": v, "supported": supported()},
                },
            }));
        }
        if method == "initialize" {
            *negotiated = Some(pick(&params));
        }
        Some(match self.call(method, &params) {
            Ok(mut result) => {
                if version == Some(STATELESS) {
                    stateless(&mut result, method);
                }
                jsonrpc::result(id, result)
            }
            Err((code, why)) => {
                let mut error = jsonrpc::error(id, code, &why);
                // A resource that cannot be read is named in the error's
                // data, as 2026-07-28 asks of "resource not found" (SEP-2164).
                if method == "resources/read"
                    && code == INVALID_PARAMS
                    && let Some(uri) = params["uri"].as_str()
                {
                    error["error"]["data"] = json!({"uri": uri});
                }
                error
            }
        })
    }

    fn call(&self, method: &str, params: &Value) -> Result<Value, (i64, String)> {
        match method {
            "initialize" => Ok(self.initialize(params)),
            "server/discover" => Ok(self.discover()),
            "ping" => Ok(json!({})),
            "tools/list" => {
                Ok(json!({"tools": self.listed.get_or_init(|| tool_list(&self.tools))}))
            }
            "tools/call" => self.tool_call(params),
            "resources/list" => Ok(json!({"resources": resources::list(self.memory())})),
            "resources/templates/list" => {
                Ok(json!({"resourceTemplates": resources::templates(self.memory())}))
            }
            "resources/read" => resources::read(self.memory(), params),
            _ => Err((METHOD_NOT_FOUND, format!("method not found: {method}"))),
        }
    }

    fn initialize(&self, params: &Value) -> Value {
        json!({
            "protocolVersion": pick(params),
            "capabilities": capabilities(),
            "serverInfo": server_info(),
            "instructions": self.instructions,
        })
    }

    /// `server/discover`: what `initialize` says, without a session.
    fn discover(&self) -> Value {
        json!({
            "supportedVersions": supported(),
            "capabilities": capabilities(),
            "instructions": self.instructions,
            "cacheScope": "private",
            "ttlMs": 0,
            "_meta": {"io.modelcontextprotocol/serverInfo": server_info()},
        })
    }

    fn tool_call(&self, params: &Value) -> Result<Value, (i64, String)> {
        let name = params["name"]
            .as_str()
            .ok_or((INVALID_PARAMS, "tools/call needs a name".to_owned()))?;
        let arguments: Map<String, Value> = match &params["arguments"] {
            Value::Null => Map::new(),
            Value::Object(map) => map.clone(),
            _ => return Err((INVALID_PARAMS, "arguments must be an object".to_owned())),
        };
        let call = ToolCall {
            id: String::new(),
            name: name.to_owned(),
            arguments,
        };
        // What this client has seen, as a conversation's reply would carry.
        self.tools.reply_came();
        let Some(outcome) = self.tools.call(&call) else {
            return Err((INVALID_PARAMS, format!("unknown tool: {name}")));
        };
        Ok(match outcome {
            Ok(reply) => json!({
                "content": [{"type": "text", "text": reply.text}],
                "structuredContent": reply.data,
                "isError": false,
            }),
            Err(e) => {
                json!({"content": [{"type": "text", "text": e.to_string()}], "isError": true})
            }
        })
    }
}

/// What `tools/list` answers: every tool offered, with its output schema
/// and what it does.
fn tool_list(tools: &Tools) -> Value {
    let listed: Vec<Value> = tools
        .defs()
        .iter()
        .filter_map(|d| Some((d, tools.get(&d.name)?)))
        .map(|(d, t)| {
            let mut tool = json!({
                "name": d.name,
                "description": d.description,
                "inputSchema": d.parameters,
                "annotations": {
                    "readOnlyHint": t.reads,
                    // An append adds; a rewrite replaces what was.
                    "destructiveHint": !t.reads && d.name != "remember",
                    "idempotentHint": t.reads,
                    "openWorldHint": false,
                },
            });
            if let Some(output) = t.output {
                tool["outputSchema"] = output();
            }
            tool
        })
        .collect();
    Value::Array(listed)
}

/// The revision `initialize` answers with: the client's when we speak
/// it, else our newest.
fn pick(params: &Value) -> &'static str {
    let asked = params["protocolVersion"].as_str().unwrap_or_default();
    VERSIONS
        .iter()
        .find(|v| **v == asked)
        .unwrap_or(&VERSIONS[0])
}

fn server_info() -> Value {
    json!({"name": "axe-mcp", "version": env!("CARGO_PKG_VERSION")})
}

/// Every revision spoken, newest first.
pub fn supported() -> Vec<&'static str> {
    std::iter::once(STATELESS)
        .chain(VERSIONS.iter().copied())
        .collect()
}

/// What the stateless revision adds to a result: its kind, and for lists
/// and reads how they may be cached (memory is one user's: privately, and
/// stale at once, since any write changes it). SEP-2549 asks it of
/// `tools/list`, `prompts/list`, `resources/list`,
/// `resources/templates/list` and `resources/read`.
fn stateless(result: &mut Value, method: &str) {
    let Some(fields) = result.as_object_mut() else {
        return;
    };
    fields.insert("resultType".into(), json!("complete"));
    if method.ends_with("/list") || method == "resources/read" || method == "server/discover" {
        fields.entry("cacheScope").or_insert(json!("private"));
        fields.entry("ttlMs").or_insert(json!(0));
    }
    fields
        .entry("_meta")
        .or_insert(json!({"io.modelcontextprotocol/serverInfo": server_info()}));
}

/// What the server offers: tools, and the memory's files as resources.
fn capabilities() -> Value {
    json!({"tools": {}, "resources": {}})
}
