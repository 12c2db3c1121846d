//! The one GET of `url_fetch`, to addresses it was given: the caller
//! looked the name up and checked every address, and this connects to
//! those (axe-net's pinned client), never looking the name up again
//! (which a DNS answer that changed meanwhile would turn into another
//! address), and never through a proxy (which would connect wherever it
//! liked). TLS still checks the certificate against the host name, with
//! the same roots as every other HTTPS call of axe.

use std::io::{self, Read};
use std::net::SocketAddr;
use std::time::Instant;

use axe_net::{Client, Method};

/// The most of a body read: far more than the 10,000 characters kept, so
/// an HTML page still has its text after its markup is gone.
const BODY_LIMIT: usize = 4 << 20;

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
    let client = Client::from_env().pinned(addrs.to_vec());
    let headers = [("accept", "*/*"), ("accept-encoding", "identity")];
    let response = client
        .send(Method::Get, &url.to_text(), &headers, None, deadline)
        .map_err(|e| io_failed(&e))?;
    let status = response.status;
    let content_type = response.header("content-type").unwrap_or("").to_owned();
    let location = response.header("location").map(str::to_owned);
    let mut body = Vec::new();
    match response
        .into_reader()
        .take(BODY_LIMIT as u64)
        .read_to_end(&mut body)
    {
        Ok(_) => {}
        // A server that closes without TLS's goodbye, after its answer.
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof && !body.is_empty() => {}
        Err(e) => return Err(io_failed(&e)),
    }
    Ok(Response {
        status,
        content_type,
        location,
        body,
    })
}

fn io_failed(e: &io::Error) -> String {
    match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "timed out".into(),
        _ => axe_base::error::describe_io(e),
    }
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
}
