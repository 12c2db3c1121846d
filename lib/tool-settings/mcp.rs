//! `[[mcp_servers]]` in an agent file: which servers an agent's tools come
//! from, checked when the file loads (Go's messages where Go has them), and
//! `${VAR}` in headers and `env` expanded when the run starts them. The
//! client that talks to them is `axe_tools::mcp`'s.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize, Serializer};

/// One `[[mcp_servers]]` table.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct McpServer {
    /// Names the server in messages; unique in the file.
    pub name: String,
    /// `streamable-http`, `sse` or `stdio`.
    pub transport: String,
    /// The endpoint of `streamable-http`, the event stream of `sse`.
    pub url: String,
    /// Sent with every HTTP request; `${VAR}` expanded. Shown by name
    /// only: values are often keys.
    #[serde(serialize_with = "names_only")]
    pub headers: BTreeMap<String, String>,
    /// The program of `stdio`, found on `PATH`.
    pub command: String,
    pub args: Vec<String>,
    /// Added to the few variables a `stdio` server gets; `${VAR}` expanded.
    #[serde(serialize_with = "names_only")]
    pub env: BTreeMap<String, String>,
    /// Where a `stdio` server runs; relative to the workdir, which is the
    /// default.
    pub cwd: String,
    /// Whether the run fails when the server does not start or answer;
    /// absent means true. JSON shows the value in effect.
    #[serde(serialize_with = "required_in_effect")]
    pub required: Option<bool>,
    /// OAuth (`axe agents mcp-login`): a client id registered with the
    /// server's authorization server, used instead of registering one.
    pub oauth_client_id: String,
    /// Its secret, if it has one; `${VAR}` expanded. Shown as whether it
    /// is set.
    #[serde(serialize_with = "is_set")]
    pub oauth_client_secret: String,
    /// The URL of a client ID metadata document to use as the client id
    /// where the authorization server takes them.
    pub oauth_client_metadata_url: String,
}

impl McpServer {
    pub fn required(&self) -> bool {
        self.required.unwrap_or(true)
    }

    pub fn is_stdio(&self) -> bool {
        self.transport == STDIO
    }
}

pub const STDIO: &str = "stdio";
pub const STREAMABLE_HTTP: &str = "streamable-http";
pub const SSE: &str = "sse";

fn required_in_effect<S: Serializer>(required: &Option<bool>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(required.unwrap_or(true))
}

fn is_set<S: Serializer>(value: &str, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bool(!value.is_empty())
}

fn names_only<S: Serializer>(map: &BTreeMap<String, String>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(map.keys())
}

/// What is wrong with an agent's `[[mcp_servers]]`, in Go's words where
/// Go has them; `at` is `mcp_servers[i]`. Reported as an invalid agent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Invalid {
    #[error("{at}.name is required")]
    NoName { at: String },
    #[error("{at}.command is required")]
    NoCommand { at: String },
    #[error("{at}.url is required")]
    NoUrl { at: String },
    #[error("{at}.url is invalid: parse {url:?}: invalid URI for request")]
    BadUrl { at: String, url: String },
    #[error("{at}.url must use http or https scheme, got {scheme:?}")]
    Scheme { at: String, scheme: String },
    #[error("{at}.url must include a host")]
    NoHost { at: String },
    #[error("{at}.transport must be one of: {SSE}, {STREAMABLE_HTTP}, {STDIO}")]
    Transport { at: String },
    #[error("{at}.headers: {name:?} is not a header name")]
    HeaderName { at: String, name: String },
    #[error("mcp_servers names must be unique: {name:?}")]
    Duplicate { name: String },
}

/// The first problem of `servers`: its checks in Go's order for the HTTP
/// transports, `command` for `stdio`.
pub fn validate(servers: &[McpServer]) -> Result<(), Invalid> {
    for (i, server) in servers.iter().enumerate() {
        let at = format!("mcp_servers[{i}]");
        if server.name.trim().is_empty() {
            return Err(Invalid::NoName { at });
        }
        if server.is_stdio() {
            if server.command.trim().is_empty() {
                return Err(Invalid::NoCommand { at });
            }
        } else {
            check_url(&at, server.url.trim())?;
            if server.transport != SSE && server.transport != STREAMABLE_HTTP {
                return Err(Invalid::Transport { at });
            }
        }
        for name in server.headers.keys() {
            if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
                let name = name.clone();
                return Err(Invalid::HeaderName { at, name });
            }
        }
        if servers[..i].iter().any(|s| s.name == server.name) {
            let name = server.name.clone();
            return Err(Invalid::Duplicate { name });
        }
    }
    Ok(())
}

fn check_url(at: &str, url: &str) -> Result<(), Invalid> {
    let at = at.to_owned();
    if url.is_empty() {
        return Err(Invalid::NoUrl { at });
    }
    let Some((scheme, rest)) = url.split_once("://") else {
        let url = url.to_owned();
        return Err(Invalid::BadUrl { at, url });
    };
    if scheme != "http" && scheme != "https" {
        let scheme = scheme.to_owned();
        return Err(Invalid::Scheme { at, scheme });
    }
    if rest
        .split(['/', '?', '#'])
        .next()
        .unwrap_or_default()
        .is_empty()
    {
        return Err(Invalid::NoHost { at });
    }
    Ok(())
}

/// A `${NAME}` in an MCP server's headers or env whose variable is unset
/// or empty (Go's words).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("environment variable {name:?} is not set or empty")]
pub struct Unset {
    pub name: String,
}

/// `text` with every `${NAME}` replaced by the variable's value; a
/// variable that is unset or empty is an error naming it (Go's words).
/// A `$` not followed by `{NAME}` stays as written.
pub fn expand(text: &str, var: impl Fn(&str) -> Option<String>) -> Result<String, Unset> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let after = &rest[at + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        let name = &after[..name_len];
        let valid = !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit());
        if !valid || !after[name_len..].starts_with('}') {
            out.push_str("${");
            rest = after;
            continue;
        }
        match var(name).filter(|v| !v.is_empty()) {
            Some(value) => out.push_str(&value),
            None => {
                let name = name.to_owned();
                return Err(Unset { name });
            }
        }
        rest = &after[name_len + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(toml: &str) -> Result<(), String> {
        #[derive(Deserialize)]
        struct File {
            mcp_servers: Vec<McpServer>,
        }
        let file: File = toml::from_str(toml).unwrap();
        validate(&file.mcp_servers).map_err(|e| e.to_string())
    }

    #[test]
    fn go_messages_in_go_order() {
        let one = |body: &str| server(&format!("[[mcp_servers]]\n{body}"));
        assert_eq!(
            one("url = \"http://h\""),
            Err("mcp_servers[0].name is required".into())
        );
        assert_eq!(
            one("name = \"a\"\ntransport = \"sse\""),
            Err("mcp_servers[0].url is required".into())
        );
        assert_eq!(
            one("name = \"a\"\nurl = \"ftp://h\"\ntransport = \"sse\""),
            Err("mcp_servers[0].url must use http or https scheme, got \"ftp\"".into())
        );
        assert_eq!(
            one("name = \"a\"\nurl = \"http:///x\"\ntransport = \"sse\""),
            Err("mcp_servers[0].url must include a host".into())
        );
        assert_eq!(
            one("name = \"a\"\nurl = \"h\"\ntransport = \"sse\""),
            Err("mcp_servers[0].url is invalid: parse \"h\": invalid URI for request".into())
        );
        assert_eq!(
            one("name = \"a\"\nurl = \"http://h\"\ntransport = \"ws\""),
            Err("mcp_servers[0].transport must be one of: sse, streamable-http, stdio".into())
        );
        assert_eq!(
            one("name = \"a\"\ntransport = \"stdio\""),
            Err("mcp_servers[0].command is required".into())
        );
        assert_eq!(
            one(
                "name = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\nheaders = {\"a b\" = \"1\"}"
            ),
            Err("mcp_servers[0].headers: \"a b\" is not a header name".into())
        );
        assert_eq!(
            server(
                "[[mcp_servers]]\nname = \"a\"\ntransport = \"stdio\"\ncommand = \"x\"\n\
                 [[mcp_servers]]\nname = \"a\"\nurl = \"https://h/mcp\"\ntransport = \"streamable-http\""
            ),
            Err("mcp_servers names must be unique: \"a\"".into())
        );
    }

    #[test]
    fn variables_expand_or_are_named() {
        let var = |n: &str| (n == "T").then(|| "tok".to_owned());
        assert_eq!(expand("Bearer ${T}", var).unwrap(), "Bearer tok");
        assert_eq!(
            expand("$T ${ } ${1A} ${T", var).unwrap(),
            "$T ${ } ${1A} ${T"
        );
        let unset = expand("${T}-${NOPE}", var).unwrap_err();
        assert_eq!(unset.name, "NOPE");
        assert_eq!(
            unset.to_string(),
            "environment variable \"NOPE\" is not set or empty"
        );
    }
}
