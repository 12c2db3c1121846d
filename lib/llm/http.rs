//! One HTTP POST with a deadline, and what can go wrong with it.
//!
//! Failures stay raw here ([`Failure`]) so the retry loop can tell a 429
//! from a 400 and a dropped connection from a timeout; only at the end are
//! they turned into the `<category>: <message>` error of the provider.

use std::io::{self, Read};
use std::time::{Duration, Instant};

use axe_net::{Client, Method, Response};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc2822;

use axe_base::error::Category;

/// How much of an error reply is read: far more than any real error text.
/// A longer body is cut, no longer parses, and the status text stands in.
const ERROR_BODY_LIMIT: u64 = 8 << 20;

/// A failed attempt.
#[derive(Debug)]
pub enum Failure {
    /// The server answered with a status outside 2xx (redirects included:
    /// they are not followed).
    Status {
        status: u16,
        reason: String,
        /// Its media type, without parameters, when it gave one.
        content_type: Option<String>,
        body: Vec<u8>,
        retry_after: Option<Duration>,
    },
    /// The deadline passed.
    Timeout,
    /// No connection, or it broke: worth another try.
    Dropped { url: String, err: io::Error },
    /// The reply came but made no sense, or anything else not worth
    /// retrying.
    Api(Category, String),
    /// Writing streamed text to our own output failed.
    Output(io::Error),
}

/// Go's `http.StatusText` for the statuses providers send, else what the
/// server said.
pub fn status_text(status: u16, reason: &str) -> String {
    let text = match status {
        301 => "Moved Permanently",
        302 => "Found",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Request Entity Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        // A reason phrase is the server's to choose: no escape sequence
        // of it reaches the terminal.
        _ if !reason.trim().is_empty() && !reason.chars().any(char::is_control) => reason.trim(),
        _ => return format!("HTTP {status}"),
    };
    text.to_owned()
}

/// POSTs `body` as JSON through `client`; an answer outside 2xx is read
/// whole and returned as [`Failure::Status`].
pub fn post(
    client: &Client,
    url: &str,
    headers: &[(&'static str, String)],
    body: &[u8],
    deadline: Instant,
) -> Result<Response, Failure> {
    if deadline <= Instant::now() {
        return Err(Failure::Timeout);
    }
    let mut all = vec![("content-type", "application/json")];
    all.extend(headers.iter().map(|(name, value)| (*name, value.as_str())));
    let response = client
        .send(Method::Post, url, &all, Some(body), deadline)
        .map_err(|e| io_failure(url, e))?;
    if (200..300).contains(&response.status) {
        return Ok(response);
    }
    let status = response.status;
    let content_type = response.header("content-type").and_then(media_type);
    let retry_after = response
        .header("retry-after")
        .and_then(|v| parse_retry_after(v, OffsetDateTime::now_utc()));
    // The body only improves the message; a broken one leaves the status,
    // and a huge one is not worth reading to its end.
    let mut body = Vec::new();
    let _ = response
        .into_reader()
        .take(ERROR_BODY_LIMIT)
        .read_to_end(&mut body);
    Err(Failure::Status {
        status,
        // The server's reason phrase is not kept by the client: the
        // status's standard text stands in.
        reason: axe_net::reason(status).unwrap_or_default().to_owned(),
        content_type,
        body,
        retry_after,
    })
}

/// The media type of a `Content-Type` value (`text/html` of
/// `text/html; charset=utf-8`), when it looks like one: it is shown in
/// an error, and the server chose it.
fn media_type(value: &str) -> Option<String> {
    let media = value.split(';').next().unwrap_or("").trim();
    let plain =
        !media.is_empty() && media.len() <= 100 && media.bytes().all(|b| b.is_ascii_graphic());
    plain.then(|| media.to_ascii_lowercase())
}

/// `url` as error messages show it: no `user:password@` (base URLs with
/// one are refused before any call, but no message is to rely on that)
/// and no query value but ours (`alt=sse`), where a key could be.
pub fn shown(url: &str) -> String {
    let start = url.find("://").map_or(0, |i| i + 3);
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    let host = match url[start..end].rfind('@') {
        Some(at) => &url[start + at + 1..end],
        None => &url[start..end],
    };
    let rest = &url[end..];
    let (path, query) = match rest.split_once('?') {
        Some((path, query)) => (path, Some(query)),
        None => (rest, None),
    };
    let mut out = format!("{}{host}{path}", &url[..start]);
    if let Some(query) = query {
        let query = query.split('#').next().unwrap_or("");
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some(("alt", value)) => format!("alt={value}"),
                Some((name, _)) => format!("{name}=..."),
                None => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

/// Reads a whole body.
pub fn read_all(response: Response) -> Result<Vec<u8>, Failure> {
    let mut body = Vec::new();
    response
        .into_reader()
        .read_to_end(&mut body)
        .map_err(|e| io_failure("", e))?;
    Ok(body)
}

/// A read or connect error: a timeout, or a dropped connection.
pub fn io_failure(url: &str, err: io::Error) -> Failure {
    match err.kind() {
        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock => Failure::Timeout,
        _ => Failure::Dropped {
            url: url.to_owned(),
            err: explain(url, err),
        },
    }
}

/// What std says before the resolver's own words when a name does not
/// resolve; its error has no kind we can name (`Uncategorized`), so the
/// text is all there is to know it by.
const LOOKUP_FAILED: &str = "failed to lookup address information: ";

/// What the HTTP client (ureq) says of a connection that closed before
/// the reply was whole.
const PEER_DISCONNECTED: &str = "Peer disconnected";

/// `err` as the user should read it. An OS error (connection refused,
/// reset, no route to host) already says what happened. Errors made up by
/// std or the TLS library have a kind that says nothing ("uncategorized
/// error", "invalid data"): their own words are kept, and where we know
/// more the cause is named, as Go's client did (`lookup <host>: no such
/// host`, `tls: ...`).
fn explain(url: &str, err: io::Error) -> io::Error {
    if err.raw_os_error().is_some() {
        return err;
    }
    let tls = url.starts_with("https://");
    let cause = match err.get_ref().map(ToString::to_string) {
        Some(text) if text.starts_with(LOOKUP_FAILED) => format!(
            "could not resolve host {}: {}",
            host(url),
            lower_first(&text[LOOKUP_FAILED.len()..])
        ),
        // rustls reports every failed handshake as invalid data: a server
        // that does not speak TLS, a certificate it cannot trust, a proxy
        // in the way.
        Some(text) if tls && err.kind() == io::ErrorKind::InvalidData => {
            let hint = if text.contains("InvalidContentType") {
                " (not a TLS server: should the base URL be http://?)"
            } else {
                ""
            };
            format!("the TLS handshake failed: {text}{hint}")
        }
        // The HTTP client's word for a connection that ended early: before
        // the status line (`url` is only given then), or in the body.
        Some(text) if err.kind() == io::ErrorKind::UnexpectedEof && text == PEER_DISCONNECTED => {
            match url.is_empty() {
                true => "the connection closed before the reply was complete".to_owned(),
                false => "no HTTP reply: the connection closed, or what came back was not HTTP"
                    .to_owned(),
            }
        }
        Some(text) => text,
        // Before any reply (`url` is only given then), over TLS: the other
        // end hung up on the handshake, as a broken proxy does.
        None if tls && err.kind() == io::ErrorKind::UnexpectedEof => {
            "the connection closed during the TLS handshake".to_owned()
        }
        None => return err,
    };
    io::Error::other(cause)
}

/// The host part of `url`: `api.anthropic.com` of
/// `https://api.anthropic.com:443/v1/messages`. Base URLs with a user
/// name or password are refused before any call.
fn host(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    match authority.rsplit_once(':') {
        // Not the colons of an IPv6 address: `[::1]` keeps them.
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => authority,
    }
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// `Retry-After` as delay-seconds or an HTTP date.
pub fn parse_retry_after(value: &str, now: OffsetDateTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    let at = OffsetDateTime::parse(value, &Rfc2822).ok()?;
    Some(Duration::try_from(at - now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_seconds_and_dates() {
        let now = OffsetDateTime::parse("Wed, 21 Oct 2015 07:28:00 GMT", &Rfc2822).unwrap();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:05 GMT", now),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn hosts_of_urls() {
        assert_eq!(
            host("https://api.anthropic.com/v1/messages"),
            "api.anthropic.com"
        );
        assert_eq!(host("http://localhost:11434/api/chat"), "localhost");
        assert_eq!(host("http://[::1]:8080/x"), "[::1]");
        assert_eq!(host("http://[::1]/x"), "[::1]");
        assert_eq!(host("http://h?q=a:b"), "h");
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(shown("http://u:pw@h:1/v1/x"), "http://h:1/v1/x");
        assert_eq!(
            shown("https://h/v1beta/models/m:streamGenerateContent?alt=sse&key=AIza-secret#f"),
            "https://h/v1beta/models/m:streamGenerateContent?alt=sse&key=..."
        );
        assert_eq!(shown("http://h/p"), "http://h/p");
        assert_eq!(
            media_type("Text/HTML; charset=utf-8").as_deref(),
            Some("text/html")
        );
        assert_eq!(media_type("a\u{1b}[31m"), None);
    }

    #[test]
    fn status_texts_are_gos() {
        assert_eq!(status_text(503, "whatever"), "Service Unavailable");
        assert_eq!(status_text(529, "Overloaded"), "Overloaded");
        assert_eq!(status_text(599, ""), "HTTP 599");
        assert_eq!(status_text(599, "x\u{1b}[2J"), "HTTP 599");
    }
}
