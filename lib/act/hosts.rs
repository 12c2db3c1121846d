//! Which hosts and addresses `url_fetch` may reach. A host must be in the
//! agent's `allowed_hosts` when it has one (exact, any case, any port);
//! and every address its name resolves to must be public: not loopback,
//! private, link-local, unique-local, CGNAT, benchmark, multicast,
//! unspecified, broadcast or documentation space, nor any of these
//! written as IPv4-mapped, IPv4-compatible, NAT64 or 6to4 IPv6.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// Why `host` may not be fetched by these `allowed` hosts, in Go's words.
pub fn allowed(host: &str, allowed: &[String]) -> Result<(), String> {
    if allowed.is_empty() || allowed.iter().any(|a| a.eq_ignore_ascii_case(host)) {
        return Ok(());
    }
    Err(format!("host {host:?} is not in allowed_hosts"))
}

/// The addresses of `host` at `port`, each checked: any one that is not
/// public refuses the host (a name that resolves to both is refused, not
/// trimmed).
pub fn resolve(host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
    let addrs: Vec<SocketAddr> = match host.parse::<IpAddr>() {
        Ok(ip) => vec![SocketAddr::new(ip, port)],
        Err(_) => match testing::resolve(host, port) {
            Some(addrs) => addrs,
            None => (host, port)
                .to_socket_addrs()
                .map_err(|e| format!("lookup {host}: {}", crate::error::describe_io(&e)))?
                .collect(),
        },
    };
    if addrs.is_empty() {
        return Err(format!("lookup {host}: no addresses"));
    }
    if let Some(bad) = addrs.iter().find(|a| !public(a.ip())) {
        return Err(format!(
            "host {host:?} resolves to private address {}",
            bad.ip()
        ));
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
        || (a == 198 && (b == 18 || b == 19)) // benchmark
        || (a == 198 && b == 51 && c == 100) // documentation
        || (a == 203 && b == 0 && c == 113) // documentation
        || a >= 224; // multicast, reserved, broadcast
    !blocked
}

fn public_v6(ip: Ipv6Addr) -> bool {
    if let Some(v4) = embedded_v4(ip) {
        return public_v4(v4);
    }
    let first = ip.segments()[0];
    let blocked = ip.is_unspecified()
        || ip.is_loopback()
        || (first & 0xfe00) == 0xfc00 // unique local
        || (first & 0xffc0) == 0xfe80 // link-local
        || (first & 0xffc0) == 0xfec0 // site-local (deprecated)
        || (first & 0xff00) == 0xff00 // multicast
        || (first == 0x2001 && ip.segments()[1] == 0x0db8) // documentation
        || first == 0x0100 && ip.segments()[1..4] == [0, 0, 0]; // discard
    !blocked
}

/// The IPv4 address an IPv6 one carries: mapped (`::ffff:a.b.c.d`),
/// compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) or 6to4
/// (`2002:AABB:CCDD::`).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let low = || Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    if s[..5] == [0; 5]
        && (s[5] == 0xffff || (s[5] == 0 && !ip.is_loopback() && !ip.is_unspecified()))
    {
        return Some(low());
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(low());
    }
    if s[0] == 0x2002 {
        return Some(Ipv4Addr::new(
            (s[1] >> 8) as u8,
            s[1] as u8,
            (s[2] >> 8) as u8,
            s[2] as u8,
        ));
    }
    None
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

    #[test]
    fn allowed_hosts_are_exact_and_any_case() {
        let list = vec!["Example.com".to_owned()];
        assert!(allowed("example.COM", &list).is_ok());
        assert_eq!(
            allowed("sub.example.com", &list).unwrap_err(),
            "host \"sub.example.com\" is not in allowed_hosts"
        );
        assert!(allowed("anything", &[]).is_ok());
    }
}
