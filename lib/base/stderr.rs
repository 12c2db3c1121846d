//! The one way anything reaches stderr: one line at a time, with control
//! characters escaped.
//!
//! Much of what we report came from outside: an agent name typed by a
//! user, a task a model chose for a sub-agent, a provider's error text. A
//! newline in it would break the one-line promise of our errors, and an
//! escape sequence would act on the user's terminal (retitle it, clear
//! it). stdout is left alone: answers are data and stay byte-exact.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

/// Writes `line` and a newline to stderr. Losing stderr must not end a
/// run, so errors are ignored; the lock keeps lines from parallel
/// sub-agents whole.
pub fn note(line: fmt::Arguments) {
    let line = line.to_string();
    let _ = writeln!(io::stderr().lock(), "{}", escape(&line));
}

/// `text` with every control character but tab spelled out: `\n`, `\r`,
/// `\x1b`, `\u{9b}`.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && c != '\t') {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\t' => out.push(c),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn control_characters_are_spelled_out() {
        assert_eq!(escape("plain\ttext é"), "plain\ttext é");
        assert_eq!(
            escape("a\nb\r\x1b]0;pwned\x07\x1b[2J\u{9b}"),
            "a\\nb\\r\\x1b]0;pwned\\x07\\x1b[2J\\u{9b}"
        );
    }
}
