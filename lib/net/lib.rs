//! The network under every call axe makes: one HTTP client ([`Client`])
//! for the providers, the MCP servers, `url_fetch` and web search, which
//! keeps connections alive, goes through the proxy the environment names
//! (`HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`, `NO_PROXY`, as curl reads
//! them) and trusts the roots it names (`SSL_CERT_FILE`, `SSL_CERT_DIR`);
//! and one bounded reader of server-sent events ([`sse`]).

mod client;
mod error;
mod forward;
mod lookup;
mod proxy;
mod roots;
pub mod sse;

pub use client::{Client, Method, Response, reason};
pub use error::{CertCause, SetupError};

/// Every environment variable the network reads: the proxies and the
/// roots.
pub fn variables() -> impl Iterator<Item = &'static str> {
    proxy::VARIABLES
        .into_iter()
        .flatten()
        .chain(roots::VARIABLES)
}
/// The secrets of the proxy URLs the environment sets (see
/// [`proxy::secrets`]): for memory to keep out.
pub fn proxy_secrets() -> Vec<String> {
    let set = proxy::VARIABLES.into_iter().flatten();
    set.filter_map(|var| std::env::var(var).ok())
        .flat_map(|url| proxy::secrets(url.trim()))
        .collect()
}

/// The URL parser every crate above uses.
pub use url;
