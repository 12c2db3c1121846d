//! Why a tool gave no result, typed, with its cause.
//!
//! Whatever goes wrong in a tool is an error result for the model (or an
//! MCP client), never an error of its caller: [`ToolError`]'s `Display` is
//! that text, word for word what the model has always been told. What
//! caused it rides along for a caller that follows
//! [`std::error::Error::source`]: the memory's typed error beneath a
//! memory tool's failure, the MCP client's beneath a server's, the I/O
//! error beneath a built-in tool's.

use axe_base::error::Error;

use crate::mcp::McpError;

#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A refusal or a failure that is only words: arguments that make no
    /// sense, a path outside the workdir, a tool's own verdict.
    #[error("{0}")]
    Said(String),
    /// A failure with a cause: `text` is what the model is told (the
    /// cause's line, after the tool's name or more).
    #[error("{text}")]
    Caused {
        text: String,
        source: Box<dyn std::error::Error + Send + Sync + 'static>,
    },
    /// A call of an MCP server's tool that failed: its line is the
    /// client's.
    #[error(transparent)]
    Mcp(McpError),
}

impl ToolError {
    /// `text` for the model, `source` its cause.
    pub fn caused(
        text: impl Into<String>,
        source: impl std::error::Error + Send + Sync + 'static,
    ) -> ToolError {
        ToolError::Caused {
            text: text.into(),
            source: Box::new(source),
        }
    }

    /// `tool error: <error>`: a memory operation's failure, the toolkit's
    /// error (typed by its crate) kept as the cause.
    pub fn of(tool: &str, e: Error) -> ToolError {
        ToolError::caused(format!("{tool} error: {e}"), e)
    }
}

impl ToolError {
    /// Whether the tool refused to rewrite a file because it had changed
    /// since it was read: a memory [`Error::Conflict`] beneath, whatever
    /// the text says (another error may repeat a conflict's words).
    pub fn is_conflict(&self) -> bool {
        match self {
            ToolError::Caused { source, .. } => source
                .downcast_ref::<Error>()
                .is_some_and(|e| matches!(e.as_reported(), Error::Conflict(_))),
            ToolError::Said(_) | ToolError::Mcp(_) => false,
        }
    }
}

impl From<String> for ToolError {
    fn from(text: String) -> ToolError {
        ToolError::Said(text)
    }
}

impl From<&str> for ToolError {
    fn from(text: &str) -> ToolError {
        ToolError::Said(text.to_owned())
    }
}

impl From<McpError> for ToolError {
    fn from(e: McpError) -> ToolError {
        ToolError::Mcp(e)
    }
}
