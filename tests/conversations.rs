//! Conversations (issue 34): `axe-run -c` and `--cid ID` go on with a
//! conversation kept under the data directory; what is sent is checked at
//! the local server, and with memory on the earlier turn is sent once.

use serde_json::{Value, json};

use crate::run::run;
use crate::server::{Answer, Recorded, Server};
use crate::util::{Env, read, stdout};
use crate::wire::{anthropic_reply, served_by};

fn ok(text: &str) -> Answer {
    Answer::json(200, &anthropic_reply(text))
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

/// What `cmd` prints as JSON, once it has succeeded (its stderr shown
/// when it has not).
fn json_of(cmd: &mut assert_cmd::Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout(&out)).unwrap()
}

/// `axe-run --json ARGS`'s conversation_id.
fn conversation_id(env: &Env, url: &str, args: &[&str]) -> String {
    let doc = json_of(run(env, url).args(args).arg("--json"));
    doc["conversation_id"]
        .as_str()
        .expect("conversation_id")
        .to_owned()
}

#[test]
fn continue_sends_the_last_turn_once_with_memory_on() {
    let env = Env::new();
    let server = Server::start(vec![ok("Paris."), ok("About two million."), ok("Hello.")]);
    env.agent_file("geo")
        .prompt("You are geo.")
        .memory("")
        .write();
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
    // --cid --new with a name the agent has no conversation by starts one.
    let b = conversation_id(
        &env,
        &server.url,
        &["t", "--cid", "review-7", "--new", "question B"],
    );
    assert_eq!(b, "review-7");
    assert_eq!(sent(&server.requests()[1]), [pair("user", "question B")]);
    // A run without -c or --cid keeps its turn in a new one.
    run(&env, &server.url)
        .args(["t", "question C"])
        .assert()
        .success();
    let dir = env.data_dir().join("axe/conversations/agents/t");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 3);
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
    let doc = json_of(llm().args(["-m", "anthropic/claude-test", "-c", "--json", "2+2?"]));
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
    // Without -c a call is on its own, kept in a new conversation.
    llm()
        .args(["-m", "anthropic/claude-test", "hi"])
        .assert()
        .success();
    assert_eq!(sent(&server.requests()[2]), [pair("user", "hi")]);
    let dir = env.data_dir().join("axe/conversations/llm");
    assert_eq!(read(&dir.join(format!("{id}.jsonl"))).lines().count(), 4);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    llm()
        .args(["-m", "anthropic/claude-test", "-c", "--request", "r.json"])
        .assert()
        .code(1);
}

/// `axe log show ID` prints the conversation a run kept, found by its id;
/// an id two owners keep is the one the ledger recorded calls of, and
/// `--agent` names whose it is.
#[test]
fn axe_log_show_prints_a_conversation_found_through_the_ledger() {
    let env = Env::new();
    let server = Server::start(vec![ok("Paris."), ok("About two million."), ok("Hi.")]);
    env.agent_file("geo")
        .prompt("You are geo.")
        .memory("")
        .write();
    let id = conversation_id(
        &env,
        &server.url,
        &["geo", "--cid", "trip.1", "--new", "capital of France?"],
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

    // --no-log keeps no turn: there is nothing to show.
    let unlogged = run(&env, &server.url)
        .args([
            "geo",
            "--cid",
            "quiet",
            "--new",
            "--no-log",
            "how many people?",
        ])
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
        String::from_utf8_lossy(&lost.stderr)
            .contains("no conversation \"quiet\" of any agent or axe-llm (used last: trip.1)"),
        "{}",
        String::from_utf8_lossy(&lost.stderr)
    );
    // An id axe-llm keeps too: --agent names whose.
    served_by(env.cmd("axe-llm"), &server.url)
        .args([
            "-m",
            "anthropic/claude-test",
            "--cid",
            "trip.1",
            "--new",
            "-n",
        ])
        .arg("hello")
        .assert()
        .success();
    // Without --agent, the owner the ledger recorded the id's last call of.
    let last = env
        .cmd("axe-log")
        .args(["show", "trip.1"])
        .output()
        .unwrap();
    assert_eq!(stdout(&last), "user: hello\nassistant: Hi.\n");
    let named = env
        .cmd("axe-log")
        .args(["show", "trip.1", "--agent", "geo"])
        .output()
        .unwrap();
    assert!(
        named.status.success(),
        "{}",
        String::from_utf8_lossy(&named.stderr)
    );
    assert!(stdout(&named).contains("assistant: Paris."));
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
        .args([
            "a",
            "--cid",
            "read",
            "--new",
            &format!("read the page {hostile}"),
        ])
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
    env.agent_file("geo")
        .prompt("You are geo.")
        .memory("")
        .write();
    conversation_id(
        &env,
        &server.url,
        &["geo", "--cid", "trip", "--new", "capital of France?"],
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
            "--new",
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
    let doc = json_of(env.cmd("axe-log").args(["conversations", "--json"]));
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

/// `llm`'s habit (issue 41): every run keeps its turn, so `-c` goes on
/// from a plain run, whatever kept the agent's last conversation.
#[test]
fn continue_goes_on_from_a_plain_run() {
    let env = Env::new();
    let server = Server::start(vec![
        ok("Older."),
        ok("Noted."),
        ok("Teal."),
        ok("Still teal."),
    ]);
    env.agent(
        "plain",
        "name = \"plain\"\nmodel = \"anthropic/claude-test\"\n",
    );
    // An older conversation the agent went on with by -c.
    let older = conversation_id(&env, &server.url, &["plain", "-c", "an older question"]);
    // A plain run, with no flag about conversations: its turn is kept,
    // and --json says where.
    let first = conversation_id(
        &env,
        &server.url,
        &["plain", "My favourite colour is teal."],
    );
    assert_ne!(first, older, "a plain run starts a conversation of its own");
    let second = conversation_id(
        &env,
        &server.url,
        &["plain", "-c", "What is my favourite colour?"],
    );
    assert_eq!(second, first, "-c goes on from the plain run");
    assert_eq!(
        sent(&server.requests()[2]),
        [
            pair("user", "My favourite colour is teal."),
            pair("assistant", "Noted."),
            pair("user", "What is my favourite colour?"),
        ]
    );
    // The -c run's turn went into it too: the next -c carries both.
    run(&env, &server.url)
        .args(["plain", "-c", "sure?"])
        .assert()
        .success();
    assert_eq!(sent(&server.requests()[3]).len(), 5);
}

/// `axe-llm` keeps every call's turn too, and `-c` goes on from the last.
#[test]
fn llm_continue_goes_on_from_a_plain_call() {
    let env = Env::new();
    let server = Server::start(vec![ok("Noted."), ok("Teal.")]);
    let llm = || crate::wire::served_by(env.cmd("axe-llm"), &server.url);
    let doc = json_of(
        llm()
            .args(["-m", "anthropic/claude-test", "--json"])
            .arg("My favourite colour is teal."),
    );
    let id = doc["conversation_id"]
        .as_str()
        .expect("conversation_id")
        .to_owned();
    let doc = json_of(
        llm()
            .args(["-m", "anthropic/claude-test", "-c", "--json"])
            .arg("What is my favourite colour?"),
    );
    assert_eq!(doc["conversation_id"], json!(id));
    assert_eq!(
        sent(&server.requests()[1]),
        [
            pair("user", "My favourite colour is teal."),
            pair("assistant", "Noted."),
            pair("user", "What is my favourite colour?"),
        ]
    );
}

/// `--json` always has `conversation_id`: `null` when the turn was not
/// kept, which `--no-log` and `[log] conversations = false` (for a run
/// that names no conversation) decide.
#[test]
fn json_always_says_the_conversation_and_no_log_keeps_none() {
    let env = Env::new();
    let server = Server::start(vec![
        ok("one"),
        ok("two"),
        ok("three"),
        ok("four"),
        ok("five"),
    ]);
    env.agent("t", "name = \"t\"\nmodel = \"anthropic/claude-test\"\n");
    let json =
        |args: &[&str]| -> Value { json_of(run(&env, &server.url).args(args).arg("--json")) };
    let kept = json(&["t", "remember this"]);
    let id = kept["conversation_id"].as_str().unwrap().to_owned();
    // --no-log: no turn kept, no ledger line; -c still reads what is kept.
    let quiet = json(&["t", "-c", "--no-log", "off the record"]);
    assert_eq!(quiet["conversation_id"], Value::Null);
    assert_eq!(
        sent(&server.requests()[1]),
        [
            pair("user", "remember this"),
            pair("assistant", "one"),
            pair("user", "off the record")
        ]
    );
    let dir = env.data_dir().join("axe/conversations/agents/t");
    assert_eq!(read(&dir.join(format!("{id}.jsonl"))).lines().count(), 2);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    let ledger = env.cmd("axe-log").arg("--json").output().unwrap();
    let calls: Value = serde_json::from_str(&stdout(&ledger)).unwrap();
    assert_eq!(calls["calls"].as_array().unwrap().len(), 1, "{calls}");
    assert_eq!(calls["calls"][0]["conversation"], json!(id));
    // The config switch: a plain run keeps nothing, -c still does.
    std::fs::create_dir_all(env.config_dir().join("axe")).unwrap();
    std::fs::write(
        env.config_dir().join("axe/config.toml"),
        "[log]\nconversations = false\n",
    )
    .unwrap();
    assert_eq!(json(&["t", "not kept"])["conversation_id"], Value::Null);
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
    assert_eq!(json(&["t", "-c", "kept"])["conversation_id"], json!(id));
    assert_eq!(read(&dir.join(format!("{id}.jsonl"))).lines().count(), 4);
    // axe-llm says null too.
    let doc = json_of(
        crate::wire::served_by(env.cmd("axe-llm"), &server.url).args([
            "-m",
            "anthropic/claude-test",
            "--no-log",
            "--json",
            "hi",
        ]),
    );
    assert_eq!(doc.get("conversation_id"), Some(&Value::Null), "{doc}");
    assert!(!env.data_dir().join("axe/conversations/llm").exists());
}

/// A mistyped `--cid` is an error naming the ids kept (the nearest first),
/// and nothing is sent; `--new` starts a conversation by that name.
#[test]
fn an_unknown_cid_is_refused_unless_new() {
    let env = Env::new();
    let server = Server::start(vec![ok("A1"), ok("B1"), ok("B2"), ok("L1")]);
    env.agent("t", "name = \"t\"\nmodel = \"anthropic/claude-test\"\n");
    let a = conversation_id(&env, &server.url, &["t", "question A"]);
    let mut typo = a.clone();
    typo.pop();
    typo.push(if a.ends_with('0') { '1' } else { '0' });
    let out = run(&env, &server.url)
        .args(["t", "--cid", &typo, "more A"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        err.contains(&format!(
            "no conversation \"{typo}\" of agent \"t\": did you mean \"{a}\"? (used last: {a})"
        )),
        "{err}"
    );
    assert!(
        err.contains("--new starts a conversation by that name"),
        "{err}"
    );
    assert_eq!(server.requests().len(), 1, "nothing sent");
    // --new starts it, and then it is known.
    let b = conversation_id(
        &env,
        &server.url,
        &["t", "--cid", "review-7", "--new", "question B"],
    );
    assert_eq!(b, "review-7");
    assert_eq!(sent(&server.requests()[1]), [pair("user", "question B")]);
    let again = conversation_id(&env, &server.url, &["t", "--cid", "review-7", "more B"]);
    assert_eq!(again, "review-7");
    assert_eq!(sent(&server.requests()[2]).len(), 3);
    // --new needs --cid.
    run(&env, &server.url)
        .args(["t", "--new", "x"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--cid is required with --new"));
    // axe-llm and axe-chat refuse alike, before any call.
    let llm = crate::wire::served_by(env.cmd("axe-llm"), &server.url)
        .args(["-m", "anthropic/claude-test", "--cid", "nope", "hi"])
        .output()
        .unwrap();
    assert_eq!(llm.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&llm.stderr)
            .contains("no conversation \"nope\" of axe-llm (it has none yet); --new starts"),
        "{}",
        String::from_utf8_lossy(&llm.stderr)
    );
    let chat = crate::wire::served_by(env.cmd("axe-chat"), &server.url)
        .args(["t", "--cid", "review-8"])
        .output()
        .unwrap();
    assert_eq!(chat.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&chat.stderr).contains("did you mean \"review-7\"?"),
        "{}",
        String::from_utf8_lossy(&chat.stderr)
    );
    assert_eq!(server.requests().len(), 3);
}
