//! The ledger (issue 34): one JSON line per model call, from every
//! command that calls one, checked against what the local server got.

use std::fs;
use std::path::PathBuf;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::run::tool_use;
use crate::server::{Answer, Recorded, Server};
use crate::util::{Env, entries};
use crate::wire::{KEY, anthropic_reply, openai_reply, served_by, system_text};

fn ledger_dir(env: &Env) -> PathBuf {
    env.data_dir().join("axe/ledger")
}

/// Every record of every ledger file, in file order.
fn records(env: &Env) -> Vec<Value> {
    let dir = ledger_dir(env);
    let Ok(list) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = list.map(|e| e.unwrap().path()).collect();
    names.sort();
    let mut all = Vec::new();
    for name in names {
        let text = fs::read_to_string(&name).unwrap();
        assert!(text.is_empty() || text.ends_with('\n'), "{text}");
        for line in text.lines() {
            all.push(serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")));
        }
    }
    all
}

/// `axe-llm` at `url`, standard input not read.
fn llm(env: &Env, url: &str) -> assert_cmd::Command {
    let mut cmd = served_by(env.cmd("axe-llm"), url);
    cmd.arg("-n");
    cmd
}

fn config(env: &Env, text: &str) {
    let dir = env.config_dir().join("axe");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("config.toml"), text).unwrap();
}

/// `boss` calls `helper` once through `call_agent`, then answers.
fn boss_and_helper(env: &Env) -> Server {
    for (name, extra) in [("boss", "sub_agents = [\"helper\"]"), ("helper", "")] {
        env.agent(
            name,
            &format!(
                "name = \"{name}\"\nmodel = \"anthropic/claude-test\"\nsystem_prompt = \"You are {name}.\"\n{extra}\n"
            ),
        );
    }
    Server::route(|r: &Recorded| {
        let body = r.json();
        if system_text(&body).contains("You are helper") {
            return Answer::json(200, &anthropic_reply("helped"));
        }
        let answered = body["messages"]
            .as_array()
            .is_some_and(|m| m.iter().any(|m| m.to_string().contains("tool_result")));
        if answered {
            Answer::json(200, &anthropic_reply("done"))
        } else {
            Answer::json(
                200,
                &tool_use(&[("c1", json!({"agent": "helper", "task": "help"}))]),
            )
        }
    })
}

fn field<'a>(records: &'a [Value], key: &str) -> Vec<&'a Value> {
    records.iter().map(|r| &r[key]).collect()
}

#[test]
fn axe_run_records_every_turn_and_sub_agent() {
    let env = Env::new();
    let server = boss_and_helper(&env);
    served_by(env.cmd("axe-run"), &server.url)
        .args(["boss", "go"])
        .assert()
        .success()
        .stdout("done");
    let recs = records(&env);
    assert_eq!(recs.len(), server.requests().len(), "{recs:#?}");
    assert_eq!(
        field(&recs, "agent"),
        [&json!("boss"), &json!("helper"), &json!("boss")]
    );
    let tokens: Vec<_> = recs
        .iter()
        .map(|r| (r["input_tokens"].clone(), r["output_tokens"].clone()))
        .collect();
    assert_eq!(
        tokens,
        [
            (json!(5), json!(3)),
            (json!(11), json!(7)),
            (json!(11), json!(7))
        ]
    );
    for r in &recs {
        assert_eq!(r["provider"], "anthropic");
        assert_eq!(r["model"], "claude-test");
        assert_eq!(r["status"], "ok");
        assert_eq!(r["exit_code"], 0);
        assert_eq!(r["retries"], 0);
        // Every run keeps its turn in a conversation; the sub-agent's
        // call is the run's too.
        assert_eq!(r["conversation"], recs[0]["conversation"]);
        assert!(r["conversation"].is_string(), "{r}");
        assert!(r["time"].as_str().unwrap().ends_with('Z'), "{r}");
        assert!(
            r.get("prompt").is_none() && r.get("answer").is_none(),
            "{r}"
        );
    }
    let month = &recs[0]["time"].as_str().unwrap()[..7];
    assert!(ledger_dir(&env).join(format!("{month}.jsonl")).is_file());
}

#[test]
fn axe_llm_records_retries_and_priced_cost() {
    let env = Env::new();
    config(
        &env,
        "[pricing.\"openai/gpt-test\"]\ninput = 3.0\noutput = 15.0\n",
    );
    let server = Server::start(vec![
        Answer::json(429, &json!({"error": {"message": "slow down"}})),
        Answer::json(200, &openai_reply("hi")),
    ]);
    llm(&env, &server.url)
        .args(["-m", "openai/gpt-test", "--retries", "2", "hello"])
        .assert()
        .success()
        .stdout("hi");
    assert_eq!(server.requests().len(), 2);
    let recs = records(&env);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    let r = &recs[0];
    assert_eq!(r["agent"], Value::Null);
    assert_eq!(r["provider"], "openai");
    assert_eq!(r["model"], "gpt-test");
    assert_eq!(r["retries"], 1);
    assert_eq!(
        (r["input_tokens"].as_u64(), r["output_tokens"].as_u64()),
        (Some(11), Some(7))
    );
    // The price is applied when the ledger is read, not frozen into it.
    assert_eq!(
        (&r["cost"], &r["cost_source"]),
        (&Value::Null, &Value::Null)
    );
    let listed = &log_json(&env, &[])["calls"][0];
    let cost = listed["cost"].as_f64().unwrap();
    assert!(
        (cost - (11.0 * 3.0 + 7.0 * 15.0) / 1e6).abs() < 1e-12,
        "{cost}"
    );
    assert_eq!(listed["cost_source"], "pricing");
}

/// A call no price is known for reads as unknown (`null`, `?`, counted
/// as unpriced), never as $0; a `[pricing]` added afterwards prices it.
#[test]
fn an_unknown_cost_is_unknown_until_a_price_is_added_which_prices_the_past() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("hi"))]);
    llm(&env, &server.url)
        .args(["-m", "openai/qwen-local", "hello"])
        .assert()
        .success();
    let call = &log_json(&env, &[])["calls"][0];
    assert_eq!(
        (&call["cost"], &call["cost_source"]),
        (&Value::Null, &Value::Null)
    );
    let sums = log_json(&env, &["--sum", "model"]);
    assert_eq!(sums["groups"][0]["cost"], Value::Null, "{sums}");
    assert_eq!(sums["groups"][0]["cost_unknown"], 1);
    let text = |args: &[&str]| {
        let out = env.cmd("axe-log").args(args).assert().success();
        let out = out.get_output();
        (
            String::from_utf8(out.stdout.clone()).unwrap(),
            String::from_utf8(out.stderr.clone()).unwrap(),
        )
    };
    let (list, hint) = text(&[]);
    assert_eq!(list.split('\t').nth(5), Some("?"), "{list}");
    assert_eq!(
        hint,
        "note: 1 call(s) have no price: set one for openai/qwen-local under [pricing.\"PROVIDER/MODEL\"] in config.toml (it prices past calls too)\n"
    );
    let (sum, _) = text(&["--sum", "model"]);
    assert_eq!(
        sum,
        "KEY\tCALLS\tINPUT\tOUTPUT\tCOST\nopenai/qwen-local\t1\t11\t7\t? (1 unpriced)\n"
    );

    // A price added now prices the call made before it.
    config(
        &env,
        "[pricing.\"openai/qwen-local\"]\ninput = 1.0\noutput = 2.0\n",
    );
    let call = &log_json(&env, &[])["calls"][0];
    assert_eq!(call["cost"], json!((11.0 + 7.0 * 2.0) / 1e6));
    assert_eq!(call["cost_source"], "pricing");
    let sums = log_json(&env, &["--sum", "model"]);
    assert_eq!(sums["groups"][0]["cost"], json!((11.0 + 7.0 * 2.0) / 1e6));
    assert_eq!(sums["groups"][0]["cost_unknown"], 0);
    let (sum, hint) = text(&["--sum", "model"]);
    assert_eq!(
        sum,
        "KEY\tCALLS\tINPUT\tOUTPUT\tCOST\nopenai/qwen-local\t1\t11\t7\t$0.000025\n"
    );
    assert_eq!(hint, "");
}

/// What the provider reported is what was billed: it wins over a
/// `[pricing]` estimate. A record of an older axe (a cost and no
/// `cost_source`) is priced as of today where a price is set, keeps a
/// cost above zero where none is, and its 0 is no known $0.
#[test]
fn a_reported_cost_wins_and_an_older_records_zero_is_not_a_price() {
    let env = Env::new();
    config(
        &env,
        "[pricing.\"openrouter/some/model\"]\ninput = 100.0\noutput = 100.0\n[pricing.\"openai/priced\"]\ninput = 1.0\noutput = 1.0\n",
    );
    let mut reply = openai_reply("hi");
    reply["usage"]["cost"] = json!(0.0042);
    let server = Server::start(vec![Answer::json(200, &reply)]);
    llm(&env, &server.url)
        .args(["-m", "openrouter/some/model", "hello"])
        .assert()
        .success();
    let stored = &records(&env)[0];
    assert_eq!(
        (&stored["cost"], &stored["cost_source"]),
        (&json!(0.0042), &json!("provider"))
    );
    // Older records, as an axe before cost_source wrote them.
    let old = |time: &str, model: &str, cost: f64| {
        rec(
            &format!("2020-01-01T0{time}:00:00.000Z"),
            Some("old"),
            model,
            (1000, 1000),
            Some(cost),
        )
    };
    let text = [
        old("1", "openai/local", 0.0),
        old("2", "openai/billed", 0.5),
        old("3", "openai/priced", 0.0),
        old("4", "openai/priced", 0.7),
    ];
    fs::write(ledger_dir(&env).join("2020-01.jsonl"), text.concat()).unwrap();
    let calls = log_json(&env, &[]);
    let costs: Vec<_> = calls["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["model"].as_str().unwrap().to_owned(),
                c["cost"].clone(),
                c["cost_source"].clone(),
            )
        })
        .collect();
    assert_eq!(
        costs,
        [
            ("some/model".to_owned(), json!(0.0042), json!("provider")),
            ("priced".to_owned(), json!(0.002), json!("pricing")),
            ("priced".to_owned(), json!(0.002), json!("pricing")),
            ("billed".to_owned(), json!(0.5), json!("recorded")),
            ("local".to_owned(), Value::Null, Value::Null),
        ]
    );
    let agents = log_json(&env, &["--sum", "agent"]);
    assert_eq!(agents["groups"][1]["key"], "old");
    assert_eq!(agents["groups"][1]["cost"], json!(0.5 + 0.002 + 0.002));
    assert_eq!(agents["groups"][1]["cost_unknown"], 1);
    let out = env
        .cmd("axe-log")
        .args(["--sum", "agent"])
        .assert()
        .success();
    assert!(
        String::from_utf8_lossy(&out.get_output().stdout)
            .contains("old\t4\t4000\t4000\t$0.504000 + 1 unpriced\n"),
        "{out:?}"
    );
}

#[test]
fn a_failed_call_is_recorded_with_its_exit_code() {
    let env = Env::new();
    let server = Server::start(vec![Answer::json(
        401,
        &json!({"error": {"message": "bad key"}}),
    )]);
    llm(&env, &server.url)
        .args(["-m", "openai/gpt-test", "hello"])
        .assert()
        .code(3);
    let recs = records(&env);
    assert_eq!(recs.len(), 1);
    assert_eq!(
        (recs[0]["status"].as_str(), recs[0]["exit_code"].as_u64()),
        (Some("error"), Some(3))
    );
}

#[test]
fn openrouter_cost_is_kept_as_reported() {
    let env = Env::new();
    let mut reply = openai_reply("hi");
    reply["usage"]["cost"] = json!(0.0042);
    let server = Server::start(vec![Answer::json(200, &reply)]);
    llm(&env, &server.url)
        .args(["-m", "openrouter/some/model", "hello"])
        .assert()
        .success();
    let recs = records(&env);
    assert_eq!(recs[0]["cost"], json!(0.0042));
    assert_eq!(recs[0]["model"], "some/model");
}

#[test]
fn axe_gc_records_its_analysis() {
    let env = Env::new();
    env.memory_agent("mem", "");
    fs::create_dir_all(env.log_path("mem").parent().unwrap()).unwrap();
    fs::write(env.log_path("mem"), entries(3)).unwrap();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("analysis"))]);
    served_by(env.cmd("axe-gc"), &server.url)
        .args(["mem", "--dry-run"])
        .assert()
        .success();
    let recs = records(&env);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(recs[0]["agent"], "mem");
    assert_eq!(recs[0]["model"], "claude-3");
    assert_eq!(recs[0]["input_tokens"], 11);
}

#[test]
fn no_log_records_nothing() {
    let env = Env::new();
    let server = boss_and_helper(&env);
    served_by(env.cmd("axe-run"), &server.url)
        .args(["boss", "go", "--no-log"])
        .assert()
        .success();
    let server = Server::start(vec![Answer::json(200, &openai_reply("hi"))]);
    llm(&env, &server.url)
        .args(["-m", "openai/gpt-test", "--no-log", "hello"])
        .assert()
        .success();
    env.memory_agent("mem", "");
    fs::create_dir_all(env.log_path("mem").parent().unwrap()).unwrap();
    fs::write(env.log_path("mem"), entries(3)).unwrap();
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("analysis"))]);
    served_by(env.cmd("axe-gc"), &server.url)
        .args(["mem", "--dry-run", "--no-log"])
        .assert()
        .success();
    assert_eq!(server.requests().len(), 1);
    assert_eq!(records(&env), Vec::<Value>::new());
}

#[test]
fn text_is_kept_only_when_asked_and_redacted() {
    let env = Env::new();
    let secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    let server = Server::start(vec![
        Answer::json(200, &openai_reply(&format!("echo {secret}"))),
        Answer::json(200, &openai_reply(&format!("echo {secret}"))),
    ]);
    let call = |env: &Env| {
        llm(env, &server.url)
            .args([
                "-m",
                "openai/gpt-test",
                &format!("my key {KEY} and {secret}"),
            ])
            .assert()
            .success();
    };
    call(&env);
    config(&env, "[log]\ntext = true\n");
    call(&env);
    let recs = records(&env);
    assert_eq!(recs.len(), 2);
    assert!(recs[0].get("prompt").is_none() && recs[0].get("answer").is_none());
    let kept = recs[1].to_string();
    assert!(!kept.contains(KEY) && !kept.contains(secret), "{kept}");
    assert!(
        recs[1]["prompt"].as_str().unwrap().starts_with("my key "),
        "{kept}"
    );
    assert!(
        recs[1]["answer"].as_str().unwrap().starts_with("echo "),
        "{kept}"
    );
    let raw = fs::read_to_string(
        fs::read_dir(ledger_dir(&env))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    )
    .unwrap();
    assert!(!raw.contains(KEY) && !raw.contains(secret));
}

#[test]
fn a_full_file_is_followed_by_the_next() {
    let env = Env::new();
    config(&env, "[log]\nmax_bytes = 100\n");
    let server = Server::start(
        (0..3)
            .map(|_| Answer::json(200, &openai_reply("hi")))
            .collect(),
    );
    for _ in 0..3 {
        llm(&env, &server.url)
            .args(["-m", "openai/gpt-test", "hello"])
            .assert()
            .success();
    }
    let recs = records(&env);
    assert_eq!(recs.len(), 3);
    let month = &recs[0]["time"].as_str().unwrap()[..7];
    let mut names: Vec<String> = fs::read_dir(ledger_dir(&env))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            format!("{month}.2.jsonl"),
            format!("{month}.3.jsonl"),
            format!("{month}.jsonl")
        ]
    );
}

#[test]
fn a_ledger_that_cannot_be_written_warns_and_the_call_succeeds() {
    let env = Env::new();
    // A file where the directory goes: no one, root included, makes a
    // ledger file under it.
    fs::create_dir_all(env.data_dir().join("axe")).unwrap();
    fs::write(ledger_dir(&env), "not a directory").unwrap();
    let server = Server::start(vec![Answer::json(200, &openai_reply("hi"))]);
    let out = llm(&env, &server.url)
        .args(["-m", "openai/gpt-test", "hello"])
        .assert()
        .success()
        .stdout("hi")
        .get_output()
        .clone();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("warning: the ledger was not written ("),
        "{stderr}"
    );
}

/// A run of three calls whose ledger cannot be written says so once.
#[test]
fn an_unwritable_ledger_is_one_warning_for_a_whole_run() {
    let env = Env::new();
    fs::create_dir_all(env.data_dir().join("axe")).unwrap();
    fs::write(ledger_dir(&env), "not a directory").unwrap();
    let server = boss_and_helper(&env);
    let out = served_by(env.cmd("axe-run"), &server.url)
        .args(["boss", "go"])
        .assert()
        .success()
        .stdout("done")
        .get_output()
        .clone();
    assert_eq!(server.requests().len(), 3);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.matches("the ledger was not written").count(),
        1,
        "{stderr}"
    );
}

#[test]
fn eight_concurrent_runs_leave_every_line_whole() {
    let env = Env::new();
    let server = boss_and_helper(&env);
    let children: Vec<_> = (0..8)
        .map(|i| {
            let mut cmd = env.std_cmd("axe-run");
            cmd.env("AXE_ANTHROPIC_BASE_URL", &server.url)
                .env("ANTHROPIC_API_KEY", KEY);
            cmd.args(["boss", &format!("task {i}")])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        assert!(child.wait().unwrap().success());
    }
    let recs = records(&env);
    // Three calls each: boss, helper, boss again.
    assert_eq!(recs.len(), 8 * 3);
    assert_eq!(recs.len(), server.requests().len());
    let helpers = recs.iter().filter(|r| r["agent"] == "helper").count();
    assert_eq!(helpers, 8);
    // The sums agree: boss's two turns (5+11 in) and helper's one (11 in)
    // for each run.
    let sums = log_json(&env, &["--sum", "agent"]);
    assert_eq!(sums["groups"][0]["key"], "boss");
    assert_eq!(sums["groups"][0]["calls"], 16);
    assert_eq!(sums["groups"][0]["input_tokens"], 8 * (5 + 11));
    assert_eq!(sums["groups"][1]["calls"], 8);
    assert_eq!(sums["groups"][1]["output_tokens"], 8 * 7);
}

/// A record as the ledger writes it.
fn rec(
    time: &str,
    agent: Option<&str>,
    model: &str,
    tokens: (u64, u64),
    cost: Option<f64>,
) -> String {
    let (provider, model) = model.split_once('/').unwrap();
    json!({
        "time": time, "agent": agent, "provider": provider, "model": model,
        "input_tokens": tokens.0, "output_tokens": tokens.1,
        "cache_read_tokens": null, "cache_write_tokens": null, "cost": cost,
        "duration_ms": 5, "retries": 0, "status": "ok", "exit_code": 0,
        "conversation": if agent == Some("boss") { json!("c-1") } else { Value::Null },
    })
    .to_string()
        + "\n"
}

/// Two months of calls, written as the ledger would have.
fn two_months(env: &Env) {
    let dir = ledger_dir(env);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("2026-10.jsonl"),
        rec(
            "2026-10-30T10:00:00.000Z",
            Some("boss"),
            "anthropic/claude-a",
            (100, 10),
            Some(0.5),
        ),
    )
    .unwrap();
    fs::write(
        dir.join("2026-11.jsonl"),
        [
            rec(
                "2026-11-01T09:00:00.000Z",
                Some("helper"),
                "openai/gpt-b",
                (20, 2),
                None,
            ),
            rec(
                "2026-11-01T10:00:00.000Z",
                None,
                "openai/gpt-b",
                (30, 3),
                Some(0.25),
            ),
            "not a record\n".to_owned(),
        ]
        .concat(),
    )
    .unwrap();
    fs::write(
        dir.join("2026-11.2.jsonl"),
        rec(
            "2026-11-02T08:00:00.000Z",
            Some("boss"),
            "anthropic/claude-a",
            (200, 20),
            Some(1.0),
        ),
    )
    .unwrap();
}

fn log_json(env: &Env, args: &[&str]) -> Value {
    let out = env
        .cmd("axe-log")
        .args(args)
        .arg("--json")
        .assert()
        .success()
        .get_output()
        .clone();
    serde_json::from_slice(&out.stdout).unwrap()
}

fn times(doc: &Value) -> Vec<String> {
    doc["calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["time"].as_str().unwrap()[..13].to_owned())
        .collect()
}

#[test]
fn axe_log_lists_newest_first_and_filters() {
    let env = Env::new();
    two_months(&env);
    let all = log_json(&env, &[]);
    assert_eq!(
        times(&all),
        [
            "2026-11-02T08",
            "2026-11-01T10",
            "2026-11-01T09",
            "2026-10-30T10"
        ]
    );
    assert_eq!(
        times(&log_json(&env, &["--agent", "boss"])),
        ["2026-11-02T08", "2026-10-30T10"]
    );
    assert_eq!(
        times(&log_json(&env, &["--model", "gpt-b"])),
        ["2026-11-01T10", "2026-11-01T09"]
    );
    assert_eq!(
        times(&log_json(
            &env,
            &["--model", "anthropic/claude-a", "--since", "2026-11-01"]
        )),
        ["2026-11-02T08"]
    );
    assert_eq!(
        times(&log_json(&env, &["--until", "2026-11-01T10:00:00Z"])),
        ["2026-11-01T09", "2026-10-30T10"]
    );
    assert_eq!(times(&log_json(&env, &["--conversation", "c-1"])).len(), 2);
    // An age, from now: a long one takes them all.
    let recent = log_json(&env, &["--since", "100000d"]);
    assert_eq!(times(&recent).len(), 4);

    let text = env.cmd("axe-log").assert().success().get_output().clone();
    let stdout = String::from_utf8(text.stdout).unwrap();
    assert_eq!(
        stdout.lines().next().unwrap(),
        "2026-11-02T08:00:00.000Z\tboss\tanthropic/claude-a\t200\t20\t$1.000000\t5ms\tok"
    );
    assert_eq!(stdout.lines().nth(1).unwrap().split('\t').nth(1), Some("-"));
    assert_eq!(
        String::from_utf8(text.stderr).unwrap(),
        "warning: 1 line(s) of the ledger are no record and were left out\n\
         note: 1 call(s) have no price: set one for openai/gpt-b under [pricing.\"PROVIDER/MODEL\"] in config.toml (it prices past calls too)\n"
    );
}

#[test]
fn axe_log_sums_by_day_agent_and_model() {
    let env = Env::new();
    two_months(&env);
    let agents = log_json(&env, &["--sum", "agent"]);
    assert_eq!(agents["sum"], "agent");
    let groups: Vec<_> = agents["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["key"].clone(),
                g["calls"].clone(),
                g["input_tokens"].clone(),
                g["cost"].clone(),
                g["cost_unknown"].clone(),
            )
        })
        .collect();
    assert_eq!(
        groups,
        [
            (json!("-"), json!(1), json!(30), json!(0.25), json!(0)),
            (json!("boss"), json!(2), json!(300), json!(1.5), json!(0)),
            (json!("helper"), json!(1), json!(20), Value::Null, json!(1)),
        ]
    );
    let days = log_json(&env, &["--sum", "day", "--since", "2026-11-01"]);
    let keys: Vec<_> = days["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["key"].clone())
        .collect();
    assert_eq!(keys, [json!("2026-11-01"), json!("2026-11-02")]);
    let models = log_json(&env, &["--sum", "model"]);
    assert_eq!(models["groups"][0]["key"], "anthropic/claude-a");
    assert_eq!(models["groups"][0]["output_tokens"], 30);

    let text = env
        .cmd("axe-log")
        .args(["--sum", "model"])
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(text.stdout).unwrap(),
        "KEY\tCALLS\tINPUT\tOUTPUT\tCOST\nanthropic/claude-a\t2\t300\t30\t$1.500000\nopenai/gpt-b\t2\t50\t5\t$0.250000 + 1 unpriced\n"
    );
}

#[test]
fn axe_log_refuses_what_it_cannot_read() {
    let env = Env::new();
    env.cmd("axe-log")
        .args(["--sum", "week"])
        .assert()
        .code(1)
        .stderr("error parsing flag --sum: \"week\" is not one of day, agent, model\n");
    env.cmd("axe-log")
        .args(["--since", "yesterday"])
        .assert()
        .code(1)
        .stderr(predicates::str::starts_with(
            "error parsing flag --since: \"yesterday\"",
        ));
    // No ledger yet: nothing, and no error.
    env.cmd("axe-log").assert().success().stdout("");
}

/// `[log] max_bytes` has no upper bound, so a month's file may pass
/// 1 GiB: it is read as a stream, every record in it listed, not refused
/// whole. The file is sparse (a hole of zero bytes past 1 GiB between two
/// records), so nothing of that size is written to disk; the hole is one
/// line that is no record.
#[test]
fn a_ledger_file_over_a_gibibyte_is_read_whole() {
    use std::io::{Seek, SeekFrom, Write};
    let env = Env::new();
    let dir = ledger_dir(&env);
    fs::create_dir_all(&dir).unwrap();
    let path = dir.join("2026-11.jsonl");
    let mut file = fs::File::create(&path).unwrap();
    let first = rec(
        "2026-11-01T09:00:00.000Z",
        Some("a"),
        "openai/gpt-b",
        (1, 1),
        None,
    );
    file.write_all(first.as_bytes()).unwrap();
    file.seek(SeekFrom::Start((1 << 30) + 4096)).unwrap();
    let last = rec(
        "2026-11-30T09:00:00.000Z",
        Some("b"),
        "openai/gpt-b",
        (2, 2),
        None,
    );
    file.write_all(format!("\n{last}").as_bytes()).unwrap();
    drop(file);
    assert!(fs::metadata(&path).unwrap().len() > 1 << 30);
    let out = env
        .cmd("axe-log")
        .args(["--json"])
        .assert()
        .success()
        .get_output()
        .clone();
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(times(&doc), ["2026-11-30T09", "2026-11-01T09"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 line(s) of the ledger are no record"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let _ = fs::remove_file(&path);
}

/// The ledger is a file: what it says is listed and summed with control
/// characters and bidi overrides escaped, never acting on the terminal.
#[test]
fn axe_log_escapes_what_the_ledger_says() {
    let env = Env::new();
    let dir = ledger_dir(&env);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("2026-11.jsonl"),
        rec(
            "2026-11-01T09:00:00.000Z",
            Some("\x1b]0;pwned\x07"),
            "openai/gpt\u{202e}b\u{9b}2J",
            (1, 1),
            None,
        ),
    )
    .unwrap();
    for args in [&[][..], &["--sum", "agent"], &["--sum", "model"]] {
        let out = env
            .cmd("axe-log")
            .args(args)
            .assert()
            .success()
            .get_output()
            .stdout
            .clone();
        let text = String::from_utf8(out).unwrap();
        for raw in ['\x1b', '\x07', '\u{9b}', '\u{202e}'] {
            assert!(!text.contains(raw), "{args:?}: {raw:?} shown raw: {text:?}");
        }
        let escaped = match args {
            [_, "agent"] => "\\x1b]0;pwned\\x07",
            _ => "openai/gpt\\u{202e}b\\u{9b}2J",
        };
        assert!(text.contains(escaped), "{args:?}: {text}");
    }
}

#[test]
fn json_says_refused_when_the_answer_declines() {
    let env = Env::new();
    env.agent("shy", "name = \"shy\"\nmodel = \"anthropic/claude-test\"\n");
    let server = Server::start(vec![
        Answer::json(
            200,
            &anthropic_reply("I'm sorry, but I can\u{2019}t help with that."),
        ),
        Answer::json(200, &anthropic_reply("Here it is.")),
    ]);
    for expected in [true, false] {
        let out = served_by(env.cmd("axe-run"), &server.url)
            .args(["shy", "go", "--json"])
            .assert()
            .success()
            .get_output()
            .clone();
        let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
        let refused = doc.get("refused").cloned();
        assert_eq!(refused, expected.then_some(json!(true)), "{doc}");
    }
}

/// The OpenAI-compatible gateways: each at its own variable and path,
/// with its own key variable; Requesty's `usage.cost` is the call's cost,
/// whole and streamed, in `--json` and in the ledger.
#[test]
fn the_gateways_speak_openais_wire_at_their_own_address() {
    use crate::server::sse_data;
    for (provider, key_var, path) in [
        ("requesty", "REQUESTY_API_KEY", "/v1/chat/completions"),
        ("atlascloud", "ATLASCLOUD_API_KEY", "/v1/chat/completions"),
        ("edenai", "EDENAI_API_KEY", "/v3/chat/completions"),
    ] {
        let env = Env::new();
        let mut whole = openai_reply("hi");
        whole["usage"]["cost"] = json!(0.002);
        let streamed = Answer::sse(&[
            sse_data(&json!({"model": "m", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": null}]}).to_string()),
            sse_data(&json!({"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}).to_string()),
            sse_data(&json!({"model": "m", "choices": [], "usage": {"prompt_tokens": 11, "completion_tokens": 7, "cost": 0.003}}).to_string()),
            sse_data("[DONE]"),
        ]);
        let server = Server::start(vec![Answer::json(200, &whole), streamed]);
        // The base URL as the gateway documents it, with its version.
        let base = format!("{}{}", server.url, &path[..3]);
        for stream in [false, true] {
            let mut cmd = env.cmd("axe-llm");
            cmd.env(format!("AXE_{}_BASE_URL", provider.to_uppercase()), &base)
                .env(key_var, KEY)
                .args([
                    "-n",
                    "--json",
                    "-m",
                    &format!("{provider}/vendor/model-x"),
                    "hello",
                ]);
            if stream {
                cmd.arg("--stream");
            }
            let out = cmd.assert().success().get_output().clone();
            let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(doc["content"], "hi", "{provider}");
            assert_eq!(
                doc["cost"],
                json!(if stream { 0.003 } else { 0.002 }),
                "{provider} {doc}"
            );
        }
        let requests = server.requests();
        assert_eq!(requests.len(), 2);
        for r in &requests {
            assert_eq!(r.path, path, "{provider}");
            assert_eq!(
                r.header("authorization"),
                Some(format!("Bearer {KEY}").as_str())
            );
            assert_eq!(r.json()["model"], "vendor/model-x");
        }
        let recs = records(&env);
        assert_eq!(
            field(&recs, "provider"),
            [&json!(provider), &json!(provider)]
        );
        assert_eq!(field(&recs, "cost"), [&json!(0.002), &json!(0.003)]);
    }
}

#[test]
fn a_consolidation_records_its_calls_unless_no_log() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\n",
    );
    for (i, no_log) in [false, true].into_iter().enumerate() {
        env.cmd("axe-notes-remember")
            .args(["a", &format!("fact {i}")])
            .assert()
            .success();
        let server = Server::start(vec![Answer::json(200, &anthropic_reply("nothing to fold"))]);
        let mut cmd = served_by(env.cmd("axe-notes-consolidate"), &server.url);
        cmd.arg("a");
        if no_log {
            cmd.arg("--no-log");
        }
        cmd.assert().success();
        assert_eq!(server.requests().len(), 1);
    }
    let recs = records(&env);
    assert_eq!(recs.len(), 1, "{recs:#?}");
    assert_eq!(
        (recs[0]["agent"].as_str(), recs[0]["model"].as_str()),
        (Some("a"), Some("m"))
    );
    assert_eq!(recs[0]["output_tokens"], 7);
}

/// `axe-run --no-log` keeps every call of the command out of the ledger:
/// the run's, and the consolidation it starts after it when one is due.
#[test]
fn no_log_on_a_run_keeps_its_consolidation_out_too() {
    let env = Env::new();
    env.agent(
        "a",
        "name = \"a\"\nmodel = \"anthropic/m\"\n[notes]\nenabled = true\nconsolidate_every = \"24h\"\nconsolidate_min_entries = 1\n",
    );
    env.cmd("axe-notes-remember")
        .args(["a", "a fact"])
        .assert()
        .success();
    let server = Server::start(vec![
        Answer::json(200, &anthropic_reply("done")),
        Answer::json(200, &anthropic_reply("nothing to fold")),
    ]);
    served_by(env.cmd("axe-run"), &server.url)
        .args(["a", "--no-log", "-n", "hello"])
        .assert()
        .success();
    assert_eq!(server.requests().len(), 2, "the run and its consolidation");
    assert_eq!(records(&env), Vec::<Value>::new());
}

/// The ledger and the conversations are the machine's own: a sync of the
/// data directory leaves them out, so two machines' ledgers never
/// conflict and no run's transcript leaves the machine.
#[test]
fn a_sync_never_commits_the_ledger_or_the_conversations() {
    if !crate::util::have("git") {
        crate::util::unavailable("git is not on PATH", "apt-get install git");
        return;
    }
    let m = crate::sync::Machine::new();
    let server = Server::start(vec![Answer::json(200, &openai_reply("hi"))]);
    llm(&m.env, &server.url)
        .args(["-m", "openai/gpt-test", "hello"])
        .assert()
        .success();
    assert_eq!(records(&m.env).len(), 1);
    let kept = m.env.data_dir().join("axe/conversations");
    assert!(kept.is_dir(), "the call kept no conversation");
    m.remember("a fact");
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("memory.git");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    git(&["init", "-q", "--bare", bare.to_str().unwrap()]);
    m.init(&bare);
    let files = git(&[
        "--git-dir",
        bare.to_str().unwrap(),
        "ls-tree",
        "-r",
        "--name-only",
        "HEAD",
    ]);
    assert!(files.lines().any(|f| f.ends_with(".md")), "{files}");
    assert!(!files.contains("ledger"), "{files}");
    assert!(!files.contains("conversations"), "{files}");
}

/// `llm logs`' everyday flags (issue 41): `-n` the newest calls, `-c` the
/// conversation used last, `--cid ID` a given one, `-q` a search of the
/// text `[log] text = true` keeps.
#[test]
fn axe_log_takes_llm_logs_everyday_flags() {
    let env = Env::new();
    config(&env, "[log]\ntext = true\n");
    let reply = |text: &str| Answer::json(200, &anthropic_reply(text));
    let server = Server::start(vec![reply("Paris."), reply("Two million."), reply("Blue.")]);
    env.agent("geo", "name = \"geo\"\nmodel = \"anthropic/claude-test\"\n");
    let run = || served_by(env.cmd("axe-run"), &server.url);
    let out = run()
        .args(["geo", "--json", "capital of France?"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    let geo = doc["conversation_id"].as_str().unwrap().to_owned();
    run()
        .args(["geo", "-c", "how many people?"])
        .assert()
        .success();
    llm(&env, &server.url)
        .args(["-m", "anthropic/claude-test", "colour of the sky?"])
        .assert()
        .success();

    // -n N: the newest N calls.
    let newest = log_json(&env, &["-n", "1"]);
    assert_eq!(newest["calls"].as_array().unwrap().len(), 1, "{newest}");
    assert_eq!(newest["calls"][0]["agent"], Value::Null);
    let text = env.cmd("axe-log").args(["-n", "2"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&text.stdout).lines().count(), 2);
    assert_eq!(
        log_json(&env, &["-n", "0"])["calls"]
            .as_array()
            .unwrap()
            .len(),
        3
    );

    // -c: the conversation used last, anyone's (axe-llm's here), through
    // the front door as `axe log -c`.
    env.cmd("axe")
        .args(["log", "-c"])
        .assert()
        .success()
        .stdout("user: colour of the sky?\nassistant: Blue.\n");
    // --agent narrows it; -n N shows its last N turns.
    env.cmd("axe-log")
        .args(["-c", "--agent", "geo", "-n", "1"])
        .assert()
        .success()
        .stdout("user: how many people?\nassistant: Two million.\n");
    // --cid ID, as JSON.
    let shown = log_json(&env, &["--cid", &geo]);
    assert_eq!(shown["agent"], json!("geo"));
    assert_eq!(shown["conversation_id"], json!(geo));
    let said: Vec<&str> = shown["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(
        said,
        [
            "capital of France?",
            "Paris.",
            "how many people?",
            "Two million."
        ]
    );
    env.cmd("axe-log")
        .args(["--cid", "no-such"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("no conversation \"no-such\""));

    // -q: the calls whose kept text holds it, case aside.
    let found = log_json(&env, &["-q", "PARIS"]);
    let calls = found["calls"].as_array().unwrap();
    assert_eq!(calls.len(), 1, "{found}");
    assert_eq!(calls[0]["answer"], json!("Paris."));
    assert!(
        log_json(&env, &["-q", "nowhere"])["calls"]
            .as_array()
            .unwrap()
            .is_empty()
    );

    // Showing a conversation is not a filter of calls.
    env.cmd("axe-log")
        .args(["-c", "--sum", "agent"])
        .assert()
        .code(1)
        .stderr(predicates::str::contains(
            "cannot use both --current and --sum",
        ));
    // With [log] text off the search says why it may find nothing.
    config(&env, "");
    env.cmd("axe-log")
        .args(["-q", "paris"])
        .assert()
        .success()
        .stderr(predicates::str::contains(
            "[log] text is off in config.toml",
        ));
}

/// The hint names each unpriced model once, in the order first called,
/// at most three of them; the calls it counts are every unpriced one.
#[test]
fn the_unpriced_hint_names_each_model_once_and_at_most_three() {
    let env = Env::new();
    let dir = ledger_dir(&env);
    fs::create_dir_all(&dir).unwrap();
    let call = |hour: usize, model: &str, cost: Option<f64>| {
        rec(
            &format!("2026-11-01T{hour:02}:00:00.000Z"),
            None,
            model,
            (10, 1),
            cost,
        )
    };
    let text = [
        call(1, "openai/a", None),
        call(2, "ollama/b", None),
        call(3, "openai/a", None),
        call(4, "anthropic/priced", Some(0.5)),
        call(5, "openai/c", None),
        call(6, "openai/d", None),
        call(7, "ollama/e", None),
    ];
    fs::write(dir.join("2026-11.jsonl"), text.concat()).unwrap();
    env.cmd("axe-log")
        .args(["--sum", "model"])
        .assert()
        .success()
        .stderr(
            "note: 6 call(s) have no price: set one for openai/a, ollama/b, openai/c and 2 more \
             under [pricing.\"PROVIDER/MODEL\"] in config.toml (it prices past calls too)\n",
        );
}
