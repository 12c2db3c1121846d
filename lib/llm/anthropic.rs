//! Anthropic's Messages API: `POST <base>/v1/messages`.

use serde_json::{Map, Value, json};

use super::body::Json;
use super::conversation::{Conversation, Reply, Role, ToolCall, Usage};
use super::http::Failure;
use super::parse;
use super::stream::{PendingCalls, Sse, TextSink, cut_short, json as parse_chunk};
use super::wire::{Spec, Wire, error_text};
use axe_base::error::Category;

/// The API requires `max_tokens`; this is what Go sent when none was set.
const DEFAULT_MAX_TOKENS: u64 = 4096;

/// No prompt shorter than 1024 tokens is cached, and no token is shorter
/// than a byte: a shorter prefix is sent without `cache_control`, as it
/// was before caching, since asking would change nothing.
const MIN_CACHED_BYTES: usize = 1024;

/// Anthropic's Messages API.
pub struct Anthropic;

impl Spec for Anthropic {
    fn name(&self) -> &'static str {
        "anthropic"
    }

    fn default_base_url(&self) -> &'static str {
        "https://api.anthropic.com"
    }

    fn key_env(&self) -> &'static str {
        "ANTHROPIC_API_KEY"
    }

    fn default_max_tokens(&self) -> Option<u64> {
        Some(DEFAULT_MAX_TOKENS)
    }
}

impl Wire for Anthropic {
    fn path(&self) -> &'static str {
        "/v1/messages"
    }

    fn endpoint_end(&self) -> &'static str {
        "/messages"
    }

    fn api(&self) -> &'static str {
        "an Anthropic Messages API"
    }

    fn headers(&self, key: &str) -> Vec<(&'static str, String)> {
        let mut headers = vec![("anthropic-version", "2023-06-01".to_owned())];
        if !key.is_empty() {
            headers.insert(0, ("x-api-key", key.to_owned()));
        }
        headers
    }

    fn body<'a>(&self, model: &'a str, c: &'a Conversation, stream: bool) -> Json<'a> {
        let max_tokens = if c.max_tokens == 0 {
            DEFAULT_MAX_TOKENS
        } else {
            c.max_tokens
        };
        let mut body = vec![
            ("model", Json::Str(model)),
            ("max_tokens", Json::Owned(json!(max_tokens))),
            ("messages", messages(c)),
        ];
        let tools: Vec<Json> = c
            .tools
            .iter()
            .map(|t| {
                Json::object([
                    ("name", Json::from(&t.name)),
                    ("description", Json::from(&t.description)),
                    ("input_schema", Json::Value(&t.parameters)),
                ])
            })
            .collect();
        let stable = c.system_parts().0.len();
        let cache =
            c.caches() && (stable >= MIN_CACHED_BYTES || longer(&tools, MIN_CACHED_BYTES - stable));
        if !c.system.is_empty() {
            body.push(("system", system(c, cache)));
        }
        if let Some(t) = c.temperature {
            body.push(("temperature", Json::Owned(json!(t))));
        }
        if !tools.is_empty() {
            let mut tools = tools;
            // The tools come first in the prompt: marking the last caches
            // them all, whatever follows.
            if cache && let Some(last) = tools.pop() {
                tools.push(last.with("cache_control", ephemeral()));
            }
            body.push(("tools", Json::Array(tools)));
        }
        if stream {
            body.push(("stream", Json::Owned(json!(true))));
        }
        Json::object(body)
    }

    fn category(&self, status: u16) -> Category {
        match status {
            401 => Category::Auth,
            400 => Category::BadRequest,
            429 => Category::RateLimit,
            529 => Category::Overloaded,
            _ => Category::Server,
        }
    }

    /// `{"type": "error", "error": {"type": ..., "message": ...}}`.
    fn error_message(&self, body: &[u8]) -> Option<String> {
        error_text(body, "/error/message")
    }

    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure> {
        #[derive(serde::Deserialize)]
        struct Wire {
            #[serde(default)]
            content: Vec<Block>,
            #[serde(default)]
            model: String,
            #[serde(default)]
            stop_reason: Option<String>,
            #[serde(default)]
            usage: Value,
        }
        #[derive(serde::Deserialize)]
        struct Block {
            #[serde(rename = "type")]
            kind: String,
            #[serde(default)]
            text: String,
            #[serde(default)]
            id: String,
            #[serde(default)]
            name: String,
            #[serde(default)]
            input: Map<String, Value>,
        }
        let wire: Wire = serde_json::from_slice(bytes).map_err(parse::bad_body)?;
        if wire.content.is_empty() {
            return Err(parse::missing("content"));
        }
        let mut reply = Reply {
            model: wire.model,
            usage: usage(&wire.usage),
            stop_reason: wire.stop_reason.unwrap_or_default(),
            ..Reply::default()
        };
        for block in wire.content {
            match block.kind.as_str() {
                "text" => reply.content.push_str(&block.text),
                "tool_use" => reply.tool_calls.push(ToolCall {
                    id: block.id,
                    name: block.name,
                    arguments: block.input,
                }),
                _ => {}
            }
        }
        Ok(reply)
    }

    fn read_stream(
        &self,
        body: &mut dyn std::io::Read,
        out: &mut TextSink,
    ) -> Result<Reply, Failure> {
        let mut sse = Sse::new(body);
        let mut reply = Reply::default();
        let mut calls = PendingCalls::default();
        let mut blocks = 0;
        // `message_stop` ends the stream; a stop reason means the answer is
        // whole even if the connection closes before it.
        let mut finished = false;
        while let Some(event) = sse.next()? {
            let data = parse_chunk(&event.data)?;
            let kind = data["type"].as_str().unwrap_or(&event.name);
            match kind {
                "message_start" => {
                    let message = &data["message"];
                    reply.model = message["model"].as_str().unwrap_or_default().to_owned();
                    reply.usage = usage(&message["usage"]);
                }
                "content_block_start" => {
                    blocks += 1;
                    let block = &data["content_block"];
                    let index = data["index"].as_u64().unwrap_or(0);
                    match block["type"].as_str() {
                        Some("tool_use") => {
                            calls.add(index, block["id"].as_str(), block["name"].as_str(), "")
                        }
                        Some("text") => {
                            let text = block["text"].as_str().unwrap_or_default();
                            if !text.is_empty() {
                                reply.content.push_str(text);
                                out.push(text)?;
                            }
                        }
                        _ => {}
                    }
                }
                "content_block_delta" => {
                    let delta = &data["delta"];
                    match delta["type"].as_str() {
                        Some("text_delta") => {
                            let text = delta["text"].as_str().unwrap_or_default();
                            reply.content.push_str(text);
                            out.push(text)?;
                        }
                        Some("input_json_delta") => calls.add(
                            data["index"].as_u64().unwrap_or(0),
                            None,
                            None,
                            delta["partial_json"].as_str().unwrap_or_default(),
                        ),
                        _ => {}
                    }
                }
                "message_delta" => {
                    if let Some(reason) = data["delta"]["stop_reason"].as_str() {
                        reply.stop_reason = reason.to_owned();
                        finished = true;
                    }
                    if let Some(n) = data["usage"]["output_tokens"].as_u64() {
                        reply.usage.output_tokens = Some(n);
                    }
                }
                "error" => {
                    let error = &data["error"];
                    return Err(Failure::Api(
                        stream_error_category(error["type"].as_str().unwrap_or_default()),
                        error["message"]
                            .as_str()
                            .unwrap_or("stream error")
                            .to_owned(),
                    ));
                }
                "message_stop" => {
                    finished = true;
                    break;
                }
                _ => {}
            }
        }
        if !finished {
            return Err(cut_short());
        }
        if blocks == 0 {
            return Err(parse::missing("content"));
        }
        reply.tool_calls = calls.finish();
        Ok(reply)
    }
}

/// The system prompt: a string, or with caching its stable prefix as a
/// cached block and the rest (the run log's entries, which change every
/// run) after it, so that a repeat run reads the prefix from the cache.
fn system(c: &Conversation, cache: bool) -> Json<'_> {
    let (stable, rest) = c.system_parts();
    if !cache || stable.is_empty() {
        return Json::from(&c.system);
    }
    let text = |text| Json::object([("type", Json::Str("text")), ("text", Json::Str(text))]);
    let mut blocks = vec![text(stable).with("cache_control", ephemeral())];
    if !rest.is_empty() {
        blocks.push(text(rest));
    }
    Json::Array(blocks)
}

fn ephemeral() -> Json<'static> {
    Json::Owned(json!({"type": "ephemeral"}))
}

/// A `usage` object. Anthropic's `input_tokens` leaves out what was read
/// from or written to the cache; ours counts every prompt token, as
/// OpenAI's `prompt_tokens` does.
fn usage(u: &Value) -> Usage {
    let (read, write) = (
        u["cache_read_input_tokens"].as_u64(),
        u["cache_creation_input_tokens"].as_u64(),
    );
    Usage {
        input_tokens: u["input_tokens"].as_u64().map(|n| {
            n.saturating_add(read.unwrap_or(0))
                .saturating_add(write.unwrap_or(0))
        }),
        output_tokens: u["output_tokens"].as_u64(),
        cache_read_tokens: read,
        cache_write_tokens: write,
        cost: None,
    }
}

fn messages(c: &Conversation) -> Json<'_> {
    let turn = |role, content| Json::object([("role", Json::Str(role)), ("content", content)]);
    let messages = c
        .messages
        .iter()
        .map(|m| match m.role {
            Role::Tool => {
                // Tool results go back as a user turn of tool_result blocks.
                let blocks = m
                    .tool_results
                    .iter()
                    .map(|r| {
                        Json::object([
                            ("type", Json::Str("tool_result")),
                            ("tool_use_id", Json::from(&r.call_id)),
                            ("content", Json::from(&r.content)),
                            ("is_error", Json::Owned(json!(r.is_error))),
                        ])
                    })
                    .collect();
                turn("user", Json::Array(blocks))
            }
            Role::Assistant if !m.tool_calls.is_empty() => {
                let mut blocks = Vec::new();
                if !m.content.is_empty() {
                    blocks.push(Json::object([
                        ("type", Json::Str("text")),
                        ("text", Json::from(&m.content)),
                    ]));
                }
                for call in &m.tool_calls {
                    blocks.push(Json::object([
                        ("type", Json::Str("tool_use")),
                        ("id", Json::from(&call.id)),
                        ("name", Json::from(&call.name)),
                        ("input", Json::Args(&call.arguments)),
                    ]));
                }
                turn("assistant", Json::Array(blocks))
            }
            Role::Assistant => turn("assistant", Json::from(&m.content)),
            Role::User => turn("user", Json::from(&m.content)),
        })
        .collect();
    Json::Array(messages)
}

/// The category of an `error` event in a stream, by its error type.
fn stream_error_category(kind: &str) -> Category {
    match kind {
        "overloaded_error" => Category::Overloaded,
        "rate_limit_error" => Category::RateLimit,
        "authentication_error" | "permission_error" => Category::Auth,
        "invalid_request_error" | "not_found_error" => Category::BadRequest,
        _ => Category::Server,
    }
}

/// Whether `value` as JSON text is at least `bytes` long: counted as it
/// is written, and only until then, rather than writing all the tools'
/// text on every turn just to measure it.
fn longer(value: &impl serde::Serialize, bytes: usize) -> bool {
    /// Counts what is written, failing (which stops the writing) once it
    /// has seen enough.
    struct Counter {
        seen: usize,
        enough: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.seen += buf.len();
            match self.seen >= self.enough {
                true => Err(std::io::ErrorKind::WriteZero.into()),
                false => Ok(buf.len()),
            }
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter {
        seen: 0,
        enough: bytes,
    };
    let _ = serde_json::to_writer(&mut counter, value);
    counter.seen >= bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The measure says what the whole text's length would, at every
    /// length around the bar, without writing it all.
    #[test]
    fn tools_are_measured_only_as_far_as_the_bar() {
        let tools: Vec<Value> = (0..40)
            .map(|i| json!({"name": format!("t{i}"), "description": "é ".repeat(i), "input_schema": {"type": "object"}}))
            .collect();
        let whole = json!(tools).to_string().len();
        for bar in [0, 1, whole - 1, whole, whole + 1, 2 * whole] {
            assert_eq!(longer(&tools, bar), whole >= bar, "bar {bar}");
        }
        let none: Vec<Value> = Vec::new();
        assert!(longer(&none, 2) && !longer(&none, 3));
    }
}
