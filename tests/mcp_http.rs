//! `axe-mcp --http`: the streamable HTTP transport spoken to byte by byte,
//! as a client (or an attacker) would: sessions and the stateless
//! revision, the same tools as stdio, Origin and Host, bounds, slow
//! clients, the log line and SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use crate::mcp::ALL_TOOLS;
use crate::util::Env;

/// A running `axe-mcp --http` and what it has said on stderr.
pub struct Served {
    pub child: Child,
    pub port: u16,
    log: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// Starts `axe-mcp --http 127.0.0.1:0 ARGS` and waits for the line
    /// saying where it listens.
    pub fn start(env: &Env, args: &[&str]) -> Served {
        let mut child = env
            .std_cmd("axe-mcp")
            .args(["--http", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        stderr.read_line(&mut first).unwrap();
        let port = first
            .split("127.0.0.1:")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        let log = Arc::new(Mutex::new(Vec::new()));
        let lines = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        Served {
            child,
            port,
            log,
            reader: Some(reader),
        }
    }

    /// One request on a connection of its own.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        send_to(self.port, method, path, headers, body)
    }

    /// A POST of `message` to `/mcp/<agent>` with the usual headers and
    /// `extra`.
    pub fn post(&self, agent: &str, extra: &[(&str, &str)], message: &Value) -> Answer {
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        headers.extend_from_slice(extra);
        self.send(
            "POST",
            &format!("/mcp/{agent}"),
            &headers,
            &message.to_string(),
        )
    }

    /// A session begun with `initialize`: its id.
    pub fn initialize(&self, agent: &str, extra: &[(&str, &str)]) -> String {
        let a = self.post(agent, extra, &request(1, "initialize", init_params()));
        assert_eq!(a.status, 200, "{a:?}");
        assert_eq!(a.json()["result"]["protocolVersion"], "2025-11-25");
        let id = a.header("mcp-session-id").expect("a session id").to_owned();
        let mut headers = vec![("Mcp-Session-Id", id.as_str())];
        headers.extend_from_slice(extra);
        let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        assert_eq!(self.post(agent, &headers, &note).status, 202);
        id
    }

    /// What the server has said on stderr so far.
    pub fn log_now(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    /// Stops the server with SIGTERM: how it ended, and every line it
    /// wrote on stderr.
    pub fn stop(&mut self) -> (std::process::ExitStatus, Vec<String>) {
        assert_eq!(term(self.child.id()), 0);
        let status = self.child.wait().unwrap();
        if let Some(r) = self.reader.take() {
            r.join().unwrap();
        }
        (status, self.log.lock().unwrap().clone())
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {:?}", self.body))
    }
}

/// One request to the server on `port`, on a connection of its own.
pub fn send_to(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Answer {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head =
        format!("{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n");
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    conn.write_all(head.as_bytes()).unwrap();
    read_answer(&mut conn)
}

pub fn read_answer(conn: &mut TcpStream) -> Answer {
    let mut all = Vec::new();
    conn.read_to_end(&mut all).unwrap();
    let text = String::from_utf8(all).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.to_owned(), v.trim().to_owned()))
        .collect();
    Answer {
        status,
        headers,
        body: body.to_owned(),
    }
}

pub fn request(id: u64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A request of the stateless revision: its version and the client's
/// capabilities in `_meta`.
pub fn stateless(id: u64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    request(id, method, params)
}

fn init_params() -> Value {
    json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
}

fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

#[test]
fn a_session_gets_the_same_tools_as_stdio_and_writes_one_memory() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    let s = server.initialize("team", &[]);
    let session = [("Mcp-Session-Id", s.as_str())];
    let listed = server.post("team", &session, &request(2, "tools/list", json!({})));
    let names: Vec<String> = listed.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ALL_TOOLS);
    let said = server.post(
        "team",
        &session,
        &request(
            3,
            "tools/call",
            call(
                "remember",
                json!({"content": "the deploy key rotates on Mondays"}),
            ),
        ),
    );
    assert_eq!(said.json()["result"]["isError"], false, "{said:?}");
    // Another client, its own session, reads what the first wrote.
    let t = server.initialize("team", &[]);
    let recalled = server.post(
        "team",
        &[("Mcp-Session-Id", t.as_str())],
        &request(2, "tools/call", call("recall", json!({}))),
    );
    assert!(recalled.body.contains("rotates on Mondays"), "{recalled:?}");
    // The file is the one stdio's server and the executables use.
    let stdio = env.cmd("axe-notes-recall").arg("team").output().unwrap();
    assert!(String::from_utf8_lossy(&stdio.stdout).contains("rotates on Mondays"));

    // Without a session, with an unknown one, on another agent's
    // endpoint, or once ended: refused.
    let no = server.post("team", &[], &request(4, "tools/list", json!({})));
    assert_eq!(no.status, 400, "{no:?}");
    let unknown = server.post(
        "team",
        &[("Mcp-Session-Id", "feed")],
        &request(4, "ping", json!({})),
    );
    assert_eq!(unknown.status, 404);
    let elsewhere = server.post("other", &session, &request(4, "ping", json!({})));
    assert_eq!(elsewhere.status, 404);
    let ended = server.send("DELETE", "/mcp/team", &session, "");
    assert_eq!(ended.status, 204);
    let after = server.post("team", &session, &request(5, "ping", json!({})));
    assert_eq!(after.status, 404);
    // A version the server does not speak, in the header.
    let v = [
        ("Mcp-Session-Id", t.as_str()),
        ("MCP-Protocol-Version", "1999-01-01"),
    ];
    assert_eq!(
        server
            .post("team", &v, &request(6, "ping", json!({})))
            .status,
        400
    );
    // No stream of the server's own: GET is 405.
    assert_eq!(
        server
            .send("GET", "/mcp/team", &[("Accept", "text/event-stream")], "")
            .status,
        405
    );
}

#[test]
fn an_answer_is_an_event_stream_when_only_that_is_accepted() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    let a = server.send(
        "POST",
        "/mcp/team",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "text/event-stream"),
        ],
        &request(1, "initialize", init_params()).to_string(),
    );
    assert_eq!(a.status, 200);
    assert_eq!(a.header("content-type"), Some("text/event-stream"));
    let data = a
        .body
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .unwrap();
    let reply: Value = serde_json::from_str(data).unwrap();
    assert_eq!(reply["result"]["serverInfo"]["name"], "axe-mcp");
    let bad = server.send(
        "POST",
        "/mcp/team",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "text/html"),
        ],
        "{}",
    );
    assert_eq!(bad.status, 406);
    let text = server.send("POST", "/mcp/team", &[("Content-Type", "text/plain")], "{}");
    assert_eq!(text.status, 415);
    let broken = server.post("team", &[], &json!("x"));
    assert_eq!(
        broken.status, 400,
        "a string is no initialize and names no session"
    );
    let unparsable = server.send(
        "POST",
        "/mcp/team",
        &[("Content-Type", "application/json")],
        "{",
    );
    assert_eq!(unparsable.status, 400);
    assert_eq!(unparsable.json()["error"]["code"], -32700);
}

/// The stateless revision: no session, the headers checked against the
/// body (HeaderMismatch, -32020), lists with how to cache them.
#[test]
fn the_stateless_revision_checks_its_headers_and_needs_no_session() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    let v = ("MCP-Protocol-Version", "2026-07-28");
    let remember = stateless(
        1,
        "tools/call",
        call("remember", json!({"content": "stateless note"})),
    );
    let ok = server.post(
        "team",
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "remember")],
        &remember,
    );
    assert_eq!(ok.status, 200, "{ok:?}");
    assert_eq!(ok.json()["result"]["resultType"], "complete");
    assert_eq!(ok.json()["result"]["isError"], false);
    assert!(ok.header("mcp-session-id").is_none());

    for (headers, why) in [
        (vec![v, ("Mcp-Name", "remember")], "no Mcp-Method"),
        (
            vec![v, ("Mcp-Method", "tools/list"), ("Mcp-Name", "remember")],
            "another method",
        ),
        (
            vec![v, ("Mcp-Method", "TOOLS/CALL"), ("Mcp-Name", "remember")],
            "a method's case",
        ),
        (vec![v, ("Mcp-Method", "tools/call")], "no Mcp-Name"),
        (
            vec![v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "recall")],
            "another name",
        ),
    ] {
        let a = server.post("team", &headers, &remember);
        assert_eq!(a.status, 400, "{why}: {a:?}");
        assert_eq!(a.json()["error"]["code"], -32020, "{why}");
    }
    // Header names are case-free; whitespace around a value is not part of it.
    let spaced = server.post(
        "team",
        &[
            ("mcp-protocol-version", "2026-07-28"),
            ("MCP-METHOD", "tools/list"),
        ],
        &stateless(2, "tools/list", json!({})),
    );
    let list = spaced.json()["result"].clone();
    assert_eq!(list["cacheScope"], "private", "{spaced:?}");
    assert_eq!(list["ttlMs"], 0);
    assert_eq!(list["tools"].as_array().unwrap().len(), ALL_TOOLS.len());
    let discover = server.post(
        "team",
        &[("Mcp-Method", "server/discover")],
        &stateless(3, "server/discover", json!({})),
    );
    assert!(
        discover.json()["result"]["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    // Nothing written twice, nothing lost: one entry.
    let recalled = server.post(
        "team",
        &[v, ("Mcp-Method", "tools/call"), ("Mcp-Name", "recall")],
        &stateless(4, "tools/call", call("recall", json!({}))),
    );
    assert_eq!(
        recalled.body.matches("stateless note").count(),
        2,
        "text and data: {recalled:?}"
    );
    // A request without its _meta is invalid (400, -32602); a version not
    // spoken is named with those that are (400, -32022); what the
    // revision removed is not found (404, -32601).
    let bare = server.post(
        "team",
        &[v, ("Mcp-Method", "tools/list")],
        &request(5, "tools/list", json!({})),
    );
    assert_eq!(
        (bare.status, bare.json()["error"]["code"].clone()),
        (400, json!(-32602))
    );
    let old = server.post(
        "team",
        &[
            ("MCP-Protocol-Version", "2099-01-01"),
            ("Mcp-Method", "tools/list"),
        ],
        &stateless(6, "tools/list", json!({})),
    );
    assert_eq!(
        (old.status, old.json()["error"]["code"].clone()),
        (400, json!(-32022))
    );
    assert!(
        old.json()["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
    for method in ["initialize", "ping"] {
        let gone = server.post(
            "team",
            &[v, ("Mcp-Method", method)],
            &stateless(7, method, json!({})),
        );
        assert_eq!(
            (gone.status, gone.json()["error"]["code"].clone()),
            (404, json!(-32601)),
            "{method}"
        );
        assert_eq!(gone.json()["id"], 7);
    }
}

#[test]
fn a_foreign_origin_or_host_is_refused_and_a_preflight_answered() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    let ping = request(1, "initialize", init_params()).to_string();
    let json = ("Content-Type", "application/json");
    let foreign = server.send(
        "POST",
        "/mcp/team",
        &[json, ("Origin", "http://evil.example.com")],
        &ping,
    );
    assert_eq!(foreign.status, 403);
    assert!(foreign.header("access-control-allow-origin").is_none());
    // DNS rebinding: the attacker's name resolves to 127.0.0.1.
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        conn,
        "POST /mcp/team HTTP/1.1\r\nHost: evil.example.com\r\nOrigin: http://evil.example.com\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{ping}",
        ping.len()
    )
    .unwrap();
    assert_eq!(read_answer(&mut conn).status, 403);
    let local = format!("http://localhost:{}", server.port);
    let fine = server.send("POST", "/mcp/team", &[json, ("Origin", &local)], &ping);
    assert_eq!(fine.status, 200);
    assert_eq!(
        fine.header("access-control-allow-origin"),
        Some(local.as_str())
    );

    let preflight = [
        ("Origin", local.as_str()),
        ("Access-Control-Request-Method", "POST"),
        (
            "Access-Control-Request-Headers",
            "content-type, mcp-session-id",
        ),
    ];
    let answered = server.send("OPTIONS", "/mcp/team", &preflight, "");
    assert_eq!(answered.status, 204);
    assert!(
        answered
            .header("access-control-allow-methods")
            .unwrap()
            .contains("POST")
    );
    assert!(
        answered
            .header("access-control-allow-headers")
            .unwrap()
            .contains("Mcp-Session-Id")
    );
    let evil = server.send(
        "OPTIONS",
        "/mcp/team",
        &[("Origin", "https://evil.example.com")],
        "",
    );
    assert_eq!(evil.status, 403);
    // Only /mcp/<AGENT>, and an agent's name is one word.
    for path in [
        "/",
        "/mcp/",
        "/mcp/../x",
        "/mcp/%2e%2e",
        "/mcp/a/b",
        "/mcp/.hidden",
    ] {
        assert_eq!(
            server.send("POST", path, &[json], &ping).status,
            404,
            "{path}"
        );
    }
}

#[test]
fn bodies_are_bounded_and_slow_clients_hold_no_worker() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    // A body over 16 MiB is refused from its length, unsent.
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        conn,
        "POST /mcp/team HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        (16 << 20) + 1
    )
    .unwrap();
    assert_eq!(read_answer(&mut conn).status, 413);
    // A head that never ends is cut off at its bound.
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    let huge = format!("GET /mcp/team HTTP/1.1\r\nX: {}", "a".repeat(64 << 10));
    let _ = conn.write_all(huge.as_bytes());
    assert_eq!(read_answer(&mut conn).status, 431);
    // A client that waits to be asked for its body (curl) is asked.
    let body = request(1, "initialize", init_params()).to_string();
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        conn,
        "POST /mcp/team HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nExpect: 100-continue\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    let mut continued = [0u8; 25];
    conn.read_exact(&mut continued).unwrap();
    assert_eq!(&continued, b"HTTP/1.1 100 Continue\r\n\r\n");
    conn.write_all(body.as_bytes()).unwrap();
    assert_eq!(read_answer(&mut conn).status, 200);
    // Chunked bodies are not taken (a smuggling surface behind proxies).
    let chunked = server.send("POST", "/mcp/team", &[("Transfer-Encoding", "chunked")], "");
    assert_eq!(chunked.status, 411);
    // Slowloris: many connections, each sending half a head and waiting;
    // a client after them is answered at once all the same.
    let slow: Vec<TcpStream> = (0..40)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            c.write_all(b"POST /mcp/team HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
                .unwrap();
            c
        })
        .collect();
    let started = std::time::Instant::now();
    let a = server.post("team", &[], &request(1, "initialize", init_params()));
    assert_eq!(a.status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    drop(slow);
}

#[test]
fn one_log_line_per_request_without_token_or_memory_text() {
    let env = Env::new();
    let tokens = env.root().join("tokens.toml");
    let secret = "s3cret-token-value";
    env.write(
        &tokens,
        format!(
            "[[token]]\nname = \"ci\"\nsha256 = \"{}\"\nagents = \"*\"\n",
            sha256_hex(secret)
        ),
    );
    let server = Served::start(&env, &["--tokens", tokens.to_str().unwrap()]);
    let bearer = format!("Bearer {secret}");
    let auth = ("Authorization", bearer.as_str());
    let s = server.initialize("team", &[auth]);
    let said = server.post(
        "team",
        &[auth, ("Mcp-Session-Id", &s)],
        &request(
            2,
            "tools/call",
            call("remember", json!({"content": "private words here"})),
        ),
    );
    assert_eq!(said.json()["result"]["isError"], false);
    drop(server.send(
        "POST",
        "/mcp/team",
        &[("Content-Type", "application/json")],
        "{}",
    ));
    let mut server = server;
    // Every line is written once the server has ended.
    let (_, log) = server.stop();
    let lines: Vec<&String> = log
        .iter()
        .filter(|l| l.contains(" axe-mcp: token="))
        .collect();
    assert_eq!(lines.len(), 4, "{log:?}");
    assert!(
        lines[0].contains("token=ci agent=team method=initialize tool=- status=200 ms="),
        "{}",
        lines[0]
    );
    assert!(
        lines[2].contains("token=ci agent=team method=tools/call tool=remember status=200"),
        "{}",
        lines[2]
    );
    assert!(
        lines[3].contains("token=- agent=team method=- tool=- status=401"),
        "{}",
        lines[3]
    );
    let all = log.join("\n");
    assert!(
        !all.contains(secret) && !all.contains("private words"),
        "{all}"
    );
}

#[test]
fn only_a_loopback_address_is_served_without_tokens() {
    let env = Env::new();
    env.cmd("axe-mcp")
        .args(["--http", "0.0.0.0:0"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("needs --tokens FILE"));
    env.cmd("axe-mcp")
        .args(["--http", "127.0.0.1:0", "team"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "cannot specify both --http and an agent name",
        ));
    env.cmd("axe-mcp")
        .args(["--tokens", "t.toml", "team"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "--http is required with --tokens",
        ));
}

/// SIGTERM: no new connection is taken, and a request in flight (its
/// body half sent) is still answered and its write made, before the
/// process ends of the signal.
#[test]
fn sigterm_drains_a_request_in_flight_then_stops() {
    let env = Env::new();
    let mut server = Served::start(&env, &[]);
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": "written while stopping"}, "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}}}}).to_string();
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        conn,
        "POST /mcp/team HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMcp-Method: tools/call\r\nMcp-Name: remember\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        &body[..10]
    )
    .unwrap();
    // The server has the head (a second client is answered meanwhile).
    assert_eq!(
        server
            .post("team", &[], &request(1, "initialize", init_params()))
            .status,
        200
    );
    assert_eq!(term(server.child.id()), 0);
    // Once the signal is taken, no connection is.
    while TcpStream::connect(("127.0.0.1", server.port)).is_ok() {
        std::thread::yield_now();
    }
    conn.write_all(&body.as_bytes()[10..]).unwrap();
    let a = read_answer(&mut conn);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["result"]["isError"], false);
    let status = server.child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15));
    let notes = env.cmd("axe-notes-recall").arg("team").output().unwrap();
    assert!(String::from_utf8_lossy(&notes.stdout).contains("written while stopping"));
}

fn term(pid: u32) -> i32 {
    std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .map_or(-1, |s| s.code().unwrap_or(-1))
}

pub fn sha256_hex(text: &str) -> String {
    let out = std::process::Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            c.stdin.take().unwrap().write_all(text.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// `axe-mcp token add` then `--tokens`: no token 401, a wrong one 401,
/// one that does not reach the agent 403, a read-only one offered only
/// the reading tools; a session is its token's alone.
#[test]
fn tokens_decide_who_reaches_which_memory_and_how() {
    let env = Env::new();
    let file = env.root().join("conf/tokens.toml");
    let add = |name: &str, extra: &[&str]| {
        let out = env
            .cmd("axe-mcp")
            .args(["token", "add", name, "--tokens", file.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();
        assert!(token.starts_with("axe_") && token.len() == 68, "{token}");
        token
    };
    let alice = add("alice", &["--agents", "team,ops"]);
    let ci = add("ci", &["--agents", "*", "--read-only"]);
    assert_eq!(crate::util::mode(&file), 0o600);
    let text = crate::util::read(&file);
    assert!(
        !text.contains(&alice) && !text.contains(&ci),
        "only digests: {text}"
    );
    assert!(text.contains(&sha256_hex(&alice)));
    // A name twice, or agents that are no names: refused, file unchanged.
    for extra in [
        &["ci", "--agents", "team"][..],
        &["bob", "--agents", "../x"],
        &["bob", "--agents", "*,team"],
    ] {
        env.cmd("axe-mcp")
            .args(["token", "add", "--tokens", file.to_str().unwrap()])
            .args(extra)
            .assert()
            .code(1);
    }
    assert_eq!(crate::util::read(&file), text);

    let server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let init = request(1, "initialize", init_params());
    let none = server.post("team", &[], &init);
    assert_eq!(none.status, 401);
    assert!(
        none.header("www-authenticate")
            .unwrap()
            .starts_with("Bearer")
    );
    assert_eq!(
        server
            .post("team", &[("Authorization", "Bearer axe_nope")], &init)
            .status,
        401
    );
    let a = format!("Bearer {alice}");
    let alice_auth = ("Authorization", a.as_str());
    assert_eq!(server.post("other", &[alice_auth], &init).status, 403);
    let s = server.initialize("team", &[alice_auth]);
    let wrote = server.post(
        "team",
        &[alice_auth, ("Mcp-Session-Id", &s)],
        &request(
            2,
            "tools/call",
            call("remember", json!({"content": "alice was here"})),
        ),
    );
    assert_eq!(wrote.json()["result"]["isError"], false);
    // ci reaches every agent but only reads; alice's session is not its.
    let c = format!("Bearer {ci}");
    let ci_auth = ("Authorization", c.as_str());
    assert_eq!(
        server
            .post(
                "team",
                &[ci_auth, ("Mcp-Session-Id", &s)],
                &request(3, "ping", json!({}))
            )
            .status,
        404
    );
    let cs = server.initialize("team", &[ci_auth]);
    let listed = server.post(
        "team",
        &[ci_auth, ("Mcp-Session-Id", &cs)],
        &request(2, "tools/list", json!({})),
    );
    let names: Vec<String> = listed.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "recall",
            "search_notes",
            "context",
            "state_context",
            "log_recent"
        ]
    );
    let refused = server.post(
        "team",
        &[ci_auth, ("Mcp-Session-Id", &cs)],
        &request(
            3,
            "tools/call",
            call("remember", json!({"content": "ci writes"})),
        ),
    );
    assert!(
        refused.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool"),
        "{refused:?}"
    );
    let read = server.post(
        "team",
        &[ci_auth, ("Mcp-Session-Id", &cs)],
        &request(4, "tools/call", call("recall", json!({}))),
    );
    assert!(read.body.contains("alice was here"));
    // Stateless too: the token's rights hold without a session.
    let stateless = server.post(
        "team",
        &[
            ci_auth,
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "remember"),
        ],
        &stateless(
            5,
            "tools/call",
            call("remember", json!({"content": "ci writes"})),
        ),
    );
    assert!(stateless.body.contains("unknown tool"), "{stateless:?}");

    // A token added while the server runs works at once; a file broken
    // meanwhile takes no token until it is mended.
    let late = add("late", &["--agents", "team"]);
    let l = format!("Bearer {late}");
    let with_late = [("Authorization", l.as_str())];
    assert_eq!(server.post("team", &with_late, &init).status, 200);
    let whole = crate::util::read(&file);
    env.write(&file, "[[token]\nbroken");
    assert_eq!(server.post("team", &with_late, &init).status, 401);
    env.write(&file, whole);
    assert_eq!(server.post("team", &with_late, &init).status, 200);
    let mut server = server;
    let (_, log) = server.stop();
    assert!(
        log.iter()
            .any(|l| l.contains("no token is taken until it is mended")),
        "{log:?}"
    );
}

/// The official suite's server scenarios that apply to a memory server,
/// each with the checks it cannot pass here and why: all of them call a
/// fixture tool of the suite's own reference server, or need prompts.
const APPLIES: &[(&str, &[(&str, &str)])] = &[
    ("server-initialize", &[]),
    ("server-session-lifecycle", &[]),
    (
        "server-stateless",
        &[
            (
                "sep-2575-server-rejects-undeclared-capability",
                "calls the fixture tool test_missing_capability",
            ),
            (
                "sep-2575-missing-capability-http-400",
                "calls the fixture tool test_missing_capability",
            ),
            (
                "sep-2575-http-server-no-independent-requests-on-stream",
                "calls the fixture tool test_streaming_elicitation",
            ),
            (
                "sep-2575-server-no-log-without-loglevel",
                "calls the fixture tool test_logging_tool",
            ),
        ],
    ),
    ("ping", &[]),
    ("tools-list", &[]),
    ("resources-list", &[]),
    ("sep-2164-resource-not-found", &[]),
    ("dns-rebinding-protection", &[]),
    (
        "caching",
        &[(
            "sep-2549-prompts-list-caching-hints",
            "a memory server has no prompts",
        )],
    ),
    ("http-header-validation", &[]),
    ("server-sse-multiple-streams", &[]),
];

/// The server scenarios that do not apply, and why.
pub const NOT_APPLICABLE: &[(&str, &str)] = &[
    (
        "server-sse-polling",
        "calls the suite's fixture tool test_reconnection (and 2026-07-28 removed it): it checks nothing here",
    ),
    (
        "logging-set-level",
        "no logging capability (and 2026-07-28 removed logging/setLevel)",
    ),
    (
        "completion-complete",
        "no prompts or templates with arguments to complete",
    ),
    ("tools-call-simple-text", "calls the suite's fixture tool"),
    ("tools-call-image", "calls the suite's fixture tool"),
    ("tools-call-audio", "calls the suite's fixture tool"),
    (
        "tools-call-embedded-resource",
        "calls the suite's fixture tool",
    ),
    ("tools-call-mixed-content", "calls the suite's fixture tool"),
    ("tools-call-with-logging", "calls the suite's fixture tool"),
    ("tools-call-error", "calls the suite's fixture tool"),
    ("tools-call-with-progress", "calls the suite's fixture tool"),
    ("tools-call-sampling", "calls the suite's fixture tool"),
    ("tools-call-elicitation", "calls the suite's fixture tool"),
    ("json-schema-2020-12", "calls the suite's fixture tool"),
    (
        "elicitation-sep1034-defaults",
        "calls the suite's fixture tool",
    ),
    (
        "elicitation-sep1330-enums",
        "calls the suite's fixture tool",
    ),
    (
        "resources-read-text",
        "reads the suite's fixture resources (test://...)",
    ),
    (
        "resources-read-binary",
        "reads the suite's fixture resources (test://...)",
    ),
    (
        "resources-templates-read",
        "reads the suite's fixture resources (test://...)",
    ),
    (
        "resources-subscribe",
        "no subscriptions: memory is read when asked",
    ),
    (
        "resources-unsubscribe",
        "no subscriptions: memory is read when asked",
    ),
    ("prompts-list", "a memory server has no prompts"),
    ("prompts-get-simple", "a memory server has no prompts"),
    ("prompts-get-with-args", "a memory server has no prompts"),
    (
        "prompts-get-embedded-resource",
        "a memory server has no prompts",
    ),
    ("prompts-get-with-image", "a memory server has no prompts"),
    (
        "http-custom-header-server-validation",
        "no tool declares x-mcp-header parameters",
    ),
    (
        "input-required-result-",
        "no tool asks the client for input (MRTR)",
    ),
    (
        "tasks-",
        "the tasks extension: every call is answered at once",
    ),
    ("sep-2640-skills-", "the skills extension"),
];

/// `@modelcontextprotocol/conformance` (tests/mcp/install) against
/// `axe-mcp --http`: every scenario of the suite is classified, those
/// that apply pass but for the listed checks, and those fail. The agent
/// has memory in every kind the notes hold, so the scenarios that read
/// the first resource listed (caching's `resources/read`) read one; a
/// scenario counted as passing must have passed a check of its own, and
/// a warning (a SHOULD missed) counts as a failure.
#[test]
fn the_official_conformance_suite_passes_what_applies() {
    let sdk = crate::mcp_sdk::sdk_dir();
    let suite = sdk.join("conformance/node_modules/.bin/conformance");
    let node = sdk.join("clients/node_modules/.bin");
    if !suite.exists() || !node.join("node").exists() {
        crate::util::unavailable(
            &format!(
                "the MCP conformance suite and Node 22 are not installed in {}",
                sdk.display()
            ),
            "run tests/mcp/install",
        );
        return;
    }
    let path = std::env::join_paths(std::iter::once(node).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let listed = std::process::Command::new(&suite)
        .args(["list", "--server"])
        .env("PATH", &path)
        .output()
        .unwrap();
    let listed = String::from_utf8_lossy(&listed.stdout).into_owned();
    let scenarios: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.trim().strip_prefix("- "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(scenarios.len() > 30, "{listed}");
    for s in &scenarios {
        let applies = APPLIES.iter().any(|(a, _)| a == s);
        let not = NOT_APPLICABLE.iter().any(|(n, _)| s.starts_with(n));
        assert!(
            applies != not,
            "scenario {s} is to be listed once, as applying or not"
        );
    }
    let env = Env::new();
    let notes = env.data_dir().join("axe/notes");
    env.write(
        &notes.join("agents/team/MEMORY.md"),
        "Deploys wait for the canary.\n",
    );
    env.write(
        &notes.join("world/deploys.md"),
        "Blue-green, from orca-7731.\n",
    );
    env.write(
        &notes.join("agents/team/daily/2026-11-27.md"),
        "# 2026-11-27\n\n## 09:00\n\nShipped.\n",
    );
    let server = Served::start(&env, &[]);
    let url = format!("http://127.0.0.1:{}/mcp/team", server.port);
    let out = env.root().join("conformance");
    for (scenario, failing) in APPLIES {
        let run = std::process::Command::new(&suite)
            .args(["server", "--url", &url, "--scenario", scenario, "-o"])
            .arg(&out)
            .env("PATH", &path)
            .output()
            .unwrap();
        let dir = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("server-{scenario}-"))
            })
            .unwrap_or_else(|| panic!("{scenario}: no results: {run:?}"));
        let checks: Value =
            serde_json::from_str(&crate::util::read(&dir.join("checks.json"))).unwrap();
        let checks = checks.as_array().unwrap();
        let mut failed: Vec<&str> = checks
            .iter()
            .filter(|c| c["status"] == "FAILURE" || c["status"] == "WARNING")
            .map(|c| c["id"].as_str().unwrap())
            .collect();
        assert!(
            checks.iter().any(|c| c["status"] == "SUCCESS"),
            "{scenario} checked nothing: {checks:#?}"
        );
        if *scenario == "caching" {
            let read = checks
                .iter()
                .find(|c| c["id"] == "sep-2549-resources-read-caching-hints");
            assert_eq!(
                read.map(|c| &c["status"]),
                Some(&json!("SUCCESS")),
                "caching did not read a resource: {checks:#?}"
            );
        }
        failed.sort_unstable();
        failed.dedup();
        let mut expected: Vec<&str> = failing.iter().map(|(id, _)| *id).collect();
        expected.sort_unstable();
        assert_eq!(failed, expected, "{scenario}: {checks:#?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

/// `--tls-cert` and `--tls-key`: HTTPS with the certificate given, the
/// same endpoint behind it; a client that does not trust it, or speaks
/// plain HTTP to it, gets nothing.
#[test]
fn tls_serves_the_same_endpoint_over_https() {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName};
    if !crate::util::have("openssl") {
        return;
    }
    let env = Env::new();
    let (ca, cert, key) = crate::proxy::authority(env.root());
    let server = Served::start(
        &env,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ],
    );
    let mut roots = rustls::RootCertStore::empty();
    for c in CertificateDer::pem_file_iter(&ca).unwrap() {
        roots.add(c.unwrap()).unwrap();
    }
    let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = ServerName::try_from("localhost").unwrap();
    let conn = rustls::ClientConnection::new(std::sync::Arc::new(config), name).unwrap();
    let tcp = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut tls = rustls::StreamOwned::new(conn, tcp);
    let body = request(1, "initialize", init_params()).to_string();
    write!(
        tls,
        "POST /mcp/team HTTP/1.1\r\nHost: localhost:{}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        server.port,
        body.len()
    )
    .unwrap();
    let mut all = Vec::new();
    let _ = tls.read_to_end(&mut all);
    let text = String::from_utf8(all).unwrap();
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
    assert!(
        text.contains("\"serverInfo\":{\"name\":\"axe-mcp\""),
        "{text}"
    );
    // Plain HTTP to the TLS port: no answer of HTTP's.
    let mut plain = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        plain,
        "POST /mcp/team HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n"
    )
    .unwrap();
    let mut got = Vec::new();
    let _ = plain.read_to_end(&mut got);
    assert!(!got.starts_with(b"HTTP/"), "{got:?}");
    // Half the flags is a usage error.
    env.cmd("axe-mcp")
        .args(["--http", "127.0.0.1:0", "--tls-cert"])
        .arg(&cert)
        .assert()
        .code(1);
}

/// Load: 32 clients at once, 100 calls each, mixing remember, recall,
/// reflect with `if_match` and search, half of them in sessions and half
/// stateless: every remembered note is in the daily log exactly once,
/// every reflect either wrote or lost to another's (a conflict, nothing
/// written), MEMORY.md is one winner's whole text, and no request fails.
/// The latencies are printed (bench/ has the release figures).
#[test]
fn many_clients_at_once_lose_nothing_and_conflict_cleanly() {
    const CLIENTS: usize = 32;
    const CALLS: usize = 100;
    let env = Env::new();
    let server = Served::start(&env, &[]);
    let port = server.port;
    let post = move |session: Option<&str>, message: &Value| {
        let method = message["method"].as_str().unwrap().to_owned();
        let name = message["params"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let mut headers = vec![
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ];
        match session {
            Some(s) => headers.push(("Mcp-Session-Id", s)),
            None => {
                headers.push(("MCP-Protocol-Version", "2026-07-28"));
                headers.push(("Mcp-Method", &method));
                headers.push(("Mcp-Name", &name));
            }
        }
        send_to(port, "POST", "/mcp/team", &headers, &message.to_string())
    };
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            std::thread::spawn(move || {
                let session = (c % 2 == 0).then(|| {
                    let body = request(0, "initialize", init_params()).to_string();
                    let json = [("Content-Type", "application/json")];
                    let a = send_to(port, "POST", "/mcp/team", &json, &body);
                    a.header("mcp-session-id").unwrap().to_owned()
                });
                let call = |k: usize, tool: &str, arguments: Value| {
                    let params = call(tool, arguments);
                    let message = match &session {
                        Some(_) => request(k as u64, "tools/call", params),
                        None => stateless(k as u64, "tools/call", params),
                    };
                    let started = std::time::Instant::now();
                    let a = post(session.as_deref(), &message);
                    let took = started.elapsed();
                    assert_eq!(a.status, 200, "client {c} call {k}: {a:?}");
                    let result = a.json()["result"].clone();
                    assert!(!result.is_null(), "client {c} call {k}: {a:?}");
                    (result, took)
                };
                let mut hash = String::new();
                let (mut wrote, mut lost, mut times) = (Vec::new(), 0, Vec::new());
                for k in 0..CALLS {
                    let (result, took) = match k % 4 {
                        0 => call(k, "remember", json!({"content": format!("note c{c}k{k}.")})),
                        1 => call(k, "recall", json!({})),
                        2 => call(
                            k,
                            "reflect",
                            json!({"content": format!("MEMORY of c{c}k{k}."), "if_match": hash}),
                        ),
                        _ => call(k, "search_notes", json!({"query": "note", "limit": 3})),
                    };
                    times.push(took);
                    let text = result["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    match k % 4 {
                        0 | 3 => assert_eq!(result["isError"], false, "c{c}k{k}: {text}"),
                        1 => {
                            assert_eq!(result["isError"], false, "c{c}k{k}: {text}");
                            hash = result["structuredContent"]["memory_sha256"]
                                .as_str()
                                .unwrap()
                                .to_owned();
                        }
                        _ if result["isError"] == false => {
                            wrote.push(format!("MEMORY of c{c}k{k}."))
                        }
                        _ => {
                            assert!(
                                text.contains("has changed since you last read it"),
                                "c{c}k{k}: {text}"
                            );
                            lost += 1;
                        }
                    }
                }
                (wrote, lost, times)
            })
        })
        .collect();
    let (mut wrote, mut lost, mut times) = (Vec::new(), 0, Vec::new());
    for t in threads {
        let (w, l, ts) = t.join().unwrap();
        wrote.extend(w);
        lost += l;
        times.extend(ts);
    }
    assert_eq!(wrote.len() + lost, CLIENTS * CALLS / 4);
    assert!(!wrote.is_empty());
    let notes = env.data_dir().join("axe/notes/agents/team");
    let memory = crate::util::read(&notes.join("MEMORY.md"));
    assert!(
        wrote.contains(&memory),
        "MEMORY.md is no winner's text: {memory:?}"
    );
    let mut daily = String::new();
    for e in std::fs::read_dir(notes.join("daily")).unwrap() {
        daily.push_str(&crate::util::read(&e.unwrap().path()));
    }
    for c in 0..CLIENTS {
        for k in (0..CALLS).step_by(4) {
            let note = format!("note c{c}k{k}.");
            assert_eq!(daily.matches(&note).count(), 1, "{note}");
        }
    }
    times.sort_unstable();
    let at = |q: f64| times[((times.len() - 1) as f64 * q) as usize];
    eprintln!(
        "{} calls by {CLIENTS} clients: p50 {:?}, p99 {:?}; {} reflects wrote, {lost} lost",
        times.len(),
        at(0.5),
        at(0.99),
        wrote.len()
    );
}

/// A resource URI cannot reach another agent's memory from an endpoint,
/// by name or by traversal, in a session or stateless.
#[test]
fn resource_uris_reach_only_the_endpoints_agent() {
    let env = Env::new();
    let other = env.data_dir().join("axe/notes/agents/other/MEMORY.md");
    env.write(&other, "the other agent's secret\n");
    env.write(
        &env.data_dir().join("axe/notes/agents/team/MEMORY.md"),
        "team's own\n",
    );
    let server = Served::start(&env, &[]);
    let s = server.initialize("team", &[]);
    let own = server.post(
        "team",
        &[("Mcp-Session-Id", &s)],
        &request(
            2,
            "resources/read",
            json!({"uri": "axe://notes/agents/team/MEMORY.md"}),
        ),
    );
    assert!(own.body.contains("team's own"), "{own:?}");
    for uri in [
        "axe://notes/agents/other/MEMORY.md",
        "axe://notes/agents/team/../other/MEMORY.md",
        "axe://notes/world/../agents/other/MEMORY.md",
        "axe://notes/agents/team/daily/../../other/MEMORY.md",
        "axe://notes/agents/team%2F..%2Fother/MEMORY.md",
        "axe://state/other.json",
        "axe://log/other.md",
        "file:///etc/passwd",
    ] {
        let session = server.post(
            "team",
            &[("Mcp-Session-Id", &s)],
            &request(3, "resources/read", json!({"uri": uri})),
        );
        let stateless = server.post(
            "team",
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "resources/read"),
                ("Mcp-Name", uri),
            ],
            &stateless(4, "resources/read", json!({"uri": uri})),
        );
        for a in [session, stateless] {
            assert!(
                !a.body.contains("secret") && !a.body.contains("root:"),
                "{uri}: {a:?}"
            );
            assert!(a.json()["error"].is_object(), "{uri}: {a:?}");
        }
    }
}

/// `--read-only` holds for every client of the server, token or not.
#[test]
fn read_only_serves_only_the_reading_tools_to_everyone() {
    let env = Env::new();
    let server = Served::start(&env, &["--read-only"]);
    let listed = server.post(
        "team",
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        &stateless(1, "tools/list", json!({})),
    );
    let names: Vec<String> = listed.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "recall",
            "search_notes",
            "context",
            "state_context",
            "log_recent"
        ]
    );
    let s = server.initialize("team", &[]);
    let refused = server.post(
        "team",
        &[("Mcp-Session-Id", &s)],
        &request(2, "tools/call", call("remember", json!({"content": "x"}))),
    );
    assert!(
        refused.body.contains("unknown tool: remember"),
        "{refused:?}"
    );
    assert!(!env.data_dir().join("axe/notes/agents/team/daily").exists());
}
