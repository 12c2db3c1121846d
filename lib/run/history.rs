//! A conversation to go on with (`axe-run --messages`): a JSON array of
//! messages in the form `axe-llm --request` and `axe-run --json` give
//! them, read with a bound and checked message by message, so a broken
//! file is one line naming the message and what is wrong with it, never a
//! provider's 400 after the call was paid for.

use std::path::Path;

use serde_json::Value;

use axe_base::error::{Error, Result, describe_io};
use axe_base::read;
use axe_llm::{Message, Role};

/// Reads the conversation in `source`, a file (at most
/// [`read::REQUEST_LIMIT`] bytes) or `-`: `stdin`'s text, which its
/// caller reads (within the run's deadline and the same limit), told
/// what to call it.
pub fn read(source: &str, stdin: impl FnOnce(&str) -> Result<String>) -> Result<Vec<Message>> {
    let name = format!("messages {source}");
    let text = if source == "-" {
        stdin(&name)?
    } else {
        read::text(Path::new(source), read::REQUEST_LIMIT).map_err(|e| {
            Error::caused(
                Error::Input(format!("failed to read {name}: {}", describe_io(&e))),
                e,
            )
        })?
    };
    parse(&text)
        .map_err(|e| Error::caused(Error::Input(format!("invalid messages {source}: {e}")), e))
}

/// Why a `--messages` text is no conversation; its line follows
/// `invalid messages SOURCE: `.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// Not JSON at all.
    #[error("not JSON: {0}")]
    NotJson(#[source] serde_json::Error),
    /// JSON, but not an array: what it is.
    #[error("expected a JSON array of messages, found {0}")]
    NotArray(&'static str),
    /// Message `index` (from 0) is wrong: why, and serde_json's error
    /// when it would not read as a message.
    #[error("message {index}: {why}")]
    At {
        index: usize,
        why: String,
        source: Option<serde_json::Error>,
    },
}

/// The messages in `text`, checked: known roles, and every tool call of
/// an assistant message answered by the tool message right after it, and
/// nothing else.
pub fn parse(text: &str) -> std::result::Result<Vec<Message>, Invalid> {
    let value: Value = serde_json::from_str(text).map_err(Invalid::NotJson)?;
    let Value::Array(items) = value else {
        return Err(Invalid::NotArray(kind(&value)));
    };
    let mut messages = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let at = |why: String| Invalid::At {
            index: i,
            why,
            source: None,
        };
        match item.get("role") {
            Some(Value::String(r)) if ["user", "assistant", "tool"].contains(&r.as_str()) => {}
            Some(Value::String(r)) => {
                return Err(at(format!(
                    "unknown role \"{r}\" (expected user, assistant or tool)"
                )));
            }
            Some(_) => return Err(at("role must be a string".into())),
            None if item.is_object() => return Err(at("no role".into())),
            None => return Err(at(format!("expected an object, found {}", kind(&item)))),
        }
        let message: Message = serde_json::from_value(item).map_err(|e| Invalid::At {
            index: i,
            why: e.to_string(),
            source: Some(e),
        })?;
        messages.push(message);
    }
    check_pairs(&messages)?;
    Ok(messages)
}

/// Each role carries only its own parts, and each assistant message with
/// tool calls is followed by a tool message answering exactly those.
fn check_pairs(messages: &[Message]) -> std::result::Result<(), Invalid> {
    for (i, m) in messages.iter().enumerate() {
        let at = |why: String| {
            Err(Invalid::At {
                index: i,
                why,
                source: None,
            })
        };
        match m.role {
            Role::User if !m.tool_calls.is_empty() || !m.tool_results.is_empty() => {
                return at("a user message has no tool_calls or tool_results".into());
            }
            Role::Assistant if !m.tool_results.is_empty() => {
                return at("an assistant message has tool_calls, not tool_results".into());
            }
            Role::Tool if m.tool_results.is_empty() => {
                return at("a tool message needs tool_results".into());
            }
            Role::Tool => {
                let calls = match i.checked_sub(1).map(|p| &messages[p]) {
                    Some(prev) if prev.role == Role::Assistant => &prev.tool_calls[..],
                    _ => &[],
                };
                if let Some(r) = m
                    .tool_results
                    .iter()
                    .find(|r| !calls.iter().any(|c| c.id == r.call_id))
                {
                    return at(format!(
                        "tool result for \"{}\" matches no tool call of the message before it",
                        r.call_id
                    ));
                }
            }
            Role::User | Role::Assistant => {}
        }
        if m.role == Role::Assistant {
            let answered = messages
                .get(i + 1)
                .filter(|next| next.role == Role::Tool)
                .map_or(&[][..], |next| &next.tool_results[..]);
            if let Some(c) = m
                .tool_calls
                .iter()
                .find(|c| !answered.iter().any(|r| r.call_id == c.id))
            {
                return at(format!(
                    "tool call \"{}\" ({}) has no result in the tool message after it",
                    c.id, c.name
                ));
            }
        }
    }
    Ok(())
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn good_conversations_parse() {
        let text = r#"[
            {"role": "user", "content": "hi"},
            {"role": "assistant", "tool_calls": [{"id": "c1", "name": "recall"}]},
            {"role": "tool", "tool_results": [{"call_id": "c1", "content": "x"}]},
            {"role": "assistant", "content": "done"}
        ]"#;
        let m = parse(text).unwrap();
        assert_eq!(m.len(), 4);
        assert_eq!(m[2].tool_results[0].call_id, "c1");
        assert!(parse("[]").unwrap().is_empty());
    }

    #[test]
    fn each_fault_is_named_with_its_message() {
        assert_eq!(
            err(r#"{"role": "user"}"#),
            "expected a JSON array of messages, found an object"
        );
        assert!(err("[").starts_with("not JSON: "));
        assert_eq!(
            err(r#"["hi"]"#),
            "message 0: expected an object, found a string"
        );
        assert_eq!(err(r#"[{"content": "x"}]"#), "message 0: no role");
        assert_eq!(
            err(r#"[{"role": "user", "content": "a"}, {"role": "system", "content": "b"}]"#),
            "message 1: unknown role \"system\" (expected user, assistant or tool)"
        );
        assert!(
            err(r#"[{"role": "user", "content": "a", "extra": 1}]"#)
                .starts_with("message 0: unknown field `extra`")
        );
        assert_eq!(
            err(
                r#"[{"role": "user"}, {"role": "tool", "tool_results": [{"call_id": "c9", "content": ""}]}]"#
            ),
            "message 1: tool result for \"c9\" matches no tool call of the message before it"
        );
        assert_eq!(
            err(r#"[{"role": "assistant", "tool_calls": [{"id": "c1", "name": "recall"}]}]"#),
            "message 0: tool call \"c1\" (recall) has no result in the tool message after it"
        );
        assert_eq!(
            err(r#"[{"role": "tool"}]"#),
            "message 0: a tool message needs tool_results"
        );
    }
}
