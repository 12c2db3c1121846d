//! What an MCP client's model has "seen" of memory before it may overwrite
//! it: a file a recall result showed whole, within `recall_chars` and
//! within what every known client shows its model uncut; and where a
//! connection cannot stand for one conversation (over HTTP, or on stdio
//! with `--require-if-match`) nothing but the hash the model passes as
//! `if_match`.

use serde_json::{Value, json};

use crate::mcp::Client;
use crate::mcp_http::{Served, request, sha256_hex, stateless};
use crate::util::{Env, read};

/// A running `axe-mcp` on stdio, after the handshake.
fn started(env: &Env, args: &[&str]) -> Client {
    let mut c = Client::start(env, args);
    c.initialize();
    c
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// The `path sha256` lines after a served recall's text.
fn hash_lines(text: &str) -> Vec<(String, String)> {
    let Some((_, lines)) = text.split_once("for reflect's and learn_fact's if_match:\n") else {
        return Vec::new();
    };
    lines
        .lines()
        .filter_map(|l| l.rsplit_once(' '))
        .map(|(path, sha)| (path.trim_end_matches(" (empty)").to_owned(), sha.to_owned()))
        .collect()
}

/// With 300 short topics and `recall_chars = 24000`, the hash paragraph
/// once came on top of the budget (33,788 characters in all): a client
/// cutting long results kept the texts and lost the hashes. Now the whole
/// text is within the budget, and every file named with a hash is one the
/// text shows, and the other way round.
#[test]
fn a_served_recall_keeps_its_hashes_within_recall_chars() {
    let env = Env::new();
    env.agent_file("many")
        .notes(&format!("recall_chars = {}", 24_000))
        .write();
    let world = env.data_dir().join("axe/notes/world");
    for n in 0..300 {
        env.write(
            &world.join(format!("topic-{n:03}.md")),
            format!("Fact number {n} about the fleet.\n"),
        );
    }
    env.write(
        &env.data_dir().join("axe/notes/agents/many/MEMORY.md"),
        "I keep the fleet's facts.\n",
    );
    let mut c = started(&env, &["many"]);
    let r = c.result("recall", json!({}));
    let shown = text(&r);
    assert!(
        shown.chars().count() <= 24_000,
        "the recall is {} characters, over recall_chars = 24000",
        shown.chars().count()
    );
    let hashed = hash_lines(shown);
    let files = r["structuredContent"]["files"].as_array().unwrap();
    assert!(!files.is_empty() && !hashed.is_empty(), "{shown}");
    let listed: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            (
                f["path"].as_str().unwrap().to_owned(),
                f["sha256"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let mut a = hashed.clone();
    let mut b = listed.clone();
    a.sort();
    b.sort();
    assert_eq!(a, b, "the hashes named are not the files shown");
    for (path, _) in &hashed {
        if let Some(topic) = path.strip_prefix("world/") {
            let title = format!("## {}", topic.trim_end_matches(".md"));
            assert!(shown.contains(&title), "{path} named but not shown");
        }
    }
    // What did not fit is said, and a topic left out gets no hash: its
    // rewrite is refused as unseen.
    assert!(
        !r["structuredContent"]["left_out"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    let last = "topic-299";
    assert!(!hashed.iter().any(|(p, _)| p.contains(last)));
    let refused = c.result(
        "learn_fact",
        json!({"topic": last, "content": "Overwritten blind."}),
    );
    assert!(is_error(&refused), "{refused}");
    assert_eq!(
        read(&world.join(format!("{last}.md"))),
        "Fact number 299 about the fleet.\n"
    );
    c.finish();
}

/// A client cuts a long tool result (Gemini CLI: over 40,000 characters to
/// its first 8,000 and last 32,000; opencode: the first 2,000 lines or
/// 50 KiB): a file counts as seen, and gets its hash, only if every known
/// client shows the result whole. With a `recall_chars` far above that, a
/// MEMORY.md of 45,000 characters is left out (no hash, a blind reflect
/// refused), and a recall of many short lines stays under 2,000 lines;
/// the text and the structured content alike.
#[test]
fn a_served_recall_fits_what_every_client_shows_whole() {
    let env = Env::new();
    env.agent_file("big")
        .notes(&format!("recall_chars = {}", 1_000_000))
        .write();
    let memory = env.data_dir().join("axe/notes/agents/big/MEMORY.md");
    let long = "a line of memory that is kept whole.\n".repeat(1_250);
    assert!(long.len() > 45_000);
    env.write(&memory, &long);
    let mut c = started(&env, &["big"]);
    let fits = |r: &Value| {
        let (t, data) = (text(r), r["structuredContent"].to_string());
        for what in [t, data.as_str()] {
            assert!(what.len() <= 40_000, "{} bytes", what.len());
            assert!(
                what.split('\n').count() <= 2_000,
                "{} lines",
                what.lines().count()
            );
        }
    };
    let r = c.result("recall", json!({}));
    fits(&r);
    assert!(
        r["structuredContent"].get("memory_sha256").is_none(),
        "a MEMORY.md no client shows whole got its hash"
    );
    assert!(!text(&r).contains(&sha256_hex(&long)));
    let refused = c.result("reflect", json!({"content": "blind"}));
    assert!(is_error(&refused), "{refused}");
    assert_eq!(read(&memory), long);

    // Many short lines: under 40,000 bytes, over 2,000 lines.
    let lines = "- x\n".repeat(2_400);
    env.write(&memory, &lines);
    let r = c.result("recall", json!({}));
    fits(&r);
    assert!(r["structuredContent"].get("memory_sha256").is_none(), "{r}");

    // One that fits is shown and hashed as before.
    env.write(&memory, "short\n");
    let r = c.result("recall", json!({}));
    fits(&r);
    assert_eq!(
        r["structuredContent"]["memory_sha256"],
        sha256_hex("short\n")
    );
    c.finish();
}

/// Over HTTP a connection cannot stand for one conversation (a stateless
/// request has no session; one session may serve many conversations), so
/// an existing MEMORY.md or topic is overwritten only with the hash recall
/// showed as `if_match`; the refusal says exactly what to pass (never the
/// hash itself), in a session as in a stateless request. An empty
/// MEMORY.md and a new topic need no hash.
#[test]
fn over_http_an_overwrite_needs_the_hash_recall_showed() {
    let env = Env::new();
    let memory = crate::mcp_http::team_dir(&env).join("notes/agents/team/MEMORY.md");
    let server = Served::start(&env, &[]);
    let s = server.initialize("team", &[]);
    let session = [("Mcp-Session-Id", s.as_str())];
    let call = |id: u64, name: &str, arguments: Value| {
        let a = server.post(
            "team",
            &session,
            &request(
                id,
                "tools/call",
                json!({"name": name, "arguments": arguments}),
            ),
        );
        a.json()["result"].clone()
    };
    // Nothing there yet: written without a hash.
    let first = call(2, "reflect", json!({"content": "v1\n"}));
    assert!(!is_error(&first), "{first}");
    let made = call(
        3,
        "learn_fact",
        json!({"topic": "ops", "content": "blue\n"}),
    );
    assert!(!is_error(&made), "{made}");
    // Recalled in this session, then overwritten without the hash: refused,
    // and told what to pass.
    let recalled = call(4, "recall", json!({}));
    let sha = recalled["structuredContent"]["memory_sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    for (id, tool, arguments, path) in [
        (
            5,
            "reflect",
            json!({"content": "v2\n"}),
            "agents/team/MEMORY.md",
        ),
        (
            6,
            "learn_fact",
            json!({"topic": "ops", "content": "green\n"}),
            "world/ops.md",
        ),
    ] {
        let refused = call(id, tool, arguments);
        let said = text(&refused);
        assert!(is_error(&refused), "{refused}");
        assert!(
            said.contains(&format!(
                "Pass as if_match the sha256 your recall showed for {path}"
            )) && !said.contains("Call recall first"),
            "{said}"
        );
        assert!(
            !said.contains(&sha),
            "the refusal gave the hash away: {said}"
        );
    }
    assert_eq!(read(&memory), "v1\n");
    // With it: written, and the next hash is said in the text.
    let done = call(7, "reflect", json!({"content": "v2\n", "if_match": sha}));
    assert!(!is_error(&done), "{done}");
    assert!(text(&done).contains(&sha256_hex("v2\n")), "{done}");
    assert_eq!(read(&memory), "v2\n");

    // Stateless: the same refusal, the same licence.
    let stateless_call = |id: u64, arguments: Value| {
        let a = server.post(
            "team",
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "reflect"),
            ],
            &stateless(
                id,
                "tools/call",
                json!({"name": "reflect", "arguments": arguments}),
            ),
        );
        a.json()["result"].clone()
    };
    let refused = stateless_call(8, json!({"content": "v3\n"}));
    assert!(
        text(&refused)
            .contains("Pass as if_match the sha256 your recall showed for agents/team/MEMORY.md"),
        "{refused}"
    );
    let done = stateless_call(
        9,
        json!({"content": "v3\n", "if_match": sha256_hex("v2\n")}),
    );
    assert!(!is_error(&done), "{done}");
    assert_eq!(read(&memory), "v3\n");

    // Every client is told so: the instructions and the tool's description.
    let init = server.post(
        "team",
        &[],
        &request(
            10,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        ),
    );
    let said = init.json()["result"]["instructions"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        said.contains("as if_match, which this server needs to overwrite any file that has text"),
        "{said}"
    );
}

/// `opencode serve` keeps one stdio connection for all its sessions: with
/// `--require-if-match` what one session recalled licenses nothing for
/// another, whose model never saw it; only the hash does. Without the
/// option a stdio connection is one conversation, as before.
#[test]
fn on_stdio_require_if_match_takes_only_the_hash() {
    let env = Env::new();
    let memory = env.data_dir().join("axe/notes/agents/oc/MEMORY.md");
    env.write(&memory, "seeded\n");
    let mut c = Client::start(&env, &["--require-if-match", "oc"]);
    let instructions = c.initialize();
    assert!(
        instructions["result"]["instructions"]
            .as_str()
            .unwrap()
            .contains("which this server needs to overwrite any file that has text")
    );
    // Session A recalls; session B, on the same connection, reflects blind.
    let recalled = c.result("recall", json!({}));
    assert!(text(&recalled).contains("seeded"));
    let refused = c.result("reflect", json!({"content": "B overwrote\n"}));
    assert!(
        is_error(&refused)
            && text(&refused)
                .contains("Pass as if_match the sha256 your recall showed for agents/oc/MEMORY.md"),
        "{refused}"
    );
    assert_eq!(read(&memory), "seeded\n");
    let done = c.result(
        "reflect",
        json!({"content": "A added\n", "if_match": sha256_hex("seeded\n")}),
    );
    assert!(!is_error(&done), "{done}");
    assert_eq!(read(&memory), "A added\n");
    c.finish();

    // Without the option: one connection, one conversation.
    let mut c = started(&env, &["oc"]);
    c.result("recall", json!({}));
    let done = c.result("reflect", json!({"content": "kept\n"}));
    assert!(!is_error(&done), "{done}");
    assert_eq!(read(&memory), "kept\n");
    c.finish();
}

/// A team server opens a memory per session and per stateless request: a
/// name near an agent file's is noted once, not once each time.
#[test]
fn a_team_server_says_did_you_mean_once() {
    let env = Env::new();
    env.agent(
        "team",
        "name = \"team\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\n",
    );
    let mut server = Served::start(&env, &[]);
    for _ in 0..3 {
        server.initialize("tean", &[]);
    }
    let (_, log) = server.stop();
    let notes = log.iter().filter(|l| l.contains("did you mean")).count();
    assert_eq!(notes, 1, "{log:#?}");
}
