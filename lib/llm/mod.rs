//! Talking to LLM providers: Anthropic, OpenAI-compatible servers, Ollama.
//!
//! A [`Conversation`] is provider-neutral (it is also the `--request` file
//! format of `axe-llm`); each wire module turns it into its provider's JSON
//! and the provider's reply back into a [`Reply`]. [`complete`] adds what
//! every call shares: one deadline for the whole call, retries, streaming,
//! the `<category>: <message>` errors, and keeping the API key out of
//! everything we print.

mod anthropic;
mod http;
mod ollama;
mod openai;
mod stream;

use std::fmt;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use http::Failure;
use stream::Redactor;

/// The providers axe speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    Anthropic,
    OpenAi,
    Ollama,
}

impl Provider {
    pub fn name(self) -> &'static str {
        match self {
            Provider::Anthropic => "anthropic",
            Provider::OpenAi => "openai",
            Provider::Ollama => "ollama",
        }
    }

    pub fn default_base_url(self) -> &'static str {
        match self {
            Provider::Anthropic => "https://api.anthropic.com",
            Provider::OpenAi => "https://api.openai.com",
            Provider::Ollama => "http://localhost:11434",
        }
    }

    pub fn needs_key(self) -> bool {
        self != Provider::Ollama
    }

    /// Where the key is looked for first.
    pub fn key_env(self) -> &'static str {
        match self {
            Provider::Anthropic => "ANTHROPIC_API_KEY",
            Provider::OpenAi => "OPENAI_API_KEY",
            Provider::Ollama => "OLLAMA_API_KEY",
        }
    }
}

/// Splits `provider/model-name` at the first `/` (Go's `parseModel`).
pub fn parse_model(model: &str) -> Result<(Provider, String)> {
    let Some((provider, name)) = model.split_once('/') else {
        return Err(Error::BadModel(format!(
            "invalid model format \"{model}\": expected provider/model-name"
        )));
    };
    if provider.is_empty() {
        return Err(Error::BadModel(format!(
            "invalid model format \"{model}\": empty provider"
        )));
    }
    if name.is_empty() {
        return Err(Error::BadModel(format!(
            "invalid model format \"{model}\": empty model name"
        )));
    }
    let provider = match provider {
        "anthropic" => Provider::Anthropic,
        "openai" => Provider::OpenAi,
        "ollama" => Provider::Ollama,
        other => return Err(Error::UnknownProvider(other.to_owned())),
    };
    Ok((provider, name.to_owned()))
}

/// What went wrong with a provider call, as Go's `ErrorCategory`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    Auth,
    RateLimit,
    Timeout,
    Overloaded,
    BadRequest,
    Server,
}

impl Category {
    /// A bad request is the caller's mistake (1); the rest are the API's (3).
    pub fn exit_code(self) -> u8 {
        match self {
            Category::BadRequest => 1,
            _ => 3,
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Category::Auth => "auth",
            Category::RateLimit => "rate_limit",
            Category::Timeout => "timeout",
            Category::Overloaded => "overloaded",
            Category::BadRequest => "bad_request",
            Category::Server => "server",
        })
    }
}

/// The provider's error text at `pointer` (a JSON pointer) in an error
/// body, when there is some.
fn error_text(body: &[u8], pointer: &str) -> Option<String> {
    let v: Value = serde_json::from_slice(body).ok()?;
    let text = v.pointer(pointer)?.as_str()?;
    (!text.is_empty()).then(|| text.to_owned())
}

/// The most of a provider's error text we show: servers have sent whole
/// HTML pages and megabytes of JSON, which no terminal line should carry.
const ERROR_TEXT_LIMIT: usize = 1000;

pub(crate) fn api_error(category: Category, message: impl Into<String>) -> Error {
    let mut message = message.into();
    if let Some((cut, _)) = message.char_indices().nth(ERROR_TEXT_LIMIT) {
        let more = message[cut..].chars().count();
        message.truncate(cut);
        message.push_str(&format!("... ({more} more characters)"));
    }
    Error::Api { category, message }
}

/// A whole conversation, provider-neutral. This is the `--request` format.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Conversation {
    /// `provider/model-name`; `-m` overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default)]
    pub system: String,
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<ToolDef>,
    /// 0 is not sent.
    #[serde(default)]
    pub temperature: f64,
    /// 0 is not sent (Anthropic then gets 4096, which its API requires).
    #[serde(default)]
    pub max_tokens: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
    Tool,
}

/// One turn. An assistant turn may carry tool calls; a tool turn carries
/// the results of the calls before it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Message {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_results: Vec<ToolResult>,
}

impl Message {
    pub fn user(content: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_results: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolResult {
    pub call_id: String,
    pub content: String,
    #[serde(default)]
    pub is_error: bool,
}

/// A tool offered to the model; `parameters` is a JSON Schema object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDef {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default = "empty_schema")]
    pub parameters: Value,
}

fn empty_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// The model's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub model: String,
    pub content: String,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub stop_reason: String,
    pub tool_calls: Vec<ToolCall>,
}

/// Where to send a call.
#[derive(Clone)]
pub struct Endpoint {
    pub provider: Provider,
    /// Without `/v1`; the wire module adds its path.
    pub base_url: String,
    pub api_key: String,
}

impl fmt::Debug for Endpoint {
    /// Never the key, not even in a debug print.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Endpoint")
            .field("provider", &self.provider)
            .field("base_url", &self.base_url)
            .finish_non_exhaustive()
    }
}

/// When a call must be over, and the limit to name when it is not.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    pub at: Instant,
    pub limit: Duration,
}

impl Deadline {
    /// `limit` from now. Limits are at most [`crate::timeout::MAX_SECONDS`];
    /// a longer one is held to that rather than overflowing the clock.
    pub fn after(limit: Duration) -> Deadline {
        let limit = limit.min(Duration::from_secs(crate::timeout::MAX_SECONDS));
        let now = Instant::now();
        Deadline {
            at: now.checked_add(limit).unwrap_or(now),
            limit,
        }
    }

    /// The earlier of the two: a sub-agent's own limit inside the run's.
    pub fn min(self, other: Deadline) -> Deadline {
        if other.at < self.at { other } else { self }
    }
}

/// How to make a call.
#[derive(Debug, Clone)]
pub struct CallOptions {
    /// Bounds the whole call: connecting, every read, retries and waits.
    pub deadline: Deadline,
    /// Further attempts after a 429, 529, 5xx or dropped connection.
    pub retries: u32,
    pub stream: bool,
}

/// Sends `conversation` to `model` at `endpoint` and returns the reply.
/// With `options.stream`, text is handed to `on_text` as it arrives; the
/// reply is the same as without streaming.
pub fn complete(
    endpoint: &Endpoint,
    model: &str,
    conversation: &Conversation,
    options: &CallOptions,
    on_text: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<Reply> {
    let redactor = Redactor::new(&endpoint.api_key);
    let deadline = options.deadline.at;
    let body = match endpoint.provider {
        Provider::Anthropic => anthropic::body(model, conversation, options.stream),
        Provider::OpenAi => openai::body(model, conversation, options.stream),
        Provider::Ollama => ollama::body(model, conversation, options.stream),
    };
    let body = serde_json::to_vec(&body).expect("JSON values serialize");
    let (url, headers) = match endpoint.provider {
        Provider::Anthropic => anthropic::request(&endpoint.base_url, &endpoint.api_key),
        Provider::OpenAi => openai::request(&endpoint.base_url, &endpoint.api_key),
        Provider::Ollama => ollama::request(&endpoint.base_url),
    };
    let post = || http::post(&url, &headers, &body, deadline);
    let mut attempt = 0;
    loop {
        // Text already shown cannot be taken back, so a stream is retried
        // only when it failed before its first word.
        let mut shown = false;
        let mut sink = |text: &str| {
            shown = true;
            on_text(text)
        };
        let result = attempt_once(endpoint, model, &post, options, &redactor, &mut sink);
        let failure = match result {
            Ok(reply) => return Ok(redactor.reply(reply)),
            Err(f) => f,
        };
        let retry_in = match &failure {
            _ if attempt >= options.retries || shown => None,
            Failure::Status {
                status,
                retry_after,
                ..
            } if *status == 429 || *status == 529 || (500..600).contains(status) => {
                Some(retry_after.unwrap_or_else(|| http::backoff(attempt)))
            }
            Failure::Dropped { .. } => Some(http::backoff(attempt)),
            _ => None,
        };
        match retry_in {
            // A server's Retry-After can be any number: compare, never add.
            Some(wait) if wait < deadline.saturating_duration_since(Instant::now()) => {
                std::thread::sleep(wait);
                attempt += 1;
            }
            _ => return Err(redactor.error(failure.into_error(endpoint, options.deadline.limit))),
        }
    }
}

/// One attempt: `post` sends the request, the reply is read as the
/// provider writes it.
fn attempt_once(
    endpoint: &Endpoint,
    model: &str,
    post: &dyn Fn() -> Result<minreq::ResponseLazy, Failure>,
    options: &CallOptions,
    redactor: &Redactor,
    on_text: &mut dyn FnMut(&str) -> std::io::Result<()>,
) -> Result<Reply, Failure> {
    let response = post()?;
    let mut reply = if options.stream {
        let mut out = redactor.stream(on_text);
        let reply = match endpoint.provider {
            Provider::Anthropic => anthropic::read_stream(response, &mut out)?,
            Provider::OpenAi => openai::read_stream(response, &mut out)?,
            Provider::Ollama => ollama::read_stream(response, &mut out)?,
        };
        out.finish().map_err(Failure::Output)?;
        reply
    } else {
        let bytes = http::read_all(response)?;
        match endpoint.provider {
            Provider::Anthropic => anthropic::parse_reply(&bytes)?,
            Provider::OpenAi => openai::parse_reply(&bytes)?,
            Provider::Ollama => ollama::parse_reply(&bytes)?,
        }
    };
    if reply.model.is_empty() {
        reply.model = model.to_owned();
    }
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_strings() {
        assert_eq!(
            parse_model("anthropic/claude-sonnet-4").unwrap(),
            (Provider::Anthropic, "claude-sonnet-4".to_owned())
        );
        assert_eq!(
            parse_model("ollama/library/llama3:8b").unwrap().1,
            "library/llama3:8b",
            "split at the first slash"
        );
        let msg = |m: &str| parse_model(m).unwrap_err().to_string();
        assert_eq!(
            msg("gpt4"),
            "invalid model format \"gpt4\": expected provider/model-name"
        );
        assert_eq!(msg("/x"), "invalid model format \"/x\": empty provider");
        assert_eq!(
            msg("openai/"),
            "invalid model format \"openai/\": empty model name"
        );
        assert_eq!(
            msg("gemini/pro"),
            "unsupported provider \"gemini\": supported providers are anthropic, openai, ollama"
        );
        assert_eq!(parse_model("gemini/pro").unwrap_err().exit_code(), 1);
    }

    #[test]
    fn endpoint_debug_hides_the_key() {
        let e = Endpoint {
            provider: Provider::OpenAi,
            base_url: "http://x".into(),
            api_key: "sk-secret".into(),
        };
        assert!(!format!("{e:?}").contains("sk-secret"));
    }

    #[test]
    fn request_format_rejects_unknown_fields() {
        let err = serde_json::from_str::<Conversation>(r#"{"messages": [], "temprature": 1}"#);
        assert!(err.is_err());
        let ok: Conversation = serde_json::from_str(
            r#"{"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"t"}]}"#,
        )
        .unwrap();
        assert_eq!(ok.tools[0].parameters, empty_schema());
    }
}
