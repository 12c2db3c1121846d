//! The little of URLs OAuth needs: a URL's origin and path, the
//! well-known addresses made from them, and form/query encoding.

/// `url` split into its origin (`https://host:port`) and its path (``
/// for none, else starting with `/`), query and fragment dropped.
pub fn split(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    if scheme != "http" && scheme != "https" {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    let origin = &url[..scheme.len() + 3 + end];
    let after = &rest[end..];
    let path = &after[..after.find(['?', '#']).unwrap_or(after.len())];
    Some((origin, path.trim_end_matches('/')))
}

/// The metadata addresses of RFC 8414 section 3 and RFC 9728 section 3:
/// `/.well-known/NAME` put between origin and path.
pub fn well_known(url: &str, name: &str) -> Option<String> {
    let (origin, path) = split(url)?;
    Some(format!("{origin}/.well-known/{name}{path}"))
}

/// `text` percent-encoded for a query or a form body (RFC 3986
/// unreserved characters kept).
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// `pairs` as `k=v&k=v`, each encoded.
pub fn form(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The pairs of a query string (`a=1&b=x%20y`), decoded; `+` is a space.
pub fn query(text: &str) -> Vec<(String, String)> {
    text.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let pair = bytes
            .get(i + 1)
            .copied()
            .and_then(hex)
            .zip(bytes.get(i + 2).copied().and_then(hex));
        match (bytes[i], pair) {
            (b'+', _) => out.push(b' '),
            (b'%', Some((hi, lo))) => {
                out.push((hi * 16 + lo) as u8);
                i += 2;
            }
            (b, _) => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_paths_and_well_known_addresses() {
        assert_eq!(
            split("http://localhost:8/mcp?x#y"),
            Some(("http://localhost:8", "/mcp"))
        );
        assert_eq!(split("https://h"), Some(("https://h", "")));
        assert_eq!(split("ftp://h/x"), None);
        assert_eq!(
            well_known("https://a.example/tenant1", "oauth-authorization-server").unwrap(),
            "https://a.example/.well-known/oauth-authorization-server/tenant1"
        );
        assert_eq!(
            well_known("https://a.example/", "oauth-protected-resource").unwrap(),
            "https://a.example/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn forms_and_queries_round_trip() {
        let body = form(&[("redirect_uri", "http://127.0.0.1:1/cb"), ("s", "a b+c")]);
        assert_eq!(
            body,
            "redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcb&s=a%20b%2Bc"
        );
        let back = query(&body);
        assert_eq!(back[0].1, "http://127.0.0.1:1/cb");
        assert_eq!(back[1].1, "a b+c");
        assert_eq!(query("a=%zz&b=%4")[0].1, "%zz");
    }
}
