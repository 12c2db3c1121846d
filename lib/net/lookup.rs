//! Looking the proxy up. A proxy whose name does not resolve is said to
//! be the proxy's: the caller's message would name the URL's host, which
//! a call through a proxy never looks up itself.

use std::io;

use ureq::http::Uri;
use ureq::unversioned::resolver::{DefaultResolver, ResolvedSocketAddrs, Resolver};
use ureq::unversioned::transport::NextTimeout;

/// What std says before the resolver's own words.
const LOOKUP_FAILED: &str = "failed to lookup address information: ";

/// The resolver of an agent whose calls may go through `proxy`: the
/// default one, its failures to look the proxy up named as the proxy's.
#[derive(Debug)]
pub struct ProxyNamed {
    proxy: Option<(String, u16)>,
    inner: DefaultResolver,
}

impl ProxyNamed {
    pub fn new(proxy: Option<&ureq::Proxy>) -> ProxyNamed {
        ProxyNamed {
            proxy: proxy.map(|p| (p.host().to_owned(), p.port())),
            inner: DefaultResolver::default(),
        }
    }
}

impl Resolver for ProxyNamed {
    fn resolve(
        &self,
        uri: &Uri,
        config: &ureq::config::Config,
        timeout: NextTimeout,
    ) -> Result<ResolvedSocketAddrs, ureq::Error> {
        let found = self.inner.resolve(uri, config, timeout);
        let default_port = match uri.scheme_str() {
            Some("https") => 443,
            _ => 80,
        };
        let port = uri.port_u16().unwrap_or(default_port);
        match &self.proxy {
            Some((host, p)) if uri.host() == Some(host) && port == *p => {
                found.map_err(|e| unresolved(host, e))
            }
            _ => found,
        }
    }
}

/// `e`, a failure to look up the proxy `host`, in words that say so.
pub fn unresolved(host: &str, e: ureq::Error) -> ureq::Error {
    let why = match &e {
        ureq::Error::HostNotFound => "it has no address".to_owned(),
        ureq::Error::Io(io) if io.raw_os_error().is_none() => {
            let text = io.to_string();
            match text.strip_prefix(LOOKUP_FAILED) {
                Some(why) => lower_first(why),
                None => return e,
            }
        }
        _ => return e,
    };
    ureq::Error::Io(io::Error::other(format!(
        "could not resolve the proxy's host {host}: {why}"
    )))
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}
