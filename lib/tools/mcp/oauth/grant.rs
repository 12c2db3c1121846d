//! The token endpoint: a code exchanged (with its PKCE verifier) and a
//! refresh token used, both naming the resource (RFC 8707) and
//! authenticating as the client was registered.

use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axe_net::Client as Http;
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use super::register::Registration;
use super::url::{encode, form};
use super::{OAuthError, web};

/// What a token endpoint gave.
#[derive(Debug, Clone)]
pub struct Granted {
    pub access_token: String,
    pub refresh_token: Option<String>,
    /// Seconds since the epoch.
    pub expires_at: Option<u64>,
    pub scope: Option<String>,
}

/// Sends the grant `params` (the client's id or credentials added as its
/// registration says) to `endpoint`.
pub fn request(
    http: &Http,
    endpoint: &str,
    client: &Registration,
    params: &[(&str, &str)],
    deadline: Instant,
) -> Result<Granted, OAuthError> {
    let mut pairs: Vec<(&str, &str)> = params.to_vec();
    let mut basic = None;
    let secret = client.client_secret.as_deref();
    match (client.auth_method.as_str(), secret) {
        ("client_secret_basic", Some(secret)) => {
            // RFC 6749 section 2.3.1: each part form-encoded first.
            let pair = format!("{}:{}", encode(&client.client_id), encode(secret));
            basic = Some(format!("Basic {}", STANDARD.encode(pair)));
        }
        ("client_secret_post", Some(secret)) => {
            pairs.push(("client_id", &client.client_id));
            pairs.push(("client_secret", secret));
        }
        _ => pairs.push(("client_id", &client.client_id)),
    }
    let headers: Vec<(&str, &str)> = basic
        .iter()
        .map(|b| ("authorization", b.as_str()))
        .collect();
    let body = form(&pairs);
    let answer = web::post(
        http,
        endpoint,
        "application/x-www-form-urlencoded",
        &headers,
        body.as_bytes(),
        deadline,
    )?;
    if !answer.ok() {
        return Err(format!(
            "the token endpoint {endpoint} refused: {}",
            answer.refusal()
        )
        .into());
    }
    let json = &answer.json;
    let Some(access_token) = json["access_token"].as_str().filter(|t| !t.is_empty()) else {
        return Err(format!("the token endpoint {endpoint} gave no access_token").into());
    };
    let kind = json["token_type"].as_str().unwrap_or("Bearer");
    if !kind.eq_ignore_ascii_case("bearer") {
        return Err(format!(
            "the token endpoint {endpoint} gave a {} token; axe sends only bearer tokens",
            super::clean(kind)
        )
        .into());
    }
    let expires_at = json["expires_in"]
        .as_u64()
        .or_else(|| json["expires_in"].as_str().and_then(|s| s.parse().ok()))
        .map(|secs| now().saturating_add(secs));
    Ok(Granted {
        access_token: access_token.to_owned(),
        refresh_token: json["refresh_token"].as_str().map(str::to_owned),
        expires_at,
        scope: json["scope"].as_str().map(str::to_owned),
    })
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
