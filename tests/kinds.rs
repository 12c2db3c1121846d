//! A kind of memory is its folder and its row: the toy kind of a test
//! build (`lib/memory/toy/`, with its row in `kinds.rs`, compiled under
//! the `test-hooks` feature every test build has and no release build
//! does) is found wherever a kind is, by the real executables, without
//! a line for it anywhere else.

use serde_json::{Value, json};

use crate::mcp::Client;
use crate::util::{Env, stdout};

const TOY: &str = "name = \"t\"\nmodel = \"anthropic/m\"\n[toy]\nenabled = true\n\
                   text = \"a toy remembers\"\n[context]\nbudget = 1000\norder = [\"toy\"]\n";

#[test]
fn the_toy_kind_is_shown_and_checked_with_its_agent() {
    let env = Env::new();
    env.agent("t", TOY);
    let out = env.cmd("axe-agents").args(["show", "t"]).assert().success();
    let shown = stdout(out.get_output());
    assert!(
        shown.contains("\nToy:            a toy remembers\n"),
        "{shown}"
    );
    let out = env
        .cmd("axe-agents")
        .args(["show", "t", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["toy"]["text"], "a toy remembers", "{doc}");
    assert_eq!(doc["context"]["order"], json!(["toy"]), "{doc}");

    // Its own check, in its own words; its unknown keys said as any.
    env.agent("bad", &TOY.replace("text =", "size = -1\ntxet ="));
    let out = env
        .cmd("axe-agents")
        .args(["show", "bad"])
        .assert()
        .failure();
    let err = String::from_utf8_lossy(&out.get_output().stderr).into_owned();
    assert!(err.contains("toy.size must be non-negative"), "{err}");
    assert!(
        err.contains("unknown key toy.txet, ignored (did you mean toy.text?)"),
        "{err}"
    );
}

#[test]
fn the_toy_kind_is_in_the_template() {
    let env = Env::new();
    let out = env
        .cmd("axe-agents")
        .args(["init", "fresh"])
        .assert()
        .success();
    let path = stdout(out.get_output());
    let text = std::fs::read_to_string(path.trim()).unwrap();
    assert!(text.contains("\n# [toy]\n# enabled = false\n"), "{text}");
}

#[test]
fn the_toy_kind_takes_its_share_of_the_budget() {
    let env = Env::new();
    env.agent("t", TOY);
    let out = env
        .cmd("axe-context")
        .args(["t", "--json"])
        .assert()
        .success();
    let doc: Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    assert_eq!(doc["kinds"], json!(["toy"]), "{doc}");
    assert_eq!(doc["included"][0]["kind"], "toy", "{doc}");
    let text = doc["text"].as_str().unwrap();
    assert!(text.contains("# Toy\n\na toy remembers\n"), "{text}");
}

#[test]
fn the_toy_kind_is_an_mcp_resource() {
    let env = Env::new();
    env.agent("t", TOY);
    let mut c = Client::start(&env, &["t"]);
    c.initialize();
    let list = c.request("resources/list", json!({}));
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(uris.contains(&"axe://toy/t.md"), "{list}");
    let read = c.request("resources/read", json!({"uri": "axe://toy/t.md"}));
    assert_eq!(
        read["result"]["contents"][0]["text"], "a toy remembers",
        "{read}"
    );
    let other = c.request("resources/read", json!({"uri": "axe://toy/u.md"}));
    assert!(other["error"].is_object(), "{other}");
    c.finish();
}

#[test]
fn the_toy_kind_has_its_merge_in_gitattributes() {
    if !crate::util::have("git") {
        return;
    }
    let env = Env::new();
    env.cmd("axe-sync").arg("init").assert().success();
    let attributes = std::fs::read_to_string(env.data_dir().join("axe/.gitattributes")).unwrap();
    assert!(
        attributes.ends_with("state/*.json merge=axe-state\ntoy/*.md merge=axe-runlog\n"),
        "{attributes}"
    );
}
