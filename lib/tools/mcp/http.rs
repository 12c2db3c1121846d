//! The streamable HTTP transport: each message is a POST to the one
//! endpoint; a request's answer is the reply's JSON, or comes as one of the
//! events of a `text/event-stream` reply, read until the one with the
//! request's id. The `Mcp-Session-Id` the server gives at `initialize` goes
//! with every later request, beside `MCP-Protocol-Version`, and a DELETE
//! ends the session when the run ends (the stateless revision has no
//! session: its requests carry their own headers).
//!
//! A request the server sends on a call's stream is answered at once, by
//! a POST of its own (`ping`; anything else is a method we do not offer),
//! as stdio answers it. A stream the server closes before the answer,
//! after an event with an id, is resumed (SEP-1699): after its `retry`
//! hint, a GET with `Last-Event-ID` reads on where it stopped.
//!
//! Also the HTTP pieces the legacy SSE transport shares.

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axe_base::lock::Recover;
use axe_net::{Client, Method, Response};
use serde_json::Value;

use super::error::McpError;
use super::events;
use super::jsonrpc::MAX_LINE;
use super::oauth::{self, Auth};
use super::pending;
use super::transport::Transport;

/// The longest a DELETE at the end may hold up the end of the run.
const GOODBYE: Duration = Duration::from_secs(2);

/// How long to wait before resuming a stream whose server gave an event
/// id but no `retry` hint.
const RETRY: Duration = Duration::from_secs(1);

/// The most times one request's stream is resumed: a server that closes
/// every stream at once is not waited on for ever, even before the
/// deadline.
const MAX_RESUMES: usize = 20;

/// The longest answering a server's own request may take.
const ANSWER: Duration = Duration::from_secs(5);

pub struct Http {
    client: Client,
    url: String,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
    /// The stateless revision: no session is kept or ended.
    stateless: AtomicBool,
    /// The stored OAuth login, and the names a 401's message gives.
    auth: Option<Arc<Auth>>,
}

impl Http {
    /// A server at `url`, spoken to through `client` (the run's, which
    /// keeps the connection alive: every message is a POST to one URL).
    pub fn new(url: &str, headers: Vec<(String, String)>, client: Client) -> Http {
        Http {
            client,
            url: url.to_owned(),
            headers,
            session: Mutex::new(None),
            version: Mutex::new(None),
            stateless: AtomicBool::new(false),
            auth: None,
        }
    }

    pub fn with_auth(mut self, auth: Option<Arc<Auth>>) -> Http {
        self.auth = auth;
        self
    }

    /// The stored login's `Authorization`, when there is one.
    fn bearer(&self, deadline: Instant) -> Option<(String, String)> {
        let session = self.auth.as_ref()?.session.as_ref()?;
        Some(("authorization".to_owned(), session.bearer(deadline)))
    }

    /// POSTs `message` with the request's own `extra` headers, and the
    /// stored login's token (refreshed once when refused); the reply
    /// whatever its status.
    fn post(
        &self,
        message: &Value,
        extra: &[(String, String)],
        deadline: Instant,
    ) -> Result<Response, McpError> {
        let mut headers = self.headers.clone();
        headers.push((
            "accept".into(),
            "application/json, text/event-stream".into(),
        ));
        headers.push(("content-type".into(), "application/json".into()));
        headers.extend(self.state_headers());
        headers.extend(extra.iter().cloned());
        let body = serde_json::to_vec(message).map_err(McpError::Encode)?;
        let mut refreshed = false;
        let response = loop {
            let mut headers = headers.clone();
            headers.extend(self.bearer(deadline));
            let response = send_any(
                &self.client,
                Method::Post,
                &self.url,
                &headers,
                Some(&body),
                deadline,
            )?;
            let Some(auth) = self.auth.as_ref().filter(|_| response.status == 401) else {
                break response;
            };
            // Refreshed once, then the login is to be made again.
            match &auth.session {
                Some(session) if !refreshed && session.refresh(deadline).is_ok() => {
                    refreshed = true
                }
                Some(_) => {
                    return Err(oauth::login_refused(&auth.agent, &auth.server, 401).into());
                }
                None => {
                    let asked = response.header("www-authenticate").unwrap_or_default();
                    return Err(McpError::unauthorized(asked).of(&auth.agent, &auth.server));
                }
            }
        };
        // A session begins at `initialize`: not at the probe before it,
        // nor in the stateless revision, which has none.
        if let Some(id) = response.header("mcp-session-id")
            && !self.stateless.load(Ordering::Relaxed)
            && message["method"] != "server/discover"
        {
            *lock(&self.session) = Some(id.to_owned());
        }
        Ok(response)
    }

    /// Answers the server's own request on a call's stream, as a POST of
    /// its own, briefly: a server that does not take it loses it.
    fn answer(&self, message: &Value, deadline: Instant) {
        let (Some(method), Some(id)) = (message["method"].as_str(), message.get("id")) else {
            return;
        };
        let reply = pending::answer(method, id.clone());
        let soon = deadline.min(Instant::now() + ANSWER);
        if let Ok(response) = self.post(&reply, &[], soon) {
            drop(response.into_reader());
        }
    }

    /// A GET that resumes the event stream after event `last`.
    fn resume(&self, last: &str, deadline: Instant) -> Result<Response, McpError> {
        let mut headers = self.headers.clone();
        headers.push(("accept".into(), "text/event-stream".into()));
        headers.extend(self.state_headers());
        headers.push(("last-event-id".into(), last.to_owned()));
        headers.extend(self.bearer(deadline));
        send(
            &self.client,
            Method::Get,
            &self.url,
            &headers,
            None,
            deadline,
        )
        .map_err(|e| match &self.auth {
            Some(auth) => e.of(&auth.agent, &auth.server),
            None => e,
        })
    }

    /// Reads `response`'s events until the answer to `id`, answering the
    /// server's requests on the way, and resuming the stream when the
    /// server closes it after an event with an id.
    fn read_stream(
        &self,
        id: u64,
        response: Response,
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let mut events = events::reader(response.into_reader());
        let mut resumes = 0;
        loop {
            let event = match events.next() {
                Ok(Some(event)) => event,
                Ok(None) => {
                    let Some(last) = events.last_id().map(str::to_owned) else {
                        return Err("the reply's stream ended before the answer".into());
                    };
                    resumes += 1;
                    if resumes > MAX_RESUMES {
                        return Err(format!(
                            "the reply's stream ended before the answer, {MAX_RESUMES} times"
                        )
                        .into());
                    }
                    let wait = events.retry().unwrap_or(RETRY);
                    if Instant::now()
                        .checked_add(wait)
                        .is_none_or(|then| then >= deadline)
                    {
                        return Err("no answer before the run's deadline".into());
                    }
                    std::thread::sleep(wait);
                    let retry = events.retry();
                    let resumed = self.resume(&last, deadline).map_err(|e| {
                        McpError::Said(format!(
                            "the reply's stream ended before the answer, and resuming it failed: {e}"
                        ))
                    })?;
                    // The id and hint carry over until the new stream
                    // gives its own.
                    events = events::reader(resumed.into_reader()).after(&last, retry);
                    continue;
                }
                Err(e) => return Err(McpError::Io(e)),
            };
            let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                continue;
            };
            if message.get("method").is_some() {
                // A request of the server's is answered; a notification
                // (progress, logs) is not.
                self.answer(&message, deadline);
                continue;
            }
            if message["id"] == id {
                return Ok(message);
            }
        }
    }

    /// The session and the protocol version, once there are.
    fn state_headers(&self) -> Vec<(String, String)> {
        let session = lock(&self.session).clone();
        let version = lock(&self.version).clone();
        session
            .map(|s| ("mcp-session-id".to_owned(), s))
            .into_iter()
            .chain(version.map(|v| ("mcp-protocol-version".to_owned(), v)))
            .collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().recover()
}

impl Transport for Http {
    fn request(
        &self,
        id: u64,
        message: &Value,
        headers: &[(String, String)],
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let response = self.post(message, headers, deadline)?;
        if !(200..300).contains(&response.status) {
            // A refusal names the login to make again.
            return refused(response, Some(id)).map_err(|e| match &self.auth {
                Some(auth) => e.of(&auth.agent, &auth.server),
                None => e,
            });
        }
        let stream = response
            .header("content-type")
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
        if !stream {
            let answer: Value =
                serde_json::from_slice(&read_body(response)?).map_err(McpError::NotJson)?;
            return match answer {
                Value::Array(batch) => batch
                    .into_iter()
                    .find(|m| m["id"] == id)
                    .ok_or_else(|| "the reply does not answer the request".into()),
                answer => Ok(answer),
            };
        }
        self.read_stream(id, response, deadline)
    }

    fn notify(&self, message: &Value, deadline: Instant) -> Result<(), McpError> {
        let response = self.post(message, &[], deadline)?;
        match (200..300).contains(&response.status) {
            true => Ok(()),
            false => refused(response, None).map(drop),
        }
    }

    fn negotiated(&self, version: &str) {
        *lock(&self.version) = Some(version.to_owned());
    }

    fn stateless(&self) {
        self.stateless.store(true, Ordering::Relaxed);
        *lock(&self.session) = None;
    }

    fn discovers(&self) -> bool {
        true
    }

    fn close(&self) {
        let mut headers = self.headers.clone();
        let state = self.state_headers();
        if !state.iter().any(|(k, _)| k == "mcp-session-id") {
            return;
        }
        headers.extend(state);
        headers.extend(self.bearer(Instant::now() + GOODBYE));
        let _ = send(
            &self.client,
            Method::Delete,
            &self.url,
            &headers,
            None,
            Instant::now() + GOODBYE,
        );
    }
}

/// Sends `method` to `url` with `headers` (and `body`) before `deadline`,
/// redirects not followed; an answer outside 2xx is an error with its
/// status and the start of its body.
pub fn send(
    client: &Client,
    method: Method,
    url: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    deadline: Instant,
) -> Result<Response, McpError> {
    let response = send_any(client, method, url, headers, body, deadline)?;
    match (200..300).contains(&response.status) {
        true => Ok(response),
        // Without an id no error body is an answer: always an error.
        false => refused(response, None).and(Err("no answer".into())),
    }
}

/// [`send`], whatever the answer's status.
fn send_any(
    client: &Client,
    method: Method,
    url: &str,
    headers: &[(String, String)],
    body: Option<&[u8]>,
    deadline: Instant,
) -> Result<Response, McpError> {
    if deadline <= Instant::now() {
        return Err("no time left before the run's deadline".into());
    }
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_str()))
        .collect();
    client
        .send(method, url, &headers, body, deadline)
        .map_err(McpError::Io)
}

/// An answer outside 2xx: a JSON-RPC error for request `id` in its body
/// is the answer (the stateless revision answers a version it does not
/// speak with 400 and -32022), for the client to read; else an error: a
/// 401 says what the server asked for, anything else is its status and
/// the start of its body.
fn refused(response: Response, id: Option<u64>) -> Result<Value, McpError> {
    let status = response.status;
    if status == 401 {
        return Err(McpError::unauthorized(
            response.header("www-authenticate").unwrap_or_default(),
        ));
    }
    if status == 403
        && let Some(e) =
            McpError::insufficient_scope(response.header("www-authenticate").unwrap_or_default())
    {
        return Err(e);
    }
    let json = response
        .header("content-type")
        .is_some_and(|t| t.to_ascii_lowercase().starts_with("application/json"));
    let mut body = Vec::new();
    let _ = response
        .into_reader()
        .take(MAX_REFUSAL)
        .read_to_end(&mut body);
    if let (true, Some(id)) = (json, id)
        && let Ok(message) = serde_json::from_slice::<Value>(&body)
        && message.get("error").is_some_and(Value::is_object)
        && (message["id"] == id || message["id"].is_null())
    {
        return Ok(message);
    }
    let start = &body[..body.len().min(200)];
    let body = String::from_utf8_lossy(start).trim().to_owned();
    Err(McpError::Status { status, body })
}

/// The most of a refusal's body read: an error message is short.
const MAX_REFUSAL: u64 = 64 << 10;

/// A body of at most [`MAX_LINE`] bytes, as every message.
fn read_body(response: Response) -> Result<Vec<u8>, McpError> {
    let mut body = Vec::new();
    response
        .into_reader()
        .take(MAX_LINE as u64 + 1)
        .read_to_end(&mut body)
        .map_err(McpError::Io)?;
    if body.len() > MAX_LINE {
        return Err(format!("a reply over {} MiB", MAX_LINE >> 20).into());
    }
    Ok(body)
}
