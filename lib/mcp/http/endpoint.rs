//! One request to `/mcp/<AGENT>`, answered: who sent it (the bearer
//! token), from where (`Host` and `Origin`, against DNS rebinding), which
//! generation it speaks (a session of the handshake one, or the stateless
//! 2026-07-28 revision with its `Mcp-Method`/`Mcp-Name` headers), and
//! then the same request handler as stdio's ([`Serving::reply_to`]).

use serde_json::{Value, json};

use super::sessions::{Session, Sessions};
use super::tokens::{Live, Token, Tokens};
use super::wire::{Request, Response};
use super::{Open, Slots};
use crate::{STATELESS, Serving, VERSION_KEY};
use axe_base::lock::Recover;
use axe_base::report::Report;
use axe_tools::mcp::VERSIONS;
use axe_tools::mcp::jsonrpc::{
    self, INVALID_PARAMS, METHOD_NOT_FOUND, PARSE_ERROR, UNSUPPORTED_VERSION,
};

/// The stateless revision's error for headers that contradict the body.
const HEADER_MISMATCH: i64 = -32020;

/// Where a stateless request names its client's capabilities.
const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// JSON-RPC's "server error": the body of a refusal at the HTTP level.
const REFUSED: i64 = -32000;

/// Opens an agent's memory, and says what `initialize` tells of it.
pub type Opener = Box<Open>;

/// What a request's log line says.
#[derive(Default)]
pub struct Logged {
    pub token: Option<String>,
    pub agent: Option<String>,
    pub method: Option<String>,
    pub tool: Option<String>,
    pub status: u16,
}

impl Logged {
    pub fn refused(status: u16) -> Logged {
        Logged {
            status,
            ..Logged::default()
        }
    }
}

pub struct Endpoint {
    tokens: Option<Live>,
    read_only: bool,
    /// Bound to a loopback address: only a loopback `Host` is served.
    loopback: bool,
    open: Opener,
    sessions: Sessions,
    /// The tokens the sessions were last checked against: when the file
    /// changes, the sessions of a token gone from it (or no longer
    /// reaching their agent) end.
    checked: std::sync::Mutex<Option<std::sync::Arc<Tokens>>>,
    /// Where a tokens file that no longer reads is said.
    report: std::sync::Arc<dyn Report>,
}

/// A request's answer before CORS headers are added.
type Answer = Result<Response, Response>;

impl Endpoint {
    pub fn new(
        tokens: Option<Live>,
        read_only: bool,
        loopback: bool,
        open: Opener,
        report: std::sync::Arc<dyn Report>,
    ) -> Endpoint {
        Endpoint {
            tokens,
            read_only,
            loopback,
            open,
            sessions: Sessions::default(),
            checked: std::sync::Mutex::new(None),
            report,
        }
    }

    /// The answer to `request`, and what its log line says. An Origin that
    /// passed is told it may read the answer (CORS); a refused one is not.
    pub fn answer(&self, request: &Request, slots: &Slots) -> (Response, Logged) {
        let mut logged = Logged::default();
        let response = self
            .route(request, slots, &mut logged)
            .unwrap_or_else(|refusal| refusal);
        let response =
            cors(request, response).header("Access-Control-Expose-Headers", "Mcp-Session-Id");
        logged.status = response.status;
        (response, logged)
    }

    /// The checks of a request's head alone (Host, Origin, the endpoint,
    /// the token), made before its body is read, so that a request refused
    /// costs no more than its head; [`Endpoint::answer`] makes them again.
    /// The refusal and its log line, if refused.
    pub fn check_head(&self, request: &Request) -> Option<(Response, Logged)> {
        let mut logged = Logged::default();
        let refusal = self.admit(request, &mut logged).err()?;
        let response = cors(request, refusal);
        logged.status = response.status;
        Some((response, logged))
    }

    /// What a request's head alone decides, for [`Endpoint::check_head`]
    /// and [`Endpoint::route`] alike: the Host and Origin, the endpoint's
    /// agent, and (but for a preflight) the token.
    fn admit<'r>(&self, request: &'r Request, logged: &mut Logged) -> Result<Head<'r>, Response> {
        self.check_host(request)?;
        let path = request.target.split('?').next().unwrap_or_default();
        let agent = path
            .strip_prefix("/mcp/")
            .filter(|a| super::tokens::word(a))
            .ok_or_else(|| status(404, "Not Found", "no such endpoint: /mcp/<AGENT> is served"))?;
        logged.agent = Some(agent.to_owned());
        if request.method == "OPTIONS" {
            return Ok(Head::Preflight);
        }
        let token = self.authorize(request, agent)?;
        logged.token = token.as_ref().map(|t| t.name.clone());
        Ok(Head::Request(agent, token))
    }

    fn route(&self, request: &Request, slots: &Slots, logged: &mut Logged) -> Answer {
        let (agent, token) = match self.admit(request, logged)? {
            Head::Preflight => return Ok(preflight()),
            Head::Request(agent, token) => (agent, token),
        };
        let read_only = self.read_only || token.as_ref().is_some_and(|t| t.read_only);
        // The rights are the tokens file's now, on every request: a
        // session keeps what its client was shown, never its rights.
        let who = Who {
            agent,
            token: token.as_ref().map(|t| t.sha256.to_ascii_lowercase()),
            read_only,
        };
        match request.method.as_str() {
            "POST" => self.post(request, &who, slots, logged),
            "DELETE" => self.delete(request, &who),
            // No messages of our own to send: no stream to open
            // (a 405 is what the spec asks of such a server).
            "GET" => Err(status(
                405,
                "Method Not Allowed",
                "this server sends no stream; POST requests",
            )
            .header("Allow", "POST, DELETE, OPTIONS")),
            _ => Err(status(405, "Method Not Allowed", "POST requests")
                .header("Allow", "POST, DELETE, OPTIONS")),
        }
    }

    /// `Host` and `Origin` against DNS rebinding: served on loopback, only
    /// a loopback host; an `Origin` only of a loopback host there, or of
    /// the very host asked, so a page elsewhere cannot drive the server
    /// through a visitor's browser.
    fn check_host(&self, request: &Request) -> Result<(), Response> {
        let Some(host) = request.header("host") else {
            return Err(status(400, "Bad Request", "a request needs a Host"));
        };
        if self.loopback && !loopback_host(host) {
            return Err(status(403, "Forbidden", "a foreign Host is refused"));
        }
        if let Some(origin) = request.header("origin") {
            let authority = origin
                .strip_prefix("http://")
                .or_else(|| origin.strip_prefix("https://"));
            let ok = authority.is_some_and(|a| {
                !a.contains('/')
                    && ((self.loopback && loopback_host(a)) || a.eq_ignore_ascii_case(host))
            });
            if !ok {
                return Err(status(403, "Forbidden", "a foreign Origin is refused"));
            }
        }
        Ok(())
    }

    /// The token of the request's `Authorization`, when the server takes
    /// tokens: a missing or unknown one is 401, one that does not reach
    /// `agent` 403. Only the request's head is read. The file is read
    /// again when it changed, and then every session of a token it no
    /// longer holds ends.
    fn authorize(&self, request: &Request, agent: &str) -> Result<Option<Token>, Response> {
        let Some(live) = &self.tokens else {
            return Ok(None);
        };
        let tokens = live.current(&*self.report);
        self.check_sessions(&tokens);
        let unauthorized = || {
            status(401, "Unauthorized", "a bearer token is needed")
                .header("WWW-Authenticate", "Bearer realm=\"axe-mcp\"")
        };
        let given = request
            .header("authorization")
            .and_then(|a| {
                a.strip_prefix("Bearer ")
                    .or_else(|| a.strip_prefix("bearer "))
            })
            .map(str::trim)
            .ok_or_else(unauthorized)?;
        let token = tokens.find(given).cloned().ok_or_else(unauthorized)?;
        if !token.reaches(agent) {
            return Err(status(
                403,
                "Forbidden",
                "this token does not reach this agent",
            ));
        }
        Ok(Some(token))
    }

    /// Ends the sessions `tokens` no longer allow, once per version of
    /// the file.
    fn check_sessions(&self, tokens: &std::sync::Arc<Tokens>) {
        let mut checked = self.checked.lock().recover();
        if checked
            .as_ref()
            .is_some_and(|c| std::sync::Arc::ptr_eq(c, tokens))
        {
            return;
        }
        self.sessions.retain(|s| {
            s.token
                .as_deref()
                .is_none_or(|digest| tokens.allows(digest, &s.agent))
        });
        *checked = Some(std::sync::Arc::clone(tokens));
    }

    fn post(&self, request: &Request, who: &Who, slots: &Slots, logged: &mut Logged) -> Answer {
        let json_body = request.header("content-type").is_some_and(|c| {
            c.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
        if !json_body {
            return Err(status(
                415,
                "Unsupported Media Type",
                "a request is application/json",
            ));
        }
        let accept = request
            .header("accept")
            .unwrap_or("*/*")
            .to_ascii_lowercase();
        let takes = |t: &str| {
            accept
                .split(',')
                .any(|a| a.split(';').next().is_some_and(|a| a.trim() == t))
        };
        let json_ok = takes("application/json") || takes("*/*") || takes("application/*");
        let sse_ok = takes("text/event-stream");
        if !json_ok && !sse_ok {
            return Err(status(
                406,
                "Not Acceptable",
                "answers are application/json or text/event-stream",
            ));
        }
        let message: Value = match serde_json::from_slice(&request.body) {
            Ok(m) => m,
            Err(e) => {
                let body = jsonrpc::error(&Value::Null, PARSE_ERROR, &e.to_string());
                return Err(json_response(400, "Bad Request", &body));
            }
        };
        let method = message["method"].as_str().map(str::to_owned);
        if method.as_deref() == Some("tools/call") {
            logged.tool = message["params"]["name"].as_str().map(str::to_owned);
        }
        logged.method = method.clone();
        let header_version = request.header("mcp-protocol-version");
        let body_version = message["params"]["_meta"][VERSION_KEY].as_str();
        // As the SDKs route: a version header of no handshake revision (or
        // the stateless one named in the body) is the stateless transport,
        // which refuses what it does not speak itself.
        let stateless = header_version.is_some_and(|v| !VERSIONS.contains(&v))
            || (header_version.is_none() && body_version == Some(STATELESS))
            || (method.as_deref() == Some("server/discover")
                && request.header("mcp-session-id").is_none());
        let reply = if stateless {
            let id = message.get("id").cloned().unwrap_or(Value::Null);
            let refuse = |code: u16, reason: &'static str, error: Value| {
                json_response(
                    code,
                    reason,
                    &json!({"jsonrpc": "2.0", "id": id, "error": error}),
                )
            };
            if let Some(v) = header_version.filter(|v| *v != STATELESS) {
                return Err(refuse(400, "Bad Request", unsupported(v)));
            }
            check_headers(request, &message)?;
            if method.is_some() && message.get("id").is_some() {
                let meta = &message["params"]["_meta"];
                let why = match (
                    meta[VERSION_KEY].as_str(),
                    meta[CAPABILITIES_KEY].is_object(),
                ) {
                    (None, _) => Some(format!("params._meta needs {VERSION_KEY}")),
                    (Some(_), false) => Some(format!("params._meta needs {CAPABILITIES_KEY}")),
                    (Some(v), true) if v != STATELESS && !VERSIONS.contains(&v) => {
                        return Err(refuse(400, "Bad Request", unsupported(v)));
                    }
                    _ => None,
                };
                if let Some(why) = why {
                    let error = json!({"code": INVALID_PARAMS, "message": why});
                    return Err(refuse(400, "Bad Request", error));
                }
                // What the revision took out, and what never was: 404.
                if matches!(
                    method.as_deref(),
                    Some("initialize" | "ping" | "logging/setLevel")
                ) {
                    let m = method.as_deref().unwrap_or_default();
                    let error = json!({"code": METHOD_NOT_FOUND, "message": format!("method not found: {m} (not in {STATELESS})")});
                    return Err(refuse(404, "Not Found", error));
                }
            }
            let _slot = slots.take().ok_or_else(busy)?;
            let (memory, instructions) = (self.open)(who.agent).map_err(failed)?;
            let source = axe_tools::memory_tools(memory);
            let serving = Serving::new(&source, who.read_only, &instructions);
            let reply = serving.reply(&message, &mut None);
            // An error of the transport's own kind has its HTTP status.
            let code = reply.as_ref().and_then(|r| r["error"]["code"].as_i64());
            let (status, reason) = match code {
                Some(METHOD_NOT_FOUND) => (404, "Not Found"),
                Some(UNSUPPORTED_VERSION) => (400, "Bad Request"),
                _ => (200, "OK"),
            };
            if status != 200 {
                let mut r = answer(reply, false);
                r.status = status;
                r.reason = reason;
                return Err(r);
            }
            reply
        } else if method.as_deref() == Some("initialize") && message.is_object() {
            let _slot = slots.take().ok_or_else(busy)?;
            let (memory, instructions) = (self.open)(who.agent).map_err(failed)?;
            let session = Session {
                agent: who.agent.to_owned(),
                token: who.token.clone(),
                source: axe_tools::memory_tools(memory),
                instructions,
                negotiated: Default::default(),
            };
            let reply = {
                let serving = Serving::new(&session.source, who.read_only, &session.instructions);
                let mut negotiated = None;
                let reply = serving.reply(&message, &mut negotiated);
                *session.negotiated.lock().recover() = negotiated;
                reply
            };
            let id = self.sessions.add(session).map_err(failed_io)?;
            return Ok(answer(reply, sse_ok && !json_ok).header("Mcp-Session-Id", id));
        } else {
            let session = self.session(request, who)?;
            let _slot = slots.take().ok_or_else(busy)?;
            let serving = Serving::new(&session.source, who.read_only, &session.instructions);
            let mut negotiated = *session.negotiated.lock().recover();
            serving.reply(&message, &mut negotiated)
        };
        Ok(answer(reply, sse_ok && !json_ok))
    }

    /// The session a request names: it must exist, and have begun on this
    /// endpoint with this token.
    fn session(&self, request: &Request, who: &Who) -> Result<std::sync::Arc<Session>, Response> {
        let id = request.header("mcp-session-id").ok_or_else(|| {
            status(
                400,
                "Bad Request",
                "Mcp-Session-Id is needed after initialize",
            )
        })?;
        self.sessions
            .get(id)
            .filter(|s| s.agent == who.agent && s.token == who.token)
            .ok_or_else(|| status(404, "Not Found", "no such session: initialize again"))
    }

    fn delete(&self, request: &Request, who: &Who) -> Answer {
        self.session(request, who)?;
        if let Some(id) = request.header("mcp-session-id") {
            self.sessions.remove(id);
        }
        Ok(Response::new(204, "No Content"))
    }
}

struct Who<'a> {
    agent: &'a str,
    /// The SHA-256 of the request's token.
    token: Option<String>,
    /// The token's rights now, and the server's `--read-only`.
    read_only: bool,
}

/// The stateless revision's headers against the body: `Mcp-Method` is
/// the body's method; `Mcp-Name` its tool's name or resource's URI; a
/// `MCP-Protocol-Version` the body's `_meta` one.
fn check_headers(request: &Request, message: &Value) -> Result<(), Response> {
    let mismatch = |why: String| {
        let id = message.get("id").cloned().unwrap_or(Value::Null);
        json_response(
            400,
            "Bad Request",
            &jsonrpc::error(&id, HEADER_MISMATCH, &why),
        )
    };
    let Some(method) = message["method"].as_str() else {
        // A reply or a batch: nothing for the headers to name.
        return Ok(());
    };
    match request.header("mcp-method") {
        Some(h) if h == method => {}
        Some(h) => {
            return Err(mismatch(format!(
                "Mcp-Method {h:?} is not the body's method {method:?}"
            )));
        }
        None => return Err(mismatch("Mcp-Method is needed".into())),
    }
    let named = match method {
        "tools/call" | "prompts/get" => message["params"]["name"].as_str(),
        "resources/read" => message["params"]["uri"].as_str(),
        _ => None,
    };
    if let Some(named) = named {
        match request.header("mcp-name") {
            Some(h) if h == named => {}
            Some(h) => {
                return Err(mismatch(format!(
                    "Mcp-Name {h:?} is not the body's {named:?}"
                )));
            }
            None => return Err(mismatch("Mcp-Name is needed".into())),
        }
    }
    if let (Some(h), Some(b)) = (
        request.header("mcp-protocol-version"),
        message["params"]["_meta"][VERSION_KEY].as_str(),
    ) && h != b
    {
        return Err(mismatch(format!(
            "MCP-Protocol-Version {h:?} is not the body's {b:?}"
        )));
    }
    Ok(())
}

/// A `Host` (or an Origin's authority) naming this machine.
fn loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(h, port)| {
            match port.bytes().all(|b| b.is_ascii_digit()) {
                true => h,
                false => host,
            }
        }),
    };
    name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// CORS preflight, for an Origin already found acceptable.
/// What a request's head was let through as.
enum Head<'r> {
    /// A CORS preflight, which needs no token.
    Preflight,
    /// A request to the agent of the endpoint, with the token it passed.
    Request(&'r str, Option<Token>),
}

/// `response` with CORS headers for an Origin that passed: a refused one
/// (403) is not told it may read the answer.
fn cors(request: &Request, response: Response) -> Response {
    match request.header("origin") {
        Some(origin) if response.status != 403 => response
            .header("Access-Control-Allow-Origin", origin)
            .header("Vary", "Origin"),
        _ => response,
    }
}

fn preflight() -> Response {
    Response::new(204, "No Content")
        .header("Access-Control-Allow-Methods", "GET, POST, DELETE, OPTIONS")
        .header(
            "Access-Control-Allow-Headers",
            "Authorization, Content-Type, Accept, Mcp-Session-Id, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID",
        )
        .header("Access-Control-Max-Age", "600")
        .header("Allow", "POST, DELETE, OPTIONS")
}

/// A reply as JSON, or as one SSE event when only a stream is accepted;
/// a notification's nothing as 202.
fn answer(reply: Option<Value>, sse: bool) -> Response {
    let Some(reply) = reply else {
        return Response::new(202, "Accepted");
    };
    let text = serde_json::to_string(&reply).unwrap_or_default();
    match sse {
        true => Response::new(200, "OK")
            .header("Cache-Control", "no-cache")
            .body(
                "text/event-stream",
                format!("event: message\ndata: {text}\n\n").into_bytes(),
            ),
        false => Response::new(200, "OK").body("application/json", text.into_bytes()),
    }
}

fn json_response(code: u16, reason: &'static str, body: &Value) -> Response {
    Response::new(code, reason).body(
        "application/json",
        serde_json::to_vec(body).unwrap_or_default(),
    )
}

/// A refusal at the HTTP level, with a JSON-RPC error body saying why.
fn status(code: u16, reason: &'static str, why: &str) -> Response {
    json_response(code, reason, &jsonrpc::error(&Value::Null, REFUSED, why))
}

/// The stateless revision's error for a version not spoken: the list
/// that is.
fn unsupported(requested: &str) -> Value {
    json!({
        "code": UNSUPPORTED_VERSION,
        "message": format!("unsupported protocol version: {requested}"),
        "data": {"requested": requested, "supported": crate::supported()},
    })
}

fn busy() -> Response {
    status(
        503,
        "Service Unavailable",
        "every worker is busy; try again",
    )
    .header("Retry-After", "1")
}

/// The memory could not be opened (a broken agent file): the error's one
/// line, as the stdio server would have said it at its start.
fn failed(e: axe_base::error::Error) -> Response {
    status(500, "Internal Server Error", &e.to_string())
}

fn failed_io(e: std::io::Error) -> Response {
    status(500, "Internal Server Error", &format!("no session id: {e}"))
}
