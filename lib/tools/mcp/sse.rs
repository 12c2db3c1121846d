//! The legacy SSE transport (revision 2024-11-05): a GET opens an event
//! stream whose first `endpoint` event names where to POST messages
//! (resolved against the stream's URL, and only on the same origin, so a
//! server cannot send our headers elsewhere); answers come back on the
//! stream, which a thread reads until the run ends.

use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, channel};
use std::thread;
use std::time::Instant;

use axe_net::url;
use axe_net::{Client, Method};
use serde_json::Value;

use super::error::McpError;
use super::events;
use super::http::send;
use super::pending::Pending;
use super::transport::Transport;

pub struct Sse {
    client: Client,
    endpoint: String,
    headers: Vec<(String, String)>,
    pending: Arc<Pending>,
}

impl Sse {
    /// Opens the stream at `url` and waits for its endpoint; the stream
    /// is read until `deadline`, the run's.
    pub fn connect(
        url: &str,
        headers: Vec<(String, String)>,
        deadline: Instant,
        client: &Client,
    ) -> Result<Sse, McpError> {
        let mut get = headers.clone();
        get.push(("accept".into(), "text/event-stream".into()));
        // The run's: the stream holds one of its connections for the run,
        // and the POSTs are kept alive on another.
        let client = client.clone();
        let response = send(&client, Method::Get, url, &get, None, deadline)?;
        let pending = Arc::new(Pending::default());
        let (found, endpoint) = channel();
        let (base, reader_pending, post_headers, reader_client) = (
            url.to_owned(),
            Arc::clone(&pending),
            headers.clone(),
            client.clone(),
        );
        thread::spawn(move || {
            let mut stream = events::reader(response.into_reader());
            let mut post_to: Option<String> = None;
            let why = loop {
                let event = match stream.next() {
                    Ok(Some(event)) => event,
                    Ok(None) => break "the server closed the event stream".to_owned(),
                    Err(e) => break McpError::Io(e).to_string(),
                };
                match (&post_to, event.name.as_str()) {
                    (None, "endpoint") => match resolve(&base, event.data.trim()) {
                        Ok(url) => {
                            let _ = found.send(Ok(url.clone()));
                            post_to = Some(url);
                        }
                        Err(e) => {
                            let why = e.to_string();
                            let _ = found.send(Err(e));
                            break why;
                        }
                    },
                    (Some(url), "message") => {
                        let Ok(message) = serde_json::from_str::<Value>(&event.data) else {
                            continue;
                        };
                        let reply = |answer: Value| {
                            let _ =
                                post(&reader_client, url, &post_headers, &answer, deadline_soon());
                        };
                        reader_pending.handle(message, &reply);
                    }
                    _ => {}
                }
            };
            reader_pending.end(why);
        });
        let left = deadline.saturating_duration_since(Instant::now());
        let endpoint = match endpoint.recv_timeout(left) {
            Ok(found) => found?,
            // The reader ended first and said why.
            Err(RecvTimeoutError::Disconnected) => return Err(pending.why_ended().into()),
            Err(RecvTimeoutError::Timeout) => {
                return Err("no endpoint event before the run's deadline".into());
            }
        };
        Ok(Sse {
            client,
            endpoint,
            headers,
            pending,
        })
    }
}

/// A little time for answering a server's request from the reader.
fn deadline_soon() -> Instant {
    Instant::now() + std::time::Duration::from_secs(5)
}

fn post(
    client: &Client,
    url: &str,
    headers: &[(String, String)],
    message: &Value,
    deadline: Instant,
) -> Result<(), McpError> {
    let mut headers = headers.to_vec();
    headers.push(("content-type".into(), "application/json".into()));
    let body = serde_json::to_vec(message).map_err(McpError::Encode)?;
    send(client, Method::Post, url, &headers, Some(&body), deadline).map(drop)
}

impl Transport for Sse {
    fn request(
        &self,
        id: u64,
        message: &Value,
        _headers: &[(String, String)],
        deadline: Instant,
    ) -> Result<Value, McpError> {
        let rx = self.pending.expect(id)?;
        if let Err(e) = post(
            &self.client,
            &self.endpoint,
            &self.headers,
            message,
            deadline,
        ) {
            self.pending.forget(id);
            return Err(e);
        }
        self.pending.wait(id, &rx, deadline)
    }

    fn notify(&self, message: &Value, deadline: Instant) -> Result<(), McpError> {
        post(
            &self.client,
            &self.endpoint,
            &self.headers,
            message,
            deadline,
        )
    }

    fn close(&self) {
        // The stream's thread ends with the run's deadline or the process;
        // the legacy transport has no message to end a session.
        self.pending.end("the client closed".into());
    }
}

/// The `endpoint` event's URL resolved against the stream's `base` (a
/// full URL, a path from the root, or one relative to the stream's
/// directory); refused unless it has the stream's scheme, host and port.
fn resolve(base: &str, endpoint: &str) -> Result<String, McpError> {
    let base = url::Url::parse(base).map_err(|_| "the stream's URL has no host")?;
    let from = origin(&base).ok_or("the stream's URL has no host")?;
    let url = base
        .join(endpoint)
        .map_err(|e| format!("the endpoint event names no URL ({endpoint:?}): {e}"))?;
    if origin(&url).is_some_and(|o| o == from) {
        Ok(url.into())
    } else {
        Err(format!("the endpoint event names another origin ({endpoint:?}), not {from}").into())
    }
}

/// `scheme://host:port` of `url`, the port made explicit; none for a URL
/// with a user name or without a host.
fn origin(url: &url::Url) -> Option<String> {
    let host = url.host_str().filter(|h| !h.is_empty())?;
    if !url.username().is_empty() || url.password().is_some() {
        return None;
    }
    let port = url.port_or_known_default()?;
    Some(format!("{}://{host}:{port}", url.scheme()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_resolve_on_the_same_origin_only() {
        let base = "http://127.0.0.1:3001/sse";
        assert_eq!(
            resolve(base, "/message?sessionId=1").unwrap(),
            "http://127.0.0.1:3001/message?sessionId=1"
        );
        assert_eq!(
            resolve("http://h/a/sse?x=1", "m?s=2").unwrap(),
            "http://h/a/m?s=2"
        );
        assert_eq!(
            resolve("http://h:80/sse", "http://h/m").unwrap(),
            "http://h/m"
        );
        for elsewhere in [
            "http://evil/m",
            "https://127.0.0.1:3001/m",
            "http://127.0.0.1:3002/m",
        ] {
            assert!(resolve(base, elsewhere).is_err(), "{elsewhere}");
        }
    }
}
