//! Finding a server's authorization server: the challenge of its 401
//! (RFC 6750 section 3, with RFC 9728's `resource_metadata`), its
//! protected resource metadata (RFC 9728), and the authorization server's
//! own metadata (RFC 8414, or OpenID Connect discovery), each at the
//! addresses the MCP authorization spec lists, in its order.

use std::time::Instant;

use axe_net::Client;
use serde_json::Value;

use super::OAuthError;
use super::url::{split, well_known};
use super::web;

/// What a `WWW-Authenticate: Bearer ...` asked for.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Challenge {
    pub resource_metadata: Option<String>,
    pub scope: Option<String>,
}

/// The Bearer challenge's parameters; a header without one is empty.
pub fn challenge(header: &str) -> Challenge {
    let mut out = Challenge::default();
    let Some(at) = header.to_ascii_lowercase().find("bearer") else {
        return out;
    };
    let mut rest = &header[at + "bearer".len()..];
    loop {
        rest = rest.trim_start_matches([' ', ',', '\t']);
        let Some(eq) = rest.find('=') else { break };
        let key = rest[..eq].trim().to_ascii_lowercase();
        let after = rest[eq + 1..].trim_start();
        let (value, next) = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => {
                            if let Some((_, c)) = chars.next() {
                                value.push(c);
                            }
                        }
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end.min(quoted.len())..])
            }
            None => {
                let end = after.find([',', ' ']).unwrap_or(after.len());
                (after[..end].to_owned(), &after[end..])
            }
        };
        match key.as_str() {
            "resource_metadata" => out.resource_metadata = Some(value),
            "scope" => out.scope = Some(value),
            _ => {}
        }
        rest = next;
    }
    out
}

/// A server's protected resource metadata, what of it a login needs.
#[derive(Debug, Clone)]
pub struct Resource {
    /// The resource identifier, exactly as published: the `resource`
    /// parameter of every request.
    pub resource: String,
    pub authorization_server: String,
    pub scopes: Vec<String>,
}

/// The metadata of the server at `server_url`: at the address the
/// challenge names, else at the path-aware and then the root well-known
/// address. None when none is published (a 2025-03-26 server). Its
/// `resource` must be the server's URL or a parent of it on the same
/// origin: a document naming another resource is refused.
pub fn resource(
    client: &Client,
    server_url: &str,
    challenge: &Challenge,
    deadline: Instant,
) -> Result<Option<Resource>, OAuthError> {
    let mut tries = Vec::new();
    if let Some(url) = &challenge.resource_metadata {
        tries.push(url.clone());
    }
    if let Some(url) = well_known(server_url, "oauth-protected-resource") {
        tries.push(url);
    }
    if let Some((origin, _)) = split(server_url) {
        tries.push(format!("{origin}/.well-known/oauth-protected-resource"));
    }
    tries.dedup();
    for url in tries {
        let answer = web::get(client, &url, deadline)?;
        if !answer.ok() || !answer.json.is_object() {
            continue;
        }
        let doc = &answer.json;
        let resource = doc["resource"].as_str().unwrap_or(server_url).to_owned();
        if !covers(&resource, server_url) {
            return Err(format!(
                "the protected resource metadata at {url} is for {}, not {server_url}; refused",
                super::clean(&resource)
            )
            .into());
        }
        let Some(authorization_server) = doc["authorization_servers"]
            .as_array()
            .and_then(|a| a.iter().find_map(Value::as_str))
        else {
            return Err(format!(
                "the protected resource metadata at {url} names no authorization server"
            )
            .into());
        };
        return Ok(Some(Resource {
            resource,
            authorization_server: authorization_server.to_owned(),
            scopes: strings(&doc["scopes_supported"]),
        }));
    }
    Ok(None)
}

/// Whether `resource` is `server_url` or a parent of it: same scheme and
/// host (any case), its path a whole-segment prefix of the server's.
fn covers(resource: &str, server_url: &str) -> bool {
    let (Some((r_origin, r_path)), Some((s_origin, s_path))) = (split(resource), split(server_url))
    else {
        return false;
    };
    r_origin.eq_ignore_ascii_case(s_origin)
        && (r_path.is_empty()
            || s_path == r_path
            || s_path
                .strip_prefix(r_path)
                .is_some_and(|rest| rest.starts_with('/')))
}

/// What a login needs of an authorization server's metadata.
#[derive(Debug, Clone, Default)]
pub struct AuthServer {
    pub issuer: String,
    pub authorization_endpoint: String,
    pub token_endpoint: String,
    pub registration_endpoint: Option<String>,
    pub scopes: Vec<String>,
    pub auth_methods: Vec<String>,
    pub client_id_metadata_documents: bool,
    /// RFC 9207: the redirect carries `iss`, which must then be there.
    pub iss_in_redirect: bool,
}

/// The metadata of the authorization server `issuer`, from the first
/// address that has it; its `issuer` must be `issuer` exactly (RFC 8414
/// section 3.3), or it is refused. None when no address has any.
pub fn auth_server(
    client: &Client,
    issuer: &str,
    deadline: Instant,
) -> Result<Option<AuthServer>, OAuthError> {
    let Some((origin, path)) = split(issuer) else {
        return Err(format!(
            "the authorization server {} is not an http(s) URL",
            super::clean(issuer)
        )
        .into());
    };
    let mut tries = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        tries.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    for url in tries {
        let answer = web::get(client, &url, deadline)?;
        if !answer.ok() || !answer.json.is_object() {
            continue;
        }
        let doc = &answer.json;
        let said = doc["issuer"].as_str().unwrap_or_default();
        if said != issuer {
            return Err(format!(
                "the authorization server metadata at {url} names issuer {:?}, not {issuer:?}; refused",
                super::clean(said)
            )
            .into());
        }
        let field = |k: &str| doc[k].as_str().map(str::to_owned);
        let (Some(authorization_endpoint), Some(token_endpoint)) =
            (field("authorization_endpoint"), field("token_endpoint"))
        else {
            return Err(
                format!("the authorization server metadata at {url} lacks its endpoints").into(),
            );
        };
        let challenges = strings(&doc["code_challenge_methods_supported"]);
        if !challenges.is_empty() && !challenges.iter().any(|m| m == "S256") {
            return Err(
                format!("the authorization server {issuer} does not offer PKCE with S256").into(),
            );
        }
        return Ok(Some(AuthServer {
            issuer: issuer.to_owned(),
            authorization_endpoint,
            token_endpoint,
            registration_endpoint: field("registration_endpoint"),
            scopes: strings(&doc["scopes_supported"]),
            auth_methods: strings(&doc["token_endpoint_auth_methods_supported"]),
            client_id_metadata_documents: doc["client_id_metadata_document_supported"] == true,
            iss_in_redirect: doc["authorization_response_iss_parameter_supported"] == true,
        }));
    }
    Ok(None)
}

/// The 2025-03-26 fallback where no metadata is published: the endpoints
/// at the server's origin.
pub fn fallback(server_url: &str) -> Option<AuthServer> {
    let (origin, _) = split(server_url)?;
    Some(AuthServer {
        issuer: origin.to_owned(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        ..AuthServer::default()
    })
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_owned)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bearer_challenges_are_read() {
        let c = challenge(
            r#"Bearer realm="x", error="insufficient_scope", scope="a b", resource_metadata="https://h/.well-known/oauth-protected-resource/mcp""#,
        );
        assert_eq!(c.scope.as_deref(), Some("a b"));
        assert_eq!(
            c.resource_metadata.as_deref(),
            Some("https://h/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(challenge("Basic realm=x"), Challenge::default());
        assert_eq!(challenge("Bearer scope=one").scope.as_deref(), Some("one"));
        assert_eq!(
            challenge("Bearer scope=\"unterminated").scope.as_deref(),
            Some("unterminated")
        );
    }

    #[test]
    fn a_resource_covers_its_server_and_what_is_below() {
        assert!(covers("http://localhost:1/mcp", "http://localhost:1/mcp"));
        assert!(covers("http://localhost:1", "http://localhost:1/mcp"));
        assert!(covers("http://LOCALHOST:1/", "http://localhost:1/mcp/"));
        assert!(!covers(
            "https://evil.example.com/mcp",
            "http://localhost:1/mcp"
        ));
        assert!(!covers("http://localhost:1/mc", "http://localhost:1/mcp"));
        assert!(!covers(
            "http://localhost:1/mcp/x",
            "http://localhost:1/mcp"
        ));
    }
}
