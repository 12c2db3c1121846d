//! Ollama's chat API: `POST <base>/api/chat`, no key.

use serde_json::{Map, Value, json};

use super::body::Json;
use super::conversation::{Conversation, Reply, ResponseFormat, ToolCall, Usage};
use super::http::Failure;
use super::parse;
use super::stream::{Lines, TextSink, cut_short, json as parse_chunk};
use super::wire::{Spec, Wire, error_text};
use axe_base::error::Category;

/// Ollama's chat API.
pub struct Ollama;

impl Spec for Ollama {
    fn name(&self) -> &'static str {
        "ollama"
    }

    fn default_base_url(&self) -> &'static str {
        "http://localhost:11434"
    }

    fn key_env(&self) -> &'static str {
        "OLLAMA_API_KEY"
    }

    fn needs_key(&self) -> bool {
        false
    }

    fn honours(&self, _: &ResponseFormat) -> bool {
        true
    }
}

impl Wire for Ollama {
    fn refused(&self, base_url: &str) -> Option<String> {
        Some(format!(
            "connection refused: is Ollama running? (expected at {base_url})"
        ))
    }

    fn path(&self) -> &'static str {
        "/api/chat"
    }

    fn endpoint_end(&self) -> &'static str {
        "/api/chat"
    }

    fn api(&self) -> &'static str {
        "an Ollama chat API"
    }

    fn headers(&self, _key: &str) -> Vec<(&'static str, String)> {
        Vec::new()
    }

    fn body<'a>(&self, model: &'a str, c: &'a Conversation, stream: bool) -> Json<'a> {
        let mut body = vec![
            ("model", Json::Str(model)),
            ("messages", messages(c)),
            ("stream", Json::Owned(json!(stream))),
        ];
        let mut options = Map::new();
        if let Some(t) = c.temperature {
            options.insert("temperature".into(), json!(t));
        }
        if c.max_tokens != 0 {
            options.insert("num_predict".into(), json!(c.max_tokens));
        }
        if !options.is_empty() {
            body.push(("options", Json::Owned(Value::Object(options))));
        }
        if !c.tools.is_empty() {
            body.push(("tools", super::openai::tools(c)));
        }
        // `format`: "json", or the schema itself; free text is the default.
        match &c.response_format {
            Some(ResponseFormat::JsonObject) => {
                body.push(("format", Json::Owned(json!("json"))));
            }
            Some(ResponseFormat::JsonSchema { schema, .. }) => {
                body.push(("format", Json::Value(schema)));
            }
            Some(ResponseFormat::Text) | None => {}
        }
        Json::object(body)
    }

    fn category(&self, status: u16) -> Category {
        match status {
            400 | 404 => Category::BadRequest,
            _ => Category::Server,
        }
    }

    /// `{"error": "..."}`.
    fn error_message(&self, body: &[u8]) -> Option<String> {
        error_text(body, "/error")
    }

    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure> {
        let v = parse::body(bytes)?;
        let reply = Reply {
            content: v["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            tool_calls: tool_calls(&v["message"], 0),
            ..Reply::default()
        };
        finish(reply, &v)
    }

    /// A stream is one JSON object per line; the last has `"done": true` and
    /// the counts.
    fn read_stream(
        &self,
        body: &mut dyn std::io::Read,
        out: &mut TextSink,
    ) -> Result<Reply, Failure> {
        let mut lines = Lines::new(body);
        let mut reply = Reply::default();
        while let Some(line) = lines.next()? {
            if line.trim().is_empty() {
                continue;
            }
            let chunk = parse_chunk(&line)?;
            if let Some(error) = chunk["error"].as_str() {
                return Err(Failure::Api(Category::Server, error.to_owned()));
            }
            if let Some(text) = chunk["message"]["content"]
                .as_str()
                .filter(|t| !t.is_empty())
            {
                reply.content.push_str(text);
                out.push(text)?;
            }
            let calls = tool_calls(&chunk["message"], reply.tool_calls.len());
            reply.tool_calls.extend(calls);
            if let Some(model) = chunk["model"].as_str() {
                reply.model = model.to_owned();
            }
            if chunk["done"].as_bool().unwrap_or(false) {
                return finish(reply, &chunk);
            }
        }
        Err(cut_short())
    }
}

fn messages(c: &Conversation) -> Json<'_> {
    super::openai::chat_messages(
        c,
        |call| {
            let function = Json::object([
                ("name", Json::from(&call.name)),
                ("arguments", Json::Args(&call.arguments)),
            ]);
            Json::object([("function", function)])
        },
        // Ollama has no call ids: results follow in the order of the calls.
        |result| {
            Json::object([
                ("role", Json::Str("tool")),
                ("content", Json::from(&result.content)),
            ])
        },
    )
}

/// The client numbers Ollama's id-less tool calls `ollama_0`, `ollama_1`, ...
fn tool_calls(message: &Value, first: usize) -> Vec<ToolCall> {
    message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| ToolCall {
            id: format!("ollama_{}", first + i),
            name: c["function"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            arguments: c["function"]["arguments"]
                .as_object()
                .cloned()
                .unwrap_or_default(),
        })
        .collect()
}

fn finish(mut reply: Reply, last: &Value) -> Result<Reply, Failure> {
    reply.model = last["model"].as_str().unwrap_or(&reply.model).to_owned();
    reply.stop_reason = last["done_reason"].as_str().unwrap_or_default().to_owned();
    reply.usage = Usage {
        input_tokens: last["prompt_eval_count"].as_u64(),
        output_tokens: last["eval_count"].as_u64(),
        ..Usage::default()
    };
    parse::answered(reply)
}
