//! Which proxy a request goes through, read from the environment as curl
//! reads it: `https_proxy`/`HTTPS_PROXY` for `https://` URLs,
//! `http_proxy`/`HTTP_PROXY` for `http://` ones, `all_proxy`/`ALL_PROXY`
//! for either when its own is unset, and none for a host that
//! `no_proxy`/`NO_PROXY` names. The lower-case spelling wins when both
//! are set; an empty value is unset. (curl reads only the lower-case
//! `http_proxy`; Go's client and Python's read both, and so does axe.)
//! How a request goes through the proxy chosen (`CONNECT` or absolute
//! form) is the client's ([`crate::client`]).

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

    /// The proxy through which ureq tunnels requests of `https` (or
    /// plain ones), when the environment names one it can use: a
    /// `CONNECT` proxy for `https://`, a SOCKS one for either.
    pub fn tunnel(&self, https: bool) -> Option<&ureq::Proxy> {
        let choice = match https {
            true => &self.https,
            false => &self.http,
        };
        choice.as_ref()?.as_ref().ok()
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

/// The proxy `value` names: an HTTP proxy, spoken to in the clear or
/// over TLS, or a SOCKS one (`socks5h://` leaves names to the proxy to
/// look up, `socks5://` looks them up here, as curl has them).
fn proxy(name: &'static str, value: &str) -> Choice {
    ureq::Proxy::new(value).map_err(|e| SetupError::ProxyUrl {
        name,
        value: redact(value),
        cause: Arc::new(e),
    })
}

/// `value`, a proxy URL, with its credentials (`user:password@`, or a
/// token alone) replaced by `***`: what a message may show of it.
pub fn redact(value: &str) -> String {
    let start = value.find("://").map_or(0, |i| i + 3);
    let rest = &value[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{}***{}", &value[..start], &rest[at..]),
        None => value.to_owned(),
    }
}

/// The secret of `value`, a proxy URL: the password of `user:password@`,
/// or a token alone before `@`; as written and, when it differs,
/// percent-decoded (as sent). For memory to keep out, as the providers'
/// keys are: a proxy URL reaches a model's view through a tool's output
/// (`env`, a config file) as easily as a key does.
pub fn secrets(value: &str) -> Vec<String> {
    let start = value.find("://").map_or(0, |i| i + 3);
    let rest = &value[start..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..end].rfind('@') else {
        return Vec::new();
    };
    let userinfo = &rest[..at];
    let secret = userinfo.split_once(':').map_or(userinfo, |(_, p)| p);
    let mut found = vec![secret.to_owned()];
    let decoded = percent_encoding::percent_decode_str(secret).decode_utf8_lossy();
    if decoded != secret {
        found.push(decoded.into_owned());
    }
    found.retain(|s| !s.is_empty());
    found
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
    /// `*`: every host (curl takes it alone, Go anywhere in the list; so
    /// does axe).
    All,
    /// A name: itself and every name under it (`example.com`,
    /// `.example.com` and `*.example.com` alike, as curl has it), never
    /// an address.
    Domain(String),
    /// An address, or a block of them (`10.0.0.0/8`, `::1`), which only
    /// an address is in: curl compares a name with names.
    Block(IpAddr, u8),
    /// A block of more bits than its address has (`10.0.0.0/40`): curl
    /// matches nothing with it.
    Nothing,
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
            Some((addr, bits)) => (addr, Some(bits)),
            None => (entry.as_str(), None),
        };
        let addr = addr.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = addr.parse::<IpAddr>() {
            let most = if ip.is_ipv4() { 32 } else { 128 };
            return Some(match bits.map(str::parse::<u8>) {
                None => Exempt::Block(ip, most),
                Some(Ok(bits)) if bits <= most => Exempt::Block(ip, bits),
                Some(_) => Exempt::Nothing,
            });
        }
        // A port is not a host's: the name matches whatever the port
        // (curl's entry with one matches nothing; Go's only that port).
        let name = match entry.rsplit_once(':') {
            Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
            _ => entry.as_str(),
        };
        let name = (name.strip_prefix("*."))
            .or_else(|| name.strip_prefix('.'))
            .unwrap_or(name);
        let name = name.strip_suffix('.').unwrap_or(name);
        (!name.is_empty()).then(|| Exempt::Domain(name.to_owned()))
    }

    /// Whether this entry names `host` (lower case, without brackets).
    fn covers(&self, host: &str) -> bool {
        let ip = host.parse::<IpAddr>().ok();
        match (self, ip) {
            (Exempt::All, _) => true,
            (Exempt::Domain(name), None) => {
                let host = host.strip_suffix('.').unwrap_or(host);
                host == name
                    || host
                        .strip_suffix(name.as_str())
                        .is_some_and(|rest| rest.ends_with('.'))
            }
            (Exempt::Block(block, bits), Some(ip)) => within(ip, *block, *bits),
            _ => false,
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

    #[test]
    fn a_proxy_urls_secret_is_its_password_or_lone_token() {
        assert_eq!(
            secrets("http://user:pa%40ss+w0rd@p:8080/"),
            ["pa%40ss+w0rd", "pa@ss+w0rd"]
        );
        assert_eq!(secrets("socks5h://tok3n-abcdefgh@p:1"), ["tok3n-abcdefgh"]);
        assert_eq!(secrets("user:pw123456@p:1"), ["pw123456"]);
        assert!(secrets("http://p:8080/a@b").is_empty());
        assert!(secrets("http://p:8080").is_empty());
    }
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

    /// curl's reading: names match names (a trailing dot aside), addresses
    /// and blocks match addresses, IPv6 blocks too; a block wider than its
    /// address matches nothing.
    #[test]
    fn no_proxy_compares_names_with_names_and_addresses_with_blocks() {
        let p = env(&[
            ("HTTP_PROXY", "http://p:1"),
            (
                "NO_PROXY",
                "0.1, corp., fd00::/8, 192.168.0.0/16, 10.0.0.1/40, 2001:db8::/129, host:8080",
            ),
        ]);
        for direct in [
            "a.corp",
            "a.corp.",
            "corp",
            "fd12::1",
            "192.168.3.4",
            "host",
            "a.host",
        ] {
            assert!(p.choose(false, direct).unwrap().is_none(), "{direct}");
        }
        for proxied in [
            "10.0.0.1",
            "fe80::1",
            "192.169.0.1",
            "2001:db8::1",
            "localhost",
            "ahost",
        ] {
            assert!(p.choose(false, proxied).unwrap().is_some(), "{proxied}");
        }
    }

    #[test]
    fn a_proxy_url_is_shown_without_its_credentials() {
        for (url, shown) in [
            ("http://u:p@h:1", "http://***@h:1"),
            ("http://tok@h:1/x@y", "http://***@h:1/x@y"),
            ("u:p%40@h:1", "***@h:1"),
            ("http://h:1/a@b", "http://h:1/a@b"),
            ("ftp://h:21", "ftp://h:21"),
        ] {
            assert_eq!(redact(url), shown, "{url}");
        }
        let p = env(&[("HTTPS_PROXY", "gopher://u:secret@h:70")]);
        let e = p.choose(true, "a").unwrap_err().to_string();
        assert!(
            e.contains("\"gopher://***@h:70\"") && !e.contains("secret"),
            "{e}"
        );
    }
}
