//! OpenAI-compatible gateways: servers that speak OpenAI's Chat
//! Completions wire under their own address and key variable, and
//! nothing else of their own. Each is one value here and one line in
//! `providers::ALL`; their replies' `usage.cost`, where they report it
//! (Requesty does, streamed too), is read as OpenRouter's is.

use super::body::Json;
use super::conversation::{Conversation, Reply, ResponseFormat};
use super::http::Failure;
use super::openai::OpenAi;
use super::stream::TextSink;
use super::wire::{Spec, Wire};
use axe_base::error::Category;

/// A gateway: its names and address; the wire is [`OpenAi`]'s.
pub struct Gateway {
    name: &'static str,
    base_url: &'static str,
    key_env: &'static str,
    /// Under the base URL: `/v1/chat/completions` for most.
    path: &'static str,
}

/// Requesty, a router over many providers' models (`requesty/openai/gpt-4o`).
pub const REQUESTY: Gateway = Gateway {
    name: "requesty",
    base_url: "https://router.requesty.ai",
    key_env: "REQUESTY_API_KEY",
    path: "/v1/chat/completions",
};

/// Atlas Cloud's hosted models.
pub const ATLASCLOUD: Gateway = Gateway {
    name: "atlascloud",
    base_url: "https://api.atlascloud.ai",
    key_env: "ATLASCLOUD_API_KEY",
    path: "/v1/chat/completions",
};

/// Eden AI, an EU gateway, whose API is versioned `/v3`.
pub const EDENAI: Gateway = Gateway {
    name: "edenai",
    base_url: "https://api.edenai.run",
    key_env: "EDENAI_API_KEY",
    path: "/v3/chat/completions",
};

impl Spec for Gateway {
    fn name(&self) -> &'static str {
        self.name
    }

    /// Without the version: it comes from the path, and a base URL given
    /// with it (as the gateways document theirs) means the same.
    fn default_base_url(&self) -> &'static str {
        self.base_url
    }

    fn key_env(&self) -> &'static str {
        self.key_env
    }

    fn honours(&self, format: &ResponseFormat) -> bool {
        OpenAi.honours(format)
    }
}

impl Wire for Gateway {
    fn path(&self) -> &'static str {
        self.path
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

    fn body<'a>(&self, model: &'a str, c: &'a Conversation, stream: bool) -> Json<'a> {
        OpenAi.body(model, c, stream)
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

    fn category(&self, status: u16) -> Category {
        OpenAi.category(status)
    }

    fn error_message(&self, body: &[u8]) -> Option<String> {
        OpenAi.error_message(body)
    }
}
