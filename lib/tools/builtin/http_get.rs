//! The one GET of `url_fetch`, to addresses it was given: the caller
//! looked the name up and checked every address, and this connects to
//! those (axe-net's pinned client), never looking the name up again
//! (which a DNS answer that changed meanwhile would turn into another
//! address), and never through a proxy (which would connect wherever it
//! liked). TLS still checks the certificate against the host name, with
//! the same roots as every other HTTPS call of axe.

use crate::error::ToolError;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::time::Instant;

use axe_net::url;
use axe_net::{Client, Method};

/// The most of a body read: far more than the 10,000 characters kept, so
/// an HTML page still has its text after its markup is gone.
const BODY_LIMIT: usize = 4 << 20;

/// A URL `url_fetch` may fetch: `http` or `https`, with a host and no
/// user name or password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Url {
    url: url::Url,
    pub https: bool,
    /// Lower case (international names in their ASCII form), without
    /// brackets for IPv6.
    pub host: String,
    pub port: u16,
}

impl Url {
    pub fn parse(text: &str) -> Result<Url, ToolError> {
        let text = text.trim();
        // A URL parser drops tabs and newlines and encodes spaces; a URL
        // that has them was not meant as it would be read: refused whole.
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "invalid URL {text:?}: spaces and control characters must be percent-encoded"
            )
            .into());
        }
        match url::Url::parse(text) {
            Ok(url) => Url::checked(url),
            Err(url::ParseError::RelativeUrlWithoutBase) => Err(unsupported("").into()),
            Err(e) => Err(format!("invalid URL {text:?}: {e}").into()),
        }
    }

    /// `url` when it may be fetched.
    fn checked(url: url::Url) -> Result<Url, ToolError> {
        let https = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(unsupported(other).into()),
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err("URLs with a user name or password are not fetched".into());
        }
        let host = match url.host() {
            Some(url::Host::Domain(name)) => name.to_ascii_lowercase(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(format!("no host in URL {:?}", url.as_str()).into()),
        };
        let port = url
            .port_or_known_default()
            .ok_or_else(|| format!("no port in URL {:?}", url.as_str()))?;
        let mut url = url;
        url.set_fragment(None);
        Ok(Url {
            url,
            https,
            host,
            port,
        })
    }

    pub fn to_text(&self) -> String {
        self.url.as_str().to_owned()
    }

    /// Where a redirect's `Location` leads from here.
    pub fn join(&self, location: &str) -> Result<Url, ToolError> {
        let location = location.trim();
        let url = self
            .url
            .join(location)
            .map_err(|e| ToolError::caused(format!("invalid redirect {location:?}: {e}"), e))?;
        Url::checked(url)
    }
}

fn unsupported(scheme: &str) -> String {
    format!("unsupported scheme {scheme:?}: only http and https are allowed")
}

/// What came back.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: String,
    pub location: Option<String>,
    pub body: Vec<u8>,
}

/// GETs `url` from the first of `addrs` that answers, by `deadline`,
/// with `client`'s roots.
pub fn get(
    client: &Client,
    url: &Url,
    addrs: &[SocketAddr],
    deadline: Instant,
) -> Result<Response, ToolError> {
    let client = client.pinned(addrs.to_vec());
    let headers = [("accept", "*/*"), ("accept-encoding", "identity")];
    let response = client
        .send(Method::Get, &url.to_text(), &headers, None, deadline)
        .map_err(io_failed)?;
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
        Err(e) => return Err(io_failed(e)),
    }
    Ok(Response {
        status,
        content_type,
        location,
        body,
    })
}

fn io_failed(e: io::Error) -> ToolError {
    let text = match e.kind() {
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => "timed out".into(),
        _ => axe_base::error::describe_io(&e),
    };
    ToolError::caused(text, e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let u = Url::parse("HTTPS://Example.COM:8443/a/./b?q=1#frag").unwrap();
        assert_eq!(
            (u.https, u.host.as_str(), u.port, u.to_text().as_str()),
            (
                true,
                "example.com",
                8443,
                "https://example.com:8443/a/b?q=1"
            )
        );
        let u = Url::parse("http://Bücher.example/").unwrap();
        assert_eq!(u.host, "xn--bcher-kva.example");
        assert_eq!(
            Url::parse("example.com/x").unwrap_err().to_string(),
            "unsupported scheme \"\": only http and https are allowed"
        );
        let u = Url::parse("http://[::1]/").unwrap();
        assert_eq!((u.host.as_str(), u.port), ("::1", 80));
        assert_eq!(u.to_text(), "http://[::1]/");
        assert_eq!(
            Url::parse("file:///etc/passwd").unwrap_err().to_string(),
            "unsupported scheme \"file\": only http and https are allowed"
        );
        assert!(Url::parse("http://a@b/").is_err());
        assert!(Url::parse("http://h/a\r\nX-Injected: 1").is_err());
        let base = Url::parse("http://h/dir/page?x").unwrap();
        assert_eq!(base.join("other").unwrap().to_text(), "http://h/dir/other");
        assert_eq!(base.join("/top").unwrap().to_text(), "http://h/top");
        assert_eq!(base.join("//g:81/x").unwrap().to_text(), "http://g:81/x");
        assert_eq!(
            base.join("../up?u=http://x").unwrap().to_text(),
            "http://h/up?u=http://x"
        );
        assert!(base.join("ftp://h/").is_err());
    }
}
