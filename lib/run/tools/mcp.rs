//! MCP servers as a source of a conversation's tools: the agent's
//! `[[mcp_servers]]` started (or connected to) when its conversation
//! starts, as many at once as the run's pool spares, their tools offered
//! beside the others under their own names (listed once, then), each call
//! routed to its server within the run's deadline, and every server
//! stopped when the conversation ends, however it ends (dropping
//! [`Servers`] closes them).

use serde_json::Value;

use axe_agent::McpServer;
use std::sync::Arc;

use crate::session::Session;
use axe_base::error::{Error, Result};
use axe_base::report::Report;
use axe_llm::{Deadline, ToolCall, ToolDef};
use axe_tool_settings::mcp::{STREAMABLE_HTTP, Unset, expand};
use axe_tools::mcp::{Client, McpError, Resolved, Tool, oauth};
use axe_tools::{Offered, Reply, ToolError, ToolSource};

/// The running servers of one conversation and the tools they offer.
pub struct Servers {
    clients: Vec<Client>,
    /// Each tool as the model is offered it (the server's own name,
    /// description and input schema), checked against the same schema
    /// open to arguments it does not name unless it says
    /// `additionalProperties: false`.
    offered: Vec<Offered>,
    /// The client of each tool offered.
    client_of: Vec<usize>,
    /// When calls must be answered: the conversation's deadline.
    deadline: Deadline,
}

/// What starting one server came to.
type Started = std::result::Result<(Client, Vec<Tool>), McpError>;

impl Servers {
    /// Starts `servers` for an agent in `workdir`; `taken` are the names of
    /// the conversation's other tools, which keep them. An unset `${VAR}`
    /// and a tool name on two servers are config errors; a required server
    /// that fails is an error naming it, one that is not a warning. They
    /// start as many at once as `session`'s pool spares, and what they
    /// have to say goes to its reporter.
    pub fn start(
        servers: &[McpServer],
        agent: &str,
        workdir: &std::path::Path,
        taken: &[String],
        deadline: Deadline,
        session: &Session,
    ) -> Result<Servers> {
        let (verbose, pool, report) = (session.verbose, &session.pool, session.report());
        // A login's tokens are in the data directory; without one there
        // is no login to use.
        let data = session.agents.dirs().data().ok();
        let resolved = servers
            .iter()
            .map(|s| resolve(s, agent, data.as_deref(), &session.client))
            .collect::<Result<Vec<Resolved>>>()?;
        if verbose {
            servers.iter().for_each(|s| say_starting(report, s));
        }
        let started: Vec<Started> = pool.each(
            &resolved,
            |r| {
                start_one(
                    r.clone(),
                    workdir,
                    deadline,
                    verbose.then(|| session.reporter()),
                    &session.client,
                )
            },
            |_| Err(McpError::Said("it crashed axe".into())),
        );
        let mut out = Servers::none(deadline);
        let mut failed = None;
        for (server, started) in servers.iter().zip(started) {
            match started {
                Ok((client, tools)) => out.add(client, tools, taken, verbose.then_some(report))?,
                Err(why) if server.required() => {
                    let e = McpError::Connect {
                        name: server.name.clone(),
                        source: Box::new(why),
                    };
                    failed.get_or_insert(Error::caused(Error::ToolServer(e.to_string()), e));
                }
                Err(why) => report.note(format_args!(
                    "Warning: MCP server \"{}\" is not available, going on without its tools: {why}",
                    server.name
                )),
            }
        }
        // Every server that did start is stopped as `out` goes.
        failed.map_or(Ok(out), Err)
    }

    /// No servers: a conversation's until its servers start.
    pub fn none(deadline: Deadline) -> Servers {
        Servers {
            clients: Vec::new(),
            offered: Vec::new(),
            client_of: Vec::new(),
            deadline,
        }
    }

    /// Registers `client`'s tools: a name another tool of the conversation
    /// has is skipped; one another server offers is a config error. With
    /// `-v`, `verbose` is where that is said.
    fn add(
        &mut self,
        client: Client,
        tools: Vec<Tool>,
        taken: &[String],
        verbose: Option<&dyn Report>,
    ) -> Result<()> {
        let index = self.clients.len();
        let listed = tools.len();
        let mut kept = 0;
        for tool in tools {
            if taken.contains(&tool.name) {
                if let Some(report) = verbose {
                    report.note(format_args!(
                        "[mcp] Skipping \"{}\" from \"{}\" (conflicts with built-in tool)",
                        tool.name, client.name
                    ));
                }
                continue;
            }
            let other = self.offered.iter().position(|o| o.def.name == tool.name);
            if let Some(other) = other.map(|i| self.client_of[i]) {
                // Listed twice by one server: once is enough.
                if other == index {
                    continue;
                }
                let first = &self.clients[other].name;
                return Err(Error::AgentInvalid(format!(
                    "MCP tool \"{}\" collision between servers \"{first}\" and \"{}\"",
                    tool.name, client.name
                )));
            }
            let mut open = tool.input_schema.clone();
            if open.get("additionalProperties") != Some(&Value::Bool(false)) {
                open["additionalProperties"] = Value::Bool(true);
            }
            self.offered.push(Offered {
                def: ToolDef {
                    name: tool.name,
                    description: tool.description,
                    parameters: tool.input_schema.into(),
                },
                check: Some(open),
                reads: false,
                output: None,
            });
            self.client_of.push(index);
            kept += 1;
        }
        if let Some(report) = verbose {
            report.note(format_args!(
                "[mcp] \"{}\" discovered {listed} tool(s), registered {kept}",
                client.name
            ));
        }
        self.clients.push(client);
        Ok(())
    }
}

impl ToolSource for Servers {
    fn offered(&self) -> &[Offered] {
        &self.offered
    }

    /// Runs `call` on the server that offers its tool.
    fn run(&self, index: usize, call: &ToolCall) -> std::result::Result<Reply, ToolError> {
        let client = &self.clients[self.client_of[index]];
        client
            .call(&call.name, &call.arguments, self.deadline.at)
            .map(Reply::text)
            .map_err(ToolError::Mcp)
    }

    fn crashed(&self, _: usize) -> String {
        "the tool crashed".into()
    }
}

/// `server` with `${VAR}` expanded in its headers and env, and, for
/// `streamable-http`, the login stored under `data` for its URL
/// (`axe agents mcp-login`) unless its headers give an `Authorization`.
fn resolve<'a>(
    server: &'a McpServer,
    agent: &str,
    data: Option<&std::path::Path>,
    http: &axe_net::Client,
) -> Result<Resolved<'a>> {
    let var = |name: &str| std::env::var(name).ok();
    let expanded = |map: &std::collections::BTreeMap<String, String>| {
        map.iter()
            .map(|(k, v)| Ok((k.clone(), expand(v, var)?)))
            .collect::<std::result::Result<Vec<_>, Unset>>()
            .map_err(|why| {
                let line = format!("failed to connect MCP server \"{}\": {why}", server.name);
                Error::caused(Error::Config(line), why)
            })
    };
    let headers = expanded(&server.headers)?;
    if let Some((name, _)) = headers.iter().find(|(_, v)| v.contains(['\r', '\n', '\0'])) {
        return Err(Error::Config(format!(
            "failed to connect MCP server \"{}\": header {name:?} has a line break in it",
            server.name
        )));
    }
    let auth = match server.transport == STREAMABLE_HTTP {
        true => Some(Arc::new(login(server, agent, data, &headers, http)?)),
        false => None,
    };
    Ok(Resolved {
        server,
        headers,
        env: expanded(&server.env)?,
        auth,
    })
}

fn login(
    server: &McpServer,
    agent: &str,
    data: Option<&std::path::Path>,
    headers: &[(String, String)],
    http: &axe_net::Client,
) -> Result<oauth::Auth> {
    let given = headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"));
    let session = match data.filter(|_| !given) {
        Some(data) => oauth::Session::open(data, server.url.trim(), http).map_err(|why| {
            let line = format!("failed to connect MCP server \"{}\": {why}", server.name);
            Error::caused(Error::Config(line), why)
        })?,
        None => None,
    };
    Ok(oauth::Auth {
        agent: agent.to_owned(),
        server: server.name.clone(),
        session,
    })
}

fn say_starting(report: &dyn Report, server: &McpServer) {
    let (name, transport) = (&server.name, &server.transport);
    match server.is_stdio() {
        true => report.note(format_args!(
            "[mcp] Starting \"{name}\": {} ({transport})",
            std::iter::once(&server.command)
                .chain(&server.args)
                .map(String::as_str)
                .collect::<Vec<_>>()
                .join(" ")
        )),
        false => report.note(format_args!(
            "[mcp] Connecting to \"{name}\" at {} ({transport})",
            server.url.trim()
        )),
    }
}

fn start_one(
    resolved: Resolved,
    workdir: &std::path::Path,
    deadline: Deadline,
    stderr_to: Option<Arc<dyn Report>>,
    http: &axe_net::Client,
) -> Started {
    let client = Client::connect(resolved, workdir, deadline.at, stderr_to, http)?;
    let tools = client
        .tools(deadline.at)
        .map_err(|why| McpError::ListTools(Box::new(why)))?;
    Ok((client, tools))
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::Arc;

    use super::*;
    use axe_agent::{AgentConfig, Agents};
    use axe_base::dirs::Dirs;
    use axe_base::report::Collected;
    use axe_memory::Wait;

    /// Starting a conversation's servers is a library call: what it has
    /// to say (`-v`'s start line, an optional server's warning) goes to
    /// the session's reporter, which here collects it.
    #[test]
    fn a_servers_lines_go_to_the_sessions_reporter() {
        let tmp = tempfile::tempdir().unwrap();
        let report = Arc::new(Collected::default());
        let dirs = Dirs::given(Some(tmp.path()), Some(tmp.path())).unwrap();
        let agents = Agents::new(dirs, None).reporting_to(report.clone());
        let top = AgentConfig::default();
        let parts = (tmp.path().to_owned(), agents, Wait::default());
        let session = Session::new(axe_agent::config::Config::default(), parts, &top, true);
        let missing = tmp.path().join("no-such-server");
        let server = McpServer {
            name: "x".into(),
            transport: "stdio".into(),
            command: missing.display().to_string(),
            required: Some(false),
            ..McpServer::default()
        };
        let deadline = Deadline::after(std::time::Duration::from_secs(5));
        let servers = [server];
        let started =
            Servers::start(&servers, "a", Path::new("/"), &[], deadline, &session).unwrap();
        assert!(started.offered().is_empty());
        let missing = missing.display();
        assert_eq!(
            report.lines(),
            [
                format!("[mcp] Starting \"x\": {missing} (stdio)"),
                format!(
                    "Warning: MCP server \"x\" is not available, going on without its tools: \
                     {missing}: no such file or directory"
                ),
            ]
        );
    }
}
