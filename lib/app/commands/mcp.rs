//! `axe-mcp`: an agent's memory over the Model Context Protocol, on
//! stdio or, with `--http`, to a team over streamable HTTP.

use std::io::Write;
use std::path::Path;

use super::args::AGENT;
use super::mcp_opened::{Opened, Opening};
use axe_agent::Agents;
use axe_base::dirs::Dirs;
use axe_base::error::{Error, Result};
use axe_cli::{Arg, Command, Complete, Flag, Item, Matches, Rule, Run};
use axe_mcp::Server;
use axe_mcp::http::Http;
use axe_mcp::http::tls;
use axe_mcp::http::tokens::{self, Live};
use axe_tools::Memory;

pub const COMMAND: Command = Command {
    name: "axe-mcp",
    about: "Serve an agent's memory to any MCP client over stdin and stdout, or over HTTP",
    usage: &["[OPTIONS] [AGENT]", "<COMMAND> [OPTIONS]"],
    args: &[],
    flags: &[],
    rules: &[],
    description: "\
Speaks the Model Context Protocol on standard input and output (one
JSON-RPC message a line; diagnostics on standard error; the initialize
handshake and the stateless 2026-07-28 revision) and offers tools over
the agent's memory, with the same locks, budgets and caps as the
executables: the notes tools a model gets inside axe-run (recall,
remember, reflect, learn_fact, search_notes), the state (state_context,
state_record), the run log (log_recent, log_append) and context, one
block of all of it within a budget. Ends when standard input ends.

AGENT names an agent file whose [memory], [notes], [state] and [context]
say which kinds are served and where; without one of that name (or
without AGENT: \"mcp\"), every kind is on with its defaults, under that
name. An existing MEMORY.md or topic is overwritten only over what a
recall showed the client whole (within recall_chars and the output
limit of every known client); where one connection cannot stand for
one conversation (always over --http; on stdio with --require-if-match,
for a client such as opencode serve that shares one connection among
its sessions) only with the sha256 recall showed, passed as reflect's
and learn_fact's if_match.

A client may start its server without the user's environment (Codex
and the MCP Inspector drop XDG_*), so --config-dir and --data-dir name
axe's directories on the command line, which reaches the server as
written; each must be absolute. Register it with a client
(docs/guide/axe-mcp.md gives each client's lines in full):

  claude mcp add -s user axe -- axe-mcp --config-dir \"$(axe-config path)\" \\
    --data-dir \"${XDG_DATA_HOME:-$HOME/.local/share}/axe\" team
  # Codex, ~/.codex/config.toml:
  #   [mcp_servers.axe]
  #   command = \"axe-mcp\"
  #   args = [\"team\"]
  #   env_vars = [\"XDG_CONFIG_HOME\", \"XDG_DATA_HOME\"]
  #   default_tools_approval_mode = \"approve\"

Two clients given the same AGENT and directories share one memory; each
runs its own axe-mcp, and the files' locks keep every write whole. The
options are axe-mcp serve's (axe-mcp serve --help).

With --http ADDR (and no AGENT) one axe-mcp serves every agent's memory
over MCP's streamable HTTP at http://ADDR/mcp/<AGENT>: the same tools,
locks and caps, a session per client of the handshake generation
(Mcp-Session-Id) and the stateless 2026-07-28 revision without one.
Without --tokens only a loopback ADDR is taken; a request with a
foreign Origin or, on loopback, a foreign Host is refused (403). With
--tokens FILE, a request needs \"Authorization: Bearer TOKEN\" of an
entry of FILE (401 without, 403 for an agent the token does not reach),
and a read_only token is offered only the reading tools; a token's
rights are the file's as it is at each request, and the sessions of a
token removed from it end.

The HTTP server serves the team's memory, not yours: every agent's
notes (MEMORY.md, daily notes, world topics), run log and state live in
a data directory of its own, by default axe-team beside axe's data
directory (~/.local/share/axe-team), never where your own agents, your
world topics or what axe-import brought in live. An agent file's [notes]
workspace, [memory] path and [state] path are not followed there (its
other settings are). --team-dir DIR serves DIR instead; serving your own
memory is --team-dir naming your data directory, said at the start. The
first line on standard error says what is served, where, and which
tokens guard it (or that none does); axe-mcp token list says what each
token reaches. One line per
request goes to standard error (time, token name, agent, method, tool,
status, milliseconds), never a token or memory text. SIGTERM stops the
accepting, answers the requests in flight, then ends the server.",
    // Bare `axe-mcp` (with an agent or flags) is `axe-mcp serve`.
    run: Run::Default(&[SERVE, TOKEN]),
};

const SERVE: Command = Command {
    name: "axe-mcp serve",
    about: "Serve an agent's memory over stdio, or every agent's with --http (the default command)",
    usage: &["[OPTIONS] [AGENT]"],
    args: &[AGENT],
    flags: &[
        READ_ONLY,
        REQUIRE_IF_MATCH,
        CONFIG_DIR,
        DATA_DIR,
        HTTP,
        TOKENS,
        TEAM_DIR,
        TLS_CERT,
        TLS_KEY,
    ],
    rules: &[
        Rule::Conflict(Item::Flag(&HTTP), Item::Arg(&AGENT)),
        Rule::RequiredWith(Item::Flag(&HTTP), Item::Flag(&TOKENS)),
        Rule::RequiredWith(Item::Flag(&HTTP), Item::Flag(&TEAM_DIR)),
        Rule::RequiredWith(Item::Flag(&HTTP), Item::Flag(&TLS_CERT)),
        Rule::RequiredWith(Item::Flag(&TLS_KEY), Item::Flag(&TLS_CERT)),
        Rule::RequiredWith(Item::Flag(&TLS_CERT), Item::Flag(&TLS_KEY)),
    ],
    description: "\
What axe-mcp does without a command word: an agent named like a command
(serve, token) is served with `axe-mcp serve NAME`.",
    run: Run::Action(run),
};

const TOKEN: Command = Command {
    name: "axe-mcp token",
    about: "Manage the bearer tokens of axe-mcp --http --tokens FILE",
    usage: &["<COMMAND> [OPTIONS]"],
    args: &[],
    flags: &[],
    rules: &[],
    description: "\
A tokens file is TOML: one [[token]] table per token with name, sha256
(the hex SHA-256 of the token; the token itself is never stored), agents
(a list of names, or \"*\" for every agent), read_only and created.
The file is read as ssh reads an authorized_keys: a regular file of
this user or root that neither group nor others can write, in a
directory others cannot write, at most 1 MiB; anything else takes no
token, said on standard error.",
    run: Run::Subcommands(&[TOKEN_ADD, TOKEN_LIST, TOKEN_REMOVE, TOKEN_ROTATE]),
};

const TOKEN_NAME: Arg = Arg {
    name: "NAME",
    noun: "token name",
    help: "Whose token: the name the log lines give (letters, digits, '.', '_', '-')",
    complete: Complete::Nothing,
    many: false,
};

const AGENTS: Flag = Flag::with_value(
    "agents",
    "LIST",
    "The agents the token reaches: names separated by commas, or \"*\" for every agent",
);

const TOKEN_READ_ONLY: Flag = Flag::switch(
    "read-only",
    "The token is offered only the tools that do not write",
);

const TOKEN_FILE: Flag = Flag::with_value(
    "tokens",
    "FILE",
    "The tokens file to add to [default: <config>/mcp-tokens.toml]",
)
.completes(Complete::File);

const TOKEN_LIST_FILE: Flag = Flag::with_value(
    "tokens",
    "FILE",
    "The tokens file to list [default: <config>/mcp-tokens.toml]",
)
.completes(Complete::File);

const TOKEN_LIST: Command = Command {
    name: "axe-mcp token list",
    about: "List the tokens of the tokens file and what each reaches, never a token or its digest",
    usage: &["[OPTIONS]"],
    args: &[],
    flags: &[TOKEN_LIST_FILE, LIST_TEAM_DIR, CONFIG_DIR, DATA_DIR],
    rules: &[],
    description: "\
One line per token on standard output: its name, the agents it reaches,
whether it only reads, when it was made (\"-\" when the file does not
say), and what it reaches on a server started with the same --team-dir
(and --data-dir): the notes, run log and state of its agents in the
served data directory, and every world topic there.",
    run: Run::Action(token_list),
};

const TOKEN_ADD: Command = Command {
    name: "axe-mcp token add",
    about: "Make a new random token, print it once and add its digest to the tokens file",
    usage: &["[OPTIONS] --agents LIST NAME"],
    args: &[TOKEN_NAME],
    flags: &[AGENTS, TOKEN_READ_ONLY, TOKEN_FILE, CONFIG_DIR],
    rules: &[
        Rule::Required(Item::Arg(&TOKEN_NAME)),
        Rule::Required(Item::Flag(&AGENTS)),
    ],
    description: "\
Prints the token on standard output, the only time it is shown: give it to
the client (Authorization: Bearer TOKEN). The file (mode 0600, created
when missing) gets the token's SHA-256 alone, appended under the file's
lock and replaced whole, so a server reading it sees the old file or the
new one. A name already in the file is refused.",
    run: Run::Action(token_add),
};

/// `--tokens` of `token remove` and `token rotate`.
const TOKEN_EDIT_FILE: Flag = Flag::with_value(
    "tokens",
    "FILE",
    "The tokens file to change [default: <config>/mcp-tokens.toml]",
)
.completes(Complete::File);

const TOKEN_REMOVE: Command = Command {
    name: "axe-mcp token remove",
    about: "Take a token out of the tokens file: it stops at once, and so do its sessions",
    usage: &["[OPTIONS] NAME"],
    args: &[TOKEN_NAME],
    flags: &[TOKEN_EDIT_FILE, CONFIG_DIR],
    rules: &[Rule::Required(Item::Arg(&TOKEN_NAME))],
    description: "\
The entry NAME leaves the file, which is replaced whole under its lock
(the rest as written): a running server refuses the token at its next
request (401) and ends the sessions it began. A name not in the file is
an error naming those that are.",
    run: Run::Action(token_remove),
};

const TOKEN_ROTATE: Command = Command {
    name: "axe-mcp token rotate",
    about: "Give a token a new random value, print it once; the old one stops at once",
    usage: &["[OPTIONS] NAME"],
    args: &[TOKEN_NAME],
    flags: &[TOKEN_EDIT_FILE, CONFIG_DIR],
    rules: &[Rule::Required(Item::Arg(&TOKEN_NAME))],
    description: "\
Prints the new token on standard output, the only time it is shown. The
entry keeps its name, agents and read_only; its sha256 becomes the new
token's and created says now (when the token in force was made). The
file is replaced whole under its lock, so a running server takes the new
token at its next request, refuses the old one (401) and ends the
sessions the old one began.",
    run: Run::Action(token_rotate),
};

const READ_ONLY: Flag = Flag::switch(
    "read-only",
    "Offer only the tools that do not write (recall, search_notes, context, state_context, log_recent)",
);

const REQUIRE_IF_MATCH: Flag = Flag::switch(
    "require-if-match",
    "Overwrite an existing MEMORY.md or topic only with the sha256 recall showed as if_match: for a client whose one connection serves many conversations (opencode serve); always so over --http",
);

const HTTP: Flag = Flag::with_value(
    "http",
    "ADDR",
    "Serve MCP's streamable HTTP at http://ADDR/mcp/<AGENT> instead of stdio (a loopback ADDR unless --tokens)",
);

const TOKENS: Flag = Flag::with_value(
    "tokens",
    "FILE",
    "With --http, take only the bearer tokens of FILE ([[token]] name, sha256, agents, read_only)",
)
.completes(Complete::File);

const TEAM_DIR: Flag = Flag::with_value(
    "team-dir",
    "DIR",
    "With --http, serve the memory of the data directory DIR [default: axe-team beside the data directory]; your own only when DIR names it",
)
.completes(Complete::Dir);

/// `--team-dir` of `token list`: the same place, described.
const LIST_TEAM_DIR: Flag = Flag::with_value(
    "team-dir",
    "DIR",
    "The data directory the server serves, as given to axe-mcp --http [default: axe-team beside the data directory]",
)
.completes(Complete::Dir);

const TLS_CERT: Flag = Flag::with_value(
    "tls-cert",
    "FILE",
    "With --http, serve HTTPS with the PEM certificate chain of FILE (and --tls-key)",
)
.completes(Complete::File);

const TLS_KEY: Flag = Flag::with_value(
    "tls-key",
    "FILE",
    "The PEM private key of --tls-cert's certificate",
)
.completes(Complete::File);

const CONFIG_DIR: Flag = Flag::with_value(
    "config-dir",
    "DIR",
    "Use DIR as axe's config directory (agents/, config.toml) instead of $XDG_CONFIG_HOME/axe",
)
.completes(Complete::Dir);

const DATA_DIR: Flag = Flag::with_value(
    "data-dir",
    "DIR",
    "Use DIR as axe's data directory (the memory) instead of $XDG_DATA_HOME/axe",
)
.completes(Complete::Dir);

fn run(m: &Matches, out: &mut dyn Write) -> Result<()> {
    // Before anything reads a file: the agent file itself is found there.
    let dirs = Dirs::given(
        m.value(&CONFIG_DIR).map(Path::new),
        m.value(&DATA_DIR).map(Path::new),
    )?;
    let agents = Agents::new(dirs.clone(), None);
    let read_only = m.flag(&READ_ONLY);
    if let Some(addr) = m.value(&HTTP) {
        let tokens = m
            .value(&TOKENS)
            .map(|f| Live::load(Path::new(f)))
            .transpose()?;
        let tls = match (m.value(&TLS_CERT), m.value(&TLS_KEY)) {
            (Some(cert), Some(key)) => Some(tls::config(Path::new(cert), Path::new(key))?),
            _ => None,
        };
        let (served, own) = team_dir(m, &dirs)?;
        // The served memory's directories: the owner's agent files and
        // config, the team's data directory.
        let served_dirs = Dirs::given(m.value(&CONFIG_DIR).map(Path::new), Some(&served))?;
        let agents = Agents::new(served_dirs, None);
        let opened = Opened::new(agents);
        let http = Http {
            tls,
            addr: addr.to_string_lossy().into_owned(),
            tokens,
            read_only,
            served,
            own,
            open: Box::new(move |name: &str| opened.open(name)),
            report: std::sync::Arc::new(axe_base::report::Stderr),
        };
        return http.serve();
    }
    let name = super::args::agent_arg(m)?.unwrap_or("mcp").to_owned();
    let (memory, instructions) = open(&agents, &name, m.flag(&REQUIRE_IF_MATCH))?;
    let server = Server {
        memory,
        read_only,
        instructions,
    };
    let stdin = std::io::stdin();
    server.serve(&mut stdin.lock(), out).map_err(Error::Output)
}

/// The data directory `--http` serves, and whether it is the owner's
/// own. By default `axe-team` beside the data directory: a place of its
/// own, so a teammate's token never reads the owner's world topics or
/// imports, and its writes never land where the owner's agents recall.
/// Outside the data directory too, so `axe-sync` of the owner's memory
/// never carries the team's to the owner's remote.
fn team_dir(m: &Matches, dirs: &Dirs) -> Result<(std::path::PathBuf, bool)> {
    let data = dirs.data()?;
    let given = m.value(&TEAM_DIR).or_else(|| m.value(&LIST_TEAM_DIR));
    let served = match given {
        Some(dir) => Path::new(dir).to_owned(),
        None => {
            let name = data.file_name().ok_or_else(|| {
                Error::Usage(format!(
                    "the data directory {} has no name to put axe-team beside: give --team-dir",
                    data.display()
                ))
            })?;
            let mut team = name.to_owned();
            team.push("-team");
            data.with_file_name(team)
        }
    };
    // Named once for the server's life, wherever its threads stand.
    let served = match served.is_absolute() {
        true => served,
        false => std::env::current_dir()
            .map_err(|e| Error::Config(format!("--team-dir {}: {e}", served.display())))?
            .join(served),
    };
    let same = |a: &Path, b: &Path| match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => a.components().eq(b.components()),
    };
    let own = same(&served, &data);
    Ok((served, own))
}

fn token_list(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let dirs = Dirs::given(
        m.value(&CONFIG_DIR).map(Path::new),
        m.value(&DATA_DIR).map(Path::new),
    )?;
    let file = match m.value(&TOKEN_LIST_FILE) {
        Some(f) => std::path::PathBuf::from(f),
        None => dirs.config()?.join("mcp-tokens.toml"),
    };
    let (served, own) = team_dir(m, &dirs)?;
    let tokens = tokens::Tokens::load(&file)?;
    for t in tokens.all() {
        let agents = match &t.agents {
            tokens::Agents::Every(_) => "*".to_owned(),
            tokens::Agents::Some(names) => names.join(","),
        };
        // The rights open the reach's words, so they are not a column too.
        writeln!(
            out,
            "{}  agents {agents}  created {}  {}",
            t.name,
            t.created.as_deref().unwrap_or("-"),
            t.reach(&served, own)
        )
        .map_err(Error::Output)?;
    }
    Ok(())
}

fn token_add(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let name = m.args()[0]
        .to_str()
        .ok_or_else(|| Error::Usage("a token name is UTF-8".into()))?;
    let agents = m
        .value(&AGENTS)
        .and_then(|a| a.to_str())
        .ok_or_else(|| Error::Usage("--agents is UTF-8".into()))?;
    let agents: Vec<String> = agents.split(',').map(|a| a.trim().to_owned()).collect();
    let file = match m.value(&TOKEN_FILE) {
        Some(f) => std::path::PathBuf::from(f),
        None => Dirs::given(m.value(&CONFIG_DIR).map(Path::new), None)?
            .config()?
            .join("mcp-tokens.toml"),
    };
    let added = tokens::add(&file, name, &agents, m.flag(&TOKEN_READ_ONLY))?;
    axe_base::stderr::note(format_args!(
        "axe-mcp: token \"{name}\" added to {}; it is shown only now",
        added.file.display()
    ));
    writeln!(out, "{}", added.token).map_err(Error::Output)
}

/// NAME and the tokens file of `token remove` and `token rotate`.
fn token_edited(m: &Matches) -> Result<(String, std::path::PathBuf)> {
    let name = m.args()[0]
        .to_str()
        .ok_or_else(|| Error::Usage("a token name is UTF-8".into()))?
        .to_owned();
    let file = match m.value(&TOKEN_EDIT_FILE) {
        Some(f) => std::path::PathBuf::from(f),
        None => Dirs::given(m.value(&CONFIG_DIR).map(Path::new), None)?
            .config()?
            .join("mcp-tokens.toml"),
    };
    Ok((name, file))
}

/// Said when the file had to be written out in axe's own layout.
fn rewritten(edited: &tokens::Edited, file: &Path) {
    if edited.rewritten {
        axe_base::stderr::note(format_args!(
            "axe-mcp: {} is written out in token add's layout (an entry was not one [[token]] table of its own); its comments are gone",
            file.display()
        ));
    }
}

fn token_remove(m: &Matches, _: &mut dyn Write) -> Result<()> {
    let (name, file) = token_edited(m)?;
    let edited = tokens::remove(&file, &name)?;
    rewritten(&edited, &file);
    axe_base::stderr::note(format_args!(
        "axe-mcp: token \"{name}\" removed from {}; it and its sessions stop at their next request",
        file.display()
    ));
    Ok(())
}

fn token_rotate(m: &Matches, out: &mut dyn Write) -> Result<()> {
    let (name, file) = token_edited(m)?;
    let (added, edited) = tokens::rotate(&file, &name)?;
    rewritten(&edited, &file);
    axe_base::stderr::note(format_args!(
        "axe-mcp: token \"{name}\" rotated in {}: the old one and its sessions stop; the new one is shown only now",
        file.display()
    ));
    writeln!(out, "{}", added.token).map_err(Error::Output)
}

/// The memory of the agent `name` as the server offers it, and what the
/// client is told of it: over stdio once, over HTTP per session or
/// stateless request. With `needs_if_match` (over HTTP, or
/// `--require-if-match`) nothing counts as seen: an overwrite needs the
/// hash recall showed.
fn open(agents: &Agents, name: &str, needs_if_match: bool) -> Result<(Memory, String)> {
    let opening = Opening::read(agents, name, needs_if_match, &mut |_| {})?;
    Ok((opening.memory(agents.dirs()), opening.instructions))
}
