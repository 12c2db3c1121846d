//! `axe agents mcp-login`'s flow, from the server's 401 to the stored
//! tokens.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use axe_net::Client as Http;
use serde::Serialize;
use serde_json::json;

use super::discover::{self, AuthServer, Challenge};
use super::register::{self, Configured};
use super::tokens::{self, Stored};
use super::url::form;
use super::{OAuthError, grant, pkce, redirect, web};

/// One login to make.
pub struct Login<'a> {
    pub server_url: &'a str,
    /// The entry's own headers, sent with the first request as a run
    /// sends them.
    pub headers: &'a [(String, String)],
    pub client: Configured,
    /// axe's data directory, where the token file goes.
    pub data: PathBuf,
    /// How long the browser has to come back.
    pub wait: Duration,
    /// The scopes to ask for, when the user names them (`--scope`, for
    /// a 403 `insufficient_scope`'s): they replace what the server's 401
    /// or metadata name.
    pub scope: Option<String>,
}

/// What is done with the authorization URL: opened in a browser, shown,
/// or both.
pub type Opener<'a> = &'a dyn Fn(&str);

/// What a login came to, for `--json` and the summary line. No secret.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub server_url: String,
    pub resource: String,
    pub issuer: String,
    pub client_id: String,
    /// `configured`, `metadata-document` or `dynamic`.
    pub registration: &'static str,
    pub scope: Option<String>,
    pub expires_at: Option<u64>,
    pub refreshable: bool,
    pub token_file: String,
}

/// Each network step's bound.
const STEP: Duration = Duration::from_secs(30);

pub fn login(http: &Http, login: &Login, open: Opener) -> Result<Outcome, OAuthError> {
    let url = login.server_url.trim();
    let step = || Instant::now() + STEP;
    let refused = probe(http, url, login.headers, step())?;
    let challenge = refused.clone().unwrap_or_default();
    let found = discover::resource(http, url, &challenge, step())?;
    let (resource, server) = match &found {
        Some(found) => {
            let server = discover::auth_server(http, &found.authorization_server, step())?
                .ok_or_else(|| {
                    format!(
                        "the authorization server {} publishes no metadata",
                        super::clean(&found.authorization_server)
                    )
                })?;
            (found.resource.clone(), server)
        }
        // 2025-03-26: the server is its own authorization server.
        None => {
            let origin = super::url::split(url).map(|(o, _)| o).unwrap_or(url);
            let server = match discover::auth_server(http, origin, step())? {
                Some(server) => server,
                None if refused.is_some() => {
                    discover::fallback(url).ok_or("the server's URL is not http(s)")?
                }
                None => {
                    return Err(format!(
                        "{url} let every request through and publishes no OAuth metadata: \
                         it asks for no login"
                    )
                    .into());
                }
            };
            (url.to_owned(), server)
        }
    };
    secure("the server", url)?;
    secure("the authorization endpoint", &server.authorization_endpoint)?;
    secure("the token endpoint", &server.token_endpoint)?;
    if let Some(endpoint) = &server.registration_endpoint {
        secure("the registration endpoint", endpoint)?;
    }
    let listener = redirect::Listener::bind()?;
    let (client, registration) =
        register::register(http, &server, &login.client, &listener.redirect_uri, step())?;
    let asked = Challenge {
        scope: login.scope.clone().or(challenge.scope.clone()),
        ..challenge.clone()
    };
    let scope = scope(&asked, found.as_ref().map(|f| &f.scopes[..]), &server);
    let verifier = pkce::random_word()?;
    let state = pkce::random_word()?;
    let mut params = vec![
        ("response_type", "code"),
        ("client_id", client.client_id.as_str()),
        ("redirect_uri", listener.redirect_uri.as_str()),
        ("code_challenge_method", "S256"),
        ("state", state.as_str()),
        ("resource", resource.as_str()),
    ];
    let code_challenge = pkce::challenge(&verifier);
    params.push(("code_challenge", &code_challenge));
    if let Some(scope) = &scope {
        params.push(("scope", scope));
    }
    let sep = match server.authorization_endpoint.contains('?') {
        true => '&',
        false => '?',
    };
    let address = format!("{}{sep}{}", server.authorization_endpoint, form(&params));
    open(&address);
    let answer = listener.wait(Instant::now() + login.wait)?;
    let code = check_redirect(&answer, &state, &server)?;
    let granted = grant::request(
        http,
        &server.token_endpoint,
        &client,
        &[
            ("grant_type", "authorization_code"),
            ("code", &code),
            ("redirect_uri", &listener.redirect_uri),
            ("code_verifier", &verifier),
            ("resource", &resource),
        ],
        step(),
    )?;
    let file = tokens::token_file(&login.data, url);
    let stored = Stored {
        server_url: url.to_owned(),
        resource: resource.clone(),
        issuer: server.issuer.clone(),
        token_endpoint: server.token_endpoint.clone(),
        client: client.clone(),
        access_token: granted.access_token,
        refresh_token: granted.refresh_token,
        expires_at: granted.expires_at,
        scope: granted.scope.or(scope),
    };
    tokens::save(&file, &stored)?;
    Ok(Outcome {
        server_url: url.to_owned(),
        resource,
        issuer: server.issuer,
        client_id: client.client_id,
        registration,
        scope: stored.scope,
        expires_at: stored.expires_at,
        refreshable: stored.refresh_token.is_some(),
        token_file: file.to_string_lossy().into_owned(),
    })
}

/// `url` when it is https, or plain http to this machine: OAuth's
/// secrets never cross a network in the clear (OAuth 2.1, section 1.5).
fn secure(what: &str, url: &str) -> Result<(), OAuthError> {
    let host = match url.split_once("://") {
        Some(("https", _)) => return Ok(()),
        Some(("http", rest)) => rest.split(['/', '?', '#']).next().unwrap_or_default(),
        _ => "",
    };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    let loopback = name.eq_ignore_ascii_case("localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    match loopback {
        true => Ok(()),
        false => Err(format!(
            "{what} {} is not https; refused (plain http only to this machine)",
            super::clean(url)
        )
        .into()),
    }
}

/// The requests a run starts with, sent as a run sends them, until one
/// is refused: the challenge of its 401 (empty without a
/// `WWW-Authenticate`) or of its 403 with one; None when all were let
/// through. A server may let `initialize` through and want a login
/// only for what comes after, so `tools/list` follows in its session.
fn probe(
    http: &Http,
    url: &str,
    headers: &[(String, String)],
    deadline: Instant,
) -> Result<Option<Challenge>, OAuthError> {
    let version = crate::mcp::VERSIONS[0];
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "axe", "version": env!("CARGO_PKG_VERSION")},
        },
    });
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}});
    let mut session: Option<String> = None;
    for message in [initialize, initialized, list] {
        let mut all: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .chain([("accept", "application/json, text/event-stream")])
            .collect();
        if let Some(id) = &session {
            all.extend([
                ("mcp-session-id", id.as_str()),
                ("mcp-protocol-version", version),
            ]);
        }
        let answer = web::post(
            http,
            url,
            "application/json",
            &all,
            message.to_string().as_bytes(),
            deadline,
        )?;
        match (&answer.www_authenticate, answer.status) {
            (Some(h), 401 | 403) => return Ok(Some(discover::challenge(h))),
            (None, 401) => return Ok(Some(Challenge::default())),
            _ => {}
        }
        if !answer.ok() {
            break;
        }
        session = session.or(answer.session_id);
    }
    Ok(None)
}

/// The scope to ask for (the MCP spec's order): the challenge's, else
/// every scope the resource's metadata lists, else none; with
/// `offline_access` added where the authorization server offers it, for a
/// refresh token.
fn scope(challenge: &Challenge, listed: Option<&[String]>, server: &AuthServer) -> Option<String> {
    let mut scopes: Vec<String> = match (&challenge.scope, listed) {
        (Some(s), _) => s.split_whitespace().map(str::to_owned).collect(),
        (None, Some(listed)) => listed.to_vec(),
        (None, None) => Vec::new(),
    };
    if !scopes.is_empty()
        && server.scopes.iter().any(|s| s == "offline_access")
        && !scopes.iter().any(|s| s == "offline_access")
    {
        scopes.push("offline_access".into());
    }
    (!scopes.is_empty()).then(|| scopes.join(" "))
}

/// The code of the redirect's answer, once its `state` is ours and its
/// `iss` (RFC 9207) is the server's: compared as strings, required where
/// the server says it sends it, and refused when it differs whether it
/// said so or not.
fn check_redirect(
    answer: &[(String, String)],
    state: &str,
    server: &AuthServer,
) -> Result<String, OAuthError> {
    let get = |k: &str| {
        answer
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    if get("state") != Some(state) {
        return Err("the redirect's state is not the login's; refused".into());
    }
    match get("iss") {
        Some(iss) if iss != server.issuer => {
            return Err(format!(
                "the redirect names issuer {:?}, not {:?}; refused",
                super::clean(iss),
                server.issuer
            )
            .into());
        }
        None if server.iss_in_redirect => {
            return Err(
                "the redirect has no iss, which its authorization server promised; refused".into(),
            );
        }
        _ => {}
    }
    if let Some(error) = get("error") {
        let described = get("error_description").map(super::clean);
        return Err(match described {
            Some(d) => format!("the authorization server said {}: {d}", super::clean(error)),
            None => format!("the authorization server said {}", super::clean(error)),
        }
        .into());
    }
    get("code")
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| "the redirect has no code".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_go_over_https_or_stay_on_this_machine() {
        for ok in [
            "https://as.example.com/token",
            "http://localhost:8/t",
            "http://127.0.0.1/t",
            "http://[::1]:9/t",
        ] {
            assert!(secure("x", ok).is_ok(), "{ok}");
        }
        let e = secure("the token endpoint", "http://as.example.com/token").unwrap_err();
        assert_eq!(
            e.to_string(),
            "the token endpoint http://as.example.com/token is not https; refused (plain http only to this machine)"
        );
        assert!(secure("x", "http://localhost.evil.com/t").is_err());
        assert!(secure("x", "ftp://localhost/t").is_err());
    }
}
