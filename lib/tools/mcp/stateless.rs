//! The stateless revision (2026-07-28) as a client speaks it: what
//! `server/discover` offers, what every request carries (`_meta` with the
//! version, our name and capabilities; over HTTP `MCP-Protocol-Version`,
//! `Mcp-Method` and `Mcp-Name`), which version to try again in after
//! -32022, and our answers when a server needs input before it can
//! answer (multi round-trip requests, SEP-2322).
//!
//! axe runs unattended: there is nobody to ask. So it declares no
//! client capabilities, declines an elicitation, lists no roots, and
//! refuses sampling (it does not lend the run's model to a server).

use serde_json::{Map, Value, json};

use super::STATELESS;
use super::error::McpError;
use super::params;

/// The longest `server/discover` is waited for before the handshake is
/// tried instead.
pub const PROBE: std::time::Duration = std::time::Duration::from_secs(10);

/// The most rounds of input one call may ask for.
pub const MAX_ROUNDS: usize = 8;

const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
const META_CLIENT: &str = "io.modelcontextprotocol/clientInfo";
const META_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// The newest stateless revision we speak among those a `server/discover`
/// result offers.
pub fn offered(result: &Value) -> Option<&'static str> {
    let offered: Vec<&str> = result["supportedVersions"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    STATELESS.iter().copied().find(|v| offered.contains(v))
}

/// `params` and `headers` of a request of `method` in revision `version`:
/// `_meta` filled in (what the caller put there kept), the standard
/// headers added.
pub fn dress(
    version: &str,
    method: &str,
    mut params: Value,
    headers: &[(String, String)],
) -> (Value, Vec<(String, String)>) {
    let mut own = vec![
        ("MCP-Protocol-Version".to_owned(), version.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    if let Some(name) = named(method, &params) {
        own.push(("Mcp-Name".to_owned(), params::encode(name)));
    }
    own.extend(headers.iter().cloned());
    if let Some(fields) = params.as_object_mut() {
        let meta = fields
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut() {
            meta.insert(META_VERSION.into(), json!(version));
            meta.insert(
                META_CLIENT.into(),
                json!({"name": "axe", "version": env!("CARGO_PKG_VERSION")}),
            );
            meta.insert(META_CAPABILITIES.into(), json!({}));
        }
    }
    (params, own)
}

/// What `Mcp-Name` names for `method`: the tool or prompt, or the
/// resource's URI.
fn named<'p>(method: &str, params: &'p Value) -> Option<&'p str> {
    match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    }
}

/// The revision to ask again in after a -32022 `error`: the newest of
/// those it says it supports that we speak.
pub fn retry_with(error: &Value) -> Option<&'static str> {
    let supported: Vec<&str> = error["data"]["supported"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    STATELESS.iter().copied().find(|v| supported.contains(v))
}

/// Our answer to each of a server's `inputRequests`, by the same keys.
pub fn answers(requests: &Value) -> Result<Value, McpError> {
    let mut out = Map::new();
    for (key, request) in requests.as_object().into_iter().flatten() {
        let answer = match request["method"].as_str().unwrap_or_default() {
            "elicitation/create" => json!({"action": "decline"}),
            "roots/list" => json!({"roots": []}),
            other => {
                return Err(format!(
                    "the server asked for {other:?} before answering, which axe does not offer"
                )
                .into());
            }
        };
        out.insert(key.clone(), answer);
    }
    Ok(Value::Object(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_carry_their_version_and_names() {
        let (params, headers) = dress(
            "2026-07-28",
            "tools/call",
            json!({"name": "my-tool", "arguments": {}, "_meta": {"progressToken": 1}}),
            &[("Mcp-Param-A".into(), "1".into())],
        );
        assert_eq!(params["_meta"]["progressToken"], 1);
        assert_eq!(params["_meta"][META_VERSION], "2026-07-28");
        assert_eq!(params["_meta"][META_CLIENT]["name"], "axe");
        assert_eq!(params["_meta"][META_CAPABILITIES], json!({}));
        let names: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "MCP-Protocol-Version",
                "Mcp-Method",
                "Mcp-Name",
                "Mcp-Param-A"
            ]
        );
        assert_eq!(headers[2].1, "my-tool");
        assert_eq!(
            retry_with(&json!({"data": {"supported": ["2025-11-25", "2026-07-28"]}})),
            Some("2026-07-28")
        );
        assert_eq!(
            retry_with(&json!({"data": {"supported": ["2025-11-25"]}})),
            None
        );
        assert_eq!(
            offered(&json!({"supportedVersions": ["2026-07-28"]})),
            Some("2026-07-28")
        );
        assert_eq!(offered(&json!({})), None);
    }

    #[test]
    fn input_is_declined_and_sampling_refused() {
        let asked = json!({
            "confirm": {"method": "elicitation/create", "params": {}},
            "where": {"method": "roots/list"},
        });
        assert_eq!(
            answers(&asked).unwrap(),
            json!({"confirm": {"action": "decline"}, "where": {"roots": []}})
        );
        let sampling = json!({"s": {"method": "sampling/createMessage"}});
        assert!(answers(&sampling).is_err());
    }
}
