//! JSON-RPC 2.0 over stdio as MCP uses it: one message a line, UTF-8.
//! Reading is bounded: a line over [`MAX_LINE`] is refused without being
//! held in memory, and the server goes on with the next.

use std::io::{self, BufRead};

use serde_json::{Value, json};

/// The largest message read, 16 MiB: far past any tool call a model makes
/// (the notes' own caps are kilobytes), so only a runaway client meets it.
pub const MAX_LINE: usize = 16 << 20;

/// The most messages one batch may hold: a client batches a handful of
/// calls; a larger batch is refused whole, nothing in it run, so that one
/// line cannot queue hours of work ahead of every later request.
pub const MAX_BATCH: usize = 100;

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
/// The stateless revision's "protocol version not supported".
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// One line of input.
pub enum Line {
    /// A message to handle.
    Message(Vec<u8>),
    /// A line longer than [`MAX_LINE`], skipped to its end unread.
    TooLong,
    End,
}

/// The next line of `input`, without its newline.
pub fn read_line(input: &mut impl BufRead) -> io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match input.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            return Ok(match (too_long, line.is_empty()) {
                (true, _) => Line::TooLong,
                (false, true) => Line::End,
                (false, false) => Line::Message(line),
            });
        }
        let (part, done) = match memchr::memchr(b'\n', buf) {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        if !too_long {
            if line.len() + part.len() > MAX_LINE {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(part);
            }
        }
        let ended = done > part.len();
        input.consume(done);
        if ended {
            return Ok(match too_long {
                true => Line::TooLong,
                false => Line::Message(line),
            });
        }
    }
}

/// A reply to the request `id`.
pub fn result(id: &Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error reply to the request `id` (`null` when it could not be read).
pub fn error(id: &Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8]) -> Vec<String> {
        let mut reader = io::BufReader::with_capacity(7, input);
        let mut out = Vec::new();
        loop {
            match read_line(&mut reader).unwrap() {
                Line::Message(m) => out.push(String::from_utf8(m).unwrap()),
                Line::TooLong => out.push("<too long>".into()),
                Line::End => return out,
            }
        }
    }

    #[test]
    fn lines_are_read_whole_across_buffers_and_bounded() {
        assert_eq!(
            lines(b"{\"a\":1}\n\n{\"b\":2}"),
            ["{\"a\":1}", "", "{\"b\":2}"]
        );
        let mut big = vec![b'x'; MAX_LINE + 1];
        big.extend_from_slice(b"\nnext\n");
        assert_eq!(lines(&big), ["<too long>", "next"]);
    }
}
