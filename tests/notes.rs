//! Notes memory: the `axe-notes-*` executables on a real workspace, the
//! notes tools driven through `axe-run` by the local provider in each wire
//! format, and the safety promises under races and kills.

use std::fs;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use predicates::prelude::*;
use serde_json::{Value, json};
use time::OffsetDateTime;

use crate::server::{Answer, Recorded, Server};
use crate::util::{Env, read, stdout};
use crate::wire::{reply_for, served_by, system_text};

const EMPTY_SHA: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// The default workspace of a test's world.
fn workspace(env: &Env) -> PathBuf {
    env.data_dir().join("axe/notes")
}

/// An agent with notes on, in the default workspace unless `extra` says.
fn notes_agent(env: &Env, name: &str, provider: &str, extra: &str) {
    env.agent_file(name)
        .model(&format!("{provider}/m"))
        .prompt(&format!("You are {name}."))
        .notes(extra)
        .write();
}

/// `YYYY-MM-DD` of `days` days ago (UTC).
fn day(days: i64) -> String {
    let d = OffsetDateTime::now_utc().date() - time::Duration::days(days);
    format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
}

fn daily(env: &Env, agent: &str, days_ago: i64) -> PathBuf {
    workspace(env).join(format!("agents/{agent}/daily/{}.md", day(days_ago)))
}

fn notes(env: &Env, bin: &str) -> assert_cmd::Command {
    env.cmd(&format!("axe-notes-{bin}"))
}

fn json_out(cmd: &mut assert_cmd::Command) -> Value {
    let out = cmd.assert().success().get_output().clone();
    serde_json::from_slice(&out.stdout).unwrap()
}

// --- the executables ----------------------------------------------------------

#[test]
fn remember_writes_agnx_daily_entries_from_words_or_stdin() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    notes(&env, "remember")
        .args(["a", "Deploys", "use", "blue-green."])
        .assert()
        .success()
        .stdout(format!("agents/a/daily/{}.md\n", day(0)));
    notes(&env, "remember")
        .arg("a")
        .write_stdin("Second thing.\n\n")
        .assert()
        .success();
    let text = read(&daily(&env, "a", 0));
    let re = format!(
        r"^# {}\n\n## \d\d:\d\d\n\nDeploys use blue-green\.\n\n## \d\d:\d\d\n\nSecond thing\.\n$",
        day(0)
    );
    assert!(
        predicate::str::is_match(re).unwrap().eval(&text),
        "{text:?}"
    );
    // Through the dispatcher too, and nothing to remember is an error.
    env.cmd("axe")
        .args(["notes", "remember", "a"])
        .write_stdin("  \n")
        .assert()
        .code(1)
        .stderr("nothing to remember: the text is empty\n");
}

/// What every notes write prints with `--json`.
#[derive(serde::Deserialize, Debug, PartialEq)]
#[serde(deny_unknown_fields)]
struct Written {
    agent: Option<String>,
    topic: Option<String>,
    path: String,
    sha256: Option<String>,
    chars: usize,
    redacted: Vec<serde_json::Value>,
}

#[test]
fn the_writes_report_alike() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    let ws = workspace(&env);
    let shown = |p: &str| ws.join(p).to_string_lossy().into_owned();
    let written = |bin: &str, args: &[&str], stdin: &str| -> Written {
        let out = json_out(notes(&env, bin).args(args).arg("--json").write_stdin(stdin));
        serde_json::from_value(out).unwrap()
    };
    let today = format!("agents/a/daily/{}.md", day(0));
    assert_eq!(
        written("remember", &["a"], "Ünïcode counts as characters.\n\n"),
        Written {
            agent: Some("a".into()),
            topic: None,
            path: shown(&today),
            sha256: None,
            chars: 29,
            redacted: Vec::new(),
        }
    );
    assert_eq!(
        written("reflect", &["a"], "Ünï"),
        Written {
            agent: Some("a".into()),
            topic: None,
            path: shown("agents/a/MEMORY.md"),
            sha256: Some("216999f2898ef2f6f5514c9966e633a6224e147925670b4a0461ac6036b37df4".into()),
            chars: 3,
            redacted: Vec::new(),
        }
    );
    assert_eq!(
        written("learn", &["Deploy Process"], "x"),
        Written {
            agent: None,
            topic: Some("deploy-process".into()),
            path: shown("world/deploy-process.md"),
            sha256: Some("2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881".into()),
            chars: 1,
            redacted: Vec::new(),
        }
    );
    // Without --json, each prints the path it wrote, relative to the
    // workspace.
    for (bin, args, path) in [
        ("remember", &["a", "again"][..], today.as_str()),
        ("reflect", &["a"][..], "agents/a/MEMORY.md"),
        (
            "learn",
            &["--agent", "a", "Deploy Process"][..],
            "world/deploy-process.md",
        ),
    ] {
        notes(&env, bin)
            .args(args)
            .write_stdin("y")
            .assert()
            .success()
            .stdout(format!("{path}\n"));
    }
}

#[test]
fn recall_shows_world_memory_and_the_days_window_apart_by_rules() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "recall_days = 2");
    let ws = workspace(&env);
    env.write(&ws.join("world/people.md"), "Ada leads ops.\n");
    env.write(&ws.join("world/deploys.md"), "Blue-green.\n");
    env.write(&ws.join("agents/a/MEMORY.md"), "I review Rust.\n");
    for (ago, text) in [(0, "today"), (1, "yesterday"), (2, "two days ago")] {
        env.write(
            &daily(&env, "a", ago),
            format!("# {}\n\n## 10:00\n\n{text}\n", day(ago)),
        );
    }
    let expected = format!(
        "# World Knowledge\n\n## deploys\n\nBlue-green.\n\n## people\n\nAda leads ops.\n\n---\n\n\
         # Your Memory\n\nI review Rust.\n\n---\n\n# Recent Experiences\n\n\
         # {}\n\n## 10:00\n\ntoday\n\n---\n\n# {}\n\n## 10:00\n\nyesterday\n",
        day(0),
        day(1)
    );
    notes(&env, "recall")
        .arg("a")
        .assert()
        .success()
        .stdout(expected);
    let three = notes(&env, "recall")
        .args(["a", "--days", "3"])
        .assert()
        .success();
    assert!(stdout(three.get_output()).contains("two days ago"));
    let none = notes(&env, "recall")
        .args(["a", "--days", "0"])
        .assert()
        .success();
    assert!(!stdout(none.get_output()).contains("Recent Experiences"));

    let doc = json_out(notes(&env, "recall").args(["a", "--json"]));
    let sections = doc["sections"].as_array().unwrap();
    let kinds: Vec<&str> = sections
        .iter()
        .map(|s| s["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["world", "world", "memory", "daily", "daily"]);
    assert_eq!(sections[2]["path"], "agents/a/MEMORY.md");
    assert_eq!(sections[2]["text"], "I review Rust.");
    assert_eq!(doc["memory_sha256"], sections[2]["sha256"]);
    assert_eq!(doc["left_out"], json!([]));

    // A fresh agent: nothing at all.
    notes_agent(&env, "b", "anthropic", "");
    notes(&env, "recall")
        .args(["b"])
        .assert()
        .success()
        .stdout("# World Knowledge\n\n## deploys\n\nBlue-green.\n\n## people\n\nAda leads ops.\n");
    let empty = Env::new();
    notes_agent(&empty, "c", "anthropic", "");
    notes(&empty, "recall")
        .arg("c")
        .assert()
        .success()
        .stdout("No memories found\n");
}

#[test]
fn recall_within_its_budget_leaves_out_the_oldest_days_first_and_says_so() {
    let env = Env::new();
    notes_agent(
        &env,
        "a",
        "anthropic",
        "recall_days = 3\nrecall_chars = 620",
    );
    let ws = workspace(&env);
    env.write(&ws.join("agents/a/MEMORY.md"), "Keep this.");
    for ago in 0..3 {
        env.write(&daily(&env, "a", ago), "x".repeat(200));
    }
    let doc = json_out(notes(&env, "recall").args(["a", "--json"]));
    assert!(doc["chars"].as_u64().unwrap() <= 620, "{doc}");
    let left: Vec<&str> = doc["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    let oldest = format!("agents/a/daily/{}.md", day(2));
    assert_eq!(left, [oldest.as_str()], "{doc}");
    let text = notes(&env, "recall").arg("a").assert().success();
    let text = stdout(text.get_output());
    assert!(
        text.ends_with(&format!(
            "\n\n(Left out to keep within 620 characters: {oldest} (200 bytes). Use search_notes or raise recall_chars to see them.)\n"
        )),
        "{text}"
    );
    assert!(text.contains("Keep this."));
}

/// A bulk import of world topics (a 35 KB vault, past the 24,000
/// characters of the default budget) never pushes the agent's own notes
/// out of its recall: MEMORY.md and the daily logs of today and yesterday
/// are taken first, then world topics smallest first, so the largest
/// topics are what is left out and a short one still shows.
#[test]
fn a_large_import_never_pushes_the_agents_own_recent_logs_out_of_recall() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "recall_days = 2");
    let vault = crate::import::vault(&env, 35);
    env.write(&vault.join("zz short.md"), "A short imported fact.\n");
    env.cmd("axe-import")
        .args(["markdown", vault.to_str().unwrap()])
        .assert()
        .success();
    let ws = workspace(&env);
    env.write(&ws.join("agents/a/MEMORY.md"), "I review Rust.\n");
    notes(&env, "remember")
        .args(["a", "Today's own note."])
        .assert()
        .success();
    env.write(
        &daily(&env, "a", 1),
        format!("# {}\n\n## 10:00\n\nYesterday's own note.\n", day(1)),
    );
    let doc = json_out(notes(&env, "recall").args(["a", "--json"]));
    assert!(doc["chars"].as_u64().unwrap() <= 24_000, "{doc}");
    let shown: Vec<&str> = doc["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["path"].as_str().unwrap())
        .collect();
    let (today, yesterday) = (
        format!("agents/a/daily/{}.md", day(0)),
        format!("agents/a/daily/{}.md", day(1)),
    );
    for own in [
        "agents/a/MEMORY.md",
        &today,
        &yesterday,
        "world/zz-short.md",
    ] {
        assert!(shown.contains(&own), "{own} not shown: {shown:?}");
    }
    let left: Vec<&str> = doc["left_out"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["path"].as_str().unwrap())
        .collect();
    assert!(!left.is_empty(), "the vault fits: no test");
    assert!(
        left.iter().all(|l| l.starts_with("world/topic-")),
        "{left:?}"
    );
    let text = stdout(
        notes(&env, "recall")
            .arg("a")
            .assert()
            .success()
            .get_output(),
    );
    assert!(text.contains("Today's own note."), "{text}");
    assert!(text.contains("Yesterday's own note."), "{text}");
    // Shown topics are still in name order.
    let short = text.find("## zz-short").unwrap();
    let first = text.find("## topic-00").unwrap();
    assert!(first < short, "{text}");
}

/// A MEMORY.md the budget left out gets no hash in `--json`: a script
/// passing `memory_sha256` to `reflect --if-match` would otherwise rewrite
/// text it never showed.
#[test]
fn recall_gives_no_memory_hash_for_a_memory_it_left_out() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "recall_chars = 20");
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    env.write(
        &memory,
        "A line the budget cannot hold, whatever it says.\n",
    );
    let doc = json_out(notes(&env, "recall").args(["a", "--json"]));
    assert_eq!(doc["left_out"][0]["path"], "agents/a/MEMORY.md", "{doc}");
    assert_eq!(doc["memory_sha256"], Value::Null, "{doc}");

    // Shown whole, it has one.
    notes_agent(&env, "a", "anthropic", "recall_chars = 2000");
    let doc = json_out(notes(&env, "recall").args(["a", "--json"]));
    assert_eq!(doc["memory_sha256"], doc["sections"][0]["sha256"], "{doc}");
    assert!(doc["memory_sha256"].is_string(), "{doc}");
}

#[test]
fn reflect_replaces_memory_and_if_match_refuses_a_lost_update() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "max_memory_chars = 20");
    let path = workspace(&env).join("agents/a/MEMORY.md");
    notes(&env, "reflect")
        .args(["a", "--if-match", EMPTY_SHA])
        .write_stdin("first")
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md\n");
    let first = json_out(notes(&env, "path").args(["a", "--json"]))["memory"]["sha256"]
        .as_str()
        .unwrap()
        .to_owned();
    // Someone else rewrites it; the stale hash is refused, nothing written.
    notes(&env, "reflect")
        .arg("a")
        .write_stdin("second")
        .assert()
        .success();
    let err = notes(&env, "reflect")
        .args(["a", "--if-match", &first])
        .write_stdin("stale")
        .assert()
        .code(6)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&err.stderr);
    assert!(
        err.starts_with("agents/a/MEMORY.md changed since it was read"),
        "{err}"
    );
    assert_eq!(read(&path), "second");
    // What --help and the man pages say a stale --if-match exits with is
    // the code it exits with, not 4 (the budget's).
    for tool in ["reflect", "learn"] {
        let help = notes(&env, tool).arg("--help").assert().success();
        let help = String::from_utf8_lossy(&help.get_output().stdout).replace('\n', " ");
        let man = fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join(format!("man/axe-notes-{tool}.1")),
        )
        .unwrap()
        .replace('\n', " ")
        .replace("\\-", "-");
        for (what, text) in [("--help", &help), ("man page", &man)] {
            assert!(
                text.contains("if-match")
                    && text.contains("(exit 6)")
                    && !text.contains("exit 4")
                    && !text.contains("exit code is 4"),
                "{tool} {what}: {text}"
            );
        }
    }
    // Too long: refused, naming the limit and the size.
    notes(&env, "reflect")
        .arg("a")
        .write_stdin("x".repeat(21))
        .assert()
        .code(1)
        .stderr("agents/a/MEMORY.md would be 21 characters, over max_memory_chars (20): keep what matters and write it again\n");
    assert_eq!(read(&path), "second");
    // Bytes that are not UTF-8 survive.
    notes(&env, "reflect")
        .arg("a")
        .write_stdin(&b"\xff\xfe ok"[..])
        .assert()
        .success();
    assert_eq!(fs::read(&path).unwrap(), b"\xff\xfe ok");
    let json = json_out(
        notes(&env, "reflect")
            .args(["a", "--json"])
            .write_stdin("j"),
    );
    assert_eq!(
        json["sha256"],
        "189f40034be7a199f1fa9891668ee3ab6049f82d38c68be70f596eab2e1857b7"
    );
}

#[test]
fn learn_sanitises_topics_and_never_leaves_the_workspace() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    for (topic, file) in [
        ("Deploy Process!", "world/deploy-process.md"),
        ("../etc", "world/etc.md"),
        ("a/../../b", "world/a-b.md"),
        // Letters and digits only, after lowercasing: İ's dot goes, and a
        // diacritic typed apart from its letter does not split the word.
        ("İstanbul", "world/istanbul.md"),
        ("Zu\u{308}rich", "world/zurich.md"),
        ("Zürich", "world/zürich.md"),
    ] {
        notes(&env, "learn")
            .args(["--agent", "a", topic])
            .write_stdin("fact")
            .assert()
            .success()
            .stdout(format!("{file}\n"));
        assert_eq!(read(&workspace(&env).join(file)), "fact");
    }
    notes(&env, "learn")
        .arg("..")
        .write_stdin("x")
        .assert()
        .code(1)
        .stderr("topic \"..\" has no letters or digits to name a file\n");
    // A workspace named outright, and a symlink pointing out of it.
    let other = env.root().join("elsewhere");
    let outside = env.root().join("outside");
    fs::create_dir_all(other.join("world")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, other.join("world/secrets.md")).unwrap();
    std::os::unix::fs::symlink(outside.join("x.md"), other.join("world/linked.md")).unwrap();
    notes(&env, "learn")
        .args(["--workspace", other.to_str().unwrap(), "linked"])
        .write_stdin("x")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "leads outside the notes workspace",
        ));
    assert!(!outside.join("x.md").exists());
    let json = json_out(
        notes(&env, "learn")
            .args(["--workspace", other.to_str().unwrap(), "Ops", "--json"])
            .write_stdin("y"),
    );
    assert_eq!(json["topic"], "ops");
    assert_eq!(read(&other.join("world/ops.md")), "y");
}

#[test]
fn agents_sharing_a_workspace_share_the_world_and_nothing_else() {
    let env = Env::new();
    let shared = env.root().join("team-notes");
    for name in ["alice", "bob"] {
        notes_agent(
            &env,
            name,
            "anthropic",
            &format!("workspace = \"{}\"", shared.display()),
        );
    }
    notes(&env, "learn")
        .args(["--agent", "alice", "stack"])
        .write_stdin("Rust")
        .assert()
        .success();
    notes(&env, "reflect")
        .arg("alice")
        .write_stdin("alice's own")
        .assert()
        .success();
    notes(&env, "remember")
        .args(["alice", "alice did a thing"])
        .assert()
        .success();
    let bob = notes(&env, "recall").arg("bob").assert().success();
    let bob = stdout(bob.get_output());
    assert!(bob.contains("## stack\n\nRust"), "{bob}");
    assert!(!bob.contains("alice"), "{bob}");
    notes(&env, "path")
        .arg("bob")
        .assert()
        .success()
        .stdout(format!("{}\n", shared.display()));
    // A relative workspace is taken from the agents directory.
    notes_agent(&env, "rel", "anthropic", "workspace = \"../team\"");
    notes(&env, "path")
        .arg("rel")
        .assert()
        .success()
        .stdout(format!(
            "{}\n",
            env.config_dir().join("axe/agents/../team").display()
        ));
}

#[test]
fn search_ranks_sections_and_exits_1_quietly_on_no_match() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    notes_agent(&env, "b", "anthropic", "");
    let ws = workspace(&env);
    env.write(
        &ws.join("world/deploys.md"),
        "# Deploys\n\nWe deploy with blue-green deploys.\nDeploy daily.\n",
    );
    env.write(
        &daily(&env, "a", 3),
        format!(
            "# {}\n\n## 10:00\n\nThe blue button moved.\n\n## 11:00\n\nLunch.\n",
            day(3)
        ),
    );
    env.write(&ws.join("agents/b/MEMORY.md"), "Bob deploys on Fridays.\n");
    let all = notes(&env, "search")
        .args(["deploy", "blue"])
        .assert()
        .success();
    let lines: Vec<String> = stdout(all.get_output())
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(
        lines[0], "world/deploys.md:3: [Deploys] We deploy with blue-green deploys.",
        "{lines:?}"
    );
    assert!(lines.contains(&format!(
        "agents/a/daily/{}.md:5: [10:00] The blue button moved.",
        day(3)
    )));
    assert!(lines.iter().all(|l| !l.contains("Lunch")));
    // --agent: the world and that agent's own files only.
    let mine = notes(&env, "search")
        .args(["--agent", "a", "fridays"])
        .assert()
        .code(1);
    assert_eq!(mine.get_output().stderr, b"");
    notes(&env, "search")
        .args(["--agent", "b", "fridays"])
        .assert()
        .success()
        .stdout("agents/b/MEMORY.md:1: Bob deploys on Fridays.\n");
    let doc = json_out(notes(&env, "search").args(["blue", "--json", "--limit", "1"]));
    assert_eq!(doc["results"].as_array().unwrap().len(), 1);
    assert!(doc["results"][0]["score"].as_f64().unwrap() > 0.0);
    // The fields as before, then the index's state.
    let none = notes(&env, "search")
        .args(["zebra", "--json"])
        .assert()
        .code(1)
        .stderr("");
    let out = String::from_utf8_lossy(&none.get_output().stdout).into_owned();
    assert!(
        out.starts_with("{\"query\":\"zebra\",\"results\":[],\"index\":{\"used\":true,"),
        "{out}"
    );
}

#[test]
fn prune_removes_old_daily_logs_but_never_today() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    for ago in [0, 1, 30, 400] {
        env.write(&daily(&env, "a", ago), "x");
    }
    env.write(
        &workspace(&env).join("agents/a/daily/notes.md"),
        "not a log",
    );
    let dry =
        json_out(notes(&env, "prune").args(["a", "--older-than", "7d", "--dry-run", "--json"]));
    assert_eq!(dry["removed"].as_array().unwrap().len(), 2);
    assert!(daily(&env, "a", 400).exists());
    let out = notes(&env, "prune")
        .args(["a", "--older-than", "1w"])
        .assert()
        .success();
    assert_eq!(stdout(out.get_output()).lines().count(), 2);
    for (ago, stays) in [(0, true), (1, true), (30, false), (400, false)] {
        assert_eq!(daily(&env, "a", ago).exists(), stays, "{ago} days ago");
    }
    notes(&env, "prune")
        .args(["a", "--older-than", "1"])
        .assert()
        .success();
    assert!(daily(&env, "a", 0).exists(), "today's log stays");
    assert!(workspace(&env).join("agents/a/daily/notes.md").exists());
    // A dry run that finds nothing says so, on stderr: stdout is the list.
    notes(&env, "prune")
        .args(["a", "--older-than", "7d", "--dry-run"])
        .assert()
        .success()
        .stdout("")
        .stderr(format!(
            "nothing to remove: no daily log of \"a\" is dated before {} (2 kept)\n",
            day(7)
        ));
    // 0 is every log before today's.
    let yesterday = format!("{}\n", daily(&env, "a", 1).display());
    notes(&env, "prune")
        .args(["a", "--older-than", "0", "--dry-run"])
        .assert()
        .success()
        .stdout(yesterday.clone())
        .stderr("");
    notes(&env, "prune")
        .args(["a", "--older-than", "0d"])
        .assert()
        .success()
        .stdout(yesterday);
    assert!(!daily(&env, "a", 1).exists());
    assert!(daily(&env, "a", 0).exists(), "today's log stays");
    notes(&env, "prune")
        .args(["a", "--older-than", "1y"])
        .assert()
        .code(1)
        .stderr("error parsing flag --older-than: \"1y\" is not an age such as 90d or 12w\n");
}

#[test]
fn a_fifo_in_the_workspace_is_refused_or_skipped_without_waiting() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    let ws = workspace(&env);
    fs::create_dir_all(ws.join("world")).unwrap();
    fs::create_dir_all(ws.join("agents/a")).unwrap();
    for fifo in [ws.join("world/pipe.md"), ws.join("agents/a/MEMORY.md")] {
        assert!(
            std::process::Command::new("mkfifo")
                .arg(&fifo)
                .status()
                .unwrap()
                .success()
        );
    }
    notes(&env, "recall")
        .arg("a")
        .timeout(Duration::from_secs(10))
        .assert()
        .success()
        .stdout("No memories found\n");
    notes(&env, "reflect")
        .arg("a")
        .write_stdin("x")
        .timeout(Duration::from_secs(10))
        .assert()
        .code(1)
        .stderr(predicate::str::ends_with("not a regular file\n"));
}

// --- the tools, through axe-run -------------------------------------------------

/// A reply calling `name` with `args`, in `provider`'s wire format.
fn tool_call(provider: &str, id: &str, name: &str, args: Value) -> Value {
    match provider {
        "anthropic" => json!({
            "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
            "content": [{"type": "tool_use", "id": id, "name": name, "input": args}]
        }),
        "openai" => json!({
            "model": "m", "usage": {"prompt_tokens": 1, "completion_tokens": 1},
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
                "tool_calls": [{"id": id, "type": "function", "function": {"name": name, "arguments": args.to_string()}}]}}]
        }),
        _ => json!({
            "model": "m", "done": true, "done_reason": "stop", "prompt_eval_count": 1, "eval_count": 1,
            "message": {"role": "assistant", "content": "", "tool_calls": [{"function": {"name": name, "arguments": args}}]}
        }),
    }
}

/// The text of the last tool result a request carried back, in any format.
fn last_tool_result(r: &Recorded) -> String {
    let messages = r.json()["messages"].as_array().unwrap().clone();
    let last = messages.last().unwrap();
    match &last["content"] {
        Value::Array(blocks) => blocks[0]["content"].as_str().unwrap_or_default().to_owned(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    }
}

/// A server that plays `script`: the n-th request gets the n-th reply
/// (a tool call or text); `before(n)` runs first.
fn scripted(
    provider: &'static str,
    script: Vec<Value>,
    before: impl Fn(usize) + Send + Sync + 'static,
) -> Server {
    let turn = Arc::new(AtomicUsize::new(0));
    Server::route(move |_| {
        let n = turn.fetch_add(1, Ordering::SeqCst);
        before(n);
        let reply = script
            .get(n)
            .cloned()
            .unwrap_or_else(|| reply_for(provider, "done"));
        Answer::json(200, &reply)
    })
}

#[test]
fn the_model_remembers_learns_and_recalls_in_every_wire_format() {
    for provider in ["anthropic", "openai", "ollama"] {
        let env = Env::new();
        notes_agent(&env, "a", provider, "");
        let server = scripted(
            provider,
            vec![
                tool_call(
                    provider,
                    "c1",
                    "remember",
                    json!({"content": "The build needs nightly."}),
                ),
                tool_call(
                    provider,
                    "c2",
                    "learn_fact",
                    json!({"topic": "../etc", "content": "Passwords live in the vault."}),
                ),
                tool_call(provider, "c3", "recall", json!({})),
                tool_call(provider, "c4", "search_notes", json!({"query": "nightly"})),
                reply_for(provider, "noted"),
            ],
            |_| {},
        );
        served_by(env.cmd("axe-run"), &server.url)
            .args(["a", "work"])
            .assert()
            .success()
            .stdout("noted");
        let requests = server.requests();
        assert_eq!(requests.len(), 5, "{provider}");
        let offered: Vec<String> = requests[0].json()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                t["name"]
                    .as_str()
                    .or(t["function"]["name"].as_str())
                    .unwrap()
                    .to_owned()
            })
            .collect();
        assert_eq!(
            offered,
            [
                "recall",
                "remember",
                "reflect",
                "learn_fact",
                "search_notes"
            ]
        );
        let system = requests[0].json().to_string();
        assert!(
            system.contains("Call `recall` before you start"),
            "{provider}: directive"
        );
        assert!(read(&daily(&env, "a", 0)).contains("The build needs nightly."));
        assert_eq!(
            read(&workspace(&env).join("world/etc.md")),
            "Passwords live in the vault."
        );
        assert!(!env.root().join("etc").exists());
        assert_eq!(
            last_tool_result(&requests[1]),
            format!("Remembered in agents/a/daily/{}.md.", day(0))
        );
        assert_eq!(
            last_tool_result(&requests[2]),
            "Learned world/etc.md (28 characters)."
        );
        let recalled = last_tool_result(&requests[3]);
        assert!(
            recalled.contains("## etc\n\nPasswords live in the vault."),
            "{recalled}"
        );
        assert!(recalled.contains("The build needs nightly."), "{recalled}");
        let found = last_tool_result(&requests[4]);
        let line = format!(
            r"^agents/a/daily/{}\.md:5: \[\d\d:\d\d\] The build needs nightly\.$",
            day(0)
        );
        assert!(
            predicate::str::is_match(line).unwrap().eval(&found),
            "{provider}: {found}"
        );
    }
}

#[test]
fn a_reflect_that_loses_a_race_gets_the_conflict_and_recalls_again() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    env.write(&memory, "old");
    let path = memory.clone();
    let server = scripted(
        "anthropic",
        vec![
            tool_call("anthropic", "c1", "recall", json!({})),
            tool_call("anthropic", "c2", "reflect", json!({"content": "mine"})),
            tool_call("anthropic", "c3", "recall", json!({})),
            tool_call("anthropic", "c4", "reflect", json!({"content": "merged"})),
            reply_for("anthropic", "done"),
        ],
        // Another run rewrites MEMORY.md after this one's recall.
        move |n| {
            if n == 1 {
                fs::write(&path, "theirs").unwrap();
            }
        },
    );
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "-v"])
        .write_stdin("go")
        .assert()
        .success()
        .get_output()
        .clone();
    let requests = server.requests();
    let refused = last_tool_result(&requests[2]);
    assert!(
        refused.starts_with("reflect error: MEMORY.md has changed since you last read it"),
        "{refused}"
    );
    assert!(last_tool_result(&requests[3]).contains("# Your Memory\n\ntheirs"));
    assert_eq!(
        last_tool_result(&requests[4]),
        "MEMORY.md rewritten (6 characters)."
    );
    assert_eq!(read(&memory), "merged");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("[notes] a: reflect refused"), "{err}");
    assert!(
        err.contains("[notes] a: reflect -> MEMORY.md, 6 characters"),
        "{err}"
    );

    // Without a recall, a MEMORY.md with content is not overwritten.
    let server = scripted(
        "anthropic",
        vec![tool_call(
            "anthropic",
            "c1",
            "reflect",
            json!({"content": "blind"}),
        )],
        |_| {},
    );
    served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .write_stdin("go")
        .assert()
        .success();
    assert!(last_tool_result(&server.requests()[1]).starts_with("reflect error:"));
    assert_eq!(read(&memory), "merged");
}

#[test]
fn dry_run_lists_the_notes_tools_and_workspace() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success();
    let text = stdout(out.get_output());
    assert!(
        text.contains(&format!(
            "--- Notes ---\nWorkspace: {}\nTools:     recall, remember, reflect, learn_fact, search_notes\n",
            workspace(&env).display()
        )),
        "{text}"
    );
    assert!(text.contains("## Notes\n\nYou have notes that last between runs"));
    let doc = json_out(env.cmd("axe-run").args(["a", "--dry-run", "--json"]));
    assert_eq!(doc["notes"]["tools"].as_array().unwrap().len(), 5);
    env.agent("plain", "name = \"plain\"\nmodel = \"anthropic/m\"\n");
    let doc = json_out(env.cmd("axe-run").args(["plain", "--dry-run", "--json"]));
    assert_eq!(doc["notes"], Value::Null);
    // Beside call_agent and built-in tools, the notes list only their own.
    env.agent(
        "b",
        "name = \"b\"\nmodel = \"anthropic/m\"\nworkdir = \".\"\ntools = [\"read_file\"]\nsub_agents = [\"plain\"]\n[notes]\nenabled = true\n",
    );
    let doc = json_out(env.cmd("axe-run").args(["b", "--dry-run", "--json"]));
    assert_eq!(
        doc["notes"]["tools"].as_array().unwrap()[..],
        doc["tools"].as_array().unwrap()[1..6]
    );
    assert_eq!(doc["tools"][0], "call_agent");
    let out = env
        .cmd("axe-run")
        .args(["b", "--dry-run"])
        .assert()
        .success();
    assert!(stdout(out.get_output()).contains(
        "Tools:     recall, remember, reflect, learn_fact, search_notes\n\n--- Tools ---\ncall_agent, recall"
    ));
}

// --- races and kills ------------------------------------------------------------

#[test]
fn eight_writers_lose_no_entry_and_every_losing_rewrite_is_reported() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "max_memory_chars = 100000");
    const WRITERS: usize = 8;
    const ROUNDS: usize = 25;
    let started = Instant::now();
    let gate = env.root().join("gate");
    fs::create_dir(&gate).unwrap();
    let procs: Vec<std::process::Child> = (0..WRITERS)
        .map(|w| {
            // Each try prints the hash it passed and whether it won. In
            // the first round every writer waits, hash in hand, until all
            // have one: they all rewrite over the same text at once.
            let script = format!(
                r#"for i in $(seq 1 {ROUNDS}); do
  axe-notes-remember a "writer {w} entry $i" >/dev/null || exit 9
  sha=$(axe-notes-path a --json | sed 's/.*"sha256":"\([0-9a-f]*\)".*/\1/')
  if [ "$i" = 1 ]; then
    : > "$GATE/ready.{w}"
    until [ -e "$GATE/go" ]; do sleep 0.01; done
  fi
  if printf 'writer {w} round %s\n' "$i" | axe-notes-reflect a --if-match "$sha" >/dev/null 2>&1; then
    echo "won $sha"
  else
    [ $? -eq 6 ] || exit 8
    echo "lost $sha"
  fi
done"#
            );
            let bins = assert_cmd::cargo::cargo_bin("axe");
            let path = format!(
                "{}:{}",
                bins.parent().unwrap().display(),
                std::env::var("PATH").unwrap()
            );
            std::process::Command::new("bash")
                .args(["-c", &script])
                .env("PATH", path)
                .env("HOME", env.root().join("home"))
                .env("XDG_CONFIG_HOME", env.config_dir())
                .env("XDG_DATA_HOME", env.data_dir())
                .env("GATE", &gate)
                .stdout(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    let ready = || (0..WRITERS).all(|w| gate.join(format!("ready.{w}")).exists());
    while !ready() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(10));
    }
    // Let go in any case, so no writer is left waiting.
    fs::write(gate.join("go"), "").unwrap();
    assert!(ready(), "the writers never all read the first hash");
    // Each hash: how many rewrites passed it, how many went through.
    let mut tries = std::collections::HashMap::<String, (usize, usize)>::new();
    let mut won = 0;
    for p in procs {
        let out = p.wait_with_output().unwrap();
        assert!(out.status.success(), "writer failed: {:?}", out.status);
        let text = String::from_utf8(out.stdout).unwrap();
        assert_eq!(text.lines().count(), ROUNDS, "{text}");
        for line in text.lines() {
            let (outcome, sha) = line.split_once(' ').unwrap();
            let seen = tries.entry(sha.to_owned()).or_default();
            seen.0 += 1;
            if outcome == "won" {
                seen.1 += 1;
                won += 1;
            }
        }
    }
    assert!(started.elapsed() < Duration::from_secs(120));
    // A hash lets one rewrite through at most: a second over the same
    // text would write over the first unseen. The empty MEMORY.md's hash
    // was held by all eight at once (the race took place): one won.
    for (sha, (tried, went)) in &tries {
        assert!(
            *went <= 1,
            "{went} of {tried} rewrites over {sha} went through"
        );
    }
    let empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    assert_eq!(tries.get(empty), Some(&(WRITERS, 1)), "{tries:?}");
    // Every entry, whole, exactly once.
    let log = read(&daily(&env, "a", 0));
    for w in 0..WRITERS {
        for i in 1..=ROUNDS {
            let entry = format!("\n\nwriter {w} entry {i}\n");
            assert_eq!(log.matches(&entry).count(), 1, "{entry:?}");
        }
    }
    assert_eq!(log.matches("\n## ").count(), WRITERS * ROUNDS);
    // MEMORY.md is one writer's whole text, and somebody won.
    assert!(won >= 1);
    let memory = read(&workspace(&env).join("agents/a/MEMORY.md"));
    assert!(
        predicate::str::is_match(r"^writer \d round \d+\n$")
            .unwrap()
            .eval(&memory),
        "{memory:?}"
    );
}

#[test]
fn kill_9_during_a_reflect_leaves_old_or_new() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "max_memory_chars = 100000000");
    let path = workspace(&env).join("agents/a/MEMORY.md");
    let temp = path.with_file_name(".MEMORY.md.axe-new");
    let old = "o".repeat(1 << 20);
    let new = "n".repeat(48 << 20);
    env.write(&path, &old);
    // Three reflects killed mid-write: each run is killed as soon as its
    // temp file is seen, and counts only if the kill landed before the
    // rename (the temp file left behind). One that finished first must
    // have left the new text whole; it is undone and run again. Writing
    // 48 MB takes far longer than the polling, yet at most 20 runs.
    let mut caught = 0;
    for _ in 0..20 {
        let mut child = env
            .std_cmd("axe-notes-reflect")
            .arg("a")
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let writer = {
            let new = new.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                let _ = stdin.write_all(new.as_bytes());
            })
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while !temp.exists() && child.try_wait().unwrap().is_none() {
            assert!(
                Instant::now() < deadline,
                "the reflect neither wrote nor finished"
            );
            std::thread::sleep(Duration::from_micros(200));
        }
        let _ = child.kill();
        child.wait().unwrap();
        let _ = writer.join();
        let now = fs::read(&path).unwrap();
        if temp.exists() {
            // Killed mid-write: the old text, the new one's remains beside it.
            assert!(now == old.as_bytes(), "torn: {} bytes", now.len());
            caught += 1;
        } else {
            // Finished before the kill: the new text, whole.
            assert!(now == new.as_bytes(), "torn: {} bytes", now.len());
        }
        // The next rewrite sweeps a leftover and works.
        notes(&env, "reflect")
            .arg("a")
            .write_stdin(old.clone())
            .assert()
            .success();
        assert!(!temp.exists());
        assert_eq!(fs::read(&path).unwrap(), old.as_bytes());
        if caught == 3 {
            return;
        }
    }
    panic!("caught {caught} of 3 reflects mid-write in 20 runs");
}

#[test]
fn agents_show_and_the_template_include_notes() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "recall_days = 5");
    env.cmd("axe-agents")
        .args(["show", "a"])
        .assert()
        .success()
        .stdout(predicate::str::ends_with(format!(
            "Notes Enabled:  true\nNotes Workspace:{}\nNotes Days:     5\n",
            workspace(&env).display()
        )));
    let doc = json_out(env.cmd("axe-agents").args(["show", "a", "--json"]));
    assert_eq!(doc["notes"]["recall_days"], 5);
    env.cmd("axe-agents").args(["init", "t"]).assert().success();
    let template = read(&env.config_dir().join("axe/agents/t.toml"));
    assert!(
        template.contains("# [notes]\n# enabled = false\n"),
        "{template}"
    );
}

#[test]
fn a_sub_agent_with_notes_gets_its_own_tools() {
    let env = Env::new();
    env.agent(
        "boss",
        "name = \"boss\"\nmodel = \"anthropic/m\"\nsystem_prompt = \"You are boss.\"\nsub_agents = [\"helper\"]\n",
    );
    notes_agent(&env, "helper", "anthropic", "");
    let server = Server::route(|r| {
        let body = r.json();
        let system = system_text(&body);
        let turns = body["messages"].as_array().unwrap().len();
        let reply = match (system.starts_with("You are boss."), turns) {
            (true, 1) => {
                crate::run::tool_use(&[("c1", json!({"agent": "helper", "task": "note it"}))])
            }
            (true, _) => reply_for("anthropic", "done"),
            (false, 1) => tool_call(
                "anthropic",
                "h1",
                "remember",
                json!({"content": "helper was here"}),
            ),
            (false, _) => reply_for("anthropic", "helped"),
        };
        Answer::json(200, &reply)
    });
    served_by(env.cmd("axe-run"), &server.url)
        .arg("boss")
        .write_stdin("go")
        .assert()
        .success()
        .stdout("done");
    let tools_of = |who: &str| -> Vec<String> {
        let r = server
            .requests()
            .into_iter()
            .find(|r| system_text(&r.json()).starts_with(who))
            .unwrap();
        r.json()["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .map(|t| t["name"].as_str().unwrap().to_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    assert_eq!(tools_of("You are boss."), ["call_agent"]);
    assert_eq!(
        tools_of("You are helper."),
        [
            "recall",
            "remember",
            "reflect",
            "learn_fact",
            "search_notes"
        ]
    );
    assert!(read(&daily(&env, "helper", 0)).contains("helper was here"));
}

// --- hardening: what the model did not see, malformed calls, budgets --------

/// One reply calling several tools at once (anthropic's format).
fn tool_calls(calls: &[(&str, &str, Value)]) -> Value {
    let content: Vec<Value> = calls
        .iter()
        .map(
            |(id, name, input)| json!({"type": "tool_use", "id": id, "name": name, "input": input}),
        )
        .collect();
    json!({
        "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 1, "output_tokens": 1},
        "content": content
    })
}

/// Every tool result the last message of a request carried back (anthropic's
/// format), as text and whether it is an error.
pub fn tool_results(r: &Recorded) -> Vec<(String, bool)> {
    let messages = r.json()["messages"].as_array().unwrap().clone();
    messages.last().unwrap()["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["content"].as_str().unwrap_or_default().to_owned(),
                b["is_error"].as_bool().unwrap_or(false),
            )
        })
        .collect()
}

/// Runs agent `a` against a server playing `script`, one request a turn,
/// and hands back the requests.
fn play(env: &Env, script: Vec<Value>) -> Vec<Recorded> {
    let server = scripted("anthropic", script, |_| {});
    served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .write_stdin("go")
        .assert()
        .success();
    server.requests()
}

#[test]
fn reflect_and_learn_fact_never_overwrite_a_file_recall_left_out() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "recall_chars = 100");
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    let kept = format!("{}Really\n", "I keep this. ".repeat(34));
    assert_eq!(kept.len(), 449);
    env.write(&memory, &kept);
    let requests = play(
        &env,
        vec![
            tool_call("anthropic", "c1", "recall", json!({})),
            tool_call("anthropic", "c2", "reflect", json!({"content": "blind"})),
        ],
    );
    let recalled = last_tool_result(&requests[1]);
    assert!(
        recalled.contains("agents/a/MEMORY.md (449 bytes)"),
        "{recalled}"
    );
    let (refused, is_error) = tool_results(&requests[2]).remove(0);
    assert!(is_error, "{refused}");
    assert!(
        refused.starts_with("reflect error: MEMORY.md was not shown to you whole"),
        "{refused}"
    );
    assert_eq!(read(&memory), kept, "MEMORY.md is untouched");

    // A topic recall left out is not overwritten by learn_fact either; one
    // it showed is, and a topic that does not exist yet may be created.
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "recall_chars = 300");
    let world = workspace(&env).join("world");
    env.write(&world.join("alpha.md"), "Alpha is small.");
    let big = "b".repeat(400);
    env.write(&world.join("beta.md"), &big);
    let requests = play(
        &env,
        vec![
            tool_call("anthropic", "c1", "recall", json!({})),
            tool_call(
                "anthropic",
                "c2",
                "learn_fact",
                json!({"topic": "beta", "content": "blind"}),
            ),
            tool_call(
                "anthropic",
                "c3",
                "learn_fact",
                json!({"topic": "alpha", "content": "Alpha grew."}),
            ),
            tool_call(
                "anthropic",
                "c4",
                "learn_fact",
                json!({"topic": "gamma", "content": "New."}),
            ),
        ],
    );
    let recalled = last_tool_result(&requests[1]);
    assert!(recalled.contains("## alpha"), "{recalled}");
    assert!(recalled.contains("world/beta.md (400 bytes)"), "{recalled}");
    let (refused, is_error) = tool_results(&requests[2]).remove(0);
    assert!(is_error, "{refused}");
    assert!(
        refused.starts_with("learn_fact error: world/beta.md was not shown to you whole"),
        "{refused}"
    );
    assert_eq!(read(&world.join("beta.md")), big);
    assert_eq!(
        tool_results(&requests[3]),
        [("Learned world/alpha.md (11 characters).".to_owned(), false)]
    );
    assert_eq!(
        tool_results(&requests[4]),
        [("Learned world/gamma.md (4 characters).".to_owned(), false)]
    );
    assert_eq!(read(&world.join("gamma.md")), "New.");
}

#[test]
fn malformed_tool_calls_are_refused_by_their_schema_and_erase_nothing() {
    let env = Env::new();
    // `a` with a sub-agent, so that call_agent is offered too.
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\nsub_agents = [\"helper\"]\n[notes]\nenabled = true\n",
    );
    env.agent("helper", "name = \"helper\"\nmodel = \"anthropic/m\"\n");
    let ws = workspace(&env);
    env.write(&ws.join("agents/a/MEMORY.md"), "keep");
    env.write(&ws.join("world/ops.md"), "blue-green");
    let bad: Vec<(&str, Value, &str)> = vec![
        ("reflect", json!({}), "\"content\" argument is required"),
        (
            "reflect",
            json!({"content": null}),
            "\"content\" argument is null",
        ),
        (
            "reflect",
            json!({"contents": "x"}),
            "unknown argument \"contents\"",
        ),
        (
            "reflect",
            json!({"content": 5}),
            "\"content\" argument must be a string, not a number",
        ),
        (
            "reflect",
            json!({"content": "  \n"}),
            "the content is empty",
        ),
        (
            "learn_fact",
            json!({"topic": "ops"}),
            "\"content\" argument is required",
        ),
        (
            "learn_fact",
            json!({"topic": "ops", "content": null}),
            "\"content\" argument is null",
        ),
        (
            "learn_fact",
            json!({"topic": ["ops"], "content": "x"}),
            "\"topic\" argument must be a string, not an array",
        ),
        (
            "learn_fact",
            json!({"topic": "ops", "content": "x", "extra": 1}),
            "unknown argument \"extra\"",
        ),
        (
            "learn_fact",
            json!({"topic": "ops", "content": ""}),
            "the content is empty",
        ),
        (
            "remember",
            json!({"content": {"a": 1}}),
            "\"content\" argument must be a string, not an object",
        ),
        (
            "recall",
            json!({"days": "two"}),
            "\"days\" argument must be an integer, not a string",
        ),
        (
            "recall",
            json!({"days": 1.5}),
            "\"days\" argument must be an integer, not a number",
        ),
        (
            "search_notes",
            json!({"query": "blue", "limit": 0}),
            "\"limit\" argument must be at least 1",
        ),
        (
            "search_notes",
            json!({"limit": 3}),
            "\"query\" argument is required",
        ),
        (
            "call_agent",
            json!({"agent": "helper", "task": "t", "priority": "high"}),
            "unknown argument \"priority\"",
        ),
        (
            "call_agent",
            json!({"agent": "helper"}),
            "\"task\" argument is required",
        ),
    ];
    let mut script = vec![tool_call("anthropic", "c0", "recall", json!({}))];
    for (i, (name, args, _)) in bad.iter().enumerate() {
        script.push(tool_call(
            "anthropic",
            &format!("c{}", i + 1),
            name,
            args.clone(),
        ));
    }
    let requests = play(&env, script);
    // The sub-agent was never called: every request is `a`'s.
    assert_eq!(requests.len(), bad.len() + 2);
    for (i, (name, args, want)) in bad.iter().enumerate() {
        let (text, is_error) = tool_results(&requests[i + 2]).remove(0);
        assert!(is_error, "{name} {args}: {text}");
        assert!(
            text.starts_with(&format!("{name} error: ")),
            "{name} {args}: {text}"
        );
        assert!(text.contains(want), "{name} {args}: {text}");
        assert_eq!(text.lines().count(), 1, "{text}");
    }
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), "keep");
    assert_eq!(read(&ws.join("world/ops.md")), "blue-green");
    assert!(!daily(&env, "a", 0).exists());
}

#[test]
fn of_several_reflects_in_one_reply_at_most_one_wins() {
    for parallel in [true, false] {
        let env = Env::new();
        notes_agent(
            &env,
            "a",
            "anthropic",
            &format!("[sub_agents_config]\nparallel = {parallel}"),
        );
        let ws = workspace(&env);
        let memory = ws.join("agents/a/MEMORY.md");
        env.write(&memory, "old");
        env.write(&ws.join("world/ops.md"), "old ops");
        let requests = play(
            &env,
            vec![
                tool_call("anthropic", "c1", "recall", json!({})),
                tool_calls(&[
                    ("c2", "reflect", json!({"content": "first"})),
                    ("c3", "reflect", json!({"content": "second"})),
                    (
                        "c4",
                        "learn_fact",
                        json!({"topic": "ops", "content": "ops one"}),
                    ),
                    (
                        "c5",
                        "learn_fact",
                        json!({"topic": "ops", "content": "ops two"}),
                    ),
                ]),
            ],
        );
        let results = tool_results(&requests[2]);
        let won: Vec<usize> = (0..2).filter(|&i| !results[i].1).collect();
        assert_eq!(won.len(), 1, "parallel {parallel}: {results:?}");
        assert_eq!(read(&memory), ["first", "second"][won[0]]);
        let won: Vec<usize> = (2..4).filter(|&i| !results[i].1).collect();
        assert_eq!(won.len(), 1, "parallel {parallel}: {results:?}");
        assert_eq!(
            read(&ws.join("world/ops.md")),
            ["ops one", "ops two"][won[0] - 2]
        );
    }
}

/// The files a recall's note names and counts, from its `(Left out ...)`
/// line, in any of its forms: each named one has its size in bytes; the
/// rest are counted.
fn named_and_counted(note: &str) -> (usize, usize) {
    let listed = note.split_once(": ").unwrap().1;
    let listed = listed
        .strip_suffix(". Use search_notes or raise recall_chars to see them.)")
        .or_else(|| listed.strip_suffix(".)"))
        .unwrap();
    let named = listed.matches(" bytes)").count();
    let rest = listed.rsplit(" bytes)").next().unwrap();
    let counted = rest
        .split(|c: char| !c.is_ascii_digit() && c != ',')
        .filter_map(|n| n.replace(',', "").parse::<usize>().ok())
        .sum::<usize>()
        + usize::from(rest.contains("MEMORY.md"));
    (named, counted)
}

#[test]
fn a_recall_with_its_note_stays_within_the_budget_and_accounts_for_every_file() {
    let env = Env::new();
    let ws = workspace(&env);
    fs::create_dir_all(ws.join("world")).unwrap();
    for i in 0..3000 {
        fs::write(
            ws.join(format!("world/topic-{i:04}.md")),
            format!("Fact {i} about the world."),
        )
        .unwrap();
    }
    env.write(&ws.join("agents/a/MEMORY.md"), "I review Rust.");
    for ago in 0..3 {
        env.write(
            &daily(&env, "a", ago),
            format!("# {}\n\n## 10:00\n\nday {ago}\n", day(ago)),
        );
    }
    let all = 3000 + 1 + 3;
    for budget in [150, 400, 2000, 10_000, 100_000] {
        notes_agent(&env, "a", "anthropic", &format!("recall_chars = {budget}"));
        let out = notes(&env, "recall").arg("a").assert().success();
        let text = stdout(out.get_output());
        let text = text.strip_suffix('\n').unwrap();
        assert!(
            text.chars().count() <= budget,
            "{budget}: {} characters",
            text.chars().count()
        );
        let doc = json_out(notes(&env, "recall").args(["a", "--json"]));
        let shown = doc["sections"].as_array().unwrap().len();
        let left = doc["left_out"].as_array().unwrap().len();
        assert_eq!(shown + left, all, "{budget}");
        assert!(left > 0, "{budget}");
        let note = text.lines().last().unwrap();
        assert!(note.starts_with("(Left out"), "{budget}: {note}");
        let (named, counted) = named_and_counted(note);
        assert_eq!(named + counted, left, "{budget}: {note}");
    }

    // The recall tool's answer, the note included.
    notes_agent(&env, "a", "anthropic", "recall_chars = 2000");
    let requests = play(
        &env,
        vec![tool_call("anthropic", "c1", "recall", json!({}))],
    );
    let answer = last_tool_result(&requests[1]);
    assert!(
        answer.chars().count() <= 2000,
        "{} characters",
        answer.chars().count()
    );
    let note = answer.lines().last().unwrap();
    let (named, counted) = named_and_counted(note);
    assert!(counted > 2000, "{note}");
    // The topics, MEMORY.md and the days (taken before the topics).
    let shown = answer.matches("\n## topic-").count() + 1 + answer.matches("\n## 10:00\n").count();
    assert_eq!(shown + named + counted, all, "{answer}");
}

#[test]
fn an_unreadable_topic_or_a_file_where_a_directory_belongs_is_skipped_and_said() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "[context]\nbudget = 4000");
    let ws = workspace(&env);
    env.write(&ws.join("agents/a/MEMORY.md"), "I review Rust.");
    env.write(&ws.join("world/ops.md"), "Deploys are blue-green.");
    env.write(&ws.join("world/secret.md"), "blue secret");
    crate::util::set_mode(&ws.join("world/secret.md"), 0o000);
    let out = env
        .unprivileged("axe-notes-recall")
        .arg("a")
        .assert()
        .success();
    let text = stdout(out.get_output());
    assert!(text.contains("Deploys are blue-green."), "{text}");
    assert!(text.contains("I review Rust."), "{text}");
    assert!(
        text.ends_with("\n\n(Could not read: world/secret.md (permission denied).)\n"),
        "{text}"
    );
    let out = env
        .unprivileged("axe-notes-search")
        .args(["--agent", "a", "blue"])
        .assert()
        .success()
        .stderr("axe-notes-search: could not read world/secret.md: permission denied\n");
    assert_eq!(
        stdout(out.get_output()),
        "world/ops.md:1: Deploys are blue-green.\n"
    );
    let out = env.unprivileged("axe-context").arg("a").assert().success();
    let block = stdout(out.get_output());
    assert!(block.contains("Deploys are blue-green."), "{block}");
    assert!(
        block.contains("(Could not read world/secret.md: permission denied.)"),
        "{block}"
    );
    crate::util::set_mode(&ws.join("world/secret.md"), 0o644);

    // `world` and `daily` as regular files.
    fs::remove_dir_all(ws.join("world")).unwrap();
    env.write(&ws.join("world"), "not a directory");
    env.write(&ws.join("agents/a/daily"), "not a directory");
    let out = notes(&env, "recall").arg("a").assert().success();
    let text = stdout(out.get_output());
    assert_eq!(
        text,
        "# Your Memory\n\nI review Rust.\n\n(Could not read: world (not a directory), agents/a/daily (not a directory).)\n"
    );
    notes(&env, "search")
        .args(["rust"])
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md:1: I review Rust.\n")
        .stderr(predicate::str::contains(
            "could not read world: not a directory",
        ));
    let out = env.cmd("axe-context").arg("a").assert().success();
    let block = stdout(out.get_output());
    assert!(block.contains("I review Rust."), "{block}");
    assert!(
        block.contains("(Could not read world: not a directory.)"),
        "{block}"
    );
}

#[test]
fn search_refuses_a_limit_of_0() {
    let env = Env::new();
    notes_agent(&env, "a", "anthropic", "");
    env.write(&workspace(&env).join("world/ops.md"), "blue");
    notes(&env, "search")
        .args(["blue", "--limit", "0"])
        .assert()
        .code(1)
        .stdout("")
        .stderr("error parsing flag --limit: 0 would print nothing (give 1 or more)\n");
    notes(&env, "search")
        .args(["blue", "--limit", "1"])
        .assert()
        .success()
        .stdout("world/ops.md:1: blue\n");
}

/// The README's git hook, installed as it says, in a real repository: a
/// `git commit` shows git's own lines and nothing from axe, and the commit
/// is noted.
#[test]
fn the_readmes_git_hook_notes_a_commit_and_prints_nothing() {
    if !crate::util::have("git") {
        return;
    }
    let readme = crate::readme::guide();
    let after = readme
        .split_once("A git hook that notes every commit")
        .expect("the README's hook recipe")
        .1;
    let hook = after
        .split_once("```sh\n")
        .and_then(|(_, rest)| rest.split_once("```"))
        .expect("its block")
        .0;
    let env = Env::new();
    let repo = env.root().join("project");
    fs::create_dir_all(&repo).unwrap();
    let git = |args: &[&str]| {
        let out = env
            .shell("git")
            .current_dir(&repo)
            .args(["-c", "user.name=T", "-c", "user.email=t@example.com"])
            .args(args)
            .assert()
            .success();
        out.get_output().clone()
    };
    git(&["init", "-q"]);
    let hook_path = repo.join(".git/hooks/post-commit");
    env.write(&hook_path, hook);
    crate::util::set_mode(&hook_path, 0o755);
    fs::write(repo.join("a.txt"), "a\n").unwrap();
    git(&["add", "a.txt"]);
    let out = git(&["commit", "-m", "Fix the parser"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("Fix the parser"), "git's own line: {said}");
    assert!(
        !said.contains("daily") && !said.contains("axe"),
        "axe spoke in a commit: {said}"
    );
    let daily = workspace(&env).join("agents/reviewer/daily");
    let day = fs::read_dir(&daily)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert!(read(&day).contains("Fix the parser"), "{}", read(&day));
}

#[test]
fn quiet_writes_print_nothing_and_still_report_errors() {
    let env = Env::new();
    for (bin, args, stdin) in [
        ("axe-notes-remember", &["-q", "team", "a note"][..], ""),
        ("axe-notes-reflect", &["--quiet", "team"][..], "memory\n"),
        (
            "axe-notes-learn",
            &["-q", "--agent", "team", "deploys"][..],
            "blue-green\n",
        ),
        (
            "axe-mem-append",
            &["-q", "team", "--task", "t", "--result", "r"][..],
            "",
        ),
        (
            "axe-state-record",
            &["-q", "team", "--task", "t", "--success"][..],
            "",
        ),
        (
            "axe-state-ingest",
            &["-q", "team"][..],
            "AXE_MEMORY: KEY_FACT x\n",
        ),
    ] {
        env.cmd(bin)
            .args(args)
            .write_stdin(stdin)
            .assert()
            .success()
            .stdout("")
            .stderr("");
        // An error is still said, on stderr.
        env.cmd(bin)
            .args(args)
            .arg("--wait")
            .arg("-1")
            .write_stdin(stdin)
            .assert()
            .code(1)
            .stdout("")
            .stderr(predicate::str::contains("--wait"));
        env.cmd(bin)
            .args(args)
            .arg("--json")
            .write_stdin(stdin)
            .assert()
            .code(1)
            .stdout("")
            .stderr("{\"error\":\"cannot use both --quiet and --json\",\"exit_code\":1}\n");
    }
}
