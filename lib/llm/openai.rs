//! OpenAI's Chat Completions API, and every server that copies it:
//! `POST <base>/v1/chat/completions`.

use serde_json::{Map, Value, json};

use super::conversation::{Conversation, Reply, ResponseFormat, Role, ToolCall, ToolResult, Usage};
use super::http::Failure;
use super::stream::{PendingCalls, Sse, TextSink, cut_short, json as parse_chunk};
use super::wire::{Wire, error_text};
use axe_base::error::Category;

/// OpenAI's Chat Completions API and the servers that copy it.
pub struct OpenAi;

impl Wire for OpenAi {
    fn name(&self) -> &'static str {
        "openai"
    }

    fn default_base_url(&self) -> &'static str {
        "https://api.openai.com"
    }

    fn key_env(&self) -> &'static str {
        "OPENAI_API_KEY"
    }

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

    fn body(&self, model: &str, c: &Conversation, stream: bool) -> Value {
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        body.insert("messages".into(), messages(c));
        if let Some(t) = c.temperature {
            body.insert("temperature".into(), json!(t));
        }
        if c.max_tokens != 0 {
            body.insert("max_tokens".into(), json!(c.max_tokens));
        }
        if !c.tools.is_empty() {
            body.insert("tools".into(), tools(c));
        }
        if let Some(format) = &c.response_format {
            body.insert("response_format".into(), response_format(format));
        }
        if stream {
            body.insert("stream".into(), json!(true));
            // Token counts come in a last chunk only when asked for.
            body.insert("stream_options".into(), json!({"include_usage": true}));
        }
        Value::Object(body)
    }

    fn honours(&self, _: &ResponseFormat) -> bool {
        true
    }

    fn category(&self, status: u16) -> Category {
        match status {
            401 | 403 => Category::Auth,
            400 | 404 => Category::BadRequest,
            429 => Category::RateLimit,
            _ => Category::Server,
        }
    }

    /// `{"error": {"message": ...}}`.
    fn error_message(&self, body: &[u8]) -> Option<String> {
        error_text(body, "/error/message")
    }

    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure> {
        let v: Value = serde_json::from_slice(bytes).map_err(|e| {
            Failure::Api(Category::Server, format!("failed to parse response: {e}"))
        })?;
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
            None => {
                return Err(Failure::Api(
                    Category::Server,
                    "response contains no content".into(),
                ));
            }
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
            if let Some(error) = chunk.get("error") {
                return Err(Failure::Api(
                    Category::Server,
                    error["message"]
                        .as_str()
                        .unwrap_or("stream error")
                        .to_owned(),
                ));
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
pub fn tools(c: &Conversation) -> Value {
    let tools: Vec<Value> = c
        .tools
        .iter()
        .map(|t| {
            json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}})
        })
        .collect();
    json!(tools)
}

fn messages(c: &Conversation) -> Value {
    chat_messages(
        c,
        |call| {
            json!({
                "id": call.id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": Value::Object(call.arguments.clone()).to_string(),
                },
            })
        },
        |result| json!({"role": "tool", "tool_call_id": result.call_id, "content": result.content}),
    )
}

/// The message list OpenAI and Ollama both take: the system prompt first,
/// then each turn, with a message per tool result. How a tool call and a
/// tool result are spelled is each provider's own.
pub fn chat_messages(
    c: &Conversation,
    call: impl Fn(&ToolCall) -> Value,
    result: impl Fn(&ToolResult) -> Value,
) -> Value {
    let mut out = Vec::new();
    if !c.system.is_empty() {
        out.push(json!({"role": "system", "content": c.system}));
    }
    for m in &c.messages {
        match m.role {
            Role::Tool => out.extend(m.tool_results.iter().map(&result)),
            Role::Assistant if !m.tool_calls.is_empty() => {
                let calls: Vec<Value> = m.tool_calls.iter().map(&call).collect();
                // "" rather than Go's null when there is no text: llama.cpp's
                // server answers null with a 500, and the hosted API takes both.
                out.push(json!({"role": "assistant", "content": m.content, "tool_calls": calls}));
            }
            Role::Assistant => out.push(json!({"role": "assistant", "content": m.content})),
            Role::User => out.push(json!({"role": "user", "content": m.content})),
        }
    }
    json!(out)
}

fn no_choices() -> Failure {
    Failure::Api(Category::Server, "response contains no choices".into())
}

/// Tool call arguments arrive as a JSON string; ones that do not parse as
/// an object become `{}`, as in Go.
fn arguments(json: &str) -> Map<String, Value> {
    serde_json::from_str(json).unwrap_or_default()
}
