//! Conversations (issue 34): `axe-run -c` and `--cid ID` go on with a
//! conversation kept under the data directory; what is sent is checked at
//! the local server, and with memory on the earlier turn is sent once.

use serde_json::{Value, json};

use crate::run::run;
use crate::server::{Answer, Recorded, Server};
use crate::util::{Env, read, stdout};
use crate::wire::anthropic_reply;

fn ok(text: &str) -> Answer {
    Answer::json(200, &anthropic_reply(text))
}

/// The memory agent `name`.
fn agent(env: &Env, name: &str) {
    env.agent(
        name,
        &format!(
            "name = \"{name}\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"You are {name}.\"\n[memory]\nenabled = true\n"
        ),
    );
}

/// `(role, text)` of each message the request sent.
fn sent(r: &Recorded) -> Vec<(String, String)> {
    let body = r.json();
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap().to_owned(), text)
        })
        .collect()
}

fn pair(role: &str, text: &str) -> (String, String) {
    (role.to_owned(), text.to_owned())
}

/// `axe-run --json ARGS`'s conversation_id.
fn conversation_id(env: &Env, url: &str, args: &[&str]) -> String {
    let out = run(env, url).args(args).arg("--json").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    doc["conversation_id"]
        .as_str()
        .expect("conversation_id")
        .to_owned()
}

#[test]
fn continue_sends_the_last_turn_once_with_memory_on() {
    let env = Env::new();
    let server = Server::start(vec![ok("Paris."), ok("About two million."), ok("Hello.")]);
    agent(&env, "geo");
    let first = conversation_id(&env, &server.url, &["geo", "-c", "capital of France?"]);
    // The run log got the turn: memory is on.
    assert!(read(&env.log_path("geo")).contains("capital of France?"));
    let second = conversation_id(
        &env,
        &server.url,
        &["geo", "-c", "how many people live there?"],
    );
    assert_eq!(second, first, "-c goes on with the same conversation");
    let requests = server.requests();
    assert_eq!(
        sent(&requests[1]),
        [
            pair("user", "capital of France?"),
            pair("assistant", "Paris."),
            pair("user", "how many people live there?"),
        ]
    );
    // The earlier turn is in the messages, so not again in the run log's
    // block of the system prompt: the whole request carries it once.
    let body = String::from_utf8_lossy(&requests[1].body).into_owned();
    assert_eq!(body.matches("capital of France?").count(), 1, "{body}");
    assert_eq!(body.matches("Paris.").count(), 1, "{body}");
    // A run that starts afresh has both entries in its memory block.
    run(&env, &server.url)
        .args(["geo", "hi"])
        .assert()
        .success();
    let body = String::from_utf8_lossy(&server.requests()[2].body).into_owned();
    assert!(body.contains("capital of France?") && body.contains("About two million."));
    assert_eq!(sent(&server.requests()[2]), [pair("user", "hi")]);
}

#[test]
fn cid_goes_on_with_the_conversation_named() {
    let env = Env::new();
    let server = Server::start(vec![ok("A1"), ok("B1"), ok("C1"), ok("A2"), ok("A3")]);
    env.agent("t", "name = \"t\"\nmodel = \"anthropic/claude-test\"\n");
    let a = conversation_id(&env, &server.url, &["t", "-c", "question A"]);
    // --cid with a name the agent has no conversation by starts one.
    let b = conversation_id(&env, &server.url, &["t", "--cid", "review-7", "question B"]);
    assert_eq!(b, "review-7");
    assert_eq!(sent(&server.requests()[1]), [pair("user", "question B")]);
    // A run without -c or --cid keeps nothing.
    run(&env, &server.url)
        .args(["t", "question C"])
        .assert()
        .success();
    let dir = env.data_dir().join("axe/conversations/agents/t");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let again = conversation_id(&env, &server.url, &["t", "--cid", &a, "more A"]);
    assert_eq!(again, a);
    assert_eq!(
        sent(&server.requests()[3]),
        [
            pair("user", "question A"),
            pair("assistant", "A1"),
            pair("user", "more A")
        ]
    );
    // The conversation used last is now A's, not review-7.
    run(&env, &server.url)
        .args(["t", "-c", "and then?"])
        .assert()
        .success();
    assert_eq!(sent(&server.requests()[4]).len(), 5);
    assert_eq!(sent(&server.requests()[4])[3], pair("assistant", "A2"));
    // The file: JSON lines of messages.
    let lines: Vec<Value> = read(&dir.join(format!("{a}.jsonl")))
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[5], json!({"role": "assistant", "content": "A3"}));
}

#[test]
fn a_bad_cid_is_a_usage_error_and_nothing_is_sent() {
    let env = Env::new();
    let server = Server::start(vec![ok("done")]);
    env.agent("t", "name = \"t\"\nmodel = \"anthropic/claude-test\"\n");
    for id in ["../../x", "a/b", "-x", ""] {
        run(&env, &server.url)
            .args(["t", "--cid", id, "go"])
            .assert()
            .code(1)
            .stderr(predicates::str::contains("is not a conversation id"));
    }
    run(&env, &server.url)
        .args(["t", "-c", "--messages", "m.json", "go"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not with -c or --cid"));
    assert!(server.requests().is_empty());
    assert!(!env.data_dir().join("axe/conversations").exists());
    // Going on with a conversation needs the next turn.
    run(&env, &server.url)
        .args(["t", "-c", "-n"])
        .assert()
        .success();
    run(&env, &server.url)
        .args(["t", "-c", "-n"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "-c/--cid: no prompt: give the next turn",
        ));
    run(&env, &server.url)
        .args(["t", "-c", "--cid", "x", "go"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("not both"));
    // Only the one run that started a conversation was sent.
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn conversations_keep_no_secret() {
    let env = Env::new();
    let server = Server::start(vec![ok("noted"), ok("ok")]);
    env.agent("t", "name = \"t\"\nmodel = \"anthropic/claude-test\"\n");
    let token = "ghp_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let id = conversation_id(
        &env,
        &server.url,
        &["t", "-c", &format!("the token is {token}")],
    );
    let file = env
        .data_dir()
        .join(format!("axe/conversations/agents/t/{id}.jsonl"));
    let text = read(&file);
    assert!(!text.contains(token), "{text}");
    assert!(text.contains("[redacted: github token]"), "{text}");
    run(&env, &server.url)
        .args(["t", "-c", "and?"])
        .assert()
        .success();
    assert_eq!(
        sent(&server.requests()[1])[0],
        pair("user", "the token is [redacted: github token]")
    );
}

#[test]
fn llm_continue_sends_the_earlier_turns() {
    let env = Env::new();
    let server = Server::start(vec![ok("Four."), ok("Eight."), ok("fresh")]);
    let llm = || crate::wire::served_by(env.cmd("axe-llm"), &server.url);
    let out = llm()
        .args(["-m", "anthropic/claude-test", "-c", "--json", "2+2?"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let id = doc["conversation_id"].as_str().unwrap().to_owned();
    llm()
        .args(["-m", "anthropic/claude-test", "-c", "times two?"])
        .assert()
        .success()
        .stdout("Eight.");
    assert_eq!(
        sent(&server.requests()[1]),
        [
            pair("user", "2+2?"),
            pair("assistant", "Four."),
            pair("user", "times two?")
        ]
    );
    // Without -c a call is on its own, and keeps nothing.
    llm()
        .args(["-m", "anthropic/claude-test", "hi"])
        .assert()
        .success();
    assert_eq!(sent(&server.requests()[2]), [pair("user", "hi")]);
    let dir = env.data_dir().join("axe/conversations/llm");
    assert_eq!(read(&dir.join(format!("{id}.jsonl"))).lines().count(), 4);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    llm()
        .args(["-m", "anthropic/claude-test", "-c", "--request", "r.json"])
        .assert()
        .code(1);
}

/// `axe log show ID` prints the conversation a run kept, found through the
/// ledger's record of the run's calls; without that record (`--no-log`),
/// `--agent` names whose it is.
#[test]
fn axe_log_show_prints_a_conversation_found_through_the_ledger() {
    let env = Env::new();
    let server = Server::start(vec![ok("Paris."), ok("About two million.")]);
    agent(&env, "geo");
    let id = conversation_id(
        &env,
        &server.url,
        &["geo", "--cid", "trip.1", "capital of France?"],
    );
    assert_eq!(id, "trip.1");
    let shown = env
        .cmd("axe")
        .args(["log", "show", "trip.1"])
        .output()
        .unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let text = stdout(&shown);
    assert!(text.contains("user: capital of France?"), "{text}");
    assert!(text.contains("assistant: Paris."), "{text}");

    let unlogged = run(&env, &server.url)
        .args(["geo", "--cid", "quiet", "--no-log", "how many people?"])
        .output()
        .unwrap();
    assert!(
        unlogged.status.success(),
        "{}",
        String::from_utf8_lossy(&unlogged.stderr)
    );
    let lost = env.cmd("axe-log").args(["show", "quiet"]).output().unwrap();
    assert_eq!(lost.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&lost.stderr).contains("no conversation \"quiet\""),
        "{}",
        String::from_utf8_lossy(&lost.stderr)
    );
    let named = env
        .cmd("axe-log")
        .args(["show", "quiet", "--agent", "geo"])
        .output()
        .unwrap();
    assert!(
        named.status.success(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    assert!(stdout(&named).contains("assistant: About two million."));
}

/// What a conversation holds came from outside: a page a tool read, a
/// model's answer, a task. `axe-log show` prints it with every control
/// character and bidi override escaped, so none of it drives the viewer's
/// terminal (OSC 52 sets its clipboard, OSC 0 its title, CSI 2J clears
/// it) or reorders what is shown.
#[test]
fn axe_log_show_escapes_what_came_from_outside() {
    use crate::tools::{script, tool_agent};
    let env = Env::new();
    let work = tool_agent(&env, "\"read_file\"", "");
    let hostile = "\x1b]52;c;cHduZWQ=\x07\x1b]0;pwned\x07\x1b[2J\u{9b}31m\u{202e}txt.exe";
    std::fs::write(work.join("page.html"), format!("{hostile}\nsecond line\n")).unwrap();
    let server = script(vec![vec![("read_file", json!({"path": "page.html"}))]]);
    run(&env, &server.url)
        .args(["a", "--cid", "read", &format!("read the page {hostile}")])
        .assert()
        .success();
    let shown = env.cmd("axe-log").args(["show", "read"]).output().unwrap();
    assert!(
        shown.status.success(),
        "{}",
        String::from_utf8_lossy(&shown.stderr)
    );
    let text = stdout(&shown);
    for raw in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
        assert!(!text.contains(raw), "{raw:?} shown raw: {text:?}");
    }
    let escaped = "\\x1b]52;c;cHduZWQ=\\x07\\x1b]0;pwned\\x07\\x1b[2J\\u{9b}31m\\u{202e}txt.exe";
    assert!(
        text.contains(&format!("user: read the page {escaped}")),
        "{text}"
    );
    assert!(text.contains(&format!("  <- 1: {escaped}")), "{text}");
    assert!(
        text.contains("  -> read_file({\"path\":\"page.html\"})"),
        "{text}"
    );
}

/// `axe-log conversations` lists what was kept, the agent's and axe-llm's.
#[test]
fn axe_log_conversations_lists_every_owners() {
    let env = Env::new();
    let server = Server::start(vec![ok("Paris."), ok("Hi.")]);
    agent(&env, "geo");
    conversation_id(
        &env,
        &server.url,
        &["geo", "--cid", "trip", "capital of France?"],
    );
    let llm = env
        .cmd("axe-llm")
        .env("AXE_ANTHROPIC_BASE_URL", &server.url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .args([
            "-m",
            "anthropic/claude-test",
            "--cid",
            "plain",
            "-n",
            "hello",
        ])
        .output()
        .unwrap();
    assert!(
        llm.status.success(),
        "{}",
        String::from_utf8_lossy(&llm.stderr)
    );
    let out = env
        .cmd("axe-log")
        .args(["conversations", "--json"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut kept: Vec<(Value, String)> = doc["conversations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["agent"].clone(), c["id"].as_str().unwrap().to_owned()))
        .collect();
    kept.sort_by(|a, b| a.1.cmp(&b.1));
    assert_eq!(
        kept,
        vec![
            (Value::Null, "plain".to_owned()),
            (json!("geo"), "trip".to_owned())
        ]
    );
    let geo = env
        .cmd("axe-log")
        .args(["conversations", "--agent", "geo"])
        .output()
        .unwrap();
    let text = stdout(&geo);
    assert!(text.starts_with("geo\ttrip\t"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}
