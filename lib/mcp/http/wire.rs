//! HTTP/1.1 as an MCP endpoint needs it, read under bounds: the head at
//! most [`MAX_HEAD`] bytes and [`MAX_HEADERS`] headers, the body at most
//! [`MAX_BODY`] (the stdio line's 16 MiB), each within a deadline of its
//! own however slowly the bytes trickle in, so a slow client holds only
//! its own connection's thread, and only until its deadline. httparse
//! reads the head; this module bounds the reading and keeps an
//! endpoint's own rules (one `Host`, one sized body).

use std::io::{self, Read, Write};
use std::time::{Duration, Instant};

use axe_tools::mcp::jsonrpc::MAX_LINE;

/// The largest request head (request line and headers): a client sends
/// a few hundred bytes; browsers' cookies stay under this.
pub const MAX_HEAD: usize = 32 << 10;

/// The most headers a request may have: MCP clients send about ten,
/// browsers twenty; a hundred is what hyper and nginx take by default.
pub const MAX_HEADERS: usize = 100;

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

/// What a request is read from, each read bounded in time.
pub trait Source: Read {
    /// Bounds the next read (a deadline's remainder).
    fn read_within(&mut self, time: Duration) -> io::Result<()>;
}

/// A stream a request is read from and answered on: TCP, or TLS over it.
pub trait Conn: Source + Write + Send {
    /// The TCP connection under it.
    fn socket(&self) -> &std::net::TcpStream;
}

/// One request, read whole.
#[derive(Debug)]
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
#[derive(Debug, PartialEq)]
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
pub fn read_head<C: Source + ?Sized>(
    conn: &mut C,
    rest: &mut Vec<u8>,
    idle: Duration,
    by: Option<Instant>,
) -> Result<Request, Refused> {
    let mut buf = std::mem::take(rest);
    let within = |d: Instant| by.map_or(d, |by| d.min(by));
    let mut deadline = within(Instant::now() + idle);
    let mut started = !buf.is_empty();
    // How much of `buf` was parsed as a head not yet whole: a head ends
    // only with a line feed, so one trickling in a byte at a time is
    // parsed again only when a line feed came, not at every byte.
    let mut parsed = 0;
    let (request, len) = loop {
        if buf[parsed..].contains(&b'\n')
            && let Some(head) = parse_head(&buf)?
        {
            break head;
        }
        parsed = buf.len();
        // A head whole within the bound would have ended by now.
        if buf.len() >= MAX_HEAD + 4 {
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
    *rest = buf.split_off(len);
    Ok(request)
}

/// The request whose head `buf` begins with, and the head's length;
/// `None` while the head is not whole. httparse reads the request line
/// and the headers; checked here are what it lets through and we do
/// not, and the rules of an endpoint that takes one sized body.
pub fn parse_head(buf: &[u8]) -> Result<Option<(Request, usize)>, Refused> {
    let bad = || Refused::Status(400, "Bad Request");
    let too_large = || Refused::Status(431, "Request Header Fields Too Large");
    // httparse skips empty lines before the request line (RFC 9112 2.2
    // allows it); a request here begins with its method.
    if matches!(buf.first(), Some(b'\r' | b'\n')) {
        return Err(bad());
    }
    let mut fields = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut head = httparse::Request::new(&mut fields);
    let len = match head.parse(buf) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) if bare_lf(buf) => return Err(bad()),
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(httparse::Error::TooManyHeaders) => return Err(too_large()),
        Err(httparse::Error::Version) => {
            return Err(Refused::Status(505, "HTTP Version Not Supported"));
        }
        Err(_) => return Err(bad()),
    };
    if len > MAX_HEAD + 4 {
        return Err(too_large());
    }
    // httparse takes a bare LF as a line's end, where a proxy in front
    // may not (RFC 9112 2.2): a CR, an LF (and a NUL) only as a line's
    // end, which httparse checks of the rest.
    if bare_lf(&buf[..len]) {
        return Err(bad());
    }
    let (Some(method), Some(target), Some(version)) = (head.method, head.path, head.version) else {
        return Err(bad());
    };
    let mut headers: Vec<(String, String)> = Vec::with_capacity(head.headers.len());
    for field in head.headers.iter() {
        let name = field.name.to_ascii_lowercase();
        if SINGLE.contains(&name.as_str()) && headers.iter().any(|(n, _)| *n == name) {
            return Err(bad());
        }
        let value = std::str::from_utf8(field.value).map_err(|_| bad())?;
        headers.push((name, value.trim().to_owned()));
    }
    let mut request = Request {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body: Vec::new(),
        length: 0,
        close: version == 0,
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
        _ => return Err(bad()),
    };
    if request.length > MAX_BODY {
        return Err(Refused::Status(413, "Content Too Large"));
    }
    Ok(Some((request, len)))
}

/// Whether `head` holds an LF that no CR comes before.
fn bare_lf(head: &[u8]) -> bool {
    head.iter()
        .enumerate()
        .any(|(i, b)| *b == b'\n' && (i == 0 || head[i - 1] != b'\r'))
}

/// Reads the body of `request`, whose head [`read_head`] read: what came
/// with the head is in `rest`, which keeps what comes after the body.
pub fn read_body<C: Source + Write + ?Sized>(
    conn: &mut C,
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

/// Reads what comes, up to `cap` bytes in `buf`, before `deadline`: the
/// count read, or whether the deadline passed (`true`) or the connection
/// ended or failed (`false`).
fn fill<C: Source + ?Sized>(
    conn: &mut C,
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
