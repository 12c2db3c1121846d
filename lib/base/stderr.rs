//! The one way anything reaches stderr: one line at a time, with control
//! characters escaped.
//!
//! Much of what we report came from outside: an agent name typed by a
//! user, a task a model chose for a sub-agent, a provider's error text. A
//! newline in it would break the one-line promise of our errors, an
//! escape sequence would act on the user's terminal (retitle it, clear
//! it, set its clipboard), and a bidi override would show the text around
//! it in another order than it has. stdout is left alone where it carries
//! answers, which are data and stay byte-exact; where a command lists
//! text from outside for a person to read (`axe-log`, `axe-import`'s
//! report) it goes through [`escape`] too.

use std::borrow::Cow;
use std::fmt;
use std::io::{self, Write};

/// Writes `line` and a newline to stderr. Losing stderr must not end a
/// run, so errors are ignored; the lock keeps lines from parallel
/// sub-agents whole.
pub fn note(line: fmt::Arguments) {
    let mut out = String::new();
    push_line(&mut out, &line.to_string());
    write(&out);
}

/// `line`, escaped, and a newline, at the end of `out`.
pub fn push_line(out: &mut String, line: &str) {
    out.push_str(&escape(line));
    out.push('\n');
}

/// Whole lines (made by [`push_line`]) to stderr in one write: stderr is
/// unbuffered, and a `writeln!` there is a write for each piece, which a
/// reader on the other end of a pipe wakes up for.
pub fn write(lines: &str) {
    let _ = io::stderr().lock().write_all(lines.as_bytes());
}

/// `text` from outside as it may be shown on a terminal: every control
/// character but tab (C0, DEL, C1, so ESC and CSI) and every bidi control
/// spelled out: `\n`, `\r`, `\x1b`, `\u{9b}`, `\u{202e}`.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text
        .chars()
        .any(|c| (c.is_control() && c != '\t') || is_bidi(c))
    {
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
            c if c.is_control() || is_bidi(c) => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `c` changes the direction text is shown in (the embeddings,
/// overrides and isolates of Unicode's bidi algorithm, and its marks):
/// invisible, they show the text around them in another order than it
/// has ("Trojan Source", CVE-2021-42574).
pub fn is_bidi(c: char) -> bool {
    matches!(
        c,
        '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
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
        assert_eq!(
            escape("x\u{202e}gpj.exe\u{2066}\u{200f}\u{7f}"),
            "x\\u{202e}gpj.exe\\u{2066}\\u{200f}\\x7f"
        );
    }
}
