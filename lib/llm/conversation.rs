//! A conversation with a model, provider-neutral: what is sent (also the
//! `--request` file format of `axe-llm`) and the reply that comes back.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::FormatError;

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
    /// Sent when set, 0 included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// 0 is not sent (Anthropic then gets 4096, which its API requires).
    #[serde(default)]
    pub max_tokens: u64,
    /// The shape the answer must have; `None` (and `text`) is free text.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "format_field"
    )]
    pub response_format: Option<ResponseFormat>,
    /// Prompt caching where a provider must be asked for it (Anthropic):
    /// on unless `false`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<bool>,
    /// How many bytes at the start of `system` stay the same from run to
    /// run (persona, skill, files): the prefix a provider may cache. What
    /// follows (the run log's entries) changes with every run. `None`: all
    /// of it.
    #[serde(skip)]
    pub system_stable: Option<usize>,
}

impl Conversation {
    /// Whether to ask for prompt caching.
    pub fn caches(&self) -> bool {
        self.cache != Some(false)
    }

    /// `system` as its stable prefix and the rest.
    pub fn system_parts(&self) -> (&str, &str) {
        let at = self
            .system_stable
            .filter(|&n| self.system.is_char_boundary(n))
            .unwrap_or(self.system.len());
        self.system.split_at(at)
    }
}

/// `[params] response_format`: `"text"`, `"json_object"`, or
/// `{type = "json_schema", schema = {...}}` with an optional `name` and
/// `strict`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResponseFormat {
    Text,
    JsonObject,
    JsonSchema {
        name: Option<String>,
        schema: Value,
        strict: Option<bool>,
    },
}

impl ResponseFormat {
    /// The types, in the order error messages list them.
    pub const TYPES: [&'static str; 3] = ["text", "json_object", "json_schema"];

    /// Reads the value an agent file or a `--request` gives; the error
    /// says what is wrong with it.
    pub fn from_value(v: &Value) -> Result<ResponseFormat, FormatError> {
        let (kind, table) = match v {
            Value::String(kind) => (kind.as_str(), None),
            Value::Object(table) => match table.get("type") {
                Some(Value::String(kind)) => (kind.as_str(), Some(table)),
                Some(_) => return Err(FormatError::TypeNotString),
                None => return Err(FormatError::NoType),
            },
            _ => return Err(FormatError::NotStringOrTable),
        };
        let fields: &[&str] = match kind {
            "text" | "json_object" => &["type"],
            "json_schema" => &["type", "schema", "name", "strict"],
            other => {
                return Err(FormatError::UnknownType(other.to_owned()));
            }
        };
        if let Some(key) = table
            .into_iter()
            .flat_map(|t| t.keys())
            .find(|k| !fields.contains(&k.as_str()))
        {
            return Err(FormatError::UnknownField {
                key: key.clone(),
                kind: kind.to_owned(),
            });
        }
        let Some(table) = table.filter(|_| kind == "json_schema") else {
            return match kind {
                "text" => Ok(ResponseFormat::Text),
                "json_object" => Ok(ResponseFormat::JsonObject),
                _ => Err(FormatError::SchemaNeedsTable),
            };
        };
        let schema = match table.get("schema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            Some(_) => return Err(FormatError::SchemaNotTable),
            None => return Err(FormatError::NoSchema),
        };
        let name = match table.get("name") {
            None => None,
            Some(Value::String(n)) if !n.is_empty() => Some(n.clone()),
            Some(_) => return Err(FormatError::BadName),
        };
        let strict = match table.get("strict") {
            None => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => return Err(FormatError::BadStrict),
        };
        Ok(ResponseFormat::JsonSchema {
            name,
            schema,
            strict,
        })
    }

    /// Whether the answer is asked to be JSON.
    pub fn is_json(&self) -> bool {
        !matches!(self, ResponseFormat::Text)
    }

    /// As an agent file or a `--request` spells it.
    pub fn to_value(&self) -> Value {
        match self {
            ResponseFormat::Text => Value::from("text"),
            ResponseFormat::JsonObject => Value::from("json_object"),
            ResponseFormat::JsonSchema {
                name,
                schema,
                strict,
            } => {
                let mut table = Map::new();
                table.insert("type".into(), "json_schema".into());
                if let Some(name) = name {
                    table.insert("name".into(), name.as_str().into());
                }
                table.insert("schema".into(), schema.clone());
                if let Some(strict) = strict {
                    table.insert("strict".into(), (*strict).into());
                }
                Value::Object(table)
            }
        }
    }
}

impl Serialize for ResponseFormat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_value().serialize(s)
    }
}

fn format_field<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<ResponseFormat>, D::Error> {
    let v = Value::deserialize(d)?;
    ResponseFormat::from_value(&v)
        .map(Some)
        .map_err(|e| serde::de::Error::custom(format!("response_format: {e}")))
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
    /// Shared: a tool's schema is made once a process and offered by
    /// every conversation and server request without a copy.
    #[serde(default = "empty_schema")]
    pub parameters: std::sync::Arc<Value>,
}

fn empty_schema() -> std::sync::Arc<Value> {
    std::sync::Arc::new(serde_json::json!({"type": "object", "properties": {}}))
}

/// The model's answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub model: String,
    pub content: String,
    pub usage: Usage,
    pub stop_reason: String,
    pub tool_calls: Vec<ToolCall>,
}

/// What calls used, as the provider counted it: one reply's, or summed
/// over turns and agents with [`Usage::add`]. Each figure is `None` when
/// no reply said (some local servers, a stream without a usage chunk, a
/// provider that reports no cost): unknown, not zero.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Usage {
    /// Every token of the prompt, cached ones included.
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    /// Prompt tokens read from the provider's cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_read_tokens: Option<u64>,
    /// Prompt tokens written to it (Anthropic says; OpenAI does not).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cache_write_tokens: Option<u64>,
    /// In US dollars, where the provider reports it (OpenRouter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl Usage {
    /// Adds `more`: a figure is known when either side knew it.
    pub fn add(&mut self, more: &Usage) {
        fn sum(a: Option<u64>, b: Option<u64>) -> Option<u64> {
            match (a, b) {
                (Some(a), Some(b)) => Some(a.saturating_add(b)),
                (a, b) => a.or(b),
            }
        }
        self.input_tokens = sum(self.input_tokens, more.input_tokens);
        self.output_tokens = sum(self.output_tokens, more.output_tokens);
        self.cache_read_tokens = sum(self.cache_read_tokens, more.cache_read_tokens);
        self.cache_write_tokens = sum(self.cache_write_tokens, more.cache_write_tokens);
        self.cost = match (self.cost, more.cost) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }

    /// Input and output tokens together: what a `[budget]` counts.
    pub fn tokens(&self) -> u64 {
        self.input_tokens
            .unwrap_or(0)
            .saturating_add(self.output_tokens.unwrap_or(0))
    }
}
