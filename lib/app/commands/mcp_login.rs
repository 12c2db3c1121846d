//! `axe-agents mcp-login`: OAuth for one of an agent's remote MCP
//! servers, so that `axe-run` can use it unattended.

use std::io::Write;
use std::time::Duration;

use serde::Serialize;

use super::args::{AGENT, AGENTS_DIR, required_agent};
use axe_base::error::{Error, Result};
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_tool_settings::mcp::{McpServer, STREAMABLE_HTTP, expand};
use axe_tools::mcp::oauth::{self, Configured, OAuthError};

const SERVER: Arg = Arg {
    name: "SERVER",
    noun: "server name",
    help: "The name of one of the agent's [[mcp_servers]]",
    complete: Complete::Nothing,
    many: false,
};

const SERVER_REQUIRED: Rule = Rule::Required(Item::Arg(&SERVER));

pub const MCP_LOGIN: Command = Command {
    name: "axe-agents mcp-login",
    about: "Log in to an agent's remote MCP server with OAuth",
    usage: &["[OPTIONS] <AGENT> <SERVER>"],
    args: &[AGENT, SERVER],
    flags: &[AGENTS_DIR, NO_BROWSER, TIMEOUT, SCOPE, JSON],
    rules: &[super::args::AGENT_REQUIRED, SERVER_REQUIRED],
    description: "\
For a streamable-http server that answers 401: finds its authorization
server (the 401's WWW-Authenticate, then its protected resource metadata
and the authorization server's metadata), registers axe with it (the
entry's oauth_client_id and oauth_client_secret when set, else its
oauth_client_metadata_url where the server takes client ID metadata
documents, else dynamic registration), and runs the authorization-code
flow with PKCE: the authorization address is opened in $BROWSER, else
with xdg-open when there is a display, and printed on stderr either way;
the browser comes back to a listener on 127.0.0.1 at a port the system
picks. The tokens are written to <data>/mcp-oauth/<hash of the server's
URL>.json, mode 0600 in a 0700 directory, one login per server URL that
every agent naming that URL shares. axe-run sends the access token,
refreshes it when it has expired or is refused, and never asks anything;
running this again replaces the login. Tokens are never printed, logged
or kept anywhere else. A failed login exits with {exit:API}; a token
file that cannot be written, {exit:config}.",
    run: Run::Action(mcp_login),
};

const NO_BROWSER: Flag = Flag::switch(
    "no-browser",
    "Only print the authorization address on stderr (open it on any machine whose browser can reach this one's 127.0.0.1, or fetch it)",
);

const TIMEOUT: Flag = Flag::with_value(
    "timeout",
    "SECONDS",
    "Give up when the browser has not come back after this long [default: 300]",
)
.number();

const SCOPE: Flag = Flag::with_value(
    "scope",
    "SCOPES",
    "Ask for these scopes (space-separated), as a server's 403 insufficient_scope names them [default: what its 401 or its metadata names]",
);

const JSON: Flag = Flag::switch(
    "json",
    "Print {agent, server, server_url, resource, issuer, client_id, registration, scope, expires_at, refreshable, token_file} as JSON",
);

#[derive(Serialize)]
struct Done<'a> {
    agent: &'a str,
    server: &'a str,
    #[serde(flatten)]
    outcome: &'a oauth::Outcome,
}

fn mcp_login(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let agents = super::args::agents(m)?;
    let name = required_agent(m)?;
    let wanted = m
        .args()
        .get(1)
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| Error::Usage(SERVER_REQUIRED.message()))?;
    let cfg = agents.load(name)?;
    let server = find(&cfg.mcp_servers, name, &wanted)?;
    let wait = match m.number::<f64>(&TIMEOUT)? {
        Some(secs) if secs > 0.0 && secs <= 86_400.0 => Duration::from_secs_f64(secs),
        Some(_) => {
            return Err(Error::Usage(
                "--timeout must be between 0 and 86400 seconds".into(),
            ));
        }
        None => Duration::from_secs(300),
    };
    let var = |n: &str| std::env::var(n).ok();
    let config = |why: String| Error::Config(format!("MCP server \"{wanted}\": {why}"));
    let headers = server
        .headers
        .iter()
        .map(|(k, v)| {
            Ok((
                k.clone(),
                expand(v, var).map_err(|e| config(e.to_string()))?,
            ))
        })
        .collect::<Result<Vec<_>>>()?;
    let text = |s: &str| (!s.trim().is_empty()).then(|| s.trim().to_owned());
    let secret = match text(&server.oauth_client_secret) {
        Some(s) => Some(expand(&s, var).map_err(|e| config(e.to_string()))?),
        None => None,
    };
    let login = oauth::Login {
        server_url: server.url.trim(),
        headers: &headers,
        client: Configured {
            client_id: text(&server.oauth_client_id),
            client_secret: secret,
            metadata_url: text(&server.oauth_client_metadata_url),
        },
        data: agents.dirs().data()?,
        wait,
        scope: m
            .value(&SCOPE)
            .map(|s| s.to_string_lossy().trim().to_owned())
            .filter(|s| !s.is_empty()),
    };
    let browse = !m.flag(&NO_BROWSER);
    let open = |address: &str| {
        axe_base::stderr::note(format_args!(
            "To log in to MCP server \"{wanted}\", open this address:"
        ));
        axe_base::stderr::note(format_args!("{address}"));
        if browse {
            open_browser(address);
        }
    };
    let http = axe_net::Client::from_env();
    let outcome = oauth::login(&http, &login, &open).map_err(|why| {
        let line = format!("failed to log in to MCP server \"{wanted}\": {why}");
        match why {
            OAuthError::File { .. } => Error::caused(Error::Config(line), why),
            OAuthError::Said(_) => Error::caused(Error::ToolServer(line), why),
        }
    })?;
    if m.flag(&JSON) {
        let done = Done {
            agent: name,
            server: &wanted,
            outcome: &outcome,
        };
        return axe_cli::write_json(out, &done);
    }
    writeln!(
        out,
        "Logged in to MCP server \"{wanted}\" ({}); its tokens are in {}",
        outcome.server_url, outcome.token_file
    )
    .map_err(Error::Output)
}

/// The agent's server `wanted`, when it is one OAuth is for.
fn find<'a>(servers: &'a [McpServer], agent: &str, wanted: &str) -> Result<&'a McpServer> {
    let Some(server) = servers.iter().find(|s| s.name == wanted) else {
        let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
        return Err(Error::Usage(match names.is_empty() {
            true => format!("agent {agent} has no [[mcp_servers]]"),
            false => format!(
                "agent {agent} has no MCP server \"{wanted}\" (it has: {})",
                names.join(", ")
            ),
        }));
    };
    if server.transport != STREAMABLE_HTTP {
        return Err(Error::Usage(format!(
            "MCP server \"{wanted}\" is {}; OAuth login is for streamable-http servers",
            server.transport
        )));
    }
    Ok(server)
}

/// `$BROWSER ADDRESS`, else `xdg-open ADDRESS` where there is a display;
/// not waited for, and its failure is only a note: the address is
/// printed already.
fn open_browser(address: &str) {
    let display = ["DISPLAY", "WAYLAND_DISPLAY"]
        .iter()
        .any(|v| std::env::var_os(v).is_some_and(|d| !d.is_empty()));
    let program = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => b,
        _ if display => "xdg-open".to_owned(),
        _ => return,
    };
    let started = std::process::Command::new(&program)
        .arg(address)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
    match started {
        // Reaped when it ends, whenever that is.
        Ok(mut child) => {
            std::thread::spawn(move || child.wait());
        }
        Err(e) => axe_base::stderr::note(format_args!(
            "Note: could not start {program}: {}",
            axe_base::error::describe_io(&e)
        )),
    }
}
