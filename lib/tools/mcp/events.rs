//! Server-sent events as MCP's HTTP transports send them: axe-net's one
//! bounded reader, with the same bound as every message ([`MAX_LINE`]):
//! a line or an event over it ends the stream with an error instead of
//! filling memory. An event the server gave no name is a `message`.

use std::io::{self, Read};

use axe_net::sse::Events;

use super::jsonrpc::MAX_LINE;

pub use axe_net::sse::Event;

/// The events of `body`.
pub fn reader<R: Read>(body: R) -> Reader<R> {
    Reader(Events::new(body, MAX_LINE))
}

pub struct Reader<R>(Events<R>);

impl<R: Read> Reader<R> {
    /// The next event that has data; `None` at the end.
    pub fn next(&mut self) -> io::Result<Option<Event>> {
        let mut event = self.0.next_event()?;
        if let Some(event) = event.as_mut().filter(|e| e.name.is_empty()) {
            event.name = "message".into();
        }
        Ok(event)
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
}
