//! The one HTTP/1.1 GET of `url_fetch`, to addresses it was given: the
//! caller looked the name up and checked every address, and this
//! connects to those, never looking the name up again (which a DNS
//! answer that changed meanwhile would turn into another address). TLS
//! still checks the certificate against the host name, with the same
//! roots as every other HTTPS call of axe.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// The most of a body read: far more than the 10,000 characters kept, so
/// an HTML page still has its text after its markup is gone.
const BODY_LIMIT: usize = 4 << 20;
/// The most of a response's head.
const HEAD_LIMIT: usize = 64 << 10;

/// A URL `url_fetch` may fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    pub https: bool,
    /// Lower case, without brackets for IPv6.
    pub host: String,
    pub port: u16,
    /// Path and query, from `/`.
    pub target: String,
}

impl Url {
    pub fn parse(text: &str) -> Result<Url, String> {
        let text = text.trim();
        // Nothing of it may end up as a header line of its own.
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "invalid URL {text:?}: spaces and control characters must be percent-encoded"
            ));
        }
        let (scheme, rest) = text.split_once("://").unwrap_or(("", text));
        let https = match scheme.to_ascii_lowercase().as_str() {
            "http" => false,
            "https" => true,
            other => {
                return Err(format!(
                    "unsupported scheme {other:?}: only http and https are allowed"
                ));
            }
        };
        let rest = rest.split('#').next().unwrap_or_default();
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, target) = rest.split_at(end);
        if authority.contains('@') {
            return Err("URLs with a user name or password are not fetched".into());
        }
        let (host, port) = match authority.strip_prefix('[') {
            Some(v6) => {
                let (host, after) = v6.split_once(']').ok_or("invalid IPv6 host in URL")?;
                (host, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(format!("no host in URL {text:?}"));
        }
        let port = match port {
            None | Some("") => {
                if https {
                    443
                } else {
                    80
                }
            }
            Some(p) => p
                .parse()
                .map_err(|_| format!("invalid port {p:?} in URL"))?,
        };
        let target = match target {
            "" => "/".to_owned(),
            t if t.starts_with('?') => format!("/{t}"),
            t => t.to_owned(),
        };
        Ok(Url {
            https,
            host: host.to_ascii_lowercase(),
            port,
            target,
        })
    }

    /// `host[:port]` as a Host header and a URL write it.
    fn authority(&self) -> String {
        let host = match self.host.contains(':') {
            true => format!("[{}]", self.host),
            false => self.host.clone(),
        };
        match (self.https, self.port) {
            (false, 80) | (true, 443) => host,
            (_, port) => format!("{host}:{port}"),
        }
    }

    pub fn to_text(&self) -> String {
        let scheme = if self.https { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority(), self.target)
    }

    /// Where a redirect's `Location` leads from here.
    pub fn join(&self, location: &str) -> Result<Url, String> {
        let location = location.trim();
        // A scheme is letters, digits, `+`, `-` and `.` before the first
        // `:`; a path whose query holds a URL (`/next?u=http://x`) has none.
        let scheme = location.split_once("://").map(|(scheme, _)| scheme);
        if scheme.is_some_and(|s| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        }) {
            return Url::parse(location);
        }
        let scheme = if self.https { "https" } else { "http" };
        if let Some(rest) = location.strip_prefix("//") {
            return Url::parse(&format!("{scheme}://{rest}"));
        }
        let path = match location.starts_with('/') {
            true => location.to_owned(),
            false => {
                let dir = self.target.split('?').next().unwrap_or("/");
                let dir = &dir[..dir.rfind('/').map_or(0, |i| i + 1)];
                format!("{dir}{location}")
            }
        };
        Ok(Url {
            target: path,
            ..self.clone()
        })
    }
}

/// What came back.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub location: Option<String>,
    pub body: Vec<u8>,
}

/// GETs `url` from the first of `addrs` that answers, by `deadline`.
pub fn get(url: &Url, addrs: &[SocketAddr], deadline: Instant) -> Result<Response, String> {
    let timed_out = || "timed out".to_owned();
    let mut last = None;
    let mut tcp = None;
    for addr in addrs {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(timed_out());
        }
        match TcpStream::connect_timeout(addr, left) {
            Ok(s) => {
                tcp = Some(s);
                break;
            }
            Err(e) => last = Some(format!("dial {addr}: {}", axe_base::error::describe_io(&e))),
        }
    }
    let tcp = tcp.ok_or_else(|| last.unwrap_or_else(timed_out))?;
    let request = format!(
        "GET {} HTTP/1.1\r\nHost: {}\r\nUser-Agent: axe\r\nAccept: */*\r\nAccept-Encoding: identity\r\nConnection: close\r\n\r\n",
        url.target,
        url.authority()
    );
    let raw = match url.https {
        false => exchange(tcp.try_clone().map_err(describe)?, &tcp, &request, deadline),
        true => {
            let name = rustls::pki_types::ServerName::try_from(url.host.clone())
                .map_err(|e| format!("invalid TLS name {:?}: {e}", url.host))?;
            let conn =
                rustls::ClientConnection::new(tls_config()?, name).map_err(|e| e.to_string())?;
            let stream = rustls::StreamOwned::new(conn, tcp.try_clone().map_err(describe)?);
            exchange(stream, &tcp, &request, deadline)
        }
    }?;
    parse(&raw)
}

fn describe(e: io::Error) -> String {
    axe_base::error::describe_io(&e)
}

fn tls_config() -> Result<Arc<rustls::ClientConfig>, String> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    Ok(Arc::clone(CONFIG.get_or_init(|| {
        let roots = rustls::RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        };
        Arc::new(
            rustls::ClientConfig::builder()
                .with_root_certificates(roots)
                .with_no_client_auth(),
        )
    })))
}

/// Sends `request` and reads the answer to its end (or the limits), each
/// read bounded by what is left of `deadline`.
fn exchange(
    mut stream: impl Read + Write,
    tcp: &TcpStream,
    request: &str,
    deadline: Instant,
) -> Result<Vec<u8>, String> {
    let left = || {
        let left = deadline.saturating_duration_since(Instant::now());
        (!left.is_zero())
            .then_some(left)
            .ok_or("timed out".to_owned())
    };
    tcp.set_write_timeout(Some(left()?)).map_err(describe)?;
    // Over TLS the first write is the handshake, which reads the server's
    // answer too: a server that never gives one must not hold us past the
    // deadline.
    tcp.set_read_timeout(Some(left()?)).map_err(describe)?;
    stream
        .write_all(request.as_bytes())
        .map_err(|e| io_failed(&e))?;
    stream.flush().map_err(|e| io_failed(&e))?;
    let mut raw = Vec::new();
    let mut buf = [0; 16 * 1024];
    while raw.len() < HEAD_LIMIT + BODY_LIMIT {
        tcp.set_read_timeout(Some(left()?)).map_err(describe)?;
        match stream.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            // A server that closes without TLS's goodbye, after its answer.
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !raw.is_empty() => break,
            Err(e) => return Err(io_failed(&e)),
        }
    }
    Ok(raw)
}

fn io_failed(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "timed out".into(),
        _ => axe_base::error::describe_io(e),
    }
}

/// The status, the headers that matter and the body (chunks joined).
fn parse(raw: &[u8]) -> Result<Response, String> {
    let end = memchr::memmem::find(raw, b"\r\n\r\n").ok_or("malformed HTTP response")?;
    let head = String::from_utf8_lossy(&raw[..end]);
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .ok_or("malformed HTTP response")?;
    let (mut content_type, mut location, mut chunked) = (String::new(), None, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = value.to_owned(),
            "location" => location = Some(value.to_owned()),
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            _ => {}
        }
    }
    let body = &raw[end + 4..];
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_vec()
    };
    Ok(Response {
        status,
        content_type,
        location,
        body,
    })
}

/// A chunked body's data, as far as it is whole.
fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = memchr::memmem::find(body, b"\r\n") {
        let size = String::from_utf8_lossy(&body[..line_end]);
        let size = size.split(';').next().unwrap_or_default().trim();
        let Ok(size) = usize::from_str_radix(size, 16) else {
            break;
        };
        let start = line_end + 2;
        if size == 0 || start >= body.len() {
            break;
        }
        // A size is the server's word: one past any length is cut at
        // what came, never added past `usize`.
        let stop = start.saturating_add(size).min(body.len());
        out.extend_from_slice(&body[start..stop]);
        body = body.get(stop + 2..).unwrap_or_default();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("HTTPS://Example.COM:8443/a/b?q=1#frag").unwrap();
        assert_eq!(
            (u.https, u.host.as_str(), u.port, u.target.as_str()),
            (true, "example.com", 8443, "/a/b?q=1")
        );
        let u = Url::parse("http://[::1]/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 80));
        assert_eq!(u.to_text(), "http://[::1]/");
        assert_eq!(
            Url::parse("file:///etc/passwd").unwrap_err(),
            "unsupported scheme \"file\": only http and https are allowed"
        );
        assert!(Url::parse("http://a@b/").is_err());
        assert!(Url::parse("http://h/a\r\nX-Injected: 1").is_err());
        let base = Url::parse("http://h/dir/page?x").unwrap();
        assert_eq!(base.join("other").unwrap().to_text(), "http://h/dir/other");
        assert_eq!(base.join("/top").unwrap().to_text(), "http://h/top");
        assert_eq!(base.join("//g:81/x").unwrap().to_text(), "http://g:81/x");
    }

    #[test]
    fn chunks() {
        assert_eq!(dechunk(b"3\r\nabc\r\n2;x\r\nde\r\n0\r\n\r\n"), b"abcde");
    }
}
