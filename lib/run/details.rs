//! What a run says about each tool call: a `-v` line as it ends, and a
//! [`Detail`] in `--json`'s `tool_call_details`. The line is escaped on
//! its way to stderr (a result may carry terminal escapes); the detail
//! keeps the bytes exact, as JSON can.

use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};

use axe_base::report::Report;
use axe_llm::{ToolCall, ToolResult};
use axe_memory::secrets::Secrets;

/// The most of a result a detail keeps, in bytes.
const OUTPUT_LIMIT: usize = 1024;
/// The most of the arguments and of the result a `-v` line shows, in
/// characters.
const LINE_LIMIT: usize = 120;

/// One tool call of the top-level agent, as `--json` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct Detail {
    pub name: String,
    pub input: Map<String, Value>,
    /// The result, cut at 1024 bytes and then marked `... (truncated)`.
    pub output: String,
    pub is_error: bool,
    /// The tool refused a rewrite because the file had changed since it
    /// was read (typed by the tool, not told by its words).
    #[serde(skip)]
    pub conflict: bool,
    /// The conversation's turn, from 0.
    pub turn: usize,
    pub duration_ms: u128,
}

impl Detail {
    pub fn of(
        call: &ToolCall,
        result: &ToolResult,
        conflict: bool,
        turn: usize,
        took: Duration,
    ) -> Detail {
        let mut output = result.content.clone();
        if output.len() > OUTPUT_LIMIT {
            let mut cut = OUTPUT_LIMIT;
            while !output.is_char_boundary(cut) {
                cut -= 1;
            }
            output.truncate(cut);
            output.push_str("... (truncated)");
        }
        Detail {
            name: call.name.clone(),
            input: call.arguments.clone(),
            output,
            is_error: result.is_error,
            conflict,
            turn,
            duration_ms: took.as_millis(),
        }
    }
}

/// The `-v` line of a call that ended: `[tool] read_file {"path":"a"}
/// (success, 3ms): 1: first line`, with what looks like a credential in
/// the arguments or the result replaced by its marker (before the cut, so
/// half a key is never shown either).
pub fn say(
    report: &dyn Report,
    call: &ToolCall,
    result: &ToolResult,
    took: Duration,
    secrets: &Secrets,
) {
    let status = if result.is_error { "error" } else { "success" };
    let input = Value::Object(call.arguments.clone()).to_string();
    report.note(format_args!(
        "[tool] {} {} ({status}, {}ms): {}",
        call.name,
        cut(&secrets.redact_str(&input).0),
        took.as_millis(),
        cut(&secrets.redact_str(&result.content).0)
    ));
}

/// `text` up to [`LINE_LIMIT`] characters, `...` marking a cut.
fn cut(text: &str) -> String {
    match text.char_indices().nth(LINE_LIMIT) {
        Some((i, _)) => format!("{}...", &text[..i]),
        None => text.to_owned(),
    }
}
