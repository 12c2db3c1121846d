//! The loopback redirect (RFC 8252 section 7.3): a listener on
//! 127.0.0.1 at a port the system picks, waiting for the browser to come
//! back with `code` and `state`, until a deadline.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use super::OAuthError;
use super::url::query;

pub struct Listener {
    listener: TcpListener,
    pub redirect_uri: String,
}

const PATH: &str = "/callback";

impl Listener {
    pub fn bind() -> Result<Listener, OAuthError> {
        let listener = TcpListener::bind("127.0.0.1:0")
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?;
        let port = listener
            .local_addr()
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?
            .port();
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot listen on 127.0.0.1 for the redirect: {e}"))?;
        Ok(Listener {
            listener,
            redirect_uri: format!("http://127.0.0.1:{port}{PATH}"),
        })
    }

    /// The query of the first request for the redirect's path before
    /// `deadline`; other requests (a favicon) get 404 and are waited past.
    pub fn wait(&self, deadline: Instant) -> Result<Vec<(String, String)>, OAuthError> {
        loop {
            match self.listener.accept() {
                Ok((stream, _)) => {
                    if let Some(pairs) = answer(stream, deadline) {
                        return Ok(pairs);
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if Instant::now() >= deadline {
                        return Err(
                            "no answer from the browser at the redirect before the login's timeout"
                                .into(),
                        );
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
                Err(e) => return Err(format!("the redirect's listener failed: {e}").into()),
            }
        }
    }
}

/// Reads one request's head (bounded), answers it, and gives the query
/// when it was for the redirect's path.
fn answer(mut stream: TcpStream, deadline: Instant) -> Option<Vec<(String, String)>> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .min(Duration::from_secs(10));
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(left.max(Duration::from_millis(100))));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 << 10 {
        match stream.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&head);
    let target = head
        .lines()
        .next()
        .and_then(|line| line.strip_prefix("GET "))
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_default();
    let (path, q) = target.split_once('?').unwrap_or((target, ""));
    let ours = path == PATH;
    let (status, body) = match ours {
        true => (
            "200 OK",
            "axe: the login goes on in the terminal; you can close this window.\n",
        ),
        false => ("404 Not Found", "not found\n"),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    ours.then(|| query(q))
}
