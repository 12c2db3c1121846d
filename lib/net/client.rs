//! The one HTTP client (ureq) every request of a run goes through. One
//! [`Client`] is made for a run and shared by every agent of it, so each
//! endpoint is one connection kept alive from turn to turn (a provider's
//! TLS handshake once, not every turn); requests go through the proxy the
//! environment names ([`crate::proxy`]), as curl does (an `https://` one
//! through a `CONNECT` tunnel, an `http://` one to the proxy in absolute
//! form: [`crate::forward`]), and trust the roots it names
//! ([`crate::roots`]). Redirects are never followed and every status is
//! a response: what to make of them is the caller's.

use std::io::{self, Read};
use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine;
use base64::prelude::BASE64_STANDARD;
use ureq::http::Uri;
use ureq::tls::{RootCerts, TlsConfig};
use ureq::unversioned::resolver::{ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{DefaultConnector, NextTimeout};

use crate::error::SetupError;
use crate::forward::{Forward, ViaProxy};
use crate::lookup::ProxyNamed;
use crate::proxy::Proxies;
use crate::roots;

/// How long an unused connection is kept: a model's turn and the tools
/// it calls take seconds; a server drops an idle connection after a
/// minute or so anyway.
const IDLE: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Delete,
}

/// An HTTP client: clones share its connections.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    proxies: Proxies,
    named: roots::Named,
    /// Where every connection goes, when the client is pinned.
    pinned: Option<Vec<SocketAddr>>,
    /// For `http://`: made on the first request.
    plain: OnceLock<ureq::Agent>,
    /// For `https://`, made on the first such request, its roots read
    /// then (an `SSL_CERT_DIR` can hold hundreds of files, which a run
    /// that makes no HTTPS call need not read); or why the roots the
    /// environment names cannot be used.
    tls: OnceLock<Result<ureq::Agent, SetupError>>,
    /// For `http://` through the proxy the environment names for them:
    /// made on the first such request (its roots then, for a proxy
    /// spoken to over TLS).
    forward: OnceLock<Result<ureq::Agent, SetupError>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("proxies", &self.inner.proxies)
            .field("roots", &self.inner.named)
            .field("pinned", &self.inner.pinned)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// The client of this environment's proxies and roots.
    pub fn from_env() -> Client {
        Client::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Client {
        Client::new(
            Proxies::from_vars(&var),
            roots::Named::from_vars(&var),
            None,
        )
    }

    fn new(proxies: Proxies, named: roots::Named, pinned: Option<Vec<SocketAddr>>) -> Client {
        Client {
            inner: Arc::new(Inner {
                proxies,
                named,
                pinned,
                plain: OnceLock::new(),
                tls: OnceLock::new(),
                forward: OnceLock::new(),
            }),
        }
    }

    /// A client that connects to `addrs` and nowhere else, whatever name
    /// a URL gives, and never through a proxy; TLS still checks the
    /// certificate against the URL's host name. `url_fetch` checked
    /// every one of `addrs`, and a second lookup could answer others.
    pub fn pinned(&self, addrs: Vec<SocketAddr>) -> Client {
        Client::new(Proxies::default(), self.inner.named.clone(), Some(addrs))
    }

    /// The agent for `https` or plain requests.
    fn agent(&self, https: bool) -> Result<&ureq::Agent, SetupError> {
        let inner = &*self.inner;
        let make = |roots: RootCerts| {
            let config = config(roots);
            match &inner.pinned {
                Some(addrs) => {
                    ureq::Agent::with_parts(config, DefaultConnector::new(), Pinned(addrs.clone()))
                }
                None => {
                    let proxy = inner.proxies.tunnel(https);
                    ureq::Agent::with_parts(config, DefaultConnector::new(), ProxyNamed::new(proxy))
                }
            }
        };
        match https {
            false => Ok(inner.plain.get_or_init(|| make(RootCerts::WebPki))),
            true => inner
                .tls
                .get_or_init(|| roots::read_named(&inner.named).map(make))
                .as_ref()
                .map_err(Clone::clone),
        }
    }

    /// The agent of `http://` requests through `proxy` (there is one
    /// such proxy: the one the environment names for `http://`).
    fn forward(&self, proxy: &ureq::Proxy) -> Result<&ureq::Agent, SetupError> {
        let inner = &*self.inner;
        let make = || {
            let roots = match proxy.protocol() {
                ureq::ProxyProtocol::Https => roots::read_named(&inner.named)?,
                _ => RootCerts::WebPki,
            };
            let (connector, resolver) = (Forward::new(proxy), ViaProxy::new(proxy));
            Ok(ureq::Agent::with_parts(config(roots), connector, resolver))
        };
        inner
            .forward
            .get_or_init(make)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Sends `method` to `url` with `headers` (and `body`, for a POST),
    /// all of it, reading the body included, by `deadline`. A timeout is
    /// an error of kind [`io::ErrorKind::TimedOut`]; any status comes
    /// back as a [`Response`].
    pub fn send(
        &self,
        method: Method,
        url: &str,
        headers: &[(&str, &str)],
        body: Option<&[u8]>,
        deadline: Instant,
    ) -> io::Result<Response> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "timed out"));
        }
        let uri: Uri = url.parse().map_err(|e| {
            io::Error::new(io::ErrorKind::InvalidInput, format!("invalid URL: {e}"))
        })?;
        let https = uri
            .scheme_str()
            .is_some_and(|s| s.eq_ignore_ascii_case("https"));
        let agent = https.then(|| self.agent(true)).transpose();
        let agent = agent.map_err(io::Error::other)?;
        let host = uri.host().unwrap_or_default().trim_start_matches('[');
        let host = host.trim_end_matches(']').to_ascii_lowercase();
        let proxy = self
            .inner
            .proxies
            .choose(https, &host)
            .map_err(io::Error::other)?;
        // Through a proxy, as curl goes: `http://` to an HTTP proxy in
        // absolute form, its credentials in a header of the request;
        // anything else through ureq's tunnel (`CONNECT`, SOCKS).
        let (agent, tunnel, authorization) = match (agent, proxy) {
            (Some(agent), proxy) => (agent, proxy, None),
            (None, Some(proxy)) if forwards(&proxy) => {
                let agent = self.forward(&proxy).map_err(io::Error::other)?;
                (agent, None, basic(&proxy))
            }
            (None, proxy) => (self.agent(false).map_err(io::Error::other)?, proxy, None),
        };
        // ureq's requests with and without a body are builders of two
        // types: one recipe for both.
        macro_rules! prepare {
            ($request:expr) => {{
                let mut request = $request
                    .config()
                    .timeout_global(Some(left))
                    .proxy(tunnel)
                    .build();
                for (name, value) in headers {
                    request = request.header(*name, *value);
                }
                if let Some(credentials) = &authorization {
                    request = request.header("Proxy-Authorization", credentials);
                }
                request
            }};
        }
        let response = match method {
            Method::Get => prepare!(agent.get(uri)).call(),
            Method::Delete => prepare!(agent.delete(uri)).call(),
            Method::Post => prepare!(agent.post(uri)).send(body.unwrap_or_default()),
        }
        .map_err(to_io)?;
        let (parts, body) = response.into_parts();
        Ok(Response {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        })
    }
}

/// The agent's settings: statuses are answers, redirects are the
/// caller's to follow or not, connections are kept, the user agent is
/// axe's; proxies are chosen request by request.
fn config(roots: RootCerts) -> ureq::config::Config {
    let tls = TlsConfig::builder()
        .root_certs(roots)
        // The TLS crypto of the tree (ring, which SHA-256 uses too),
        // handed in: ureq's own choice would be a feature of its own.
        .unversioned_rustls_crypto_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .user_agent("axe")
        .max_idle_age(IDLE)
        .tls_config(tls)
        .build()
}

/// Whether `proxy` takes `http://` requests in absolute form: an HTTP
/// one; a SOCKS one tunnels them.
fn forwards(proxy: &ureq::Proxy) -> bool {
    matches!(
        proxy.protocol(),
        ureq::ProxyProtocol::Http | ureq::ProxyProtocol::Https
    )
}

/// The `Proxy-Authorization` of `proxy`'s credentials (its URL's
/// `user:password@`, percent-decoded), as ureq sends them with `CONNECT`.
fn basic(proxy: &ureq::Proxy) -> Option<String> {
    if proxy.username().is_none() && proxy.password().is_none() {
        return None;
    }
    let user = proxy.username().unwrap_or_default();
    let password = proxy.password().unwrap_or_default();
    let pair = BASE64_STANDARD.encode(format!("{user}:{password}"));
    Some(format!("Basic {pair}"))
}

/// A ureq error as the I/O error it comes down to, its kind kept where
/// the caller tells errors apart by it.
fn to_io(e: ureq::Error) -> io::Error {
    match e {
        ureq::Error::Io(e) => e,
        ureq::Error::Timeout(_) => io::Error::new(io::ErrorKind::TimedOut, "timed out"),
        // In std's words for a name that does not resolve, which the
        // caller knows.
        ureq::Error::HostNotFound => io::Error::new(
            io::ErrorKind::NotFound,
            "failed to lookup address information: it has no address",
        ),
        ureq::Error::Rustls(e) => io::Error::new(io::ErrorKind::InvalidData, e),
        // ureq's own words begin with `CONNECT`, which a message's
        // lower-cased first letter would make `cONNECT`.
        ureq::Error::ConnectProxyFailed(why) => io::Error::other(format!(
            "the proxy would not open a tunnel (CONNECT): {why}"
        )),
        other => io::Error::other(other.to_string()),
    }
}

/// The text of `status` (`Not Found`), when it is a standard one: what a
/// message shows beside the number, since the reason phrase the server
/// sent is not kept.
pub fn reason(status: u16) -> Option<&'static str> {
    ureq::http::StatusCode::from_u16(status)
        .ok()
        .and_then(|s| s.canonical_reason())
}

/// An answer: its status, its headers, and its body to read.
pub struct Response {
    pub status: u16,
    headers: ureq::http::HeaderMap,
    body: ureq::Body,
}

impl Response {
    /// The value of header `name` (any case), when it is text; of a
    /// header given twice, the last, as a parser that reads them in
    /// order and keeps what it read last has it.
    pub fn header(&self, name: &str) -> Option<&str> {
        let last = self.headers.get_all(name).iter().next_back()?;
        last.to_str().ok()
    }

    /// The body, as it comes; reads are bounded by the request's
    /// deadline.
    pub fn into_reader(self) -> impl Read + Send + 'static {
        self.body.into_reader()
    }
}

/// The resolver of a [`Client::pinned`]: its addresses, whatever the name.
#[derive(Debug)]
struct Pinned(Vec<SocketAddr>);

impl Resolver for Pinned {
    fn resolve(
        &self,
        _uri: &Uri,
        _config: &ureq::config::Config,
        _timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let mut addrs = self.empty();
        // ureq holds at most 16 addresses; more would panic.
        for addr in self.0.iter().take(16) {
            addrs.push(*addr);
        }
        match addrs.is_empty() {
            true => Err(ureq::Error::HostNotFound),
            false => Ok(addrs),
        }
    }
}
