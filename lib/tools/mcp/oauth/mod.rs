//! OAuth for remote MCP servers, as the MCP authorization spec has it and
//! Claude Code and Codex do it: the login (`axe agents mcp-login`) finds
//! the authorization server from the server's 401 (RFC 9728 protected
//! resource metadata, then RFC 8414 or OpenID metadata), registers
//! (dynamic registration, a client ID metadata document, or a configured
//! client id), runs the authorization-code flow with PKCE (S256) and a
//! loopback redirect, and keeps the tokens in a 0600 file under axe's
//! data directory, one per server URL. A run reads that file, sends its
//! access token, refreshes it when it has expired or is refused once,
//! and never asks anyone anything: a server that wants a login and has
//! none is an error saying so (`McpError::Unauthorized`).
//!
//! Tokens are secrets: they go into the token file and the
//! `Authorization` header, never into a message, a log or a ledger.

mod discover;
mod grant;
mod login;
mod pkce;
mod redirect;
mod register;
pub mod tokens;
mod url;
mod web;

use std::fmt;
use std::io;
use std::path::PathBuf;

pub use login::{Login, Opener, Outcome, login};
pub use register::Configured;
pub use tokens::{Session, token_file};

/// A run's OAuth for one HTTP server: its stored login, if there is one,
/// and the names a 401's message gives.
pub struct Auth {
    pub agent: String,
    pub server: String,
    pub session: Option<Session>,
}

/// What went wrong with a login or a refresh.
#[derive(Debug)]
pub enum OAuthError {
    /// What a server answered or failed to, in words (no token in them).
    Said(String),
    /// The token file `path` could not be read or written.
    File { path: PathBuf, source: io::Error },
}

impl fmt::Display for OAuthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OAuthError::Said(why) => f.write_str(why),
            OAuthError::File { path, source } => write!(
                f,
                "token file {}: {}",
                path.display(),
                axe_base::error::describe_io(source)
            ),
        }
    }
}

impl std::error::Error for OAuthError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            OAuthError::File { source, .. } => Some(source),
            OAuthError::Said(_) => None,
        }
    }
}

impl From<String> for OAuthError {
    fn from(why: String) -> OAuthError {
        OAuthError::Said(why)
    }
}

impl From<&str> for OAuthError {
    fn from(why: &str) -> OAuthError {
        OAuthError::Said(why.to_owned())
    }
}

/// The reason given when the stored login's token is refused even after a
/// refresh: the login is to be run again.
pub fn login_refused(agent: &str, server: &str, status: u16) -> String {
    format!(
        "HTTP {status}: the server refused the stored login's token; \
         log in again with `axe agents mcp-login {agent} {server}`"
    )
}

/// A server's text for a message: printable, one line, at most 300
/// characters.
pub(super) fn clean(text: &str) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(300)
        .collect();
    if text.chars().count() > 300 {
        out.push('…');
    }
    out.trim().to_owned()
}
