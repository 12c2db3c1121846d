//! One budget over every memory kind: `axe-context` on an agent whose run
//! log, notes and state are written by the real executables, the block
//! `axe-run` sends in its place, and `axe-gc --budget`.

use serde_json::Value;

use crate::server::{Answer, Server};
use crate::util::{AgentFile, Env, entries, entry, stdout};
use crate::wire::{anthropic_reply, served_by};

/// The agent `a`, keeping all three kinds, to write with more TOML or
/// as it is.
fn keeper(env: &Env) -> AgentFile<'_> {
    env.agent_file("a").memory("last_n = 3").notes("").state("")
}

/// Two run-log entries, MEMORY.md, a world topic, today's daily log and
/// a state with a pending step and a fact, each through its executable.
fn remember_everything(env: &Env, name: &str) {
    env.write(&env.log_path(name), entries(2));
    let run = |bin: &str, args: &[&str], stdin: &str| {
        env.cmd(bin)
            .args(args)
            .write_stdin(stdin.to_owned())
            .assert()
            .success();
    };
    run("axe-notes-reflect", &[name], "I review Rust.\n");
    run(
        "axe-notes-learn",
        &["--agent", name, "ops"],
        "Deploys are blue-green.\n",
    );
    run("axe-notes-remember", &[name, "shipped v2"], "");
    run(
        "axe-state-ingest",
        &[name],
        "AXE_MEMORY: STEP_PENDING tag the release\nAXE_MEMORY: KEY_FACT Go 1.19\n",
    );
}

fn context(env: &Env, args: &[&str]) -> Value {
    let out = env
        .cmd("axe-context")
        .args(args)
        .arg("--json")
        .assert()
        .success();
    serde_json::from_slice(&out.get_output().stdout).unwrap()
}

fn kinds(doc: &Value, key: &str) -> Vec<String> {
    doc[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["kind"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_kind_in_one_block_in_the_default_order() {
    let env = Env::new();
    keeper(&env).write();
    remember_everything(&env, "a");
    let out = env.cmd("axe-context").arg("a").assert().success();
    let text = stdout(out.get_output());
    let daily = text
        .split("# Recent Experiences\n\n")
        .nth(1)
        .expect("a daily section");
    assert!(
        daily.starts_with("# 20") && daily.contains("shipped v2"),
        "{text}"
    );
    let head = text.split("# Recent Experiences").next().unwrap();
    assert_eq!(
        head,
        format!(
            "# Session Memory\n\n### Task: main\nPending: tag the release\n\n### Key Facts\n- Go 1.19\n\n\
             # Your Memory\n\nI review Rust.\n\n\
             # Recent Runs\n\n{}\n\n{}\n\n\
             # World Knowledge\n\n## ops\n\nDeploys are blue-green.\n\n",
            entry(1).trim_end(),
            entry(0).trim_end()
        )
    );
    let doc = context(&env, &["a"]);
    assert_eq!(doc["budget"], 8000, "the default budget");
    assert_eq!(
        doc["kinds"],
        serde_json::json!(["state", "memory", "log", "world", "daily"])
    );
    assert_eq!(doc["chars"], text.chars().count());
    assert_eq!(
        kinds(&doc, "included"),
        ["task", "fact", "memory", "log", "log", "world", "daily"]
    );
    assert!(doc["left_out"].as_array().unwrap().is_empty());
}

#[test]
fn the_order_is_the_agents_and_kinds_not_listed_stay_out() {
    let env = Env::new();
    keeper(&env)
        .toml("[context]\nbudget = 500\norder = [\"world\", \"log\"]\n")
        .write();
    remember_everything(&env, "a");
    let doc = context(&env, &["a"]);
    assert_eq!(doc["budget"], 500);
    assert_eq!(doc["kinds"], serde_json::json!(["world", "log"]));
    assert_eq!(kinds(&doc, "included"), ["world", "log", "log"]);
    assert!(
        doc["text"]
            .as_str()
            .unwrap()
            .starts_with("# World Knowledge\n")
    );

    // A kind the agent does not keep is not offered, even when listed.
    env.agent(
        "b",
        "name = \"b\"\nmodel = \"anthropic/m\"\n[context]\norder = [\"state\", \"daily\"]\n",
    );
    let doc = context(&env, &["b"]);
    assert_eq!(doc["kinds"], serde_json::json!([]));
    assert_eq!(doc["text"], "");
}

#[test]
fn never_over_the_budget_and_everything_left_out_is_listed() {
    let env = Env::new();
    keeper(&env).write();
    remember_everything(&env, "a");
    // Larger items too: a long decision, a long topic, more entries.
    env.cmd("axe-state-ingest")
        .arg("a")
        .write_stdin(format!("AXE_MEMORY: DECISION {}\n", "d".repeat(300)))
        .assert()
        .success();
    env.cmd("axe-notes-learn")
        .args(["--agent", "a", "big"])
        .write_stdin("é".repeat(2000))
        .assert()
        .success();
    let all = context(&env, &["a", "--budget", "100000"]);
    let total = all["included"].as_array().unwrap().len();
    assert!(all["left_out"].as_array().unwrap().is_empty());
    for budget in (0..1400).step_by(7).chain([2500, 4300, 5000, 100_000]) {
        let doc = context(&env, &["a", "--budget", &budget.to_string()]);
        let (text, chars) = (
            doc["text"].as_str().unwrap(),
            doc["chars"].as_u64().unwrap(),
        );
        assert_eq!(text.chars().count() as u64, chars);
        assert!(chars <= budget, "{chars} > {budget}");
        let included = doc["included"].as_array().unwrap();
        let left_out = doc["left_out"].as_array().unwrap();
        assert_eq!(
            included.len() + left_out.len(),
            total,
            "{budget}: every item accounted for"
        );
        let sum: u64 = included.iter().map(|p| p["chars"].as_u64().unwrap()).sum();
        assert_eq!(sum, chars);
        let room = budget - chars;
        for p in left_out {
            // Left out only when it could not fit in the room at its turn,
            // which is never less than the room left at the end.
            match (p["chars"].as_u64(), p["bytes"].as_u64()) {
                (Some(c), None) => assert!(c > room, "{budget}: {p} fits in {room}"),
                (None, Some(b)) => assert!(b / 4 > room, "{budget}: {p} could fit in {room}"),
                _ => panic!("{p}"),
            }
        }
    }
}

#[test]
fn a_broken_kind_is_an_error_here_and_a_warning_in_a_run() {
    let env = Env::new();
    keeper(&env).toml("[context]\nbudget = 2000\n").write();
    remember_everything(&env, "a");
    let state = env.data_dir().join("axe/state/a.json");
    env.write(&state, "{\"tasks\": [");
    env.cmd("axe-context")
        .arg("a")
        .assert()
        .code(1)
        .stdout("")
        .stderr(format!(
            "state file {} is not a valid state: line 1, column 10: invalid type: sequence, expected a map\n",
            state.display()
        ));
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.starts_with("Warning: failed to load state for the context of \"a\": state file"),
        "{err}"
    );
    let text = stdout(out.get_output());
    assert!(text.contains("# Your Memory\n\nI review Rust."), "{text}");
    assert!(!text.contains("# Session Memory"), "{text}");
}

#[test]
fn bad_orders_are_agent_errors() {
    let env = Env::new();
    for (order, message) in [
        (
            "[\"state\", \"diary\"]",
            "failed to parse agent config \"a\": line 4, column 19: unknown variant `diary`, expected one of `state`, `memory`, `log`, `world`, `daily`\n",
        ),
        (
            "[\"log\", \"world\", \"log\"]",
            "context.order lists \"log\" twice (at 1 and 3)\n",
        ),
    ] {
        env.agent(
            "a",
            &format!("name = \"a\"\nmodel = \"anthropic/m\"\n[context]\norder = {order}\n"),
        );
        env.cmd("axe-context")
            .arg("a")
            .assert()
            .code(2)
            .stderr(message);
    }
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\n[context]\nbudget = -1\n",
    );
    env.cmd("axe-context")
        .arg("a")
        .assert()
        .code(2)
        .stderr("context.budget must be non-negative\n");
}

#[test]
fn a_run_sends_the_one_block_after_the_task_and_dry_run_lists_what_it_left_out() {
    let env = Env::new();
    keeper(&env).toml("[context]\nbudget = 300\n").write();
    remember_everything(&env, "a");
    env.cmd("axe-notes-learn")
        .args(["--agent", "a", "zz"])
        .write_stdin("x".repeat(5000))
        .assert()
        .success();
    let expected = context(&env, &["a", "--budget", "300"]);
    let block = expected["text"].as_str().unwrap();
    assert!(!block.is_empty());

    let server = Server::start(vec![Answer::json(200, &anthropic_reply("done"))]);
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "review it", "-v"])
        .assert()
        .success()
        .stdout("done");
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains(&format!(
            "Context:  {} of 300 characters (state, memory, log, world, daily), {} item(s) left out\n",
            expected["chars"],
            expected["left_out"].as_array().unwrap().len()
        )),
        "{err}"
    );
    let body = server.only_request().json();
    let user = body["messages"][0]["content"].as_str().unwrap().to_owned();
    assert_eq!(user, format!("review it\n\n{block}"));
    let system = body["system"].as_str().unwrap_or_default();
    assert!(
        !system.contains("## Memory"),
        "the entries go in the block: {system}"
    );

    // The run added an entry and an iteration; the dry run shows the block
    // as the next run would send it, and every item it left out.
    let next = context(&env, &["a", "--budget", "300"]);
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run"])
        .assert()
        .success();
    let text = stdout(out.get_output());
    let left = next["left_out"].as_array().unwrap();
    assert!(
        text.contains(&format!(
            "--- Context ({} of 300 characters: state, memory, log, world, daily) ---\n{}\nLeft out ({}):\n",
            next["chars"],
            next["text"].as_str().unwrap().trim_end(),
            left.len()
        )),
        "{text}"
    );
    assert!(
        text.contains("- world: world/zz.md (5000 bytes)\n"),
        "{text}"
    );
    assert!(!text.contains("--- Memory ---"), "{text}");
    assert!(!text.contains("--- Session Memory ---"), "{text}");
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["context"]["text"], next["text"]);
    assert_eq!(doc["context"]["left_out"], next["left_out"]);
    assert_eq!(doc["session_memory"], Value::Null);
}

#[test]
fn gc_with_a_budget_sends_only_the_newest_entries_that_fit() {
    let env = Env::new();
    env.memory_agent("g", "last_n = 100");
    env.write(&env.log_path("g"), entries(10));
    let budget = entry(9).chars().count() + entry(8).chars().count() + 5;
    let server = Server::start(vec![Answer::json(
        200,
        &anthropic_reply("## Patterns Found\nx"),
    )]);
    let out = served_by(env.cmd("axe-gc"), &server.url)
        .args(["g", "--dry-run", "--budget", &budget.to_string()])
        .assert()
        .success();
    let text = stdout(out.get_output());
    assert!(
        text.starts_with(&format!(
            "Agent: g\nEntries: 10\nSent:    the newest 2 ({} characters)\n",
            budget - 5
        )),
        "{text}"
    );
    let body = server.only_request().json();
    assert_eq!(
        body["messages"][0]["content"],
        format!("{}{}", entry(8), entry(9))
    );

    let server = Server::start(vec![Answer::json(200, &anthropic_reply("x"))]);
    let out = served_by(env.cmd("axe-gc"), &server.url)
        .args(["g", "--dry-run", "--json", "--budget", "100000"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["agents"][0]["sent"], 10);
    assert_eq!(
        server.only_request().json()["messages"][0]["content"],
        entries(10)
    );

    served_by(env.cmd("axe-gc"), "http://127.0.0.1:9")
        .args(["g", "--budget", "10"])
        .assert()
        .code(1)
        .stderr("no entry of the log fits in --budget 10\n");
    assert_eq!(
        crate::util::read(&env.log_path("g")),
        entries(10),
        "nothing trimmed"
    );
}
