//! `axe-mcp` under opencode 1.18 (`opencode-ai` from npm, a launcher for
//! the native binary of its platform package), run headless against a
//! fake OpenAI-compatible model on loopback, as tests/mcp_clients.rs runs
//! Claude Code and Codex.
//!
//! How it is driven (learnt from `opencode run --help` and a traced run):
//! the project's `opencode.json` names the model (`fake/m`, a provider of
//! the bundled `@ai-sdk/openai-compatible` at the fake's `baseURL`, which
//! it asks `POST /v1/chat/completions`, streamed) and the README's `mcp`
//! entry for axe; `OPENCODE_DISABLE_MODELS_FETCH` and
//! `OPENCODE_DISABLE_AUTOUPDATE` keep it off other hosts. MCP tools are
//! named `axe_recall`; a tool result reaches the model as the text alone
//! (a `role: "tool"` message), cut to its first 2,000 lines or 50 KiB.
//!
//! `opencode serve` keeps one MCP connection for every session it runs
//! (`opencode run --attach URL`), over stdio and over HTTP alike: what one
//! session's model recalled says nothing of what another's saw. So the
//! README's lines have `axe-mcp --require-if-match` on stdio (and HTTP
//! needs `if_match` always): the tests run two sessions on one server, A
//! recalling and rewriting by the hash, B rewriting blind, which must be
//! refused.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_clients::{
    Group, NEW, Reflect, SEED, Turn, client_command, next_turn, readme_block, reflected, result,
    run_bounded, search_path, seed,
};
use crate::mcp_sdk::{HOW, sdk_dir};
use crate::server::{Answer, Server, sse_data};
use crate::util::{Env, read, unavailable};

const VERSION: &str = "1.18.33";

/// What session B is asked: it rewrites MEMORY.md without a recall.
const BLIND: &str = "Without recalling, tidy MEMORY.md.";

/// `<sdk dir>/opencode/node_modules/.bin`, when its `opencode` is
/// [`VERSION`]; `None`, reported, when not.
fn opencode_bin() -> Option<PathBuf> {
    let bin = sdk_dir().join("opencode/node_modules/.bin");
    let home = tempfile::tempdir().unwrap();
    let version = Command::new(bin.join("opencode"))
        .arg("--version")
        .env_clear()
        .env("PATH", search_path(&bin))
        .env("HOME", home.path())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()
        .filter(|out| out.status.success())
        .map(|out| String::from_utf8_lossy(&out.stdout).into_owned())
        .unwrap_or_default();
    if version.trim() == VERSION {
        Some(bin)
    } else {
        unavailable(
            &format!("opencode {VERSION} is not installed in {}", bin.display()),
            HOW,
        );
        None
    }
}

/// The axe tool `base` as a request offers it (`axe_recall`).
fn offered(body: &Value, base: &str) -> Option<String> {
    let suffix = format!("_{base}");
    body["tools"]
        .as_array()?
        .iter()
        .filter_map(|t| t["function"]["name"].as_str())
        .find(|name| name.starts_with("axe") && name.ends_with(&suffix))
        .map(str::to_owned)
}

/// The text of every tool result in a request's conversation, in order.
fn shown(body: &Value) -> Vec<String> {
    let none = Vec::new();
    body["messages"]
        .as_array()
        .unwrap_or(&none)
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            Value::Array(parts) => parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n"),
            other => other.to_string(),
        })
        .collect()
}

/// What the user asked in a request's conversation.
fn asked(body: &Value) -> String {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|m| m["role"] == "user")
                .map(|m| m["content"].to_string())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// The fake model: a conversation that offers the axe tools runs the
/// script (session A: recall, reflect, and as the refusal says, reflect
/// with the hash; session B: a reflect with nothing recalled, then done);
/// any other request (a title) gets "ok".
fn fake_model() -> Server {
    Server::route(|request| {
        if !request.path.starts_with("/v1/chat/completions") {
            return Answer::json(404, &json!({"error": {"message": request.path}}));
        }
        let Ok(body) = serde_json::from_slice::<Value>(&request.body) else {
            return Answer::json(400, &json!({"error": "not JSON"}));
        };
        let shown = shown(&body);
        let turn = match offered(&body, "recall") {
            None => Turn::Say("ok"),
            Some(_) if asked(&body).contains(BLIND) => match shown.len() {
                0 => Turn::Call("reflect", json!({"content": reflected(&shown)})),
                _ => Turn::Say("done"),
            },
            Some(_) => next_turn(&shown, Reflect::Follow),
        };
        chat(&body, turn, shown.len())
    })
}

/// `turn` as a streamed chat completion.
fn chat(body: &Value, turn: Turn, n: usize) -> Answer {
    let (delta, finish) = match turn {
        Turn::Call(base, input) => (
            json!({"role": "assistant", "tool_calls": [{"index": 0, "id": format!("call_{n}"),
                "type": "function", "function": {
                    "name": offered(body, base).unwrap_or_else(|| base.to_owned()),
                    "arguments": input.to_string()}}]}),
            "tool_calls",
        ),
        Turn::Say(text) => (json!({"role": "assistant", "content": text}), "stop"),
    };
    let chunk = |delta: Value, finish: Value| {
        json!({"id": format!("chat_{n}"), "object": "chat.completion.chunk", "created": 1,
            "model": body["model"], "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        .to_string()
    };
    Answer::sse(&[
        sse_data(&chunk(delta, Value::Null)),
        sse_data(&chunk(json!({}), json!(finish))),
        sse_data("[DONE]"),
    ])
}

/// The conversations the model saw: per request offering the axe tools,
/// what the user asked and the tool results.
fn conversations(model: &Server) -> Vec<(String, Vec<String>)> {
    model
        .requests()
        .iter()
        .filter_map(|r| serde_json::from_slice::<Value>(&r.body).ok())
        .filter(|body| offered(body, "recall").is_some())
        .map(|body| (asked(&body), shown(&body)))
        .collect()
}

/// The project's `opencode.json`: the README's block holding `needle`,
/// with the fake model added.
fn configure(env: &Env, project: &Path, model: &Server, needle: &str, address: &str) {
    let block = readme_block("json", needle).replace("127.0.0.1:8765", address);
    let mut config: Value = serde_json::from_str(&block)
        .unwrap_or_else(|e| panic!("the README's opencode block is not JSON: {e}\n{block}"));
    config["model"] = json!("fake/m");
    config["share"] = json!("disabled");
    config["autoupdate"] = json!(false);
    config["provider"] = json!({"fake": {
        "npm": "@ai-sdk/openai-compatible", "name": "fake",
        "options": {"baseURL": format!("{}/v1", model.url), "apiKey": "sk-fake"},
        "models": {"m": {"name": "m"}},
    }});
    env.write(&project.join("opencode.json"), config.to_string());
}

/// `opencode ARGS` in `project`, as a user's shell runs it.
fn opencode(env: &Env, bin: &Path, project: &Path) -> Command {
    let mut cmd = client_command(env, bin, "opencode");
    cmd.current_dir(project)
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1");
    cmd
}

/// `opencode serve`, its whole process group (its `axe-mcp` too) killed
/// and reaped when dropped, even when the test fails.
struct Serving(std::process::Child);

impl Drop for Serving {
    fn drop(&mut self) {
        drop(Group(self.0.id()));
        let _ = self.0.wait();
    }
}

/// A free loopback port.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `opencode serve` for `project` on a free loopback port, once it says
/// it listens there, and its URL. It takes no port 0 (that is its 4096),
/// so a port is chosen first; another test may bind it before opencode
/// does, so the port is taken to be opencode's only once its own line
/// names it (a connect alone could reach the other), and a serve that
/// ended without listening is started again on another port.
fn serve(env: &Env, bin: &Path, project: &Path, token: Option<&str>) -> (Serving, String) {
    let log_path = env.root().join("serve.log");
    for _ in 0..3 {
        let port = free_port();
        let url = format!("http://127.0.0.1:{port}");
        let log = std::fs::File::create(&log_path).unwrap();
        let mut serve = opencode(env, bin, project);
        serve
            .args([
                "serve",
                "--hostname",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log);
        if let Some(token) = token {
            serve.env("AXE_TOKEN", token);
        }
        use std::os::unix::process::CommandExt;
        serve.process_group(0);
        let mut serving = Serving(serve.spawn().unwrap());
        let up = Instant::now();
        loop {
            if read(&log_path).contains(&format!("listening on {url}")) {
                return (serving, url);
            }
            if serving.0.try_wait().unwrap().is_some() {
                break;
            }
            assert!(
                up.elapsed() < Duration::from_secs(60),
                "opencode serve did not listen: {}",
                read(&log_path)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("opencode serve ended three times: {}", read(&log_path));
}

/// One `opencode serve`, two sessions attached to it in turn: A recalls
/// and rewrites MEMORY.md by the hash; B, whose model never saw it, tries
/// to rewrite it blind and is refused. With the README's entry holding
/// `needle`; `address` is axe-mcp's when served over HTTP.
fn two_sessions(env: &Env, bin: &Path, needle: &str, address: &str, token: Option<&str>) {
    let memory = seed(env, "team", None);
    let project = env.root().join("project");
    let model = fake_model();
    configure(env, &project, &model, needle, address);
    let (_serving, url) = serve(env, bin, &project, token);
    for prompt in ["Recall your memory, then tidy MEMORY.md.", BLIND] {
        let mut run = opencode(env, bin, &project);
        run.args(["run", "--attach", &url, "--format", "json", prompt]);
        let out = run_bounded(run);
        assert!(
            out.status.success(),
            "{prompt}: {out:?}\n{}",
            read(&env.root().join("serve.log"))
        );
    }
    let seen = conversations(&model);
    let (a, b): (Vec<_>, Vec<_>) = seen.iter().partition(|(asked, _)| !asked.contains(BLIND));
    let a: Vec<Vec<String>> = a.into_iter().map(|(_, s)| s.clone()).collect();
    assert!(
        result(&a, 0).contains(SEED),
        "session A was not shown MEMORY.md: {a:#?}"
    );
    assert!(
        result(&a, 1).contains("Pass as if_match"),
        "session A's reflect without if_match was not told what to pass: {a:#?}"
    );
    assert!(
        result(&a, 2).contains("MEMORY.md rewritten"),
        "session A's reflect with the hash failed: {a:#?}"
    );
    let blind = b
        .iter()
        .find_map(|(_, s)| s.first())
        .unwrap_or_else(|| panic!("session B never reflected: {seen:#?}"));
    assert!(
        blind.contains("not overwritten"),
        "session B's blind reflect was taken: {blind}"
    );
    assert_eq!(
        read(&memory),
        format!("{SEED}\n{NEW}\n"),
        "MEMORY.md is not session A's"
    );
}

#[test]
fn opencode_serve_sessions_on_stdio_cannot_rewrite_what_another_recalled() {
    let Some(bin) = opencode_bin() else {
        return;
    };
    let env = Env::new();
    two_sessions(&env, &bin, "\"type\": \"local\"", "", None);
}

#[test]
fn opencode_serve_sessions_over_http_cannot_rewrite_what_another_recalled() {
    let Some(bin) = opencode_bin() else {
        return;
    };
    let env = Env::new();
    let tokens = env.root().join("tokens.toml");
    let token = crate::mcp_http::add_token(&env, &tokens, "opencode", &["--agents", "team"]);
    // The owner's own memory, which the test seeds, served by name.
    let server = crate::mcp_http::Served::start_own(&env, &["--tokens", tokens.to_str().unwrap()]);
    let address = format!("127.0.0.1:{}", server.port);
    two_sessions(&env, &bin, "\"type\": \"remote\"", &address, Some(&token));
    assert!(
        server
            .log_now()
            .contains("token=opencode agent=team method=tools/call tool=reflect status=200"),
        "{}",
        server.log_now()
    );
}
