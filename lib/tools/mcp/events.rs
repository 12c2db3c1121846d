//! Server-sent events as MCP's HTTP transports send them: axe-net's
//! bounded events ([`Events`], which keep the last event id and `retry`
//! hint for resuming a stream), with the same bound as every message
//! ([`MAX_LINE`]), and an event the server gave no name called a
//! `message`.

use std::io::{self, Read};

pub use axe_net::sse::Event;
use axe_net::sse::Events;

use super::jsonrpc::MAX_LINE;

/// The events of `body`.
pub fn reader<R: Read>(body: R) -> Reader<R> {
    Reader(Events::new(body, MAX_LINE))
}

pub struct Reader<R>(Events<R>);

impl<R: Read> Reader<R> {
    /// The next event that has data; `None` at the end.
    pub fn next(&mut self) -> io::Result<Option<Event>> {
        let mut event = self.0.next_event()?;
        if let Some(e) = event.as_mut().filter(|e| e.name.is_empty()) {
            e.name = "message".into();
        }
        Ok(event)
    }

    /// See [`Events::after`].
    pub fn after(self, last: &str, retry: Option<std::time::Duration>) -> Self {
        Reader(self.0.after(last, retry))
    }

    /// The id of the last event that gave one.
    pub fn last_id(&self) -> Option<&str> {
        self.0.last_id()
    }

    /// The server's last `retry` hint.
    pub fn retry(&self) -> Option<std::time::Duration> {
        self.0.retry()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unnamed_event_is_a_message_and_events_are_bounded_as_messages() {
        let input: &[u8] = b"event: endpoint\r\ndata: /m?s=1\r\n\r\ndata: {}\n\n";
        let mut events = reader(input);
        assert_eq!(events.next().unwrap().unwrap().name, "endpoint");
        assert_eq!(events.next().unwrap().unwrap().name, "message");
        assert_eq!(events.next().unwrap(), None);
        let line = format!("data: {}\n", "x".repeat(MAX_LINE / 2 + 1));
        let big = format!("{line}{line}\n");
        let e = reader(big.as_bytes()).next().unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("an event over {} MiB", MAX_LINE >> 20)
        );
    }
}
