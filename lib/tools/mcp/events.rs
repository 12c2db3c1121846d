//! Server-sent events as MCP's HTTP transports send them, read with the
//! same bound as every message: a line or an event over
//! [`MAX_LINE`] ends the stream with an error instead of filling memory.

use std::io::{self, BufRead};

use super::jsonrpc::{self, Line, MAX_LINE};

/// One event: its name (`message` when the server gave none) and its data.
#[derive(Debug, PartialEq, Eq)]
pub struct Event {
    pub name: String,
    pub data: String,
}

/// The next event of `input` that has data; `None` at the end.
pub fn next(input: &mut impl BufRead) -> io::Result<Option<Event>> {
    let mut name = String::new();
    let mut data: Option<String> = None;
    loop {
        let line = match jsonrpc::read_line(input)? {
            Line::End => return Ok(data.map(|data| event(name, data))),
            Line::TooLong => return Err(too_long()),
            Line::Message(line) => line,
        };
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        if line.is_empty() {
            match data.take() {
                Some(data) => return Ok(Some(event(name, data))),
                None => name.clear(),
            }
            continue;
        }
        let line = String::from_utf8_lossy(line);
        let (field, value) = line.split_once(':').unwrap_or((&line, ""));
        let value = value.strip_prefix(' ').unwrap_or(value);
        match field {
            "event" => value.clone_into(&mut name),
            "data" => {
                let all = data.get_or_insert_with(String::new);
                if all.len() + value.len() > MAX_LINE {
                    return Err(too_long());
                }
                if !all.is_empty() {
                    all.push('\n');
                }
                all.push_str(value);
            }
            // Comments (keep-alives), ids and retry hints.
            _ => {}
        }
    }
}

fn event(name: String, data: String) -> Event {
    let name = if name.is_empty() {
        "message".into()
    } else {
        name
    };
    Event { name, data }
}

fn too_long() -> io::Error {
    io::Error::other(format!("an event over {} MiB", MAX_LINE >> 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_named_joined_and_bounded() {
        let mut input: &[u8] =
            b": keep-alive\r\n\r\nevent: endpoint\r\ndata: /m?s=1\r\n\r\ndata: {\"a\":\ndata: 1}\n\n";
        assert_eq!(
            next(&mut input).unwrap(),
            Some(Event {
                name: "endpoint".into(),
                data: "/m?s=1".into()
            })
        );
        assert_eq!(
            next(&mut input).unwrap(),
            Some(Event {
                name: "message".into(),
                data: "{\"a\":\n1}".into()
            })
        );
        assert_eq!(next(&mut input).unwrap(), None);
        let line = format!("data: {}\n", "x".repeat(MAX_LINE / 2 + 1));
        let big = format!("{line}{line}\n");
        assert!(next(&mut big.as_bytes()).is_err());
    }
}
