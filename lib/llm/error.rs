//! What can go wrong with a provider call or a model string, typed, with
//! its cause.
//!
//! As `axe_sync::SyncError` (docs/architecture.md, "Errors"): a variant
//! per failure; `Display` is the one line a user is shown (Go's
//! `<category>: <message>` for a failed call); [`LlmError::reported`]
//! names the variant of the toolkit's [`Error`] it is reported as, which
//! decides the exit code. The raw failures of an attempt stay
//! `http::Failure`, which the retry loop reads; a call that failed for
//! good becomes one of these, and then passes through the key's
//! redaction (`stream::Redactor::llm`), so that neither its line nor any
//! cause reachable through [`std::error::Error::source`] holds the key.

use std::io;

use axe_base::error::{Category, Error};

/// A failure of a provider call, or of a model string; see the module's
/// documentation.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    /// The server answered with an error status, said no sense, or the
    /// reply could not be read: `<category>: <message>`; `status` is the
    /// HTTP status when there was one.
    #[error("{category}: {message}")]
    Api {
        category: Category,
        status: Option<u16>,
        message: String,
    },
    /// No complete reply within the call's limit, in seconds.
    #[error("{}: no complete reply within {}s", Category::Timeout, .limit.as_secs_f64())]
    Timeout { limit: std::time::Duration },
    /// No connection to the provider, or it broke before a reply:
    /// `message` names the URL and the reason, `source` is the I/O error
    /// (key-free: the redaction replaces one that held the key).
    #[error("{message}")]
    Connection { message: String, source: io::Error },
    /// A model string that is not `provider/model-name`.
    #[error("invalid model format \"{model}\": {}", .fault.why())]
    Model { model: String, fault: ModelFault },
    /// The agent template's placeholder model, left unchanged.
    #[error(
        "unsupported provider \"{provider}\": the agent file's model is still the template's placeholder \"{model}\"; set it to a real one, e.g. anthropic/claude-sonnet-4-20250514"
    )]
    Placeholder { provider: String, model: String },
    /// A `response_format` the provider cannot honour; `can` names those
    /// that can.
    #[error(
        "params.response_format {format} is not supported by provider \"{provider}\" (supported by {})",
        .can.join(", ")
    )]
    FormatUnsupported {
        format: String,
        provider: &'static str,
        can: Vec<&'static str>,
    },
}

/// What is wrong with a model string's shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelFault {
    NoSlash,
    EmptyProvider,
    EmptyName,
}

impl ModelFault {
    /// What the message says is wrong.
    fn why(self) -> &'static str {
        match self {
            ModelFault::NoSlash => "expected provider/model-name",
            ModelFault::EmptyProvider => "empty provider",
            ModelFault::EmptyName => "empty model name",
        }
    }
}

impl LlmError {
    /// The toolkit's error this one is reported as: its message, and
    /// through its variant the exit code. No wildcard: a new failure is
    /// asked for here.
    pub fn reported(&self) -> Error {
        match self {
            LlmError::Api {
                category, message, ..
            } => Error::Api {
                category: *category,
                message: message.clone(),
            },
            LlmError::Timeout { .. } => Error::Api {
                category: Category::Timeout,
                message: self.message(),
            },
            LlmError::Connection { message, .. } => Error::Connection(message.clone()),
            LlmError::Model { .. } | LlmError::Placeholder { .. } => {
                Error::BadModel(self.to_string())
            }
            LlmError::FormatUnsupported { .. } => Error::Config(self.to_string()),
        }
    }

    /// The text after the category, for those that have one.
    fn message(&self) -> String {
        match self {
            LlmError::Timeout { limit } => {
                format!("no complete reply within {}s", limit.as_secs_f64())
            }
            other => other.to_string(),
        }
    }
}

impl From<LlmError> for Error {
    fn from(e: LlmError) -> Error {
        Error::caused(e.reported(), e)
    }
}

/// Why a `response_format` (an agent file's, a `--request`'s) is not one;
/// its `Display` follows `response_format: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FormatError {
    #[error("its type must be a string")]
    TypeNotString,
    #[error("a table needs a type")]
    NoType,
    #[error("must be a string or a table")]
    NotStringOrTable,
    #[error(
        "unknown type \"{0}\" (expected {types})",
        types = crate::ResponseFormat::TYPES.join(", ")
    )]
    UnknownType(String),
    #[error("unknown field \"{key}\" for type \"{kind}\"")]
    UnknownField { key: String, kind: String },
    #[error("type \"json_schema\" needs a table with a schema")]
    SchemaNeedsTable,
    #[error("type \"json_schema\" needs a schema")]
    NoSchema,
    #[error("schema must be a table (a JSON Schema object)")]
    SchemaNotTable,
    #[error("name must be a non-empty string")]
    BadName,
    #[error("strict must be true or false")]
    BadStrict,
}
