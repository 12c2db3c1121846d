//! `axe-notes-consolidate` against the local provider, whose replies are
//! scripted tool calls: a dry run, a consolidation applied and undone, a
//! rewrite that loses to a concurrent one, nothing new asking no model,
//! the automatic run after `axe-run`, and two machines sharing notes
//! through a real git remote.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use crate::server::{Answer, Recorded, Server};
use crate::util::{Env, read};
use crate::wire::{reply_for, served_by};

const BEFORE: &str = "# Memory\n\n- Deploys go out on Fridays.\n- The canary runs 10 minutes.\n";
const AFTER: &str = "# Memory\n\n- Deploys go out on Fridays.\n- The canary runs 30 minutes (since the change of this week; it was 10).\n";
const DEPLOYS: &str = "Blue-green switching.\n";

/// The default workspace of a test's world.
fn workspace(env: &Env) -> PathBuf {
    env.data_dir().join("axe/notes")
}

/// Agent `a` with notes, its MEMORY.md naming the deploys topic, and two
/// daily-log entries.
fn setup(env: &Env, extra: &str) {
    env.agent(
        "a",
        &format!(
            "name = \"a\"\nmodel = \"anthropic/m\"\nsystem_prompt = \"You are a.\"\n[notes]\nenabled = true\n{extra}"
        ),
    );
    let ws = workspace(env);
    env.write(&ws.join("agents/a/MEMORY.md"), BEFORE);
    env.write(&ws.join("world/deploys.md"), DEPLOYS);
    for text in ["We moved the canary to 30 minutes.", "Lunch was good."] {
        remember(env, text);
    }
}

fn remember(env: &Env, text: &str) {
    env.cmd("axe-notes-remember")
        .args(["a", text])
        .assert()
        .success();
}

/// A reply calling `name` with `input` (Anthropic's format).
fn tool_call(id: &str, name: &str, input: Value) -> Value {
    json!({
        "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 3},
        "content": [{"type": "tool_use", "id": id, "name": name, "input": input}]
    })
}

/// The consolidation the scripted model makes: MEMORY.md rewritten, the
/// deploys topic too, then its answer.
fn script() -> Vec<Value> {
    vec![
        tool_call("c1", "reflect", json!({"content": AFTER})),
        tool_call(
            "c2",
            "learn_fact",
            json!({"topic": "deploys", "content": "Blue-green switching; canary 30 minutes.\n"}),
        ),
    ]
}

/// A server playing `script`, then answering with text; `before(n)` runs
/// before the n-th reply.
fn scripted(script: Vec<Value>, before: impl Fn(usize) + Send + Sync + 'static) -> Server {
    let turn = Arc::new(AtomicUsize::new(0));
    Server::route(move |_| {
        let n = turn.fetch_add(1, Ordering::SeqCst);
        before(n);
        let reply = script.get(n).cloned().unwrap_or_else(|| {
            reply_for(
                "anthropic",
                "Kept the canary's new length; removed the old one as superseded.",
            )
        });
        Answer::json(200, &reply)
    })
}

fn consolidate(env: &Env, server: &Server) -> assert_cmd::Command {
    let mut cmd = served_by(env.cmd("axe-notes-consolidate"), &server.url);
    cmd.arg("a");
    cmd
}

/// Every file under `dir`, with its bytes.
fn tree(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                files.insert(path.clone(), fs::read(&path).unwrap());
            }
        }
    }
    files
}

/// The text of the first user message a request carried.
fn user_text(r: &Recorded) -> String {
    let first = &r.json()["messages"][0]["content"];
    match first {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks[0]["text"].as_str().unwrap_or_default().to_owned(),
        _ => String::new(),
    }
}

/// Every tool result the last message of a request carried back, and
/// whether it is an error.
fn tool_results(r: &Recorded) -> Vec<(String, bool)> {
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

#[test]
fn a_dry_run_prints_the_diff_and_changes_nothing() {
    let env = Env::new();
    setup(&env, "");
    let before = tree(&workspace(&env));
    let server = scripted(script(), |_| {});
    let tmp = env.root().join("tmp");
    fs::create_dir(&tmp).unwrap();
    let out = consolidate(&env, &server)
        .arg("--dry-run")
        .env("TMPDIR", &tmp)
        .assert()
        .success()
        .get_output()
        .clone();
    let diff = String::from_utf8_lossy(&out.stdout);
    assert!(
        diff.contains("--- a/agents/a/MEMORY.md\n+++ b/agents/a/MEMORY.md\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-- The canary runs 10 minutes.\n+- The canary runs 30 minutes"),
        "{diff}"
    );
    assert!(
        diff.contains("--- a/world/deploys.md\n+++ b/world/deploys.md\n"),
        "{diff}"
    );
    assert!(
        diff.contains("\n-Blue-green switching.\n+Blue-green switching; canary 30 minutes.\n"),
        "{diff}"
    );
    // Byte for byte what it was: no file written, no record kept; and
    // its scratch copy is gone.
    assert_eq!(tree(&workspace(&env)), before);
    assert_eq!(fs::read_dir(&tmp).unwrap().count(), 0);
    // The model saw MEMORY.md whole, the topic it names and both entries,
    // and its rewrites were taken as of what it saw (no recall needed).
    let requests = server.requests();
    let shown = user_text(&requests[0]);
    for part in [
        BEFORE.trim_end(),
        DEPLOYS.trim_end(),
        "We moved the canary to 30 minutes.",
        "Lunch was good.",
    ] {
        assert!(shown.contains(part), "{part:?} not in {shown}");
    }
    assert!(tool_results(&requests[1]).iter().all(|(_, err)| !err));
    assert!(tool_results(&requests[2]).iter().all(|(_, err)| !err));
}

#[test]
fn applied_it_keeps_the_previous_texts_and_nothing_new_asks_no_model() {
    let env = Env::new();
    setup(&env, "");
    let server = scripted(script(), |_| {});
    let out = consolidate(&env, &server)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .clone();
    let done: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ws = workspace(&env);
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), AFTER);
    assert_eq!(
        read(&ws.join("world/deploys.md")),
        "Blue-green switching; canary 30 minutes.\n"
    );
    assert_eq!(done["model_called"], true);
    assert_eq!(done["entries"].as_array().unwrap().len(), 2);
    assert!(done["usage"]["input_tokens"].as_u64().unwrap() >= 14);
    let files = done["files"].as_array().unwrap();
    assert_eq!(files.len(), 2);
    assert_eq!(files[0]["path"], "agents/a/MEMORY.md");
    assert_ne!(files[0]["sha256_before"], files[0]["sha256_after"]);
    // The previous texts are kept in the record.
    let record: Value =
        serde_json::from_str(&read(&ws.join(done["history"].as_str().unwrap()))).unwrap();
    assert_eq!(record["files"][0]["before"], BEFORE);
    assert_eq!(record["files"][1]["before"], DEPLOYS);
    assert_eq!(record["done"], true);

    // Nothing new: no request at all, and it says so.
    let idle = scripted(Vec::new(), |_| {});
    consolidate(&env, &idle)
        .assert()
        .success()
        .stdout("")
        .stderr(predicates::str::contains("nothing new to consolidate"));
    assert_eq!(idle.requests().len(), 0);
    // One entry more: only it is shown.
    remember(&env, "The canary now pages on-call.");
    let next = scripted(Vec::new(), |_| {});
    consolidate(&env, &next).assert().success();
    let shown = user_text(&next.requests()[0]);
    assert!(shown.contains("pages on-call"), "{shown}");
    assert!(!shown.contains("Lunch was good."), "{shown}");
}

#[test]
fn undo_restores_the_last_consolidation_unless_a_file_changed_since() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let server = scripted(script(), |_| {});
    consolidate(&env, &server).assert().success();
    env.cmd("axe-notes-consolidate")
        .args(["a", "--undo"])
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md\nworld/deploys.md\n");
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), BEFORE);
    assert_eq!(read(&ws.join("world/deploys.md")), DEPLOYS);
    // Its entries are new again: the next consolidation asks.
    let again = scripted(script(), |_| {});
    consolidate(&env, &again).assert().success();
    assert!(!again.requests().is_empty());
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), AFTER);
    // Someone rewrites MEMORY.md: undo is a conflict and writes nothing.
    env.cmd("axe-notes-reflect")
        .arg("a")
        .write_stdin("mine")
        .assert()
        .success();
    undo_refused(
        &env,
        &ws,
        6,
        &["agents/a/MEMORY.md changed since the consolidation"],
    );
}

#[test]
fn a_concurrent_reflect_is_a_conflict_and_loses_nothing() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    // Between the prompt and the model's reflect, someone else reflects:
    // the server runs them before it answers with the rewrite.
    let mut theirs = env.std_cmd("axe-notes-reflect");
    theirs.arg("a").stdin(Stdio::piped()).stdout(Stdio::null());
    let theirs = std::sync::Mutex::new(theirs);
    let server = scripted(script(), move |n| {
        if n == 0 {
            let mut child = theirs.lock().unwrap().spawn().unwrap();
            child.stdin.take().unwrap().write_all(b"theirs").unwrap();
            assert!(child.wait().unwrap().success());
        }
    });
    consolidate(&env, &server)
        .assert()
        .code(6)
        .stderr(predicates::str::contains(
            "lost a rewrite to a concurrent one",
        ));
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), "theirs");
    let results = tool_results(&server.requests()[1]);
    assert!(
        results[0].1 && results[0].0.contains("has changed since you last read it"),
        "{results:?}"
    );
    // The entries stay new: the next consolidation is shown them again,
    // with the other writer's MEMORY.md.
    let next = scripted(Vec::new(), |_| {});
    consolidate(&env, &next).assert().success();
    let shown = user_text(&next.requests()[0]);
    assert!(
        shown.contains("theirs") && shown.contains("Lunch was good."),
        "{shown}"
    );
}

/// `axe-notes-consolidate bot` on machine `m` against `server`.
fn consolidate_on(m: &crate::sync::Machine, server: &Server) -> std::process::Output {
    served_by(m.env.cmd("axe-notes-consolidate"), &server.url)
        .arg("bot")
        .output()
        .unwrap()
}

#[test]
fn two_machines_consolidating_the_same_entries_take_each_in_once() {
    let Some((_keep, [a, b])) = crate::sync::pair() else {
        return;
    };
    a.remember("The office moves to Lyon in May.");
    b.remember("Sam prefers morning meetings.");
    for m in [&a, &b, &a] {
        m.synced();
    }
    let server = scripted(
        vec![tool_call(
            "c1",
            "reflect",
            json!({"content": "- Office: Lyon from May.\n- Sam: mornings.\n"}),
        )],
        |_| {},
    );
    let out = consolidate_on(&a, &server);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let shown = user_text(&server.requests()[0]);
    assert!(shown.contains("Lyon") && shown.contains("Sam"), "{shown}");
    a.synced();
    b.synced();
    // The record came with MEMORY.md: the other machine has nothing new.
    let idle = scripted(Vec::new(), |_| {});
    let out = consolidate_on(&b, &idle);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing new to consolidate"));
    assert_eq!(idle.requests().len(), 0);
    assert_eq!(
        b.file("notes/agents/bot/MEMORY.md"),
        "- Office: Lyon from May.\n- Sam: mornings.\n"
    );

    // Both consolidate one new entry before either syncs: each keeps its
    // record, the sync carries both, and neither takes it in again.
    a.remember("The canary runs 30 minutes now.");
    a.synced();
    b.synced();
    for m in [&a, &b] {
        let server = scripted(Vec::new(), |_| {});
        assert!(consolidate_on(m, &server).status.success());
        assert_eq!(server.requests().len(), 1);
    }
    for m in [&a, &b, &a] {
        m.synced();
    }
    for m in [&a, &b] {
        let records: Vec<String> = m
            .files()
            .into_keys()
            .filter(|p| p.starts_with("notes/agents/bot/history/"))
            .collect();
        assert_eq!(records.len(), 3, "{records:?}");
        let idle = scripted(Vec::new(), |_| {});
        let out = consolidate_on(m, &idle);
        assert!(out.status.success());
        assert_eq!(
            idle.requests().len(),
            0,
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Each machine's entries are in its daily log once.
    assert_eq!(
        crate::sync::daily(&a)
            .matches("The canary runs 30 minutes now.")
            .count(),
        1
    );
}

/// A server answering a run with its answer and a consolidation (told by
/// its system prompt) with a word, counting the consolidations.
fn run_and_consolidation() -> (Server, Arc<AtomicUsize>) {
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&asked);
    let server = Server::route(move |r| {
        if crate::wire::system_text(&r.json()).starts_with("You consolidate") {
            counted.fetch_add(1, Ordering::SeqCst);
            return Answer::json(200, &reply_for("anthropic", "Nothing superseded."));
        }
        Answer::json(200, &reply_for("anthropic", "the run's answer"))
    });
    (server, asked)
}

/// `axe-run a -v`, which must exit 0 with the run's answer; its stderr.
fn run_verbose(env: &Env, server: &Server) -> String {
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "-v"])
        .write_stdin("go")
        .assert()
        .success()
        .stdout("the run's answer")
        .get_output()
        .clone();
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn axe_run_consolidates_when_due_and_never_otherwise() {
    let env = Env::new();
    setup(
        &env,
        "consolidate_every = \"24h\"\nconsolidate_min_entries = 2\n",
    );
    let (server, asked) = run_and_consolidation();
    let err = run_verbose(&env, &server);
    assert!(
        err.contains("[notes] consolidation: ran over 2 of 2 new entries"),
        "{err}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // Two entries more, but the last one was less than 24 h ago.
    remember(&env, "one");
    remember(&env, "two");
    let err = run_verbose(&env, &server);
    assert!(err.contains("not due (the last one was at"), "{err}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // Fewer new entries than the minimum: not due either.
    let env = Env::new();
    setup(
        &env,
        "consolidate_every = \"24h\"\nconsolidate_min_entries = 3\n",
    );
    let err = run_verbose(&env, &server);
    assert!(
        err.contains("not due (2 new entries, fewer than consolidate_min_entries (3))"),
        "{err}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // Without consolidate_every, never, and nothing is said.
    let env = Env::new();
    setup(&env, "");
    let err = run_verbose(&env, &server);
    assert!(!err.contains("consolidation"), "{err}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[test]
fn a_busy_memory_lock_skips_the_consolidation_and_the_run_exits_0() {
    let env = Env::new();
    setup(
        &env,
        "consolidate_every = \"1m\"\nconsolidate_min_entries = 1\n",
    );
    let memory = fs::File::open(workspace(&env).join("agents/a/MEMORY.md")).unwrap();
    memory.lock().unwrap();
    let (server, asked) = run_and_consolidation();
    let err = run_verbose(&env, &server);
    assert!(
        err.contains("[notes] consolidation: skipped: MEMORY.md is locked"),
        "{err}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    assert_eq!(read(&workspace(&env).join("agents/a/MEMORY.md")), BEFORE);
    // Released, the next run consolidates.
    memory.unlock().unwrap();
    let err = run_verbose(&env, &server);
    assert!(err.contains("ran over 2 of 2"), "{err}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[test]
fn a_malformed_consolidate_every_is_a_config_error() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nconsolidate_every = \"daily\"\n",
    );
    env.cmd("axe-run")
        .args(["a", "--dry-run"])
        .write_stdin("go")
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "notes.consolidate_every: \"daily\" is not a period",
        ));
}

#[test]
fn axe_gc_consolidates_an_agent_whose_notes_are_due() {
    let env = Env::new();
    setup(
        &env,
        "consolidate_every = \"24h\"\nconsolidate_min_entries = 1\n[memory]\nenabled = true\n",
    );
    let (server, asked) = run_and_consolidation();
    let out = served_by(env.cmd("axe-gc"), &server.url)
        .arg("a")
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("[notes] consolidation: ran over 2 of 2 new entries"),
        "{err}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    // A dry run of gc changes nothing, the notes included.
    remember(&env, "later");
    served_by(env.cmd("axe-gc"), &server.url)
        .args(["a", "--dry-run"])
        .assert()
        .success();
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[test]
fn prune_removes_the_records_older_than_the_daily_logs_it_removes() {
    let env = Env::new();
    setup(&env, "");
    let server = scripted(script(), |_| {});
    consolidate(&env, &server).assert().success();
    let history = workspace(&env).join("agents/a/history");
    let recent: Vec<PathBuf> = fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(recent.len(), 1);
    let old = history.join("20200101T000000Z-0123abcd.json");
    fs::copy(&recent[0], &old).unwrap();
    env.cmd("axe-notes-prune")
        .args(["a", "--older-than", "30d"])
        .assert()
        .success()
        .stdout(format!("{}\n", old.display()));
    assert!(!old.exists());
    assert!(recent[0].exists());
}

#[test]
fn undo_restores_nothing_a_record_names_outside_the_agents_notes() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let server = scripted(script(), |_| {});
    consolidate(&env, &server).assert().success();
    let history = ws.join("agents/a/history");
    let record = fs::read_dir(&history)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // As if it came through a sync from a hostile remote.
    let mut forged: Value = serde_json::from_str(&read(&record)).unwrap();
    forged["files"][1]["path"] = json!("agents/b/MEMORY.md");
    fs::write(&record, forged.to_string()).unwrap();
    undo_refused(
        &env,
        &ws,
        1,
        &["which is not agents/a/MEMORY.md or a world topic: nothing was restored"],
    );
}

#[test]
fn a_dry_run_ended_by_a_signal_leaves_no_scratch_copy() {
    use rustix::process::{Pid, Signal, kill_process};
    for signal in [Signal::TERM, Signal::INT] {
        let env = Env::new();
        setup(&env, "");
        let tmp = env.root().join("tmp");
        fs::create_dir(&tmp).unwrap();
        // The model's first reply waits until the test lets it go: by
        // then the scratch copy is made, and the signal comes mid-call.
        let (asked, was_asked) = std::sync::mpsc::channel::<()>();
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = std::sync::Mutex::new(released);
        let server = scripted(script(), move |_| {
            let _ = asked.send(());
            let _ = released.lock().unwrap().recv();
        });
        let mut cmd = env.std_cmd("axe-notes-consolidate");
        cmd.args(["a", "--dry-run"]).env("TMPDIR", &tmp);
        for p in ["ANTHROPIC", "OPENAI", "OLLAMA", "OPENROUTER", "GOOGLE"] {
            cmd.env(format!("AXE_{p}_BASE_URL"), &server.url);
        }
        cmd.env("ANTHROPIC_API_KEY", crate::wire::KEY);
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        was_asked.recv().unwrap();
        assert_eq!(
            fs::read_dir(&tmp).unwrap().count(),
            1,
            "no scratch copy made"
        );
        let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
        kill_process(pid, signal).unwrap();
        let status = child.wait().unwrap();
        drop(release);
        assert!(!status.success(), "{signal:?}: {status:?}");
        let left: Vec<_> = fs::read_dir(&tmp)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        assert!(left.is_empty(), "{signal:?} left {left:?}");
    }
}

#[test]
fn axe_run_with_json_or_failed_does_not_consolidate() {
    let env = Env::new();
    setup(
        &env,
        "consolidate_every = \"1m\"\nconsolidate_min_entries = 1\n",
    );
    let (server, asked) = run_and_consolidation();
    // --json: one document for a program, whose tokens and cost must be
    // all the run spent, and which waits on no model call after it.
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "-v", "--json"])
        .write_stdin("go")
        .assert()
        .success()
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("consolidation"), "{err}");
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    // A run that failed (the model's error) does not either.
    let failing = Server::route(|_| Answer::json(400, &json!({"error": {"message": "no"}})));
    served_by(env.cmd("axe-run"), &failing.url)
        .args(["a", "-v"])
        .write_stdin("go")
        .assert()
        .failure();
    assert_eq!(failing.requests().len(), 1);
    // A plain run then does.
    let err = run_verbose(&env, &server);
    assert!(err.contains("ran over 2 of 2"), "{err}");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
}

#[test]
fn a_consolidation_killed_midway_keeps_the_previous_text_and_undo_says_so() {
    use rustix::process::{Pid, Signal, kill_process};
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    // The second request comes once reflect has rewritten MEMORY.md: the
    // process is killed there, as a crash or `kill -9` would.
    let (asked, was_asked) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = std::sync::Mutex::new(released);
    let server = scripted(script(), move |n| {
        if n == 1 {
            let _ = asked.send(());
            let _ = released.lock().unwrap().recv();
        }
    });
    let mut cmd = env.std_cmd("axe-notes-consolidate");
    cmd.arg("a");
    for p in ["ANTHROPIC", "OPENAI", "OLLAMA", "OPENROUTER", "GOOGLE"] {
        cmd.env(format!("AXE_{p}_BASE_URL"), &server.url);
    }
    cmd.env("ANTHROPIC_API_KEY", crate::wire::KEY);
    let mut child = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    was_asked.recv().unwrap();
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap()).unwrap();
    kill_process(pid, Signal::KILL).unwrap();
    child.wait().unwrap();
    drop(release);
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), AFTER);
    // Its record, written before the model was asked, keeps the text it
    // replaced, and marks no entry.
    let history = ws.join("agents/a/history");
    let records: Vec<_> = fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(records.len(), 1);
    let record: Value = serde_json::from_str(&read(&records[0])).unwrap();
    assert_eq!(record["done"], json!(false));
    assert_eq!(record["files"][0]["before"], json!(BEFORE));
    // A record of before, which did not say what it wrote: --undo cannot
    // tell its rewrite from another writer's, restores nothing, and says
    // the run did not finish and where the text is.
    let mut older = record.clone();
    older["files"][0]["sha256_after"] = Value::Null;
    older.as_object_mut().unwrap().remove("at_write");
    fs::write(&records[0], older.to_string()).unwrap();
    undo_refused(
        &env,
        &ws,
        6,
        &[
            "did not finish",
            "its previous text is kept in agents/a/history/",
        ],
    );
    // Its own record names what it wrote, kept before the write: the
    // file still holds exactly that, so --undo gives the text back.
    fs::write(&records[0], record.to_string()).unwrap();
    env.cmd("axe-notes-consolidate")
        .args(["a", "--undo"])
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md\n");
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), BEFORE);
    // The next consolidation is shown the entries again.
    let next = scripted(Vec::new(), |_| {});
    consolidate(&env, &next).assert().success();
    let shown = user_text(&next.requests()[0]);
    assert!(shown.contains("Lunch was good."), "{shown}");
}

#[test]
fn undo_refuses_when_the_newest_record_is_not_one() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let server = scripted(script(), |_| {});
    consolidate(&env, &server).assert().success();
    // A second one over a new entry, which changes no file.
    remember(&env, "Nothing worth keeping.");
    let quiet = scripted(Vec::new(), |_| {});
    consolidate(&env, &quiet).assert().success();
    let history = ws.join("agents/a/history");
    let mut records: Vec<_> = fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    records.sort();
    assert_eq!(records.len(), 2);
    // The newest torn (a disk that filled, a sync's conflict): --undo
    // must not undo the one before it instead.
    let text = read(&records[1]);
    fs::write(&records[1], &text[..text.len() / 2]).unwrap();
    undo_refused(
        &env,
        &ws,
        1,
        &["is not a consolidation record", "nothing was restored"],
    );
}

#[test]
fn only_a_refusal_typed_as_a_conflict_is_one_not_its_wording() {
    let env = Env::new();
    setup(&env, "");
    // A call the schema refuses, whose error repeats the argument's name:
    // the words of a conflict, but no file was changed by anyone.
    let script = vec![
        tool_call(
            "c1",
            "reflect",
            json!({"content": AFTER, "MEMORY.md has changed since you last read it": 1}),
        ),
        tool_call("c2", "reflect", json!({"content": AFTER})),
    ];
    let server = scripted(script, |_| {});
    consolidate(&env, &server).assert().success();
    let results = tool_results(&server.requests()[1]);
    assert!(results[0].1, "{results:?}");
    assert_eq!(read(&workspace(&env).join("agents/a/MEMORY.md")), AFTER);
    // Its entries were taken in: the next run asks no model.
    let next = scripted(Vec::new(), |_| {});
    consolidate(&env, &next).assert().success();
    assert!(next.requests().is_empty());
}

#[test]
fn a_dry_run_with_no_writable_tmpdir_is_one_clear_line_and_asks_no_model() {
    let env = Env::new();
    setup(&env, "");
    let server = scripted(script(), |_| {});
    let missing = env.root().join("no-such-tmp");
    let out = consolidate(&env, &server)
        .arg("--dry-run")
        .env("TMPDIR", &missing)
        .assert()
        .code(1)
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("no-such-tmp"), "{err}");
    assert!(server.requests().is_empty());
}

#[test]
fn undo_half_done_before_finishes_what_is_left() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let server = scripted(script(), |_| {});
    consolidate(&env, &server).assert().success();
    // One file given back already (an undo cut short, or by hand): the
    // other is still as the consolidation left it.
    env.cmd("axe-notes-reflect")
        .arg("a")
        .write_stdin(BEFORE)
        .assert()
        .success();
    env.cmd("axe-notes-consolidate")
        .args(["a", "--undo"])
        .assert()
        .success()
        .stdout("world/deploys.md\n");
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), BEFORE);
    assert_eq!(read(&ws.join("world/deploys.md")), DEPLOYS);
    assert_eq!(
        fs::read_dir(ws.join("agents/a/history")).unwrap().count(),
        0
    );
}

#[test]
fn the_automatic_one_never_fails_the_run_whatever_breaks() {
    let env = Env::new();
    setup(
        &env,
        "consolidate_every = \"1m\"\nconsolidate_min_entries = 1\n",
    );
    let ws = workspace(&env);
    // history/ is a file: its records cannot be listed.
    env.write(&ws.join("agents/a/history"), "not a directory");
    let (server, asked) = run_and_consolidation();
    let out = served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .write_stdin("go")
        .assert()
        .success()
        .stdout("the run's answer")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Warning: cannot tell whether \"a\" is due a consolidation")
            && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(asked.load(Ordering::SeqCst), 0);
    fs::remove_file(ws.join("agents/a/history")).unwrap();
    // A record torn in it is passed over; the model refusing the
    // consolidation is a warning, and no record stays.
    fs::create_dir(ws.join("agents/a/history")).unwrap();
    env.write(
        &ws.join("agents/a/history/20260101T000000000Z-00000000.json"),
        "{\"at\": ",
    );
    let server = Server::route(|r| {
        if crate::wire::system_text(&r.json()).starts_with("You consolidate") {
            return Answer::json(
                400,
                &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}),
            );
        }
        Answer::json(200, &reply_for("anthropic", "the run's answer"))
    });
    let out = served_by(env.cmd("axe-run"), &server.url)
        .arg("a")
        .write_stdin("go")
        .assert()
        .success()
        .stdout("the run's answer")
        .get_output()
        .clone();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("Warning: the consolidation of \"a\" failed:") && err.lines().count() == 1,
        "{err}"
    );
    assert_eq!(
        fs::read_dir(ws.join("agents/a/history")).unwrap().count(),
        1
    );
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), BEFORE);
}

/// The record of `env`'s only consolidation of `a`, as JSON.
fn only_record(env: &Env) -> Value {
    let history = workspace(env).join("agents/a/history");
    let records: Vec<PathBuf> = fs::read_dir(&history)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    serde_json::from_str(&read(&records[0])).unwrap()
}

fn undo(env: &Env) -> assert_cmd::assert::Assert {
    env.cmd("axe-notes-consolidate")
        .args(["a", "--undo"])
        .assert()
}

/// An undo refused with exit `code`, saying each of `says`, leaving the
/// workspace `ws` as it was, byte for byte.
fn undo_refused(env: &Env, ws: &Path, code: i32, says: &[&str]) {
    let before = tree(ws);
    let out = undo(env).code(code).get_output().clone();
    let err = String::from_utf8_lossy(&out.stderr);
    for part in says {
        assert!(err.contains(part), "no {part:?} in: {err}");
    }
    assert_eq!(tree(ws), before, "the refused undo changed the notes");
}

#[test]
fn a_topic_it_rewrote_after_a_recall_is_recorded_and_undo_gives_it_back() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    // Every agent's topic, which MEMORY.md does not name: the model
    // finds it by a recall and rewrites it.
    let people = "Sam prefers mornings.\n";
    env.write(&ws.join("world/people.md"), people);
    let server = scripted(
        vec![
            tool_call("c1", "recall", json!({})),
            tool_call(
                "c2",
                "learn_fact",
                json!({"topic": "people", "content": "Sam: mornings.\n"}),
            ),
        ],
        |_| {},
    );
    consolidate(&env, &server)
        .assert()
        .success()
        .stdout("world/people.md\n");
    assert_eq!(read(&ws.join("world/people.md")), "Sam: mornings.\n");
    let record = only_record(&env);
    assert_eq!(record["files"][0]["path"], "world/people.md");
    assert_eq!(record["files"][0]["before"], people);
    undo(&env).success().stdout("world/people.md\n");
    assert_eq!(read(&ws.join("world/people.md")), people);

    // A topic it made is its own: undo removes it, and only while it
    // holds what the consolidation wrote.
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let server = scripted(
        vec![tool_call(
            "c1",
            "learn_fact",
            json!({"topic": "people", "content": "Sam: mornings.\n"}),
        )],
        |_| {},
    );
    consolidate(&env, &server).assert().success();
    assert_eq!(only_record(&env)["files"][0]["before"], Value::Null);
    undo(&env).success().stdout("world/people.md\n");
    assert!(!ws.join("world/people.md").exists());
    // A record from before this one kept the texts as the run started:
    // its "did not exist" may be a topic it rewrote, which undo leaves.
    remember(&env, "Sam moved to evenings.");
    let server = scripted(
        vec![tool_call(
            "c1",
            "learn_fact",
            json!({"topic": "people", "content": "Sam: mornings.\n"}),
        )],
        |_| {},
    );
    consolidate(&env, &server).assert().success();
    let history = ws.join("agents/a/history");
    let path = fs::read_dir(&history)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut older: Value = serde_json::from_str(&read(&path)).unwrap();
    older.as_object_mut().unwrap().remove("at_write");
    fs::write(&path, older.to_string()).unwrap();
    undo(&env)
        .success()
        .stdout("")
        .stderr(predicates::str::contains("left world/people.md as it is: "));
    assert_eq!(read(&ws.join("world/people.md")), "Sam: mornings.\n");
}

#[test]
fn an_edit_made_while_the_model_thinks_is_never_its_to_undo() {
    // The model writes nothing; MEMORY.md is edited by hand meanwhile.
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let memory = ws.join("agents/a/MEMORY.md");
    let hand = memory.clone();
    let server = scripted(Vec::new(), move |n| {
        if n == 0 {
            fs::write(&hand, "edited by hand\n").unwrap();
        }
    });
    consolidate(&env, &server)
        .assert()
        .success()
        .stdout("")
        .stderr(predicates::str::contains("changed no file"));
    assert_eq!(only_record(&env)["files"], json!([]));
    undo(&env)
        .success()
        .stdout("")
        .stderr(predicates::str::contains(
            "0 file(s) restored, 2 entries new again",
        ));
    assert_eq!(read(&memory), "edited by hand\n");

    // The model reflects; then another writer reflects while the model
    // still thinks: the record names the model's text, which MEMORY.md
    // no longer holds, and undo keeps the other writer's.
    let env = Env::new();
    setup(&env, "");
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    let mut theirs = env.std_cmd("axe-notes-reflect");
    theirs.arg("a").stdin(Stdio::piped()).stdout(Stdio::null());
    let theirs = std::sync::Mutex::new(theirs);
    let server = scripted(
        vec![tool_call("c1", "reflect", json!({"content": AFTER}))],
        move |n| {
            if n == 1 {
                let mut child = theirs.lock().unwrap().spawn().unwrap();
                child.stdin.take().unwrap().write_all(b"theirs\n").unwrap();
                assert!(child.wait().unwrap().success());
            }
        },
    );
    consolidate(&env, &server)
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md\n");
    assert_eq!(read(&memory), "theirs\n");
    let record = only_record(&env);
    assert_eq!(record["files"][0]["before"], BEFORE);
    let before = tree(&workspace(&env));
    undo(&env).code(6).stderr(predicates::str::contains(
        "agents/a/MEMORY.md changed since the consolidation",
    ));
    assert_eq!(tree(&workspace(&env)), before);
}

/// `axe-notes-consolidate a` started against `server`, its output dropped.
fn spawn_consolidation(env: &Env, server: &Server) -> std::process::Child {
    let mut cmd = env.std_cmd("axe-notes-consolidate");
    cmd.arg("a");
    for p in ["ANTHROPIC", "OPENAI", "OLLAMA", "OPENROUTER", "GOOGLE"] {
        cmd.env(format!("AXE_{p}_BASE_URL"), &server.url);
    }
    cmd.env("ANTHROPIC_API_KEY", crate::wire::KEY);
    cmd.stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// A server playing `script` whose first reply waits until `release`
/// says; `asked` is told when the model is first asked.
fn held(
    script: Vec<Value>,
) -> (
    Server,
    std::sync::mpsc::Receiver<()>,
    std::sync::mpsc::Sender<()>,
) {
    let (asked, was_asked) = std::sync::mpsc::channel::<()>();
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = std::sync::Mutex::new(released);
    let server = scripted(script, move |n| {
        if n == 0 {
            let _ = asked.send(());
            let _ = released.lock().unwrap().recv();
        }
    });
    (server, was_asked, release)
}

#[test]
fn two_consolidations_at_once_the_loser_keeps_no_record_and_undo_takes_back_the_winner() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let memory = ws.join("agents/a/MEMORY.md");
    // Both are shown the same MEMORY.md and entries before either writes.
    let (first, first_asked, first_go) =
        held(vec![tool_call("c1", "reflect", json!({"content": AFTER}))]);
    let (second, second_asked, second_go) = held(vec![tool_call(
        "c1",
        "reflect",
        json!({"content": "second\n"}),
    )]);
    let mut winner = spawn_consolidation(&env, &first);
    first_asked.recv().unwrap();
    let mut loser = spawn_consolidation(&env, &second);
    second_asked.recv().unwrap();
    first_go.send(()).unwrap();
    assert!(winner.wait().unwrap().success());
    second_go.send(()).unwrap();
    // The race took place: the second's reflect lost to the first's.
    assert_eq!(loser.wait().unwrap().code(), Some(6));
    assert_eq!(read(&memory), AFTER);
    let results = tool_results(&second.requests()[1]);
    assert!(
        results[0].1 && results[0].0.contains("has changed"),
        "{results:?}"
    );
    // The loser wrote nothing, so it keeps no record: undo takes back the
    // winner's, and its entries are new again.
    assert_eq!(only_record(&env)["done"], true);
    undo(&env)
        .success()
        .stdout("agents/a/MEMORY.md\n")
        .stderr(predicates::str::contains("2 entries new again"));
    assert_eq!(read(&memory), BEFORE);
    let next = scripted(Vec::new(), |_| {});
    consolidate(&env, &next).assert().success();
    let shown = user_text(&next.requests()[0]);
    assert!(shown.contains("Lunch was good."), "{shown}");
}

#[test]
fn two_reflects_of_its_own_in_one_reply_are_no_conflict() {
    let env = Env::new();
    setup(&env, "");
    let ws = workspace(&env);
    let both = json!({
        "model": "m", "stop_reason": "tool_use", "usage": {"input_tokens": 7, "output_tokens": 3},
        "content": [
            {"type": "tool_use", "id": "c1", "name": "reflect", "input": {"content": AFTER}},
            {"type": "tool_use", "id": "c2", "name": "reflect", "input": {"content": "other\n"}},
        ]
    });
    let server = scripted(vec![both], |_| {});
    consolidate(&env, &server)
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md\n");
    // One of the two was refused, as the hashes of one reply have it.
    let results = tool_results(&server.requests()[1]);
    assert_eq!(
        results.iter().filter(|(_, err)| *err).count(),
        1,
        "{results:?}"
    );
    let now = read(&ws.join("agents/a/MEMORY.md"));
    assert!(now == AFTER || now == "other\n", "{now}");
    // Its entries were taken in, and undo gives the text back.
    let record = only_record(&env);
    assert_eq!(record["done"], true);
    assert_eq!(record["files"][0]["before"], BEFORE);
    undo(&env).success().stdout("agents/a/MEMORY.md\n");
    assert_eq!(read(&ws.join("agents/a/MEMORY.md")), BEFORE);
}

#[test]
fn undo_gives_back_bytes_that_are_not_utf8_exactly() {
    let env = Env::new();
    setup(&env, "");
    let memory = workspace(&env).join("agents/a/MEMORY.md");
    // Written by hand in Latin-1.
    let latin1 = b"# Memory\n\n- Caf\xe9 Z\xfcrich opens at 8.\n- The canary runs 10 minutes.\n";
    fs::write(&memory, latin1).unwrap();
    let server = scripted(
        vec![tool_call("c1", "reflect", json!({"content": AFTER}))],
        |_| {},
    );
    consolidate(&env, &server).assert().success();
    assert_eq!(read(&memory), AFTER);
    undo(&env).success().stdout("agents/a/MEMORY.md\n");
    assert_eq!(fs::read(&memory).unwrap(), latin1);
}

#[test]
fn a_change_to_any_recorded_file_keeps_every_file_as_it_is() {
    // The second recorded file first: with the check before any write
    // gone, the first would be restored before the second refused.
    for changed in ["world/deploys.md", "agents/a/MEMORY.md"] {
        let env = Env::new();
        setup(&env, "");
        let ws = workspace(&env);
        let server = scripted(script(), |_| {});
        consolidate(&env, &server)
            .assert()
            .success()
            .stdout("agents/a/MEMORY.md\nworld/deploys.md\n");
        fs::write(ws.join(changed), "changed by someone\n").unwrap();
        let before = tree(&ws);
        let out = undo(&env).code(6).get_output().clone();
        // What is on disk first, then what it says: an undo that restored
        // one file and said "nothing was restored" fails here.
        assert_eq!(tree(&ws), before, "{changed}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!("{changed} changed since the consolidation"))
                && err.contains("nothing was restored"),
            "{err}"
        );
    }
}

/// Without `--json` the model's explanation is shown too (on stderr,
/// after the summary: stdout keeps the paths or the diff), and an answer
/// that wrote nothing says that its entries count as taken in all the
/// same, pointing at `--undo`, which makes them new again.
#[test]
fn the_text_report_shows_the_models_answer_and_a_no_write_answer_points_at_undo() {
    let answer = "\nthe model's answer:\n  Kept the canary's new length; removed the old one as superseded.\n";
    let env = Env::new();
    setup(&env, "");
    let server = scripted(script(), |_| {});
    consolidate(&env, &server)
        .assert()
        .success()
        .stdout("agents/a/MEMORY.md\nworld/deploys.md\n")
        .stderr(format!(
            "consolidated 2 entries of \"a\": changed 2 file(s){answer}"
        ));
    let dry = Env::new();
    setup(&dry, "");
    let server = scripted(script(), |_| {});
    consolidate(&dry, &server)
        .arg("--dry-run")
        .assert()
        .success()
        .stderr(format!(
            "consolidated 2 entries of \"a\": would change 2 file(s){answer}"
        ));

    // The model writes nothing: the entries are marked all the same.
    let env = Env::new();
    setup(&env, "");
    let server = scripted(Vec::new(), |_| {});
    consolidate(&env, &server)
        .assert()
        .success()
        .stdout("")
        .stderr(format!(
            "consolidated 2 entries of \"a\": changed no file{answer}\
             the 2 entries count as consolidated though no file changed: axe-notes-consolidate --undo a makes them new again\n"
        ));
    let idle = scripted(Vec::new(), |_| {});
    consolidate(&env, &idle)
        .assert()
        .success()
        .stderr(predicates::str::contains("nothing new to consolidate"));
    undo(&env)
        .success()
        .stderr(predicates::str::contains("2 entries new again"));
    let again = scripted(Vec::new(), |_| {});
    consolidate(&env, &again).assert().success();
    assert_eq!(again.requests().len(), 1);
}
