//! What can go wrong talking to an MCP server, typed, with its cause.
//!
//! As `axe_sync::SyncError` (docs/architecture.md, "Errors"): a variant
//! per failure, its cause reachable through
//! [`std::error::Error::source`], its `Display` the reason the model (a
//! failed call) or the user (a server that would not start) is shown,
//! after `MCP server "NAME" failed: ` or `failed to connect MCP server
//! "NAME": `. A reason that is only words (the server's own, or why the
//! connection ended, told to every waiter) is [`McpError::Said`].

use std::fmt;
use std::io;

use serde_json::Value;

// `Display` and `Error` by hand, not derived: a derived source of the
// boxed variants would be the `Box<McpError>`, not the `McpError` in it.
#[derive(Debug)]
pub enum McpError {
    /// A reason without a cause of its own.
    Said(String),
    /// Sending or reading failed: a timeout is the run's deadline, any
    /// other error says its OS reason.
    Io(io::Error),
    /// The server could not be started: `command` and why.
    Start { command: String, source: io::Error },
    /// The server answered outside 2xx: its status and the start of its
    /// body.
    Status { status: u16, body: String },
    /// The server wants authorization (HTTP 401): what its
    /// `WWW-Authenticate` asked for (the scheme, and the protected
    /// resource's metadata when it names it), and the agent's and the
    /// server's names once the client has filled them in, for the two
    /// ways in. The one place this is worded.
    Unauthorized {
        agent: String,
        server: String,
        scheme: String,
        metadata: Option<String>,
    },
    /// The server refused a login's token for want of scope (HTTP 403,
    /// `error="insufficient_scope"`, RFC 6750 3.1): the scopes it names,
    /// and the agent's and server's names as for `Unauthorized`, for the
    /// new login that asks for them.
    InsufficientScope {
        agent: String,
        server: String,
        scope: Option<String>,
    },
    /// A reply that is not JSON.
    NotJson(serde_json::Error),
    /// A message of ours that would not serialise.
    Encode(serde_json::Error),
    /// The server answered `method` with a JSON-RPC error.
    Rpc {
        method: String,
        code: Value,
        message: String,
    },
    /// The server answered `method` without a result.
    NoResult { method: String },
    /// The handshake agreed no revision we speak.
    Version(String),
    /// A call of a tool failed: the server `name`, and why.
    Server { name: String, source: Box<McpError> },
    /// The server started and shook hands, but listing its tools failed.
    ListTools(Box<McpError>),
    /// The server `name` could not be started, connected to or listed.
    Connect { name: String, source: Box<McpError> },
}

impl fmt::Display for McpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            McpError::Said(why) => f.write_str(why),
            McpError::Io(e) => match e.kind() {
                io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => {
                    f.write_str("no answer before the run's deadline")
                }
                _ => f.write_str(&axe_base::error::describe_io(e)),
            },
            McpError::Start { command, source } => {
                write!(f, "{command}: {}", axe_base::error::describe_io(source))
            }
            McpError::Status { status, body } => {
                let reason = axe_net::reason(*status)
                    .map(|r| format!(" {r}"))
                    .unwrap_or_default();
                match body.is_empty() {
                    true => write!(f, "HTTP {status}{reason}"),
                    false => write!(f, "HTTP {status}{reason}: {body}"),
                }
            }
            McpError::Unauthorized {
                agent,
                server,
                scheme,
                metadata,
            } => {
                f.write_str("HTTP 401 Unauthorized: the server asks for ")?;
                match scheme.is_empty() {
                    true => f.write_str("authorization")?,
                    false => write!(f, "{scheme} authorization")?,
                }
                if let Some(url) = metadata {
                    write!(f, " (OAuth; its resource metadata: {url})")?;
                }
                let server = if server.is_empty() { "SERVER" } else { server };
                let agent = if agent.is_empty() { "AGENT" } else { agent };
                write!(
                    f,
                    "; log in with `axe agents mcp-login {agent} {server}`, or give a token in \
                     the server's `headers` in the agent file \
                     (Authorization = \"Bearer ${{TOKEN}}\")"
                )
            }
            McpError::InsufficientScope {
                agent,
                server,
                scope,
            } => {
                let server = if server.is_empty() { "SERVER" } else { server };
                let agent = if agent.is_empty() { "AGENT" } else { agent };
                f.write_str(
                    "HTTP 403 Forbidden: the server needs a scope the login does not have",
                )?;
                match scope {
                    Some(scope) => write!(
                        f,
                        " ({scope:?}); log in again asking for it: `axe agents mcp-login {agent} {server} --scope {scope:?}`"
                    ),
                    None => write!(f, "; log in again: `axe agents mcp-login {agent} {server}`"),
                }
            }
            McpError::NotJson(e) => write!(f, "the reply is not JSON: {e}"),
            McpError::Encode(e) => e.fmt(f),
            McpError::Rpc {
                method,
                code,
                message,
            } => write!(f, "{method}: error {code}: {message}"),
            McpError::NoResult { method } => write!(f, "{method}: the answer has no result"),
            McpError::Version(version) => write!(
                f,
                "it speaks protocol version {version:?}, not one of {}",
                super::VERSIONS.join(", ")
            ),
            McpError::Server { name, source } => {
                write!(f, "MCP server \"{name}\" failed: {source}")
            }
            McpError::ListTools(source) => write!(f, "failed to list its tools: {source}"),
            McpError::Connect { name, source } => {
                write!(f, "failed to connect MCP server \"{name}\": {source}")
            }
        }
    }
}

impl std::error::Error for McpError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            McpError::Io(e) | McpError::Start { source: e, .. } => Some(e),
            McpError::NotJson(e) | McpError::Encode(e) => Some(e),
            McpError::Server { source, .. }
            | McpError::Connect { source, .. }
            | McpError::ListTools(source) => Some(&**source),
            _ => None,
        }
    }
}

impl McpError {
    /// A 401 with `WWW-Authenticate: challenge`: its scheme, and the
    /// `resource_metadata` parameter where it gives one (RFC 9728).
    pub fn unauthorized(challenge: &str) -> McpError {
        let challenge = challenge.trim();
        let (scheme, params) = challenge
            .split_once(char::is_whitespace)
            .unwrap_or((challenge, ""));
        McpError::Unauthorized {
            agent: String::new(),
            server: String::new(),
            scheme: super::oauth::clean(scheme),
            metadata: parameter(params, "resource_metadata").map(|m| super::oauth::clean(&m)),
        }
    }

    /// A 403 with `WWW-Authenticate: challenge`, when it says
    /// `insufficient_scope`: the scopes it names.
    pub fn insufficient_scope(challenge: &str) -> Option<McpError> {
        let challenge = challenge.trim();
        let (scheme, params) = challenge
            .split_once(char::is_whitespace)
            .unwrap_or((challenge, ""));
        let refused = scheme.eq_ignore_ascii_case("bearer")
            && parameter(params, "error").is_some_and(|e| e == "insufficient_scope");
        refused.then(|| McpError::InsufficientScope {
            agent: String::new(),
            server: String::new(),
            scope: parameter(params, "scope")
                .map(|s| super::oauth::clean(&s))
                .filter(|s| !s.is_empty()),
        })
    }

    /// This error with the server's `name` where it names the server.
    pub fn of_server(self, name: &str) -> McpError {
        match self {
            McpError::InsufficientScope { agent, scope, .. } => McpError::InsufficientScope {
                agent,
                server: name.to_owned(),
                scope,
            },
            McpError::Unauthorized {
                agent,
                scheme,
                metadata,
                ..
            } => McpError::Unauthorized {
                agent,
                server: name.to_owned(),
                scheme,
                metadata,
            },
            other => other,
        }
    }

    /// This error with the agent's and the server's names.
    pub fn of(self, agent: &str, server: &str) -> McpError {
        match self.of_server(server) {
            McpError::InsufficientScope { server, scope, .. } => McpError::InsufficientScope {
                agent: agent.to_owned(),
                server,
                scope,
            },
            McpError::Unauthorized {
                server,
                scheme,
                metadata,
                ..
            } => McpError::Unauthorized {
                agent: agent.to_owned(),
                server,
                scheme,
                metadata,
            },
            other => other,
        }
    }
}

/// Parameter `name` of a challenge's `params` (`a="x", b=y`), unquoted.
fn parameter(params: &str, name: &str) -> Option<String> {
    let mut rest = params;
    loop {
        let (key, after) = rest.split_once('=')?;
        let key = key.trim().trim_start_matches(',').trim();
        let after = after.trim_start();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let end = quoted.find('"')?;
                (&quoted[..end], &quoted[end + 1..])
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim(), &after[end..])
            }
        };
        if key.eq_ignore_ascii_case(name) {
            return Some(value.to_owned()).filter(|v| !v.is_empty());
        }
        rest = next;
    }
}

impl From<String> for McpError {
    fn from(why: String) -> McpError {
        McpError::Said(why)
    }
}

impl From<&str> for McpError {
    fn from(why: &str) -> McpError {
        McpError::Said(why.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_401_says_what_the_server_asked_for_and_the_ways_in() {
        let e = McpError::unauthorized(
            "Bearer realm=\"mcp\", resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource\", scope=files",
        )
        .of_server("remote");
        assert_eq!(
            e.to_string(),
            "HTTP 401 Unauthorized: the server asks for Bearer authorization (OAuth; its \
             resource metadata: http://127.0.0.1:9/.well-known/oauth-protected-resource); \
             log in with `axe agents mcp-login AGENT remote`, or give a token in the \
             server's `headers` in the agent file (Authorization = \"Bearer ${TOKEN}\")"
        );
        let McpError::Unauthorized { metadata, .. } = McpError::unauthorized("Basic realm=x")
        else {
            panic!("not a 401");
        };
        assert_eq!(metadata, None);
        assert_eq!(
            parameter("a=1, scope=\"x y\"", "scope").as_deref(),
            Some("x y")
        );
        assert!(
            McpError::unauthorized("")
                .to_string()
                .contains("asks for authorization;")
        );
    }
}
