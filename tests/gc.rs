//! `axe-gc` (M7 7.3) against a local provider.

use std::time::Duration;

use assert_cmd::Command;
use predicates::prelude::*;
use serde::Deserialize;
use serde_json::json;

use crate::server::{Answer, Server};
use crate::util::{Env, entries, entry, header_count, read, set_mode, stdout};
use crate::wire::{KEY, anthropic_reply, ollama_reply, served_by};

const ANALYSIS: &str =
    "## Patterns Found\nReviews.\n## Repeated Work\nNone.\n## Recommendations\nNone.";

fn gc(env: &Env, url: &str) -> Command {
    served_by(env.cmd("axe-gc"), url)
}

fn analyst() -> Server {
    Server::start(vec![Answer::json(200, &anthropic_reply(ANALYSIS))])
}

/// A memory agent whose log holds `n` entries.
fn with_log(env: &Env, name: &str, memory: &str, n: usize) {
    env.memory_agent(name, memory);
    env.write(&env.log_path(name), entries(n));
}

#[test]
fn no_args_no_all() {
    let env = Env::new();
    env.cmd("axe-gc")
        .assert()
        .code(1)
        .stderr("agent name is required (or use --all); usage: axe-gc [OPTIONS] <AGENT>\n");
}

#[test]
fn all_with_agent_name() {
    let env = Env::new();
    env.cmd("axe-gc")
        .args(["myagent", "--all"])
        .assert()
        .code(1)
        .stderr("cannot specify both --all and an agent name\n");
}

#[test]
fn agent_not_found() {
    let env = Env::new();
    env.cmd("axe-gc")
        .arg("nonexistent")
        .assert()
        .code(2)
        .stderr("agent config not found: nonexistent\n");
}

#[test]
fn memory_disabled() {
    let env = Env::new();
    env.agent("off", "name = \"off\"\nmodel = \"anthropic/claude-3\"\n");
    env.cmd("axe-gc")
        .arg("off")
        .assert()
        .success()
        .stdout("")
        .stderr("Warning: agent \"off\" does not have memory enabled. Skipping.\n");
}

#[test]
fn no_memory_file_and_empty_file_make_no_call() {
    let env = Env::new();
    let server = analyst();
    env.memory_agent("m", "last_n = 3");
    for _ in 0..2 {
        gc(&env, &server.url)
            .arg("m")
            .assert()
            .success()
            .stdout("No memory entries for agent \"m\". Nothing to do.\n");
        env.write(&env.log_path("m"), "");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn analyze_and_trim() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 3", 10);
    gc(&env, &server.url)
        .arg("m")
        .assert()
        .success()
        .stdout(format!(
            "Agent: m\nEntries: 10\n--- Analysis ---\n{ANALYSIS}\nTrimmed: 7 entries removed, 3 entries kept.\n"
        ))
        .stderr("");
    assert_eq!(
        read(&env.log_path("m")),
        (7..10).map(entry).collect::<String>()
    );
}

#[test]
fn dry_run() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 3", 10);
    gc(&env, &server.url)
        .args(["m", "--dry-run"])
        .assert()
        .success()
        .stdout(format!(
            "Agent: m\nEntries: 10\n--- Analysis ---\n{ANALYSIS}\nDry run: no entries trimmed.\n"
        ));
    assert_eq!(read(&env.log_path("m")), entries(10));
}

#[test]
fn no_trim_target() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 0\nmax_entries = 0", 10);
    gc(&env, &server.url)
        .arg("m")
        .assert()
        .success()
        .stdout(predicate::str::ends_with(format!(
            "{ANALYSIS}\nNo trim target configured (last_n and max_entries are both 0). Skipping trim.\n"
        )));
    assert_eq!(read(&env.log_path("m")), entries(10));
}

#[test]
fn fallback_to_max_entries() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 0\nmax_entries = 5", 10);
    gc(&env, &server.url)
        .arg("m")
        .assert()
        .success()
        .stdout(predicate::str::ends_with(
            "Trimmed: 5 entries removed, 5 entries kept.\n",
        ));
    assert_eq!(header_count(&read(&env.log_path("m"))), 5);
}

#[test]
fn model_override() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &ollama_reply(ANALYSIS))]);
    with_log(&env, "m", "last_n = 3", 4);
    gc(&env, &server.url)
        .args(["m", "-m", "ollama/llama3"])
        .assert()
        .success();
    let req = server.only_request();
    assert_eq!(req.path, "/api/chat");
    assert_eq!(req.json()["model"], "llama3");
}

#[test]
fn llm_error_trims_nothing() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(
        500,
        &json!({"type": "error", "error": {"type": "api_error", "message": "down"}}),
    )]);
    with_log(&env, "m", "last_n = 3", 10);
    gc(&env, &server.url)
        .arg("m")
        .assert()
        .code(3)
        .stdout("Agent: m\nEntries: 10\n")
        .stderr(format!(
            "server: down ({}/v1/messages answered 500)\n",
            server.url
        ));
    assert_eq!(read(&env.log_path("m")), entries(10));
}

#[test]
fn missing_key_and_bad_model() {
    let env = Env::new();
    with_log(&env, "m", "last_n = 3", 2);
    env.cmd("axe-gc").arg("m").assert().code(2).stderr(
        format!(
            "API key for provider \"anthropic\" is not configured: ANTHROPIC_API_KEY is not set, and there is no {}\n",
            env.config_dir().join("axe/config.toml").display()
        ),
    );
    env.cmd("axe-gc")
        .args(["m", "--model", "claude"])
        .assert()
        .code(1)
        .stderr("invalid model format \"claude\": expected provider/model-name\n");
}

#[test]
fn nothing_to_trim() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 10", 3);
    gc(&env, &server.url)
        .arg("m")
        .assert()
        .success()
        .stdout(predicate::str::ends_with(
            "No trimming needed: 3 entries within limit (10).\n",
        ));
    assert_eq!(read(&env.log_path("m")), entries(3));
}

#[test]
fn all_flag_no_memory_agents() {
    let env = Env::new();
    env.agent("a", "name = \"a\"\nmodel = \"anthropic/claude-3\"\n");
    env.agent(
        "b",
        "name = \"b\"\nmodel = \"anthropic/claude-3\"\n[memory]\nenabled = false\n",
    );
    env.cmd("axe-gc")
        .arg("--all")
        .assert()
        .success()
        .stdout("No agents with memory enabled.\n");
    let empty = Env::new();
    empty
        .cmd("axe-gc")
        .arg("--all")
        .assert()
        .success()
        .stdout("No agents with memory enabled.\n");
}

#[test]
fn all_flag_multiple_agents() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "agent-a", "last_n = 3", 10);
    env.agent(
        "agent-b",
        "name = \"agent-b\"\nmodel = \"anthropic/claude-3\"\n",
    );
    with_log(&env, "agent-c", "last_n = 3", 5);
    let out = gc(&env, &server.url).arg("--all").assert().success();
    let text = stdout(out.get_output());
    assert_eq!(
        text,
        format!(
            "=== GC: agent-a ===\nAgent: agent-a\nEntries: 10\n--- Analysis ---\n{ANALYSIS}\n\
             Trimmed: 7 entries removed, 3 entries kept.\n=== GC: agent-c ===\nAgent: agent-c\n\
             Entries: 5\n--- Analysis ---\n{ANALYSIS}\nTrimmed: 2 entries removed, 3 entries kept.\n"
        )
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn all_flag_partial_failure() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "agent-a", "last_n = 3", 10);
    with_log(&env, "agent-b", "last_n = 3", 10);
    set_mode(&env.log_path("agent-b"), 0o000);
    // Writable to the unprivileged user, who must be able to trim agent-a.
    set_mode(env.log_path("agent-a").parent().unwrap(), 0o777);
    set_mode(&env.log_path("agent-a"), 0o666);
    let log_b = env.log_path("agent-b").display().to_string();
    // --no-log: the unprivileged user may not write the ledger either,
    // and this is about gc's own failures.
    let out = served_by(env.unprivileged("axe-gc"), &server.url)
        .args(["--all", "--no-log"])
        .assert()
        .code(1)
        .stderr(format!(
            "Error: gc failed for agent \"agent-b\": open {log_b}: permission denied\n\
             gc completed with errors: 1 of 2 agents failed\n"
        ));
    assert!(
        stdout(out.get_output())
            .contains("Trimmed: 7 entries removed, 3 entries kept.\n=== GC: agent-b ===\n")
    );
    assert_eq!(header_count(&read(&env.log_path("agent-a"))), 3);
    set_mode(&env.log_path("agent-b"), 0o644);
    assert_eq!(read(&env.log_path("agent-b")), entries(10));
}

#[test]
fn trim_failure_is_exit_1_and_keeps_the_log() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 3", 10);
    let log = env.log_path("m");
    set_mode(&log, 0o666);
    set_mode(log.parent().unwrap(), 0o555);
    served_by(env.unprivileged("axe-gc"), &server.url)
        .args(["m", "--no-log"])
        .assert()
        .code(1)
        .stdout(predicate::str::ends_with(format!("{ANALYSIS}\n")))
        .stderr(format!(
            "failed to trim memory file: replace {}: permission denied\n",
            log.display()
        ));
    assert_eq!(read(&log), entries(10));
}

#[test]
fn all_flag_with_dry_run() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "a", "last_n = 1", 4);
    with_log(&env, "b", "last_n = 1", 6);
    let out = gc(&env, &server.url)
        .args(["--all", "--dry-run"])
        .assert()
        .success();
    assert_eq!(
        stdout(out.get_output())
            .matches("Dry run: no entries trimmed.\n")
            .count(),
        2
    );
    assert_eq!(read(&env.log_path("a")), entries(4));
    assert_eq!(read(&env.log_path("b")), entries(6));
}

#[test]
fn pattern_detection_prompt() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "m", "last_n = 3", 4);
    gc(&env, &server.url).arg("m").assert().success();
    let body = server.only_request().json();
    assert_eq!(body["system"], axe::commands::gc::ANALYSIS_PROMPT);
    assert!(
        axe::commands::gc::ANALYSIS_PROMPT.starts_with("You are a memory analyst for an AI agent.")
            && axe::commands::gc::ANALYSIS_PROMPT
                .ends_with("Reference specific entries by their timestamps when relevant.")
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": entries(4)}])
    );
    assert_eq!(body["temperature"], json!(0.3));
    assert_eq!(body["max_tokens"], json!(4096));
    assert!(body.get("tools").is_none());
}

#[test]
fn timeout_flag_bounds_the_analysis() {
    let env = Env::new();
    let server = Server::start(vec![Answer::Hang(Duration::from_secs(4))]);
    with_log(&env, "m", "last_n = 1", 3);
    gc(&env, &server.url)
        .args(["m", "--timeout", "1"])
        .assert()
        .code(3)
        .stderr("timeout: no complete reply within 1s\n");
    assert_eq!(read(&env.log_path("m")), entries(3));
}

#[test]
fn an_append_during_the_analysis_survives_the_trim() {
    let env = Env::new();
    let (gate_tx, gate_rx) = std::sync::mpsc::channel::<()>();
    let gate = std::sync::Mutex::new(gate_rx);
    let server = Server::route(move |_| {
        // Hold the analysis until the test has appended.
        let _ = gate.lock().unwrap().recv_timeout(Duration::from_secs(10));
        Answer::json(200, &anthropic_reply(ANALYSIS))
    });
    with_log(&env, "m", "last_n = 2", 5);
    let child = {
        let mut cmd = env.std_cmd("axe-gc");
        cmd.arg("m")
            .env("AXE_ANTHROPIC_BASE_URL", &server.url)
            .env("ANTHROPIC_API_KEY", KEY)
            .stdout(std::process::Stdio::piped());
        cmd.spawn().unwrap()
    };
    while server.requests().is_empty() {
        std::thread::sleep(Duration::from_millis(10));
    }
    env.cmd("axe-mem-append")
        .args(["m", "--task", "late", "--result", "kept"])
        .assert()
        .success();
    gate_tx.send(()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(stdout(&out).ends_with("Trimmed: 4 entries removed, 2 entries kept.\n"));
    let log = read(&env.log_path("m"));
    assert!(log.starts_with(&entry(4)), "{log}");
    assert!(log.contains("**Task:** late\n**Result:** kept\n"), "{log}");
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GcJson {
    agents: Vec<Report>,
    failed: usize,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Report {
    agent: String,
    status: String,
    entries: u64,
    analysis: Option<String>,
    kept: Option<u64>,
    removed: Option<u64>,
    error: Option<String>,
}

#[test]
fn json_reports_every_agent() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "a", "last_n = 3", 10);
    with_log(&env, "b", "last_n = 10", 2);
    env.memory_agent("c", "");
    let out = gc(&env, &server.url)
        .args(["--all", "--json"])
        .assert()
        .success();
    let doc: GcJson = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc.failed, 0);
    let rows: Vec<_> = doc
        .agents
        .iter()
        .map(|r| {
            (
                r.agent.as_str(),
                r.status.as_str(),
                r.entries,
                r.kept,
                r.removed,
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("a", "trimmed", 10, Some(3), Some(7)),
            ("b", "within", 2, Some(2), Some(0)),
            ("c", "empty", 0, None, None),
        ]
    );
    assert_eq!(doc.agents[0].analysis.as_deref(), Some(ANALYSIS));
    assert!(doc.agents.iter().all(|r| r.error.is_none()));
}

#[test]
fn json_keeps_stderr_json_too() {
    let env = Env::new();
    let server = analyst();
    with_log(&env, "a", "last_n = 3", 10);
    env.agent(
        "b",
        "name = \"b\"\nmodel = \"gemini/m\"\n[memory]\nenabled = true\n",
    );
    env.write(&env.log_path("b"), entries(2));
    let why = "unsupported provider \"gemini\": supported providers are anthropic, openai, ollama, openrouter, google, requesty, atlascloud, edenai";
    let out = gc(&env, &server.url)
        .args(["--all", "--json"])
        .assert()
        .code(1)
        .get_output()
        .clone();
    let doc: GcJson = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc.failed, 1);
    assert_eq!(doc.agents[1].error.as_deref(), Some(why));
    // Every line on stderr is a JSON object: the agent that failed as it
    // happened, then the error that ends the run.
    let lines: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l:?}: {e}")))
        .collect();
    assert_eq!(
        lines,
        [
            json!({"agent": "b", "error": why}),
            json!({"error": "gc completed with errors: 1 of 2 agents failed", "exit_code": 1}),
        ]
    );
    // An agent without memory is a warning, in JSON too.
    env.agent("off", "name = \"off\"\nmodel = \"anthropic/claude-3\"\n");
    env.cmd("axe-gc")
        .args(["off", "--json"])
        .assert()
        .success()
        .stderr(format!(
            "{}\n",
            json!({"agent": "off", "warning": "agent \"off\" does not have memory enabled. Skipping."})
        ));
}

#[test]
fn all_looks_up_each_providers_key_once() {
    let env = Env::new();
    let server = analyst();
    for name in ["one", "two", "three"] {
        with_log(&env, name, "last_n = 1", 3);
    }
    let counter = env.root().join("key-lookups");
    env.write(
        &env.config_dir().join("axe/config.toml"),
        format!(
            "[providers.anthropic]\nbase_url = \"{}\"\napi_key_cmd = \"echo x >> '{}'; echo {KEY}\"\n",
            server.url,
            counter.display()
        ),
    );
    env.cmd("axe-gc").arg("--all").assert().success();
    assert_eq!(server.requests().len(), 3);
    assert_eq!(
        read(&counter),
        "x\n",
        "api_key_cmd ran once for three agents"
    );
}
