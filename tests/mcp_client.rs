//! `[[mcp_servers]]`: an agent's tools from MCP servers. The model's calls
//! are scripted through the local provider (`tests/server.rs`), so a run
//! really calls the server's tool and the test reads what came back in the
//! next request. The servers: `tests/mcp/fake_server.py`, a small stdio
//! server that misbehaves on request (dies, hangs, floods stderr), and the
//! real ones in `tests/mcp_servers.rs`.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::run::run;
use crate::server::{Answer, Server};
use crate::util::{Env, have, read, stdout};
use crate::wire::anthropic_reply;

/// The Python interpreter itself (not a shim that needs the real `HOME`),
/// or `None`, reported through the one skip rule on every call that
/// finds none (the lookup is made once; the report is each test's).
pub fn python() -> Option<PathBuf> {
    static FOUND: OnceLock<Option<PathBuf>> = OnceLock::new();
    let found = FOUND
        .get_or_init(|| {
            let out = std::process::Command::new("python3")
                .args(["-c", "import sys; print(sys.executable)"])
                .output()
                .ok()
                .filter(|out| out.status.success())?;
            let path = PathBuf::from(String::from_utf8(out.stdout).ok()?.trim());
            crate::util::is_executable(&path).then_some(path)
        })
        .clone();
    // A python3 that cannot say where it is (a broken shim) is as good
    // as none, and said so like a missing one.
    if found.is_none() && have("python3") {
        crate::util::unavailable(
            "python3 does not name its interpreter (sys.executable)",
            "install python3 (see .ci/run)",
        );
    }
    found
}

fn fake_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fake_server.py")
}

/// An `[[mcp_servers]]` table running the fake server with `args`.
fn fake(python: &Path, name: &str, args: &[&str], extra: &str) -> String {
    let mut all = vec![fake_script().display().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    format!(
        "[[mcp_servers]]\nname = \"{name}\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = {}\n{extra}\n",
        python.display().to_string(),
        serde_json::to_string(&all).unwrap()
    )
}

/// A reply calling `(id, tool, input)` for each call.
pub fn calls(list: &[(&str, &str, Value)]) -> Answer {
    let content: Vec<Value> = list
        .iter()
        .map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        )
        .collect();
    Answer::json(
        200,
        &json!({"model": "claude-test", "content": content, "stop_reason": "tool_use",
                "usage": {"input_tokens": 5, "output_tokens": 3}}),
    )
}

pub fn ok(text: &str) -> Answer {
    Answer::json(200, &anthropic_reply(text))
}

/// The tool results the second request carried back.
pub fn results(server: &Server) -> Vec<Value> {
    let second = &server.requests()[1];
    second.json()["messages"][2]["content"]
        .as_array()
        .unwrap()
        .clone()
}

/// The names of the tools the first request offered.
pub fn offered(server: &Server) -> Vec<String> {
    server.requests()[0].json()["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_call_reaches_its_server_and_the_result_the_model() {
    let Some(py) = python() else { return };
    let env = Env::new();
    std::fs::create_dir(env.root().join("sub")).unwrap();
    let servers = fake(
        &py,
        "tools",
        &["--pages", "echo", "image", "fail", "env", "cwd"],
        "env = { GIVEN = \"${FROM_ENV}\" }\ncwd = \"sub\"",
    );
    env.agent_file("a")
        .workdir(env.root())
        .toml(&servers)
        .write();
    let server = Server::start(vec![
        calls(&[
            ("c1", "echo", json!({"word": "hi", "n": 2})),
            ("c2", "image", json!({})),
            ("c3", "fail", json!({})),
            (
                "c4",
                "env",
                json!({"names": ["GIVEN", "ANTHROPIC_API_KEY", "SECRET_OF_MINE", "HOME"]}),
            ),
            ("c5", "cwd", json!({})),
        ]),
        ok("done"),
    ]);
    let out = run(&env, &server.url)
        .args(["a", "-v"])
        .env("FROM_ENV", "expanded")
        .env("SECRET_OF_MINE", "do not pass")
        .assert()
        .success()
        .stdout("done");
    // Listed over five pages, offered under their own names.
    assert_eq!(offered(&server), ["echo", "image", "fail", "env", "cwd"]);
    let first = &server.requests()[0].json()["tools"][3];
    assert_eq!(first["description"], "the env tool");
    assert_eq!(first["input_schema"]["required"], json!(["names"]));
    let home = env.root().join("home").display().to_string();
    assert_eq!(
        results(&server),
        [
            json!({"type": "tool_result", "tool_use_id": "c1", "content": "{\"n\": 2, \"word\": \"hi\"}", "is_error": false}),
            json!({"type": "tool_result", "tool_use_id": "c2", "content": "a dot:\n[image: image/png, 4 bytes]", "is_error": false}),
            json!({"type": "tool_result", "tool_use_id": "c3", "content": "it broke", "is_error": true}),
            json!({"type": "tool_result", "tool_use_id": "c4", "content": json!({
                "ANTHROPIC_API_KEY": null, "GIVEN": "expanded", "HOME": home, "SECRET_OF_MINE": null,
            }).to_string().replace("\":", "\": ").replace(",\"", ", \""), "is_error": false}),
            // `cwd` is taken from the workdir.
            json!({"type": "tool_result", "tool_use_id": "c5", "content": env.root().join("sub").canonicalize().unwrap().display().to_string(), "is_error": false}),
        ]
    );
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(&format!("[mcp] Starting \"tools\": {} ", py.display())),
        "{err}"
    );
    assert!(
        err.contains("[mcp] \"tools\" discovered 5 tool(s), registered 5"),
        "{err}"
    );
}

#[test]
fn arguments_are_checked_against_the_servers_schema() {
    let Some(py) = python() else { return };
    let env = Env::new();
    env.agent_file("a")
        .workdir(env.root())
        .toml(&fake(&py, "s", &["env", "echo"], ""))
        .write();
    let server = Server::start(vec![
        calls(&[
            ("c1", "env", json!({"names": "HOME"})),
            ("c2", "echo", json!({"anything": ["goes"]})),
        ]),
        ok("done"),
    ]);
    run(&env, &server.url).arg("a").assert().success();
    let results = results(&server);
    assert_eq!(
        results[0]["content"],
        "env error: \"names\" argument must be an array, not a string"
    );
    assert_eq!(results[0]["is_error"], true);
    // A schema that names nothing takes what it is given.
    assert_eq!(results[1]["content"], "{\"anything\": [\"goes\"]}");
}

#[test]
fn a_server_that_dies_mid_call_is_an_error_result_and_the_run_goes_on() {
    let Some(py) = python() else { return };
    let env = Env::new();
    env.agent_file("a")
        .workdir(env.root())
        .toml(&fake(&py, "mortal", &["die", "echo"], ""))
        .write();
    let server = Server::start(vec![
        calls(&[("c1", "die", json!({}))]),
        calls(&[("c2", "echo", json!({}))]),
        ok("carried on"),
    ]);
    run(&env, &server.url)
        .arg("a")
        .assert()
        .success()
        .stdout("carried on");
    let reqs = server.requests();
    let died = &reqs[1].json()["messages"][2]["content"][0];
    assert_eq!(died["is_error"], true);
    assert_eq!(
        died["content"],
        "MCP server \"mortal\" failed: the server exited (exit status: 3)"
    );
    let after = &reqs[2].json()["messages"][4]["content"][0];
    assert_eq!(after["is_error"], true);
    assert!(
        after["content"]
            .as_str()
            .unwrap()
            .starts_with("MCP server \"mortal\" failed: "),
        "{after}"
    );
}

/// The pids `hang` wrote: the server's and its child's.
fn hung_pids(dir: &Path) -> Vec<i32> {
    let path = dir.join("pids");
    let until = Instant::now() + crate::server::PATIENCE;
    while !path.exists() {
        assert!(Instant::now() < until, "the server never hung");
        std::thread::sleep(Duration::from_millis(10));
    }
    read(&path)
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Whether `pid` is a live process (a zombie waiting for its reaper is
/// not).
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

fn gone_soon(pid: i32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// An agent whose server's tool never answers and which ignores
/// SIGTERM, and a model that calls that tool.
fn hanging() -> Option<(Env, Server)> {
    let py = python()?;
    let env = Env::new();
    let server = fake(&py, "sloth", &["--stubborn", "hang"], "");
    env.agent_file("a")
        .workdir(env.root())
        .toml(&server)
        .write();
    let calls_it = vec![calls(&[("c1", "hang", json!({}))]), ok("never")];
    Some((env, Server::start(calls_it)))
}

#[test]
fn a_server_that_never_answers_ends_at_the_deadline_and_is_stopped() {
    let Some((env, server)) = hanging() else {
        return;
    };
    let started = Instant::now();
    run(&env, &server.url)
        .args(["a", "--timeout", "2"])
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 2s\n");
    assert!(started.elapsed() < Duration::from_secs(10));
    // The server ignored SIGTERM; it and its child are gone all the same.
    for pid in hung_pids(env.root()) {
        assert!(gone_soon(pid), "process {pid} outlived the run");
    }
}

#[test]
fn kill_term_on_axe_run_mid_call_leaves_no_server_process() {
    let Some((env, server)) = hanging() else {
        return;
    };
    let mut cmd = env.std_cmd("axe-run");
    for p in ["ANTHROPIC", "OPENAI", "OLLAMA"] {
        cmd.env(format!("AXE_{p}_BASE_URL"), &server.url);
    }
    let mut child = cmd
        .env("ANTHROPIC_API_KEY", crate::wire::KEY)
        .arg("a")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Mid-call: the server wrote its pids and hangs.
    let pids = hung_pids(env.root());
    let status = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let ended = child.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(ended.signal(), Some(15), "axe-run dies of the signal");
    for pid in pids {
        assert!(gone_soon(pid), "process {pid} outlived axe-run");
    }
}

#[test]
fn a_server_flooding_stderr_does_not_block_and_v_shows_it() {
    let Some(py) = python() else { return };
    let env = Env::new();
    env.agent_file("a")
        .workdir(env.root())
        .toml(&fake(&py, "loud", &["--flood", "echo"], ""))
        .write();
    let server = Server::start(vec![calls(&[("c1", "echo", json!({"a": 1}))]), ok("heard")]);
    run(&env, &server.url)
        .arg("a")
        .assert()
        .success()
        .stdout("heard")
        .stderr("");
    assert_eq!(results(&server)[0]["content"], "{\"a\": 1}");
    let out = run(&env, &server.url).args(["a", "-v"]).assert().success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(&format!("[mcp] loud: {}", "x".repeat(1023))),
        "server stderr under -v"
    );
}

#[test]
fn one_tool_name_on_two_servers_is_a_config_error() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let both = format!(
        "{}{}",
        fake(&py, "first", &["echo", "fail"], ""),
        fake(&py, "second", &["echo"], "")
    );
    env.agent_file("a").workdir(env.root()).toml(&both).write();
    let server = Server::start(vec![ok("never")]);
    run(&env, &server.url)
        .arg("a")
        .assert()
        .code(2)
        .stdout("")
        .stderr("MCP tool \"echo\" collision between servers \"first\" and \"second\"\n");
    assert!(server.requests().is_empty(), "nothing sent to the model");
}

/// A name a built-in tool has is skipped; one a server lists twice is
/// offered once.
#[test]
fn a_name_a_built_in_tool_has_is_skipped() {
    let Some(py) = python() else { return };
    let env = Env::new();
    env.agent_file("a")
        .workdir(env.root())
        .toml("sub_agents = [\"b\"]")
        .toml(&fake(&py, "s", &["call_agent", "echo", "echo"], ""))
        .write();
    let server = Server::start(vec![ok("fine")]);
    let out = run(&env, &server.url).args(["a", "-v"]).assert().success();
    assert_eq!(offered(&server), ["call_agent", "echo"]);
    assert_eq!(
        server.requests()[0].json()["tools"][0]["description"]
            .as_str()
            .unwrap()
            .split('.')
            .next(),
        Some("Delegate a task to a sub-agent"),
        "the built-in one"
    );
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("[mcp] Skipping \"call_agent\" from \"s\" (conflicts with built-in tool)"),
        "{err}"
    );
}

#[test]
fn a_server_that_fails_to_start_ends_the_run_unless_not_required() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let missing = "[[mcp_servers]]\nname = \"ghost\"\ntransport = \"stdio\"\ncommand = \"no-such-mcp-server\"\n";
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!("{missing}{}", fake(&py, "real", &["echo"], "")))
        .write();
    let server = Server::start(vec![ok("never")]);
    run(&env, &server.url).arg("a").assert().code(3).stderr(
        "failed to connect MCP server \"ghost\": no-such-mcp-server: no such file or directory\n",
    );
    assert!(server.requests().is_empty());
    // Not required: a warning, and the run goes on with the others' tools.
    let muted = fake(&py, "mute", &["--mute", "echo"], "required = false");
    env.agent_file("b")
        .workdir(env.root())
        .toml(&format!(
            "{missing}required = false\n{muted}{}",
            fake(&py, "real", &["image"], "")
        ))
        .write();
    let server = Server::start(vec![ok("went on")]);
    run(&env, &server.url)
        .args(["b", "--timeout", "2"])
        .assert()
        .code(3)
        .stderr(predicates::str::contains(
            "Warning: MCP server \"ghost\" is not available, going on without its tools: no-such-mcp-server: no such file or directory\n",
        ));
    // The mute one held the run until its deadline: nothing was left for
    // the model. Without it the run ends well.
    env.agent_file("c")
        .workdir(env.root())
        .toml(&format!(
            "{missing}required = false\n{}",
            fake(&py, "real", &["image"], "")
        ))
        .write();
    let server = Server::start(vec![ok("went on")]);
    run(&env, &server.url)
        .arg("c")
        .assert()
        .success()
        .stdout("went on");
    assert_eq!(offered(&server), ["image"]);
}

#[test]
fn bad_fields_and_unset_variables_are_config_errors() {
    let env = Env::new();
    let server = Server::start(vec![ok("never")]);
    for (table, message) in [
        (
            "[[mcp_servers]]\nurl = \"http://h/mcp\"\ntransport = \"sse\"",
            "mcp_servers[0].name is required",
        ),
        (
            "[[mcp_servers]]\nname = \"x\"\nurl = \"ftp://h\"\ntransport = \"sse\"",
            "mcp_servers[0].url must use http or https scheme, got \"ftp\"",
        ),
        (
            "[[mcp_servers]]\nname = \"x\"\nurl = \"http://h\"\ntransport = \"websocket\"",
            "mcp_servers[0].transport must be one of: sse, streamable-http, stdio",
        ),
        (
            "[[mcp_servers]]\nname = \"x\"\ntransport = \"stdio\"",
            "mcp_servers[0].command is required",
        ),
        (
            "[[mcp_servers]]\nname = \"x\"\ntransport = \"stdio\"\ncommand = \"c\"\n[[mcp_servers]]\nname = \"x\"\ntransport = \"stdio\"\ncommand = \"c\"",
            "mcp_servers names must be unique: \"x\"",
        ),
        (
            "[[mcp_servers]]\nname = \"x\"\nurl = \"http://127.0.0.1:9/mcp\"\ntransport = \"streamable-http\"\nheaders = { Authorization = \"Bearer ${AXE_TEST_UNSET_TOKEN}\" }",
            "failed to connect MCP server \"x\": environment variable \"AXE_TEST_UNSET_TOKEN\" is not set or empty",
        ),
    ] {
        env.agent_file("a").workdir(env.root()).toml(table).write();
        run(&env, &server.url)
            .arg("a")
            .env_remove("AXE_TEST_UNSET_TOKEN")
            .assert()
            .code(2)
            .stdout("")
            .stderr(format!("{message}\n"));
    }
    assert!(server.requests().is_empty());
}

#[test]
fn dry_run_lists_the_servers_and_starts_none() {
    let env = Env::new();
    let marker = env.root().join("started");
    env.agent_file("a").workdir(env.root()).toml(&format!(
            "[[mcp_servers]]\nname = \"local\"\ntransport = \"stdio\"\ncommand = \"touch\"\nargs = [{:?}]\n\
             [[mcp_servers]]\nname = \"remote\"\ntransport = \"streamable-http\"\nurl = \"http://127.0.0.1:9/mcp\"\nrequired = false\n\
             headers = {{ Authorization = \"Bearer ${{AXE_TEST_UNSET_TOKEN}}\" }}\n",
            marker.display().to_string()
        )).write();
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success();
    let text = stdout(out.get_output());
    assert!(
        text.contains("--- MCP Servers ---\nlocal (stdio)\nremote (streamable-http, optional)\n\n--- Sub-Agents ---"),
        "{text}"
    );
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(
        doc["mcp_servers"],
        json!([
            {"name": "local", "transport": "stdio", "required": true},
            {"name": "remote", "transport": "streamable-http", "required": false},
        ])
    );
    env.cmd("axe-agents")
        .args(["show", "a"])
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "\nMCP Servers:    local (stdio), remote (streamable-http)\n",
        ));
    assert!(!marker.exists(), "a dry run started a server");
}

#[test]
fn sub_agents_get_their_own_agent_files_servers() {
    let Some(py) = python() else { return };
    let env = Env::new();
    env.agent_file("parent")
        .workdir(env.root())
        .toml("sub_agents = [\"child\"]\nsystem_prompt = \"You are parent.\"")
        .write();
    env.agent_file("child")
        .workdir(env.root())
        .toml("system_prompt = \"You are child.\"")
        .toml(&fake(&py, "kid-tools", &["--prefix=kid_", "echo"], ""))
        .write();
    let server = Server::route(|req| {
        let body = req.json();
        let parent = body["system"]
            .as_str()
            .unwrap_or_default()
            .starts_with("You are parent.");
        let turns = body["messages"].as_array().unwrap().len();
        match (parent, turns) {
            (true, 1) => calls(&[("p1", "call_agent", json!({"agent": "child", "task": "t"}))]),
            (false, 1) => calls(&[("k1", "kid_echo", json!({"from": "child"}))]),
            (false, _) => ok(&format!(
                "child saw {}",
                body["messages"][2]["content"][0]["content"]
            )),
            (true, _) => ok(&format!(
                "parent saw {}",
                body["messages"][2]["content"][0]["content"]
            )),
        }
    });
    run(&env, &server.url)
        .arg("parent")
        .assert()
        .success()
        .stdout("parent saw \"child saw \\\"{\\\\\\\"from\\\\\\\": \\\\\\\"child\\\\\\\"}\\\"\"");
    let reqs = server.requests();
    assert_eq!(
        offered(&server),
        ["call_agent"],
        "the parent has no servers"
    );
    let child_tools = reqs
        .iter()
        .find(|r| {
            r.json()["system"]
                .as_str()
                .unwrap_or_default()
                .starts_with("You are child.")
        })
        .unwrap()
        .json()["tools"]
        .clone();
    assert_eq!(child_tools[0]["name"], "kid_echo");
}

/// What the test's streamable HTTP server answers `request`: a session
/// at `initialize`, the tool list as events (a notification first), the
/// call as JSON.
fn streamable(request: &crate::server::Recorded) -> Answer {
    use crate::server::sse_data;
    if request.method == "DELETE" {
        return Answer::raw(200, "");
    }
    let message = request.json();
    let id = message["id"].clone();
    let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match message["method"].as_str().unwrap() {
        "initialize" => Answer::json(
            200,
            &reply(
                json!({"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "t", "version": "1"}}),
            ),
        )
        .with_header("Mcp-Session-Id", "sess-1"),
        "tools/list" => Answer::sse(&[
            sse_data(
                &json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
                    .to_string(),
            ),
            sse_data(
                &reply(json!({"tools": [{"name": "shout", "inputSchema": {"type": "object"}}]}))
                    .to_string(),
            ),
        ]),
        "tools/call" => Answer::json(
            200,
            &reply(
                json!({"content": [{"type": "text", "text": message["params"]["arguments"]["w"].as_str().unwrap().to_uppercase()}]}),
            ),
        ),
        _ => Answer::raw(202, ""),
    }
}

#[test]
fn streamable_http_keeps_its_session_sends_headers_and_ends_it() {
    let env = Env::new();
    let mcp = Server::route(streamable);
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"web\"\ntransport = \"streamable-http\"\nurl = \"{}/mcp\"\n\
             headers = {{ Authorization = \"Bearer ${{AXE_TEST_TOKEN}}\" }}\n",
            mcp.url
        ))
        .write();
    let server = Server::start(vec![
        calls(&[("c1", "shout", json!({"w": "hey"}))]),
        ok("done"),
    ]);
    run(&env, &server.url)
        .arg("a")
        .env("AXE_TEST_TOKEN", "tok")
        .assert()
        .success();
    assert_eq!(results(&server)[0]["content"], "HEY");
    let seen: Vec<_> = mcp.requests();
    let what: Vec<String> = seen
        .iter()
        .map(|r| match r.method.as_str() {
            "POST" => r.json()["method"].as_str().unwrap().to_owned(),
            other => other.to_owned(),
        })
        .collect();
    // `server/discover` first, refused (202, no answer): the handshake.
    assert_eq!(
        what,
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call",
            "DELETE"
        ]
    );
    assert_eq!(seen[0].header("mcp-protocol-version"), Some("2026-07-28"));
    assert_eq!(seen[0].header("mcp-method"), Some("server/discover"));
    for (i, r) in seen.iter().enumerate().skip(1) {
        assert_eq!(r.path, "/mcp");
        assert_eq!(r.header("authorization"), Some("Bearer tok"));
        let later = i > 1;
        assert_eq!(r.header("mcp-session-id").is_some(), later, "{what:?} {i}");
        assert_eq!(r.header("mcp-protocol-version").is_some(), later);
        assert_eq!(r.header("mcp-method"), None, "no stateless headers");
        if later {
            assert_eq!(r.header("mcp-session-id"), Some("sess-1"));
            assert_eq!(r.header("mcp-protocol-version"), Some("2025-06-18"));
        }
        if r.method == "POST" {
            assert_eq!(
                r.header("accept"),
                Some("application/json, text/event-stream")
            );
        }
    }
    assert_eq!(seen[1].json()["params"]["protocolVersion"], "2025-11-25");
}

/// An agent using the server at `url` (streamable HTTP) as `web`.
fn web_agent(env: &Env, url: &str) {
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"web\"\ntransport = \"streamable-http\"\nurl = \"{url}/mcp\"\n"
        ))
        .write();
}

/// A handshake-era server's answer to `request`, but `call`'s for
/// `tools/call`: a session, one tool, `slow`.
fn old_server(request: &crate::server::Recorded, call: impl FnOnce(&Value) -> Answer) -> Answer {
    if request.method != "POST" {
        return Answer::raw(200, "");
    }
    let message = request.json();
    let id = message["id"].clone();
    let reply = |result: Value| json!({"jsonrpc": "2.0", "id": id, "result": result});
    match message["method"].as_str() {
        Some("server/discover") => Answer::raw(400, "Bad Request: Server not initialized"),
        Some("initialize") => Answer::json(
            200,
            &reply(
                json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                          "serverInfo": {"name": "t", "version": "1"}}),
            ),
        )
        .with_header("Mcp-Session-Id", "sess-1"),
        Some("tools/list") => Answer::json(
            200,
            &reply(json!({"tools": [{"name": "slow", "inputSchema": {"type": "object"}}]})),
        ),
        Some("tools/call") => call(&id),
        _ => Answer::raw(202, ""),
    }
}

/// The POSTed answers (no method) among `requests`.
fn answers_posted(requests: &[crate::server::Recorded]) -> Vec<Value> {
    requests
        .iter()
        .filter(|r| r.method == "POST")
        .map(|r| r.json())
        .filter(|m| m.get("method").is_none())
        .collect()
}

#[test]
fn a_servers_request_on_a_calls_stream_is_answered_at_once_over_http() {
    use crate::server::sse_data;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    let env = Env::new();
    // The call's answer waits until the ping has been answered (or ten
    // seconds, after which the test fails on the missing answers).
    let release: Arc<Mutex<Option<std::sync::mpsc::Sender<()>>>> = Arc::default();
    let by_reply = Arc::new(AtomicBool::new(false));
    let (slot, flag) = (Arc::clone(&release), Arc::clone(&by_reply));
    let mcp = Server::route(move |request| {
        let message = match request.method.as_str() {
            "POST" => request.json(),
            _ => Value::Null,
        };
        if message["id"] == "p1" && message.get("result").is_some() {
            if let Some(tx) = slot.lock().unwrap().take() {
                flag.store(true, Ordering::SeqCst);
                let _ = tx.send(());
            }
            return Answer::raw(202, "");
        }
        old_server(request, |id| {
            let (answer, tx) = Answer::sse(&[
                sse_data(&json!({"jsonrpc": "2.0", "id": "p1", "method": "ping"}).to_string()),
                sse_data(
                    &json!({"jsonrpc": "2.0", "id": "s1", "method": "sampling/createMessage", "params": {}})
                        .to_string(),
                ),
                sse_data(
                    &json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "after the ping"}]}})
                        .to_string(),
                ),
            ])
            .gated_after(2);
            *slot.lock().unwrap() = Some(tx);
            answer
        })
    });
    web_agent(&env, &mcp.url);
    let server = Server::start(vec![calls(&[("c1", "slow", json!({}))]), ok("done")]);
    run(&env, &server.url).arg("a").assert().success();
    assert_eq!(results(&server)[0]["content"], "after the ping");
    assert!(by_reply.load(Ordering::SeqCst), "the ping was not answered");
    let answers = answers_posted(&mcp.requests());
    assert_eq!(
        answers,
        [
            json!({"jsonrpc": "2.0", "id": "p1", "result": {}}),
            json!({"jsonrpc": "2.0", "id": "s1", "error": {"code": -32601, "message": "method not found: sampling/createMessage"}}),
        ]
    );
    let replies: Vec<_> = mcp
        .requests()
        .into_iter()
        .filter(|r| r.method == "POST" && r.json().get("method").is_none())
        .collect();
    assert_eq!(replies.len(), 2);
    for r in replies {
        assert_eq!(r.header("mcp-session-id"), Some("sess-1"));
    }
}

#[test]
fn a_calls_stream_closed_after_an_event_id_is_resumed_after_its_retry() {
    use crate::server::sse_data;
    let env = Env::new();
    let mcp = Server::route(|request| {
        if request.method == "GET" {
            // The answer, on the stream resumed after event e1.
            return match request.header("last-event-id") {
                Some("e1") => Answer::sse(&[format!(
                    "id: e2\n{}",
                    sse_data(
                        &json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "resumed"}]}})
                            .to_string()
                    )
                )]),
                _ => Answer::raw(405, ""),
            };
        }
        old_server(request, |_| {
            // A priming event with an id and a retry hint, then the end.
            Answer::sse(&["id: e1\nretry: 300\ndata: \n\n".to_owned()])
        })
    });
    web_agent(&env, &mcp.url);
    let server = Server::start(vec![calls(&[("c1", "slow", json!({}))]), ok("done")]);
    run(&env, &server.url).arg("a").assert().success();
    assert_eq!(results(&server)[0]["content"], "resumed");
    let seen = mcp.requests();
    let call = seen
        .iter()
        .find(|r| r.method == "POST" && r.json()["method"] == "tools/call")
        .unwrap();
    assert_eq!(call.json()["id"], 4, "the ids the server's answer names");
    let get = seen.iter().find(|r| r.method == "GET").unwrap();
    assert_eq!(get.header("last-event-id"), Some("e1"));
    assert_eq!(get.header("accept"), Some("text/event-stream"));
    assert_eq!(get.header("mcp-session-id"), Some("sess-1"));
    let waited = get.at.duration_since(call.at);
    assert!(waited >= Duration::from_millis(300), "{waited:?}");
}

/// A resumed stream is the same call's: with a stored login, its GET
/// carries the login's token as the call's POST did.
#[test]
fn a_resumed_stream_carries_the_stored_logins_token() {
    use crate::server::sse_data;
    let env = Env::new();
    let mcp = Server::route(|request| {
        if request.header("authorization") != Some("Bearer tok-1") {
            return Answer::raw(401, "").with_header("WWW-Authenticate", "Bearer");
        }
        if request.method == "GET" {
            return Answer::sse(&[format!(
                "id: e2\n{}",
                sse_data(
                    &json!({"jsonrpc": "2.0", "id": 4, "result": {"content": [{"type": "text", "text": "resumed"}]}})
                        .to_string()
                )
            )]);
        }
        old_server(request, |_| {
            Answer::sse(&["id: e1\nretry: 10\ndata: \n\n".to_owned()])
        })
    });
    web_agent(&env, &mcp.url);
    let url = format!("{}/mcp", mcp.url);
    let file = axe_tools::mcp::oauth::tokens::token_file(&env.data_dir().join("axe"), &url);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let stored = json!({"server_url": url, "resource": url, "issuer": "http://127.0.0.1:9",
        "token_endpoint": "http://127.0.0.1:9/token", "client_id": "c",
        "auth_method": "none", "access_token": "tok-1"});
    std::fs::write(&file, stored.to_string()).unwrap();
    let server = Server::start(vec![calls(&[("c1", "slow", json!({}))]), ok("done")]);
    run(&env, &server.url).arg("a").assert().success();
    assert_eq!(results(&server)[0]["content"], "resumed");
    let get = mcp
        .requests()
        .into_iter()
        .find(|r| r.method == "GET")
        .unwrap();
    assert_eq!(get.header("last-event-id"), Some("e1"));
}

#[test]
fn a_stream_that_ends_without_an_event_id_still_fails_the_call() {
    let env = Env::new();
    let mcp =
        Server::route(|request| old_server(request, |_| Answer::sse(&["data: \n\n".to_owned()])));
    web_agent(&env, &mcp.url);
    let server = Server::start(vec![calls(&[("c1", "slow", json!({}))]), ok("done")]);
    run(&env, &server.url).arg("a").assert().success();
    assert_eq!(
        results(&server)[0]["content"],
        "MCP server \"web\" failed: the reply's stream ended before the answer"
    );
    assert!(mcp.requests().iter().all(|r| r.method != "GET"));
}

#[test]
fn a_401_says_what_the_server_asked_for_and_the_ways_in() {
    let env = Env::new();
    let mcp = Server::start(vec![Answer::raw(401, "").with_header(
        "WWW-Authenticate",
        "Bearer resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp\"",
    )]);
    web_agent(&env, &mcp.url);
    let server = Server::start(vec![ok("never")]);
    run(&env, &server.url).arg("a").assert().code(3).stderr(
        "failed to connect MCP server \"web\": HTTP 401 Unauthorized: the server asks for \
         Bearer authorization (OAuth; its resource metadata: \
         http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp); log in with \
         `axe agents mcp-login a web`, or give a token in the server's `headers` in the \
         agent file (Authorization = \"Bearer ${TOKEN}\")\n",
    );
    assert!(server.requests().is_empty());
}

/// A 403 `insufficient_scope` (a token without the rights a call needs)
/// names the scopes the server asked for and the login that asks for
/// them; a 403 of any other kind is its status and body, as before.
#[test]
fn a_403_for_want_of_scope_names_the_scope_and_the_login_that_asks_for_it() {
    let env = Env::new();
    let mcp = Server::start(vec![Answer::raw(403, "").with_header(
        "WWW-Authenticate",
        "Bearer error=\"insufficient_scope\", scope=\"files:read files:write\", \
         resource_metadata=\"http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp\"",
    )]);
    web_agent(&env, &mcp.url);
    let server = Server::start(vec![ok("never")]);
    run(&env, &server.url).arg("a").assert().code(3).stderr(
        "failed to connect MCP server \"web\": HTTP 403 Forbidden: the server needs a scope \
         the login does not have (\"files:read files:write\"); log in again asking for it: \
         `axe agents mcp-login a web --scope \"files:read files:write\"`\n",
    );
    let mcp = Server::start(vec![Answer::raw(403, "no entry")]);
    web_agent(&env, &mcp.url);
    run(&env, &server.url)
        .arg("a")
        .assert()
        .code(3)
        .stderr("failed to connect MCP server \"web\": HTTP 403 Forbidden: no entry\n");
    assert!(server.requests().is_empty());
}

#[test]
fn an_sse_endpoint_on_another_origin_is_refused() {
    let env = Env::new();
    let legacy = Server::start(vec![Answer::sse(&[
        "event: endpoint\ndata: http://elsewhere.example/message?sessionId=1\n\n".to_owned(),
    ])]);
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"legacy\"\ntransport = \"sse\"\nurl = \"{}/sse\"\n",
            legacy.url
        ))
        .write();
    let server = Server::start(vec![ok("never")]);
    let origin = legacy.url.replace("http://", "");
    run(&env, &server.url)
        .arg("a")
        .assert()
        .code(3)
        .stderr(format!(
            "failed to connect MCP server \"legacy\": the endpoint event names another origin \
             (\"http://elsewhere.example/message?sessionId=1\"), not http://{origin}\n"
        ));
    assert_eq!(legacy.only_request().method, "GET");
    assert_eq!(
        legacy.only_request().header("accept"),
        Some("text/event-stream")
    );
    assert!(server.requests().is_empty());
}

/// A stdio server that answers `initialize` and `tools/list` (one tool,
/// `take`), writes its pid to ./pids, then does `then` (Python) forever
/// and never reads its input again.
fn hostile(env: &Env, py: &Path, then: &str) -> String {
    let script = env.root().join("hostile.py");
    std::fs::write(
        &script,
        format!(
            r#"import json, os, sys, time
def send(m):
    sys.stdout.write(json.dumps(m) + "\n")
    sys.stdout.flush()
for line in sys.stdin:
    m = json.loads(line)
    if m.get("method") == "initialize":
        send({{"jsonrpc": "2.0", "id": m["id"], "result": {{"protocolVersion": m["params"]["protocolVersion"], "capabilities": {{"tools": {{}}}}, "serverInfo": {{"name": "h", "version": "1"}}}}}})
    elif m.get("method") == "tools/list":
        send({{"jsonrpc": "2.0", "id": m["id"], "result": {{"tools": [{{"name": "take", "inputSchema": {{"type": "object"}}}}]}}}})
        break
with open("pids.tmp", "w") as f:
    f.write(f"{{os.getpid()}}\n")
os.rename("pids.tmp", "pids")
n = 0
while True:
{then}
"#
        ),
    )
    .unwrap();
    format!(
        "[[mcp_servers]]\nname = \"hostile\"\ntransport = \"stdio\"\ncommand = {:?}\nargs = [{:?}]\n",
        py.display().to_string(),
        script.display().to_string()
    )
}

/// Runs agent `a` (whose server is `table`) with `--timeout 3` against a
/// model that calls `take` with `argument`: the run ends at its deadline
/// with the timeout's code and message, however the server behaves, and
/// the server does not outlive it.
fn ends_at_the_deadline(env: &Env, table: &str, argument: &str) {
    env.agent_file("a").workdir(env.root()).toml(table).write();
    let server = Server::start(vec![
        calls(&[("c1", "take", json!({"data": argument}))]),
        ok("never"),
    ]);
    let started = Instant::now();
    run(env, &server.url)
        .args(["a", "--timeout", "3"])
        .timeout(Duration::from_secs(20))
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 3s\n");
    assert!(started.elapsed() < Duration::from_secs(20));
    for pid in hung_pids(env.root()) {
        assert!(gone_soon(pid), "process {pid} outlived the run");
    }
}

#[test]
fn a_server_that_stops_reading_cannot_hold_a_large_call_past_the_deadline() {
    let Some(py) = python() else { return };
    let env = Env::new();
    let table = hostile(&env, &py, "    time.sleep(1)");
    // Far over a pipe's 64 KiB: the write cannot finish.
    ends_at_the_deadline(&env, &table, &"x".repeat(200 << 10));
}

#[test]
fn a_server_whose_requests_go_unread_cannot_hold_the_run_past_the_deadline() {
    let Some(py) = python() else { return };
    let env = Env::new();
    // Requests of its own, never reading the answers: they fill the pipe
    // to it long before the model's call comes.
    let table = hostile(
        &env,
        &py,
        "    n += 1\n    send({\"jsonrpc\": \"2.0\", \"id\": n, \"method\": \"ping\"})\n    if n % 100 == 0:\n        time.sleep(0.01)",
    );
    ends_at_the_deadline(&env, &table, "small");
}

/// axe as a client of axe-mcp over HTTP: the server offers the stateless
/// revision, so no `initialize` is sent, and its token goes in `headers`;
/// a wrong token is a 401 that says how to get in.
#[test]
fn an_agent_reaches_axe_mcp_over_http_in_the_stateless_revision() {
    use crate::mcp_http::{Served, sha256_hex};
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
    let mut served = Served::start(&env, &["--tokens", tokens.to_str().unwrap()]);
    env.agent_file("a")
        .workdir(env.root())
        .toml(&format!(
            "[[mcp_servers]]\nname = \"team\"\ntransport = \"streamable-http\"\n\
             url = \"http://127.0.0.1:{}/mcp/team\"\n\
             headers = {{ Authorization = \"Bearer ${{AXE_TEST_TOKEN}}\" }}\n",
            served.port
        ))
        .write();
    let server = Server::start(vec![
        calls(&[(
            "c1",
            "remember",
            json!({"content": "from a stateless client"}),
        )]),
        ok("done"),
    ]);
    run(&env, &server.url)
        .arg("a")
        .env("AXE_TEST_TOKEN", secret)
        .assert()
        .success()
        .stdout("done");
    assert_eq!(
        results(&server)[0]["is_error"],
        false,
        "{:?}",
        results(&server)
    );
    let server = Server::start(vec![ok("never")]);
    run(&env, &server.url)
        .arg("a")
        .env("AXE_TEST_TOKEN", "wrong")
        .assert()
        .code(3)
        .stderr(predicates::str::contains(
            "failed to connect MCP server \"team\": HTTP 401 Unauthorized: the server asks for Bearer authorization",
        ))
        .stderr(predicates::str::contains(
            "log in with `axe agents mcp-login a team`, or give a token in the server's `headers`",
        ));
    let (_, log) = served.stop();
    let methods: Vec<&str> = log
        .iter()
        .filter_map(|l| l.split(" method=").nth(1)?.split(' ').next())
        .collect();
    assert_eq!(
        methods,
        ["server/discover", "tools/list", "tools/call", "-"],
        "{log:?}"
    );
}

/// A server that never answers `server/discover` costs the probe's ten
/// seconds, then gets the handshake, not the whole run's time.
#[test]
fn a_server_silent_on_discover_gets_the_handshake_after_the_probe() {
    let env = Env::new();
    let mcp = Server::route(|request| {
        if request.method == "POST" && request.json()["method"] == "server/discover" {
            return Answer::Hang(Duration::from_secs(60));
        }
        old_server(request, |id| {
            Answer::json(
                200,
                &json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "late but there"}]}}),
            )
        })
    });
    web_agent(&env, &mcp.url);
    let server = Server::start(vec![calls(&[("c1", "slow", json!({}))]), ok("done")]);
    let started = Instant::now();
    run(&env, &server.url).arg("a").assert().success();
    let took = started.elapsed();
    assert_eq!(results(&server)[0]["content"], "late but there");
    assert!(
        took >= Duration::from_secs(10) && took < Duration::from_secs(40),
        "{took:?}"
    );
}
