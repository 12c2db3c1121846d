//! The few HTTP exchanges OAuth makes: a JSON document fetched, a form or
//! JSON posted, each answer bounded in size and time.

use std::io::Read;
use std::time::Instant;

use axe_net::{Client, Method};
use serde_json::Value;

use super::OAuthError;

/// Far past any metadata document or token answer.
const MAX_BODY: u64 = 256 << 10;

/// An answer: its status and its body as JSON (`Null` when it is not).
pub struct Answer {
    pub status: u16,
    pub json: Value,
    pub www_authenticate: Option<String>,
    /// An MCP server's `Mcp-Session-Id`, for the login's probe.
    pub session_id: Option<String>,
}

impl Answer {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The OAuth error of a refused request (`error`, `error_description`),
    /// or its status: what a message may say of it.
    pub fn refusal(&self) -> String {
        let field = |k: &str| self.json[k].as_str().map(super::clean);
        match (field("error"), field("error_description")) {
            (Some(e), Some(d)) => format!("HTTP {}: {e}: {d}", self.status),
            (Some(e), None) => format!("HTTP {}: {e}", self.status),
            _ => format!("HTTP {}", self.status),
        }
    }
}

pub fn get(client: &Client, url: &str, deadline: Instant) -> Result<Answer, OAuthError> {
    exchange(
        client,
        Method::Get,
        url,
        &[("accept", "application/json")],
        None,
        deadline,
    )
}

/// POSTs `body` of `content_type` with `headers` beside.
pub fn post(
    client: &Client,
    url: &str,
    content_type: &str,
    headers: &[(&str, &str)],
    body: &[u8],
    deadline: Instant,
) -> Result<Answer, OAuthError> {
    let mut all = vec![
        ("content-type", content_type),
        ("accept", "application/json"),
    ];
    all.extend_from_slice(headers);
    exchange(client, Method::Post, url, &all, Some(body), deadline)
}

fn exchange(
    client: &Client,
    method: Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
    deadline: Instant,
) -> Result<Answer, OAuthError> {
    let response = client
        .send(method, url, headers, body, deadline)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::TimedOut => format!("{url}: no answer in time"),
            _ => format!("{url}: {}", axe_base::error::describe_io(&e)),
        })?;
    let status = response.status;
    let www_authenticate = response.header("www-authenticate").map(str::to_owned);
    let session_id = response.header("mcp-session-id").map(str::to_owned);
    let mut bytes = Vec::new();
    response
        .into_reader()
        .take(MAX_BODY)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{url}: {}", axe_base::error::describe_io(&e)))?;
    Ok(Answer {
        status,
        json: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        www_authenticate,
        session_id,
    })
}
