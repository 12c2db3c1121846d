//! `axe-mcp` under the real MCP clients people use: Claude Code and Codex,
//! the CLIs from npm, run headless against a fake model on loopback.
//!
//! A client shows its model only what it puts in the model's request, and
//! these two put a tool result's `structuredContent` there *in place of*
//! its text whenever it is present (the spec allows it: the structured
//! content is the result). So what matters is what the next request to the
//! model carries, and the fake model here acts only on that: it calls
//! `recall`, then `reflect` without `if_match`, keeping in the new MEMORY.md
//! only what a tool result showed it, then says it is done. With MEMORY.md
//! shown, the seeded line must be in the request and stay on disk; with
//! MEMORY.md left out of the recall (a `recall_chars` too small for it),
//! the reflect is a blind one and must be refused, the seeded line kept,
//! whether it passes no `if_match` or the `memory_sha256` the recall gave.
//!
//! How each client is driven headless, offline (learnt from `claude
//! --help`, `codex exec --help`, `codex features list`, and tracing a run
//! for every connection and program it starts):
//! - Claude Code 2.1 (`@anthropic-ai/claude-code`; its npm package copies
//!   a native binary out of a platform package at install): `claude --bare
//!   -p PROMPT --output-format json`, the server from `--mcp-config FILE
//!   --strict-mcp-config` (nothing else from the user's setup), its tools
//!   allowed by `--allowedTools`, no built-in tools (`--tools ""`). The
//!   model is `ANTHROPIC_BASE_URL` + `ANTHROPIC_API_KEY`: `POST
//!   /v1/messages?beta=true`, streamed as server-sent events. MCP tools are
//!   named `mcp__axe__recall`; `ENABLE_TOOL_SEARCH=false` offers them
//!   outright instead of behind its tool-search tool.
//!   `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1` and `DISABLE_AUTOUPDATER=1`
//!   keep it off every other host: a traced run connects to the fake only.
//! - Codex 0.169 (`@openai/codex`, a node launcher for the native binary of
//!   its platform package, run here on the Node 22 the install puts beside
//!   it): `codex exec --skip-git-repo-check --ephemeral --json PROMPT`, stdin
//!   closed. Everything else is `$CODEX_HOME/config.toml`: a
//!   `model_providers` entry with `base_url` at the fake, `wire_api =
//!   "responses"` (`POST /v1/responses`, streamed) and the key's variable
//!   in `env_key`; `[mcp_servers.axe]` with `default_tools_approval_mode =
//!   "approve"` (exec mode never asks, so a tool that writes is otherwise
//!   refused); the features `plugins`, `remote_plugin` and `apps` off
//!   (with them, each run clones github.com/openai/plugins in the
//!   background), `shell_snapshot` off and analytics off. MCP tools come in
//!   a `namespace` tool `mcp__axe`; a call names the namespace and `recall`.
//!
//! Where the clients are: `tests/mcp/install` (which `.ci/run` runs) puts
//! them, pinned, in `<sdk dir>/clients/node_modules` (see
//! [`crate::mcp_sdk::sdk_dir`]); nothing is fetched while the tests run.
//! Without them a test says it skipped, and fails under `AXE_TEST_ALL`.
//! Every client runs in a process group of its own, which is killed when
//! the run ends or overstays [`LIMIT`], so a hang fails the test and no
//! server outlives it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::channel;
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp_sdk::{HOW, sdk_dir};
use crate::server::{Answer, Recorded, Server, sse_event};
use crate::util::{Env, read, unavailable};

/// The seeded MEMORY.md line. Nothing in it that JSON escapes, so it reads
/// the same in a tool result's text and in its structured content.
pub(crate) const SEED: &str =
    "Staging deploys run from the runner named orca-7731, after the canary.";

/// The line the fake model adds when it rewrites MEMORY.md.
pub(crate) const NEW: &str = "Release notes go out on Fridays.";

/// The longest a client's whole run may take: seconds are enough, this is
/// for a machine under load; past it the run is killed and the test fails.
const LIMIT: Duration = Duration::from_secs(120);

/// The two clients, as the fake model tells them apart.
#[derive(Clone, Copy)]
enum Client {
    ClaudeCode,
    Codex,
}

/// What the fake model does next.
pub(crate) enum Turn {
    /// Calls the axe tool of this name with these arguments.
    Call(&'static str, Value),
    /// Answers in words, which ends the client's run.
    Say(&'static str),
}

/// How the fake model's `reflect` says what it read of MEMORY.md.
#[derive(Clone, Copy)]
pub(crate) enum Reflect {
    /// It does not: the server's session knows what was shown.
    Plain,
    /// It passes the `memory_sha256` a recall showed it, if any, as
    /// `if_match`, as the tool's description tells a client that keeps no
    /// session to.
    WithHash,
    /// It does not, and when refused with the server's "Pass as if_match"
    /// does what the refusal says: reflects again with the hash a recall
    /// showed it, if one did.
    Follow,
}

/// The script: given the tool results in the conversation so far, the next
/// turn. `reflect` keeps exactly what the model was shown of MEMORY.md.
pub(crate) fn next_turn(shown: &[String], how: Reflect) -> Turn {
    match shown.len() {
        0 => Turn::Call("recall", json!({})),
        1 => {
            let seen = shown.iter().any(|text| text.contains(SEED));
            let content = if seen {
                format!("{SEED}\n{NEW}\n")
            } else {
                format!("{NEW}\n")
            };
            let mut arguments = json!({"content": content});
            if let (Reflect::WithHash, Some(hash)) =
                (how, shown.iter().find_map(|t| memory_hash(t)))
            {
                arguments["if_match"] = json!(hash);
            }
            Turn::Call("reflect", arguments)
        }
        2 if matches!(how, Reflect::Follow) && shown[1].contains("Pass as if_match") => {
            match shown[..1].iter().find_map(|t| memory_hash(t)) {
                Some(hash) => Turn::Call(
                    "reflect",
                    json!({"content": reflected(shown), "if_match": hash}),
                ),
                None => Turn::Say("done"),
            }
        }
        _ => Turn::Say("done"),
    }
}

/// What the fake model writes as MEMORY.md: what it was shown of it, and
/// the new line.
pub(crate) fn reflected(shown: &[String]) -> String {
    match shown.iter().any(|text| text.contains(SEED)) {
        true => format!("{SEED}\n{NEW}\n"),
        false => format!("{NEW}\n"),
    }
}

/// The 64 hex digits after `memory_sha256` in a tool result, as a model
/// reads them off the JSON it was shown.
/// A client that shows only the text has it on MEMORY.md's line after
/// the recall's text.
pub(crate) fn memory_hash(text: &str) -> Option<&str> {
    let hex = |value: &'_ str| -> Option<usize> {
        let hash = value.get(..64)?;
        hash.bytes().all(|b| b.is_ascii_hexdigit()).then_some(64)
    };
    if let Some((_, after)) = text.split_once("memory_sha256") {
        let value = after.trim_start_matches(['"', '\\', ':', ' ']);
        if hex(value).is_some() {
            return value.get(..64);
        }
    }
    let (_, after) = text.split_once("/MEMORY.md ")?;
    hex(after).and_then(|n| after.get(..n))
}

/// `<sdk dir>/clients/node_modules/.bin`, which holds `claude`, `codex` and
/// Node 22's `node`, when `program` there answers `--version` with `want`
/// in it; `None`, reported, when not.
fn client_bin(program: &str, want: &str) -> Option<PathBuf> {
    let bin = sdk_dir().join("clients/node_modules/.bin");
    let home = tempfile::tempdir().unwrap();
    let version = Command::new(bin.join(program))
        .arg("--version")
        .env_clear()
        .env("PATH", search_path(&bin))
        .env("HOME", home.path())
        .env("CODEX_HOME", home.path())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    let node = Command::new(bin.join("node"))
        .arg("--version")
        .output()
        .is_ok_and(|out| out.stdout.starts_with(b"v22."));
    if version.contains(want) && node {
        Some(bin)
    } else {
        unavailable(
            &format!(
                "{program} {want}* and Node 22 are not installed in {}",
                bin.display()
            ),
            HOW,
        );
        None
    }
}

/// `PATH` for a client: the installed ones (Node 22 among them) first,
/// then axe's executables.
pub(crate) fn search_path(bin: &Path) -> std::ffi::OsString {
    let axe = Path::new(env!("CARGO_BIN_EXE_axe-mcp")).parent().unwrap();
    let mut dirs = vec![bin.to_path_buf(), axe.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

/// The fake model for `client`: it answers the client's conversation from
/// [`next_turn`], anything else (a side request with no axe tools offered)
/// with a plain "ok", and records every request.
fn fake_model(client: Client, how: Reflect) -> Server {
    Server::route(move |request| {
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return Answer::json(400, &json!({"error": "not JSON"}));
        };
        match client {
            Client::ClaudeCode if request.path.starts_with("/v1/messages/count_tokens") => {
                Answer::json(200, &json!({"input_tokens": 1}))
            }
            Client::ClaudeCode if request.path.starts_with("/v1/messages") => {
                anthropic(&body, turn(client, &body, how))
            }
            Client::Codex if request.path.starts_with("/v1/responses") => {
                responses(&body, turn(client, &body, how))
            }
            _ => Answer::json(
                404,
                &json!({"error": {"type": "not_found", "message": request.path}}),
            ),
        }
    })
}

/// The fake model's turn for a request: the script's in the conversation
/// (a request offering the axe tools), a plain "ok" elsewhere.
fn turn(client: Client, body: &Value, how: Reflect) -> Turn {
    if offered(client, body, "recall").is_none() {
        return Turn::Say("ok");
    }
    next_turn(&shown(client, body), how)
}

/// The text of every tool result in a request's conversation, in order:
/// all the model knows of what the tools gave.
fn shown(client: Client, body: &Value) -> Vec<String> {
    let text = |content: &Value| match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    };
    let none = Vec::new();
    match client {
        Client::ClaudeCode => body["messages"]
            .as_array()
            .unwrap_or(&none)
            .iter()
            .filter_map(|m| m["content"].as_array())
            .flatten()
            .filter(|block| block["type"] == "tool_result")
            .map(|block| text(&block["content"]))
            .collect(),
        Client::Codex => body["input"]
            .as_array()
            .unwrap_or(&none)
            .iter()
            .filter(|item| item["type"] == "function_call_output")
            .map(|item| text(&item["output"]))
            .collect(),
    }
}

/// The requests of the conversation: those that offer the axe tools.
fn conversation(client: Client, server: &Server) -> Vec<Value> {
    server
        .requests()
        .iter()
        .filter_map(|r: &Recorded| serde_json::from_slice::<Value>(&r.body).ok())
        .filter(|body| offered(client, body, "recall").is_some())
        .collect()
}

/// How the client offers the axe tool `base` in a request: its name, and
/// for Codex the namespace it sits in.
fn offered(client: Client, body: &Value, base: &str) -> Option<(Option<String>, String)> {
    let tools = body["tools"].as_array()?;
    let suffix = format!("__{base}");
    match client {
        Client::ClaudeCode => tools
            .iter()
            .filter_map(|t| t["name"].as_str())
            .find(|name| name.starts_with("mcp__axe") && name.ends_with(&suffix))
            .map(|name| (None, name.to_owned())),
        Client::Codex => tools.iter().find_map(|t| {
            let namespace = t["name"].as_str()?;
            let inner = t["tools"].as_array()?;
            (namespace.starts_with("mcp__axe") && inner.iter().any(|f| f["name"] == base))
                .then(|| (Some(namespace.to_owned()), base.to_owned()))
        }),
    }
}

/// `turn` as an Anthropic Messages stream: one content block.
fn anthropic(body: &Value, turn: Turn) -> Answer {
    let (block, delta, stop) = match turn {
        Turn::Call(base, input) => {
            let name = offered(Client::ClaudeCode, body, base).map_or(base.to_owned(), |(_, n)| n);
            // One id a call: a script may call a tool twice.
            let n = shown(Client::ClaudeCode, body).len();
            (
                json!({"type": "tool_use", "id": format!("toolu_{base}_{n}"), "name": name, "input": {}}),
                json!({"type": "input_json_delta", "partial_json": input.to_string()}),
                "tool_use",
            )
        }
        Turn::Say(text) => (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": text}),
            "end_turn",
        ),
    };
    let events = [
        json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "model": body["model"],
            "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": 1, "output_tokens": 1}}}),
        json!({"type": "content_block_start", "index": 0, "content_block": block}),
        json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        json!({"type": "content_block_stop", "index": 0}),
        json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
               "usage": {"output_tokens": 1}}),
        json!({"type": "message_stop"}),
    ];
    stream(&events)
}

/// `turn` as an OpenAI Responses stream: one output item.
fn responses(body: &Value, turn: Turn) -> Answer {
    let n = shown(Client::Codex, body).len();
    let item = match turn {
        Turn::Call(base, input) => {
            let (namespace, name) = offered(Client::Codex, body, base)
                .unwrap_or((Some("mcp__axe".to_owned()), base.to_owned()));
            json!({
                "type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
                "namespace": namespace, "name": name, "arguments": input.to_string(),
            })
        }
        Turn::Say(text) => json!({
            "type": "message", "id": format!("msg_{n}"), "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }),
    };
    let id = format!("resp_{n}");
    stream(&[
        json!({"type": "response.created", "response": {"id": id}}),
        json!({"type": "response.output_item.done", "item": item}),
        json!({"type": "response.completed", "response": {"id": id, "usage": {
            "input_tokens": 1, "output_tokens": 1, "total_tokens": 2}}}),
    ])
}

/// Server-sent events, each named by its `type`, as both APIs send them.
fn stream(events: &[Value]) -> Answer {
    let events: Vec<String> = events
        .iter()
        .map(|e| sse_event(e["type"].as_str().unwrap_or_default(), e))
        .collect();
    Answer::sse(&events)
}

/// The environment `axe-mcp` gets from the client: this test's world only.
fn world(env: &Env) -> Value {
    json!({
        "HOME": env.root().join("home"),
        "XDG_CONFIG_HOME": env.config_dir(),
        "XDG_DATA_HOME": env.data_dir(),
    })
}

/// Claude Code, headless, with `axe-mcp claude` as its only server.
fn claude(env: &Env, bin: &Path, model: &Server) -> Command {
    let config = env.root().join("mcp.json");
    env.write(
        &config,
        json!({"mcpServers": {"axe": {
            "type": "stdio",
            "command": env!("CARGO_BIN_EXE_axe-mcp"),
            "args": ["claude"],
            "env": world(env),
        }}})
        .to_string(),
    );
    let mut cmd = client_command(env, bin, "claude");
    cmd.args(["--bare", "-p", "Recall your memory, then tidy MEMORY.md."])
        .args(["--output-format", "json", "--tools", ""])
        .arg("--mcp-config")
        .arg(&config)
        .arg("--strict-mcp-config")
        .args(["--allowedTools", "mcp__axe__recall,mcp__axe__reflect"])
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("ENABLE_TOOL_SEARCH", "false");
    cmd
}

/// Codex, headless, with `server` (a README block) as its only server:
/// with `[mcp_servers.axe]`, `axe-mcp team`, `XDG_*` passed on by
/// `env_vars`, and the writing tools approved (exec mode never asks, so
/// they are otherwise refused with "approval policy is never").
fn codex(env: &Env, bin: &Path, model: &Server, server: &str) -> Command {
    let home = env.root().join("codex-home");
    env.write(
        &home.join("config.toml"),
        format!(
            r#"model = "fake-model"
model_provider = "fake"
check_for_update_on_startup = false

[model_providers.fake]
name = "fake"
base_url = {base}
wire_api = "responses"
env_key = "AXE_TEST_FAKE_KEY"

[analytics]
enabled = false

[features]
plugins = false
remote_plugin = false
apps = false
shell_snapshot = false

{server}"#,
            base = json!(format!("{}/v1", model.url)),
        ),
    );
    let mut cmd = client_command(env, bin, "codex");
    cmd.args(["exec", "--skip-git-repo-check", "--ephemeral", "--json"])
        .arg("Recall your memory, then tidy MEMORY.md.")
        .env("CODEX_HOME", &home)
        .env("AXE_TEST_FAKE_KEY", "sk-fake");
    cmd
}

/// The first ```` ```lang ```` block holding `needle` in the README and the
/// guide (docs/guide/*.md): the lines a user copies, so the test and the
/// documents cannot drift apart.
pub(crate) fn readme_block(lang: &str, needle: &str) -> String {
    let readme = crate::readme::guide();
    let fence = format!("```{lang}\n");
    readme
        .match_indices(&fence)
        .map(|(at, _)| &readme[at + fence.len()..])
        .filter_map(|rest| rest.find("```").map(|end| &rest[..end]))
        .find(|body| body.contains(needle))
        .unwrap_or_else(|| {
            panic!("the README and the guide have no ```{lang} block with {needle:?}")
        })
        .to_owned()
}

/// Runs the README's `claude mcp add` block with bash as the user would,
/// in `dir`, with the user's environment: registers `axe-mcp`.
fn claude_mcp_add(env: &Env, bin: &Path, dir: &Path) {
    let script = readme_block("sh", "claude mcp add");
    std::fs::create_dir_all(dir).unwrap();
    let mut cmd = client_command(env, bin, "bash");
    cmd.current_dir(dir).args(["-e", "-c", &script]);
    let out = run_bounded(cmd);
    assert!(
        out.status.success(),
        "the README's `claude mcp add` failed: {}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `program` from the install (or the system's, for a shell), with
/// nothing of the developer's setup: a fresh home, the test's world (its
/// `XDG_*` set away from the defaults, as a user's may be), Node 22 first
/// on `PATH`, then axe's executables, as after `cargo install`.
pub(crate) fn client_command(env: &Env, bin: &Path, program: &str) -> Command {
    let path = bin.join(program);
    let mut cmd = Command::new(match path.exists() {
        true => path,
        false => PathBuf::from(program),
    });
    cmd.current_dir(env.root())
        .env_clear()
        .env("PATH", search_path(bin))
        .env("HOME", env.root().join("home"))
        .env("XDG_CONFIG_HOME", env.config_dir())
        .env("XDG_DATA_HOME", env.data_dir());
    cmd
}

/// Runs `cmd` to its end in a process group of its own, which is killed
/// then (whatever it left running) or once [`LIMIT`] passes, which fails.
pub(crate) fn run_bounded(mut cmd: Command) -> Output {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().unwrap();
    let group = Group(child.id());
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let finished = rx.recv_timeout(LIMIT);
    drop(group);
    match finished {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let output = rx.recv_timeout(Duration::from_secs(10));
            let stderr = output
                .ok()
                .and_then(Result::ok)
                .map(|o| String::from_utf8_lossy(&o.stderr).into_owned());
            panic!(
                "{:?} did not finish within {LIMIT:?}; stderr: {stderr:?}",
                cmd.get_program()
            );
        }
    }
}

/// A process group, killed when dropped.
pub(crate) struct Group(pub(crate) u32);

impl Drop for Group {
    fn drop(&mut self) {
        use rustix::process::{Pid, Signal, kill_process_group};
        if let Some(pid) = i32::try_from(self.0).ok().and_then(Pid::from_raw) {
            // Gone already is fine: nothing was left running.
            let _ = kill_process_group(pid, Signal::KILL);
        }
    }
}

/// Seeds `agent`'s MEMORY.md with [`SEED`], with `recall_chars` in an
/// agent file when given; returns the file's path.
pub(crate) fn seed(env: &Env, agent: &str, recall_chars: Option<usize>) -> PathBuf {
    if let Some(chars) = recall_chars {
        env.agent(
            agent,
            &format!(
                "name = \"{agent}\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nrecall_chars = {chars}\n"
            ),
        );
    }
    let memory = env
        .data_dir()
        .join(format!("axe/notes/agents/{agent}/MEMORY.md"));
    env.write(&memory, format!("{SEED}\n"));
    memory
}

/// Runs the client through the script and returns the conversation's
/// requests, each with the tool results it showed the model.
fn converse(env: &Env, client: Client, how: Reflect, bin: &Path) -> Vec<Vec<String>> {
    let model = fake_model(client, how);
    let cmd = match client {
        Client::ClaudeCode => claude(env, bin, &model),
        Client::Codex => codex(env, bin, &model, &readme_block("toml", "[mcp_servers.axe]")),
    };
    finish(cmd, client, &model)
}

/// Runs `cmd`, a client talking to `model`, to its end, which must be a
/// success with the script run through; returns what [`converse`] does.
fn finish(cmd: Command, client: Client, model: &Server) -> Vec<Vec<String>> {
    let out = run_bounded(cmd);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(
        out.status.success(),
        "{:?}\nstdout: {stdout}\nstderr: {stderr}",
        out.status
    );
    let requests: Vec<Vec<String>> = conversation(client, model)
        .iter()
        .map(|body| shown(client, body))
        .collect();
    assert!(
        requests.iter().any(|shown| shown.len() >= 2),
        "the script did not run to its end: {requests:#?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    requests
}

/// The first request after the `n`th tool result: what the model was shown
/// of that tool's result.
pub(crate) fn result(requests: &[Vec<String>], n: usize) -> &str {
    requests
        .iter()
        .find(|shown| shown.len() > n)
        .map(|shown| shown[n].as_str())
        .unwrap_or_else(|| panic!("no request carried tool result {n}: {requests:#?}"))
}

/// The recall's result carries MEMORY.md's text to the model, so the
/// reflect that follows keeps the seeded line.
fn recall_shows_the_memory(client: Client, agent: &str, bin: &Path) {
    let env = Env::new();
    let memory = seed(&env, agent, None);
    let requests = converse(&env, client, Reflect::Plain, bin);
    let recalled = result(&requests, 0);
    assert!(
        recalled.contains(SEED),
        "the model was not shown MEMORY.md: the request after recall carries {recalled:?}; \
         the reflect it made then left MEMORY.md as {:?}",
        read(&memory)
    );
    let reflected = result(&requests, 1);
    assert!(
        !reflected.contains("not overwritten"),
        "a reflect over what was shown was refused: {reflected}"
    );
    assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));
}

/// A recall that leaves MEMORY.md out (a `recall_chars` too small for it)
/// has not shown it: the reflect that follows is refused, with or without
/// whatever hash the recall gave, and the seeded line stays.
fn blind_reflect_is_refused(client: Client, agent: &str, how: Reflect, bin: &Path) {
    let env = Env::new();
    let memory = seed(&env, agent, Some(20));
    let requests = converse(&env, client, how, bin);
    let recalled = result(&requests, 0);
    assert!(
        !recalled.contains(SEED),
        "recall_chars did not keep MEMORY.md out of the recall: {recalled}"
    );
    let reflected = result(&requests, 1);
    assert!(
        reflected.contains("not overwritten"),
        "the blind reflect was not refused: the request after it carries {reflected:?}"
    );
    assert_eq!(
        read(&memory),
        format!("{SEED}\n"),
        "MEMORY.md was overwritten"
    );
}

#[test]
fn claude_code_shows_its_model_the_memory_recall_gave() {
    if let Some(bin) = client_bin("claude", "2.1.") {
        recall_shows_the_memory(Client::ClaudeCode, "claude", &bin);
    }
}

#[test]
fn claude_code_cannot_reflect_over_a_memory_its_model_was_not_shown() {
    if let Some(bin) = client_bin("claude", "2.1.") {
        blind_reflect_is_refused(Client::ClaudeCode, "claude", Reflect::Plain, &bin);
    }
}

#[test]
fn claude_code_cannot_reflect_by_the_hash_of_a_memory_its_model_was_not_shown() {
    if let Some(bin) = client_bin("claude", "2.1.") {
        blind_reflect_is_refused(Client::ClaudeCode, "claude", Reflect::WithHash, &bin);
    }
}

#[test]
fn codex_shows_its_model_the_memory_recall_gave() {
    if let Some(bin) = client_bin("codex", "0.169.") {
        recall_shows_the_memory(Client::Codex, "team", &bin);
    }
}

#[test]
fn codex_cannot_reflect_over_a_memory_its_model_was_not_shown() {
    if let Some(bin) = client_bin("codex", "0.169.") {
        blind_reflect_is_refused(Client::Codex, "team", Reflect::Plain, &bin);
    }
}

#[test]
fn codex_cannot_reflect_by_the_hash_of_a_memory_its_model_was_not_shown() {
    if let Some(bin) = client_bin("codex", "0.169.") {
        blind_reflect_is_refused(Client::Codex, "team", Reflect::WithHash, &bin);
    }
}

/// `claude mcp add` without `-s user` registers the server for the current
/// directory only; the README's line registers it for the user, so it is
/// there from any directory (here `$HOME`, the line having run in a
/// project), and it connects.
#[test]
fn claude_code_lists_the_readme_server_from_any_directory() {
    let Some(bin) = client_bin("claude", "2.1.") else {
        return;
    };
    let env = Env::new();
    claude_mcp_add(&env, &bin, &env.root().join("project"));
    let mut list = client_command(&env, &bin, "claude");
    list.current_dir(env.root().join("home"))
        .args(["mcp", "list"])
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    let out = run_bounded(list);
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(
        listed
            .lines()
            .any(|l| l.starts_with("axe: ") && l.contains("Connected")),
        "`claude mcp list` from $HOME does not show axe connected:\n{listed}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Claude Code and Codex wired exactly as the README says, with the user's
/// `XDG_*` away from the defaults, share one memory: Claude Code's model
/// recalls what the user's shell tools keep and rewrites MEMORY.md; Codex's
/// (which starts its servers without `XDG_*`) is then shown that rewrite
/// and rewrites it in turn, in the same file; nothing lands in the default
/// directories.
#[test]
fn claude_code_and_codex_share_one_memory_as_the_readme_wires_them() {
    let (Some(claude_bin), Some(codex_bin)) =
        (client_bin("claude", "2.1."), client_bin("codex", "0.169."))
    else {
        return;
    };
    let env = Env::new();
    let memory = seed(&env, "team", None);
    claude_mcp_add(&env, &claude_bin, &env.root().join("project"));

    let model = fake_model(Client::ClaudeCode, Reflect::Plain);
    let mut claude = client_command(&env, &claude_bin, "claude");
    claude
        .args(["-p", "Recall your memory, then tidy MEMORY.md."])
        .args(["--output-format", "json", "--tools", ""])
        .args(["--allowedTools", "mcp__axe__recall,mcp__axe__reflect"])
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("ENABLE_TOOL_SEARCH", "false");
    let requests = finish(claude, Client::ClaudeCode, &model);
    assert!(
        result(&requests, 0).contains(SEED),
        "Claude Code's recall did not show the user's memory: {requests:#?}"
    );
    assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));

    // Codex now: it must be shown what Claude Code wrote, and may write.
    let requests = converse(&env, Client::Codex, Reflect::Plain, &codex_bin);
    let recalled = result(&requests, 0);
    assert!(
        recalled.contains(NEW),
        "Codex's recall did not show what Claude Code wrote: {recalled}"
    );
    let reflected = result(&requests, 1);
    assert!(
        !reflected.contains("not overwritten") && !reflected.contains("approval"),
        "Codex's reflect was refused: {reflected}"
    );
    assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));
    let defaults = env.root().join("home/.local/share/axe");
    assert!(
        !defaults.exists(),
        "a client's axe-mcp wrote to the default data directory {}",
        defaults.display()
    );
}

/// One `axe-mcp --http --tokens` for a team: Claude Code registered with
/// the README's `claude mcp add --transport http` line and Codex with its
/// `url` entry, each with a token of its own, share the agent `team`'s
/// memory: Claude Code's model recalls the seeded line and rewrites
/// MEMORY.md, Codex's is shown that rewrite and rewrites it in turn; the
/// server's log names each token, never the token itself. Both speak the
/// stateless revision over HTTP (a `server/discover` first), which keeps
/// no session: their models pass the `memory_sha256` recall showed as
/// `if_match`, as the tools' descriptions ask of a client without one.
#[test]
fn claude_code_and_codex_share_one_memory_over_http() {
    let (Some(claude_bin), Some(codex_bin)) =
        (client_bin("claude", "2.1."), client_bin("codex", "0.169."))
    else {
        return;
    };
    let env = Env::new();
    let memory = seed(&env, "team", None);
    let tokens = env.root().join("tokens.toml");
    let token = |name: &str| {
        let out = env
            .cmd("axe-mcp")
            .args(["token", "add", name, "--agents", "team", "--tokens"])
            .arg(&tokens)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let (laptop, ci) = (token("laptop"), token("ci"));
    // The memory seeded where the owner's agents keep it, served by name.
    let mut server =
        crate::mcp_http::Served::start_own(&env, &["--tokens", tokens.to_str().unwrap()]);
    let address = format!("127.0.0.1:{}", server.port);

    // Claude Code, registered as the README says, with the laptop's token.
    let script = readme_block("sh", "--transport http").replace("127.0.0.1:8765", &address);
    let mut add = client_command(&env, &claude_bin, "bash");
    add.args(["-e", "-c", &script]).env("AXE_TOKEN", &laptop);
    let out = run_bounded(add);
    assert!(
        out.status.success(),
        "{}\n{script}",
        String::from_utf8_lossy(&out.stderr)
    );
    let model = fake_model(Client::ClaudeCode, Reflect::WithHash);
    let mut claude = client_command(&env, &claude_bin, "claude");
    claude
        .args(["-p", "Recall your memory, then tidy MEMORY.md."])
        .args(["--output-format", "json", "--tools", ""])
        .args(["--allowedTools", "mcp__axe__recall,mcp__axe__reflect"])
        .env("ANTHROPIC_BASE_URL", &model.url)
        .env("ANTHROPIC_API_KEY", "sk-ant-fake")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("ENABLE_TOOL_SEARCH", "false");
    let requests = finish(claude, Client::ClaudeCode, &model);
    assert!(
        result(&requests, 0).contains(SEED),
        "Claude Code's recall did not show the memory: {requests:#?}"
    );
    assert!(
        !result(&requests, 1).contains("not overwritten"),
        "{requests:#?}\n{}",
        server.log_now()
    );
    assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));

    // Codex, with the README's `url` entry and the CI token.
    let model = fake_model(Client::Codex, Reflect::WithHash);
    let block = readme_block("toml", "bearer_token_env_var").replace("127.0.0.1:8765", &address);
    let mut codex = codex(&env, &codex_bin, &model, &block);
    codex.env("AXE_TOKEN", &ci);
    let requests = finish(codex, Client::Codex, &model);
    let recalled = result(&requests, 0);
    assert!(
        recalled.contains(NEW),
        "Codex's recall did not show what Claude Code wrote: {recalled}"
    );
    let reflected = result(&requests, 1);
    assert!(
        !reflected.contains("not overwritten") && !reflected.contains("approval"),
        "Codex's reflect was refused: {reflected}"
    );
    assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));

    let (_, log) = server.stop();
    let log = log.join("\n");
    for name in [
        "token=laptop agent=team method=tools/call tool=reflect status=200",
        "token=ci agent=team method=tools/call tool=reflect status=200",
    ] {
        assert!(log.contains(name), "{name} not in the log:\n{log}");
    }
    assert!(!log.contains(&laptop) && !log.contains(&ci), "{log}");
}

/// Claude Code over HTTP speaks the stateless revision: no session, so
/// the server cannot know what its model was shown, and a reflect without
/// `if_match` once got "not shown to you whole … Call recall first", which
/// was false and looped when followed. Now the refusal says what to pass;
/// a model that does as it says (the recall's `memory_sha256` as
/// `if_match`) rewrites MEMORY.md. One whose recall left MEMORY.md out
/// has no hash to pass, and its reflect stays refused.
#[test]
fn claude_code_over_http_reflects_with_the_hash_the_refusal_asks_for() {
    let Some(bin) = client_bin("claude", "2.1.") else {
        return;
    };
    for (recall_chars, shown) in [(None, true), (Some(20), false)] {
        let env = Env::new();
        let memory = seed(&env, "team", recall_chars);
        let tokens = env.root().join("tokens.toml");
        let token = crate::mcp_http::add_token(&env, &tokens, "laptop", &["--agents", "team"]);
        // The owner's own memory, which the test seeds, served by name.
        let server =
            crate::mcp_http::Served::start_own(&env, &["--tokens", tokens.to_str().unwrap()]);
        let address = format!("127.0.0.1:{}", server.port);
        let script = readme_block("sh", "--transport http").replace("127.0.0.1:8765", &address);
        let mut add = client_command(&env, &bin, "bash");
        add.args(["-e", "-c", &script]).env("AXE_TOKEN", &token);
        let out = run_bounded(add);
        assert!(out.status.success(), "{out:?}");
        let model = fake_model(Client::ClaudeCode, Reflect::Follow);
        let mut claude = client_command(&env, &bin, "claude");
        claude
            .args(["-p", "Recall your memory, then tidy MEMORY.md."])
            .args(["--output-format", "json", "--tools", ""])
            .args(["--allowedTools", "mcp__axe__recall,mcp__axe__reflect"])
            .env("ANTHROPIC_BASE_URL", &model.url)
            .env("ANTHROPIC_API_KEY", "sk-ant-fake")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("ENABLE_TOOL_SEARCH", "false");
        let requests = finish(claude, Client::ClaudeCode, &model);
        let refused = result(&requests, 1);
        assert!(
            refused.contains(
                "Pass as if_match the sha256 your recall showed for agents/team/MEMORY.md"
            ),
            "the reflect without if_match was not told what to pass: {refused}\n{}",
            server.log_now()
        );
        match shown {
            true => {
                let done = result(&requests, 2);
                // Claude Code shows the structured content: the new hash.
                assert!(
                    !done.contains("error") && done.contains("agents/team/MEMORY.md"),
                    "the reflect with the hash failed: {done}"
                );
                assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));
            }
            false => {
                assert!(
                    !requests.iter().any(|s| s.len() > 2),
                    "a model not shown MEMORY.md found a hash to pass: {requests:#?}"
                );
                assert_eq!(
                    read(&memory),
                    format!("{SEED}\n"),
                    "MEMORY.md was overwritten"
                );
            }
        }
    }
}

/// Gemini CLI 0.61 (`@google/gemini-cli`, one bundled script, in a prefix
/// of its own beside the other clients and run on their Node 22),
/// headless: `gemini --skip-trust -m MODEL -p PROMPT -o json`. Learnt
/// from `gemini --help`, `gemini mcp add --help`, its bundle and its
/// requests:
/// - the model is `GOOGLE_GEMINI_BASE_URL` with `GEMINI_API_KEY` and the
///   auth type `gemini-api-key` in `~/.gemini/settings.json`
///   (`security.auth.selectedType`; the base URL alone selects a
///   "gateway" auth that headless mode refuses: "Invalid auth method
///   selected", exit 41): `POST /v1beta/models/MODEL:streamGenerateContent
///   ?alt=sse`, server-sent `data:` events of `candidates`. `-m` names the
///   model, which skips its router (a classifier asked for JSON first).
///   Auto-update, telemetry and usage statistics off: a traced run
///   connects to the fake only.
/// - the server is the README's `gemini mcp add -s user --trust …` line,
///   run by bash; without `--trust` headless mode silently offers none of
///   its tools. `--skip-trust`: headless mode refuses a folder not
///   trusted (exit 55).
/// - MCP tools are named `mcp_axe_recall`; Gemini CLI adds
///   `wait_for_previous: boolean` to every tool's schema and tells its
///   model it MUST set it on a call that depends on an earlier one, which
///   the fake model here does on the reflect after the recall.
/// - it is run without `XDG_*`, as under GitHub Actions: the README's
///   `--config-dir` and `--data-dir` bring the server to the memory.
mod gemini {
    use super::*;
    use crate::server::sse_data;

    /// `(clients' .bin, with Node 22; Gemini CLI's .bin)`, when Gemini CLI
    /// 0.61 answers `--version` on that Node; `None`, reported, when not.
    fn bins() -> Option<(PathBuf, PathBuf)> {
        let clients = sdk_dir().join("clients/node_modules/.bin");
        let gemini = sdk_dir().join("gemini/node_modules/.bin");
        let home = tempfile::tempdir().unwrap();
        let version = Command::new(gemini.join("gemini"))
            .arg("--version")
            .env_clear()
            .env("PATH", path(&clients, &gemini))
            .env("HOME", home.path())
            .stdin(Stdio::null())
            .stderr(Stdio::null())
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
            .unwrap_or_default();
        let node = Command::new(clients.join("node"))
            .arg("--version")
            .output()
            .is_ok_and(|out| out.stdout.starts_with(b"v22."));
        if version.starts_with("0.61.") && node {
            Some((clients, gemini))
        } else {
            unavailable(
                &format!(
                    "Gemini CLI 0.61.* in {} and Node 22 in {} are not installed",
                    gemini.display(),
                    clients.display()
                ),
                HOW,
            );
            None
        }
    }

    /// `PATH`: Node 22, Gemini CLI, axe's executables, the system's.
    fn path(clients: &Path, gemini: &Path) -> std::ffi::OsString {
        let axe = Path::new(env!("CARGO_BIN_EXE_axe-mcp")).parent().unwrap();
        let mut dirs = vec![
            clients.to_path_buf(),
            gemini.to_path_buf(),
            axe.to_path_buf(),
        ];
        dirs.extend(std::env::split_paths(
            &std::env::var_os("PATH").unwrap_or_default(),
        ));
        std::env::join_paths(dirs).unwrap()
    }

    /// `program` in a fresh home, with the test's `XDG_*` (as the user's
    /// shell has them when the README's line runs).
    fn command(env: &Env, (clients, gemini): &(PathBuf, PathBuf), program: &str) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(env.root())
            .env_clear()
            .env("PATH", path(clients, gemini))
            .env("HOME", env.root().join("home"))
            .env("XDG_CONFIG_HOME", env.config_dir())
            .env("XDG_DATA_HOME", env.data_dir());
        cmd
    }

    /// Gemini CLI's settings with the README's `gemini mcp add` line run
    /// (with `--trust` taken out when `trusted` is false).
    fn register(env: &Env, bins: &(PathBuf, PathBuf), trusted: bool) {
        env.write(
            &env.root().join("home/.gemini/settings.json"),
            json!({
                "security": {"auth": {"selectedType": "gemini-api-key"}},
                "general": {"disableAutoUpdate": true, "disableUpdateNag": true},
                "telemetry": {"enabled": false},
                "privacy": {"usageStatisticsEnabled": false},
            })
            .to_string(),
        );
        let mut script = readme_block("sh", "gemini mcp add");
        if !trusted {
            script = script.replace("--trust ", "");
        }
        let project = env.root().join("project");
        std::fs::create_dir_all(&project).unwrap();
        let mut add = command(env, bins, "bash");
        add.current_dir(&project).args(["-e", "-c", &script]);
        let out = run_bounded(add);
        assert!(
            out.status.success(),
            "the README's `gemini mcp add` failed: {}\n{script}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// The axe tool of `base` as Gemini CLI offers it in `body`.
    fn offered(body: &Value, base: &str) -> Option<Value> {
        body["tools"]
            .as_array()?
            .iter()
            .filter_map(|t| t["functionDeclarations"].as_array())
            .flatten()
            .find(|f| {
                f["name"]
                    .as_str()
                    .is_some_and(|n| n.starts_with("mcp_axe") && n.ends_with(&format!("_{base}")))
            })
            .cloned()
    }

    /// What every tool result in `body`'s conversation showed the model.
    fn shown(body: &Value) -> Vec<String> {
        let none = Vec::new();
        body["contents"]
            .as_array()
            .unwrap_or(&none)
            .iter()
            .filter_map(|c| c["parts"].as_array())
            .flatten()
            .filter_map(|p| p.get("functionResponse"))
            .map(|r| match &r["response"] {
                Value::Object(o) if o.len() == 1 => match o.values().next() {
                    Some(Value::String(s)) => s.clone(),
                    other => other.map(Value::to_string).unwrap_or_default(),
                },
                other => other.to_string(),
            })
            .collect()
    }

    /// The fake Gemini API: the script's turns where axe's tools are
    /// offered, each dependent call with `wait_for_previous: true` as
    /// Gemini CLI's system prompt asks; a plain "ok" elsewhere.
    fn model() -> Server {
        Server::route(|request| {
            let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
                return Answer::json(400, &json!({"error": {"message": "not JSON"}}));
            };
            if !request.path.contains(":streamGenerateContent")
                && !request.path.contains(":generateContent")
            {
                return Answer::json(404, &json!({"error": {"message": request.path}}));
            }
            let part = match offered(&body, "recall") {
                None => json!({"text": "ok"}),
                Some(_) => {
                    let shown = shown(&body);
                    match next_turn(&shown, Reflect::Plain) {
                        Turn::Call(base, mut args) => {
                            if !shown.is_empty() {
                                args["wait_for_previous"] = json!(true);
                            }
                            let name = offered(&body, base)
                                .and_then(|f| f["name"].as_str().map(str::to_owned))
                                .unwrap_or_else(|| base.to_owned());
                            json!({"functionCall": {"name": name, "args": args}})
                        }
                        Turn::Say(text) => json!({"text": text}),
                    }
                }
            };
            let chunk = json!({
                "candidates": [{"content": {"role": "model", "parts": [part]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1,
                                  "totalTokenCount": 2},
            });
            match request.path.contains("alt=sse") {
                true => Answer::sse(&[sse_data(&chunk.to_string())]),
                false => Answer::json(200, &chunk),
            }
        })
    }

    /// Runs Gemini CLI headless through the script, without `XDG_*`;
    /// returns the requests that offered axe's tools.
    fn converse(env: &Env, bins: &(PathBuf, PathBuf), model: &Server) -> Vec<Value> {
        let mut gemini = command(env, bins, "gemini");
        gemini
            .current_dir(env.root().join("project"))
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_DATA_HOME")
            .args(["--skip-trust", "-m", "gemini-2.5-flash", "-o", "json"])
            .args(["-p", "Recall your memory, then tidy MEMORY.md."])
            .env("GEMINI_API_KEY", "fake-key")
            .env("GOOGLE_GEMINI_BASE_URL", &model.url);
        let out = run_bounded(gemini);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success(),
            "{:?}\nstdout: {stdout}\nstderr: {stderr}",
            out.status
        );
        model
            .requests()
            .iter()
            .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
            .filter(|body| offered(body, "recall").is_some())
            .collect()
    }

    /// The `n`th tool result, from the first request that carries it.
    fn result(requests: &[Value], n: usize) -> String {
        requests
            .iter()
            .map(shown)
            .find(|s| s.len() > n)
            .map(|s| s[n].clone())
            .unwrap_or_else(|| panic!("no request carried tool result {n}: {requests:#?}"))
    }

    /// Gemini CLI registered as the README says, run without `XDG_*`: its
    /// model is shown MEMORY.md by recall and rewrites it with a reflect
    /// that sets `wait_for_previous`, as Gemini CLI's prompt tells it to
    /// (once refused: `unknown argument "wait_for_previous"`).
    #[test]
    fn gemini_cli_reflects_after_a_recall_with_its_wait_for_previous() {
        let Some(bins) = bins() else {
            return;
        };
        let env = Env::new();
        let memory = seed(&env, "team", None);
        register(&env, &bins, true);
        let model = model();
        let requests = converse(&env, &bins, &model);
        let reflect = offered(&requests[0], "reflect").unwrap();
        assert_eq!(
            reflect["parametersJsonSchema"]["properties"]["wait_for_previous"]["type"], "boolean",
            "Gemini CLI no longer adds wait_for_previous: {reflect}"
        );
        let recalled = result(&requests, 0);
        assert!(
            recalled.contains(SEED),
            "recall did not show MEMORY.md: {recalled}"
        );
        let reflected = result(&requests, 1);
        assert!(
            !reflected.contains("unknown argument") && !reflected.contains("not overwritten"),
            "the reflect was refused: {reflected}"
        );
        let sent = requests
            .iter()
            .filter_map(|b| b["contents"].as_array())
            .flatten()
            .filter_map(|c| c["parts"].as_array())
            .flatten()
            .filter_map(|p| p.get("functionCall"))
            .find(|c| c["name"].as_str().is_some_and(|n| n.ends_with("_reflect")))
            .cloned();
        assert_eq!(
            sent.as_ref().map(|c| &c["args"]["wait_for_previous"]),
            Some(&json!(true)),
            "{sent:?}"
        );
        assert_eq!(read(&memory), format!("{SEED}\n{NEW}\n"));
        let defaults = env.root().join("home/.local/share/axe");
        assert!(
            !defaults.exists(),
            "axe-mcp wrote to {}",
            defaults.display()
        );
    }

    /// A recall that leaves MEMORY.md out (`recall_chars` too small) has
    /// not shown it: the reflect after it, `wait_for_previous` and all, is
    /// refused for that, and the seeded line stays.
    #[test]
    fn gemini_cli_cannot_reflect_over_a_memory_its_model_was_not_shown() {
        let Some(bins) = bins() else {
            return;
        };
        let env = Env::new();
        let memory = seed(&env, "team", Some(20));
        register(&env, &bins, true);
        let model = model();
        let requests = converse(&env, &bins, &model);
        let recalled = result(&requests, 0);
        assert!(!recalled.contains(SEED), "{recalled}");
        let reflected = result(&requests, 1);
        assert!(
            reflected.contains("not overwritten") && !reflected.contains("unknown argument"),
            "the blind reflect was not refused for what it is: {reflected}"
        );
        assert_eq!(read(&memory), format!("{SEED}\n"));
    }

    /// Why the README's line says `--trust`: without it `gemini -p` offers
    /// its model none of axe's tools, and says nothing.
    #[test]
    fn gemini_cli_offers_no_tool_of_an_untrusted_server_headless() {
        let Some(bins) = bins() else {
            return;
        };
        let env = Env::new();
        seed(&env, "team", None);
        register(&env, &bins, false);
        let model = model();
        let requests = converse(&env, &bins, &model);
        assert!(requests.is_empty(), "{requests:#?}");
        assert!(
            model
                .requests()
                .iter()
                .any(|r| r.path.contains("GenerateContent")),
            "Gemini CLI did not reach the fake model"
        );
    }
}
