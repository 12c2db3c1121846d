//! The streamable HTTP transport: each message is a POST to the one
//! endpoint; a request's answer is the reply's JSON, or comes as one of the
//! events of a `text/event-stream` reply, read until the one with the
//! request's id. The `Mcp-Session-Id` the server gives at `initialize` goes
//! with every later request, beside `MCP-Protocol-Version`, and a DELETE
//! ends the session when the run ends.
//!
//! Also the HTTP pieces the legacy SSE transport shares.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axe_base::lock::Recover;
use axe_net::{Client, Method, Response};
use serde_json::Value;

use super::error::McpError;
use super::events;
use super::jsonrpc::MAX_LINE;
use super::oauth::{self, Auth};
use super::transport::Transport;

/// The longest a DELETE at the end may hold up the end of the run.
const GOODBYE: Duration = Duration::from_secs(2);

pub struct Http {
    client: Client,
    url: String,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
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

    fn post(&self, message: &Value, deadline: Instant) -> Result<Response, McpError> {
        let mut headers = self.headers.clone();
        headers.push((
            "accept".into(),
            "application/json, text/event-stream".into(),
        ));
        headers.push(("content-type".into(), "application/json".into()));
        headers.extend(self.state_headers());
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
                    let asked = response.header("www-authenticate");
                    return Err(oauth::wants_login(&auth.agent, &auth.server, asked).into());
                }
            }
        };
        let response = checked(response)?;
        if let Some(id) = response.header("mcp-session-id") {
            *lock(&self.session) = Some(id.to_owned());
        }
        Ok(response)
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
    fn request(&self, id: u64, message: &Value, deadline: Instant) -> Result<Value, McpError> {
        let response = self.post(message, deadline)?;
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
        let mut events = events::reader(response.into_reader());
        loop {
            let event = events
                .next()
                .map_err(McpError::Io)?
                .ok_or("the reply's stream ended before the answer")?;
            let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                continue;
            };
            // Notifications (progress, logs) and the server's own requests
            // may come first; only the answer matters here.
            if message["id"] == id && message.get("method").is_none() {
                return Ok(message);
            }
        }
    }

    fn notify(&self, message: &Value, deadline: Instant) -> Result<(), McpError> {
        self.post(message, deadline).map(drop)
    }

    fn negotiated(&self, version: &str) {
        *lock(&self.version) = Some(version.to_owned());
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
    checked(send_any(client, method, url, headers, body, deadline)?)
}

/// As [`send`], any status an answer.
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

/// `response` when it is 2xx, else an error with its status and the
/// start of its body.
fn checked(response: Response) -> Result<Response, McpError> {
    let status = response.status;
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let mut body = Vec::new();
    let _ = response.into_reader().take(200).read_to_end(&mut body);
    let body = String::from_utf8_lossy(&body).trim().to_owned();
    Err(McpError::Status { status, body })
}

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
