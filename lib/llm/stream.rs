//! Reading streamed replies (server-sent events, JSON lines) and keeping
//! the API key out of everything shown.

use std::io;

use serde_json::Value;

use super::conversation::{Reply, ToolCall};
use super::error::LlmError;
use super::http::{Failure, io_failure};
use axe_base::error::Category;

/// The longest line or event of a streamed reply: a chunk of a model's
/// answer is a few hundred bytes; a whole tool call's arguments could be
/// a file. More is a server gone wrong, not an answer to keep in memory.
const EVENT_LIMIT: usize = 16 << 20;

pub use axe_net::sse::Event;

/// Server-sent events from a response body.
pub struct Sse<R> {
    events: axe_net::sse::Events<R>,
}

impl<R: io::Read> Sse<R> {
    pub fn new(body: R) -> Self {
        Sse {
            events: axe_net::sse::Events::new(body, EVENT_LIMIT),
        }
    }

    /// The next event with data; `None` at the end of the body.
    pub fn next(&mut self) -> Result<Option<Event>, Failure> {
        self.events.next_event().map_err(|e| io_failure("", e))
    }
}

/// Lines of a body (JSON lines) without their line endings.
pub struct Lines<R> {
    lines: axe_net::sse::Lines<R>,
}

impl<R: io::Read> Lines<R> {
    pub fn new(body: R) -> Self {
        Lines {
            lines: axe_net::sse::Lines::new(body, EVENT_LIMIT),
        }
    }

    pub fn next(&mut self) -> Result<Option<String>, Failure> {
        self.lines.next_line().map_err(|e| io_failure("", e))
    }
}

/// A stream that stopped before the provider's end marker (`[DONE]` or a
/// finish reason, `message_stop`, `"done": true`): the connection was cut,
/// so the text so far is not the whole answer and must not pass for one.
pub fn cut_short() -> Failure {
    Failure::Api(
        Category::Server,
        "the reply ended before it was complete".into(),
    )
}

/// Parses one streamed JSON document.
pub fn json(data: &str) -> Result<Value, Failure> {
    serde_json::from_str(data).map_err(|e| {
        Failure::Api(
            Category::Server,
            format!("failed to parse streaming chunk: {e}"),
        )
    })
}

/// Tool calls being assembled from pieces, in the order they started.
#[derive(Default)]
pub struct PendingCalls {
    calls: Vec<(u64, String, String, String)>,
}

impl PendingCalls {
    /// Starts or continues the call with stream index `index`.
    pub fn add(&mut self, index: u64, id: Option<&str>, name: Option<&str>, json: &str) {
        let pos = match self.calls.iter().position(|c| c.0 == index) {
            Some(p) => p,
            None => {
                self.calls
                    .push((index, String::new(), String::new(), String::new()));
                self.calls.len() - 1
            }
        };
        let call = &mut self.calls[pos];
        if let Some(id) = id.filter(|s| !s.is_empty()) {
            call.1 = id.to_owned();
        }
        if let Some(name) = name.filter(|s| !s.is_empty()) {
            call.2 = name.to_owned();
        }
        call.3.push_str(json);
    }

    /// The finished calls; arguments that are not a JSON object become `{}`,
    /// as in Go.
    pub fn finish(self) -> Vec<ToolCall> {
        self.calls
            .into_iter()
            .map(|(_, id, name, json)| ToolCall {
                id,
                name,
                arguments: serde_json::from_str(&json).unwrap_or_default(),
            })
            .collect()
    }
}

const REDACTED: &str = "[REDACTED]";

/// Keys shorter than this are not secrets worth hiding (`api_key = "x"`
/// for a local server) and would mangle every answer that contains them.
pub const SECRET_MIN_CHARS: usize = 8;

/// Replaces the API key wherever a server might have echoed it.
pub struct Redactor {
    /// Empty when there is nothing to hide.
    key: String,
}

impl Redactor {
    pub fn new(key: &str) -> Self {
        let secret = key.chars().count() >= SECRET_MIN_CHARS;
        Redactor {
            key: if secret {
                key.to_owned()
            } else {
                String::new()
            },
        }
    }

    pub fn text(&self, s: &str) -> String {
        if self.key.is_empty() || !s.contains(&self.key) {
            return s.to_owned();
        }
        s.replace(&self.key, REDACTED)
    }

    fn value(&self, v: &mut Value) {
        match v {
            Value::String(s) => *s = self.text(s),
            Value::Array(items) => items.iter_mut().for_each(|i| self.value(i)),
            Value::Object(map) => {
                let entries = std::mem::take(map);
                for (k, mut item) in entries {
                    self.value(&mut item);
                    map.insert(self.text(&k), item);
                }
            }
            _ => {}
        }
    }

    pub fn reply(&self, mut reply: Reply) -> Reply {
        reply.model = self.text(&reply.model);
        reply.content = self.text(&reply.content);
        reply.stop_reason = self.text(&reply.stop_reason);
        for call in &mut reply.tool_calls {
            call.id = self.text(&call.id);
            call.name = self.text(&call.name);
            let mut args = Value::Object(std::mem::take(&mut call.arguments));
            self.value(&mut args);
            if let Value::Object(map) = args {
                call.arguments = map;
            }
        }
        reply
    }

    /// `err` with the key taken out of its line and its causes. An I/O
    /// error that holds the key anywhere (its text, its `Debug`, the
    /// errors beneath it: a TLS library's words, a server's echoed in
    /// them) is replaced by one of the same kind with the key's place
    /// marked, as its cause cannot be edited in place.
    pub fn llm(&self, err: LlmError) -> LlmError {
        match err {
            LlmError::Api {
                category,
                status,
                message,
            } => LlmError::Api {
                category,
                status,
                message: self.text(&message),
            },
            LlmError::Connection { message, source } => LlmError::Connection {
                message: self.text(&message),
                source: match self.holds_key(&source) {
                    true => io::Error::new(source.kind(), self.text(&source.to_string())),
                    false => source,
                },
            },
            other => other,
        }
    }

    /// Whether `err`'s text or `Debug`, or any cause beneath it, holds
    /// the key.
    fn holds_key(&self, err: &(dyn std::error::Error + 'static)) -> bool {
        if self.key.is_empty() {
            return false;
        }
        let mut at = Some(err);
        while let Some(e) = at {
            if e.to_string().contains(&self.key) || format!("{e:?}").contains(&self.key) {
                return true;
            }
            at = e.source();
        }
        false
    }

    /// A sink for streamed text that never lets the key through, even when
    /// it arrives split over several pieces.
    pub fn stream<'a>(&'a self, out: &'a mut dyn FnMut(&str) -> io::Result<()>) -> TextSink<'a> {
        TextSink {
            key: &self.key,
            pending: String::new(),
            out,
        }
    }
}

/// Streamed text on its way out; see [`Redactor::stream`].
pub struct TextSink<'a> {
    key: &'a str,
    pending: String,
    out: &'a mut dyn FnMut(&str) -> io::Result<()>,
}

impl TextSink<'_> {
    pub fn push(&mut self, text: &str) -> Result<(), Failure> {
        if self.key.is_empty() {
            return (self.out)(text).map_err(Failure::Output);
        }
        self.pending.push_str(text);
        if self.pending.contains(self.key) {
            self.pending = self.pending.replace(self.key, REDACTED);
        }
        // Hold back the longest tail that could be the start of the key.
        let hold = (1..self.key.len().min(self.pending.len() + 1))
            .rev()
            .find(|&n| {
                self.pending.is_char_boundary(self.pending.len() - n)
                    && self
                        .key
                        .starts_with(&self.pending[self.pending.len() - n..])
            })
            .unwrap_or(0);
        let ready = self.pending.len() - hold;
        if ready > 0 {
            let rest = self.pending.split_off(ready);
            (self.out)(&self.pending).map_err(Failure::Output)?;
            self.pending = rest;
        }
        Ok(())
    }

    pub fn finish(mut self) -> io::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let rest = std::mem::take(&mut self.pending);
        (self.out)(&rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sse_events() {
        let body =
            "event: a\ndata: {\"x\":1}\n\n: comment\n\ndata: one\ndata: two\r\n\r\ndata:[DONE]";
        let mut sse = Sse::new(body.as_bytes());
        let e = sse.next().unwrap().unwrap();
        assert_eq!((e.name.as_str(), e.data.as_str()), ("a", "{\"x\":1}"));
        assert_eq!(sse.next().unwrap().unwrap().data, "one\ntwo");
        assert_eq!(sse.next().unwrap().unwrap().data, "[DONE]");
        assert!(sse.next().unwrap().is_none());
    }

    fn streamed(key: &str, pieces: &[&str]) -> (String, Vec<String>) {
        let redactor = Redactor::new(key);
        let mut seen = Vec::new();
        let mut out = |t: &str| {
            seen.push(t.to_owned());
            Ok(())
        };
        let mut sink = redactor.stream(&mut out);
        for p in pieces {
            sink.push(p).unwrap();
        }
        sink.finish().unwrap();
        (seen.concat(), seen)
    }

    #[test]
    fn key_split_across_pieces_never_escapes() {
        let (all, pieces) = streamed("sk-SECRET", &["your key is sk-", "SEC", "RET, ok", " sk"]);
        assert_eq!(all, "your key is [REDACTED], ok sk");
        assert!(pieces.iter().all(|p| !p.contains("SEC")));
        let (all, _) = streamed("", &["plain ", "text"]);
        assert_eq!(all, "plain text");
        let (all, _) = streamed("aaaaaaaa", &["aaaa", "aaaaa", "é"]);
        assert_eq!(all, "[REDACTED]aé");
        let (all, _) = streamed("x", &["a box", " of x"]);
        assert_eq!(all, "a box of x", "short keys are not redacted");
    }

    #[test]
    fn pending_calls_keep_start_order() {
        let mut calls = PendingCalls::default();
        calls.add(1, Some("b"), Some("two"), "{\"x\":");
        calls.add(0, Some("a"), Some("one"), "{}");
        calls.add(1, None, None, "2}");
        let done = calls.finish();
        assert_eq!(done[0].id, "b");
        assert_eq!(done[0].arguments["x"], 2);
        assert_eq!(done[1].name, "one");
    }

    /// A connection's I/O error whose cause holds the key (a library's
    /// words quoting what the server sent) is replaced: no level of the
    /// chain, line or `Debug`, holds it; its kind is kept.
    #[test]
    fn a_cause_that_holds_the_key_is_replaced() {
        #[derive(Debug)]
        struct Said(String);
        impl std::fmt::Display for Said {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                write!(f, "the server said {}", self.0)
            }
        }
        impl std::error::Error for Said {}
        let key = "sk-0123456789abcdef";
        let source = io::Error::new(io::ErrorKind::InvalidData, Said(key.into()));
        let e = Redactor::new(key).llm(LlmError::Connection {
            message: format!("connection to http://h failed: the server said {key}"),
            source,
        });
        let e = axe_base::error::Error::from(e);
        let mut at: Option<&(dyn std::error::Error + 'static)> = Some(&e);
        let mut levels = 0;
        while let Some(level) = at {
            let seen = format!("{level} {level:?}");
            assert!(!seen.contains(key), "{seen}");
            levels += 1;
            at = level.source();
        }
        assert_eq!(levels, 3, "the error, the typed error, its I/O cause");
        let typed = std::error::Error::source(&e).unwrap().source().unwrap();
        let io = typed.downcast_ref::<io::Error>().unwrap();
        assert_eq!(io.kind(), io::ErrorKind::InvalidData);
        assert_eq!(io.to_string(), "the server said [REDACTED]");
    }
}
