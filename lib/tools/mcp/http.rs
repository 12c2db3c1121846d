//! The streamable HTTP transport: each message is a POST to the one
//! endpoint; a request's answer is the reply's JSON, or comes as one of the
//! events of a `text/event-stream` reply, read until the one with the
//! request's id. The `Mcp-Session-Id` the server gives at `initialize` goes
//! with every later request, beside `MCP-Protocol-Version`, and a DELETE
//! ends the session when the run ends.
//!
//! Also the HTTP pieces the legacy SSE transport shares.

use std::io::{BufReader, Read};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::events;
use super::jsonrpc::MAX_LINE;
use super::transport::Transport;

/// The longest a DELETE at the end may hold up the end of the run.
const GOODBYE: Duration = Duration::from_secs(2);

pub struct Http {
    url: String,
    headers: Vec<(String, String)>,
    session: Mutex<Option<String>>,
    version: Mutex<Option<String>>,
}

impl Http {
    pub fn new(url: &str, headers: Vec<(String, String)>) -> Http {
        Http {
            url: url.to_owned(),
            headers,
            session: Mutex::new(None),
            version: Mutex::new(None),
        }
    }

    fn post(&self, message: &Value, deadline: Instant) -> Result<minreq::ResponseLazy, String> {
        let mut headers = self.headers.clone();
        headers.push((
            "accept".into(),
            "application/json, text/event-stream".into(),
        ));
        headers.push(("content-type".into(), "application/json".into()));
        headers.extend(self.state_headers());
        let body = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        let response = send(minreq::post(&self.url).with_body(body), &headers, deadline)?;
        if let Some(id) = header(&response, "mcp-session-id") {
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
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Transport for Http {
    fn request(&self, id: u64, message: &Value, deadline: Instant) -> Result<Value, String> {
        let response = self.post(message, deadline)?;
        let stream = header(&response, "content-type")
            .is_some_and(|t| t.to_ascii_lowercase().starts_with("text/event-stream"));
        if !stream {
            let answer: Value = serde_json::from_slice(&read_body(response)?)
                .map_err(|e| format!("the reply is not JSON: {e}"))?;
            return match answer {
                Value::Array(batch) => batch
                    .into_iter()
                    .find(|m| m["id"] == id)
                    .ok_or_else(|| "the reply does not answer the request".into()),
                answer => Ok(answer),
            };
        }
        let mut events = BufReader::new(response);
        loop {
            let event = events::next(&mut events)
                .map_err(|e| read_error(&e))?
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

    fn notify(&self, message: &Value, deadline: Instant) -> Result<(), String> {
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
        let _ = send(
            minreq::delete(&self.url),
            &headers,
            Instant::now() + GOODBYE,
        );
    }
}

/// Sends `request` with `headers` before `deadline`, redirects not
/// followed; an answer outside 2xx is an error with its status and the
/// start of its body.
pub fn send(
    request: minreq::Request,
    headers: &[(String, String)],
    deadline: Instant,
) -> Result<minreq::ResponseLazy, String> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err("no time left before the run's deadline".into());
    }
    // minreq counts whole seconds: round up; the deadline of the wait
    // for an answer is kept exactly by the caller.
    let seconds = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    let mut request = request.with_timeout(seconds).with_follow_redirects(false);
    for (name, value) in headers {
        request = request.with_header(name.as_str(), value.as_str());
    }
    let response = request.send_lazy().map_err(|e| match e {
        minreq::Error::IoError(e) => read_error(&e),
        other => other.to_string(),
    })?;
    let status = response.status_code;
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let reason = response.reason_phrase.clone();
    let mut body = Vec::new();
    let _ = response.take(200).read_to_end(&mut body);
    let body = String::from_utf8_lossy(&body);
    let body = body.trim();
    Err(match body.is_empty() {
        true => format!("HTTP {status} {reason}"),
        false => format!("HTTP {status} {reason}: {body}"),
    })
}

/// A header of `response`, its name in any case.
fn header<'r>(response: &'r minreq::ResponseLazy, name: &str) -> Option<&'r str> {
    response
        .headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// A body of at most [`MAX_LINE`] bytes, as every message.
fn read_body(response: minreq::ResponseLazy) -> Result<Vec<u8>, String> {
    let mut body = Vec::new();
    response
        .take(MAX_LINE as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| read_error(&e))?;
    if body.len() > MAX_LINE {
        return Err(format!("a reply over {} MiB", MAX_LINE >> 20));
    }
    Ok(body)
}

/// An I/O error as a reason: a timeout says which.
pub fn read_error(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => {
            "no answer before the run's deadline".into()
        }
        _ => axe_base::error::describe_io(e),
    }
}
