//! OpenAI's Chat Completions API, and every server that copies it:
//! `POST <base>/v1/chat/completions`.

use serde_json::{Map, Value, json};

use super::body::Json;
use super::conversation::{Conversation, Reply, ResponseFormat, Role, ToolCall, ToolResult, Usage};
use super::http::Failure;
use super::parse;
use super::stream::{PendingCalls, Sse, TextSink, cut_short, json as parse_chunk};
use super::wire::{Spec, Wire, error_text};
use axe_base::error::Category;

/// OpenAI's Chat Completions API and the servers that copy it.
pub struct OpenAi;

impl Spec for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn default_base_url(&self) -> &'static str {
        "https://api.openai.com"
    }

    fn key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

    /// OpenAI's own models go by a few families' names (`gpt-4o`, `o3`,
    /// `chatgpt-4o-latest`, a fine-tune's `ft:`); a local server's
    /// (`qwen2.5-7b-instruct`, `llama3`) are none of them.
    fn hosts(&self, model: &str) -> bool {
        const FAMILIES: [&str; 13] = [
            "gpt",
            "chatgpt",
            "ft:",
            "text-",
            "davinci",
            "babbage",
            "codex",
            "computer-use",
            "omni-",
            "whisper",
            "tts",
            "dall-e",
            "sora",
        ];
        let model = model.to_ascii_lowercase();
        let mut chars = model.chars();
        let reasoning =
            chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit());
        reasoning || FAMILIES.iter().any(|f| model.starts_with(f))
    }

    fn honours(&self, _: &ResponseFormat) -> bool {
        true
    }
}

impl Wire for OpenAi {
    fn path(&self) -> &'static str {
        "/v1/chat/completions"
    }

    /// Without `/v1`: servers that put the API elsewhere keep its end.
    fn endpoint_end(&self) -> &'static str {
        "/chat/completions"
    }

    fn api(&self) -> &'static str {
        "an OpenAI Chat Completions API"
    }

    fn headers(&self, key: &str) -> Vec<(&'static str, String)> {
        if key.is_empty() {
            return Vec::new();
        }
        vec![("authorization", format!("Bearer {key}"))]
    }

    fn body<'a>(&self, model: &'a str, c: &'a Conversation, stream: bool) -> Json<'a> {
        let mut body = vec![("model", Json::Str(model)), ("messages", messages(c))];
        if let Some(t) = c.temperature {
            body.push(("temperature", Json::Owned(json!(t))));
        }
        if c.max_tokens != 0 {
            body.push(("max_tokens", Json::Owned(json!(c.max_tokens))));
        }
        if !c.tools.is_empty() {
            body.push(("tools", tools(c)));
        }
        if let Some(format) = &c.response_format {
            body.push(("response_format", Json::Owned(response_format(format))));
        }
        if stream {
            body.push(("stream", Json::Owned(json!(true))));
            // Token counts come in a last chunk only when asked for.
            body.push((
                "stream_options",
                Json::Owned(json!({"include_usage": true})),
            ));
        }
        Json::object(body)
    }

    fn category(&self, status: u16) -> Category {
        parse::category(status)
    }

    /// `{"error": {"message": ...}}`.
    fn error_message(&self, body: &[u8]) -> Option<String> {
        error_text(body, "/error/message")
    }

    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure> {
        let v = parse::body(bytes)?;
        let Some(choice) = v["choices"].as_array().and_then(|c| c.first()) else {
            return Err(no_choices());
        };
        let message = &choice["message"];
        let tool_calls: Vec<ToolCall> = message["tool_calls"]
            .as_array()
            .map(|calls| {
                calls
                    .iter()
                    .map(|c| ToolCall {
                        id: c["id"].as_str().unwrap_or_default().to_owned(),
                        name: c["function"]["name"]
                            .as_str()
                            .unwrap_or_default()
                            .to_owned(),
                        arguments: arguments(c["function"]["arguments"].as_str().unwrap_or("{}")),
                    })
                    .collect()
            })
            .unwrap_or_default();
        // `null` (or a number) with no tool calls is no answer at all, as an
        // empty content list is for Anthropic.
        let content = match message["content"].as_str() {
            Some(text) => text.to_owned(),
            None if !tool_calls.is_empty() => String::new(),
            None => return Err(parse::missing("content")),
        };
        Ok(Reply {
            model: v["model"].as_str().unwrap_or_default().to_owned(),
            content,
            usage: usage(&v["usage"]),
            stop_reason: choice["finish_reason"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            tool_calls,
        })
    }

    fn read_stream(
        &self,
        body: &mut dyn std::io::Read,
        out: &mut TextSink,
    ) -> Result<Reply, Failure> {
        let mut sse = Sse::new(body);
        let mut reply = Reply::default();
        let mut calls = PendingCalls::default();
        let mut choices = false;
        // `[DONE]` ends the stream; servers that never send it still send a
        // finish reason with the last choice.
        let mut finished = false;
        while let Some(event) = sse.next()? {
            if event.data == "[DONE]" {
                finished = true;
                break;
            }
            let chunk = parse_chunk(&event.data)?;
            if let Some(failure) = parse::stream_error(&chunk) {
                return Err(failure);
            }
            if let Some(model) = chunk["model"].as_str().filter(|m| !m.is_empty()) {
                reply.model = model.to_owned();
            }
            if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
                reply.usage = usage(u);
            }
            let Some(choice) = chunk["choices"].as_array().and_then(|c| c.first()) else {
                continue;
            };
            choices = true;
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                reply.content.push_str(text);
                out.push(text)?;
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                calls.add(
                    call["index"].as_u64().unwrap_or(0),
                    call["id"].as_str(),
                    call["function"]["name"].as_str(),
                    call["function"]["arguments"].as_str().unwrap_or_default(),
                );
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                reply.stop_reason = reason.to_owned();
                finished = true;
            }
        }
        if !finished {
            return Err(cut_short());
        }
        if !choices {
            return Err(no_choices());
        }
        reply.tool_calls = calls.finish();
        Ok(reply)
    }
}

/// A `usage` object: `prompt_tokens` counts the cached ones too, which
/// `prompt_tokens_details.cached_tokens` tells apart; OpenRouter adds the
/// call's `cost`.
fn usage(u: &Value) -> Usage {
    Usage {
        input_tokens: u["prompt_tokens"].as_u64(),
        output_tokens: u["completion_tokens"].as_u64(),
        cache_read_tokens: u["prompt_tokens_details"]["cached_tokens"].as_u64(),
        cache_write_tokens: None,
        cost: u["cost"].as_f64(),
    }
}

/// `response_format` as Chat Completions takes it.
fn response_format(format: &ResponseFormat) -> Value {
    match format {
        ResponseFormat::Text => json!({"type": "text"}),
        ResponseFormat::JsonObject => json!({"type": "json_object"}),
        ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        } => {
            // The API requires a name; most callers have no use for one.
            let mut inner =
                json!({"name": name.as_deref().unwrap_or("response"), "schema": schema});
            if let Some(strict) = strict {
                inner["strict"] = json!(strict);
            }
            json!({"type": "json_schema", "json_schema": inner})
        }
    }
}

/// `{"type": "function", "function": {name, description, parameters}}`,
/// which Ollama takes too.
pub fn tools(c: &Conversation) -> Json<'_> {
    let tools = c
        .tools
        .iter()
        .map(|t| {
            let function = Json::object([
                ("name", Json::from(&t.name)),
                ("description", Json::from(&t.description)),
                ("parameters", Json::Value(&t.parameters)),
            ]);
            Json::object([("type", Json::Str("function")), ("function", function)])
        })
        .collect();
    Json::Array(tools)
}

fn messages(c: &Conversation) -> Json<'_> {
    chat_messages(
        c,
        |call| {
            let function = Json::object([
                ("name", Json::from(&call.name)),
                // A string of JSON, made for this call: small beside the
                // texts, which are borrowed.
                (
                    "arguments",
                    Json::Owned(Value::String(
                        serde_json::to_string(&call.arguments).expect("JSON values serialize"),
                    )),
                ),
            ]);
            Json::object([
                ("id", Json::from(&call.id)),
                ("type", Json::Str("function")),
                ("function", function),
            ])
        },
        |result| {
            Json::object([
                ("role", Json::Str("tool")),
                ("tool_call_id", Json::from(&result.call_id)),
                ("content", Json::from(&result.content)),
            ])
        },
    )
}

/// The message list OpenAI and Ollama both take: the system prompt first,
/// then each turn, with a message per tool result. How a tool call and a
/// tool result are spelled is each provider's own.
pub fn chat_messages<'a>(
    c: &'a Conversation,
    call: impl Fn(&'a ToolCall) -> Json<'a>,
    result: impl Fn(&'a ToolResult) -> Json<'a>,
) -> Json<'a> {
    let turn = |role, content: &'a String| {
        Json::object([("role", Json::Str(role)), ("content", Json::from(content))])
    };
    let mut out = Vec::new();
    if !c.system.is_empty() {
        out.push(turn("system", &c.system));
    }
    for m in &c.messages {
        match m.role {
            Role::Tool => out.extend(m.tool_results.iter().map(&result)),
            Role::Assistant if !m.tool_calls.is_empty() => {
                let calls = m.tool_calls.iter().map(&call).collect();
                // "" rather than Go's null when there is no text: llama.cpp's
                // server answers null with a 500, and the hosted API takes both.
                out.push(turn("assistant", &m.content).with("tool_calls", Json::Array(calls)));
            }
            Role::Assistant => out.push(turn("assistant", &m.content)),
            Role::User => out.push(turn("user", &m.content)),
        }
    }
    Json::Array(out)
}

fn no_choices() -> Failure {
    parse::missing("choices")
}

/// Tool call arguments arrive as a JSON string; ones that do not parse as
/// an object become `{}`, as in Go.
fn arguments(json: &str) -> Map<String, Value> {
    serde_json::from_str(json).unwrap_or_default()
}
