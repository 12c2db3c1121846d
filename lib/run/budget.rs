//! The run's token budget before its first call: a prompt that alone
//! would use more than the budget is refused, nothing sent, rather than
//! paid for and then reported over.
//!
//! Only the provider knows how many tokens a text is, and asking it is a
//! call. So the prompt is estimated, as most tools do for English text
//! and code: one token per 4 characters (the system prompt, the messages
//! and the tool calls and results in them), rounded up. Tool definitions
//! are not counted, so the estimate errs low: a prompt it lets through
//! may still go over, and is then reported over once the reply says what
//! it used.

use axe_base::error::{Error, Result};
use axe_llm::Message;

/// Characters per token in the estimate.
pub const CHARS_PER_TOKEN: u64 = 4;

/// About how many tokens `system`, the earlier turns of `history` and
/// the user message `sent` after them are.
pub fn estimate(system: &str, history: &[Message], sent: &str) -> u64 {
    let chars = |s: &str| s.chars().count() as u64;
    let mut total = chars(system) + chars(sent);
    for m in history {
        total += chars(&m.content);
        for call in &m.tool_calls {
            total += chars(&call.name) + json_chars(&call.arguments);
        }
        for result in &m.tool_results {
            total += chars(&result.content);
        }
    }
    total.div_ceil(CHARS_PER_TOKEN)
}

/// How many characters `value` is as JSON text, counted as it is
/// written rather than written out to be measured.
fn json_chars(value: &impl serde::Serialize) -> u64 {
    /// Counts the characters written: every byte that does not continue
    /// a UTF-8 sequence starts one.
    struct Counter(u64);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.iter().filter(|b| (**b & 0xC0) != 0x80).count() as u64;
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    let _ = serde_json::to_writer(&mut counter, value);
    counter.0
}

/// Refuses a prompt whose [`estimate`] alone is over `budget` (`None`:
/// no budget).
pub fn check(budget: Option<u64>, system: &str, history: &[Message], sent: &str) -> Result<()> {
    let Some(max) = budget else {
        return Ok(());
    };
    match estimate(system, history, sent) {
        estimate if estimate > max => Err(Error::PromptOverBudget { estimate, max }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_characters_a_token_rounded_up() {
        assert_eq!(estimate("", &[], ""), 0);
        assert_eq!(estimate("abcd", &[Message::user("é")], ""), 2);
        assert_eq!(estimate("", &[Message::user("abcd")], "e"), 2);
        let long = "x".repeat(1000);
        assert_eq!(estimate("", &[], &long), 250);
        assert!(check(Some(250), "", &[], &long).is_ok());
        assert!(check(None, "", &[], &long).is_ok());
        // A tool call's arguments count as their JSON text.
        let call = axe_llm::ToolCall {
            id: "c".into(),
            name: "abc".into(),
            arguments: serde_json::json!({"k": "é\"x"})
                .as_object()
                .cloned()
                .unwrap(),
        };
        let mut reply = Message::user("");
        reply.tool_calls.push(call);
        // `abc` and `{"k":"é\"x"}`: 3 + 12 characters.
        assert_eq!(estimate("", &[reply], "x"), 16_u64.div_ceil(4));
        assert!(matches!(
            check(Some(249), "", &[], &long),
            Err(Error::PromptOverBudget {
                estimate: 250,
                max: 249
            })
        ));
    }
}
