//! What every transport gives a client: requests answered, notifications
//! sent, and an end.

use std::time::Instant;

use serde_json::Value;

use super::error::McpError;

/// Where a client's messages go and its answers come from.
pub trait Transport: Send + Sync {
    /// Sends request `message` (whose id is `id`) and waits until
    /// `deadline` for its answer. `headers` are the request's own (the
    /// stateless revision's `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`):
    /// HTTP sends them, the other transports have none.
    fn request(
        &self,
        id: u64,
        message: &Value,
        headers: &[(String, String)],
        deadline: Instant,
    ) -> Result<Value, McpError>;
    fn notify(&self, message: &Value, deadline: Instant) -> Result<(), McpError>;
    /// The revision agreed at `initialize`, which HTTP requests name.
    fn negotiated(&self, _version: &str) {}
    /// The stateless revision was agreed: no session to keep or end.
    fn stateless(&self) {}
    /// Whether `server/discover` may be tried first: only where an old
    /// server is sure to refuse it harmlessly (streamable HTTP).
    fn discovers(&self) -> bool {
        false
    }
    /// Ends the session; bounded, never fails.
    fn close(&self);
}
