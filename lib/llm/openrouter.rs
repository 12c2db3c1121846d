//! OpenRouter: OpenAI's Chat Completions wire at
//! `POST https://openrouter.ai/api/v1/chat/completions`, with its own
//! default address, key variable, a few statuses of its own and the cost
//! of each call, which it reports when asked.

use serde_json::json;

use super::body::Json;
use super::conversation::{Conversation, Reply, ResponseFormat};
use super::http::Failure;
use super::openai::OpenAi;
use super::stream::TextSink;
use super::wire::{Spec, Wire};
use axe_base::error::Category;

/// OpenRouter's OpenAI-compatible API; everything but the names and the
/// statuses is [`OpenAi`]'s.
pub struct OpenRouter;

impl Spec for OpenRouter {
    fn name(&self) -> &'static str {
        "openrouter"
    }

    /// `/v1` comes from the path, as for OpenAI; a base URL given with it
    /// (`https://openrouter.ai/api/v1`, as OpenRouter documents it) means
    /// the same.
    fn default_base_url(&self) -> &'static str {
        "https://openrouter.ai/api"
    }

    fn key_env(&self) -> &'static str {
        "OPENROUTER_API_KEY"
    }

    fn honours(&self, format: &ResponseFormat) -> bool {
        OpenAi.honours(format)
    }
}

impl Wire for OpenRouter {
    fn path(&self) -> &'static str {
        OpenAi.path()
    }

    fn endpoint_end(&self) -> &'static str {
        OpenAi.endpoint_end()
    }

    fn api(&self) -> &'static str {
        OpenAi.api()
    }

    fn headers(&self, key: &str) -> Vec<(&'static str, String)> {
        OpenAi.headers(key)
    }

    /// OpenAI's, asking for the call's cost in `usage` too.
    fn body<'a>(&self, model: &'a str, c: &'a Conversation, stream: bool) -> Json<'a> {
        OpenAi
            .body(model, c, stream)
            .with("usage", Json::Owned(json!({"include": true})))
    }

    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure> {
        OpenAi.parse_reply(bytes)
    }

    fn read_stream(
        &self,
        body: &mut dyn std::io::Read,
        out: &mut TextSink,
    ) -> Result<Reply, Failure> {
        OpenAi.read_stream(body, out)
    }

    /// OpenRouter's own: 402 is an account out of credits, 408 a request
    /// that took too long upstream, 502 and 503 a model that is down or
    /// has no provider to serve it right now.
    fn category(&self, status: u16) -> Category {
        match status {
            402 => Category::Auth,
            408 => Category::Timeout,
            502 | 503 => Category::Overloaded,
            _ => OpenAi.category(status),
        }
    }

    /// `{"error": {"code": ..., "message": ...}}`, as OpenAI's.
    fn error_message(&self, body: &[u8]) -> Option<String> {
        OpenAi.error_message(body)
    }
}
