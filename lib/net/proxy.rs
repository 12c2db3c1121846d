//! Which proxy a request goes through, read from the environment as curl
//! reads it: `https_proxy`/`HTTPS_PROXY` for `https://` URLs,
//! `http_proxy`/`HTTP_PROXY` for `http://` ones, `all_proxy`/`ALL_PROXY`
//! for either when its own is unset, and none for a host that
//! `no_proxy`/`NO_PROXY` names. The lower-case spelling wins when both
//! are set; an empty value is unset. (curl reads only the lower-case
//! `http_proxy`; Go's client and Python's read both, and so does axe.)

use std::net::IpAddr;
use std::sync::Arc;

use crate::error::SetupError;

/// The proxies of one environment, read once for a run.
#[derive(Debug, Clone, Default)]
pub struct Proxies {
    http: Option<Choice>,
    https: Option<Choice>,
    no_proxy: Vec<Exempt>,
}

/// A proxy, or why the variable naming it names none (it is said on the
/// first request that would have used it, not ignored: a user who set a
/// proxy must not find their requests going around it).
type Choice = Result<ureq::Proxy, SetupError>;

/// The variables that name proxies, each lower case first (it wins, as
/// curl reads them): for `https://`, for `http://`, for either, and the
/// hosts reached directly.
const HTTPS: [&str; 2] = ["https_proxy", "HTTPS_PROXY"];
const HTTP: [&str; 2] = ["http_proxy", "HTTP_PROXY"];
const ALL: [&str; 2] = ["all_proxy", "ALL_PROXY"];
const NO: [&str; 2] = ["no_proxy", "NO_PROXY"];

/// Every variable the proxies are read from.
pub const VARIABLES: [[&str; 2]; 4] = [HTTPS, HTTP, ALL, NO];

impl Proxies {
    /// The proxies `var` names (a lookup of an environment variable).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Proxies {
        let read = |names: [&'static str; 2]| {
            names.into_iter().find_map(|name| {
                let value = var(name)?;
                let value = value.trim();
                (!value.is_empty()).then(|| proxy(name, value))
            })
        };
        let all = read(ALL);
        let no_proxy = read_list(&var);
        Proxies {
            http: read(HTTP).or_else(|| all.clone()),
            https: read(HTTPS).or(all),
            no_proxy,
        }
    }

    /// The proxy for a request to `host` (lower case, without brackets)
    /// over `https` or plain HTTP; `None`: straight to the host.
    pub fn choose(&self, https: bool, host: &str) -> Result<Option<ureq::Proxy>, SetupError> {
        let choice = match https {
            true => &self.https,
            false => &self.http,
        };
        let Some(choice) = choice else {
            return Ok(None);
        };
        if self.no_proxy.iter().any(|e| e.covers(host)) {
            return Ok(None);
        }
        choice.clone().map(Some)
    }
}

fn proxy(name: &'static str, value: &str) -> Choice {
    ureq::Proxy::new(value).map_err(|e| SetupError::ProxyUrl {
        name,
        value: value.to_owned(),
        cause: Arc::new(e),
    })
}

fn read_list(var: &impl Fn(&str) -> Option<String>) -> Vec<Exempt> {
    let list = NO
        .into_iter()
        .find_map(|name| var(name).filter(|v| !v.trim().is_empty()))
        .unwrap_or_default();
    list.split(',').filter_map(Exempt::parse).collect()
}

/// One entry of `NO_PROXY`.
#[derive(Debug, Clone, PartialEq)]
enum Exempt {
    /// `*`: every host.
    All,
    /// A name: itself and every name under it (`example.com`,
    /// `.example.com` and `*.example.com` alike, as curl has it).
    Domain(String),
    /// An address, or a block of them (`10.0.0.0/8`, `::1`).
    Block(IpAddr, u8),
}

impl Exempt {
    fn parse(entry: &str) -> Option<Exempt> {
        let entry = entry.trim().to_ascii_lowercase();
        if entry.is_empty() {
            return None;
        }
        if entry == "*" {
            return Some(Exempt::All);
        }
        let (addr, bits) = match entry.split_once('/') {
            Some((addr, bits)) => (addr, bits.parse::<u8>().ok()),
            None => (entry.as_str(), None),
        };
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = addr.parse::<IpAddr>() {
            let most = if ip.is_ipv4() { 32 } else { 128 };
            return Some(Exempt::Block(ip, bits.unwrap_or(most).min(most)));
        }
        let name = entry.trim_start_matches("*.").trim_start_matches('.');
        // A port is not a host's: curl matches the name whatever port.
        let name = name.split(':').next().unwrap_or(name);
        (!name.is_empty()).then(|| Exempt::Domain(name.to_owned()))
    }

    fn covers(&self, host: &str) -> bool {
        match self {
            Exempt::All => true,
            Exempt::Domain(name) => {
                host == name
                    || host
                        .strip_suffix(name.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            Exempt::Block(block, bits) => host
                .parse::<IpAddr>()
                .is_ok_and(|ip| within(ip, *block, *bits)),
        }
    }
}

/// Whether `ip` is in the block of `bits` bits at `block`.
fn within(ip: IpAddr, block: IpAddr, bits: u8) -> bool {
    let (ip, block, width) = match (ip, block) {
        (IpAddr::V4(a), IpAddr::V4(b)) => (u128::from(a.to_bits()), u128::from(b.to_bits()), 32),
        (IpAddr::V6(a), IpAddr::V6(b)) => (a.to_bits(), b.to_bits(), 128),
        _ => return false,
    };
    let shift = width - u32::from(bits);
    shift >= width || (ip >> shift) == (block >> shift)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Proxies {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        Proxies::from_vars(move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    fn host_of(p: Option<ureq::Proxy>) -> Option<String> {
        p.map(|p| format!("{}:{}", p.host(), p.port()))
    }

    #[test]
    fn each_scheme_its_own_variable_then_all_proxy() {
        let p = env(&[("HTTPS_PROXY", "http://s:1"), ("http_proxy", "h:2")]);
        assert_eq!(
            host_of(p.choose(true, "a").unwrap()).as_deref(),
            Some("s:1")
        );
        assert_eq!(
            host_of(p.choose(false, "a").unwrap()).as_deref(),
            Some("h:2")
        );
        let p = env(&[("ALL_PROXY", "http://all:3"), ("https_proxy", "")]);
        assert_eq!(
            host_of(p.choose(true, "a").unwrap()).as_deref(),
            Some("all:3")
        );
        let p = env(&[
            ("https_proxy", "http://low:1"),
            ("HTTPS_PROXY", "http://up:2"),
        ]);
        assert_eq!(
            host_of(p.choose(true, "a").unwrap()).as_deref(),
            Some("low:1")
        );
        assert!(env(&[]).choose(true, "a").unwrap().is_none());
        assert!(
            env(&[("HTTPS_PROXY", "ftp://x")])
                .choose(true, "a")
                .is_err()
        );
    }

    #[test]
    fn no_proxy_names_domains_addresses_and_blocks() {
        let p = env(&[
            ("HTTPS_PROXY", "http://p:1"),
            (
                "NO_PROXY",
                " Example.com, .corp,*.in, 10.0.0.0/8,[::1],127.0.0.1",
            ),
        ]);
        for direct in [
            "example.com",
            "api.example.com",
            "a.corp",
            "x.in",
            "10.1.2.3",
            "::1",
            "127.0.0.1",
        ] {
            assert!(p.choose(true, direct).unwrap().is_none(), "{direct}");
        }
        for proxied in ["notexample.com", "corp.org", "11.0.0.1", "127.0.0.2", "::2"] {
            assert!(p.choose(true, proxied).unwrap().is_some(), "{proxied}");
        }
        let p = env(&[("https_proxy", "http://p:1"), ("no_proxy", "*")]);
        assert!(p.choose(true, "anything").unwrap().is_none());
    }
}
