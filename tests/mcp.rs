//! `axe-mcp` over stdio, spoken to as an MCP client speaks: the handshake,
//! the tools, bad input, and many servers writing one memory at once.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};

use serde_json::{Value, json};

use crate::util::{Env, read};

/// Every tool, for a name with no agent file (every kind on).
pub const ALL_TOOLS: [&str; 10] = [
    "recall",
    "remember",
    "reflect",
    "learn_fact",
    "search_notes",
    "context",
    "state_context",
    "state_record",
    "log_recent",
    "log_append",
];

/// A running `axe-mcp` and the ends of its pipes.
pub(crate) struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Client {
    pub(crate) fn start(env: &Env, args: &[&str]) -> Client {
        let mut child = env
            .std_cmd("axe-mcp")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Client {
            child,
            stdin,
            stdout,
            next: 0,
        }
    }

    fn send_line(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    fn reply(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    }

    pub(crate) fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        self.send_line(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        );
        let reply = self.reply();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }

    pub(crate) fn initialize(&mut self) -> Value {
        let r = self.request(
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        self.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        r
    }

    fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let result = self.result(tool, arguments);
        (
            result["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned(),
            result["isError"].as_bool().unwrap(),
        )
    }

    /// A tool's whole result.
    pub(crate) fn result(&mut self, tool: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": tool, "arguments": arguments}))["result"].clone()
    }

    /// The answer to `line`, made sure of without waiting forever: a ping
    /// follows it, so a line left unanswered shows as the ping's reply
    /// coming first. `None` when the line got no answer.
    fn answer(&mut self, line: &str) -> Option<Value> {
        self.send_line(line);
        self.send_line(r#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#);
        let first = self.reply();
        if first["id"] == "after" {
            return None;
        }
        let ping = self.reply();
        assert_eq!(
            ping["id"], "after",
            "one answer to {line}: {first} then {ping}"
        );
        Some(first)
    }

    /// Closes stdin and waits: the server ends with 0.
    pub(crate) fn finish(mut self) {
        drop(self.stdin);
        let status = self.child.wait().unwrap();
        assert!(status.success(), "{status:?}");
    }
}

#[test]
fn the_handshake_the_tools_and_a_memory_kept() {
    let env = Env::new();
    let mut c = Client::start(&env, &["claude"]);
    let init = c.initialize();
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
    assert_eq!(init["result"]["serverInfo"]["name"], "axe-mcp");
    assert!(
        init["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("no agent file of that name: every kind on")
    );
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    assert_eq!(tool_names(&mut c), ALL_TOOLS);
    let tools = c.request("tools/list", json!({}));
    assert_eq!(
        tools["result"]["tools"][0]["annotations"]["readOnlyHint"],
        true
    );
    let (text, err) = c.call("remember", json!({"content": "Ada prefers short answers."}));
    assert!(
        !err && text.starts_with("Remembered in agents/claude/daily/"),
        "{text}"
    );
    // Not seen whole: a reflect over a file it never recalled is refused...
    c.call("reflect", json!({"content": "first"}));
    let (text, err) = c.call("reflect", json!({"content": "second"}));
    assert!(!err, "its own write counts as seen: {text}");
    let (text, _) = c.call("recall", json!({}));
    assert!(
        text.contains("Ada prefers short answers.") && text.contains("second"),
        "{text}"
    );
    // A malformed call is a tool error naming the argument; nothing written.
    let (text, err) = c.call("reflect", json!({"contents": "x"}));
    assert!(
        err && text.contains("unknown argument \"contents\""),
        "{text}"
    );
    let memory = env.data_dir().join("axe/notes/agents/claude/MEMORY.md");
    assert_eq!(read(&memory), "second");
    c.finish();
}

#[test]
fn bad_input_gets_protocol_errors_and_the_server_goes_on() {
    let env = Env::new();
    let mut c = Client::start(&env, &[]);
    c.send_line("this is not json");
    assert_eq!(c.reply()["error"]["code"], -32700);
    assert_eq!(c.request("no/such", json!({}))["error"]["code"], -32601);
    let r = c.request("tools/call", json!({"name": "nope"}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.request("tools/call", json!({"arguments": {}}));
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // Still serving.
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    c.finish();
}

#[test]
fn read_only_offers_only_the_tools_that_read() {
    let env = Env::new();
    let mut c = Client::start(&env, &["a", "--read-only"]);
    c.initialize();
    let names = tool_names(&mut c);
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
    let r = c.request(
        "tools/call",
        json!({"name": "remember", "arguments": {"content": "x"}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    c.finish();
}

#[test]
fn many_servers_on_one_memory_lose_nothing() {
    const CLIENTS: usize = 8;
    let env = Env::new();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let mut c = Client::start(&env, &["shared"]);
            c.initialize();
            (i, c)
        })
        .collect();
    // After the first recall every client waits for the others: all
    // eight then hold the same hash and rewrite over it at once, so the
    // race on `if_match` takes place by schedule, not by luck.
    let gate = std::sync::Arc::new(crate::util::Gate::new(
        CLIENTS,
        std::time::Duration::from_secs(60),
    ));
    let handles: Vec<_> = clients
        .into_iter()
        .map(|(i, mut c)| {
            let gate = std::sync::Arc::clone(&gate);
            std::thread::spawn(move || {
                // Each reflect: the hash it passed, and whether it wrote.
                let mut tries = Vec::new();
                for n in 0..25 {
                    for (tool, args) in [
                        (
                            "remember",
                            json!({"content": format!("client {i} note {n}")}),
                        ),
                        (
                            "state_record",
                            json!({"signals": format!("AXE_MEMORY: KEY_FACT client {i} fact {n}")}),
                        ),
                        (
                            "log_append",
                            json!({"task": format!("client {i} task {n}"), "result": "ok"}),
                        ),
                    ] {
                        let (text, err) = c.call(tool, args);
                        assert!(!err, "{tool}: {text}");
                    }
                    // Everyone rewrites MEMORY.md from what they read: a
                    // rewrite that loses to another's is told so, never
                    // written over it.
                    let recalled =
                        c.request("tools/call", json!({"name": "recall", "arguments": {}}));
                    let sha = recalled["result"]["structuredContent"]["memory_sha256"]
                        .as_str()
                        .unwrap_or_else(|| panic!("no memory_sha256: {recalled}"))
                        .to_owned();
                    if n == 0 {
                        gate.meet();
                    }
                    let (text, err) = c.call(
                        "reflect",
                        json!({"content": format!("client {i} round {n}"), "if_match": sha}),
                    );
                    if err {
                        assert!(text.contains("changed since you last read it"), "{text}");
                    }
                    tries.push((sha, !err));
                }
                c.finish();
                tries
            })
        })
        .collect();
    let tries: Vec<(String, bool)> = handles
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    // Each hash lets one rewrite through at most: a second over the same
    // text would write over the first unseen. The first round's hash was
    // held by all eight at once (the race took place), and one of them won.
    let mut wins = std::collections::HashMap::<&str, (usize, usize)>::new();
    for (sha, won) in &tries {
        let seen = wins.entry(sha.as_str()).or_default();
        seen.0 += 1;
        seen.1 += usize::from(*won);
    }
    for (sha, (tried, won)) in &wins {
        assert!(
            *won <= 1,
            "{won} of {tried} rewrites over {sha} went through"
        );
    }
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_eq!(
        wins.get(empty),
        Some(&(CLIENTS, 1)),
        "all eight raced over the empty MEMORY.md, one won"
    );
    let memory = read(&env.data_dir().join("axe/notes/agents/shared/MEMORY.md"));
    assert!(memory.starts_with("client "), "one whole rewrite: {memory}");
    let state: Value =
        serde_json::from_str(&read(&env.data_dir().join("axe/state/shared.json"))).unwrap();
    let facts: Vec<&str> = state["key_facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap())
        .collect();
    let log = read(&env.data_dir().join("axe/memory/shared.md"));
    for i in 0..8 {
        for n in 0..25 {
            let fact = format!("client {i} fact {n}");
            assert_eq!(facts.iter().filter(|f| **f == fact).count(), 1, "{fact}");
            let task = format!("**Task:** client {i} task {n}\n");
            assert_eq!(log.matches(&task).count(), 1, "{task}");
        }
    }
    let daily = env.data_dir().join("axe/notes/agents/shared/daily");
    let text: String = std::fs::read_dir(&daily)
        .unwrap()
        .map(|e| read(&e.unwrap().path()))
        .collect();
    for i in 0..8 {
        for n in 0..25 {
            assert_eq!(
                text.matches(&format!("client {i} note {n}\n")).count(),
                1,
                "client {i} note {n}"
            );
        }
    }
}

#[test]
fn the_stateless_revision_discovers_and_checks_each_requests_version() {
    let env = Env::new();
    let mut c = Client::start(&env, &["a"]);
    let meta = |v: &str| json!({"io.modelcontextprotocol/protocolVersion": v, "io.modelcontextprotocol/clientCapabilities": {}});
    let d = c.request("server/discover", json!({"_meta": meta("2026-07-28")}));
    let r = &d["result"];
    assert_eq!(r["supportedVersions"][0], "2026-07-28", "{d}");
    assert!(
        r["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2025-11-25"))
    );
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["cacheScope"], "private");
    assert_eq!(r["capabilities"], json!({"tools": {}, "resources": {}}));
    // No initialize: each request says its version.
    let list = c.request("tools/list", json!({"_meta": meta("2026-07-28")}));
    assert_eq!(list["result"]["resultType"], "complete");
    assert_eq!(
        list["result"]["tools"].as_array().unwrap().len(),
        ALL_TOOLS.len()
    );
    let call = c.request(
        "tools/call",
        json!({"_meta": meta("2026-07-28"), "name": "remember", "arguments": {"content": "stateless"}}),
    );
    assert_eq!(call["result"]["isError"], false, "{call}");
    assert_eq!(call["result"]["resultType"], "complete");
    let bad = c.request("tools/list", json!({"_meta": meta("2099-01-01")}));
    assert_eq!(bad["error"]["code"], -32022, "{bad}");
    assert_eq!(bad["error"]["data"]["requested"], "2099-01-01");
    assert_eq!(bad["error"]["data"]["supported"][0], "2026-07-28");
    c.finish();
}

/// A client may add arguments of its own to every tool it shows its
/// model (Gemini CLI's `wait_for_previous`, which its model MUST set on a
/// dependent call): they are left out, so a reflect after a recall in one
/// turn writes. A near miss of a declared name stays an error with its
/// "did you mean", nothing written.
#[test]
fn a_clients_own_arguments_are_ignored_and_a_near_miss_refused() {
    let env = Env::new();
    let memory = env.data_dir().join("axe/notes/agents/gem/MEMORY.md");
    env.write(&memory, "Deploys run from orca-7731.\n");
    let mut c = Client::start(&env, &["gem"]);
    c.initialize();
    let (text, err) = c.call("recall", json!({"wait_for_previous": false}));
    assert!(!err && text.contains("orca-7731"), "{text}");
    let (text, err) = c.call(
        "reflect",
        json!({"content": "Deploys run from orca-7731.\nNotes go out Fridays.\n", "wait_for_previous": true}),
    );
    assert!(!err, "{text}");
    assert_eq!(
        read(&memory),
        "Deploys run from orca-7731.\nNotes go out Fridays.\n"
    );
    let (text, err) = c.call(
        "learn_fact",
        json!({"topic": "deploys", "content": "Blue-green.", "wait_for_previous": true, "x-client-trace": "1"}),
    );
    assert!(!err, "{text}");
    for (arguments, meant) in [
        (
            json!({"contents": "x", "wait_for_previous": true}),
            "content",
        ),
        (json!({"content": "x", "ifMatch": "0"}), "if_match"),
        (json!({"content": "x", "if-match": "0"}), "if_match"),
        (json!({"Content": "x"}), "content"),
    ] {
        let (text, err) = c.call("reflect", arguments.clone());
        let unknown = arguments
            .as_object()
            .unwrap()
            .keys()
            .find(|k| k.as_str() != "content" && k.as_str() != "wait_for_previous")
            .unwrap()
            .clone();
        assert!(
            err && text.contains(&format!(
                "unknown argument \"{unknown}\" (did you mean \"{meant}\"?"
            )),
            "{arguments}: {text}"
        );
    }
    assert_eq!(
        read(&memory),
        "Deploys run from orca-7731.\nNotes go out Fridays.\n"
    );
    c.finish();
}

/// Under 2026-07-28 a `resources/read` says how it may be cached, as the
/// lists do, and an unknown resource's -32602 names the URI asked for.
#[test]
fn a_stateless_resource_read_says_its_caching_and_an_unknown_uri() {
    let env = Env::new();
    env.write(
        &env.data_dir().join("axe/notes/agents/a/MEMORY.md"),
        "kept\n",
    );
    let mut c = Client::start(&env, &["a"]);
    let meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    for method in ["resources/list", "resources/templates/list", "tools/list"] {
        let r = c.request(method, json!({"_meta": meta}));
        assert_eq!(r["result"]["ttlMs"], 0, "{method}: {r}");
        assert_eq!(r["result"]["cacheScope"], "private", "{method}: {r}");
    }
    let uri = "axe://notes/agents/a/MEMORY.md";
    let r = c.request("resources/read", json!({"_meta": meta, "uri": uri}));
    assert_eq!(r["result"]["contents"][0]["text"], "kept\n", "{r}");
    assert_eq!(r["result"]["ttlMs"], 0, "{r}");
    assert_eq!(r["result"]["cacheScope"], "private", "{r}");
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    for uri in [
        "axe://notes/world/nothing.md",
        "axe://notes/agents/b/MEMORY.md",
        "file:///etc/passwd",
    ] {
        let r = c.request("resources/read", json!({"_meta": meta, "uri": uri}));
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
        assert_eq!(r["error"]["data"]["uri"], uri, "{uri}: {r}");
    }
    c.finish();
}

/// The names `tools/list` gives, in order.
fn tool_names(c: &mut Client) -> Vec<String> {
    let tools = c.request("tools/list", json!({}));
    tools["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `tools/call`'s whole result.
fn call_result(c: &mut Client, tool: &str, arguments: Value) -> Value {
    c.request("tools/call", json!({"name": tool, "arguments": arguments}))["result"].clone()
}

#[test]
fn without_a_session_a_rewrite_needs_the_hash_recall_gave() {
    let env = Env::new();
    // One client writes MEMORY.md and goes.
    let mut first = Client::start(&env, &["shared"]);
    first.initialize();
    assert!(!first.call("reflect", json!({"content": "v1"})).1);
    first.finish();
    // Another, with no session of its own: it has seen nothing.
    let mut c = Client::start(&env, &["shared"]);
    let (text, err) = c.call("reflect", json!({"content": "mine"}));
    assert!(err && text.contains("not shown to you whole"), "{text}");
    let recalled = call_result(&mut c, "recall", json!({}));
    let sha = recalled["structuredContent"]["memory_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(recalled["structuredContent"]["files"][0]["kind"], "memory");
    // A stale hash is a conflict; the one recall gave writes.
    let stale = "0".repeat(64);
    let (text, err) = c.call("reflect", json!({"content": "mine", "if_match": stale}));
    assert!(
        err && text.contains("changed since you last read it"),
        "{text}"
    );
    let done = call_result(&mut c, "reflect", json!({"content": "v2", "if_match": sha}));
    assert_eq!(done["isError"], false, "{done}");
    let next = done["structuredContent"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(done["structuredContent"]["path"], "agents/shared/MEMORY.md");
    // Its result's hash is the next if_match.
    let again = call_result(
        &mut c,
        "reflect",
        json!({"content": "v3", "if_match": next}),
    );
    assert_eq!(again["isError"], false, "{again}");
    assert_eq!(
        read(&env.data_dir().join("axe/notes/agents/shared/MEMORY.md")),
        "v3"
    );
    // Every tool says the shape of its structured result.
    let tools = c.request("tools/list", json!({}));
    for t in tools["result"]["tools"].as_array().unwrap() {
        assert_eq!(t["outputSchema"]["type"], "object", "{t}");
    }
    c.finish();
}

#[test]
fn the_state_the_run_log_and_the_one_block_are_tools_too() {
    let env = Env::new();
    let mut c = Client::start(&env, &["builder"]);
    c.initialize();
    let done = call_result(
        &mut c,
        "state_record",
        json!({"signals": "AXE_MEMORY: KEY_FACT Postgres 16\nAXE_MEMORY: WISH more time\nplain text", "task": "42", "phase": "BUILD", "outcome": "failure", "error": "tests fail"}),
    );
    assert_eq!(done["isError"], false, "{done}");
    assert_eq!(done["structuredContent"]["iteration"], 1);
    assert_eq!(
        done["structuredContent"]["recorded"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert_eq!(done["structuredContent"]["rejected"][0]["line"], 2);
    let (block, err) = c.call("state_context", json!({"task": "42"}));
    assert!(
        !err && block.contains("Postgres 16") && block.contains("tests fail"),
        "{block}"
    );
    let (bad, err) = c.call("state_record", json!({"outcome": "maybe"}));
    assert!(err && bad.contains("success or failure"), "{bad}");
    let (text, err) = c.call(
        "log_append",
        json!({"task": "review PR 42", "result": "two problems"}),
    );
    assert!(!err, "{text}");
    let recent = call_result(&mut c, "log_recent", json!({}));
    assert_eq!(
        recent["structuredContent"]["entries"][0]["task"],
        "review PR 42"
    );
    c.call("remember", json!({"content": "Deploys are blue-green."}));
    let whole = call_result(&mut c, "context", json!({"budget": 4000, "task": "42"}));
    let text = whole["content"][0]["text"].as_str().unwrap();
    for part in [
        "# Session Memory",
        "Postgres 16",
        "# Recent Runs",
        "review PR 42",
        "blue-green",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    let small = call_result(&mut c, "context", json!({"budget": 60}));
    assert!(
        small["structuredContent"]["chars"].as_u64().unwrap() <= 60,
        "{small}"
    );
    assert!(
        !small["structuredContent"]["left_out"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    // The files are the toolkit's own: the log the executables read.
    let log = read(&env.data_dir().join("axe/memory/builder.md"));
    assert!(log.contains("**Task:** review PR 42"), "{log}");
    c.finish();
}

#[test]
fn an_agent_file_says_which_kinds_are_served() {
    let env = Env::new();
    env.agent(
        "reviewer",
        "name = \"reviewer\"\nmodel = \"anthropic/m\"\n[memory]\nenabled = true\n",
    );
    let mut c = Client::start(&env, &["reviewer"]);
    let init = c.initialize();
    let said = init["result"]["instructions"].as_str().unwrap();
    assert!(
        said.contains("a run log") && !said.contains("notes"),
        "{said}"
    );
    let names = tool_names(&mut c);
    assert_eq!(names, ["context", "log_recent", "log_append"]);
    c.finish();
}

#[test]
fn the_memorys_files_are_resources_and_only_its_own() {
    let env = Env::new();
    let mut c = Client::start(&env, &["ada"]);
    c.initialize();
    c.call("remember", json!({"content": "Ada likes tea."}));
    c.call("reflect", json!({"content": "Ada reviews Rust."}));
    c.call(
        "learn_fact",
        json!({"topic": "deploys", "content": "Blue-green."}),
    );
    c.call(
        "state_record",
        json!({"signals": "AXE_MEMORY: KEY_FACT tea"}),
    );
    c.call("log_append", json!({"task": "t", "result": "r"}));
    let list = c.request("resources/list", json!({}));
    let uris: Vec<String> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["uri"].as_str().unwrap().to_owned())
        .collect();
    for want in [
        "axe://notes/agents/ada/MEMORY.md",
        "axe://notes/world/deploys.md",
        "axe://state/ada.json",
        "axe://log/ada.md",
    ] {
        assert!(uris.iter().any(|u| u == want), "{want}: {uris:?}");
    }
    assert!(
        uris.iter()
            .any(|u| u.starts_with("axe://notes/agents/ada/daily/"))
    );
    for uri in &uris {
        let r = c.request("resources/read", json!({"uri": uri}));
        let text = r["result"]["contents"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(!text.is_empty(), "{uri}: {r}");
    }
    let memory = c.request(
        "resources/read",
        json!({"uri": "axe://notes/agents/ada/MEMORY.md"}),
    );
    assert_eq!(memory["result"]["contents"][0]["text"], "Ada reviews Rust.");
    assert_eq!(memory["result"]["contents"][0]["mimeType"], "text/markdown");
    // Another agent's files, a way out, an unknown scheme: no such resource.
    std::fs::create_dir_all(env.data_dir().join("axe/notes/agents/bob")).unwrap();
    std::fs::write(
        env.data_dir().join("axe/notes/agents/bob/MEMORY.md"),
        "secret",
    )
    .unwrap();
    for uri in [
        "axe://notes/agents/bob/MEMORY.md",
        "axe://notes/agents/ada/../bob/MEMORY.md",
        "axe://notes/world/../agents/bob/MEMORY.md",
        "file:///etc/passwd",
        "axe://state/bob.json",
    ] {
        let r = c.request("resources/read", json!({"uri": uri}));
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
    }
    let templates = c.request("resources/templates/list", json!({}));
    assert_eq!(
        templates["result"]["resourceTemplates"][0]["uriTemplate"],
        "axe://notes/world/{topic}.md"
    );
    c.finish();
}

/// A small deterministic generator, so a failing input can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn no_input_makes_the_server_panic_hang_or_stop_answering() {
    let env = Env::new();
    let mut rng = Lcg(42);
    let pieces = [
        "{",
        "}",
        "[",
        "]",
        "\"",
        ":",
        ",",
        "null",
        "1e999",
        "-0",
        "\"jsonrpc\"",
        "\"2.0\"",
        "\"id\"",
        "\"method\"",
        "\"params\"",
        "\"tools/call\"",
        "\"resources/read\"",
        "\"initialize\"",
        "\"name\"",
        "\"arguments\"",
        "\"recall\"",
        "\"reflect\"",
        "\"content\"",
        "\"uri\"",
        "\"axe://notes/../x\"",
        "\"_meta\"",
        "\u{0}",
        "\u{ffff}",
        "\\u0000",
        "true",
        "12345678901234567890",
    ];
    let mut c = Client::start(&env, &["fuzz"]);
    for i in 0..400 {
        let mut line = String::new();
        for _ in 0..(rng.next() % 12) {
            line.push_str(pieces[(rng.next() as usize) % pieces.len()]);
        }
        // Every other line a well-formed request around random params.
        if i % 2 == 0 {
            line = format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":{},"params":{{"name":{},"arguments":{{"content":{},"days":{}}},"uri":{}}}}}"#,
                pieces[14 + (rng.next() as usize) % 4],
                pieces[20 + (rng.next() as usize) % 2],
                pieces[(rng.next() as usize) % pieces.len()],
                pieces[(rng.next() as usize) % pieces.len()],
                pieces[(rng.next() as usize) % pieces.len()],
            );
        }
        let line = line.replace('\n', " ");
        c.send_line(&line);
        // A request gets one reply; anything else may get a parse error.
        // Ping after each line: the server must still answer in order.
        let mut replies = Vec::new();
        let ping = c.next + 1_000_000;
        c.send_line(&json!({"jsonrpc": "2.0", "id": ping, "method": "ping"}).to_string());
        loop {
            let r = c.reply();
            if r["id"] == ping {
                break;
            }
            replies.push(r);
        }
        assert!(replies.len() <= 1, "{line}: {replies:?}");
    }
    c.finish();
}

/// What a `remember` of `big` came to when its server was sent SIGTERM
/// in the middle of the append. The server is stopped (SIGSTOP) and let
/// go again over and over; while it stands still the test looks for the
/// append's marker beside the daily log, which is there only while the
/// entry is being written, and on seeing it sends SIGTERM before letting
/// it go: the signal then certainly comes mid-write. Gives whether that
/// happened (else the server is let answer), whether the server
/// answered, and the entries in the log, each checked whole in the raw
/// file before any later writer could repair it.
fn remember_then_sigterm(
    env: &Env,
    big: &str,
    patience: std::time::Duration,
) -> (bool, bool, usize) {
    use rustix::process::{Pid, Signal, kill_process};
    use std::io::Read;
    use std::time::Instant;
    let daily = env.data_dir().join("axe/notes/agents/term/daily");
    let marked = || {
        std::fs::read_dir(&daily)
            .into_iter()
            .flatten()
            .any(|e| e.is_ok_and(|e| e.file_name().to_string_lossy().ends_with(".axe-append")))
    };
    let mut c = Client::start(env, &["term"]);
    c.initialize();
    let id = c.child.id();
    let pid = Pid::from_raw(id as i32).unwrap();
    let standing = || {
        let stat = std::fs::read_to_string(format!("/proc/{id}/stat")).unwrap_or_default();
        let state = stat.rsplit(')').next().unwrap_or("").trim_start();
        state.is_empty() || state.starts_with(['T', 't', 'Z'])
    };
    let request = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": big}}});
    c.send_line(&request.to_string());
    let until = Instant::now() + patience;
    let mut caught = false;
    while Instant::now() < until {
        kill_process(pid, Signal::STOP).unwrap();
        while !standing() {
            std::hint::spin_loop();
        }
        caught = marked();
        if caught {
            kill_process(pid, Signal::TERM).unwrap();
        }
        kill_process(pid, Signal::CONT).unwrap();
        let written = std::fs::read_dir(&daily)
            .into_iter()
            .flatten()
            .any(|e| e.is_ok_and(|e| e.metadata().is_ok_and(|m| m.len() > big.len() as u64)));
        if caught || written {
            break;
        }
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    let answered = if caught {
        let status = c.child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert!(
            status.signal() == Some(15) || status.code() == Some(143),
            "ended by SIGTERM: {status:?}"
        );
        let mut rest = String::new();
        let _ = c.stdout.read_to_string(&mut rest);
        rest.contains("\"id\":7")
    } else {
        let answer = c.reply();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
        c.finish();
        true
    };
    // A marker left behind is an append that died midway.
    assert!(!marked(), "an append was cut: its marker is left");
    let mut entries = 0;
    for e in std::fs::read_dir(&daily).unwrap() {
        let text = read(&e.unwrap().path());
        for part in text.split("\n## ").skip(1) {
            // The heading's line, then the note: all of it.
            let note = part.split_once("\n\n").map_or("", |(_, note)| note);
            assert!(
                note.trim_end() == big.trim_end(),
                "torn: {} bytes of {}",
                note.len(),
                big.len()
            );
            entries += 1;
        }
    }
    (caught, answered, entries)
}

/// SIGTERM while `remember` is writing: the entry is written whole, then
/// the server ends without answering. The signal is sent once the append
/// is seen under way, so the race takes place; a try that misses the
/// moment is let finish and tried again, bounded in time.
#[test]
fn sigterm_ends_the_server_without_tearing_a_write() {
    use std::time::{Duration, Instant};
    let line = "a line of a large note that must arrive whole\n";
    let big = line.repeat((1 << 20) / line.len());
    let started = Instant::now();
    for tries in 0.. {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "in {tries} tries the append was never seen under way"
        );
        let env = Env::new();
        env.agent(
            "term",
            "name = \"term\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nmax_memory_chars = 10000000\n",
        );
        match remember_then_sigterm(&env, &big, Duration::from_secs(60)) {
            // Caught mid-write: the entry whole, no answer after.
            (true, answered, entries) => {
                assert_eq!((answered, entries), (false, 1));
                eprintln!("caught mid-write after {} tries", tries + 1);
                return;
            }
            (false, answered, entries) => assert_eq!((answered, entries), (true, 1)),
        }
    }
}

/// A client's writes lose their secrets as a run's do, and the tool's
/// result says which, by kind and place.
#[test]
fn secrets_a_client_writes_are_redacted_and_reported() {
    let env = Env::new();
    let token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let mut c = Client::start(&env, &["keeper"]);
    c.initialize();
    let appended = call_result(
        &mut c,
        "log_append",
        json!({"task": "push", "result": format!("used {token}")}),
    );
    assert_eq!(
        appended["structuredContent"]["redacted"],
        json!([{"kind": "github token", "where": "run log"}])
    );
    let text = appended["content"][0]["text"].as_str().unwrap();
    assert!(
        text.ends_with(" Before writing, redacted 1 secret (github token) from the run log: the marker stays in its place."),
        "{text}"
    );
    let recorded = call_result(
        &mut c,
        "state_record",
        json!({"signals": "AXE_MEMORY: KEY_FACT key AKIAIOSFODNN7EXAMPLE"}),
    );
    assert_eq!(
        recorded["structuredContent"]["redacted"],
        json!([{"kind": "aws access key", "where": "state"}])
    );
    let nothing = call_result(&mut c, "remember", json!({"content": "nothing secret"}));
    assert_eq!(nothing["structuredContent"]["redacted"], json!([]));
    c.finish();
    let log = read(&env.log_path("keeper"));
    assert!(
        log.ends_with("**Result:** used [redacted: github token]\n\n"),
        "{log}"
    );
    let state = read(&env.data_dir().join("axe/state/keeper.json"));
    assert!(
        state.contains("\"key [redacted: aws access key]\""),
        "{state}"
    );
}

/// The SHA-256 of `bytes` as `sha256sum` prints it: a hash computed by
/// another program than the one under test.
fn sha256(bytes: &[u8]) -> String {
    let mut child = std::process::Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(bytes).unwrap();
    let out = child.wait_with_output().unwrap();
    String::from_utf8(out.stdout).unwrap()[..64].to_owned()
}

/// Claude Code and Codex hand the model `structuredContent` in place of
/// the text when it is there: it must hold the memory itself, each file's
/// text with its path and hash, and the block of `context` and
/// `state_context`; the text says the same, hashes included.
#[test]
fn structured_content_carries_the_memory_the_text_shows() {
    let env = Env::new();
    let seeded = "Ada rotates the deploy key on Fridays.\n";
    let notes = env.data_dir().join("axe/notes");
    env.write(&notes.join("agents/claude/MEMORY.md"), seeded);
    env.write(
        &notes.join("world/deploys.md"),
        "Blue-green, never on Mondays.\n",
    );
    let mut c = Client::start(&env, &["claude"]);
    c.initialize();
    c.call(
        "state_record",
        json!({"signals": "AXE_MEMORY: KEY_FACT the staging database is Postgres 16"}),
    );
    let recalled = call_result(&mut c, "recall", json!({}));
    let data = &recalled["structuredContent"];
    let hash = sha256(seeded.as_bytes());
    assert_eq!(data["memory_sha256"], hash.as_str(), "{recalled}");
    let files = data["files"].as_array().unwrap();
    let memory = files
        .iter()
        .find(|f| f["kind"] == "memory")
        .unwrap_or_else(|| panic!("{recalled}"));
    assert_eq!(memory["path"], "agents/claude/MEMORY.md");
    assert_eq!(memory["sha256"], hash.as_str());
    assert_eq!(memory["text"], seeded.trim_end());
    let topic = files.iter().find(|f| f["kind"] == "world").unwrap();
    assert_eq!(topic["path"], "world/deploys.md");
    assert_eq!(topic["text"], "Blue-green, never on Mondays.");
    assert_eq!(
        topic["sha256"],
        sha256(b"Blue-green, never on Mondays.\n").as_str()
    );
    // The text carries the same: the memory, each file's path and hash.
    let text = recalled["content"][0]["text"].as_str().unwrap();
    for part in [
        seeded.trim_end(),
        "agents/claude/MEMORY.md",
        hash.as_str(),
        "world/deploys.md",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // The blocks: the text itself, the same in both.
    for (tool, args) in [
        ("context", json!({"budget": 4000})),
        ("state_context", json!({})),
    ] {
        let r = call_result(&mut c, tool, args);
        let block = r["structuredContent"]["text"].as_str().unwrap_or_default();
        assert_eq!(block, r["content"][0]["text"], "{tool}: {r}");
        assert!(block.contains("Postgres 16"), "{tool}: {r}");
    }
    let whole = call_result(&mut c, "context", json!({"budget": 4000}));
    let block = whole["structuredContent"]["text"].as_str().unwrap();
    assert!(block.contains(seeded.trim_end()), "{block}");
    // Search: the snippet is there, and so is its path.
    let found = call_result(&mut c, "search_notes", json!({"query": "Fridays"}));
    assert_eq!(
        found["structuredContent"]["results"][0]["path"], "agents/claude/MEMORY.md",
        "{found}"
    );
    assert!(
        found["structuredContent"]["results"][0]["snippet"]
            .as_str()
            .unwrap()
            .contains("Fridays")
    );
    c.finish();
}

/// A file the budget left out went out in no result: it is not seen, so
/// a reflect without `if_match` is refused, even after a recall that did
/// show it (what was seen is what the last recall showed).
#[test]
fn a_file_the_budget_left_out_is_not_seen() {
    let env = Env::new();
    env.agent(
        "small",
        "name = \"small\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nrecall_chars = 400\n",
    );
    let memory = env.data_dir().join("axe/notes/agents/small/MEMORY.md");
    env.write(&memory, "short and seen");
    let mut c = Client::start(&env, &["small"]);
    c.initialize();
    let first = call_result(&mut c, "recall", json!({}));
    assert_eq!(
        first["structuredContent"]["files"][0]["path"],
        "agents/small/MEMORY.md"
    );
    // Someone else makes it longer than the budget; the next recall
    // leaves it out.
    let long = "a line that stays\n".repeat(60);
    env.write(&memory, &long);
    let second = call_result(&mut c, "recall", json!({}));
    let data = &second["structuredContent"];
    assert_eq!(
        data["left_out"][0]["path"], "agents/small/MEMORY.md",
        "{second}"
    );
    assert!(
        data["files"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["kind"] != "memory"),
        "{second}"
    );
    // What the text says of it, the data says too.
    let note = data["note"].as_str().unwrap_or_default();
    assert!(
        note.starts_with("(Left out to keep within")
            && second["content"][0]["text"]
                .as_str()
                .unwrap()
                .contains(note),
        "{second}"
    );
    // No hash either: a client without a session takes recall's hash as
    // its licence to overwrite, so one of a file not shown would let it
    // write blind.
    assert!(
        data.get("memory_sha256").is_none_or(Value::is_null),
        "{second}"
    );
    assert!(
        !second["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains(&sha256(long.as_bytes())),
        "{second}"
    );
    let (text, err) = c.call("reflect", json!({"content": "blind"}));
    assert!(err && text.contains("not shown to you whole"), "{text}");
    assert_eq!(read(&memory), long);
    c.finish();
}

/// A line that is JSON but no message, or a batch where the negotiated
/// revision has none, gets -32600 with `id: null`: never silence, since
/// the client waits for an answer.
#[test]
fn non_objects_and_batches_outside_2025_03_26_are_invalid_requests() {
    let env = Env::new();
    let mut c = Client::start(&env, &["a"]);
    let invalid = |c: &mut Client, line: &str| {
        let r = c
            .answer(line)
            .unwrap_or_else(|| panic!("no answer to {line}"));
        assert_eq!(r["error"]["code"], -32600, "{line}: {r}");
        assert_eq!(r["id"], Value::Null, "{line}: {r}");
        assert!(r.get("id").is_some(), "{line}: {r}");
        r
    };
    // Before initialize: no revision, no batches.
    for line in ["1", "\"x\"", "null", "true", "[]", "{}", "[1]"] {
        invalid(&mut c, line);
    }
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    invalid(&mut c, &format!("[{ping}]"));
    invalid(&mut c, r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#);
    // 2025-06-18 took batches out.
    c.initialize();
    let r = invalid(&mut c, &format!("[{ping}]"));
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("2025-06-18"),
        "{r}"
    );
    invalid(&mut c, "[]");
    invalid(&mut c, "42");
    assert_eq!(c.request("ping", json!({}))["result"], json!({}));
    c.finish();
}

/// Where batches exist (2025-03-26), a batch gets one array of replies,
/// each message answered as alone; a batch of notifications none; an
/// empty one and one past the bound are refused whole.
#[test]
fn a_batch_under_2025_03_26_gets_an_array_of_replies() {
    let env = Env::new();
    let mut c = Client::start(&env, &["a"]);
    let init = c.request(
        "initialize",
        json!({"protocolVersion": "2025-03-26", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
    );
    assert_eq!(init["result"]["protocolVersion"], "2025-03-26");
    let batch = json!([
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": "batched"}}},
        7,
        {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
    ]);
    let replies = c
        .answer(&batch.to_string())
        .expect("an answer to the batch");
    let replies = replies.as_array().unwrap_or_else(|| panic!("{replies}"));
    let ids: Vec<&Value> = replies.iter().map(|r| &r["id"]).collect();
    assert_eq!(
        ids,
        [
            &json!("p"),
            &json!(2),
            &Value::Null,
            &json!(3),
            &Value::Null,
            &json!(4)
        ],
        "{replies:?}"
    );
    assert_eq!(replies[0]["result"], json!({}));
    assert_eq!(replies[1]["result"]["isError"], false, "{replies:?}");
    for (i, code) in [(2, -32600), (3, -32601), (4, -32600), (5, -32600)] {
        assert_eq!(replies[i]["error"]["code"], code, "{replies:?}");
    }
    // Notifications alone: nothing, so the next reply is the ping's.
    let none = c.answer(
        r#"[{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}]"#,
    );
    assert_eq!(none, None);
    // Empty, and past the bound: one error, nothing run.
    let r = c.answer("[]").expect("an answer to []");
    assert_eq!(
        (r["error"]["code"].clone(), r["id"].clone()),
        (json!(-32600), Value::Null)
    );
    let many: Vec<Value> = (0..101)
        .map(|i| json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "remember", "arguments": {"content": format!("many {i}")}}}))
        .collect();
    let r = c
        .answer(&Value::Array(many).to_string())
        .expect("an answer to a batch past the bound");
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 100"),
        "{r}"
    );
    c.finish();
    let daily = env.data_dir().join("axe/notes/agents/a/daily");
    let text: String = std::fs::read_dir(&daily)
        .unwrap()
        .map(|e| read(&e.unwrap().path()))
        .collect();
    assert_eq!(text.matches("batched").count(), 1, "{text}");
    assert!(!text.contains("many "), "{text}");
}

/// What a strict client (OpenAI's, Gemini's, a typed SDK's) refuses in a
/// JSON Schema, at `at`: a type that is a list or `null`, a node without
/// a type, an array without `items`, an object whose `required` names
/// what it does not declare, and the combinators not every client reads.
fn portable(schema: &Value, at: &str, problems: &mut Vec<String>) {
    let types = ["string", "integer", "number", "boolean", "array", "object"];
    for key in [
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "$ref",
        "const",
        "patternProperties",
    ] {
        if schema.get(key).is_some() {
            problems.push(format!("{at}: {key}"));
        }
    }
    let Some(kind) = schema["type"].as_str().filter(|t| types.contains(t)) else {
        problems.push(format!("{at}: type {}", schema["type"]));
        return;
    };
    match kind {
        "array" => match schema.get("items") {
            Some(items) => portable(items, &format!("{at}[]"), problems),
            None => problems.push(format!("{at}: an array without items")),
        },
        "object" => {
            let empty = serde_json::Map::new();
            let properties = schema["properties"].as_object().unwrap_or(&empty);
            for (name, property) in properties {
                portable(property, &format!("{at}.{name}"), problems);
            }
            for name in schema["required"].as_array().into_iter().flatten() {
                if !properties.contains_key(name.as_str().unwrap_or_default()) {
                    problems.push(format!("{at}: required {name} is not a property"));
                }
            }
        }
        _ => {}
    }
}

/// What is wrong with `value` against `schema`: its type, its required
/// fields, its enums, and any field the schema does not declare (so the
/// schema, and the reference built on it, say all a result holds).
fn conforms(value: &Value, schema: &Value, at: &str, problems: &mut Vec<String>) {
    let fits = match schema["type"].as_str().unwrap_or_default() {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" => value.is_object(),
        other => {
            problems.push(format!("{at}: schema type {other:?}"));
            return;
        }
    };
    if !fits {
        problems.push(format!("{at}: {value} is not {}", schema["type"]));
        return;
    }
    if let Some(allowed) = schema["enum"].as_array()
        && !allowed.contains(value)
    {
        problems.push(format!("{at}: {value} is not one of {allowed:?}"));
    }
    if let Some(items) = value.as_array() {
        for (i, item) in items.iter().enumerate() {
            conforms(item, &schema["items"], &format!("{at}[{i}]"), problems);
        }
    }
    if let Some(fields) = value.as_object() {
        for name in schema["required"].as_array().into_iter().flatten() {
            if !fields.contains_key(name.as_str().unwrap()) {
                problems.push(format!("{at}: no {name}"));
            }
        }
        for (name, field) in fields {
            match schema["properties"].get(name) {
                Some(property) => conforms(field, property, &format!("{at}.{name}"), problems),
                None => problems.push(format!("{at}: {name} is not in the schema")),
            }
        }
    }
}

/// Every schema a client is given is portable, and every structured
/// result a call returns is what its output schema says, with fields both
/// present and absent (a heading, a task, MEMORY.md's hash).
#[test]
fn every_schema_is_portable_and_every_result_matches_its_schema() {
    let env = Env::new();
    let notes = env.data_dir().join("axe/notes");
    env.write(
        &notes.join("agents/s/MEMORY.md"),
        "before any heading: rollback\n\n# Deploys\n\nrollback the canary\n",
    );
    env.write(&notes.join("world/ops.md"), "rollback plan\n");
    // A run log entry without a task line.
    env.write(
        &env.log_path("s"),
        "## 2026-01-01T00:00:00Z\n**Result:** a result without a task\n\n",
    );
    let mut c = Client::start(&env, &["s"]);
    c.initialize();
    let tools = c.request("tools/list", json!({}));
    let tools = tools["result"]["tools"].as_array().unwrap().clone();
    let mut problems = Vec::new();
    for t in &tools {
        let name = t["name"].as_str().unwrap();
        portable(&t["inputSchema"], &format!("{name} input"), &mut problems);
        portable(&t["outputSchema"], &format!("{name} output"), &mut problems);
    }
    assert!(problems.is_empty(), "{problems:#?}");
    let schema =
        |name: &str| tools.iter().find(|t| t["name"] == name).unwrap()["outputSchema"].clone();
    let calls = [
        (
            "remember",
            json!({"content": "rollback done; key ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}),
        ),
        ("recall", json!({})),
        ("reflect", json!({"content": "rollback rewritten"})),
        (
            "learn_fact",
            json!({"topic": "ops", "content": "rollback plan v2"}),
        ),
        ("search_notes", json!({"query": "rollback"})),
        (
            "state_record",
            json!({"signals": "AXE_MEMORY: KEY_FACT rollback\nAXE_MEMORY: NOPE x", "outcome": "success"}),
        ),
        ("state_context", json!({})),
        ("log_append", json!({"task": "roll back", "result": "done"})),
        ("log_recent", json!({"last": 0})),
        ("context", json!({"budget": 300})),
    ];
    for (name, args) in calls {
        let r = call_result(&mut c, name, args);
        assert_eq!(r["isError"], false, "{name}: {r}");
        conforms(&r["structuredContent"], &schema(name), name, &mut problems);
    }
    // A recall whose budget leaves MEMORY.md out: no hash at all.
    env.write(&notes.join("agents/s/MEMORY.md"), "x".repeat(200_000));
    let r = call_result(&mut c, "recall", json!({}));
    conforms(
        &r["structuredContent"],
        &schema("recall"),
        "recall",
        &mut problems,
    );
    assert!(problems.is_empty(), "{problems:#?}");
    c.finish();
}

/// A client may start the server without the user's `XDG_*` (Codex does):
/// `--config-dir` and `--data-dir` name axe's directories on the command
/// line instead, and win over whatever the environment says. The agent
/// file comes from the one, the memory goes to the other, and nothing to
/// the environment's.
#[test]
fn the_directories_on_the_command_line_win_over_the_environment() {
    let env = Env::new();
    let config = env.root().join("elsewhere/config");
    let data = env.root().join("elsewhere/data");
    env.write(
        &config.join("agents/team.toml"),
        "name = \"team\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\n",
    );
    let (config_arg, data_arg) = (config.to_str().unwrap(), data.to_str().unwrap());
    let mut c = Client::start(
        &env,
        &["--config-dir", config_arg, "--data-dir", data_arg, "team"],
    );
    c.initialize();
    // The agent file's kinds: notes only, so no state and no run log.
    assert_eq!(
        tool_names(&mut c),
        [
            "recall",
            "remember",
            "reflect",
            "learn_fact",
            "search_notes",
            "context"
        ]
    );
    let (text, err) = c.call("reflect", json!({"content": "Deploys on Fridays.\n"}));
    assert!(!err, "{text}");
    c.finish();
    assert_eq!(
        read(&data.join("notes/agents/team/MEMORY.md")),
        "Deploys on Fridays.\n"
    );
    assert!(
        !env.data_dir().exists(),
        "the environment's data dir was used"
    );
}

/// A relative directory would name a different place for each client
/// (each starts its server where it likes): refused, exit 2, nothing read.
#[test]
fn a_relative_directory_is_refused() {
    let env = Env::new();
    for flag in ["--config-dir", "--data-dir"] {
        env.cmd("axe-mcp")
            .args([flag, "axe", "team"])
            .write_stdin("")
            .assert()
            .code(2)
            .stdout("")
            .stderr(predicates::str::contains(format!(
                "{flag} must be an absolute path"
            )));
    }
}
