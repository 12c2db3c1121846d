//! `axe-mcp` driven by the official MCP SDKs as real clients over stdio:
//! the Python SDK (`mcp` on PyPI, 2.x) and the TypeScript SDK
//! (`@modelcontextprotocol/sdk`, 1.x, and its successor
//! `@modelcontextprotocol/client`, 2.x). The clients are the scripts
//! `tests/mcp/client.py` and `tests/mcp/client.cjs`: each connects through
//! its SDK's stdio transport, lists the tools, calls every one, a malformed
//! call and an unknown tool, and closes, printing what it saw as JSON;
//! the tests here check that, the files written, and the messages on the
//! wire (a small `tee` wrapper between client and server keeps them).
//!
//! Where the SDKs are: `tests/mcp/install` (which `.ci/run` runs, and a
//! developer can) installs pinned versions under `$AXE_TEST_SDK_DIR`, by
//! default `${XDG_CACHE_HOME:-$HOME/.cache}/axe-test-sdk`, so the same rule
//! holds for root on a fresh CI machine and for a developer, and nothing is
//! fetched while the tests run: `python/` is a venv with `mcp` (Debian's
//! python3 refuses pip installs outside one), `node/node_modules/` holds
//! the npm packages, which the script finds through `NODE_PATH` (hence
//! CommonJS: ES modules ignore `NODE_PATH`). A `python3` on `PATH` that
//! has `mcp` 2.x does too. Without them a test says it skipped, and fails
//! under `AXE_TEST_ALL`.
//!
//! The protocol generations: today `axe-mcp` speaks the handshake
//! generation (`initialize`). Each session test is one row of what the
//! client does and what must come of it ([`Expect`]): the Python SDK's
//! default (`mode="auto"`) probes `server/discover` first and, told the
//! method is not found, falls back to `initialize`; so does the 2.x
//! TypeScript client with `versionNegotiation: {mode: "auto"}`. When the
//! server speaks the stateless revision (2026-07-28), those rows expect
//! [`STATELESS`], and rows pinning it (Python `mode="2026-07-28"`) join.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::OnceLock;

use serde_json::{Value, json};

use crate::util::{Env, have, read, set_mode, unavailable};

/// The newest revision of the handshake generation, which the SDKs ask for.
const HANDSHAKE: &str = "2025-11-25";
/// The stateless revision, for the rows to come.
const STATELESS: &str = "2026-07-28";

pub const HOW: &str = "run tests/mcp/install (as .ci/run does)";

fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
}

/// Where `tests/mcp/install` puts the SDKs.
pub fn sdk_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("AXE_TEST_SDK_DIR").filter(|d| !d.is_empty()) {
        return dir.into();
    }
    let cache = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache")
        });
    cache.join("axe-test-sdk")
}

/// The MCP conformance suite's executable and the directory of the Node
/// 22 it runs on (tests/mcp/install), or `None` after the suite's skip.
pub fn conformance() -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let sdk = sdk_dir();
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
        return None;
    }
    Some((suite, node))
}

/// A Python that has the SDK: the installed venv's, else `python3` on
/// `PATH`; the interpreter itself (its `sys.executable`), so that a shim
/// needing the real `HOME` is not in the way. `None`, reported, when there
/// is none.
fn python() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let candidates = [
            sdk_dir().join("python/bin/python3").into_os_string(),
            OsString::from("python3"),
        ];
        candidates.into_iter().find_map(|python| {
            let out = std::process::Command::new(python)
                .arg(script("client.py"))
                .arg("check")
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .stderr(Stdio::null())
                .output()
                .ok()?;
            let exe = String::from_utf8(out.stdout).ok()?;
            (out.status.success() && !exe.trim().is_empty()).then(|| PathBuf::from(exe.trim()))
        })
    });
    if found.is_none() {
        unavailable(
            &format!(
                "the Python MCP SDK is not installed (no `import mcp` 2.x in {} nor in python3 on PATH)",
                sdk_dir().join("python").display()
            ),
            HOW,
        );
    }
    found.clone()
}

/// `NODE_PATH` with the installed packages, when `node` is there and
/// loads `package` (`sdk` or `client`, as `client.cjs` names them);
/// `None`, reported, when not.
fn node_path(package: &str) -> Option<OsString> {
    if !have("node") {
        return None;
    }
    let mut dirs = vec![sdk_dir().join("node/node_modules")];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("NODE_PATH").unwrap_or_default(),
    ));
    let node_path = std::env::join_paths(dirs).unwrap();
    let ok = std::process::Command::new("node")
        .arg(script("client.cjs"))
        .args(["check", package])
        .env("NODE_PATH", &node_path)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        unavailable(
            &format!(
                "the TypeScript MCP SDK ({package}) is not installed in {}",
                sdk_dir().join("node").display()
            ),
            HOW,
        );
        return None;
    }
    Some(node_path)
}

/// What a client's session must show.
struct Expect {
    /// It sends `server/discover` first.
    probes: bool,
    /// The revision it ends up speaking.
    version: &'static str,
}

/// `axe-mcp` behind a `tee` each way, so the test sees the messages: the
/// client's in `<wrapper>.in`, the server's in `<wrapper>.out` (appended
/// to, since a client may start more than one server).
fn wire_wrapper(env: &Env) -> PathBuf {
    let path = env.root().join("axe-mcp-wire");
    let bin = assert_cmd::cargo::cargo_bin("axe-mcp");
    env.write(
        &path,
        format!(
            "#!/bin/sh\ntee -a \"$0.in\" | '{}' \"$@\" | tee -a \"$0.out\"\n",
            bin.display()
        ),
    );
    set_mode(&path, 0o755);
    path
}

fn messages(path: &Path) -> Vec<Value> {
    read(path)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l:?}")))
        .collect()
}

/// Runs a client's session against the wrapped server and checks it all.
fn check_session(env: &Env, mut client: assert_cmd::Command, expect: Expect) {
    let wrapper = wire_wrapper(env);
    let out = client.arg(&wrapper).arg("claude").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let context = format!("{s:#}\n{stderr}");

    // The wire: what was sent, what the negotiation came to.
    let sent = messages(&wrapper.with_extension("in"));
    let got = messages(&wrapper.with_extension("out"));
    let methods: Vec<&str> = sent.iter().filter_map(|m| m["method"].as_str()).collect();
    let reply_to = |method: &str| {
        let id = &sent.iter().find(|m| m["method"] == method).unwrap()["id"];
        got.iter().find(|m| m["id"] == *id).unwrap().clone()
    };
    assert_eq!(
        methods.first() == Some(&"server/discover"),
        expect.probes,
        "{methods:?}"
    );
    if expect.probes {
        assert_eq!(
            methods.iter().filter(|m| **m == "server/discover").count(),
            1
        );
    }
    assert!([HANDSHAKE, STATELESS].contains(&expect.version));
    if expect.version == HANDSHAKE {
        if expect.probes {
            let r = reply_to("server/discover");
            assert_eq!(r["error"]["code"], -32601, "{r}");
        }
        let init = methods
            .iter()
            .position(|m| *m == "initialize")
            .expect("initialize sent");
        assert_eq!(
            methods[init + 1],
            "notifications/initialized",
            "{methods:?}"
        );
        assert_eq!(
            reply_to("initialize")["result"]["protocolVersion"],
            expect.version
        );
        assert_eq!(s["discovered"], false, "{context}");
        assert_eq!(s["ping"], true, "{context}");
    } else {
        assert!(!methods.contains(&"initialize"), "{methods:?}");
        assert_eq!(s["discovered"], expect.probes, "{context}");
    }
    check_outcome(env, &s, &context, &expect);
}

/// Runs a client's session against `axe-mcp --http` and checks it as
/// [`check_session`] does; the server's log lines are the wire's record.
fn check_http_session(env: &Env, mut client: assert_cmd::Command, expect: Expect) {
    // Checked where stdio's sessions are: the data directory, served by name.
    let mut server = crate::mcp_http::Served::start_own(env, &[]);
    let url = format!("http://127.0.0.1:{}", server.port);
    let out = client.arg(&url).arg("claude").output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{:?}\n{stderr}", out.status);
    let stdout = String::from_utf8(out.stdout).unwrap();
    let s: Value = serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}: {stdout}\n{stderr}"));
    let (_, log) = server.stop();
    let context = format!("{s:#}\n{stderr}\n{}", log.join("\n"));
    let methods: Vec<&str> = log
        .iter()
        .filter_map(|l| l.split(" method=").nth(1)?.split(' ').next())
        .filter(|m| *m != "-")
        .collect();
    assert_eq!(
        methods.first() == Some(&"server/discover"),
        expect.probes,
        "{context}"
    );
    if expect.version == HANDSHAKE {
        let init = methods
            .iter()
            .position(|m| *m == "initialize")
            .expect("initialize sent");
        assert_eq!(
            methods[init + 1],
            "notifications/initialized",
            "{methods:?}"
        );
        assert_eq!(s["ping"], true, "{context}");
    } else {
        assert!(!methods.contains(&"initialize"), "{methods:?}");
        assert_eq!(s["discovered"], expect.probes, "{context}");
    }
    // Every request was answered, none refused at the HTTP level but the
    // GET of a stream this server does not have (405).
    assert!(
        log.iter().filter(|l| l.contains(" status=")).all(|l| [
            "status=200",
            "status=202",
            "status=204",
            "status=405"
        ]
        .iter()
        .any(|ok| l.contains(ok))),
        "{context}"
    );
    check_outcome(env, &s, &context, &expect);
}

/// What a client's session said and wrote, over either transport.
fn check_outcome(env: &Env, s: &Value, context: &str, expect: &Expect) {
    // The SDK's own word, where it gives one.
    if !s["protocolVersion"].is_null() {
        assert_eq!(s["protocolVersion"], expect.version, "{context}");
    }
    assert_eq!(s["serverInfo"]["name"], "axe-mcp", "{context}");
    assert!(
        s["instructions"]
            .as_str()
            .is_some_and(|i| i.contains("The memory of \"claude\"")),
        "{context}"
    );
    assert!(s["capabilities"]["tools"].is_object(), "{context}");

    // The tools, as the SDK parsed them.
    let tools = s["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, crate::mcp::ALL_TOOLS);
    assert!(s["nextCursor"].is_null(), "{context}");
    let schemas = [
        ("recall", json!({"days": "integer"}), json!([])),
        ("remember", json!({"content": "string"}), json!(["content"])),
        (
            "reflect",
            json!({"content": "string", "if_match": "string"}),
            json!(["content"]),
        ),
        (
            "learn_fact",
            json!({"topic": "string", "content": "string", "if_match": "string"}),
            json!(["topic", "content"]),
        ),
        (
            "search_notes",
            json!({"query": "string", "limit": "integer"}),
            json!(["query"]),
        ),
    ];
    for (tool, (name, types, required)) in tools.iter().zip(schemas) {
        let schema = &tool["inputSchema"];
        assert_eq!(schema["type"], "object", "{name}: {schema}");
        let props = schema["properties"].as_object().unwrap();
        let seen: serde_json::Map<String, Value> = props
            .iter()
            .map(|(k, v)| (k.clone(), v["type"].clone()))
            .collect();
        assert_eq!(Value::Object(seen), types, "{name}: {schema}");
        assert!(
            props.values().all(|p| p["description"].is_string()),
            "{name}: {schema}"
        );
        assert_eq!(schema["required"], required, "{name}: {schema}");
        assert!(tool["description"].is_string(), "{name}");
        let reads = matches!(name, "recall" | "search_notes");
        let a = &tool["annotations"];
        assert_eq!(a["readOnlyHint"], reads, "{name}: {a}");
        assert_eq!(a["idempotentHint"], reads, "{name}: {a}");
        assert_eq!(
            a["destructiveHint"],
            matches!(name, "reflect" | "learn_fact"),
            "{name}: {a}"
        );
        assert_eq!(a["openWorldHint"], false, "{name}: {a}");
    }

    // The calls.
    let call = |key: &str, error: bool, has: &[&str]| {
        let c = &s["calls"][key];
        assert_eq!(c["isError"], error, "{key}: {context}");
        let text = c["text"].as_str().unwrap();
        for part in has {
            assert!(text.contains(part), "{key}: {part:?} not in {text:?}");
        }
    };
    call("recall_empty", false, &["No memories found"]);
    call("remember", false, &["Remembered in agents/claude/daily/"]);
    call("reflect", false, &["MEMORY.md rewritten (46 characters)."]);
    call(
        "learn_fact",
        false,
        &["Learned world/people.md (33 characters)."],
    );
    call(
        "recall",
        false,
        &[
            "Ada maintains the deploy scripts.",
            "Ada prefers short answers; keep replies brief.",
            "\n\nAda prefers short answers.",
        ],
    );
    call(
        "search",
        false,
        &[
            "agents/claude/daily/",
            "Ada prefers short answers.",
            "agents/claude/MEMORY.md:1: Ada prefers short answers; keep replies brief.",
        ],
    );
    call(
        "misspelt",
        true,
        &[
            "unknown argument \"contents\"",
            "\"content\" argument is required",
        ],
    );
    call(
        "mistyped",
        true,
        &["\"content\" argument must be a string, not a number"],
    );
    call("scheduled", false, &["Remembered in agents/claude/daily/"]);
    assert_eq!(s["unknown_tool"]["code"], -32602, "{context}");
    assert!(
        s["unknown_tool"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool: no_such_tool"),
        "{context}"
    );
    // Ended by its closed stdin, well within the grace the SDKs give before
    // SIGTERM (2 s for both).
    assert!(s["close_seconds"].as_f64().unwrap() < 2.0, "{context}");

    // What it wrote, whole, and nothing of the malformed calls.
    let notes = env.data_dir().join("axe/notes");
    assert_eq!(
        read(&notes.join("agents/claude/MEMORY.md")),
        "Ada prefers short answers; keep replies brief."
    );
    assert_eq!(
        read(&notes.join("world/people.md")),
        "Ada maintains the deploy scripts."
    );
    let daily = daily_text(&notes.join("agents/claude/daily"));
    assert_eq!(
        daily.matches("\nAda prefers short answers.\n").count(),
        1,
        "{daily}"
    );
    // No entry "42" of the mistyped call (an entry's heading may be
    // `## HH:42`, so the text is looked for as a line of its own).
    assert!(!daily.contains("\n42\n"), "{daily}");
}

/// Every daily log in `dir`, one after the other.
fn daily_text(dir: &Path) -> String {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files.iter().map(|f| read(f)).collect()
}

fn python_session(env: &Env, python: &Path, mode: &str) -> assert_cmd::Command {
    let mut cmd = env.program(python);
    cmd.arg(script("client.py"))
        .args(["session", mode])
        .env("PYTHONDONTWRITEBYTECODE", "1");
    cmd
}

fn node_session(env: &Env, node_path: OsString, package: &str, mode: &str) -> assert_cmd::Command {
    let mut cmd = env.program("node");
    cmd.env("NODE_PATH", node_path)
        .arg(script("client.cjs"))
        .args(["session", package, mode]);
    cmd
}

#[test]
fn python_sdk_by_default_probes_for_the_stateless_generation_then_shakes_hands() {
    let Some(python) = python() else { return };
    let env = Env::new();
    check_session(
        &env,
        python_session(&env, &python, "auto"),
        Expect {
            probes: true,
            version: STATELESS,
        },
    );
}

#[test]
fn python_sdk_in_legacy_mode_shakes_hands() {
    let Some(python) = python() else { return };
    let env = Env::new();
    check_session(
        &env,
        python_session(&env, &python, "legacy"),
        Expect {
            probes: false,
            version: HANDSHAKE,
        },
    );
}

#[test]
fn typescript_sdk_shakes_hands() {
    let Some(node_path) = node_path("sdk") else {
        return;
    };
    let env = Env::new();
    check_session(
        &env,
        node_session(&env, node_path, "sdk", "legacy"),
        Expect {
            probes: false,
            version: HANDSHAKE,
        },
    );
}

#[test]
fn typescript_client_probing_for_the_stateless_generation_then_shakes_hands() {
    let Some(node_path) = node_path("client") else {
        return;
    };
    let env = Env::new();
    check_session(
        &env,
        node_session(&env, node_path, "client", "auto"),
        Expect {
            probes: true,
            version: STATELESS,
        },
    );
}

// --- the same clients over streamable HTTP (axe-mcp --http) ----------------

#[test]
fn python_sdk_over_http_probes_for_the_stateless_generation() {
    let Some(python) = python() else { return };
    let env = Env::new();
    check_http_session(
        &env,
        python_session(&env, &python, "auto"),
        Expect {
            probes: true,
            version: STATELESS,
        },
    );
}

#[test]
fn python_sdk_over_http_in_legacy_mode_shakes_hands_in_a_session() {
    let Some(python) = python() else { return };
    let env = Env::new();
    check_http_session(
        &env,
        python_session(&env, &python, "legacy"),
        Expect {
            probes: false,
            version: HANDSHAKE,
        },
    );
}

#[test]
fn typescript_sdk_over_http_shakes_hands_in_a_session() {
    let Some(node_path) = node_path("sdk") else {
        return;
    };
    let env = Env::new();
    check_http_session(
        &env,
        node_session(&env, node_path, "sdk", "legacy"),
        Expect {
            probes: false,
            version: HANDSHAKE,
        },
    );
}

#[test]
fn typescript_client_over_http_probes_for_the_stateless_generation() {
    let Some(node_path) = node_path("client") else {
        return;
    };
    let env = Env::new();
    check_http_session(
        &env,
        node_session(&env, node_path, "client", "auto"),
        Expect {
            probes: true,
            version: STATELESS,
        },
    );
}

// --- many clients, one memory ---------------------------------------------

/// One client process of `client.py writer`, with its own `axe-mcp`.
struct Writer {
    id: usize,
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: PathBuf,
}

impl Writer {
    fn next(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| {
            panic!(
                "client {}: {e}: {line:?}\n{}",
                self.id,
                std::fs::read_to_string(&self.stderr).unwrap_or_default()
            )
        })
    }
}

#[test]
fn eight_clients_each_with_its_own_server_write_one_memory_at_once() {
    const CLIENTS: usize = 8;
    const ROUNDS: usize = 3;
    const NOTES: usize = 5;
    let Some(python) = python() else { return };
    let env = Env::new();
    let bin = assert_cmd::cargo::cargo_bin("axe-mcp");
    let mut writers: Vec<Writer> = (0..CLIENTS)
        .map(|id| {
            let stderr = env.root().join(format!("client-{id}.stderr"));
            let mut child = env
                .std_program(&python)
                .arg(script("client.py"))
                .args(["writer", "auto"])
                .arg(&bin)
                .arg("shared")
                .args([id, ROUNDS, NOTES].map(|n| n.to_string()))
                .env("PYTHONDONTWRITEBYTECODE", "1")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(std::fs::File::create(&stderr).unwrap())
                .spawn()
                .unwrap();
            Writer {
                id,
                stdin: child.stdin.take(),
                stdout: BufReader::new(child.stdout.take().unwrap()),
                child,
                stderr,
            }
        })
        .collect();
    let notes = env.data_dir().join("axe/notes");
    for round in 0..ROUNDS {
        // Every client has remembered and recalled; then all rewrite at once.
        for w in &mut writers {
            assert_eq!(w.next(), json!({"ready": round}), "client {}", w.id);
        }
        for w in &mut writers {
            let stdin = w.stdin.as_mut().unwrap();
            stdin.write_all(b"go\n").unwrap();
            stdin.flush().unwrap();
        }
        let done: Vec<(usize, Value)> = writers.iter_mut().map(|w| (w.id, w.next())).collect();
        let mut memory_won = Vec::new();
        let mut fact_won = Vec::new();
        for (id, r) in &done {
            assert_eq!(r["round"], round, "{r}");
            for m in r["remember"].as_array().unwrap() {
                assert_eq!(m["isError"], false, "client {id}: {m}");
            }
            // Each rewrite wins, or loses as a conflict that says what to do.
            let reflect = &r["reflect"];
            let text = reflect["text"].as_str().unwrap();
            if reflect["isError"] == false {
                assert!(text.starts_with("MEMORY.md rewritten"), "{text}");
                memory_won.push(*id);
            } else {
                assert!(
                    text.starts_with("reflect error: MEMORY.md has changed since you last read it, so it was not overwritten. Call recall"),
                    "client {id}, round {round}: {text}"
                );
            }
            let fact = &r["learn_fact"];
            let text = fact["text"].as_str().unwrap();
            if fact["isError"] == false {
                assert!(text.starts_with("Learned world/shared.md"), "{text}");
                fact_won.push(*id);
            } else {
                // Round 0 too, where the topic was not there at the recall.
                let conflict = text.starts_with(
                    "learn_fact error: world/shared.md has changed since you last read it",
                );
                assert!(conflict, "client {id}, round {round}: {text}");
            }
        }
        // Every client recalled before any rewrote: exactly one wins.
        assert_eq!(memory_won.len(), 1, "round {round}: {done:?}");
        assert_eq!(fact_won.len(), 1, "round {round}: {done:?}");
        // Until the next barrier nobody rewrites: the winner's text, whole.
        assert_eq!(
            read(&notes.join("agents/shared/MEMORY.md")),
            format!("MEMORY of client {}, round {round}.", memory_won[0])
        );
        assert_eq!(
            read(&notes.join("world/shared.md")),
            format!("Fact of client {}, round {round}.", fact_won[0])
        );
    }
    for mut w in writers {
        assert_eq!(w.next(), json!({"done": w.id}));
        drop(w.stdin.take());
        let status = w.child.wait().unwrap();
        assert!(
            status.success(),
            "client {}: {status:?}\n{}",
            w.id,
            read(&w.stderr)
        );
    }
    // Every remember once, each entry whole: a day's heading, then entries
    // of a time heading and one note, nothing else.
    let daily = daily_text(&notes.join("agents/shared/daily"));
    let mut entries = Vec::new();
    let mut lines = daily.lines().peekable();
    while let Some(day) = lines.next() {
        assert!(is_heading(day, "# ", "YYYY-MM-DD"), "{day:?} in\n{daily}");
        while lines.peek() == Some(&"") {
            let entry: Vec<&str> = lines.by_ref().take(4).collect();
            assert!(
                entry.len() == 4
                    && entry[0].is_empty()
                    && is_heading(entry[1], "## ", "HH:MM")
                    && entry[2].is_empty(),
                "torn entry {entry:?} in\n{daily}"
            );
            entries.push(entry[3]);
        }
    }
    let mut wanted: Vec<String> = (0..CLIENTS)
        .flat_map(|i| {
            (0..ROUNDS).flat_map(move |r| {
                (0..NOTES).map(move |n| format!("client {i} round {r} note {n}"))
            })
        })
        .collect();
    wanted.sort();
    entries.sort_unstable();
    assert_eq!(entries, wanted);
}

/// Whether `line` is `prefix` then text shaped like `shape` (digits where
/// it has letters).
fn is_heading(line: &str, prefix: &str, shape: &str) -> bool {
    line.strip_prefix(prefix).is_some_and(|rest| {
        rest.len() == shape.len()
            && rest
                .chars()
                .zip(shape.chars())
                .all(|(c, s)| match s.is_ascii_alphabetic() {
                    true => c.is_ascii_digit(),
                    false => c == s,
                })
    })
}

// --- without the SDKs -----------------------------------------------------

#[test]
fn without_the_sdks_these_tests_say_they_skipped() {
    // The inner run below must not start another.
    if std::env::var_os("AXE_TEST_INNER").is_some() {
        return;
    }
    let env = Env::new();
    // PATH without python3 and node; no SDK directory.
    let bin = env.root().join("path");
    std::fs::create_dir(&bin).unwrap();
    for dir in std::env::split_paths(&std::env::var_os("PATH").unwrap()) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let link = bin.join(&name);
            if ["python3", "node"].contains(&name.to_string_lossy().as_ref()) || link.exists() {
                continue;
            }
            let _ = std::os::unix::fs::symlink(entry.path(), link);
        }
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["mcp_sdk::", "--test-threads", "2"])
        // Needs no SDK.
        .args(["--skip", "a_learn_fact_that_loses_the_race"])
        .env("PATH", &bin)
        .env("AXE_TEST_SDK_DIR", env.root().join("no-sdks"))
        .env("AXE_TEST_INNER", "1")
        .env_remove("AXE_TEST_ALL")
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{all}");
    assert!(
        all.contains("skipped: the Python MCP SDK is not installed"),
        "{all}"
    );
    assert!(all.contains("skipped: node is not on PATH"), "{all}");
    assert!(all.contains(" 0 failed"), "{all}");
}

// --- found while writing the above ----------------------------------------

/// Two clients recall, finding no topic `shared`; one creates it, then the
/// other's learn_fact of it must lose as a conflict that says so, as a
/// losing reflect does, not with the refusal meant for a client that never
/// recalled (it once was: the server recorded nothing for a topic absent
/// at the recall). Raw JSON-RPC, so it runs without the SDKs.
#[test]
fn a_learn_fact_that_loses_the_race_to_create_a_topic_is_told_it_changed() {
    let env = Env::new();
    let mut a = Raw::start(&env);
    let mut b = Raw::start(&env);
    a.call("recall", json!({}));
    b.call("recall", json!({}));
    let (text, err) = a.call(
        "learn_fact",
        json!({"topic": "shared", "content": "A's fact."}),
    );
    assert!(!err, "{text}");
    let (text, err) = b.call(
        "learn_fact",
        json!({"topic": "shared", "content": "B's fact."}),
    );
    assert!(err, "{text}");
    assert_eq!(
        read(&env.data_dir().join("axe/notes/world/shared.md")),
        "A's fact."
    );
    assert!(
        text.contains("world/shared.md has changed since you last read it")
            && !text.contains("recall_chars"),
        "not a clear conflict: {text}"
    );
}

/// `axe-mcp shared` spoken to over raw pipes, after the handshake.
struct Raw {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
}

impl Raw {
    fn start(env: &Env) -> Raw {
        let mut child = env
            .std_cmd("axe-mcp")
            .arg("shared")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut raw = Raw {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            child,
            next: 0,
        };
        raw.request(
            "initialize",
            json!({"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        writeln!(
            raw.stdin,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )
        .unwrap();
        raw
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let message =
            json!({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params});
        writeln!(self.stdin, "{message}").unwrap();
        self.stdin.flush().unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        let reply: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(reply["id"], self.next, "{reply}");
        reply
    }

    fn call(&mut self, tool: &str, arguments: Value) -> (String, bool) {
        let r = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &r["result"];
        let text = result["content"][0]["text"].as_str().unwrap().to_owned();
        (text, result["isError"] == true)
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
