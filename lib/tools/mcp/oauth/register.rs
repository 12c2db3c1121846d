//! Which client axe is to the authorization server: one configured
//! (`oauth_client_id`, with its secret if it has one), a client ID
//! metadata document's URL (`oauth_client_metadata_url`) where the server
//! takes them, else one registered now (RFC 7591) as a native app with a
//! loopback redirect.

use std::time::Instant;

use axe_net::Client as Http;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::discover::AuthServer;
use super::{OAuthError, web};

/// A client: its id, its secret if it has one, and how it proves itself
/// at the token endpoint (`none`, `client_secret_basic`,
/// `client_secret_post`).
/// No `Debug`: it holds the secret.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Registration {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    pub auth_method: String,
}

/// What the server entry configures. No `Debug`: it holds the secret.
#[derive(Clone, Default)]
pub struct Configured {
    pub client_id: Option<String>,
    pub client_secret: Option<String>,
    pub metadata_url: Option<String>,
}

/// How it was decided: what `--json` reports.
pub fn register(
    http: &Http,
    server: &AuthServer,
    configured: &Configured,
    redirect_uri: &str,
    deadline: Instant,
) -> Result<(Registration, &'static str), OAuthError> {
    if let Some(client_id) = &configured.client_id {
        let secret = configured.client_secret.clone();
        let auth_method = method_for(secret.is_some(), &server.auth_methods);
        let registration = Registration {
            client_id: client_id.clone(),
            client_secret: secret,
            auth_method,
        };
        return Ok((registration, "configured"));
    }
    if let Some(url) = configured
        .metadata_url
        .as_ref()
        .filter(|_| server.client_id_metadata_documents)
    {
        let registration = Registration {
            client_id: url.clone(),
            client_secret: None,
            auth_method: "none".into(),
        };
        return Ok((registration, "metadata-document"));
    }
    let Some(endpoint) = &server.registration_endpoint else {
        return Err(format!(
            "the authorization server {} takes no dynamic registration; \
             set oauth_client_id (and oauth_client_secret) in the server's entry",
            server.issuer
        )
        .into());
    };
    let method =
        match server.auth_methods.iter().any(|m| m == "none") || server.auth_methods.is_empty() {
            true => "none",
            false => server.auth_methods.first().map_or("none", String::as_str),
        };
    let body = json!({
        "client_name": "axe",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    let answer = web::post(
        http,
        endpoint,
        "application/json",
        &[],
        body.to_string().as_bytes(),
        deadline,
    )?;
    if !answer.ok() {
        return Err(format!("registering with {endpoint} failed: {}", answer.refusal()).into());
    }
    let Some(client_id) = answer.json["client_id"].as_str().filter(|c| !c.is_empty()) else {
        return Err(format!("registering with {endpoint} gave no client_id").into());
    };
    let secret = answer.json["client_secret"].as_str().map(str::to_owned);
    let auth_method = match answer.json["token_endpoint_auth_method"].as_str() {
        Some(m) => m.to_owned(),
        None => method_for(secret.is_some(), &server.auth_methods),
    };
    let registration = Registration {
        client_id: client_id.to_owned(),
        client_secret: secret,
        auth_method,
    };
    Ok((registration, "dynamic"))
}

/// How a client with (or without) a secret authenticates, of the methods
/// the server lists: basic first, RFC 8414's default.
fn method_for(has_secret: bool, offered: &[String]) -> String {
    if !has_secret {
        return "none".into();
    }
    let offers = |m: &str| offered.iter().any(|o| o == m);
    match offers("client_secret_post") && !offers("client_secret_basic") {
        true => "client_secret_post".into(),
        false => "client_secret_basic".into(),
    }
}
