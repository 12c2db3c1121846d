//! What a provider is: one value implementing [`Wire`], which knows its
//! provider's request and reply formats, its stream format, its error
//! bodies and how its HTTP statuses map to error categories. The transport
//! (`http.rs`) and the call loop (`complete`) know nothing of any provider.

use std::io::Read;

use serde_json::Value;

use super::body::Json;
use super::conversation::{Conversation, Reply, ResponseFormat};
use super::http::Failure;
use super::stream::TextSink;
use axe_base::error::Category;

/// What a provider is known by before any call: its name, where it is,
/// its key, what it can be asked. Apart from [`Wire`] so that a program
/// that only checks model strings (the small whole programs check agent
/// files) links none of the providers' request and reply code, which a
/// table of whole `Wire`s would keep reachable through their vtables.
pub trait Spec: Sync {
    /// The name in model strings: `anthropic` in `anthropic/claude-...`.
    fn name(&self) -> &'static str;

    /// Where calls go when neither `AXE_<NAME>_BASE_URL` nor `base_url` is
    /// set.
    fn default_base_url(&self) -> &'static str;

    /// The environment variable that holds the key.
    fn key_env(&self) -> &'static str;

    /// Whether a call without a key is refused before it is made.
    fn needs_key(&self) -> bool {
        true
    }

    /// Whether the API at [`Wire::default_base_url`] may serve `model`:
    /// false only for a name that is plainly none of its models, which a
    /// server of the user's own speaking this wire must then be running.
    fn hosts(&self, _model: &str) -> bool {
        true
    }

    /// The `max_tokens` a request carries when the caller set none (0):
    /// none, unless the API requires one.
    fn default_max_tokens(&self) -> Option<u64> {
        None
    }

    /// Whether the body can ask for answers of this shape. Free text
    /// needs no asking; a provider with a JSON mode says so (Anthropic
    /// has none).
    fn honours(&self, format: &ResponseFormat) -> bool {
        !format.is_json()
    }
}

/// One provider's wire format. Adding a provider is a module implementing
/// this and [`Spec`], and one line in [`super::providers::ALL`] and
/// [`super::providers::WIRES`].
pub trait Wire: Spec {
    /// Where calls go under the base URL: `/v1/chat/completions`.
    fn path(&self) -> &'static str;

    /// How a URL that is already this API's endpoint ends
    /// (`/chat/completions`): a base URL ending so is used as it is, as
    /// the servers that document their whole endpoint URL mean it.
    fn endpoint_end(&self) -> &'static str;

    /// `base` less what [`Wire::path_tail`] adds, when a whole call URL
    /// was given as the base URL: nothing, unless the URL names the model.
    fn strip_tail<'a>(&self, base: &'a str) -> &'a str {
        base
    }

    /// The API its replies come from, with its article, for an answer
    /// that is plainly not one: `an OpenAI Chat Completions API`.
    fn api(&self) -> &'static str;

    /// What follows [`Wire::path`] for a call to `model`: nothing, unless
    /// the URL names the model (Gemini's does).
    fn path_tail(&self, _model: &str, _stream: bool) -> String {
        String::new()
    }

    /// The headers of every call; `key` is empty when none is configured
    /// for a server of the user's own, which then gets no auth header.
    fn headers(&self, key: &str) -> Vec<(&'static str, String)>;

    /// The JSON body for `model`, borrowing the conversation's text.
    fn body<'a>(&self, model: &'a str, c: &'a Conversation, stream: bool) -> Json<'a>;

    /// A whole (not streamed) reply.
    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure>;

    /// A streamed reply, its text handed to `out` as it arrives; an error
    /// when the stream ends before the provider's end marker.
    fn read_stream(&self, body: &mut dyn Read, out: &mut TextSink) -> Result<Reply, Failure>;

    /// The category of an answer with HTTP status `status` (outside 2xx).
    fn category(&self, status: u16) -> Category;

    /// The provider's own text in an error body, when it has some.
    fn error_message(&self, body: &[u8]) -> Option<String>;

    /// What to say instead of `connection refused`, when there is a more
    /// helpful thing to say (a local server that is not running).
    fn refused(&self, _base_url: &str) -> Option<String> {
        None
    }
}

/// The provider's error text at `pointer` (a JSON pointer) in an error
/// body, when there is some.
pub fn error_text(body: &[u8], pointer: &str) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let text = v.pointer(pointer)?.as_str()?;
    (!text.is_empty()).then(|| text.to_owned())
}
