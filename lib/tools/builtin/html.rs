//! HTML as the text a reader sees, as `url_fetch` returns it: scripts,
//! styles and comments dropped, every tag a space, the common entities
//! decoded, runs of whitespace one space (Go's `strings.Fields`).

/// The text of `html`.
pub fn text(html: &str) -> String {
    let mut out = String::with_capacity(html.len() / 2);
    let lower = html.to_ascii_lowercase();
    let mut i = 0;
    while let Some(lt) = html[i..].find('<').map(|n| i + n) {
        out.push_str(&decode(&html[i..lt]));
        out.push(' ');
        let rest = &lower[lt..];
        i = if rest.starts_with("<!--") {
            lower[lt..].find("-->").map_or(html.len(), |n| lt + n + 3)
        } else if let Some(tag) = ["script", "style"].iter().find(|t| opens(rest, t)) {
            let close = format!("</{tag}");
            lower[lt..].find(&close).map_or(html.len(), |n| {
                let at = lt + n;
                lower[at..].find('>').map_or(html.len(), |m| at + m + 1)
            })
        } else {
            lower[lt..].find('>').map_or(html.len(), |n| lt + n + 1)
        };
    }
    out.push_str(&decode(&html[i..]));
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Whether `rest` starts with the opening tag `tag` (`<script>`,
/// `<script src=..>`, not `<scripts>`).
fn opens(rest: &str, tag: &str) -> bool {
    rest[1..].starts_with(tag)
        && rest[1 + tag.len()..]
            .chars()
            .next()
            .is_none_or(|c| c == '>' || c == '/' || c.is_whitespace())
}

/// `text` with character references decoded; one it does not know stays.
fn decode(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('&') {
        return text.into();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        rest = &rest[amp..];
        // Bytes, not a slice of the text: the twelfth byte may fall inside
        // a character. A `;` found is a boundary.
        let end = rest.as_bytes()[..rest.len().min(12)]
            .iter()
            .position(|&b| b == b';');
        let decoded = end.and_then(|end| {
            let name = &rest[1..end];
            let c = match name {
                "amp" => Some('&'),
                "lt" => Some('<'),
                "gt" => Some('>'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                "nbsp" => Some(' '),
                _ => match name.strip_prefix('#') {
                    Some(n) => match n.strip_prefix(['x', 'X']) {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => n.parse().ok(),
                    }
                    .and_then(char::from_u32),
                    None => None,
                },
            };
            c.map(|c| (c, end))
        });
        match decoded {
            Some((c, end)) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out.into()
}

#[cfg(test)]
mod tests {
    #[test]
    fn page_to_text() {
        let page = "<html><head><title>T</title><style>p{x}</style><script type=x>var a='<p>';</script></head>\
                    <body><!-- hidden --><p>Fish &amp; chips&nbsp;&#8364;&#x41;</p><SCRIPT>evil()</SCRIPT>\n<scripts>kept</scripts></body></html>";
        assert_eq!(super::text(page), "T Fish & chips €A kept");
    }
}
