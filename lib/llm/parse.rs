//! What every provider's reply parsing starts and ends with, whatever its
//! format: the body read as JSON, an error sent inside a stream, the
//! statuses most providers share, and the failures of a reply that holds
//! no answer. Their messages are the ones users and tests know.

use serde_json::Value;

use super::conversation::Reply;
use super::http::Failure;
use axe_base::error::Category;

/// A whole (unstreamed) reply body as JSON.
pub fn body(bytes: &[u8]) -> Result<Value, Failure> {
    serde_json::from_slice(bytes).map_err(bad_body)
}

/// A reply body that is not the JSON expected.
pub fn bad_body(e: serde_json::Error) -> Failure {
    Failure::Api(Category::Server, format!("failed to parse response: {e}"))
}

/// A reply that lacks `what` (its content, its choices, ...).
pub fn missing(what: &str) -> Failure {
    Failure::Api(Category::Server, format!("response contains no {what}"))
}

/// `reply`, unless it has neither text nor tool calls: that is no answer.
pub fn answered(reply: Reply) -> Result<Reply, Failure> {
    if reply.content.is_empty() && reply.tool_calls.is_empty() {
        return Err(missing("content"));
    }
    Ok(reply)
}

/// `{"error": {"message": ...}}` sent as a streamed chunk, as OpenAI's
/// and Gemini's servers do when a stream fails after it began.
pub fn stream_error(chunk: &Value) -> Option<Failure> {
    let error = chunk.get("error")?;
    let message = error["message"].as_str().unwrap_or("stream error");
    Some(Failure::Api(Category::Server, message.to_owned()))
}

/// The statuses OpenAI's API and the ones modelled on it share.
pub fn category(status: u16) -> Category {
    match status {
        401 | 403 => Category::Auth,
        400 | 404 => Category::BadRequest,
        429 => Category::RateLimit,
        _ => Category::Server,
    }
}
