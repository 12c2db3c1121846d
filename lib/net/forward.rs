//! `http://` requests through an HTTP proxy, as curl sends them: to the
//! proxy, in absolute form (`POST http://host:port/path HTTP/1.1`), not
//! through a `CONNECT` tunnel, which a plain forwarding proxy does not
//! offer (501) and squid's default configuration allows only to port
//! 443. ureq 3 tunnels every request through an HTTP proxy and writes
//! every request line in origin form (`POST /path HTTP/1.1`), so the
//! agent of such requests is made of three parts of its own: a resolver
//! that looks up the proxy whatever the URL names (the target's name is
//! the proxy's to look up: inside a company it may resolve nowhere
//! else), a connector that connects to the proxy (over TLS for an
//! `https://` one), and a transport that puts the scheme and authority
//! in front of the origin-form target ureq wrote. ureq still writes the
//! request, reads the answer and keeps the connection; its `Host` is the
//! target's, as curl's is.

use std::fmt;
use std::io;

use crate::lookup::unresolved;
use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::{
    Buffers, ConnectionDetails, Connector, NextTimeout, RustlsConnector, TcpConnector, Transport,
};

/// The resolver of a forwarding agent: the proxy's addresses, whatever
/// the URL.
#[derive(Debug)]
pub struct ViaProxy {
    proxy: Uri,
    inner: DefaultResolver,
}

impl ViaProxy {
    pub fn new(proxy: &ureq::Proxy) -> ViaProxy {
        ViaProxy {
            proxy: proxy.uri().clone(),
            inner: DefaultResolver::default(),
        }
    }
}

impl Resolver for ViaProxy {
    fn resolve(
        &self,
        _uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let found = self.inner.resolve(&self.proxy, config, timeout);
        found.map_err(|e| unresolved(self.proxy.host().unwrap_or_default(), e))
    }
}

/// The connector of a forwarding agent: a connection to the proxy (the
/// addresses [`ViaProxy`] gave), TLS to it when its URL is `https://`,
/// whose requests go in absolute form.
pub struct Forward {
    proxy: Uri,
    tcp: TcpConnector,
    tls: RustlsConnector,
}

impl Forward {
    pub fn new(proxy: &ureq::Proxy) -> Forward {
        Forward {
            proxy: proxy.uri().clone(),
            tcp: TcpConnector::default(),
            tls: RustlsConnector::default(),
        }
    }
}

impl fmt::Debug for Forward {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The proxy's URI may hold its credentials: its host alone.
        f.debug_struct("Forward")
            .field("proxy", &self.proxy.host())
            .finish_non_exhaustive()
    }
}

impl Connector for Forward {
    type Out = AbsoluteForm;

    fn connect(
        &self,
        details: &ConnectionDetails,
        _chained: Option<()>,
    ) -> Result<Option<AbsoluteForm>, ureq::Error> {
        let origin = origin(details.uri)?;
        // The same connection, but to the proxy: its name for TLS.
        let to_proxy = ConnectionDetails {
            uri: &self.proxy,
            addrs: details.addrs.clone(),
            config: details.config,
            request_level: details.request_level,
            resolver: details.resolver,
            now: details.now,
            timeout: details.timeout,
            current_time: details.current_time.clone(),
            run_connector: details.run_connector.clone(),
            register_shutdown: details.register_shutdown.clone(),
        };
        let tcp = Connector::<()>::connect(&self.tcp, &to_proxy, None)?;
        let Some(transport) = self.tls.connect(&to_proxy, tcp)? else {
            return Ok(None);
        };
        Ok(Some(AbsoluteForm {
            inner: transport.boxed(),
            origin,
            head_next: true,
        }))
    }
}

/// `http://host[:port]` of `uri`: what goes in front of its origin-form
/// target (no credentials a URL may hold).
fn origin(uri: &Uri) -> Result<String, ureq::Error> {
    let host = uri.host().ok_or(ureq::Error::BadUri(format!(
        "{}: no host",
        uri.scheme_str().unwrap_or_default()
    )))?;
    Ok(match uri.port_u16() {
        Some(port) => format!("http://{host}:{port}"),
        None => format!("http://{host}"),
    })
}

/// A connection to a forwarding proxy: each request's line in absolute
/// form. ureq sends a request whole (head, then body) and reads its
/// answer to the end before the connection is asked whether it is open
/// (as it goes back to the pool and comes out again), so the first
/// output after that is the next request's head.
#[derive(Debug)]
pub struct AbsoluteForm {
    inner: Box<dyn Transport>,
    origin: String,
    head_next: bool,
}

impl Transport for AbsoluteForm {
    fn buffers(&mut self) -> &mut dyn Buffers {
        self.inner.buffers()
    }

    fn transmit_output(&mut self, amount: usize, timeout: NextTimeout) -> Result<(), ureq::Error> {
        if !std::mem::take(&mut self.head_next) {
            return self.inner.transmit_output(amount, timeout);
        }
        let output = self.inner.buffers().output();
        let room = output.len().max(1);
        let written = &output[..amount.min(output.len())];
        // `METHOD SP /origin-form SP HTTP/1.1`: the scheme and authority
        // go before the slash.
        let slash = written.iter().position(|&b| b == b' ').map(|i| i + 1);
        let Some(slash) = slash.filter(|&i| written.get(i) == Some(&b'/')) else {
            return Err(ureq::Error::Io(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a request line not in origin form",
            )));
        };
        let head = [&written[..slash], self.origin.as_bytes(), &written[slash..]].concat();
        for part in head.chunks(room) {
            self.inner.buffers().output()[..part.len()].copy_from_slice(part);
            self.inner.transmit_output(part.len(), timeout)?;
        }
        Ok(())
    }

    fn await_input(&mut self, timeout: NextTimeout) -> Result<bool, ureq::Error> {
        self.inner.await_input(timeout)
    }

    fn is_open(&mut self) -> bool {
        self.head_next = true;
        self.inner.is_open()
    }

    /// TLS to the proxy, when there is any, is not TLS to the target.
    fn is_tls(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use ureq::unversioned::transport::LazyBuffers;

    use super::*;

    /// A connection that keeps what is sent on it.
    #[derive(Debug)]
    struct Wire {
        buffers: LazyBuffers,
        sent: Arc<Mutex<Vec<u8>>>,
    }

    impl Transport for Wire {
        fn buffers(&mut self) -> &mut dyn Buffers {
            &mut self.buffers
        }

        fn transmit_output(&mut self, amount: usize, _: NextTimeout) -> Result<(), ureq::Error> {
            let output = self.buffers.output();
            self.sent
                .lock()
                .unwrap()
                .extend_from_slice(&output[..amount]);
            Ok(())
        }

        fn await_input(&mut self, _: NextTimeout) -> Result<bool, ureq::Error> {
            Ok(false)
        }

        fn is_open(&mut self) -> bool {
            true
        }
    }

    /// What ureq does: writes `bytes` to the start of the output buffer
    /// and has them transmitted.
    fn send(transport: &mut AbsoluteForm, bytes: &[u8]) -> Result<(), ureq::Error> {
        transport.buffers().output()[..bytes.len()].copy_from_slice(bytes);
        transport.transmit_output(bytes.len(), NextTimeout::default())
    }

    /// Each request's first output gets the origin before its target,
    /// even when that makes it more than the buffer holds; what follows
    /// (the body) goes as it is, until the connection has been asked
    /// whether it is open, between requests.
    #[test]
    fn each_head_gets_the_origin_and_nothing_else_does() {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let wire = Wire {
            buffers: LazyBuffers::new(64, 40),
            sent: Arc::clone(&sent),
        };
        let mut transport = AbsoluteForm {
            inner: Box::new(wire),
            origin: "http://models.example:8080".to_owned(),
            head_next: true,
        };
        let head = b"POST /v1/messages HTTP/1.1\r\nhost: models.example:8080\r\n";
        send(&mut transport, &head[..40]).unwrap();
        send(&mut transport, &head[40..]).unwrap();
        send(&mut transport, b"GET / HTTP/1.1").unwrap();
        assert!(transport.is_open());
        send(&mut transport, b"GET /?q HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            String::from_utf8_lossy(&sent.lock().unwrap()),
            "POST http://models.example:8080/v1/messages HTTP/1.1\r\nhost: models.example:8080\r\n\
             GET / HTTP/1.1\
             GET http://models.example:8080/?q HTTP/1.1\r\n\r\n"
        );
        // A head not in origin form is refused, never sent half-mended.
        assert!(transport.is_open());
        assert!(send(&mut transport, b"OPTIONS * HTTP/1.1\r\n").is_err());
    }

    /// The scheme and authority put before a target: the URL's host and
    /// port as written, an IPv6 address in its brackets, never the
    /// credentials a URL may hold.
    #[test]
    fn the_origin_is_host_and_port_alone() {
        for (url, origin_of) in [
            ("http://example.com/v1", "http://example.com"),
            ("http://Example.com:8080/v1?q", "http://Example.com:8080"),
            ("http://[::1]:8080/", "http://[::1]:8080"),
            ("http://u:p@h:1/", "http://h:1"),
        ] {
            let uri: Uri = url.parse().unwrap();
            assert_eq!(origin(&uri).unwrap(), origin_of, "{url}");
        }
    }
}
