//! `axe-notes-search` as a person uses it: a judged set of queries over a
//! small workspace, each with the files that must come first; the query's
//! syntax; what a result shows; and the README's search examples, run.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::server::{Answer, Server};
use crate::util::{Env, have, stdout};
use crate::wire::{reply_for, served_by};

/// `--json`, every field known: a field added or renamed fails here.
#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Json {
    query: String,
    results: Vec<Found>,
    #[serde(default)]
    unreadable: Vec<serde_json::Value>,
    #[allow(dead_code)]
    index: serde_json::Value,
    /// lexical, hybrid or vector (tests/search_meaning.rs).
    #[allow(dead_code)]
    mode: String,
    #[serde(default)]
    #[allow(dead_code)]
    vectors: Option<serde_json::Value>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct Found {
    path: String,
    line: usize,
    text: String,
    score: f64,
    heading: Option<String>,
    snippet: String,
}

fn workspace(env: &Env) -> PathBuf {
    env.data_dir().join("axe/notes")
}

/// A dozen notes files of two agents, written as people write them.
fn judged_workspace(env: &Env) {
    let ws = workspace(env);
    let files = [
        (
            "world/deploy-process.md",
            "We deploy from main every weekday. A deploy goes to the canary first, then to every host.\n\n\
             ## Rollback\n\nIf the canary's error rate rises, roll back to the previous release.\n",
        ),
        (
            "world/people.md",
            "Ana owns the billing service. Bruno runs the on-call rota.\n",
        ),
        (
            "world/billing.md",
            "# Billing\n\nInvoices are generated nightly; a failed invoice run pages on-call.\n",
        ),
        (
            "world/databases.md",
            "Postgres 16 on the primary; replicas lag under a second. Migrations run before each deploy.\n",
        ),
        (
            "world/office.md",
            "The team meets in Zurich on Tuesdays, in the blue room or the green room: \
             blue for planning, green for retros.\n\nLunch is crème brûlée at the café downstairs.\n",
        ),
        ("world/café.md", "Opens at eight. Oat milk on request.\n"),
        (
            "world/incidents.md",
            "# Incidents\n\n## 2026-10-02 Outage\n\nThe load balancer dropped traffic for twenty minutes.\n\n\
             ## 2026-11-12 Cache stampede\n\nEvictions caused a cache stampede; we added jitter to the expiries.\n",
        ),
        (
            "agents/reviewer/MEMORY.md",
            "# Reviewer\n\n## Reviews\n\nAsk for tests with every change. Flaky tests get a ticket, not a retry.\n\n\
             ## Deploys\n\nNever approve a deploy on a Friday: a rollback over the weekend costs everyone.\n",
        ),
        (
            "agents/reviewer/daily/2026-11-02.md",
            "# 2026-11-02\n\n## 09:00\n\nReviewed the invoices patch; asked for tests.\n\n\
             ## 15:00\n\nCI was red: a flaky test in the cache layer.\n",
        ),
        (
            "agents/reviewer/daily/2026-11-03.md",
            "# 2026-11-03\n\n## 10:00\n\nThe canary deployments failed twice; we rolled back.\n\n\
             ## 11:00\n\nThe blue-green switch for the API is ready.\n",
        ),
        ("agents/ops/MEMORY.md", "Pager rotation: Bruno, then Ana.\n"),
        (
            "agents/ops/daily/2026-11-03.md",
            "# 2026-11-03\n\n## 08:00\n\nDeployed hotfix 2.3.1. Deploying again after lunch; \
             deploys are slow today, deployed twice.\n",
        ),
    ];
    for (path, text) in files {
        env.write(&ws.join(path), text);
    }
}

/// `--json` of a search over the default workspace, whatever it found.
fn search(env: &Env, args: &[&str]) -> Json {
    let out = env
        .cmd("axe-notes-search")
        .args(args)
        .arg("--json")
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The files of a search's results, best first, each once.
fn files(json: &Json) -> Vec<&str> {
    let mut files: Vec<&str> = Vec::new();
    for f in &json.results {
        if !files.contains(&f.path.as_str()) {
            files.push(&f.path);
        }
    }
    files
}

/// A query, the files that must come first (in any order among them),
/// and whether those are all it may find.
struct Judged {
    query: &'static str,
    first: &'static [&'static str],
    only: bool,
}

const JUDGED: &[Judged] = &[
    // The topic named for it, above the log that says "deployed" most.
    Judged {
        query: "deploy",
        first: &["world/deploy-process.md"],
        only: false,
    },
    Judged {
        query: "deploy*",
        first: &["world/deploy-process.md"],
        only: false,
    },
    // A phrase: not the office's blue room and green room.
    Judged {
        query: "\"blue green\"",
        first: &["agents/reviewer/daily/2026-11-03.md"],
        only: true,
    },
    // Stemmed in a phrase too: "rolled back".
    Judged {
        query: "\"roll back\"",
        first: &[
            "world/deploy-process.md",
            "agents/reviewer/daily/2026-11-03.md",
        ],
        only: true,
    },
    // Only a topic's name holds it.
    Judged {
        query: "people",
        first: &["world/people.md"],
        only: true,
    },
    // Accents: in the query and not the text, and the other way round.
    Judged {
        query: "Zürich",
        first: &["world/office.md"],
        only: true,
    },
    Judged {
        query: "creme brulee",
        first: &["world/office.md"],
        only: true,
    },
    // A topic's name with an accent, above a text that has the word.
    Judged {
        query: "cafe",
        first: &["world/café.md"],
        only: false,
    },
    // A plural asked, the singular written (and "canary's").
    Judged {
        query: "canaries",
        first: &[
            "world/deploy-process.md",
            "agents/reviewer/daily/2026-11-03.md",
        ],
        only: true,
    },
    // A heading above a word in passing.
    Judged {
        query: "rollback",
        first: &["world/deploy-process.md"],
        only: false,
    },
    Judged {
        query: "stamp*",
        first: &["world/incidents.md"],
        only: true,
    },
    Judged {
        query: "flaky tests",
        first: &[
            "agents/reviewer/MEMORY.md",
            "agents/reviewer/daily/2026-11-02.md",
        ],
        only: true,
    },
    Judged {
        query: "invoice failed",
        first: &["world/billing.md"],
        only: false,
    },
];

#[test]
fn the_judged_queries_find_the_right_files_first() {
    let env = Env::new();
    judged_workspace(&env);
    let mut wrong = Vec::new();
    for j in JUDGED {
        let json = search(&env, &["--limit", "50", j.query]);
        let found = files(&json);
        let mut first: Vec<&str> = found.iter().take(j.first.len()).copied().collect();
        first.sort_unstable();
        let mut want = j.first.to_vec();
        want.sort_unstable();
        if first != want || (j.only && found.len() != want.len()) {
            wrong.push(format!(
                "{:?}: want {:?} first, got {found:?}",
                j.query, j.first
            ));
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[test]
fn a_result_names_the_heading_and_shows_the_match() {
    let env = Env::new();
    judged_workspace(&env);
    let json = search(&env, &["rollback"]);
    let first = &json.results[0];
    // The heading matched: its line is shown.
    assert_eq!(
        (first.line, first.text.as_str(), first.heading.as_deref()),
        (3, "## Rollback", Some("Rollback"))
    );
    let memory = json
        .results
        .iter()
        .find(|f| f.path == "agents/reviewer/MEMORY.md")
        .unwrap();
    assert_eq!(memory.line, 9);
    assert_eq!(memory.heading.as_deref(), Some("Deploys"));
    assert!(memory.score > 0.0 && memory.score < first.score);
    // Plain: the heading in brackets unless the line is the heading.
    env.cmd("axe-notes-search")
        .args(["rollback", "--limit", "2"])
        .assert()
        .success()
        .stdout(
            "world/deploy-process.md:3: ## Rollback\n\
             agents/reviewer/MEMORY.md:9: [Deploys] Never approve a deploy on a Friday: a rollback over the weekend costs everyone.\n",
        );
    // A long line is cut around the match, between words.
    let long = format!(
        "{} the canary rollback went fine {}\n",
        "filler ".repeat(40).trim(),
        "trailing ".repeat(40).trim()
    );
    env.write(&workspace(&env).join("world/long.md"), &long);
    let json = search(&env, &["went"]);
    let f = &json.results[0];
    assert_eq!(f.text, long.trim());
    assert_eq!(f.heading, None);
    assert!(
        f.snippet.starts_with("…filler ") && f.snippet.ends_with(" trailing…"),
        "{}",
        f.snippet
    );
    assert!(f.snippet.contains("the canary rollback went fine"));
    assert!(f.snippet.chars().count() <= 162, "{}", f.snippet);
    assert_eq!(json.query, "went");
    assert!(json.unreadable.is_empty());
    // Found by its name alone: its first line with something on it.
    env.write(
        &workspace(&env).join("world/escalation.md"),
        "\n\nBruno, then Ana.\n",
    );
    env.cmd("axe-notes-search")
        .arg("escalation")
        .assert()
        .success()
        .stdout("world/escalation.md:3: Bruno, then Ana.\n");
}

#[test]
fn folding_holds_for_text_beyond_ascii() {
    let env = Env::new();
    let ws = workspace(&env);
    // Upper case with accents, typed whole or as a letter and an accent;
    // other scripts; bytes that are not UTF-8 around a word.
    env.write(&ws.join("world/a.md"), "Réunion à ZÜRICH.\n");
    env.write(&ws.join("world/b.md"), "Treffen in Zu\u{308}rich\n");
    env.write(&ws.join("world/c.md"), "Встреча в Цюрихе, МИР\n");
    env.write(&ws.join("world/d.md"), b"bad \xff\xfezurich\xc3 bytes\n");
    let found = |q: &str| -> Vec<String> {
        let json = search(&env, &["--limit", "50", q]);
        let mut files: Vec<String> = files(&json).into_iter().map(str::to_owned).collect();
        files.sort();
        files
    };
    assert_eq!(found("zurich"), ["world/a.md", "world/b.md", "world/d.md"]);
    assert_eq!(found("réunion"), ["world/a.md"]);
    assert_eq!(found("REUNION"), ["world/a.md"]);
    assert_eq!(found("мир"), ["world/c.md"]);
    assert_eq!(found("цюрих*"), ["world/c.md"]);
    assert_eq!(found("\"встреча в\""), ["world/c.md"]);
    // The line is shown as written, with the bad bytes replaced.
    let json = search(&env, &["réunion"]);
    assert_eq!(json.results[0].text, "Réunion à ZÜRICH.");
    let json = search(&env, &["bytes"]);
    assert_eq!(
        json.results[0].text,
        "bad \u{fffd}\u{fffd}zurich\u{fffd} bytes"
    );
}

#[test]
fn a_bad_query_is_one_line_on_stderr_and_no_match_is_quiet() {
    let env = Env::new();
    judged_workspace(&env);
    env.cmd("axe-notes-search")
        .args(["*", "--", "\"\"", "\""])
        .assert()
        .code(1)
        .stdout("")
        .stderr("the query has no words to search for\n");
    // Words that are all there, but not in a row: no match, said by the
    // exit code alone.
    env.cmd("axe-notes-search")
        .arg("\"green blue\"")
        .assert()
        .code(1)
        .stdout("")
        .stderr("");
}

/// The README's `axe-notes-search` lines, from its sh and nu blocks.
fn readme_searches() -> Vec<(&'static str, String)> {
    let readme = crate::readme::guide();
    let mut out = Vec::new();
    let mut block = None;
    for line in readme.lines() {
        if let Some(lang) = line.strip_prefix("```") {
            block = match block {
                None => Some(if lang == "nu" { "nu" } else { "sh" }),
                Some(_) => None,
            };
            continue;
        }
        if let Some(lang) = block
            && line.starts_with("axe-notes-search ")
        {
            // Without its comment.
            let line = line.split(" # ").next().unwrap().trim_end();
            out.push((lang, line.to_owned()));
        }
    }
    out
}

#[test]
fn the_readme_search_examples_find_what_they_say() {
    let env = Env::new();
    env.agent(
        "reviewer",
        "name = \"reviewer\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\n",
    );
    // As the README does it: a topic learned, an entry remembered.
    env.cmd("axe-notes-learn")
        .args(["Deploy process", "--agent", "reviewer"])
        .write_stdin(
            "Deploys are blue-green: deployments go to the green pool first.\n\n\
             ## Rollback\n\nMove traffic back to the blue pool.\n",
        )
        .assert()
        .success()
        .stdout("world/deploy-process.md\n");
    env.cmd("axe-notes-remember")
        .args(["reviewer", "CI is red on main since the toolchain bump"])
        .assert()
        .success();
    let searches = readme_searches();
    assert!(searches.len() >= 2, "{searches:?}");
    for (lang, line) in searches {
        match lang {
            "sh" => {
                let out = env.shell("sh").args(["-c", &line]).output().unwrap();
                let text = stdout(&out);
                assert!(out.status.success(), "{line}: {out:?}");
                // path:line: [heading] snippet, the topic first.
                let first = text.lines().next().unwrap_or_default();
                assert!(
                    first.starts_with("world/deploy-process.md:"),
                    "{line}: {text}"
                );
                assert!(
                    text.lines().all(|l| l
                        .split(':')
                        .nth(1)
                        .is_some_and(|n| n.parse::<usize>().is_ok())),
                    "{line}: {text}"
                );
            }
            _ if !have("nu") => {}
            _ => {
                let script = format!("{line} | to json --raw");
                let out = env.shell("nu").args(["-c", &script]).output().unwrap();
                assert!(out.status.success(), "{line}: {out:?}");
                let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
                assert!(
                    rows.first()
                        .is_some_and(|r| r["path"] == "world/deploy-process.md"),
                    "{line}: {rows:?}"
                );
            }
        }
    }
}

// --- hostile notes and queries: what people and models really type ----------

/// Agent `a` with notes on, in the default workspace.
fn notes_agent(env: &Env) {
    env.agent_file("a").model("anthropic/m").notes("").write();
}

/// An anthropic reply calling `search_notes` with `query`.
fn search_call(query: &str) -> serde_json::Value {
    serde_json::json!({
        "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": [{"type": "tool_use", "id": "s1", "name": "search_notes", "input": {"query": query}}]
    })
}

/// Runs agent `a` with `args`, the model calling `search_notes` with
/// `query` and then answering; gives back the tool's result (its text
/// and whether it is an error), the run's output and how long it took.
fn search_through_run(
    env: &Env,
    query: &str,
    args: &[&str],
) -> ((String, bool), std::process::Output, Duration) {
    let server = Server::start(vec![
        Answer::json(200, &search_call(query)),
        Answer::json(200, &reply_for("anthropic", "done")),
    ]);
    let started = Instant::now();
    let out = served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .args(args)
        .write_stdin("go")
        .output()
        .unwrap();
    let took = started.elapsed();
    let requests = server.requests();
    let result = requests
        .get(1)
        .map(|r| crate::notes::tool_results(r).remove(0))
        .unwrap_or_default();
    (result, out, took)
}

const STRAY_QUOTE: &str = "when did we last deploy \"billing to prod?";

#[test]
fn a_stray_double_quote_is_an_ordinary_character() {
    let env = Env::new();
    judged_workspace(&env);
    env.write(
        &workspace(&env).join("agents/a/daily/2026-11-04.md"),
        "# 2026-11-04\n\n## 16:00\n\nDeployed billing to prod after the freeze.\n",
    );
    // Found by its words, as if the quote were a space.
    let json = search(&env, &[STRAY_QUOTE]);
    assert_eq!(json.query, STRAY_QUOTE);
    assert_eq!(
        files(&json).first(),
        Some(&"agents/a/daily/2026-11-04.md"),
        "{json:?}"
    );
    // And by the model, through its tool.
    notes_agent(&env);
    let ((text, is_error), out, _) = search_through_run(&env, STRAY_QUOTE, &[]);
    assert!(out.status.success(), "{out:?}");
    assert!(!is_error, "{text}");
    assert!(
        text.starts_with("agents/a/daily/2026-11-04.md:5: [16:00] Deployed billing to prod"),
        "{text}"
    );
}

/// A note holding one word of a million and a half characters, and one
/// about deploying billing; the long word begins as `deploy`'s words do,
/// so a search for `deploy` must look at it.
fn long_word_workspace(env: &Env) {
    let ws = workspace(env);
    let mut long = String::from("Hash: deploy");
    long.push_str(&"y".repeat(1_500_000));
    long.push('\n');
    env.write(&ws.join("world/hashes.md"), long);
    env.write(
        &ws.join("agents/a/daily/2026-11-04.md"),
        "# 2026-11-04\n\n## 16:00\n\nDeployed billing to prod after the freeze.\n",
    );
}

/// Before the word-length bound, stemming such a word took minutes (81 s
/// for this search, debug build); so the bound here is generous.
const PROMPT: Duration = Duration::from_secs(10);

#[test]
fn a_word_of_a_million_characters_is_searched_at_once() {
    let env = Env::new();
    long_word_workspace(&env);
    let started = Instant::now();
    let json = search(&env, &["deploy", "--limit", "5"]);
    let took = started.elapsed();
    assert!(took < PROMPT, "the search took {took:?}");
    assert_eq!(
        files(&json),
        ["agents/a/daily/2026-11-04.md"],
        "the long word is no form of deploy: {json:?}"
    );
    // Through axe-run's tool, within the run's --timeout.
    notes_agent(&env);
    let ((text, is_error), out, took) = search_through_run(&env, "deploy", &["--timeout", "5"]);
    assert!(took < PROMPT, "axe-run --timeout 5 took {took:?}");
    assert!(out.status.success(), "{out:?}");
    assert!(
        !is_error && text.contains("Deployed billing to prod"),
        "{text}"
    );
}

#[test]
fn axe_mcp_answers_the_next_request_promptly_after_a_search_of_a_long_word() {
    let env = Env::new();
    long_word_workspace(&env);
    notes_agent(&env);
    let mut child = env
        .std_cmd("axe-mcp")
        .arg("a")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // The replies, read on a thread of their own so that a server that
    // stops answering fails the test instead of hanging it.
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let reply: serde_json::Value = serde_json::from_str(&line).unwrap();
            if tx.send(reply).is_err() {
                break;
            }
        }
    });
    let mut send = |message: serde_json::Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    assert_eq!(rx.recv_timeout(PROMPT).unwrap()["id"], 1);
    let started = Instant::now();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "search_notes", "arguments": {"query": "deploy"}}}),
    );
    send(serde_json::json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    let searched = rx.recv_timeout(PROMPT).expect("no answer to the search");
    assert_eq!(searched["id"], 2);
    let text = searched["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Deployed billing to prod"), "{text}");
    let pong = rx.recv_timeout(PROMPT).expect("no answer to the ping");
    assert_eq!(pong["id"], 3);
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    // The long word as the query (too long for a command line): it is
    // found as it is, and as promptly.
    let word = format!("deploy{}", "y".repeat(1_500_000));
    let started = Instant::now();
    send(
        serde_json::json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "search_notes", "arguments": {"query": word}}}),
    );
    let searched = rx.recv_timeout(PROMPT).expect("no answer to the search");
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    let text = searched["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("world/hashes.md:1: "),
        "{}",
        &text[..text.len().min(200)]
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}

/// A conversation kept turn by turn, as `axe-notes-remember` writes it:
/// one agent's daily logs, `days` of them, each a `(date, turns)`.
fn conversation(env: &Env, days: &[(&str, &[&str])]) {
    let ws = workspace(env);
    for (date, turns) in days {
        let mut text = format!("# {date}\n");
        for (i, turn) in turns.iter().enumerate() {
            text.push_str(&format!(
                "\n## {:02}:{:02}\n\n{turn}\n",
                10 + i / 60,
                i % 60
            ));
        }
        env.write(&ws.join(format!("agents/chat/daily/{date}.md")), &text);
    }
}

/// The first result's `path#heading`.
fn first_entry(env: &Env, query: &str) -> String {
    let json = search(env, &["--limit", "5", query]);
    let f = json.results.first().expect(query);
    format!("{}#{}", f.path, f.heading.as_deref().unwrap_or(""))
}

/// Small talk full of question words: "what", "did", "the" cost nothing
/// in a question, so it finds what its words of substance find.
#[test]
fn a_question_finds_the_entry_its_keywords_find() {
    let env = Env::new();
    let chatter: &[&str] = &[
        "Maya: Did you see the game on Sunday? What a finish, what a game.",
        "Tom: What did you do at the weekend? What did you think of it?",
        "Maya: Where did the time go, what is it with the weeks?",
        "Tom: When did you get back? Who did you see there?",
        "Maya: I bought a red car from the dealer by the station.",
        "Tom: Did you? Which one did you like the most, and why?",
    ];
    conversation(&env, &[("2026-03-02", chatter), ("2026-03-09", chatter)]);
    let keywords = first_entry(&env, "car Maya bought");
    assert!(keywords.ends_with("2026-03-02.md#10:04"), "{keywords}");
    for question in [
        "What car did Maya buy?",
        "which car is it that Maya bought, and when did she?",
        "Where did Maya buy the car?",
    ] {
        assert_eq!(first_entry(&env, question), keywords, "{question}");
    }
}

/// A month the question names is the month of the logs it asks about:
/// of two trips told the same way, the one of a May log comes first for
/// "in May", the other for "in June", and a day's date finds its day.
#[test]
fn a_month_in_the_question_prefers_that_months_logs() {
    let env = Env::new();
    let june: &[&str] = &[
        "Tom: Back from my trip to Lisbon, what a trip: the tram rides were the best part.",
        "Maya: Lisbon! Jealous.",
    ];
    let may: &[&str] = &[
        "Tom: Back home from the trip, Porto was lovely, we walked everywhere and ate far \
         too many pastries every single day.",
        "Maya: Welcome back.",
    ];
    conversation(&env, &[("2026-05-12", may), ("2026-06-20", june)]);
    // Without a date, the entry with the most of the words: June's.
    let plain = first_entry(&env, "Where did Tom go on his trip?");
    assert!(plain.ends_with("2026-06-20.md#10:00"), "{plain}");
    for (question, day) in [
        ("Where did Tom go on his trip in May?", "2026-05-12"),
        ("where did tom travel in may 2026", "2026-05-12"),
        ("Tom's trip on 2026-05-12: where to?", "2026-05-12"),
        ("Where did Tom go on his trip in June?", "2026-06-20"),
    ] {
        let first = first_entry(&env, question);
        assert!(
            first.ends_with(&format!("{day}.md#10:00")),
            "{question}: {first}"
        );
    }
}

/// `Maya:` at the start of an entry names who spoke, and counts as a
/// heading does: "what did Maya buy" is what Maya said she bought, not
/// what Tom said of Maya.
#[test]
fn the_speaker_of_an_entry_counts_as_its_heading() {
    let env = Env::new();
    let day: &[&str] = &[
        "Tom: Maya bought a car? Good for Maya, she needed one.",
        "Maya: Yes, I bought a red car last week.",
    ];
    conversation(&env, &[("2026-04-07", day)]);
    let first = first_entry(&env, "What car did Maya buy?");
    assert!(first.ends_with("2026-04-07.md#10:01"), "{first}");
}

/// A question asks with a verb's base and a note tells with its past:
/// "did Maya buy" finds "I bought", and "went" finds "go", though the
/// stemmer cuts only endings.
#[test]
fn a_verb_finds_its_irregular_past() {
    let env = Env::new();
    let day: &[&str] = &[
        "Maya: I bought a red bike on Sunday.",
        "Tom: We went camping by the lake.",
        "Maya: The bike is great.",
    ];
    conversation(&env, &[("2026-04-07", day)]);
    assert_eq!(
        first_entry(&env, "What did Maya buy?"),
        "agents/chat/daily/2026-04-07.md#10:00"
    );
    let json = search(&env, &["where do they go camping"]);
    assert_eq!(files(&json), ["agents/chat/daily/2026-04-07.md"]);
    assert_eq!(json.results[0].heading.as_deref(), Some("10:01"));
    let json = search(&env, &["--limit", "5", "buy"]);
    assert_eq!(json.results.len(), 1, "{json:?}");
}

/// A turn is a few lines, and one that tells more is longer: its length
/// weighs little, so the turn that is about the kayak (longer, naming it
/// twice) comes before one that names it in passing.
#[test]
fn a_longer_turn_about_the_words_is_not_lost_to_a_short_one() {
    let env = Env::new();
    let day: &[&str] = &[
        "Maya: Morning! Did you sleep well, or was the storm too loud?",
        "Tom: Slept fine, the rain stopped before midnight I think.",
        "Maya: There was a kayak by the river, I saw it at noon.",
        "Tom: Good to hear. Coffee later, at the usual place by the bridge?",
        "Maya: Sure, see you there at four, I will bring the book for you.",
        "Tom: I bought a kayak at last, after years of renting one each summer; \
         the kayak fits on the car roof and I had it on the lake twice already, \
         once at dawn before work.",
        "Maya: Great, that sounds like a lot of fun, well done you!",
        "Tom: Thanks! The weekend looks sunny, we should plan a picnic.",
    ];
    conversation(&env, &[("2026-07-04", day), ("2026-07-05", &day[..2])]);
    let first = first_entry(&env, "kayak");
    assert!(first.ends_with("2026-07-04.md#10:05"), "{first}");
}

/// Length weighs all the same: of two turns naming the word once, the
/// shorter (the one more about it) comes first, though it comes later in
/// the log, where a tie would put it second.
#[test]
fn of_two_turns_naming_a_word_once_the_shorter_comes_first() {
    let env = Env::new();
    let day: &[&str] = &[
        "Tom: The weekend was long and sunny, we walked along the river, \
         had lunch at the old mill, met the neighbours with their dogs, \
         and on the way back saw a kayak tied up below the bridge.",
        "Maya: Morning! Did you sleep well?",
        "Maya: I rented a kayak.",
    ];
    conversation(&env, &[("2026-07-04", day)]);
    let json = search(&env, &["--limit", "5", "kayak"]);
    let headings: Vec<_> = json
        .results
        .iter()
        .map(|f| f.heading.as_deref().unwrap_or(""))
        .collect();
    assert_eq!(headings, ["10:02", "10:00"], "{json:?}");
    assert!(json.results[0].score > json.results[1].score, "{json:?}");
}
