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

use std::fmt;
use std::io;

use axe_base::error::{Category, Error};

/// A failure of a provider call, or of a model string; see the module's
/// documentation.
#[derive(Debug)]
pub enum LlmError {
    /// The server answered with an error status, said no sense, or the
    /// reply could not be read: `<category>: <message>`; `status` is the
    /// HTTP status when there was one.
    Api {
        category: Category,
        status: Option<u16>,
        message: String,
    },
    /// No complete reply within the call's limit, in seconds.
    Timeout { limit: std::time::Duration },
    /// No connection to the provider, or it broke before a reply:
    /// `message` names the URL and the reason, `source` is the I/O error
    /// (key-free: the redaction replaces one that held the key).
    Connection { message: String, source: io::Error },
    /// A model string that is not `provider/model-name`.
    Model { model: String, fault: ModelFault },
    /// The agent template's placeholder model, left unchanged.
    Placeholder { provider: String, model: String },
    /// A `response_format` the provider cannot honour; `can` names those
    /// that can.
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

impl fmt::Display for LlmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LlmError::Api {
                category, message, ..
            } => write!(f, "{category}: {message}"),
            LlmError::Timeout { .. } => write!(f, "{}: {}", Category::Timeout, self.message()),
            LlmError::Connection { message, .. } => f.write_str(message),
            LlmError::Model { model, fault } => {
                let why = match fault {
                    ModelFault::NoSlash => "expected provider/model-name",
                    ModelFault::EmptyProvider => "empty provider",
                    ModelFault::EmptyName => "empty model name",
                };
                write!(f, "invalid model format \"{model}\": {why}")
            }
            LlmError::Placeholder { provider, model } => write!(
                f,
                "unsupported provider \"{provider}\": the agent file's model is still the template's placeholder \"{model}\"; set it to a real one, e.g. anthropic/claude-sonnet-4-20250514"
            ),
            LlmError::FormatUnsupported {
                format,
                provider,
                can,
            } => write!(
                f,
                "params.response_format {format} is not supported by provider \"{provider}\" (supported by {})",
                can.join(", ")
            ),
        }
    }
}

impl std::error::Error for LlmError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LlmError::Connection { source, .. } => Some(source),
            _ => None,
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
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormatError {
    TypeNotString,
    NoType,
    NotStringOrTable,
    UnknownType(String),
    UnknownField { key: String, kind: String },
    SchemaNeedsTable,
    NoSchema,
    SchemaNotTable,
    BadName,
    BadStrict,
}

impl fmt::Display for FormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FormatError::TypeNotString => f.write_str("its type must be a string"),
            FormatError::NoType => f.write_str("a table needs a type"),
            FormatError::NotStringOrTable => f.write_str("must be a string or a table"),
            FormatError::UnknownType(other) => write!(
                f,
                "unknown type \"{other}\" (expected {})",
                crate::ResponseFormat::TYPES.join(", ")
            ),
            FormatError::UnknownField { key, kind } => {
                write!(f, "unknown field \"{key}\" for type \"{kind}\"")
            }
            FormatError::SchemaNeedsTable => {
                f.write_str("type \"json_schema\" needs a table with a schema")
            }
            FormatError::NoSchema => f.write_str("type \"json_schema\" needs a schema"),
            FormatError::SchemaNotTable => {
                f.write_str("schema must be a table (a JSON Schema object)")
            }
            FormatError::BadName => f.write_str("name must be a non-empty string"),
            FormatError::BadStrict => f.write_str("strict must be true or false"),
        }
    }
}

impl std::error::Error for FormatError {}
