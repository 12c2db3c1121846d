//! What every transport gives a client: requests answered, notifications
//! sent, and an end.

use std::time::Instant;

use serde_json::Value;

use super::error::McpError;

/// Where a client's messages go and its answers come from.
pub trait Transport: Send + Sync {
    /// Sends request `message` (whose id is `id`) and waits until
    /// `deadline` for its answer.
    fn request(&self, id: u64, message: &Value, deadline: Instant) -> Result<Value, McpError>;
    fn notify(&self, message: &Value, deadline: Instant) -> Result<(), McpError>;
    /// The revision agreed at `initialize`, which HTTP requests name.
    fn negotiated(&self, _version: &str) {}
    /// Ends the session; bounded, never fails.
    fn close(&self);
}
