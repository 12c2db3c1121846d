//! Google's Gemini API: `POST <base>/v1beta/models/<model>:generateContent`
//! (`:streamGenerateContent?alt=sse` to stream), the key in a header.

use serde_json::{Map, Value, json};

use super::body::Json;
use super::conversation::{Conversation, Reply, ResponseFormat, Role, ToolCall, Usage};
use super::http::Failure;
use super::parse;
use super::stream::{Sse, TextSink, cut_short, json as parse_chunk};
use super::wire::{Spec, Wire, error_text};
use axe_base::error::Category;

/// Google's Gemini API.
pub struct Gemini;

impl Spec for Gemini {
    fn name(&self) -> &'static str {
        "google"
    }

    fn default_base_url(&self) -> &'static str {
        "https://generativelanguage.googleapis.com"
    }

    fn key_env(&self) -> &'static str {
        "GEMINI_API_KEY"
    }

    fn honours(&self, _: &ResponseFormat) -> bool {
        true
    }
}

impl Wire for Gemini {
    fn path(&self) -> &'static str {
        "/v1beta/models"
    }

    fn endpoint_end(&self) -> &'static str {
        "/models"
    }

    /// A whole call URL names a model and a method
    /// (`.../models/gemini-pro:generateContent`); the model called is the
    /// one asked for, so both go.
    fn strip_tail<'a>(&self, base: &'a str) -> &'a str {
        match base.rsplit_once('/') {
            Some((rest, last)) if last.contains(':') && rest.ends_with("/models") => rest,
            _ => base,
        }
    }

    fn api(&self) -> &'static str {
        "a Gemini generateContent API"
    }

    /// The model and the method are part of the URL.
    fn path_tail(&self, model: &str, stream: bool) -> String {
        let method = match stream {
            true => "streamGenerateContent?alt=sse",
            false => "generateContent",
        };
        format!("/{}:{method}", escape(model))
    }

    /// In a header, never in the URL (`?key=`, which Google also takes):
    /// a URL is shown in error messages.
    fn headers(&self, key: &str) -> Vec<(&'static str, String)> {
        if key.is_empty() {
            return Vec::new();
        }
        vec![("x-goog-api-key", key.to_owned())]
    }

    fn body<'a>(&self, _model: &'a str, c: &'a Conversation, _stream: bool) -> Json<'a> {
        let mut body = Vec::new();
        if !c.system.is_empty() {
            let text = Json::object([("text", Json::from(&c.system))]);
            body.push((
                "systemInstruction",
                Json::object([("parts", Json::Array(vec![text]))]),
            ));
        }
        body.push(("contents", contents(c)));
        if !c.tools.is_empty() {
            let declarations = c
                .tools
                .iter()
                .map(|t| {
                    Json::object([
                        ("name", Json::from(&t.name)),
                        ("description", Json::from(&t.description)),
                        ("parameters", Json::Value(&t.parameters)),
                    ])
                })
                .collect();
            let tools = Json::object([("functionDeclarations", Json::Array(declarations))]);
            body.push(("tools", Json::Array(vec![tools])));
        }
        let mut config = Map::new();
        if let Some(t) = c.temperature {
            config.insert("temperature".into(), json!(t));
        }
        if c.max_tokens != 0 {
            config.insert("maxOutputTokens".into(), json!(c.max_tokens));
        }
        match &c.response_format {
            Some(ResponseFormat::Text) => {
                config.insert("responseMimeType".into(), json!("text/plain"));
            }
            Some(ResponseFormat::JsonObject) => {
                config.insert("responseMimeType".into(), json!("application/json"));
            }
            // A JSON Schema as OpenAI takes it: `responseJsonSchema`, not
            // `responseSchema`, which takes only an OpenAPI subset.
            Some(ResponseFormat::JsonSchema { schema, .. }) => {
                config.insert("responseMimeType".into(), json!("application/json"));
                config.insert("responseJsonSchema".into(), schema.clone());
            }
            None => {}
        }
        if !config.is_empty() {
            body.push(("generationConfig", Json::Owned(Value::Object(config))));
        }
        Json::object(body)
    }

    fn category(&self, status: u16) -> Category {
        match status {
            503 => Category::Overloaded,
            504 => Category::Timeout,
            _ => parse::category(status),
        }
    }

    /// `{"error": {"code": ..., "message": ..., "status": ...}}`.
    fn error_message(&self, body: &[u8]) -> Option<String> {
        error_text(body, "/error/message")
    }

    fn parse_reply(&self, bytes: &[u8]) -> Result<Reply, Failure> {
        let v = parse::body(bytes)?;
        let mut reply = Reply::default();
        let finished = add_chunk(&mut reply, &v, &mut |_| Ok(()))?;
        if !finished {
            return Err(no_candidates(&v));
        }
        parse::answered(reply)
    }

    /// Each event is a whole response of its own: text to add, calls
    /// whole, the counts so far; the last has a finish reason.
    fn read_stream(
        &self,
        body: &mut dyn std::io::Read,
        out: &mut TextSink,
    ) -> Result<Reply, Failure> {
        let mut sse = Sse::new(body);
        let mut reply = Reply::default();
        let mut finished = false;
        while let Some(event) = sse.next()? {
            let chunk = parse_chunk(&event.data)?;
            if let Some(failure) = parse::stream_error(&chunk) {
                return Err(failure);
            }
            finished |= add_chunk(&mut reply, &chunk, &mut |text| out.push(text))?;
        }
        if !finished {
            return Err(cut_short());
        }
        parse::answered(reply)
    }
}

/// Adds one response (or one streamed piece of one) to `reply`, its text
/// handed to `show`; true once it carries a finish reason.
fn add_chunk(
    reply: &mut Reply,
    chunk: &Value,
    show: &mut dyn FnMut(&str) -> Result<(), Failure>,
) -> Result<bool, Failure> {
    if let Some(model) = chunk["modelVersion"].as_str() {
        reply.model = model.to_owned();
    }
    if let Some(u) = chunk.get("usageMetadata").filter(|u| u.is_object()) {
        reply.usage = usage(u);
    }
    if let Some(reason) = chunk["promptFeedback"]["blockReason"].as_str() {
        return Err(Failure::Api(
            Category::BadRequest,
            format!("the prompt was blocked: {reason}"),
        ));
    }
    let Some(candidate) = chunk["candidates"].as_array().and_then(|c| c.first()) else {
        return Ok(false);
    };
    for part in candidate["content"]["parts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        // A thinking model's thoughts are not its answer.
        if part["thought"].as_bool() == Some(true) {
            continue;
        }
        if let Some(text) = part["text"].as_str().filter(|t| !t.is_empty()) {
            reply.content.push_str(text);
            show(text)?;
        }
        if let Some(call) = part.get("functionCall") {
            // Older models give no ids: the client numbers the calls, as
            // for Ollama, and results go back by name in the same order.
            let id = call["id"].as_str().map_or_else(
                || format!("gemini_{}", reply.tool_calls.len()),
                str::to_owned,
            );
            reply.tool_calls.push(ToolCall {
                id,
                name: call["name"].as_str().unwrap_or_default().to_owned(),
                arguments: call["args"].as_object().cloned().unwrap_or_default(),
            });
        }
    }
    match candidate["finishReason"].as_str() {
        Some(reason) => {
            reply.stop_reason = reason.to_owned();
            Ok(true)
        }
        None => Ok(false),
    }
}

/// `usageMetadata`: the prompt's tokens (cached ones included), the
/// answer's and, for a thinking model, its thoughts' (billed as output).
fn usage(u: &Value) -> Usage {
    let thoughts = u["thoughtsTokenCount"].as_u64().unwrap_or(0);
    Usage {
        input_tokens: u["promptTokenCount"].as_u64(),
        output_tokens: u["candidatesTokenCount"]
            .as_u64()
            .map(|n| n.saturating_add(thoughts)),
        cache_read_tokens: u["cachedContentTokenCount"].as_u64(),
        cache_write_tokens: None,
        cost: None,
    }
}

fn no_candidates(v: &Value) -> Failure {
    let what = match v["candidates"].as_array() {
        Some(c) if !c.is_empty() => "response has no finish reason",
        _ => return parse::missing("candidates"),
    };
    Failure::Api(Category::Server, what.into())
}

/// `contents`: user turns, the model's turns (text and calls), and tool
/// results as a user turn of `functionResponse` parts, each named after
/// its call.
fn contents(c: &Conversation) -> Json<'_> {
    let turn =
        |role, parts| Json::object([("role", Json::Str(role)), ("parts", Json::Array(parts))]);
    let text = |text| Json::object([("text", Json::from(text))]);
    let mut out = Vec::new();
    let mut calls: Vec<&ToolCall> = Vec::new();
    for m in &c.messages {
        match m.role {
            Role::User => out.push(turn("user", vec![text(&m.content)])),
            Role::Assistant => {
                let mut parts = Vec::new();
                if !m.content.is_empty() || m.tool_calls.is_empty() {
                    parts.push(text(&m.content));
                }
                for call in &m.tool_calls {
                    let function = Json::object([
                        ("name", Json::from(&call.name)),
                        ("args", Json::Args(&call.arguments)),
                    ]);
                    parts.push(Json::object([("functionCall", function)]));
                    calls.push(call);
                }
                out.push(turn("model", parts));
            }
            Role::Tool => {
                let parts = m
                    .tool_results
                    .iter()
                    .map(|r| {
                        let name = calls
                            .iter()
                            .rev()
                            .find(|c| c.id == r.call_id)
                            .map_or("", |c| c.name.as_str());
                        let key = if r.is_error { "error" } else { "content" };
                        let response = Json::object([(key, Json::from(&r.content))]);
                        let function =
                            Json::object([("name", Json::Str(name)), ("response", response)]);
                        Json::object([("functionResponse", function)])
                    })
                    .collect();
                out.push(turn("user", parts));
            }
        }
    }
    Json::Array(out)
}

/// A model name as one path segment: anything but letters, digits and
/// `-._` percent-encoded, so no name can reach another path or a query.
fn escape(model: &str) -> String {
    let mut out = String::with_capacity(model.len());
    for b in model.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' => out.push(char::from(b)),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_names_stay_one_segment() {
        assert_eq!(escape("gemini-2.5-flash"), "gemini-2.5-flash");
        assert_eq!(escape("a/../b?key=x"), "a%2F..%2Fb%3Fkey%3Dx");
    }
}
