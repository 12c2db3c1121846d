//! Real MCP servers as an agent's tool sources: the reference servers from
//! npm (`@modelcontextprotocol/server-everything` over stdio, streamable
//! HTTP and SSE, `@modelcontextprotocol/server-filesystem` over stdio),
//! and `axe-mcp` itself, one agent using another's memory. The model's
//! calls are scripted through the local provider; each test reads the
//! server's answer in the next request.
//!
//! `tests/mcp/install` (which `.ci/run` runs) puts the servers, pinned,
//! in `servers/` of the SDK directory of `tests/mcp_sdk.rs`; without them
//! (or `node`) a test says it skipped, and fails under `AXE_TEST_ALL`. The
//! HTTP servers get `tests/mcp/loopback.cjs` preloaded, so they listen on
//! 127.0.0.1 at a port the system picks and say which.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::channel;

use serde_json::json;

use crate::mcp_client::{calls, ok, results};
use crate::mcp_sdk::{HOW, sdk_dir};
use crate::run::run;
use crate::server::{PATIENCE, Server};
use crate::util::{Env, have, read, unavailable};

/// The entry point of the installed server `package`, or `None`,
/// reported, when it (or node) is missing.
fn server_script(package: &str) -> Option<PathBuf> {
    if !have("node") {
        return None;
    }
    let script = sdk_dir()
        .join("servers/node_modules/@modelcontextprotocol")
        .join(package)
        .join("dist/index.js");
    if script.is_file() {
        return Some(script);
    }
    unavailable(&format!("{} is not installed", script.display()), HOW);
    None
}

/// A stdio server table running `node SCRIPT ARGS...`.
fn node_server(name: &str, script: &Path, args: &[&str]) -> String {
    let mut all = vec![script.display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    format!(
        "[[mcp_servers]]\nname = \"{name}\"\ntransport = \"stdio\"\ncommand = \"node\"\nargs = {}\n",
        serde_json::to_string(&all).unwrap()
    )
}

#[test]
fn server_everything_over_stdio() {
    let Some(script) = server_script("server-everything") else {
        return;
    };
    let env = Env::new();
    env.agent_file("a")
        .workdir(env.root())
        .toml(&node_server("everything", &script, &["stdio"]))
        .write();
    let server = Server::start(vec![
        calls(&[
            ("c1", "echo", json!({"message": "over stdio"})),
            ("c2", "get-tiny-image", json!({})),
            ("c3", "get-sum", json!({"a": 2, "b": 3})),
        ]),
        ok("done"),
    ]);
    run(&env, &server.url)
        .arg("a")
        .assert()
        .success()
        .stdout("done");
    let got = results(&server);
    assert_eq!(got[0]["content"], "Echo: over stdio");
    let image = got[1]["content"].as_str().unwrap();
    assert!(
        image.starts_with("Here's the image you requested:\n[image: image/png, ")
            && image.ends_with(" bytes]\nThe image above is the MCP logo."),
        "{image}"
    );
    assert!(
        got[2]["content"].as_str().unwrap().contains('5'),
        "{}",
        got[2]
    );
    assert!(got.iter().all(|r| r["is_error"] == false));
}

#[test]
fn server_filesystem_over_stdio() {
    let Some(script) = server_script("server-filesystem") else {
        return;
    };
    let env = Env::new();
    let root = env.root().join("shared");
    env.write(&root.join("notes.txt"), "the build is green\n");
    let root_arg = root.display().to_string();
    env.agent_file("a")
        .workdir(env.root())
        .toml(&node_server("fs", &script, &[&root_arg]))
        .write();
    let server = Server::start(vec![
        calls(&[
            (
                "c1",
                "read_text_file",
                json!({"path": root.join("notes.txt")}),
            ),
            ("c2", "read_text_file", json!({"path": "/etc/passwd"})),
        ]),
        ok("read"),
    ]);
    run(&env, &server.url).arg("a").assert().success();
    let got = results(&server);
    assert_eq!(got[0]["content"], "the build is green\n");
    assert_eq!(got[0]["is_error"], false);
    assert_eq!(got[1]["is_error"], true, "outside its root: {}", got[1]);
}

/// A server-everything over HTTP (`streamableHttp` or `sse`), stopped when
/// dropped; its stdout and stderr kept in `log`.
struct HttpServer {
    child: Child,
    port: u16,
    log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl HttpServer {
    fn start(script: &Path, mode: &str) -> HttpServer {
        let hook = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/loopback.cjs");
        let mut child = Command::new("node")
            .arg("--require")
            .arg(hook)
            .arg(script)
            .arg(mode)
            .env("PORT", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (port_tx, port_rx) = channel();
        for pipe in [
            Box::new(child.stdout.take().unwrap()) as Box<dyn std::io::Read + Send>,
            Box::new(child.stderr.take().unwrap()),
        ] {
            let (log, port_tx) = (log.clone(), port_tx.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    if let Some(port) = line.strip_prefix("axe-test-port ") {
                        let _ = port_tx.send(port.parse::<u16>().unwrap());
                    }
                    log.lock().unwrap().push_str(&format!("{line}\n"));
                }
            });
        }
        let port = port_rx
            .recv_timeout(PATIENCE)
            .expect("the server said on which port it listens");
        HttpServer { child, port, log }
    }

    fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    /// The log once it holds `line`, or as it is after [`PATIENCE`].
    fn log_once_it_says(&self, line: &str) -> String {
        let deadline = std::time::Instant::now() + PATIENCE;
        loop {
            let log = self.log();
            if log.contains(line) || std::time::Instant::now() > deadline {
                return log;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An agent on `transport` at `url` calls `echo`; its answer comes back.
fn echo_over_http(transport: &str, url: &str) {
    let env = Env::new();
    env.agent_file("a").workdir(env.root()).toml(&format!(
            "[[mcp_servers]]\nname = \"everything\"\ntransport = \"{transport}\"\nurl = \"{url}\"\nheaders = {{ X-Axe-Test = \"${{AXE_TEST_HEADER}}\" }}\n"
        )).write();
    let server = Server::start(vec![
        calls(&[("c1", "echo", json!({"message": transport}))]),
        ok("done"),
    ]);
    run(&env, &server.url)
        .arg("a")
        .env("AXE_TEST_HEADER", "on every request")
        .assert()
        .success()
        .stdout("done");
    assert_eq!(results(&server)[0]["content"], format!("Echo: {transport}"));
}

#[test]
fn server_everything_over_streamable_http() {
    let Some(script) = server_script("server-everything") else {
        return;
    };
    let http = HttpServer::start(&script, "streamableHttp");
    echo_over_http(
        "streamable-http",
        &format!("http://127.0.0.1:{}/mcp", http.port),
    );
    // The session it gave was kept for every request and ended at the end.
    // axe-run may exit before the server has logged the end it was sent,
    // or before the thread reading its log has read it: wait for the line.
    let log = http.log_once_it_says("Received session termination request for session ");
    assert!(log.contains("Session initialized with ID: "), "{log}");
    assert!(
        log.contains("Received session termination request for session "),
        "{log}"
    );
}

#[test]
fn server_everything_over_sse() {
    let Some(script) = server_script("server-everything") else {
        return;
    };
    let http = HttpServer::start(&script, "sse");
    echo_over_http("sse", &format!("http://127.0.0.1:{}/sse", http.port));
    assert!(http.log().contains("Client Connected: "), "{}", http.log());
}

#[test]
fn an_agent_uses_another_agents_memory_through_axe_mcp() {
    let env = Env::new();
    env.agent(
        "keeper",
        "name = \"keeper\"\nmodel = \"anthropic/claude-test\"\n[notes]\nenabled = true\n",
    );
    env.agent_file("visitor").workdir(env.root()).toml("[[mcp_servers]]\nname = \"keeper-memory\"\ntransport = \"stdio\"\ncommand = \"axe-mcp\"\nargs = [\"keeper\"]\n").write();
    let bins = assert_cmd::cargo::cargo_bin("axe-mcp");
    let path = std::env::join_paths(std::iter::once(bins.parent().unwrap().to_path_buf()).chain(
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()),
    ))
    .unwrap();
    let server = Server::start(vec![
        calls(&[("c1", "remember", json!({"content": "the visitor was here"}))]),
        calls(&[("c2", "search_notes", json!({"query": "visitor"}))]),
        ok("noted"),
    ]);
    run(&env, &server.url)
        .arg("visitor")
        .env("PATH", path)
        .assert()
        .success()
        .stdout("noted");
    // Written into keeper's notes, by axe-mcp's own tools.
    let daily = env.data_dir().join("axe/notes/agents/keeper/daily");
    let written: String = std::fs::read_dir(&daily)
        .unwrap()
        .map(|f| read(&f.unwrap().path()))
        .collect();
    assert!(written.contains("the visitor was here"), "{written}");
    let reqs = server.requests();
    let found = &reqs[2].json()["messages"][4]["content"][0];
    assert_eq!(found["is_error"], false);
    assert!(
        found["content"]
            .as_str()
            .unwrap()
            .contains("the visitor was here"),
        "{found}"
    );
}
