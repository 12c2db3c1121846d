//! Local agent directories (`--agents-dir`, `./axe/agents`) and
//! `axe-run -p/--prompt`.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::server::{Answer, Server};
use crate::util::{AgentFile, Env, stdout};
use crate::wire::anthropic_reply;

/// The agent `name` whose description and system prompt both say `who`,
/// to write in one of the directories searched.
fn who<'e>(env: &'e Env, name: &str, who: &str) -> AgentFile<'e> {
    env.agent_file(name).description(who).prompt(who)
}

fn local(env: &Env) -> PathBuf {
    env.root().join("axe/agents")
}

fn config(env: &Env) -> PathBuf {
    env.config_dir().join("axe/agents")
}

/// The system prompt `axe-run --dry-run --json` would send.
fn system_sent(env: &Env, args: &[&str]) -> String {
    let out = env
        .cmd("axe-run")
        .args(args)
        .args(["--dry-run", "--json"])
        .write_stdin("")
        .assert()
        .success();
    let v: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    v["system_prompt"]
        .as_str()
        .or_else(|| v["system"].as_str())
        .unwrap_or_else(|| panic!("no system prompt in {v}"))
        .to_owned()
}

#[test]
fn lookup_order_is_agents_dir_then_local_then_config() {
    let env = Env::new();
    let given = env.root().join("given");
    who(&env, "a", "from config").write_in(&config(&env));
    assert!(system_sent(&env, &["a"]).contains("from config"));
    who(&env, "a", "from local").write_in(&local(&env));
    assert!(system_sent(&env, &["a"]).contains("from local"));
    who(&env, "a", "from given").write_in(&given);
    assert!(system_sent(&env, &["a", "--agents-dir", "given"]).contains("from given"));
    // Without the flag the given directory is not searched.
    assert!(system_sent(&env, &["a"]).contains("from local"));
    // A name the first directory lacks falls through to the next.
    who(&env, "c", "only config").write_in(&config(&env));
    assert!(system_sent(&env, &["c", "--agents-dir", "given"]).contains("only config"));
}

#[test]
fn list_says_where_each_agent_comes_from() {
    let env = Env::new();
    let given = env.root().join("given");
    who(&env, "a", "cfg").write_in(&config(&env));
    who(&env, "b", "cfg").write_in(&config(&env));
    who(&env, "b", "loc").write_in(&local(&env));
    let c = who(&env, "c", "giv").write_in(&given);
    env.cmd("axe-agents")
        .args(["list", "--agents-dir"])
        .arg(&given)
        .assert()
        .success()
        .stdout("a - cfg\nb - loc [local]\nc - giv [agents-dir]\n")
        .stderr("");
    let out = env
        .cmd("axe-agents")
        .args(["list", "--json", "--agents-dir", "given"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    let sources: Vec<(&str, &str)> = v["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["agent"].as_str().unwrap(), a["source"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sources,
        [("a", "config"), ("b", "local"), ("c", "agents-dir")]
    );
    assert_eq!(v["agents"][2]["path"], json!(c.to_string_lossy()));
    assert_eq!(
        v["agents"][1]["path"],
        json!(local(&env).join("b.toml").to_string_lossy())
    );
}

#[test]
fn show_edit_init_and_gc_take_agents_dir() {
    let env = Env::new();
    let given = env.root().join("given");
    let path = who(&env, "g", "giv").write_in(&given);
    let out = env
        .cmd("axe-agents")
        .args(["show", "g", "--json", "--agents-dir", "given"])
        .assert()
        .success();
    let v: Value = serde_json::from_str(&stdout(out.get_output())).unwrap();
    assert_eq!(v["path"], json!(path.to_string_lossy()));
    env.cmd("axe-agents")
        .args(["show", "g"])
        .assert()
        .code(2)
        .stderr("agent config not found: g\n");
    env.cmd("axe-agents")
        .args(["edit", "g", "--agents-dir", "given"])
        .env("EDITOR", "true")
        .assert()
        .success();
    // init writes into --agents-dir, creating it.
    env.cmd("axe-agents")
        .args(["init", "n", "--agents-dir", "new/dir"])
        .assert()
        .success()
        .stdout(format!("{}\n", env.root().join("new/dir/n.toml").display()));
    // Without the flag: ./axe/agents when it exists, else the config one.
    env.cmd("axe-agents")
        .args(["init", "x"])
        .assert()
        .success()
        .stdout(format!("{}\n", config(&env).join("x.toml").display()));
    std::fs::create_dir_all(local(&env)).unwrap();
    env.cmd("axe-agents")
        .args(["init", "y"])
        .assert()
        .success()
        .stdout(format!("{}\n", local(&env).join("y.toml").display()));
    // gc finds an agent only the given directory has.
    env.cmd("axe-gc")
        .args(["g", "--dry-run", "--agents-dir", "given"])
        .assert()
        .code(predicates::ord::ne(2));
    env.cmd("axe-gc").args(["g", "--dry-run"]).assert().code(2);
}

#[test]
fn sub_agents_are_looked_up_the_same_way() {
    let env = Env::new();
    let given = env.root().join("given");
    who(&env, "boss", "You are boss.")
        .toml("sub_agents = [\"helper\"]")
        .write_in(&given);
    who(&env, "helper", "You are the local helper.").write_in(&local(&env));
    who(&env, "helper", "You are the config helper.").write_in(&config(&env));
    let server = Server::route(|r| {
        let body = r.json();
        let offers = body["tools"].as_array().is_some_and(|t| !t.is_empty());
        let answered = body.to_string().contains("tool_result");
        if offers && !answered {
            Answer::json(
                200,
                &crate::run::tool_use(&[("c1", json!({"agent": "helper", "task": "x"}))]),
            )
        } else {
            Answer::json(200, &anthropic_reply("ok"))
        }
    });
    crate::run::run(&env, &server.url)
        .args(["boss", "--agents-dir", "given", "go"])
        .write_stdin("")
        .assert()
        .success();
    let systems: Vec<String> = server
        .requests()
        .iter()
        .map(|r| r.json()["system"].to_string())
        .collect();
    assert!(
        systems.iter().any(|s| s.contains("local helper")),
        "{systems:?}"
    );
    assert!(!systems.iter().any(|s| s.contains("config helper")));
}

#[test]
fn names_stay_checked_and_odd_local_dirs_fail_like_the_config_one() {
    let env = Env::new();
    who(&env, "escape", "no").write_in(&env.root().join("axe"));
    for name in ["../escape", "..", "a/b"] {
        env.cmd("axe-run")
            .args([name, "--agents-dir", "given", "--dry-run"])
            .assert()
            .failure()
            .stdout("");
    }
    // ./axe/agents that is a FIFO: one-line error naming it, no hang.
    let fifo = local(&env);
    std::fs::create_dir_all(fifo.parent().unwrap()).unwrap();
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    who(&env, "a", "cfg").write_in(&config(&env));
    let out = env
        .cmd("axe-agents")
        .arg("list")
        .timeout(std::time::Duration::from_secs(20))
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("axe/agents") && err.lines().count() == 1,
        "{err}"
    );
    let out = env
        .cmd("axe-run")
        .args(["a", "--dry-run"])
        .timeout(std::time::Duration::from_secs(20))
        .write_stdin("")
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(
        err.contains("axe/agents") && err.lines().count() == 1,
        "{err}"
    );
    // `./axe` that is a file (a built binary) is no local directory.
    std::fs::remove_file(&fifo).unwrap();
    std::fs::remove_dir_all(env.root().join("axe")).unwrap();
    env.write(&env.root().join("axe"), "binary");
    env.cmd("axe-agents")
        .arg("list")
        .assert()
        .success()
        .stdout("a - cfg\n");
}

#[test]
fn empty_agents_dir_is_a_usage_error() {
    let env = Env::new();
    env.cmd("axe-agents")
        .args(["list", "--agents-dir", ""])
        .assert()
        .code(1)
        .stderr(predicates::str::contains("--agents-dir must not be empty"));
}

fn user_sent(env: &Env, args: &[&str], stdin: &str) -> String {
    let server = Server::start(vec![Answer::json(200, &anthropic_reply("ok"))]);
    crate::run::run(env, &server.url)
        .args(args)
        .write_stdin(stdin)
        .assert()
        .success();
    server.only_request().json()["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn prompt_flag_takes_the_place_of_stdin() {
    let env = Env::new();
    who(&env, "a", "sys").write_in(&config(&env));
    assert_eq!(
        user_sent(&env, &["a", "-p", "from flag"], "piped"),
        "from flag"
    );
    assert_eq!(
        user_sent(&env, &["a", "--prompt", "from flag"], ""),
        "from flag"
    );
    // Task words come first, the prompt after a blank line, as stdin would.
    assert_eq!(
        user_sent(&env, &["a", "summarize", "-p", "body"], "piped"),
        "summarize\n\nbody"
    );
    // Blank counts as absent: standard input is read.
    assert_eq!(user_sent(&env, &["a", "-p", "  "], "piped"), "piped");
    assert_eq!(
        user_sent(&env, &["a", "-p", ""], ""),
        "Execute the task described in your instructions."
    );
}
