//! Tool arguments mirrored into HTTP headers (2026-07-28, SEP-2243): a
//! property of a tool's input schema marked `x-mcp-header: NAME` goes, on
//! each call, as `Mcp-Param-NAME` beside the body, so that gateways can
//! route without reading it. A tool whose marks are malformed (empty, not
//! a header token, on a property that is not a string, integer or
//! boolean, or named twice regardless of case) is not offered: the other
//! tools of the server still are.

use serde_json::{Map, Value};

/// A tool's mirrored properties: (property, header name).
pub type Mirrored = Vec<(String, String)>;

/// What `schema` asks to mirror, or why the tool is refused.
pub fn mirrored(schema: &Value) -> Result<Mirrored, String> {
    let mut found: Mirrored = Vec::new();
    let Some(properties) = schema["properties"].as_object() else {
        return Ok(found);
    };
    for (property, spec) in properties {
        let Some(mark) = spec.get("x-mcp-header") else {
            continue;
        };
        let Some(name) = mark.as_str().filter(|n| !n.is_empty()) else {
            return Err(format!("{property}: x-mcp-header is not a header name"));
        };
        if !name.bytes().all(is_token) {
            return Err(format!(
                "{property}: x-mcp-header {name:?} is not a header name"
            ));
        }
        let kind = spec["type"].as_str().unwrap_or_default();
        if !matches!(kind, "string" | "integer" | "boolean") {
            return Err(format!(
                "{property}: x-mcp-header on a property that is not a string, integer or boolean"
            ));
        }
        if found.iter().any(|(_, n)| n.eq_ignore_ascii_case(name)) {
            return Err(format!("x-mcp-header {name:?} names two properties"));
        }
        found.push((property.clone(), name.to_owned()));
    }
    Ok(found)
}

/// An HTTP token character (RFC 9110): what a header name is made of.
fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// The `Mcp-Param-*` headers of a call with `arguments`: a null or
/// absent argument has none.
pub fn headers(mirrored: &Mirrored, arguments: &Map<String, Value>) -> Vec<(String, String)> {
    mirrored
        .iter()
        .filter_map(|(property, name)| {
            let value = match arguments.get(property)? {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => return None,
            };
            Some((format!("Mcp-Param-{name}"), encode(&value)))
        })
        .collect()
}

/// A header value as SEP-2243 sends it: as it is when it is visible
/// ASCII and spaces with none at either end, else
/// `=?base64?…?=` of its UTF-8.
pub fn encode(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b)) && value.trim() == value;
    match plain {
        true => value.to_owned(),
        false => format!("=?base64?{}?=", base64(value.as_bytes())),
    }
}

fn base64(data: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            match i <= chunk.len() {
                true => out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize])),
                false => out.push('='),
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn marked_arguments_become_headers_encoded_when_unsafe() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "on": {"type": "boolean", "x-mcp-header": "On"},
            "gone": {"type": "boolean", "x-mcp-header": "Gone"},
            "query": {"type": "string"},
        }});
        let mirrored = mirrored(&schema).unwrap();
        let args = json!({"region": " padded", "n": 42, "on": false, "gone": null, "query": "q"});
        let mut got = headers(&mirrored, args.as_object().unwrap());
        got.sort();
        assert_eq!(
            got,
            [
                ("Mcp-Param-N".to_owned(), "42".to_owned()),
                ("Mcp-Param-On".to_owned(), "false".to_owned()),
                (
                    "Mcp-Param-Region".to_owned(),
                    "=?base64?IHBhZGRlZA==?=".to_owned()
                ),
            ]
        );
        assert_eq!(encode("us west 1"), "us west 1");
        assert_eq!(encode(""), "");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode("\tx"), "=?base64?CXg=?=");
    }

    #[test]
    fn malformed_marks_refuse_the_tool() {
        for bad in [
            json!({"v": {"type": "string", "x-mcp-header": ""}}),
            json!({"v": {"type": "object", "x-mcp-header": "V"}}),
            json!({"v": {"type": "number", "x-mcp-header": "V"}}),
            json!({"v": {"type": "string", "x-mcp-header": "My V"}}),
            json!({"v": {"type": "string", "x-mcp-header": "A:B"}}),
            json!({"v": {"type": "string", "x-mcp-header": "Région"}}),
            json!({"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}),
        ] {
            assert!(mirrored(&json!({"properties": bad})).is_err(), "{bad}");
        }
        assert_eq!(mirrored(&json!({})).unwrap(), Vec::new());
    }
}
