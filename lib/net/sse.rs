//! Server-sent events and JSON lines, read with a bound: a line, or an
//! event's data, over the reader's limit ends the stream with an error
//! instead of filling memory. Providers stream their replies so (as
//! events, or as JSON lines), and MCP's HTTP transports their messages.
//! The last event id and `retry` hint seen are kept, for resuming a
//! stream the server closed (MCP's SEP-1699, the SSE standard's
//! reconnection).

use std::io::{self, BufRead, BufReader, Read};
use std::time::Duration;

/// One event: its name (empty when the server gave none) and its data.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// The events of a body.
pub struct Events<R> {
    lines: Lines<R>,
    last_id: Option<String>,
    retry: Option<Duration>,
}

impl<R: Read> Events<R> {
    /// Events of `body`, none over `limit` bytes.
    pub fn new(body: R, limit: usize) -> Self {
        Events {
            lines: Lines::new(body, limit),
            last_id: None,
            retry: None,
        }
    }

    /// These events continue a stream whose last event id was `last` and
    /// whose `retry` hint was `retry`, until they give their own.
    pub fn after(mut self, last: &str, retry: Option<Duration>) -> Self {
        self.last_id = Some(last.to_owned());
        self.retry = retry;
        self
    }

    /// The id of the last event that gave one.
    pub fn last_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// The server's last `retry` hint.
    pub fn retry(&self) -> Option<Duration> {
        self.retry
    }

    /// The next event that has data (an empty `data:` line is data: a
    /// priming event); `None` at the end of the body.
    pub fn next_event(&mut self) -> io::Result<Option<Event>> {
        let mut event = Event::default();
        let mut data = false;
        while let Some(line) = self.lines.next_line()? {
            if line.is_empty() {
                if data {
                    return Ok(Some(event));
                }
                event.name.clear();
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => value.clone_into(&mut event.name),
                "data" => {
                    if event.data.len() + value.len() + 1 > self.lines.limit {
                        return Err(too_long("an event", self.lines.limit));
                    }
                    if data {
                        event.data.push('\n');
                    }
                    event.data.push_str(value);
                    data = true;
                }
                // As the SSE standard has it: an id with a NUL is ignored,
                // an empty one clears it.
                "id" if !value.contains('\0') => {
                    self.last_id = Some(value.to_owned()).filter(|v| !v.is_empty());
                }
                "retry" => {
                    if let Ok(ms) = value.parse::<u64>() {
                        self.retry = Some(Duration::from_millis(ms));
                    }
                }
                // Comments (keep-alives).
                _ => {}
            }
        }
        Ok(data.then_some(event))
    }
}

/// The lines of a body, without their line endings (`\n` or `\r\n`).
pub struct Lines<R> {
    reader: BufReader<R>,
    limit: usize,
}

impl<R: Read> Lines<R> {
    /// Lines of `body`, none over `limit` bytes.
    pub fn new(body: R, limit: usize) -> Self {
        Lines {
            reader: BufReader::new(body),
            limit,
        }
    }

    /// The next line; `None` at the end of the body.
    pub fn next_line(&mut self) -> io::Result<Option<String>> {
        let mut line = Vec::new();
        loop {
            let buf = match self.reader.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                return Ok((!line.is_empty()).then(|| text(&line)));
            }
            let (part, used) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], i + 1),
                None => (buf, buf.len()),
            };
            if line.len() + part.len() > self.limit {
                return Err(too_long("a line", self.limit));
            }
            line.extend_from_slice(part);
            let ended = used > part.len();
            self.reader.consume(used);
            if ended {
                return Ok(Some(text(&line)));
            }
        }
    }
}

fn text(line: &[u8]) -> String {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    String::from_utf8_lossy(line).into_owned()
}

fn too_long(what: &str, limit: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("{what} over {} MiB", limit >> 20),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 1 << 20;

    #[test]
    fn events_are_named_joined_and_bounded() {
        let body: &[u8] = b": keep-alive\r\n\r\nevent: endpoint\r\ndata: /m?s=1\r\n\r\n\
            data: {\"a\":\ndata: 1}\n\ndata:[DONE]";
        let mut events = Events::new(body, LIMIT);
        let next = |events: &mut Events<&[u8]>| events.next_event().unwrap().unwrap();
        let e = next(&mut events);
        assert_eq!((e.name.as_str(), e.data.as_str()), ("endpoint", "/m?s=1"));
        let e = next(&mut events);
        assert_eq!((e.name.as_str(), e.data.as_str()), ("", "{\"a\":\n1}"));
        assert_eq!(next(&mut events).data, "[DONE]");
        assert!(events.next_event().unwrap().is_none());

        let line = format!("data: {}\n", "x".repeat(LIMIT / 2 + 1));
        let big = format!("{line}{line}\n");
        assert!(Events::new(big.as_bytes(), LIMIT).next_event().is_err());
        let long = "y".repeat(LIMIT + 1);
        assert!(Lines::new(long.as_bytes(), LIMIT).next_line().is_err());
    }

    #[test]
    fn ids_and_retry_hints_are_kept() {
        let body: &[u8] = b"id: e-1\nretry: 500\ndata: \n\nid: e-2\ndata: {}\n\nretry: x\n";
        let mut events = Events::new(body, LIMIT);
        let priming = events.next_event().unwrap().unwrap();
        assert_eq!(priming.data, "");
        assert_eq!(events.last_id(), Some("e-1"));
        assert_eq!(events.retry(), Some(Duration::from_millis(500)));
        events.next_event().unwrap().unwrap();
        assert_eq!(events.last_id(), Some("e-2"));
        assert_eq!(events.next_event().unwrap(), None);
        assert_eq!(events.retry(), Some(Duration::from_millis(500)));
        let cleared: &[u8] = b"id: e-1\ndata: a\n\nid\ndata: b\n\nid: x\0y\ndata: c\n\n";
        let mut events = Events::new(cleared, LIMIT).after("e-0", None);
        assert_eq!(events.last_id(), Some("e-0"));
        events.next_event().unwrap();
        events.next_event().unwrap();
        assert_eq!(events.last_id(), None, "an empty id clears it");
        events.next_event().unwrap();
        assert_eq!(events.last_id(), None, "an id with a NUL is passed over");
    }

    #[test]
    fn lines_end_in_either_ending() {
        let mut lines = Lines::new(&b"a\r\nb\n\nc"[..], LIMIT);
        let mut seen = Vec::new();
        while let Some(line) = lines.next_line().unwrap() {
            seen.push(line);
        }
        assert_eq!(seen, ["a", "b", "", "c"]);
    }
}
