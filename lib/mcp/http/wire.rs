//! HTTP/1.1 as an MCP endpoint needs it, read under bounds: the head at
//! most [`MAX_HEAD`] bytes, the body at most [`MAX_BODY`] (the stdio
//! line's 16 MiB), each within a deadline of its own however slowly the
//! bytes trickle in, so a slow client holds only its own connection's
//! thread, and only until its deadline.

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use axe_tools::mcp::jsonrpc::MAX_LINE;

/// The largest request head (request line and headers): a client sends
/// a few hundred bytes; browsers' cookies stay under this.
pub const MAX_HEAD: usize = 32 << 10;

/// The largest body: one message, as large as stdio's line.
pub const MAX_BODY: usize = MAX_LINE;

/// How long a request's head may take to arrive once its first byte
/// has, and how long a kept-alive connection may sit idle before it.
pub const HEAD_TIME: Duration = Duration::from_secs(10);

/// How long a body may take: 16 MiB at a slow 1 MB/s.
pub const BODY_TIME: Duration = Duration::from_secs(30);

/// How long one write of an answer may wait on a client that reads
/// nothing.
pub const WRITE_TIME: Duration = Duration::from_secs(10);

/// A stream a request is read from: TCP, or TLS over it.
pub trait Conn: Read + Write + Send {
    /// Bounds the next read (a deadline's remainder).
    fn read_within(&mut self, time: Duration) -> io::Result<()>;

    /// The TCP connection under it.
    fn socket(&self) -> &std::net::TcpStream;
}

/// One request, read whole.
pub struct Request {
    pub method: String,
    /// The path and query as sent.
    pub target: String,
    /// Names lower-cased, in order.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Its `Content-Length`: what [`read_body`] reads.
    pub length: usize,
    /// Whether the client asked to close after the answer (or speaks
    /// HTTP/1.0).
    pub close: bool,
}

impl Request {
    /// The value of header `name` (lower case); the first when repeated.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// Why no request was read.
#[derive(Debug)]
pub enum Refused {
    /// The connection ended (or idled out) between requests: nothing to
    /// answer.
    Gone,
    /// Answer with this status and reason, then close.
    Status(u16, &'static str),
}

/// Headers a request may hold once only: a second `Host` (RFC 9112
/// 3.2) or `Authorization` would leave a proxy and this server each
/// reading its own.
const SINGLE: [&str; 2] = ["host", "authorization"];

/// Reads the next request's head from `conn`, leaving its body unread
/// (in `rest`, with whatever came after the head): its token is checked
/// before any body is taken. `rest` holds bytes read past the previous
/// request. Waits at most `idle` for its first byte, then [`HEAD_TIME`]
/// for the rest, and never past `by`.
pub fn read_head(
    conn: &mut dyn Conn,
    rest: &mut Vec<u8>,
    idle: Duration,
    by: Option<Instant>,
) -> Result<Request, Refused> {
    let mut buf = std::mem::take(rest);
    let within = |d: Instant| by.map_or(d, |by| d.min(by));
    let mut deadline = within(Instant::now() + idle);
    let mut started = !buf.is_empty();
    let end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        if buf.len() > MAX_HEAD {
            return Err(Refused::Status(431, "Request Header Fields Too Large"));
        }
        let n = fill(conn, &mut buf, deadline, MAX_HEAD + 4).map_err(|timed_out| {
            match (started, timed_out) {
                (true, true) => Refused::Status(408, "Request Timeout"),
                _ => Refused::Gone,
            }
        })?;
        if !started && n > 0 {
            started = true;
            deadline = within(Instant::now() + HEAD_TIME);
        }
    };
    if end > MAX_HEAD {
        return Err(Refused::Status(431, "Request Header Fields Too Large"));
    }
    let bad = Refused::Status(400, "Bad Request");
    // A CR or LF outside a line's end, or a NUL, anywhere in the head
    // (RFC 9110 5.5): a proxy may read it as a line's end where we do not.
    if !clean(&buf[..end]) {
        return Err(bad);
    }
    let head = std::str::from_utf8(&buf[..end]).map_err(|_| Refused::Status(400, "Bad Request"))?;
    let mut lines = head.split("\r\n");
    let mut first = lines.next().unwrap_or_default().split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (first.next(), first.next(), first.next(), first.next())
    else {
        return Err(bad);
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0") {
        return Err(Refused::Status(505, "HTTP Version Not Supported"));
    }
    let mut headers: Vec<(String, String)> = Vec::new();
    for line in lines {
        // A folded line (obsolete) or one without a colon is malformed.
        let Some((name, value)) = line.split_once(':') else {
            return Err(bad);
        };
        if name.is_empty() || !name.bytes().all(token_char) {
            return Err(bad);
        }
        let name = name.to_ascii_lowercase();
        if SINGLE.contains(&name.as_str()) && headers.iter().any(|(n, _)| *n == name) {
            return Err(bad);
        }
        headers.push((name, value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
        length: 0,
        close: version == "HTTP/1.0",
    };
    if let Some(c) = request.header("connection") {
        request.close |= c.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"));
    }
    if request.header("transfer-encoding").is_some() {
        // Every MCP client sends a sized body; chunks would be one more
        // framing to bound, and a smuggling surface behind a proxy.
        return Err(Refused::Status(411, "Length Required"));
    }
    let lengths: Vec<&str> = request
        .headers
        .iter()
        .filter(|(n, _)| n == "content-length")
        .map(|(_, v)| v.as_str())
        .collect();
    request.length = match lengths.as_slice() {
        [] => 0,
        [one] if !one.is_empty() && one.bytes().all(|b| b.is_ascii_digit()) => {
            one.parse::<usize>().unwrap_or(usize::MAX)
        }
        _ => return Err(Refused::Status(400, "Bad Request")),
    };
    if request.length > MAX_BODY {
        return Err(Refused::Status(413, "Content Too Large"));
    }
    *rest = buf.split_off(end + 4);
    Ok(request)
}

/// Reads the body of `request`, whose head [`read_head`] read: what came
/// with the head is in `rest`, which keeps what comes after the body.
pub fn read_body(
    conn: &mut dyn Conn,
    request: &mut Request,
    rest: &mut Vec<u8>,
) -> Result<(), Refused> {
    let length = request.length;
    let mut body = std::mem::take(rest);
    // curl waits a second for this before a body over 1 KiB.
    if body.len() < length
        && request
            .header("expect")
            .is_some_and(|e| e.eq_ignore_ascii_case("100-continue"))
    {
        let _ = conn.write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        let _ = conn.flush();
    }
    let deadline = Instant::now() + BODY_TIME;
    while body.len() < length {
        fill(conn, &mut body, deadline, length).map_err(|timed_out| match timed_out {
            true => Refused::Status(408, "Request Timeout"),
            false => Refused::Gone,
        })?;
    }
    *rest = body.split_off(length);
    request.body = body;
    Ok(())
}

/// Whether a head holds no NUL, and CR and LF only as its lines' ends.
fn clean(head: &[u8]) -> bool {
    head.iter().enumerate().all(|(i, b)| match b {
        0 => false,
        b'\r' => head.get(i + 1) == Some(&b'\n'),
        b'\n' => i > 0 && head[i - 1] == b'\r',
        _ => true,
    })
}

/// A character of a header's name (RFC 9110 5.6.2's `tchar`).
fn token_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Reads what comes, up to `cap` bytes in `buf`, before `deadline`: the
/// count read, or whether the deadline passed (`true`) or the connection
/// ended or failed (`false`).
fn fill(
    conn: &mut dyn Conn,
    buf: &mut Vec<u8>,
    deadline: Instant,
    cap: usize,
) -> Result<usize, bool> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(true);
    }
    conn.read_within(left).map_err(|_| false)?;
    let mut chunk = [0u8; 16 << 10];
    let want = chunk.len().min(cap.saturating_sub(buf.len()).max(1));
    loop {
        return match conn.read(&mut chunk[..want]) {
            Ok(0) => Err(false),
            Ok(n) => {
                buf.extend_from_slice(&chunk[..n]);
                Ok(n)
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                Err(true)
            }
            Err(_) => Err(false),
        };
    }
}

/// An answer.
pub struct Response {
    pub status: u16,
    pub reason: &'static str,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, reason: &'static str) -> Response {
        Response {
            status,
            reason,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Response {
        self.headers.push((name, value.into()));
        self
    }

    pub fn body(mut self, content_type: &str, body: Vec<u8>) -> Response {
        self.headers.push(("Content-Type", content_type.to_owned()));
        self.body = body;
        self
    }
}

/// Writes `response`, saying whether the connection closes after it.
pub fn write_response(conn: &mut dyn Conn, response: &Response, close: bool) -> io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", response.status, response.reason);
    for (name, value) in &response.headers {
        // Values are ours, but one made of a client's bytes must never
        // split the head.
        let value: String = value.chars().filter(|c| !c.is_control()).collect();
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n", response.body.len()));
    if close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    let mut all = head.into_bytes();
    all.extend_from_slice(&response.body);
    conn.write_all(&all)?;
    conn.flush()
}
