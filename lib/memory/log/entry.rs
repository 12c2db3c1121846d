//! One run-log entry: how it is written and how it is read back.
//!
//! ```text
//! ## 2026-02-28T15:04:05Z
//! **Task:** <task on one line>
//! **Result:** <result, possibly many lines>
//!
//! ```
//!
//! Entries are bytes, not strings: a log may hold anything a user or
//! another tool put there, and nothing here may lose or reject it.

use serde::Serialize;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// The longest result kept, in characters; longer ones get `...`.
pub const RESULT_LIMIT: usize = 1000;

/// The longest task kept, cut the same way. Go stored tasks whole, so a
/// 50 MB stdin became a 50 MB entry, and a long task fed back by every
/// later run could push a small model past its context.
pub const TASK_LIMIT: usize = RESULT_LIMIT;

/// What starts an entry: `## ` at the start of a line.
pub const HEADER: &[u8] = b"## ";

/// The stored form of an empty task or result.
const NONE: &[u8] = b"(none)";

/// An entry ready to append, and whether its result and task were cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Formatted {
    pub timestamp: String,
    pub bytes: Vec<u8>,
    pub truncated: bool,
    pub task_truncated: bool,
}

/// An entry read back, for `--json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    /// The header text after `## `, normally an RFC 3339 UTC time; not
    /// validated, as in Go.
    pub timestamp: String,
    /// The `**Task:**` line, or `None` for a hand-written entry without one.
    pub task: Option<String>,
    /// The result with escaping undone, or the entry's remaining text when
    /// it has no `**Result:**` line.
    pub result: String,
}

/// `2026-02-28T15:04:05Z`: UTC, whole seconds, as Go's `time.RFC3339`.
pub fn timestamp(at: OffsetDateTime) -> String {
    let utc = at
        .to_offset(time::UtcOffset::UTC)
        .replace_nanosecond(0)
        .expect("0 is a valid nanosecond");
    utc.format(&Rfc3339)
        .expect("a UTC time within years 0..=9999 formats as RFC 3339")
}

/// Builds the bytes of one entry, as the Go `axe` wrote it: an empty task or result
/// becomes `(none)`, newlines in the task become spaces, a result longer than
/// [`RESULT_LIMIT`] characters is cut and gets `...`.
///
/// Beyond Go: result lines that would start with `## ` are escaped (see
/// [`escape_result`]) so they cannot split the entry, and the task is cut
/// like the result, at [`TASK_LIMIT`].
pub fn format(at: OffsetDateTime, task: &[u8], result: &[u8]) -> Formatted {
    let timestamp = timestamp(at);
    let (result, truncated) = cut(result, RESULT_LIMIT);
    let (task, task_truncated) = cut(task, TASK_LIMIT);
    let mut bytes = Vec::with_capacity(64 + task.len() + result.len());
    bytes.extend_from_slice(HEADER);
    bytes.extend_from_slice(timestamp.as_bytes());
    bytes.extend_from_slice(b"\n**Task:** ");
    if task.is_empty() {
        bytes.extend_from_slice(NONE);
    } else {
        bytes.extend(task.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
        if task_truncated {
            bytes.extend_from_slice(b"...");
        }
    }
    bytes.extend_from_slice(b"\n**Result:** ");
    if result.is_empty() {
        bytes.extend_from_slice(NONE);
    } else {
        escape_result(result, &mut bytes);
        if truncated {
            bytes.extend_from_slice(b"...");
        }
    }
    bytes.extend_from_slice(b"\n\n");
    Formatted {
        timestamp,
        bytes,
        truncated,
        task_truncated,
    }
}

/// The first `limit` characters of `bytes`, and whether that cut anything.
fn cut(bytes: &[u8], limit: usize) -> (&[u8], bool) {
    match cut_point(bytes, limit) {
        Some(end) => (&bytes[..end], true),
        None => (bytes, false),
    }
}

/// The byte offset just past the first `limit` characters, or `None` when
/// `bytes` has no more than `limit`. A byte that is not part of valid UTF-8
/// counts as one character, so the cut never splits a valid character and
/// invalid input is neither rejected nor altered.
pub fn cut_point(bytes: &[u8], limit: usize) -> Option<usize> {
    let mut seen = 0;
    let mut pos = 0;
    for chunk in bytes.utf8_chunks() {
        for (i, _) in chunk.valid().char_indices() {
            if seen == limit {
                return Some(pos + i);
            }
            seen += 1;
        }
        pos += chunk.valid().len();
        for _ in chunk.invalid() {
            if seen == limit {
                return Some(pos);
            }
            seen += 1;
            pos += 1;
        }
    }
    None
}

/// True for a line that is zero or more spaces and then `## `.
fn indented_header(line: &[u8]) -> bool {
    let spaces = line.iter().take_while(|&&b| b == b' ').count();
    line[spaces..].starts_with(HEADER)
}

/// Copies `result`, giving every line after the first that is spaces and
/// then `## ` one more leading space ([`escape_headers`]); the first
/// follows `**Result:** ` on its line, where it starts nothing.
pub fn escape_result(result: &[u8], out: &mut Vec<u8>) {
    let (first, rest) = first_line(result);
    out.extend_from_slice(first);
    escape_headers(rest, out);
}

/// Copies `text`, giving every line that is spaces and then `## ` one
/// more leading space: what keeps text inside an entry from starting one
/// (a run log's entry, or a daily log's, whose headers are `## HH:MM`).
///
/// Markdown allows up to three spaces before a heading, so ` ## x` still
/// renders as the heading `## x`, but it is no longer an entry header.
/// Escaping lines that already had spaces too keeps the scheme reversible:
/// [`unescape_headers`] removes exactly one space from every such line.
pub fn escape_headers(text: &[u8], out: &mut Vec<u8>) {
    for line in text.split_inclusive(|&b| b == b'\n') {
        if indented_header(line) {
            out.push(b' ');
        }
        out.extend_from_slice(line);
    }
}

/// The inverse of [`escape_result`].
pub fn unescape_result(stored: &[u8]) -> Vec<u8> {
    let (first, rest) = first_line(stored);
    let mut out = Vec::with_capacity(stored.len());
    out.extend_from_slice(first);
    out.extend_from_slice(&unescape_headers(rest));
    out
}

/// The inverse of [`escape_headers`].
pub fn unescape_headers(stored: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(stored.len());
    for line in stored.split_inclusive(|&b| b == b'\n') {
        if line.first() == Some(&b' ') && indented_header(line) {
            out.extend_from_slice(&line[1..]);
        } else {
            out.extend_from_slice(line);
        }
    }
    out
}

/// The first line of `text`, with its newline, and the rest.
fn first_line(text: &[u8]) -> (&[u8], &[u8]) {
    let end = memchr::memchr(b'\n', text).map_or(text.len(), |i| i + 1);
    text.split_at(end)
}

/// Reads one entry (starting at its `## ` header) back into its parts.
pub fn parse(entry: &[u8]) -> Record {
    let entry = entry.strip_prefix(HEADER).unwrap_or(entry);
    let (header, mut body) = split_line(entry);
    let mut task = None;
    if let Some(rest) = body.strip_prefix(b"**Task:** ") {
        let (line, after) = split_line(rest);
        task = Some(lossy(line));
        body = after;
    }
    // The entry ends with the blank line that separates it from the next;
    // what is before that belongs to the result, newlines included.
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    let body = body.strip_suffix(b"\n").unwrap_or(body);
    let result = match body.strip_prefix(b"**Result:** ") {
        Some(stored) => lossy(&unescape_result(stored)),
        None => lossy(body),
    };
    Record {
        timestamp: lossy(header.strip_suffix(b"\r").unwrap_or(header)),
        task,
        result,
    }
}

/// The first line (without its newline) and the rest.
fn split_line(bytes: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b'\n', bytes) {
        Some(i) => (&bytes[..i], &bytes[i + 1..]),
        None => (bytes, &[]),
    }
}

/// JSON strings are Unicode: bytes that are not UTF-8 become U+FFFD here,
/// and only here. The plain output of `axe-mem-load` keeps them as they are.
fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    const AT: OffsetDateTime = datetime!(2026-02-28 15:04:05.123 UTC);

    fn text(f: &Formatted) -> &str {
        std::str::from_utf8(&f.bytes).unwrap()
    }

    #[test]
    fn exact_format() {
        let f = format(AT, b"do the thing", b"it worked");
        assert_eq!(
            text(&f),
            "## 2026-02-28T15:04:05Z\n**Task:** do the thing\n**Result:** it worked\n\n"
        );
        assert_eq!(f.timestamp, "2026-02-28T15:04:05Z");
        assert!(!f.truncated);
    }

    #[test]
    fn timestamp_is_converted_to_utc() {
        let at = datetime!(2026-03-01 01:00:00 +02:00);
        assert_eq!(timestamp(at), "2026-02-28T23:00:00Z");
    }

    #[test]
    fn empty_task_and_result_are_none() {
        let f = format(AT, b"", b"");
        assert!(text(&f).contains("**Task:** (none)\n"));
        assert!(text(&f).contains("**Result:** (none)\n\n"));
    }

    #[test]
    fn task_newlines_become_spaces() {
        let f = format(AT, b"a\nb\nc", b"r");
        assert!(text(&f).contains("**Task:** a b c\n"));
    }

    #[test]
    fn result_newlines_are_kept() {
        let f = format(AT, b"t", b"line 1\nline 2\n\nline 4");
        assert!(text(&f).ends_with("**Result:** line 1\nline 2\n\nline 4\n\n"));
    }

    #[test]
    fn result_of_1001_characters_is_cut_to_1000_and_dots() {
        let f = format(AT, b"t", "x".repeat(1001).as_bytes());
        let expected = format!("**Result:** {}...\n\n", "x".repeat(1000));
        assert!(text(&f).ends_with(&expected));
        assert!(f.truncated);
    }

    #[test]
    fn task_is_cut_like_the_result() {
        // The cut falls after the newline, which still becomes a space.
        let task = format!("{}\n{}", "t".repeat(999), "u".repeat(5));
        let f = format(AT, task.as_bytes(), b"r");
        let want = format!("**Task:** {} ...\n**Result:** r", "t".repeat(999));
        assert!(text(&f).contains(&want), "{}", text(&f));
        assert!(f.task_truncated && !f.truncated);
        let f = format(AT, "t".repeat(1000).as_bytes(), b"r");
        assert!(!f.task_truncated);
        assert!(text(&f).contains(&format!("**Task:** {}\n", "t".repeat(1000))));
    }

    #[test]
    fn result_of_exactly_1000_characters_is_kept() {
        let f = format(AT, b"t", "x".repeat(1000).as_bytes());
        let expected = format!("**Result:** {}\n\n", "x".repeat(1000));
        assert!(text(&f).ends_with(&expected));
        assert!(!f.truncated);
    }

    #[test]
    fn truncation_counts_characters_not_bytes() {
        let result = "é".repeat(1001);
        let f = format(AT, b"t", result.as_bytes());
        let expected = format!("**Result:** {}...\n\n", "é".repeat(1000));
        assert!(text(&f).ends_with(&expected));
    }

    #[test]
    fn invalid_bytes_count_as_characters_and_survive() {
        let mut result = vec![0xff; 999];
        result.extend_from_slice(b"ab");
        let f = format(AT, b"t", &result);
        let mut expected = b"**Result:** ".to_vec();
        expected.extend_from_slice(&[0xff; 999]);
        expected.extend_from_slice(b"a...\n\n");
        assert!(f.bytes.ends_with(&expected));
    }

    #[test]
    fn header_lines_in_results_are_escaped_and_restored() {
        let result = b"## not first\n## Summary\n  ## indented\n   ## three\n##no space\n#";
        let f = format(AT, b"t", result);
        assert!(f.bytes.ends_with(
            b"**Result:** ## not first\n ## Summary\n   ## indented\n    ## three\n##no space\n#\n\n"
        ));
        let lines_starting_a_header = f
            .bytes
            .split(|&b| b == b'\n')
            .filter(|l| l.starts_with(HEADER))
            .count();
        assert_eq!(lines_starting_a_header, 1, "only the entry's own header");
        assert_eq!(parse(&f.bytes).result.as_bytes(), result);
    }

    #[test]
    fn header_lines_in_any_text_are_escaped_and_restored() {
        let text = b"## 09:15 first\nx\n  ## 10:00\n##no\n";
        let mut out = Vec::new();
        escape_headers(text, &mut out);
        assert_eq!(out, b" ## 09:15 first\nx\n   ## 10:00\n##no\n");
        assert_eq!(unescape_headers(&out), text);
    }

    #[test]
    fn parse_round_trips_a_formatted_entry() {
        for result in ["x", "multi\nline\n", "ends in blank lines\n\n", "a\r\nb"] {
            let f = format(AT, b"the task", result.as_bytes());
            let r = parse(&f.bytes);
            assert_eq!(r.timestamp, "2026-02-28T15:04:05Z");
            assert_eq!(r.task.as_deref(), Some("the task"));
            assert_eq!(r.result, result);
        }
    }

    #[test]
    fn parse_keeps_hand_written_entries() {
        let r = parse(b"## a note\nsome text\nmore\n\n");
        assert_eq!(r.timestamp, "a note");
        assert_eq!(r.task, None);
        assert_eq!(r.result, "some text\nmore");
    }

    #[test]
    fn cut_point_edges() {
        assert_eq!(cut_point(b"", 0), None);
        assert_eq!(cut_point(b"a", 0), Some(0));
        assert_eq!(cut_point(b"abc", 3), None);
        assert_eq!(cut_point(b"abcd", 3), Some(3));
        assert_eq!(cut_point("aé€x".as_bytes(), 3), Some(6));
    }
}
