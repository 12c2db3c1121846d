//! Secrets stay out of memory: what a model answers, what a tool call
//! writes and what a command is given reach the run log, the notes and
//! the state with every credential replaced by its marker; `[memory]
//! redact = false` keeps the text as it was; `-v` and `--json` say what
//! was taken out, never the value.

use std::fs;

use serde_json::{Value, json};

use crate::server::{Answer, Server};
use crate::util::{Env, read, stdout};
use crate::wire::{KEY, anthropic_reply, served_by};

/// Fake credentials of the shapes the scanner knows.
const GITHUB: &str = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
const AWS: &str = "AKIAIOSFODNN7EXAMPLE";
const PEM: &str =
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\n-----END RSA PRIVATE KEY-----";
const JWT: &str = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl";

fn run_log(env: &Env) -> String {
    read(&env.log_path("a"))
}

fn state_file(env: &Env) -> String {
    read(&env.data_dir().join("axe/state/a.json"))
}

/// Today's daily log of `a`.
fn daily(env: &Env) -> String {
    let dir = env.data_dir().join("axe/notes/agents/a/daily");
    let file = fs::read_dir(&dir).unwrap().next().unwrap().unwrap().path();
    read(&file)
}

/// A reply calling one memory tool.
fn tool_call(id: &str, name: &str, input: Value) -> Answer {
    Answer::json(
        200,
        &json!({
            "model": "claude-test", "stop_reason": "tool_use",
            "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]
        }),
    )
}

/// A model that remembers a GitHub token, rewrites MEMORY.md with an AWS
/// key, then answers with a private key and a signal line holding the
/// token.
fn leaky_model() -> Server {
    Server::start(vec![
        tool_call(
            "t1",
            "remember",
            json!({"content": format!("The deploy token is {GITHUB}.")}),
        ),
        tool_call(
            "t2",
            "reflect",
            json!({"content": format!("# Memory\n\nCI uses {AWS} in us-east-1.\n")}),
        ),
        Answer::json(
            200,
            &anthropic_reply(&format!(
                "Done.\n{PEM}\nAXE_MEMORY: KEY_FACT the token is {GITHUB}\n"
            )),
        ),
    ])
}

/// `axe-run a -v --json` of the agent with `extra` in its `[memory]`,
/// against [`leaky_model`].
fn leaky_run(env: &Env, extra: &str) -> (Server, assert_cmd::assert::Assert) {
    env.agent_file("a")
        .memory(extra)
        .notes("")
        .state("")
        .write();
    let server = leaky_model();
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "-v", "--json", "deploy it"])
        .assert()
        .success();
    (server, out)
}

#[test]
fn a_models_secrets_are_redacted_in_the_run_log_the_notes_and_the_state() {
    let env = Env::new();
    let (server, out) = leaky_run(&env, "");
    let log = run_log(&env);
    assert!(
        log.ends_with(
            "**Task:** deploy it\n**Result:** Done.\n[redacted: private key]\nAXE_MEMORY: KEY_FACT the token is [redacted: github token]\n\n\n"
        ),
        "{log}"
    );
    let daily = daily(&env);
    assert!(
        daily.ends_with("\n\nThe deploy token is [redacted: github token].\n"),
        "{daily}"
    );
    let memory = read(&env.data_dir().join("axe/notes/agents/a/MEMORY.md"));
    assert_eq!(
        memory,
        "# Memory\n\nCI uses [redacted: aws access key] in us-east-1.\n"
    );
    let state: Value = serde_json::from_str(&state_file(&env)).unwrap();
    assert_eq!(
        state["key_facts"],
        json!(["the token is [redacted: github token]"])
    );
    for text in [&log, &daily, &memory, &state_file(&env)] {
        assert!(!text.contains("ghp_") && !text.contains(AWS) && !text.contains("MIIE"));
    }

    // Said once per place, with kinds and never the values.
    let doc: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    let place = |kind: &str, place: &str| json!({"kind": kind, "where": place});
    assert_eq!(
        doc["redacted"],
        json!([
            place("github token", "daily log"),
            place("aws access key", "MEMORY.md"),
            place("github token", "state"),
            place("private key", "run log"),
            place("github token", "run log"),
        ])
    );
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    for line in [
        "Memory:   redacted 1 secret (github token) from the daily log\n",
        "Memory:   redacted 1 secret (aws access key) from MEMORY.md\n",
        "Memory:   redacted 1 secret (github token) from the state\n",
        "Memory:   redacted 2 secrets (private key, github token) from the run log\n",
    ] {
        assert!(err.contains(line), "{line} not in {err}");
    }
    assert!(!err.contains("ghp_") && !err.contains(AWS), "{err}");

    // The model is told that what it wrote changed.
    let requests = server.requests();
    let told = requests[1].json()["messages"].to_string();
    assert!(
        told.contains("Before writing, redacted 1 secret (github token) from the daily log"),
        "{told}"
    );
}

#[test]
fn the_configured_keys_are_redacted_wherever_they_appear() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").state("").write();
    // Keys of no known shape: found only because they are configured.
    env.write(
        &env.config_dir().join("axe/config.toml"),
        "[providers.openai]\napi_key = \"file-key-0f9e8d7c\"\n",
    );
    let server = Server::start(vec![Answer::json(
        200,
        &anthropic_reply("Keys: or-custom-77aa66bb and file-key-0f9e8d7c."),
    )]);
    let mut cmd = served_by(env.cmd("axe-run"), &server.url);
    cmd.env("OPENAI_API_KEY", "")
        .env("OPENROUTER_API_KEY", "or-custom-77aa66bb")
        .args(["a", "--json"])
        .write_stdin(format!("use {KEY} for it"))
        .assert()
        .success();
    let log = run_log(&env);
    assert!(
        log.ends_with(
            "**Task:** use [redacted: provider key] for it\n**Result:** Keys: [redacted: provider key] and [redacted: provider key].\n\n"
        ),
        "{log}"
    );
}

#[test]
fn redact_false_keeps_the_text_as_it_was() {
    let env = Env::new();
    let (_server, out) = leaky_run(&env, "redact = false");
    assert!(run_log(&env).contains(&format!(
        "Done.\n{PEM}\nAXE_MEMORY: KEY_FACT the token is {GITHUB}\n"
    )));
    assert!(daily(&env).contains(&format!("The deploy token is {GITHUB}.")));
    assert!(state_file(&env).contains(GITHUB));
    let doc: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(doc["redacted"], json!([]));
    // Nothing taken out of memory to report; -v's tool lines still keep
    // the key off the terminal, whatever memory keeps.
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(!err.contains("Memory:   redacted"), "{err}");
    assert!(!err.contains(GITHUB), "{err}");
    // The setting is shown with the agent's.
    let shown = env.cmd("axe-agents").args(["show", "a"]).assert().success();
    assert!(stdout(shown.get_output()).contains("\nMemory Redact:  false\n"));

    // config.toml turns it off for every agent that does not say; an
    // agent's own setting wins.
    let env = Env::new();
    env.agent_file("a").memory("").notes("").state("").write();
    env.write(
        &env.config_dir().join("axe/config.toml"),
        "[memory]\nredact = false\n",
    );
    let append = |agent: &str| {
        env.cmd("axe-mem-append")
            .args([agent, "--task", "t", "--result", GITHUB])
            .assert()
            .success();
    };
    append("a");
    assert!(run_log(&env).contains(GITHUB));
    env.agent_file("a")
        .memory("redact = true")
        .notes("")
        .state("")
        .write();
    append("a");
    assert!(run_log(&env).ends_with("**Result:** [redacted: github token]\n\n"));
}

#[test]
fn the_writing_commands_redact_and_say_so() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").state("").write();
    let stderr = |out: &assert_cmd::assert::Assert| {
        String::from_utf8_lossy(&out.get_output().stderr).into_owned()
    };
    let json = |out: &assert_cmd::assert::Assert| -> Value {
        serde_json::from_str(&stdout(out.get_output())).unwrap()
    };

    // The run log: what was there before stays byte for byte.
    let before = "## 2026-01-01T00:00:00Z\n**Task:** old\n**Result:** kept as is\n\n";
    env.write(&env.log_path("a"), before);
    let out = env
        .cmd("axe-mem-append")
        .args(["a", "--json", "--task", &format!("push with {GITHUB}")])
        .args(["--timestamp", "2026-02-28T15:04:05Z"])
        .write_stdin(format!("Authorization: Bearer {JWT}\n"))
        .assert()
        .success();
    assert_eq!(
        run_log(&env),
        format!(
            "{before}## 2026-02-28T15:04:05Z\n**Task:** push with [redacted: github token]\n**Result:** Authorization: Bearer [redacted: bearer token]\n\n\n"
        )
    );
    assert_eq!(
        json(&out)["redacted"],
        json!([{"kind": "github token", "where": "run log"}, {"kind": "bearer token", "where": "run log"}])
    );
    assert_eq!(
        stderr(&out),
        "redacted 2 secrets (github token, bearer token) from the run log\n"
    );

    // Notes: remember, reflect (whose sha256 is of what was written).
    let out = env
        .cmd("axe-notes-remember")
        .args(["a", "--json", "key", AWS])
        .assert()
        .success();
    assert!(daily(&env).ends_with("\n\nkey [redacted: aws access key]\n"));
    assert_eq!(
        json(&out)["redacted"],
        json!([{"kind": "aws access key", "where": "daily log"}])
    );
    let out = env
        .cmd("axe-notes-reflect")
        .args(["a", "--json"])
        .write_stdin(format!("# Keys\n{PEM}\n"))
        .assert()
        .success();
    let path = env.data_dir().join("axe/notes/agents/a/MEMORY.md");
    assert_eq!(read(&path), "# Keys\n[redacted: private key]\n");
    // The hash given is of what was written: the next --if-match.
    let sha = json(&out)["sha256"].as_str().unwrap().to_owned();
    env.cmd("axe-notes-reflect")
        .args(["a", "--if-match", &sha])
        .write_stdin("# Keys\nrotated\n")
        .assert()
        .success();
    assert_eq!(
        stderr(&out),
        "redacted 1 secret (private key) from MEMORY.md\n"
    );

    // State: a record and an ingest; the rest of the file unchanged.
    env.cmd("axe-state-record")
        .args(["a", "--task", "t", "--failure", "--error"])
        .arg(format!("push failed for {GITHUB}"))
        .assert()
        .success();
    let first = state_file(&env);
    assert!(first.contains("\"error\": \"push failed for [redacted: github token]\""));
    let out = env
        .cmd("axe-state-ingest")
        .args(["a", "--json", "--task", "t"])
        .write_stdin(format!("AXE_MEMORY: DECISION rotate {AWS}\n"))
        .assert()
        .success();
    assert_eq!(
        json(&out)["redacted"],
        json!([{"kind": "aws access key", "where": "state"}])
    );
    let second = state_file(&env);
    assert!(second.contains("\"description\": \"rotate [redacted: aws access key]\""));
    assert!(!second.contains(GITHUB) && !second.contains(AWS));
    let mut unchanged: Value = serde_json::from_str(&second).unwrap();
    unchanged["decisions"] = json!([]);
    assert_eq!(unchanged, serde_json::from_str::<Value>(&first).unwrap());
}

/// A topic name is a file name, which is never redacted and which a sync
/// pushes: one that holds a secret is refused, and nothing is created.
#[test]
fn a_topic_named_by_a_secret_is_refused_and_nothing_is_made() {
    let env = Env::new();
    env.agent_file("a").memory("").notes("").state("").write();
    let world = env.data_dir().join("axe/notes/world");
    let made = || fs::read_dir(&world).map(|d| d.count()).unwrap_or_default();
    // A key this process knows, in lower-case hex: the file name, lower
    // case, would hold it whole though the topic does not.
    let key = "0123456789abcdef0123456789abcdef";
    for topic in [GITHUB.to_owned(), format!("Keys {}", key.to_uppercase())] {
        let out = env
            .cmd("axe-notes-learn")
            .arg(&topic)
            .env("TAVILY_API_KEY", key)
            .write_stdin("facts")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(
            err.contains("the topic's name holds what looks like a secret ("),
            "{err}"
        );
        assert!(
            !err.contains(GITHUB) && !err.to_lowercase().contains(key),
            "{err}"
        );
        assert_eq!(made(), 0, "{err}");
    }
    // Through the MCP tool, the same.
    let mut mcp = env
        .std_cmd("axe-mcp")
        .arg("a")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = mcp.stdin.take().unwrap();
    use std::io::{BufRead, Write};
    let lines = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "learn_fact", "arguments": {"topic": GITHUB, "content": "facts"}}}),
    ];
    for line in lines {
        writeln!(stdin, "{line}").unwrap();
    }
    drop(stdin);
    let replies = std::io::BufReader::new(mcp.stdout.take().unwrap());
    let reply: Value = replies
        .lines()
        .map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap())
        .find(|r| r["id"] == 2)
        .unwrap();
    assert!(mcp.wait().unwrap().success());
    let result = &reply["result"];
    let text = result["content"][0]["text"].as_str().unwrap();
    assert_eq!(result["isError"], true, "{reply}");
    assert!(
        text.starts_with(
            "learn_fact error: the topic's name holds what looks like a secret (github token)"
        ),
        "{text}"
    );
    assert!(!reply.to_string().contains(GITHUB), "{reply}");
    assert_eq!(made(), 0);
}

/// A proxy URL's password is a credential axe sends (as
/// Proxy-Authorization): memory keeps it out as it does a provider's key,
/// as written and percent-decoded.
#[test]
fn a_proxy_password_from_the_environment_is_kept_out_of_memory() {
    let env = Env::new();
    env.agent_file("a").notes("").write();
    env.cmd("axe-notes-remember")
        .env("HTTPS_PROXY", "http://me:pr0xy%2Fpass@proxy.example:3128")
        .args(["a", "proxy pr0xy/pass and pr0xy%2Fpass"])
        .assert()
        .success();
    let kept = daily(&env);
    assert!(!kept.contains("pr0xy"), "{kept}");
    assert!(kept.contains("proxy [redacted: "), "{kept}");
}
