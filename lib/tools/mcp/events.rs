//! Server-sent events as MCP's HTTP transports send them, read over
//! axe-net's bounded lines with the same bound as every message
//! ([`MAX_LINE`]): a line or an event over it ends the stream with an
//! error instead of filling memory. An event the server gave no name is a
//! `message`. The last event id and `retry` hint seen are kept, for
//! resuming a stream the server closed (SEP-1699).

use std::io::{self, Read};
use std::time::Duration;

use axe_net::sse::Lines;

use super::jsonrpc::MAX_LINE;

/// One event: its name and its data.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// The events of `body`.
pub fn reader<R: Read>(body: R) -> Reader<R> {
    Reader {
        lines: Lines::new(body, MAX_LINE),
        last_id: None,
        retry: None,
    }
}

pub struct Reader<R> {
    lines: Lines<R>,
    last_id: Option<String>,
    retry: Option<Duration>,
}

impl<R: Read> Reader<R> {
    /// The next event that has data (an empty `data:` line is data: a
    /// priming event); `None` at the end.
    pub fn next(&mut self) -> io::Result<Option<Event>> {
        let mut event = Event::default();
        let mut data = false;
        while let Some(line) = self.lines.next_line()? {
            if line.is_empty() {
                if data {
                    break;
                }
                event.name.clear();
                continue;
            }
            let (field, value) = line.split_once(':').unwrap_or((&line, ""));
            let value = value.strip_prefix(' ').unwrap_or(value);
            match field {
                "event" => value.clone_into(&mut event.name),
                "data" => {
                    if event.data.len() + value.len() + 1 > MAX_LINE {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            format!("an event over {} MiB", MAX_LINE >> 20),
                        ));
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
        if !data {
            return Ok(None);
        }
        if event.name.is_empty() {
            event.name = "message".into();
        }
        Ok(Some(event))
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_joined_and_bounded() {
        let input: &[u8] =
            b": keep-alive\r\n\r\nevent: endpoint\r\ndata: /m?s=1\r\n\r\ndata: {\"a\":\ndata: 1}\n\n";
        let mut events = reader(input);
        assert_eq!(
            events.next().unwrap(),
            Some(Event {
                name: "endpoint".into(),
                data: "/m?s=1".into()
            })
        );
        assert_eq!(
            events.next().unwrap(),
            Some(Event {
                name: "message".into(),
                data: "{\"a\":\n1}".into()
            })
        );
        assert_eq!(events.next().unwrap(), None);
        let line = format!("data: {}\n", "x".repeat(MAX_LINE / 2 + 1));
        let big = format!("{line}{line}\n");
        assert!(reader(big.as_bytes()).next().is_err());
    }

    #[test]
    fn ids_and_retry_hints_are_kept() {
        let input: &[u8] = b"id: e-1\nretry: 500\ndata: \n\nid: e-2\ndata: {}\n\nretry: x\n";
        let mut events = reader(input);
        let priming = events.next().unwrap().unwrap();
        assert_eq!(priming.data, "");
        assert_eq!(events.last_id(), Some("e-1"));
        assert_eq!(events.retry(), Some(Duration::from_millis(500)));
        events.next().unwrap().unwrap();
        assert_eq!(events.last_id(), Some("e-2"));
        assert_eq!(events.next().unwrap(), None);
        assert_eq!(events.retry(), Some(Duration::from_millis(500)));
    }
}
