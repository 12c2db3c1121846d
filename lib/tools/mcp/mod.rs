//! axe as an MCP client: the servers of an agent's `[[mcp_servers]]` as
//! sources of tools. One [`Client`] per server, speaking the generation the
//! server offers: over streamable HTTP `server/discover` is asked first,
//! and a server offering the stateless revision (2026-07-28) gets it
//! (every request naming its version, our name and capabilities in
//! `_meta`, and over HTTP in headers); any other answer means the
//! handshake (the newest revision we speak offered, the server's choice
//! checked, then `notifications/initialized`). Then `tools/list` page by
//! page, `tools/call`, each bounded by the run's deadline, over one of
//! three transports (`stdio`, `streamable-http`, `sse`). A tool's result
//! becomes the text a model reads: what is not text is described, never
//! dropped.

pub mod error;
mod events;
mod http;
pub mod jsonrpc;
pub mod oauth;
mod params;
mod pending;
mod sse;
mod stateless;
mod stdio;
mod transport;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::{Map, Value, json};

pub use error::McpError;
use stdio::Launch;
use transport::Transport;

use axe_base::lock::Recover;
use axe_base::report::Report;
use axe_tool_settings::mcp::{McpServer, SSE, STDIO};

/// The protocol revisions of the handshake generation axe speaks, as a
/// client and as `axe-mcp`, newest first.
pub const VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The stateless revisions axe speaks as a client, newest first.
pub const STATELESS: &[&str] = &["2026-07-28"];

/// A server's tool as it lists it.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
}

/// The most pages of `tools/list` read, and tools kept: far past any real
/// server, short of one that pages forever.
const MAX_PAGES: usize = 100;
const MAX_TOOLS: usize = 10_000;

/// A connected server.
pub struct Client {
    pub name: String,
    transport: Box<dyn Transport>,
    next_id: AtomicU64,
    /// The stateless revision agreed, or none: the handshake's.
    stateless: Mutex<Option<&'static str>>,
    /// Each listed tool's arguments mirrored into headers (stateless).
    mirrored: Mutex<HashMap<String, params::Mirrored>>,
}

/// A server's settings with `${VAR}` expanded: what starting it needs.
#[derive(Clone)]
pub struct Resolved<'a> {
    pub server: &'a McpServer,
    pub headers: Vec<(String, String)>,
    pub env: Vec<(String, String)>,
    /// OAuth for `streamable-http`: the stored login, the names for a
    /// 401's message.
    pub auth: Option<Arc<oauth::Auth>>,
}

impl Client {
    /// Starts or connects to the server and shakes hands, all before
    /// `deadline`. `workdir` is where a stdio server's `cwd` starts;
    /// `stderr_to` where its standard error's lines go (`-v`), if
    /// anywhere.
    pub fn connect(
        resolved: Resolved,
        workdir: &Path,
        deadline: Instant,
        stderr_to: Option<Arc<dyn Report>>,
        http: &axe_net::Client,
    ) -> Result<Client, McpError> {
        let server = resolved.server;
        let transport: Box<dyn Transport> = match server.transport.as_str() {
            STDIO => Box::new(stdio::Stdio::start(Launch {
                name: &server.name,
                command: &server.command,
                args: &server.args,
                env: resolved.env,
                cwd: &workdir.join(&server.cwd),
                stderr_to,
            })?),
            SSE => Box::new(
                sse::Sse::connect(server.url.trim(), resolved.headers, deadline, http)
                    .map_err(|e| e.of_server(&server.name))?,
            ),
            _ => Box::new(
                http::Http::new(server.url.trim(), resolved.headers, http.clone())
                    .with_auth(resolved.auth),
            ),
        };
        let client = Client {
            name: server.name.clone(),
            transport,
            next_id: AtomicU64::new(1),
            stateless: Mutex::new(None),
            mirrored: Mutex::new(HashMap::new()),
        };
        // Closed by its drop from here on, whatever fails next.
        if !(client.transport.discovers() && client.discover(deadline)?) {
            client.initialize(deadline)?;
        }
        Ok(client)
    }

    /// Asks `server/discover` as the stateless revision does: whether the
    /// server offers a stateless revision we speak (then agreed). Any
    /// refusal (an old server's "method not found", 400 or 404, a result
    /// without the revision) means the handshake; a 401 or a server that
    /// cannot be reached is an error as it is.
    fn discover(&self, deadline: Instant) -> Result<bool, McpError> {
        *self.stateless.lock().recover() = Some(STATELESS[0]);
        // A server that never answers a method it does not know costs a
        // little of the run's time, not all of it.
        let probe = deadline.min(Instant::now() + stateless::PROBE);
        let offered = match self.request("server/discover", json!({}), probe) {
            Ok(result) => stateless::offered(&result),
            Err(McpError::Io(e))
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
                ) && probe < deadline =>
            {
                None
            }
            Err(
                e @ (McpError::Unauthorized { .. }
                | McpError::InsufficientScope { .. }
                | McpError::Io(_)),
            ) => return Err(e),
            Err(_) => None,
        };
        *self.stateless.lock().recover() = offered;
        if offered.is_some() {
            self.transport.stateless();
        }
        Ok(offered.is_some())
    }

    fn initialize(&self, deadline: Instant) -> Result<(), McpError> {
        let result = self.request(
            "initialize",
            json!({
                "protocolVersion": VERSIONS[0],
                "capabilities": {},
                "clientInfo": {"name": "axe", "version": env!("CARGO_PKG_VERSION")},
            }),
            deadline,
        )?;
        let version = result["protocolVersion"].as_str().unwrap_or_default();
        if !VERSIONS.contains(&version) {
            return Err(McpError::Version(version.to_owned()));
        }
        self.transport.negotiated(version);
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        self.transport.notify(&initialized, deadline)
    }

    /// The result of `method`, or what went wrong: the server's error
    /// (`-32601 method not found`) or the transport's.
    fn request(&self, method: &str, params: Value, deadline: Instant) -> Result<Value, McpError> {
        self.exchange(method, params, Vec::new(), deadline)
    }

    /// [`Client::request`] with the request's own HTTP `headers`. In the
    /// stateless revision the version is named in `_meta` and headers,
    /// and a server that answers -32022 (a version it does not speak) is
    /// asked again, once, in one it says it does when we speak it too.
    fn exchange(
        &self,
        method: &str,
        params: Value,
        headers: Vec<(String, String)>,
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let mut retried = false;
        loop {
            let version = *self.stateless.lock().recover();
            let id = self.next_id.fetch_add(1, Ordering::Relaxed);
            let (params, own) = match version {
                Some(version) => stateless::dress(version, method, params.clone(), &headers),
                None => (params.clone(), headers.clone()),
            };
            let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
            let answer = self
                .transport
                .request(id, &message, &own, deadline)
                .map_err(|e| e.of_server(&self.name))?;
            if let Some(error) = answer.get("error") {
                if version.is_some()
                    && !retried
                    && error["code"] == jsonrpc::UNSUPPORTED_VERSION
                    && let Some(other) = stateless::retry_with(error)
                {
                    // The version it names may be the one just sent: a
                    // server may refuse a first request to see that
                    // clients retry, and one more try costs little.
                    *self.stateless.lock().recover() = Some(other);
                    retried = true;
                    continue;
                }
                return Err(McpError::Rpc {
                    method: method.to_owned(),
                    code: error["code"].clone(),
                    message: error["message"].as_str().unwrap_or_default().to_owned(),
                });
            }
            return match answer.get("result") {
                Some(result) if result.is_object() => Ok(result.clone()),
                _ => Err(McpError::NoResult {
                    method: method.to_owned(),
                }),
            };
        }
    }

    /// Every tool the server lists, page by page.
    pub fn tools(&self, deadline: Instant) -> Result<Vec<Tool>, McpError> {
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({"cursor": c}),
                None => json!({}),
            };
            let page = self.request("tools/list", params, deadline)?;
            for tool in page["tools"].as_array().into_iter().flatten() {
                let Some(name) = tool["name"].as_str().filter(|n| !n.is_empty()) else {
                    continue;
                };
                let mut schema = tool["inputSchema"].clone();
                if !schema.is_object() {
                    schema = json!({"type": "object"});
                }
                if self.stateless.lock().recover().is_some() {
                    // A tool whose header marks are malformed is not
                    // offered (SEP-2243); the rest of the list is.
                    let Ok(mirrored) = params::mirrored(&schema) else {
                        continue;
                    };
                    self.mirrored
                        .lock()
                        .recover()
                        .insert(name.to_owned(), mirrored);
                }
                tools.push(Tool {
                    name: name.to_owned(),
                    description: tool["description"].as_str().unwrap_or_default().to_owned(),
                    input_schema: schema,
                });
            }
            if tools.len() > MAX_TOOLS {
                return Err(format!("it lists more than {MAX_TOOLS} tools").into());
            }
            cursor = page["nextCursor"]
                .as_str()
                .filter(|c| !c.is_empty())
                .map(str::to_owned);
            if cursor.is_none() {
                return Ok(tools);
            }
        }
        Err(format!("its tool list goes on past {MAX_PAGES} pages").into())
    }

    /// Calls tool `name`: its result as text, or as an error when the
    /// tool says it failed (`isError`) or the call itself failed.
    pub fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        deadline: Instant,
    ) -> Result<String, McpError> {
        let result = self
            .call_through(name, arguments, deadline)
            .map_err(|why| McpError::Server {
                name: self.name.clone(),
                source: Box::new(why),
            })?;
        let text = text_of(&result);
        match result["isError"].as_bool().unwrap_or(false) {
            // The tool's own failure, in its words.
            true => Err(McpError::Said(text)),
            false => Ok(text),
        }
    }
}

impl Client {
    /// `tools/call`'s complete result: a server that needs input first
    /// (`resultType: input_required`, the stateless revision's multi
    /// round-trip requests) is asked again with our answers and the
    /// state it gave back untouched, a few rounds at most.
    fn call_through(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let headers = match self.mirrored.lock().recover().get(name) {
            Some(mirrored) => params::headers(mirrored, arguments),
            None => Vec::new(),
        };
        let mut params = json!({"name": name, "arguments": arguments});
        for _ in 0..stateless::MAX_ROUNDS {
            let result = self.exchange("tools/call", params, headers.clone(), deadline)?;
            if result["resultType"] != "input_required" {
                return Ok(result);
            }
            params = json!({
                "name": name,
                "arguments": arguments,
                "inputResponses": stateless::answers(&result["inputRequests"])?,
            });
            if let Some(state) = result.get("requestState").filter(|s| s.is_string()) {
                params["requestState"] = state.clone();
            }
        }
        Err(format!(
            "the server still asked for input after {} rounds",
            stateless::MAX_ROUNDS
        )
        .into())
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        self.transport.close();
    }
}

/// A tool result as text: its text parts as they are, the rest described
/// (`[image: image/png, 1234 bytes]`, a resource by its URI), joined by
/// newlines; with no content at all, its structured content as JSON.
fn text_of(result: &Value) -> String {
    let parts: Vec<String> = result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .map(describe)
        .collect();
    if !parts.is_empty() {
        return parts.join("\n");
    }
    match result.get("structuredContent") {
        Some(data) if !data.is_null() => data.to_string(),
        _ => "(no content)".into(),
    }
}

fn describe(part: &Value) -> String {
    let str_of = |v: &Value, key: &str| v[key].as_str().unwrap_or_default().to_owned();
    let kind = str_of(part, "type");
    match kind.as_str() {
        "text" => str_of(part, "text"),
        "image" | "audio" => format!(
            "[{kind}: {}, {} bytes]",
            or_unknown(&str_of(part, "mimeType")),
            decoded_len(part["data"].as_str().unwrap_or_default())
        ),
        "resource_link" => {
            let name = str_of(part, "name");
            match name.is_empty() {
                true => format!("[resource link: {}]", str_of(part, "uri")),
                false => format!("[resource link: {} ({name})]", str_of(part, "uri")),
            }
        }
        "resource" => {
            let resource = &part["resource"];
            let uri = str_of(resource, "uri");
            match resource["text"].as_str() {
                Some(text) => format!("[resource: {uri}]\n{text}"),
                None => format!(
                    "[resource: {uri}, {}, {} bytes]",
                    or_unknown(&str_of(resource, "mimeType")),
                    decoded_len(resource["blob"].as_str().unwrap_or_default())
                ),
            }
        }
        other => format!("[{} content]", or_unknown(other)),
    }
}

fn or_unknown(text: &str) -> &str {
    if text.is_empty() {
        "unknown type"
    } else {
        text
    }
}

/// The size of what base64 `data` holds.
fn decoded_len(data: &str) -> usize {
    let data = data.trim_end();
    let padding = data.bytes().rev().take_while(|b| *b == b'=').count();
    (data.len() / 4 * 3 + (data.len() % 4).saturating_sub(1)).saturating_sub(padding)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_not_text_is_described() {
        let result = json!({"content": [
            {"type": "text", "text": "two images:"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "audio", "data": "AAAA"},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a"},
            {"type": "resource", "resource": {"uri": "test://1", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "test://2", "mimeType": "application/zip", "blob": "UEsD"}},
            {"type": "hologram"},
        ]});
        assert_eq!(
            text_of(&result),
            "two images:\n[image: image/png, 8 bytes]\n[audio: unknown type, 3 bytes]\n\
             [resource link: file:///a.txt (a)]\n[resource: test://1]\ninside\n\
             [resource: test://2, application/zip, 3 bytes]\n[hologram content]"
        );
        assert_eq!(
            text_of(&json!({"content": [], "structuredContent": {"n": 1}})),
            "{\"n\":1}"
        );
        assert_eq!(text_of(&json!({})), "(no content)");
        assert_eq!(decoded_len("QQ=="), 1);
        assert_eq!(decoded_len("QUI="), 2);
        assert_eq!(decoded_len("QUJD"), 3);
        assert_eq!(decoded_len("QUJDRA"), 4);
    }

    /// A stdio server whose command is not there fails to start with the
    /// line it always had, and keeps the io::Error (not found) beneath it.
    #[test]
    fn a_server_that_does_not_start_keeps_its_cause() {
        use std::error::Error as _;
        let tmp = tempfile::tempdir().unwrap();
        let server: McpServer = toml::from_str(
            "name = \"gone\"\ntransport = \"stdio\"\ncommand = \"axe-test-no-such-server\"\n",
        )
        .unwrap();
        let resolved = Resolved {
            server: &server,
            headers: Vec::new(),
            env: Vec::new(),
            auth: None,
        };
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let http = axe_net::Client::from_env();
        let Err(e) = Client::connect(resolved, tmp.path(), deadline, None, &http) else {
            panic!("a command that is not there started");
        };
        assert_eq!(
            e.to_string(),
            "axe-test-no-such-server: no such file or directory"
        );
        let io = e.source().and_then(|c| c.downcast_ref::<std::io::Error>());
        assert_eq!(
            io.map(std::io::Error::kind),
            Some(std::io::ErrorKind::NotFound)
        );
    }
}
