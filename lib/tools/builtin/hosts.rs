//! Which hosts and addresses `url_fetch` may reach. A host must be in the
//! agent's `allowed_hosts` when it has one (exact, any case, any port);
//! and every address its name resolves to must be public: not loopback,
//! private, link-local, unique-local, CGNAT, benchmark, multicast,
//! unspecified, broadcast, documentation or other special-purpose space
//! (IANA's registries), nor any of these written as IPv4-mapped,
//! IPv4-translated, IPv4-compatible, NAT64 or 6to4 IPv6.

use crate::error::ToolError;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Why `host` may not be fetched by these `allowed` hosts, in Go's words.
pub fn allowed(host: &str, allowed: &[String]) -> Result<(), ToolError> {
    if allowed.is_empty() || allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
        return Ok(());
    }
    Err(format!("host {host:?} is not in allowed_hosts").into())
}

/// The addresses of `host` at `port`, each checked: any one that is not
/// public refuses the host (a name that resolves to both is refused, not
/// trimmed).
pub fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, ToolError> {
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => match testing::resolve(host, port) {
            Some(addrs) => addrs,
            None => (host, port)
                .to_socket_addrs()
                .map_err(|e| {
                    let text = format!("lookup {host}: {}", axe_base::error::describe_io(&e));
                    ToolError::caused(text, e)
                })?
                .collect(),
        },
    };
    if addrs.is_empty() {
        return Err(format!("lookup {host}: no addresses").into());
    }
    if let Some(bad) = addrs.iter().find(|a| !public(a.ip())) {
        return Err(format!("host {host:?} resolves to private address {}", bad.ip()).into());
    }
    Ok(addrs)
}

/// Whether `ip` is an address of the public internet.
pub fn public(ip: IpAddr) -> bool {
    if testing::loopback_allowed() && ip.is_loopback() {
        return true;
    }
    match ip {
        IpAddr::V4(v4) => public_v4(v4),
        IpAddr::V6(v6) => public_v6(v6),
    }
}

fn public_v4(ip: Ipv4Addr) -> bool {
    let [a, b, c, _] = ip.octets();
    let blocked = a == 0 // "this network", 0.0.0.0 included
        || a == 10
        || a == 127
        || (a == 100 && (64..128).contains(&b)) // CGNAT
        || (a == 169 && b == 254) // link-local, cloud metadata
        || (a == 172 && (16..32).contains(&b))
        || (a == 192 && b == 168)
        || (a == 192 && b == 0 && c == 0) // IETF protocol assignments
        || (a == 192 && b == 0 && c == 2) // documentation
        || (a == 192 && b == 88 && c == 99) // 6to4 relay anycast (deprecated)
        || (a == 198 && (b == 18 || b == 19)) // benchmark
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224; // multicast, reserved, broadcast
    !blocked
}

/// IANA's IPv6 special-purpose registry, read strictly: an address that
/// carries an IPv4 one is that address; otherwise only global unicast
/// (`2000::/3`) outside its reserved blocks is public. That leaves out
/// loopback, unspecified, the local-use NAT64 prefix `64:ff9b:1::/48`
/// (its operator chooses where the IPv4 address sits, so no one reading
/// of it is safe), discard-only `100::/64`, SRv6 `5f00::/16`, unique-local,
/// link-local, site-local and multicast.
fn public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return public_v4(v4);
    }
    let s = ip.segments();
    let blocked = (s[0] & 0xe000) != 0x2000 // not global unicast
        // IETF protocol assignments: Teredo (whose client address is
        // obfuscated and whose relays are gone), benchmarking, ORCHID,
        // anycast services url_fetch has no use for.
        || (s[0] == 0x2001 && s[1] < 0x0200)
        || (s[0] == 0x2001 && s[1] == 0x0db8) // documentation
        || (s[0] == 0x3fff && s[1] < 0x1000); // documentation (RFC 9637)
    !blocked
}

/// The IPv4 address an IPv6 one carries: mapped (`::ffff:a.b.c.d`),
/// translated (`::ffff:0:a.b.c.d`, SIIT), compatible (`::a.b.c.d`, which
/// makes `::` and `::1` read as `0.0.0.0` and `0.0.0.1`, both refused),
/// well-known NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:AABB:CCDD::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let v4 = |hi: u16, lo: u16| Ipv4Addr::new((hi >> 8) as u8, hi as u8, (lo >> 8) as u8, lo as u8);
    match s {
        [0, 0, 0, 0, 0, 0xffff, hi, lo]
        | [0, 0, 0, 0, 0xffff, 0, hi, lo]
        | [0, 0, 0, 0, 0, 0, hi, lo]
        | [0x64, 0xff9b, 0, 0, 0, 0, hi, lo]
        | [0x2002, hi, lo, ..] => Some(v4(hi, lo)),
        _ => None,
    }
}

/// Knobs for axe's own tests, which need a "public" server on loopback
/// and names that resolve where they say. Only builds with the
/// `test-hooks` feature (the tests' own) read them: every other build has
/// neither, so nothing an agent file or a user's environment sets can
/// loosen the guard.
#[cfg(feature = "test-hooks")]
mod testing {
    use std::net::SocketAddr;

    /// `AXE_TEST_URL_FETCH_LOOPBACK=1`: loopback addresses count as
    /// public. Every other range stays blocked.
    pub fn loopback_allowed() -> bool {
        std::env::var_os("AXE_TEST_URL_FETCH_LOOPBACK").is_some_and(|v| v == "1")
    }

    /// `AXE_TEST_URL_FETCH_RESOLVE=name=ip,name=ip`: what those names resolve
    /// to, in place of a lookup.
    pub fn resolve(host: &str, port: u16) -> Option<Vec<SocketAddr>> {
        let table = std::env::var("AXE_TEST_URL_FETCH_RESOLVE").ok()?;
        let ips: Vec<SocketAddr> = table
            .split(',')
            .filter_map(|pair| pair.split_once('='))
            .filter(|(name, _)| name.eq_ignore_ascii_case(host))
            .filter_map(|(_, ip)| ip.parse().ok())
            .map(|ip| SocketAddr::new(ip, port))
            .collect();
        (!ips.is_empty()).then_some(ips)
    }
}

/// Every other build: no knobs.
#[cfg(not(feature = "test-hooks"))]
mod testing {
    use std::net::SocketAddr;

    pub fn loopback_allowed() -> bool {
        false
    }

    pub fn resolve(_host: &str, _port: u16) -> Option<Vec<SocketAddr>> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocked_ranges() {
        for bad in [
            "0.0.0.0",
            "10.1.2.3",
            "127.0.0.1",
            "100.64.0.1",
            "169.254.169.254",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "198.18.0.1",
            "198.19.255.255",
            "224.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "fc00::1",
            "fd12::1",
            "fe80::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "64:ff9b::a00:1",
            "2002:a00:1::",
            "::ffff:169.254.169.254",
        ] {
            assert!(!public(bad.parse().unwrap()), "{bad}");
        }
        for good in [
            "1.1.1.1",
            "8.8.8.8",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700::1111",
            "::ffff:1.1.1.1",
        ] {
            assert!(public(good.parse().unwrap()), "{good}");
        }
    }

    /// Every IPv6 spelling that carries an IPv4 address is judged by that
    /// address; the translation prefixes whose embedding varies, and the
    /// special-purpose blocks outside the IPv4 ones, are refused whole.
    #[test]
    fn ipv4_inside_ipv6_and_special_blocks() {
        for bad in [
            "::ffff:0:127.0.0.1",                   // SIIT, IPv4-translated (RFC 2765)
            "::ffff:0:10.0.0.1",                    //
            "::ffff:0:169.254.169.254",             //
            "::ffff:0:0:0",                         //
            "::10.0.0.1",                           // IPv4-compatible
            "::ffff:192.168.0.1",                   // IPv4-mapped
            "64:ff9b::127.0.0.1",                   // NAT64, well-known (RFC 6052)
            "64:ff9b:1::7f00:1",                    // NAT64, local use (RFC 8215), any position
            "64:ff9b:1:7f00:1::",                   //
            "64:ff9b:1:ffff::1:1",                  //
            "2002:7f00:1::1",                       // 6to4 of loopback
            "2002:a9fe:a9fe::",                     // 6to4 of cloud metadata
            "2001:0:4136:e378:8000:63bf:3fff:fdd2", // Teredo (whole 2001::/23)
            "2001:2::1",                            // benchmarking
            "2001:10::1",                           // ORCHID
            "100::1",                               // discard-only
            "5f00::1",                              // SRv6 SIDs (RFC 9602)
            "3fff::1",                              // documentation (RFC 9637)
            "3fff:fff::1",                          //
            "2001:db8::1",                          // documentation
            "4000::1",                              // outside global unicast 2000::/3
            "192.88.99.1",                          // 6to4 relay anycast (deprecated)
            "240.0.0.1",                            // reserved
        ] {
            assert!(!public(bad.parse().unwrap()), "{bad} counted as public");
        }
        for good in [
            "::ffff:0:1.1.1.1",
            "64:ff9b::8.8.8.8",
            "2002:808:808::1",
            "2a00:1450:4001:80b::200e",
            "3fff:1000::1",
            "192.88.100.1",
        ] {
            assert!(public(good.parse().unwrap()), "{good} refused");
        }
    }

    #[test]
    fn allowed_hosts_are_exact_and_any_case() {
        let list = vec!["Example.com".to_owned()];
        assert!(allowed("example.COM", &list).is_ok());
        assert_eq!(
            allowed("sub.example.com", &list).unwrap_err().to_string(),
            "host \"sub.example.com\" is not in allowed_hosts"
        );
        assert!(allowed("anything", &[]).is_ok());
    }
}
