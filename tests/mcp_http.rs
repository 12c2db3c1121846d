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
use crate::util::{Env, have};

/// A running `axe-mcp --http` and what it has said on stderr.
pub struct Served {
    pub child: Child,
    pub port: u16,
    /// The line saying where it listens and what it serves.
    pub start: String,
    log: Arc<Mutex<Vec<String>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl Served {
    /// [`Served::start`] serving the owner's own data directory
    /// (`--team-dir <data>/axe`), for tests that seed or check it there.
    pub fn start_own(env: &Env, args: &[&str]) -> Served {
        let own = env.data_dir().join("axe");
        let mut all = args.to_vec();
        all.extend(["--team-dir", own.to_str().unwrap()]);
        Served::start(env, &all)
    }

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
            start: first,
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
    // The file is the one the executables use, for an agent whose notes
    // are the served ones (as the README says to join the team's memory).
    env.agent(
        "team",
        &format!(
            "name = \"team\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nworkspace = {:?}\n",
            team_dir(&env).join("notes")
        ),
    );
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
    assert!(team_daily(&env, "team").contains("written while stopping"));
}

/// Every daily log of the served `agent`, one after another.
fn team_daily(env: &Env, agent: &str) -> String {
    let daily = team_dir(env).join("notes/agents").join(agent).join("daily");
    std::fs::read_dir(&daily)
        .unwrap()
        .map(|f| crate::util::read(&f.unwrap().path()))
        .collect()
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

/// The bearer token is compared whole on every request, not only at the
/// handshake: a token one character off a real one is 401 on a request
/// of a session the real token began, stateless, and for DELETE, and
/// nothing it sent is written; the real token passes each.
#[test]
fn a_token_one_character_off_is_refused_on_every_request() {
    let env = Env::new();
    let file = env.root().join("conf/tokens.toml");
    let out = env
        .cmd("axe-mcp")
        .args(["token", "add", "alice", "--agents", "team", "--tokens"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let token = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let (head, last) = token.split_at(token.len() - 1);
    let off = format!("{head}{}", if last == "0" { "1" } else { "0" });
    let server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let (right, wrong) = (format!("Bearer {token}"), format!("Bearer {off}"));
    let s = server.initialize("team", &[("Authorization", &right)]);
    let remember =
        |id: u64, text: &str| request(id, "tools/call", call("remember", json!({"content": text})));
    let stateless_remember = |auth: &str, id: u64, text: &str| {
        let headers = [
            ("Authorization", auth),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "remember"),
        ];
        let message = stateless(id, "tools/call", call("remember", json!({"content": text})));
        server.post("team", &headers, &message)
    };
    let in_session = |auth: &str, id: u64, text: &str| {
        server.post(
            "team",
            &[("Authorization", auth), ("Mcp-Session-Id", &s)],
            &remember(id, text),
        )
    };
    let a = in_session(&wrong, 2, "wrong in a session");
    assert_eq!(a.status, 401, "{a:?}");
    let a = stateless_remember(&wrong, 3, "wrong stateless");
    assert_eq!(a.status, 401, "{a:?}");
    let bye = |auth: &str| {
        server.send(
            "DELETE",
            "/mcp/team",
            &[("Authorization", auth), ("Mcp-Session-Id", &s)],
            "",
        )
    };
    let a = bye(&wrong);
    assert_eq!(a.status, 401, "{a:?}");
    // The real token on the same ways: the session is still there.
    let a = in_session(&right, 4, "right in a session");
    assert_eq!(a.json()["result"]["isError"], false, "{a:?}");
    let a = stateless_remember(&right, 5, "right stateless");
    assert_eq!(a.json()["result"]["isError"], false, "{a:?}");
    assert_eq!(bye(&right).status, 204);
    // What the server holds for the team, asked with the real token.
    let recalled = server.post(
        "team",
        &[
            ("Authorization", &right),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "recall"),
        ],
        &stateless(6, "tools/call", call("recall", json!({}))),
    );
    let notes = recalled.json()["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        notes.contains("right in a session") && notes.contains("right stateless"),
        "{notes}"
    );
    assert!(!notes.contains("wrong"), "{notes}");
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
    let Some((suite, node)) = crate::mcp_sdk::conformance() else {
        return;
    };
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
    let notes = team_dir(&env).join("notes");
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
/// written), each hash lets one reflect through at most (all clients race
/// over the first), MEMORY.md is one winner's whole text, each search
/// finds the note its client remembered before it (searches in flight
/// share the index's refresh: one that began later must still see it),
/// and no request fails.
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
    // After its first recall each client waits for the others: all then
    // rewrite over the same hash at once, so the race on `if_match` takes
    // place by schedule, not by luck.
    let gate = Arc::new(crate::util::Gate::new(CLIENTS, Duration::from_secs(60)));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let gate = Arc::clone(&gate);
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
                // Each reflect: the hash it passed, and whether it wrote.
                let mut tries = Vec::new();
                for k in 0..CALLS {
                    let (result, took) = match k % 4 {
                        0 => call(k, "remember", json!({"content": format!("note c{c}k{k}.")})),
                        1 => call(k, "recall", json!({})),
                        2 => call(
                            k,
                            "reflect",
                            json!({"content": format!("MEMORY of c{c}k{k}."), "if_match": hash}),
                        ),
                        _ => call(
                            k,
                            "search_notes",
                            json!({"query": format!("c{c}k{}", k - 3), "limit": 3}),
                        ),
                    };
                    times.push(took);
                    let text = result["content"][0]["text"]
                        .as_str()
                        .unwrap_or_default()
                        .to_owned();
                    match k % 4 {
                        0 => assert_eq!(result["isError"], false, "c{c}k{k}: {text}"),
                        3 => {
                            assert_eq!(result["isError"], false, "c{c}k{k}: {text}");
                            let found = &result["structuredContent"]["results"][0]["snippet"];
                            let want = format!("note c{c}k{}.", k - 3);
                            assert!(
                                found.as_str().is_some_and(|t| t.contains(&want)),
                                "c{c}k{k}: the search did not find {want:?}: {result}"
                            );
                        }
                        1 => {
                            assert_eq!(result["isError"], false, "c{c}k{k}: {text}");
                            hash = result["structuredContent"]["memory_sha256"]
                                .as_str()
                                .unwrap()
                                .to_owned();
                            if k == 1 {
                                gate.meet();
                            }
                        }
                        _ if result["isError"] == false => {
                            tries.push((hash.clone(), true));
                            wrote.push(format!("MEMORY of c{c}k{k}."))
                        }
                        _ => {
                            assert!(
                                text.contains("has changed since you last read it"),
                                "c{c}k{k}: {text}"
                            );
                            tries.push((hash.clone(), false));
                            lost += 1;
                        }
                    }
                }
                (wrote, lost, times, tries)
            })
        })
        .collect();
    let (mut wrote, mut lost, mut times) = (Vec::new(), 0, Vec::new());
    // Each hash: how many rewrites passed it, how many went through.
    let mut tries = std::collections::HashMap::<String, (usize, usize)>::new();
    for t in threads {
        let (w, l, ts, tried) = t.join().unwrap();
        wrote.extend(w);
        lost += l;
        times.extend(ts);
        for (sha, went) in tried {
            let seen = tries.entry(sha).or_default();
            seen.0 += 1;
            seen.1 += usize::from(went);
        }
    }
    assert_eq!(wrote.len() + lost, CLIENTS * CALLS / 4);
    // A hash lets one rewrite through at most: a second over the same
    // text would write over the first unseen. The empty MEMORY.md's hash
    // was held by every client at once (the race took place): one won.
    for (sha, (tried, went)) in &tries {
        assert!(
            *went <= 1,
            "{went} of {tried} rewrites over {sha} went through"
        );
    }
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_eq!(tries.get(empty), Some(&(CLIENTS, 1)), "{tries:?}");
    let notes = team_dir(&env).join("notes/agents/team");
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
    let other = team_dir(&env).join("notes/agents/other/MEMORY.md");
    env.write(&other, "the other agent's secret\n");
    env.write(
        &team_dir(&env).join("notes/agents/team/MEMORY.md"),
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
    assert!(!team_dir(&env).join("notes/agents/team/daily").exists());
}

/// Where `axe-mcp --http` keeps the memory it serves by default: a data
/// directory of its own beside the owner's (`axe-team`).
pub fn team_dir(env: &Env) -> std::path::PathBuf {
    env.data_dir().join("axe-team")
}

/// `axe-mcp token add NAME --tokens FILE ARGS…`: the token it printed.
pub(crate) fn add_token(env: &Env, file: &std::path::Path, name: &str, args: &[&str]) -> String {
    let out = env
        .cmd("axe-mcp")
        .args(["token", "add", name, "--tokens"])
        .arg(file)
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A tool's call in a session: the whole answer.
fn session_call(
    server: &Served,
    agent: &str,
    auth: &str,
    session: &str,
    name: &str,
    arguments: Value,
) -> Answer {
    server.post(
        agent,
        &[("Authorization", auth), ("Mcp-Session-Id", session)],
        &request(9, "tools/call", call(name, arguments)),
    )
}

/// A token for the agent `team` reaches the team's memory, never the
/// owner's: not a world topic the owner's own agent wrote or imported,
/// and its learn_fact lands nowhere an owner's agent recalls. The start
/// line and `token list` say what is served and what each token reaches.
#[test]
fn a_teams_token_reaches_the_teams_memory_never_the_owners() {
    let env = Env::new();
    // The owner's own memory: a world topic of a local agent, an import.
    env.cmd("axe-notes-learn")
        .args(["--agent", "me", "plans"])
        .write_stdin("The owner's salary talk is on Friday.\n")
        .assert()
        .success();
    let vault = env.root().join("vault");
    env.write(&vault.join("diary.md"), "The owner's private diary.\n");
    env.cmd("axe-import")
        .arg("markdown")
        .arg(&vault)
        .assert()
        .success();
    let own_world = env.data_dir().join("axe/notes/world");
    assert!(own_world.join("plans.md").exists() && own_world.join("diary.md").exists());
    let before = crate::util::read(&own_world.join("plans.md"));

    let file = env.root().join("conf/tokens.toml");
    let mate = add_token(&env, &file, "mate", &["--agents", "team"]);
    let ci = add_token(&env, &file, "ci", &["--agents", "team", "--read-only"]);
    let auth = format!("Bearer {mate}");
    let mut server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let s = server.initialize("team", &[("Authorization", &auth)]);
    let recalled = session_call(&server, "team", &auth, &s, "recall", json!({}));
    assert_eq!(recalled.status, 200, "{recalled:?}");
    let found = session_call(
        &server,
        "team",
        &auth,
        &s,
        "search_notes",
        json!({"query": "owner"}),
    );
    let listed = server.post(
        "team",
        &[("Authorization", &auth), ("Mcp-Session-Id", &s)],
        &request(3, "resources/list", json!({})),
    );
    for a in [&recalled, &found, &listed] {
        assert!(
            !a.body.contains("salary") && !a.body.contains("diary"),
            "the owner's memory reached a team token: {a:?}"
        );
    }
    // A read-only token's stateless recall: the same.
    let c = format!("Bearer {ci}");
    let ci_recall = server.post(
        "team",
        &[
            ("Authorization", &c),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "recall"),
        ],
        &stateless(4, "tools/call", call("recall", json!({}))),
    );
    assert_eq!(ci_recall.status, 200, "{ci_recall:?}");
    assert!(!ci_recall.body.contains("salary"), "{ci_recall:?}");

    // The teammate's facts, one on a topic of the owner's name: in the
    // team's world, and nowhere the owner's agents recall.
    for topic in ["deploy", "plans"] {
        let learned = session_call(
            &server,
            "team",
            &auth,
            &s,
            "learn_fact",
            json!({"topic": topic, "content": "Deploys go out on Tuesdays."}),
        );
        assert_eq!(learned.json()["result"]["isError"], false, "{learned:?}");
    }
    assert!(!own_world.join("deploy.md").exists());
    assert_eq!(crate::util::read(&own_world.join("plans.md")), before);
    let owner = env.cmd("axe-notes-recall").arg("me").output().unwrap();
    assert!(
        !String::from_utf8_lossy(&owner.stdout).contains("Tuesdays"),
        "{owner:?}"
    );
    let team_world = team_dir(&env).join("notes/world");
    assert!(crate::util::read(&team_world.join("deploy.md")).contains("Tuesdays"));

    // Said at the start: what is served, where, and that tokens guard it.
    let (_, log) = server.stop();
    let start = &server.start;
    let team = team_dir(&env);
    assert!(
        start.contains(&team.display().to_string())
            && start.contains("2 tokens")
            && start.contains("not your own"),
        "{start}"
    );
    // And what each token reaches, a line each.
    assert!(
        log[0].starts_with("axe-mcp: token \"mate\" reads and writes")
            && log[0].contains(&team.display().to_string())
            && log[1].starts_with("axe-mcp: token \"ci\" reads only"),
        "{log:?}"
    );
    // `token list`: each name, its agents and rights, and what it
    // reaches; never a token or its digest.
    let out = env
        .cmd("axe-mcp")
        .args(["token", "list", "--tokens"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let listed = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = listed.lines().collect();
    assert_eq!(lines.len(), 2, "{listed}");
    assert!(
        lines[0].starts_with("mate ")
            && lines[0].contains("team")
            && lines[0].contains("reads and writes")
            && lines[0].contains(&team.display().to_string()),
        "{listed}"
    );
    assert!(
        lines[1].starts_with("ci ") && lines[1].contains("reads only"),
        "{listed}"
    );
    assert!(lines.iter().all(|l| l.contains("created 20")), "{listed}");
    for secret in [&mate, &ci, &sha256_hex(&mate), &sha256_hex(&ci)] {
        assert!(!listed.contains(secret.as_str()), "{listed}");
    }

    // Serving the owner's own memory is asked for by name, and said so.
    let own = env.data_dir().join("axe");
    let server = Served::start(
        &env,
        &[
            "--tokens",
            file.to_str().unwrap(),
            "--team-dir",
            own.to_str().unwrap(),
        ],
    );
    let s = server.initialize("team", &[("Authorization", &auth)]);
    let recalled = session_call(&server, "team", &auth, &s, "recall", json!({}));
    assert!(recalled.body.contains("salary"), "{recalled:?}");
    assert!(server.start.contains("your own memory"), "{}", server.start);
    // Without tokens the start line says plainly that nothing guards it.
    let server = Served::start(&env, &[]);
    assert!(server.start.contains("no token guards"), "{}", server.start);
}

/// A token's rights are the tokens file's now, on every request: one
/// made read-only stops writing in the sessions it began, and one
/// removed ends them, even if the same entry comes back.
#[test]
fn a_tokens_rights_are_the_files_now_on_every_request() {
    let env = Env::new();
    let file = env.root().join("conf/tokens.toml");
    let alice = add_token(&env, &file, "alice", &["--agents", "team"]);
    let _bob = add_token(&env, &file, "bob", &["--agents", "team"]);
    let auth = format!("Bearer {alice}");
    let server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let s = server.initialize("team", &[("Authorization", &auth)]);
    let wrote = session_call(
        &server,
        "team",
        &auth,
        &s,
        "remember",
        json!({"content": "one"}),
    );
    assert_eq!(wrote.json()["result"]["isError"], false, "{wrote:?}");

    // alice made read-only, bob untouched.
    let whole = crate::util::read(&file);
    let (head, tail) = whole.split_at(whole.find("name = \"bob\"").unwrap());
    let read_only = head.replace("read_only = false", "read_only = true");
    env.write(&file, format!("{read_only}{tail}"));
    let refused = session_call(
        &server,
        "team",
        &auth,
        &s,
        "remember",
        json!({"content": "two"}),
    );
    assert!(
        refused.body.contains("unknown tool: remember"),
        "a read-only token wrote: {refused:?}"
    );
    let listed = server.post(
        "team",
        &[("Authorization", &auth), ("Mcp-Session-Id", &s)],
        &request(3, "tools/list", json!({})),
    );
    assert!(!listed.body.contains("\"remember\""), "{listed:?}");
    assert!(listed.body.contains("\"recall\""), "{listed:?}");

    // alice removed: refused at once, and her session is over, even
    // when the very same entry is put back.
    env.write(&file, tail.replacen("name", "[[token]]\nname", 1));
    let gone = session_call(&server, "team", &auth, &s, "recall", json!({}));
    assert_eq!(gone.status, 401, "{gone:?}");
    env.write(&file, &whole);
    let ended = session_call(&server, "team", &auth, &s, "recall", json!({}));
    assert_eq!(
        ended.status, 404,
        "a removed token's session lives on: {ended:?}"
    );
    let again = server.initialize("team", &[("Authorization", &auth)]);
    let wrote = session_call(
        &server,
        "team",
        &auth,
        &again,
        "remember",
        json!({"content": "three"}),
    );
    assert_eq!(wrote.json()["result"]["isError"], false, "{wrote:?}");
}

/// Sessions are bounded per token: one token opening session after
/// session gives way only to itself, never evicting another's.
#[test]
fn one_tokens_sessions_never_evict_anothers() {
    let env = Env::new();
    let file = env.root().join("conf/tokens.toml");
    let alice = add_token(&env, &file, "alice", &["--agents", "team"]);
    let ci = add_token(&env, &file, "ci", &["--agents", "other", "--read-only"]);
    let (a, c) = (format!("Bearer {alice}"), format!("Bearer {ci}"));
    let server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let kept = server.initialize("team", &[("Authorization", &a)]);
    let init = request(1, "initialize", init_params());
    let mut first = None;
    // More than the whole table held before sessions were bounded.
    for _ in 0..1100 {
        let opened = server.post("other", &[("Authorization", &c)], &init);
        assert_eq!(opened.status, 200, "{opened:?}");
        first.get_or_insert_with(|| opened.header("mcp-session-id").unwrap().to_owned());
    }
    let ping = |agent: &str, auth: &str, id: &str| {
        server
            .post(
                agent,
                &[("Authorization", auth), ("Mcp-Session-Id", id)],
                &request(2, "ping", json!({})),
            )
            .status
    };
    assert_eq!(
        ping("team", &a, &kept),
        200,
        "another token's sessions evicted alice's"
    );
    // ci's own oldest gave way: its bound is its own.
    assert_eq!(ping("other", &c, &first.unwrap()), 404);
}

/// The tokens file is read as ssh reads `authorized_keys`: a FIFO, a
/// device or a file others can write is refused, said on stderr, and
/// never hangs or floods the server; a regular 0600 file works again.
#[test]
fn a_tokens_file_that_is_not_a_private_regular_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let file = env.root().join("conf/tokens.toml");
    let alice = add_token(&env, &file, "alice", &["--agents", "team"]);
    let whole = crate::util::read(&file);
    let fifo = env.root().join("conf/fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let zero = env.root().join("conf/zero");
    std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
    let open = env.root().join("conf/open.toml");
    env.write(&open, &whole);
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();

    // At the start: refused, promptly, with the reason.
    for (bad, why) in [
        (&fifo, "not a regular file"),
        (&zero, "not a regular file"),
        (&open, "others can write"),
    ] {
        let mut child = env
            .std_cmd("axe-mcp")
            .args(["--http", "127.0.0.1:0", "--tokens"])
            .arg(bad)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if std::time::Instant::now() > deadline {
                let _ = child.kill();
                panic!("axe-mcp hangs on the tokens file {}", bad.display());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        assert_eq!(status.code(), Some(2), "{}: {stderr}", bad.display());
        assert!(stderr.contains(why), "{}: {stderr}", bad.display());
    }

    // While serving: each put in the file's place takes no token, at
    // once and said on stderr; the file mended takes them again.
    let mut server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let auth = format!("Bearer {alice}");
    let init = request(1, "initialize", init_params());
    assert_eq!(
        server
            .post("team", &[("Authorization", &auth)], &init)
            .status,
        200
    );
    for bad in [&fifo, &zero, &open] {
        let aside = env.root().join("conf/aside");
        std::fs::rename(&file, &aside).unwrap();
        if bad == &zero {
            std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
        } else {
            std::fs::rename(bad, &file).unwrap();
        }
        let started = std::time::Instant::now();
        let refused = server.post("team", &[("Authorization", &auth)], &init);
        assert_eq!(refused.status, 401, "{}: {refused:?}", bad.display());
        assert!(started.elapsed() < Duration::from_secs(5));
        if bad == &zero {
            std::fs::remove_file(&file).unwrap();
        } else {
            std::fs::rename(&file, bad).unwrap();
        }
        std::fs::rename(&aside, &file).unwrap();
        assert_eq!(
            server
                .post("team", &[("Authorization", &auth)], &init)
                .status,
            200
        );
    }
    let (_, log) = server.stop();
    let said = log.join("\n");
    assert!(
        said.matches("not a regular file").count() >= 2 && said.contains("others can write"),
        "{said}"
    );
}

/// A server that takes one token, `secret`, named `ci`, reaching every
/// agent.
fn with_token(env: &Env, secret: &str, args: &[&str]) -> Served {
    let tokens = env.root().join("tokens.toml");
    env.write(
        &tokens,
        format!(
            "[[token]]\nname = \"ci\"\nsha256 = \"{}\"\nagents = \"*\"\n",
            sha256_hex(secret)
        ),
    );
    let mut all = vec!["--tokens", tokens.to_str().unwrap()];
    all.extend_from_slice(args);
    Served::start(env, &all)
}

/// Starvation: token-less clients holding more connections than the
/// server takes, each with one byte of a head, cost only themselves: a
/// token holder is served at once, and the oldest of them is cut off.
#[test]
fn a_token_holder_is_served_while_token_less_clients_hold_every_connection() {
    let env = Env::new();
    let server = with_token(&env, "holder-secret", &[]);
    let held: Vec<TcpStream> = (0..600)
        .map(|_| {
            let mut c = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
            c.write_all(b"P").unwrap();
            c
        })
        .collect();
    // The server has taken the last of them, and so every one before it:
    // it is answered (400 for its head of one letter).
    let mut last = held.last().unwrap();
    let _ = last.write_all(b"\r\n\r\n");
    let mut all = Vec::new();
    last.set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let _ = last.read_to_end(&mut all);
    assert!(
        String::from_utf8_lossy(&all).starts_with("HTTP/1.1 "),
        "{:?}",
        String::from_utf8_lossy(&all)
    );
    let started = std::time::Instant::now();
    for k in 0..5 {
        let a = server.post(
            "team",
            &[
                ("Authorization", "Bearer holder-secret"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            &stateless(k, "tools/list", json!({})),
        );
        assert_eq!(a.status, 200, "{a:?}");
    }
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    // The first token-less connection paid for its slow head: cut off
    // (or, on a machine slow enough, timed out first).
    let mut first = &held[0];
    first
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut said = [0u8; 12];
    match first.read(&mut said) {
        Ok(0) => {}
        Ok(n) if said[..n].starts_with(b"HTTP/1.1 408") => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("the oldest token-less connection is still held: {other:?}"),
    }
    drop(held);
}

/// What the server has ever held in memory (`VmHWM`), in bytes.
fn peak_memory(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .unwrap()
        .to_owned();
    let kb: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap();
    kb << 10
}

/// The token is checked on the head: a request without one is answered
/// 401 before its body arrives, and the bodies of 24 token-less clients
/// (12 MiB each, sent) never grow the server's memory.
#[test]
fn a_request_without_a_token_is_refused_on_its_head_and_its_body_never_read() {
    let env = Env::new();
    let server = with_token(&env, "holder-secret", &[]);
    let head = |length: usize| {
        format!(
            "POST /mcp/team HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
        )
    };
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    conn.write_all(head(1000).as_bytes()).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let a = read_answer(&mut conn);
    assert_eq!(a.status, 401, "{a:?}");
    assert_eq!(a.header("connection"), Some("close"), "{a:?}");
    let before = peak_memory(server.child.id());
    let port = server.port;
    let senders: Vec<_> = (0..24)
        .map(|_| {
            let head = head(16 << 20);
            std::thread::spawn(move || {
                let mut c = TcpStream::connect(("127.0.0.1", port)).unwrap();
                c.set_write_timeout(Some(Duration::from_secs(60))).unwrap();
                let _ = c.write_all(head.as_bytes());
                let piece = vec![b' '; 1 << 20];
                let mut sent = 0;
                for _ in 0..12 {
                    if c.write_all(&piece).is_err() {
                        break;
                    }
                    sent += piece.len();
                }
                sent
            })
        })
        .collect();
    let sent: usize = senders.into_iter().map(|t| t.join().unwrap()).sum();
    let grown = peak_memory(server.child.id()).saturating_sub(before);
    eprintln!(
        "{} MiB of token-less bodies sent, the server grew by {} MiB",
        sent >> 20,
        grown >> 20
    );
    assert!(
        grown < 48 << 20,
        "the server grew by {} MiB for {} MiB of token-less bodies",
        grown >> 20,
        sent >> 20
    );
}

/// SIGTERM while a reflect waits for MEMORY.md's lock: the reflect still
/// gets the lock, writes, and is answered; then the server ends of the
/// signal.
#[test]
fn sigterm_lets_a_reflect_waiting_on_the_lock_write() {
    if !crate::util::have("python3") {
        return;
    }
    let env = Env::new();
    let memory = team_dir(&env).join("notes/agents/team/MEMORY.md");
    env.write(&memory, "before\n");
    let mut server = Served::start(&env, &[]);
    let recalled = server.post(
        "team",
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "recall"),
        ],
        &stateless(1, "tools/call", call("recall", json!({}))),
    );
    let hash = recalled.json()["result"]["structuredContent"]["memory_sha256"]
        .as_str()
        .unwrap_or_else(|| panic!("{recalled:?}"))
        .to_owned();
    // Another writer holds MEMORY.md's lock until its stdin closes.
    let mut holder = std::process::Command::new("python3")
        .args([
            "-c",
            "import fcntl, sys\nf = open(sys.argv[1], 'r+')\nfcntl.flock(f, fcntl.LOCK_EX)\nprint('held', flush=True)\nsys.stdin.read()",
        ])
        .arg(&memory)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    assert_eq!(said, "held\n");
    let body = stateless(
        2,
        "tools/call",
        call(
            "reflect",
            json!({"content": "after the signal\n", "if_match": hash}),
        ),
    )
    .to_string();
    let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
    write!(
        conn,
        "POST /mcp/team HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: reflect\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    // The reflect waits on the lock: no answer yet.
    conn.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    let waiting = conn.peek(&mut byte);
    assert!(
        waiting.as_ref().is_err_and(|e| matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        )),
        "answered without the lock: {waiting:?}"
    );
    assert_eq!(term(server.child.id()), 0);
    // The signal is taken (no connection is) while the reflect still waits.
    while TcpStream::connect(("127.0.0.1", server.port)).is_ok() {
        std::thread::yield_now();
    }
    assert!(conn.peek(&mut byte).is_err(), "answered before the lock");
    drop(holder.stdin.take());
    holder.wait().unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let a = read_answer(&mut conn);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["result"]["isError"], false, "{a:?}");
    let status = server.child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(15));
    assert_eq!(crate::util::read(&memory), "after the signal\n");
}

/// Splits a log line into its `key=value` fields, a value either a bare
/// word or a quoted string with backslash escapes.
fn log_fields(line: &str) -> Vec<(String, String)> {
    let mut fields = Vec::new();
    let mut rest = line;
    while let Some(eq) = rest.find('=') {
        let key = rest[..eq].rsplit(' ').next().unwrap().to_owned();
        let after = &rest[eq + 1..];
        let (value, next) = if let Some(quoted) = after.strip_prefix('"') {
            let mut value = String::new();
            let mut chars = quoted.char_indices();
            let mut end = quoted.len();
            while let Some((i, c)) = chars.next() {
                match c {
                    '\\' => {
                        if let Some((_, e)) = chars.next() {
                            value.push('\\');
                            value.push(e);
                        }
                    }
                    '"' => {
                        end = i + 1;
                        break;
                    }
                    c => value.push(c),
                }
            }
            (value, &quoted[end..])
        } else {
            let end = after.find(' ').unwrap_or(after.len());
            (after[..end].to_owned(), &after[end..])
        };
        fields.push((key, value));
        rest = next;
    }
    fields
}

/// The request log quotes what a client sent: a forged `token=` in a
/// tool's name or a method stays inside its own field, and a newline
/// never starts a line of its own.
#[test]
fn a_client_cannot_forge_fields_or_lines_of_the_request_log() {
    let env = Env::new();
    let secret = "s3cret-token-value";
    let mut server = with_token(&env, secret, &[]);
    let bearer = format!("Bearer {secret}");
    let auth = ("Authorization", bearer.as_str());
    let s = server.initialize("team", &[auth]);
    let forged_tool = "remember token=root agent=secret";
    let forged_method = "ping\n2026-11-27T00:00:00Z axe-mcp: token=root agent=secret";
    server.post(
        "team",
        &[auth, ("Mcp-Session-Id", &s)],
        &request(2, "tools/call", call(forged_tool, json!({}))),
    );
    server.post(
        "team",
        &[auth, ("Mcp-Session-Id", &s)],
        &request(3, forged_method, json!({})),
    );
    let (_, log) = server.stop();
    let lines: Vec<&String> = log.iter().filter(|l| l.contains(" axe-mcp: ")).collect();
    assert_eq!(lines.len(), 4, "{log:?}");
    for line in &lines {
        let fields = log_fields(line);
        let keys: Vec<&str> = fields.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            keys,
            ["token", "agent", "method", "tool", "status", "ms"],
            "{line}"
        );
        assert_eq!(fields[0].1, "ci", "{line}");
        assert_eq!(fields[1].1, "team", "{line}");
    }
    assert_eq!(log_fields(lines[2])[3].1, forged_tool, "{}", lines[2]);
    assert!(lines[3].contains(r#"method="ping\n2026"#), "{}", lines[3]);
}

/// Header values with a bare LF, a bare CR or a NUL, and a second Host,
/// are each refused 400 (RFC 9110 5.5, RFC 9112 3.2).
#[test]
fn malformed_header_values_and_a_second_host_are_refused() {
    let env = Env::new();
    let server = Served::start(&env, &[]);
    let body = request(1, "initialize", init_params()).to_string();
    let send = |headers: &[u8]| {
        let mut conn = TcpStream::connect(("127.0.0.1", server.port)).unwrap();
        conn.set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut all = b"POST /mcp/team HTTP/1.1\r\n".to_vec();
        all.extend_from_slice(headers);
        all.extend_from_slice(
            format!(
                "Content-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .as_bytes(),
        );
        conn.write_all(&all).unwrap();
        read_answer(&mut conn).status
    };
    // As a baseline, the same request well formed is served.
    assert_eq!(send(b"Host: 127.0.0.1\r\nX-Note: fine\r\n"), 200);
    for bad in [
        &b"Host: 127.0.0.1\r\nX-Note: a\nb\r\n"[..],
        b"Host: 127.0.0.1\r\nX-Note: a\rb\r\n",
        b"Host: 127.0.0.1\r\nX-Note: a\0b\r\n",
        b"Host: 127.0.0.1\nX-Note: a\r\n",
        b"Host: 127.0.0.1\r\nHost: evil.example\r\n",
        b"Host: 127.0.0.1\r\nhost: 127.0.0.1\r\n",
    ] {
        assert_eq!(send(bad), 400, "{:?}", String::from_utf8_lossy(bad));
    }
}

/// The block fenced as ```` ```lang ```` in the README and the guide
/// (docs/guide/team.md): there is exactly one.
fn readme_block(lang: &str) -> String {
    let readme = crate::readme::guide();
    let fence = format!("```{lang}\n");
    let blocks: Vec<&str> = readme
        .split(&fence)
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap())
        .collect();
    assert_eq!(
        blocks.len(),
        1,
        "the README and the guide need one {fence:?} block"
    );
    format!("{}\n", blocks[0])
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One request to a proxy on `port` as a client of `host` sends it.
fn send_as(port: u16, host: &str, headers: &[(&str, &str)], body: &str) -> Answer {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let mut head = format!(
        "POST /mcp/team HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    for (n, v) in headers {
        head.push_str(&format!("{n}: {v}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    conn.write_all(head.as_bytes()).unwrap();
    let mut a = read_answer(&mut conn);
    if a.header("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        let mut whole = String::new();
        let mut rest = a.body.as_str();
        while let Some((size, after)) = rest.split_once("\r\n") {
            let size = usize::from_str_radix(size.trim(), 16).unwrap();
            if size == 0 {
                break;
            }
            whole.push_str(&after[..size]);
            rest = &after[size + 2..];
        }
        a.body = whole;
    }
    a
}

/// A proxy started by a test: killed at the end.
struct Proxy(Child);

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Waits until something listens on `port`, or the proxy ended.
fn wait_listening(proxy: &mut Proxy, port: u16, log: &std::path::Path) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Ok(Some(status)) = proxy.0.try_wait() {
            panic!(
                "the proxy ended ({status}): {}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the proxy never listened"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An MCP session through the proxy on `port`, as a client of
/// `memory.example.com` makes it: initialize, then a write that lands.
fn a_session_through(env: &Env, port: u16, secret: &str) {
    let bearer = format!("Bearer {secret}");
    let auth = ("Authorization", bearer.as_str());
    let host = "memory.example.com";
    let init = request(1, "initialize", init_params()).to_string();
    let a = send_as(port, host, &[auth], &init);
    assert_eq!(a.status, 200, "{a:?}");
    let session = a.header("mcp-session-id").expect("a session id").to_owned();
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string();
    let with = [auth, ("Mcp-Session-Id", session.as_str())];
    assert_eq!(send_as(port, host, &with, &note).status, 202);
    let said = request(
        2,
        "tools/call",
        call("remember", json!({"content": "through the proxy"})),
    )
    .to_string();
    let a = send_as(port, host, &with, &said);
    assert_eq!(a.status, 200, "{a:?}");
    assert_eq!(a.json()["result"]["isError"], false, "{a:?}");
    assert!(team_daily(env, "team").contains("through the proxy"));
}

/// README's Caddy lines, as written but for the ports (and the site made
/// plain HTTP on loopback, where no certificate can be had), in front of
/// `axe-mcp --http` on loopback with tokens: an MCP session passes.
#[test]
fn the_readmes_caddy_lines_pass_a_session_through() {
    if !crate::util::have("caddy") {
        return;
    }
    let env = Env::new();
    let secret = "proxied-secret";
    let server = with_token(&env, secret, &[]);
    let port = free_port();
    let site = readme_block("caddyfile")
        .replace("127.0.0.1:8765", &format!("127.0.0.1:{}", server.port))
        .replacen(
            "memory.example.com {",
            &format!("http://memory.example.com:{port} {{\n    bind 127.0.0.1"),
            1,
        );
    let dir = env.root().join("caddy");
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("Caddyfile");
    env.write(
        &config,
        format!("{{\n    admin off\n    auto_https off\n}}\n{site}"),
    );
    let log = dir.join("log");
    let mut proxy = Proxy(
        std::process::Command::new("caddy")
            .args(["run", "--adapter", "caddyfile", "--config"])
            .arg(&config)
            .env("HOME", &dir)
            .env("XDG_DATA_HOME", &dir)
            .env("XDG_CONFIG_HOME", &dir)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    wait_listening(&mut proxy, port, &log);
    a_session_through(&env, port, secret);
}

/// README's nginx lines, as written but for the ports, in a server block
/// on loopback in front of `axe-mcp --http` with tokens: an MCP session
/// passes.
#[test]
fn the_readmes_nginx_lines_pass_a_session_through() {
    // Debian puts it in /usr/sbin, which a user's PATH may not hold.
    let sbin = std::path::PathBuf::from("/usr/sbin/nginx");
    let nginx = match crate::util::is_executable(&sbin) {
        true => sbin,
        false if crate::util::have("nginx") => "nginx".into(),
        false => return,
    };
    let env = Env::new();
    let secret = "proxied-secret";
    let server = with_token(&env, secret, &[]);
    let port = free_port();
    let location =
        readme_block("nginx").replace("127.0.0.1:8765", &format!("127.0.0.1:{}", server.port));
    let dir = env.root().join("nginx");
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.display();
    let config = dir.join("nginx.conf");
    env.write(
        &config,
        format!(
            "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 64; }}\n\
             http {{\n    access_log off;\n    client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n\
             \x20   fastcgi_temp_path {d}/fastcgi;\n    uwsgi_temp_path {d}/uwsgi;\n    scgi_temp_path {d}/scgi;\n\
             \x20   server {{\n        listen 127.0.0.1:{port};\n        server_name memory.example.com;\n\
             {location}    }}\n}}\n"
        ),
    );
    let log = dir.join("error.log");
    let mut proxy = Proxy(
        std::process::Command::new(&nginx)
            .arg("-p")
            .arg(&dir)
            .arg("-e")
            .arg(&log)
            .arg("-c")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_listening(&mut proxy, port, &log);
    a_session_through(&env, port, secret);
}

/// `axe-mcp token ARGS… --tokens FILE`, however it ends.
fn token_cmd(env: &Env, file: &std::path::Path, args: &[&str]) -> std::process::Output {
    env.cmd("axe-mcp")
        .arg("token")
        .args(args)
        .arg("--tokens")
        .arg(file)
        .output()
        .unwrap()
}

/// `token rotate` prints a new token once and keeps the entry's name,
/// agents and rights (created renewed); the old token and the session it
/// began stop at their next request while the new one works, and another
/// token's session lives on. `token remove` does the same for a token
/// gone; the file's other lines stay as written, no token or digest is
/// ever printed by `list`, and a name not there is an error naming those
/// that are, the file untouched. A server without tokens says so.
#[test]
fn token_rotate_and_remove_stop_the_old_token_and_its_sessions() {
    let env = Env::new();
    let open = Served::start(&env, &[]);
    assert!(
        open.start
            .contains("no token guards it: anyone who can connect to 127.0.0.1:"),
        "{}",
        open.start
    );
    drop(open);

    let file = env.root().join("conf/tokens.toml");
    let alice = add_token(&env, &file, "alice", &["--agents", "team"]);
    let bob = add_token(&env, &file, "bob", &["--agents", "team", "--read-only"]);
    let with_comment = format!("# the team's tokens\n{}", crate::util::read(&file));
    env.write(&file, &with_comment);
    crate::util::set_mode(&file, 0o600);
    let (old_a, b) = (format!("Bearer {alice}"), format!("Bearer {bob}"));
    let server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let alice_session = server.initialize("team", &[("Authorization", &old_a)]);
    let bob_session = server.initialize("team", &[("Authorization", &b)]);

    let out = token_cmd(&env, &file, &["rotate", "alice"]);
    assert!(out.status.success(), "{out:?}");
    let new = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert!(
        new.starts_with("axe_") && new.len() == 68 && new != alice,
        "{new:?}"
    );
    let text = crate::util::read(&file);
    assert!(text.starts_with("# the team's tokens\n"), "{text}");
    assert!(!text.contains(&new) && !text.contains(&alice), "{text}");
    assert!(text.contains(&sha256_hex(&new)), "{text}");
    assert!(!text.contains(&sha256_hex(&alice)), "{text}");
    assert!(text.contains(&sha256_hex(&bob)), "{text}");
    assert_eq!(text.matches("agents = [\"team\"]").count(), 2, "{text}");
    assert_eq!(text.matches("read_only = true").count(), 1, "{text}");
    assert_eq!(crate::util::mode(&file) & 0o777, 0o600);

    let stale = session_call(&server, "team", &old_a, &alice_session, "recall", json!({}));
    assert_eq!(
        stale.status, 401,
        "the old token's session lives on: {stale:?}"
    );
    let refused = server.post(
        "team",
        &[("Authorization", &old_a)],
        &request(1, "initialize", init_params()),
    );
    assert_eq!(refused.status, 401, "{refused:?}");
    let new_a = format!("Bearer {new}");
    let s = server.initialize("team", &[("Authorization", &new_a)]);
    let wrote = session_call(
        &server,
        "team",
        &new_a,
        &s,
        "remember",
        json!({"content": "rotated"}),
    );
    assert_eq!(wrote.json()["result"]["isError"], false, "{wrote:?}");
    let kept = session_call(&server, "team", &b, &bob_session, "recall", json!({}));
    assert_eq!(kept.status, 200, "another token's session ended: {kept:?}");

    let listed = token_cmd(&env, &file, &["list"]);
    assert!(listed.status.success(), "{listed:?}");
    let list = String::from_utf8(listed.stdout).unwrap();
    assert!(list.starts_with("alice  agents team  created 20"), "{list}");
    assert!(list.contains("\nbob  agents team  created 20"), "{list}");
    assert!(list.contains("reads only"), "{list}");
    assert!(
        !list.contains("axe_") && !list.contains(&sha256_hex(&new)),
        "{list}"
    );

    let out = token_cmd(&env, &file, &["remove", "bob"]);
    assert!(out.status.success(), "{out:?}");
    assert!(out.stdout.is_empty(), "{out:?}");
    let gone = session_call(&server, "team", &b, &bob_session, "recall", json!({}));
    assert_eq!(
        gone.status, 401,
        "a removed token's session lives on: {gone:?}"
    );
    let text = crate::util::read(&file);
    assert!(text.starts_with("# the team's tokens\n"), "{text}");
    assert!(
        !text.contains("bob") && text.contains(&sha256_hex(&new)),
        "{text}"
    );
    let still = session_call(&server, "team", &new_a, &s, "recall", json!({}));
    assert_eq!(still.status, 200, "{still:?}");

    for verb in ["remove", "rotate"] {
        let out = token_cmd(&env, &file, &[verb, "carol"]);
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("no token named \"carol\"") && err.contains("its tokens: alice"),
            "{err}"
        );
        assert!(out.stdout.is_empty());
        assert_eq!(
            crate::util::read(&file),
            text,
            "{verb} of an unknown name changed the file"
        );
    }
}

/// The README's curl, Python SDK and TypeScript SDK lines against a
/// server with a token: each writes a note into the team's memory and
/// reads it back through recall, as written there but for the port.
#[test]
fn the_readmes_curl_python_and_typescript_lines_reach_the_team_server() {
    use crate::mcp_clients::readme_block;
    let env = Env::new();
    let file = env.root().join("conf/tokens.toml");
    let token = add_token(&env, &file, "alice", &["--agents", "team"]);
    let server = Served::start(&env, &["--tokens", file.to_str().unwrap()]);
    let address = format!("127.0.0.1:{}", server.port);
    let work = env.root().join("work");
    std::fs::create_dir_all(&work).unwrap();
    let run = |program: &str, args: &[&str], note: &str, extra: &[(&str, std::ffi::OsString)]| {
        let mut cmd = env.program(program);
        cmd.args(args)
            .current_dir(&work)
            .env("AXE_TOKEN", &token)
            .timeout(Duration::from_secs(120));
        for (k, v) in extra {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{program}: {out:?}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            said.contains(note),
            "{program} did not recall {note:?}: {said}"
        );
        assert!(team_daily(&env, "team").contains(note));
    };

    if have("curl") && have("jq") && have("bash") {
        let script =
            readme_block("sh", "Mcp-Method: tools/call").replace("127.0.0.1:8765", &address);
        run(
            "bash",
            &["-eo", "pipefail", "-c", &script],
            "The on-call rota is in ops/rota.md.",
            &[],
        );
        // A wrong token fails the line, as curl's --fail-with-body says.
        let out = env
            .program("bash")
            .args(["-eo", "pipefail", "-c", &script])
            .env("AXE_TOKEN", "axe_wrong")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{out:?}");
    }

    let python = crate::mcp_sdk::sdk_dir().join("python/bin/python3");
    match python.is_file() {
        true => {
            let script = readme_block("python", "streamable_http_client")
                .replace("127.0.0.1:8765", &address);
            std::fs::write(work.join("client.py"), script).unwrap();
            run(
                python.to_str().unwrap(),
                &["client.py"],
                "The staging database is db2.",
                &[],
            );
        }
        false => crate::util::unavailable(
            &format!("the Python MCP SDK is not in {}", python.display()),
            crate::mcp_sdk::HOW,
        ),
    }

    let modules = crate::mcp_sdk::sdk_dir().join("node/node_modules");
    match have("node") && modules.join("@modelcontextprotocol/sdk").is_dir() {
        true => {
            // Where npm install would have put the SDK, beside the script.
            std::os::unix::fs::symlink(&modules, work.join("node_modules")).unwrap();
            let script = readme_block("js", "StreamableHTTPClientTransport")
                .replace("127.0.0.1:8765", &address);
            std::fs::write(work.join("client.mjs"), script).unwrap();
            run("node", &["client.mjs"], "Releases are tagged vX.Y.Z.", &[]);
        }
        false => crate::util::unavailable(
            &format!("the TypeScript MCP SDK is not in {}", modules.display()),
            crate::mcp_sdk::HOW,
        ),
    }
}

/// The tools a stateless `tools/list` of `agent` names.
fn listed_tools(server: &Served, agent: &str) -> Vec<String> {
    let listed = server.post(
        agent,
        &[
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/list"),
        ],
        &stateless(1, "tools/list", json!({})),
    );
    listed.json()["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed:?}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// The server keeps what it opened of an agent between requests; an agent
/// file or config.toml changed while it serves is read at the next
/// request all the same, edited in place with the same length. Each edit
/// comes after the files were still for the two seconds a change must be
/// older than for its stamp to be trusted (fresh.rs's RACY): until then
/// every request reads them again, which would pass unseen.
#[test]
fn files_changed_while_serving_are_read_at_the_next_request() {
    let env = Env::new();
    let config = env.config_dir().join("axe/config.toml");
    let file = env.agent(
        "team",
        "name = \"team\"\nmodel = \"x/y\"\n[notes]\nenabled = true\n[memory]\nenabled = true \n",
    );
    env.write(
        &config,
        "[providers.openai]\napi_key = \"file-key-0000000\"\n",
    );
    let server = Served::start(&env, &[]);
    let still = || std::thread::sleep(std::time::Duration::from_millis(2100));
    let edit = |path: &std::path::Path, text: &str| {
        let mut f = std::fs::OpenOptions::new().write(true).open(path).unwrap();
        std::io::Write::write_all(&mut f, text.as_bytes()).unwrap();
    };
    let remember = |text: &str| {
        let body = stateless(2, "tools/call", call("remember", json!({"content": text})));
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "remember"),
        ];
        let a = server.post("team", &headers, &body);
        assert_eq!(a.json()["result"]["isError"], false, "{a:?}");
    };

    still();
    assert!(listed_tools(&server, "team").contains(&"log_recent".to_owned()));
    edit(
        &file,
        "name = \"team\"\nmodel = \"x/y\"\n[notes]\nenabled = true\n[memory]\nenabled = false\n",
    );
    assert!(!listed_tools(&server, "team").contains(&"log_recent".to_owned()));

    still();
    remember("before: file-key-0f9e8d7c");
    edit(
        &config,
        "[providers.openai]\napi_key = \"file-key-0f9e8d7c\"\n",
    );
    remember("after: file-key-0f9e8d7c");
    let daily = team_daily(&env, "team");
    assert!(daily.contains("before: file-key-0f9e8d7c"), "{daily}");
    assert!(daily.contains("after: [redacted: provider key]"), "{daily}");
}
